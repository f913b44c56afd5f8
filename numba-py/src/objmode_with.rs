//! `with objmode(...)` from the Python side: recognising the context managers and type
//! objects a `with` statement names (`numba_ir::withlift` rewrites the block), and
//! `numba_rs_objmode_with`, which nopython code calls to run an `objmode` body
//! (`numba_lower`'s `impls::objmode_with` packs the call).
//!
//! The body's inputs arrive as boundary slots, each holding a reference of its own: the
//! one codec ([`boxing::decode`]) turns them into Python objects. The object-mode
//! specialisation runs under the GIL (taken here: the caller may be `nogil` or a pool
//! thread), and its result tuple is unboxed into the declared output types. Arrays are
//! checked against their declared type and wrapped in a MemInfo that keeps the NumPy
//! array alive for as long as the nopython side holds it.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use numba_ir::WithContextKind;
use numba_lower::{boundary_shape, CompiledFunction, Shape};
use numba_typeinfer::types::{self, Type, TypeId};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::boxing::{self, Slots};

/// The kind of a context manager a `with` statement names: numba-rs's, or Numba's own
/// (code written for Numba, `from numba import objmode`).
pub(crate) fn with_context(
    _py: Python<'_>,
    value: &Bound<'_, PyAny>,
) -> PyResult<Option<WithContextKind>> {
    let cls = value.get_type();
    let module: String = cls
        .getattr("__module__")
        .and_then(|m| m.extract())
        .unwrap_or_default();
    let name = cls.name()?.to_string();
    let kind = match (module.as_str(), name.as_str()) {
        ("numba_rs.withcontexts", "_ObjModeContextType")
        | ("numba.core.withcontexts", "_ObjModeContextType") => WithContextKind::ObjMode,
        ("numba_rs.withcontexts", "_ParallelChunksize")
        | ("numba.core.withcontexts", "_ParallelChunksize") => WithContextKind::ParallelChunksize,
        ("numba.core.withcontexts", "_CallContextType") => WithContextKind::Call,
        ("numba.core.withcontexts", "_ByPassContextType") => WithContextKind::Bypass,
        _ => return Ok(None),
    };
    Ok(Some(kind))
}

/// The printed name of a type object: numba-rs's `types.int64`, or an instance of
/// Numba's `numba.core.types.Type` when Numba is loaded.
pub(crate) fn type_object(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    if value.is_instance_of::<crate::Type>() {
        return Ok(Some(value.str()?.to_string()));
    }
    let modules = py.import("sys")?.getattr("modules")?;
    if let Ok(m) = modules.get_item("numba.core.types") {
        if let Ok(base) = m.getattr("Type") {
            if value.is_instance(&base)? {
                return Ok(Some(value.str()?.to_string()));
            }
        }
    }
    Ok(None)
}

/// What a call needs, found on the first one.
struct Callee {
    name: String,
    compiled: Arc<CompiledFunction>,
    func: Py<PyAny>,
    args: Vec<Shape>,
    outputs: Shape,
}

static CALLEES: LazyLock<Mutex<HashMap<u64, Arc<Callee>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn callee(py: Python<'_>, id: u64) -> PyResult<Arc<Callee>> {
    if let Some(c) = CALLEES.lock().unwrap_or_else(|e| e.into_inner()).get(&id) {
        return Ok(c.clone());
    }
    let internal = |what: &str| crate::UnsupportedError::new_err(format!("objmode block: {what}"));
    let core = numba_dispatch::lookup_dispatcher(id).ok_or_else(|| internal("not registered"))?;
    let w = core
        .objmode_with()
        .ok_or_else(|| internal("not an objmode body"))?;
    let native = w
        .native_args
        .get()
        .ok_or_else(|| internal("called before it was typed"))?;
    let objects = vec![types::PYOBJECT; native.len()];
    let compiled = core.resolve(&objects).map_err(crate::to_py_err)?;
    let func = core
        .host()
        .and_then(|h| h.downcast_ref::<crate::PySource>())
        .ok_or_else(|| internal("its function is not a Python function"))?
        .func
        .clone_ref(py);
    let shape = |t: TypeId| {
        boundary_shape(t).map_err(|e| PyTypeError::new_err(format!("objmode block: {e}")))
    };
    let c = Arc::new(Callee {
        name: core.name.clone(),
        compiled,
        func,
        args: native.iter().map(|&t| shape(t)).collect::<PyResult<_>>()?,
        outputs: shape(w.outputs)?,
    });
    CALLEES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(id, c.clone());
    Ok(c)
}

