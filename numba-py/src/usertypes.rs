//! User types across the boundary (numba-lower's `model::user`, shape `Boxed`): the
//! layout `register_model` gives a type, and the `@unbox` / `@box` code that converts its
//! values, compiled once per type by numba-lower's `boxing` from the llvmlite text
//! `numba_rs._usertypes` writes.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use numba_lower::boxing::Direction;
use numba_lower::Shape;
use numba_typeinfer::types::TypeId;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::boxing::Slots;

/// Compiled wrappers by (type, is box) (`None`: the type has no such code).
type Wrappers = HashMap<(TypeId, bool), Option<usize>>;

static CODE: LazyLock<Mutex<Wrappers>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// Lay the user type `code` out as a struct of these members (a `StructModel`).
#[pyfunction]
pub(crate) fn _register_user_members(code: u32, members: Vec<u32>) {
    numba_lower::model::user::register_members(
        TypeId(code),
        members.into_iter().map(TypeId).collect(),
    );
}

/// The wrapper converting values of `t` in `direction`, compiled on first use.
fn wrapper(py: Python<'_>, t: TypeId, direction: Direction) -> PyResult<Option<usize>> {
    let key = (t, direction == Direction::Box);
    if let Some(found) = CODE.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(*found);
    }
    let which = if direction == Direction::Box {
        "box"
    } else {
        "unbox"
    };
    let text = py
        .import("numba_rs._usertypes")?
        .getattr("_boxing_code")?
        .call1((t.0, which))?;
    let compiled = if text.is_none() {
        None
    } else {
        let (symbol, text, externals): (String, String, Vec<(String, usize)>) = text.extract()?;
        let address = numba_lower::boxing::compile(t, direction, &symbol, &text, &externals)
            .map_err(|e| crate::UnsupportedError::new_err(e.to_string()))?;
        Some(address)
    };
    CODE.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, compiled);
    Ok(compiled)
}