/// Run `objmode` body `id` on the inputs in `args` and store its outputs in `out`: 0, or
/// `STATUS_EXC` with the Python error set.
///
/// # Safety
/// Called by generated code: `args` holds the slots of the body's native argument
/// types, each reference-holding value with a reference for this call, and `out` has
/// room for the outputs' slots.
pub(crate) unsafe extern "C" fn numba_rs_objmode_with(
    id: u64,
    args: *const u64,
    out: *mut u64,
) -> i32 {
    Python::attach(|py| {
        let run = std::panic::AssertUnwindSafe(|| run(py, id, args, out));
        let err = match std::panic::catch_unwind(run) {
            Ok(Ok(())) => return numba_lower::STATUS_OK,
            Ok(Err(e)) => e,
            Err(p) => crate::internal_error(&p),
        };
        err.restore(py);
        numba_lower::STATUS_EXC
    })
}

fn run(py: Python<'_>, id: u64, args: *const u64, out: *mut u64) -> PyResult<()> {
    let c = callee(py, id)?;
    crate::objmode::ensure_env(py, &c.compiled, c.func.bind(py))?;
    let n: usize = c.args.iter().map(Shape::slots).sum();
    // SAFETY: the caller packed `n` slots (the shapes of the native argument types).
    let slots = unsafe { std::slice::from_raw_parts(args, n) };
    let mut pos = 0;
    let objects = c
        .args
        .iter()
        .map(|s| boxing::decode(py, slots, &mut pos, s))
        .collect::<PyResult<Vec<_>>>()?;
    let ptrs: Slots = objects.iter().map(|o| o.as_ptr() as u64).collect();
    let result = crate::call::run_entry(py, &c.name, &c.compiled, &ptrs, false)?;
    let mut encoded = Slots::new();
    let mut owned = Vec::new();
    if let Err(e) = encode_owned(result.bind(py), &c.outputs, &mut encoded, &mut owned) {
        for mi in owned {
            // SAFETY: each is a MemInfo made below, not handed out.
            unsafe { numba_nrt::NRT_decref(mi) };
        }
        return Err(e);
    }
    // SAFETY: `out` has room for the outputs' slots, which `encoded` holds exactly.
    unsafe { std::ptr::copy_nonoverlapping(encoded.as_ptr(), out, encoded.len()) };
    Ok(())
}

/// [`boxing::encode`] for values that outlive the call: each array gets a MemInfo
/// holding a reference to it (recorded in `owned`).
fn encode_owned(
    v: &Bound<'_, PyAny>,
    shape: &Shape,
    out: &mut Slots,
    owned: &mut Vec<*mut numba_nrt::MemInfo>,
) -> PyResult<()> {
    match shape {
        Shape::Tuple(items) | Shape::Named { items, .. } => {
            let t = v.cast::<PyTuple>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "can't unbox a tuple from {}",
                    v.get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                ))
            })?;
            if t.len() != items.len() {
                return Err(PyValueError::new_err(format!(
                    "expected a tuple of {} items, got {}",
                    items.len(),
                    t.len()
                )));
            }
            for (item, s) in t.iter().zip(items) {
                encode_owned(&item, s, out, owned)?;
            }
            Ok(())
        }
        Shape::Optional(inner) if !v.is_none() => {
            out.push(1);
            encode_owned(v, inner, out, owned)
        }
        Shape::Array(t) => {
            let unbox_error = || {
                PyTypeError::new_err(
                    "can't unbox array from PyObject into native value.  The object maybe of a \
                     different type",
                )
            };
            let actual = crate::typeof_arg(v).map_err(|_| unbox_error())?;
            if !array_fits(actual, *t) {
                return Err(unbox_error());
            }
            let start = out.len();
            crate::ndarray::encode(v, *t, out)?;
            let raw = crate::ndarray::raw(v).ok_or_else(unbox_error)?;
            let nbytes = raw.shape().iter().product::<isize>() as usize
                * crate::ndarray::itemsize(*t) as usize;
            let mi = owning_meminfo(v, raw.data, nbytes)?;
            owned.push(mi);
            out[start] = mi as u64;
            Ok(())
        }
        Shape::Generator(t) => Err(PyTypeError::new_err(format!(
            "numba-rs cannot unbox a generator of type {t} from object mode"
        ))),
        // A `str` outliving the call: a MemInfo over its data holds a reference to it.
        Shape::Unicode => {
            let s = v.cast::<pyo3::types::PyString>().map_err(|_| {
                PyTypeError::new_err("can't unbox a str from a value that is not one")
            })?;
            let mut fields = boxing::unicode_fields(s);
            use numba_lower::model::unicode::field;
            let at = |i: u32| fields[i as usize];
            let nbytes = (at(field::LENGTH) as usize + 1) * at(field::KIND) as usize;
            let mi = owning_meminfo(v, at(field::DATA) as *mut u8, nbytes)?;
            owned.push(mi);
            fields[field::MEMINFO as usize] = mi as u64;
            out.extend(fields);
            Ok(())
        }
        // A typed dict: its MemInfo, with a reference of its own (the Python object may
        // die with the block).
        Shape::Dict { .. } | Shape::Instance(_) => {
            let start = out.len();
            boxing::encode(v, shape, out)?;
            let mi = out[start] as *mut numba_nrt::MemInfo;
            // SAFETY: the typed dict's live MemInfo: one more owner.
            unsafe { numba_nrt::NRT_incref(mi) };
            owned.push(mi);
            Ok(())
        }
        // A list or set made from the block's result: its own, with no Python parent (a
        // typed list's encoding already took its reference).
        Shape::List { .. } | Shape::Set { .. } => {
            let start = out.len();
            boxing::encode(v, shape, out)?;
            owned.push(out[start] as *mut numba_nrt::MemInfo);
            crate::lists::detach(&mut out[start..], &mut 0, shape);
            Ok(())
        }
        _ => boxing::encode(v, shape, out),
    }
}

/// A MemInfo over `data` (the `nbytes` bytes `v` holds) owning a new reference to `v`,
/// released (under the GIL) by `release_object` when the MemInfo dies.
fn owning_meminfo(
    v: &Bound<'_, PyAny>,
    data: *mut u8,
    nbytes: usize,
) -> PyResult<*mut numba_nrt::MemInfo> {
    // SAFETY: the MemInfo wraps data `v` keeps alive and owns the reference taken here.
    let mi = unsafe {
        ffi::Py_IncRef(v.as_ptr());
        numba_nrt::NRT_MemInfo_new(data, nbytes, Some(release_object), v.as_ptr().cast())
    };
    if mi.is_null() {
        // SAFETY: the reference taken above.
        unsafe { ffi::Py_DecRef(v.as_ptr()) };
        return Err(pyo3::exceptions::PyMemoryError::new_err(()));
    }
    Ok(mi)
}

/// Whether an array typed `actual` may be used as `declared`: same dtype and rank, and
/// the declared layout (`A` takes any).
fn array_fits(actual: TypeId, declared: TypeId) -> bool {
    match (actual.get(), declared.get()) {
        (
            Type::Array {
                dtype: d1,
                ndim: n1,
                layout: l1,
                ..
            },
            Type::Array {
                dtype: d2,
                ndim: n2,
                layout: l2,
                ..
            },
        ) => d1 == d2 && n1 == n2 && (l2 == types::Layout::A || l1 == l2),
        _ => false,
    }
}

/// A MemInfo destructor dropping the Python object it holds.
unsafe extern "C" fn release_object(_data: *mut u8, _size: usize, info: *mut std::ffi::c_void) {
    // SAFETY: `info` is the object the MemInfo holds a reference to; the GIL is taken
    // for the release (the last reference may go on any thread).
    Python::attach(|_| unsafe { ffi::Py_DecRef(info.cast()) });
}