/// Append the slots of `v` as a value of the user type `t` (its `@unbox` code).
pub(crate) fn encode(
    v: &Bound<'_, PyAny>,
    t: TypeId,
    items: &[Shape],
    out: &mut Slots,
) -> PyResult<()> {
    let py = v.py();
    let n: usize = items.iter().map(Shape::slots).sum();
    let Some(address) = wrapper(py, t, Direction::Unbox)? else {
        if n == 0 {
            // An opaque type without unbox code: nothing crosses.
            return Ok(());
        }
        return Err(PyTypeError::new_err(format!(
            "can't unbox {t} type (it has no @unbox implementation)"
        )));
    };
    let start = out.len();
    out.resize(start + n, 0);
    // SAFETY: numba-lower's boxing wrapper: `i32 (PyObject*, u64* slots)` writing
    // exactly the type's `n` slots; `v` is alive for the call.
    let f: extern "C" fn(*mut pyo3::ffi::PyObject, *mut u64) -> i32 =
        unsafe { std::mem::transmute(address) };
    let rc = f(v.as_ptr(), out[start..].as_mut_ptr());
    if rc != 0 {
        out.truncate(start);
        return Err(PyErr::take(py).unwrap_or_else(|| {
            PyTypeError::new_err(format!(
                "can't unbox {} as {t}",
                v.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        }));
    }
    Ok(())
}

/// Make the Python object for the value of the user type `t` in `slots` at `*pos` (its
/// `@box` code), advancing `pos` and releasing the value's references.
pub(crate) fn decode(
    py: Python<'_>,
    slots: &[u64],
    pos: &mut usize,
    t: TypeId,
    items: &[Shape],
) -> PyResult<Py<PyAny>> {
    let n: usize = items.iter().map(Shape::slots).sum();
    let value = slots
        .get(*pos..*pos + n)
        .ok_or_else(|| PyTypeError::new_err("result slots exhausted"))?;
    let start = *pos;
    let made = match wrapper(py, t, Direction::Box)? {
        Some(address) => {
            // SAFETY: numba-lower's boxing wrapper: `PyObject* (const u64* slots)` reading
            // the type's `n` slots; returns a new reference or null with the error set.
            let f: extern "C" fn(*const u64) -> *mut pyo3::ffi::PyObject =
                unsafe { std::mem::transmute(address) };
            let obj = f(value.as_ptr());
            // SAFETY: a new reference or null.
            unsafe { Bound::from_owned_ptr_or_err(py, obj) }.map(Bound::unbind)
        }
        None => Err(PyTypeError::new_err(format!(
            "cannot convert native {t} to Python object (the type has no @box \
             implementation)"
        ))),
    };
    // The box code borrowed the value; its references were the receiver's.
    for s in items {
        numba_lower::callconv::release_slots(s, slots, pos);
    }
    *pos = start + n;
    made
}

/// The intrinsic key of a class made callable with `type_callable` (None: not one).
pub(crate) fn callable_key(py: Python<'_>, cls: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    // Only once the extension API is in use: other classes cost no import.
    let modules = py.import("sys")?.getattr("modules")?;
    let Ok(m) = modules.get_item("numba_rs._usertypes") else {
        return Ok(None);
    };
    m.getattr("_callable_key")?.call1((cls,))?.extract()
}

/// A type's slot codec for host-written code: its boundary shape and the compiled
/// slots-to-value (`load`) and value-to-slots (`store`) functions.
struct Codec {
    shape: Arc<Shape>,
    load: usize,
    store: usize,
}

/// Slot codecs compiled so far, by type.
static CODECS: LazyLock<Mutex<HashMap<TypeId, Codec>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The shape of `code` as its codec recorded it (`_slot_codec` runs when the code that
/// converts through it is generated, so the converters find it here).
fn codec_shape(code: u32) -> PyResult<Arc<Shape>> {
    let t = TypeId(code);
    if let Some(c) = CODECS.lock().unwrap_or_else(|e| e.into_inner()).get(&t) {
        return Ok(c.shape.clone());
    }
    numba_lower::boundary_shape(t)
        .map(Arc::new)
        .map_err(|e| PyTypeError::new_err(format!("{t} cannot cross into Python: {e}")))
}

/// What host-written code (`c.pyapi.to_native_value` / `from_native_value` in box and
/// unbox functions) needs to convert values of type `code` through numba-rs's own
/// codec: the number of slots, the slots-to-value and value-to-slots functions, and the
/// object-to-slots and slots-to-object functions.
#[pyfunction]
pub(crate) fn _slot_codec(code: u32) -> PyResult<(usize, usize, usize, usize, usize)> {
    let t = TypeId(code);
    let shape = codec_shape(code)?;
    let cached = CODECS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&t)
        .map(|c| (c.load, c.store));
    let (load, store) = match cached {
        Some(found) => found,
        None => {
            let (load, store) = numba_lower::boxing::compile_codec(t)
                .map_err(|e| crate::UnsupportedError::new_err(e.to_string()))?;
            let codec = Codec {
                shape: shape.clone(),
                load,
                store,
            };
            CODECS
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(t, codec);
            (load, store)
        }
    };
    Ok((
        shape.slots(),
        load,
        store,
        numba_rs_unbox_slots as *const () as usize,
        numba_rs_box_slots as *const () as usize,
    ))
}

/// `obj` as a value of type `code`, in its slots (as an argument: borrowed data). 0, or
/// 1 with the Python error set. Called by compiled code holding the GIL.
extern "C" fn numba_rs_unbox_slots(
    code: u32,
    obj: *mut pyo3::ffi::PyObject,
    slots: *mut u64,
) -> i32 {
    Python::attach(|py| {
        let run = || -> PyResult<()> {
            let shape = codec_shape(code)?;
            // SAFETY: the caller passes a live object it holds a reference to.
            let v = unsafe { Bound::from_borrowed_ptr(py, obj) };
            let mut out = Slots::new();
            crate::boxing::encode(&v, &shape, &mut out)?;
            // SAFETY: the caller's buffer holds the shape's slots.
            unsafe { std::ptr::copy_nonoverlapping(out.as_ptr(), slots, out.len()) };
            Ok(())
        };
        match run() {
            Ok(()) => 0,
            Err(e) => {
                e.restore(py);
                1
            }
        }
    })
}

/// The Python object for the value of type `code` in `slots`, taking its references: a
/// new reference, or null with the Python error set.
extern "C" fn numba_rs_box_slots(code: u32, slots: *const u64) -> *mut pyo3::ffi::PyObject {
    Python::attach(|py| {
        let run = || -> PyResult<Py<PyAny>> {
            let shape = codec_shape(code)?;
            // SAFETY: the caller's buffer holds the shape's slots.
            let s = unsafe { std::slice::from_raw_parts(slots, shape.slots()) };
            crate::boxing::decode(py, s, &mut 0, &shape)
        };
        match run() {
            Ok(obj) => obj.into_ptr(),
            Err(e) => {
                e.restore(py);
                std::ptr::null_mut()
            }
        }
    })
}

/// The typecode of a global bound to a value of a user's type (or a class reference with
/// class methods): None when it is not one, the error text when it cannot be frozen.
pub(crate) fn global_value(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
) -> Option<Result<u32, String>> {
    let modules = py.import("sys").ok()?.getattr("modules").ok()?;
    let m = modules.get_item("numba_rs._usertypes").ok()?;
    let found = m
        .getattr("_global_typecode")
        .and_then(|f| f.call1((value,)));
    crate::extending::optional_answer(py, found)
}
