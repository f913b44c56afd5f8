//! The CPython side of the boundary codec: Python objects to and from the 8-byte slots the
//! data models describe with a [`Shape`] (numba-lower's `callconv`). One codec for
//! arguments, results and exception arguments.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use numba_lower::{Leaf, Shape};

use crate::ndarray::new_array;
use numba_typeinfer::types::{Type, TypeId};
use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyComplex, PyString, PyTuple};
use smallvec::SmallVec;

/// Python classes the compiled code refers to by key (`module.qualname`): user exception
/// classes and namedtuple classes.
static CLASSES: LazyLock<Mutex<HashMap<String, Py<PyAny>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The key of a class, remembering the class for [`class_by_key`]: `module.qualname`, or
/// `module.qualname#n` for another class of the same name (two `namedtuple('Point', ...)`
/// calls, exception classes made by a factory), so that each keeps its own identity.
pub fn register_class(cls: &Bound<'_, PyAny>) -> PyResult<String> {
    let module: String = cls.getattr("__module__")?.extract()?;
    let qualname: String = cls.getattr("__qualname__")?.extract()?;
    let base = format!("{module}.{qualname}");
    let mut classes = CLASSES.lock().unwrap_or_else(|e| e.into_inner());
    let mut key = base.clone();
    for n in 2.. {
        match classes.get(&key) {
            Some(c) if c.bind(cls.py()).is(cls) => return Ok(key),
            Some(_) => key = format!("{base}#{n}"),
            None => break,
        }
    }
    classes.insert(key.clone(), cls.clone().unbind());
    Ok(key)
}

/// A registered class, a class named by its module (`numpy.linalg.LinAlgError`, which
/// lowering raises without the class ever being a global), or a builtin of that name.
pub fn class_by_key<'py>(py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
    if let Some(c) = CLASSES.lock().unwrap_or_else(|e| e.into_inner()).get(key) {
        return Ok(c.bind(py).clone());
    }
    if let Some((module, name)) = key.rsplit_once('.') {
        return py.import(module)?.getattr(name);
    }
    py.import("builtins")?.getattr(key)
}

/// Slots for a call; small argument lists stay on the stack.
pub type Slots = SmallVec<[u64; 8]>;

/// NumPy's dtype string of a datetime64 / timedelta64 type (`M8[D]`, `m8[s]`, `M8`).
pub(crate) fn datetime_dtype_str(t: TypeId) -> String {
    use numba_typeinfer::types::Type;
    let (kind, u) = match t.get() {
        Type::NPDatetime(u) => ('M', u),
        Type::NPTimedelta(u) => ('m', u),
        _ => ('m', numba_typeinfer::npdatetime::GENERIC),
    };
    format!("{kind}8{}", numba_typeinfer::npdatetime::unit_suffix(u))
}

/// The int64 count of a `np.datetime64` / `np.timedelta64` argument in `t`'s unit (NaT:
/// `i64::MIN`).
fn datetime_count(v: &Bound<'_, PyAny>, t: TypeId) -> PyResult<i64> {
    let np = v.py().import("numpy")?;
    let typed = np.getattr("asarray")?.call1((v, datetime_dtype_str(t)))?;
    typed
        .call_method1("view", ("i8",))?
        .call_method0("item")?
        .extract()
}

/// A `np.datetime64` / `np.timedelta64` of `t`'s unit holding `count` (NaT for
/// `i64::MIN`).
fn datetime_object(py: Python<'_>, count: i64, t: TypeId) -> PyResult<Py<PyAny>> {
    let np = py.import("numpy")?;
    let raw = np
        .getattr("array")?
        .call1((count, "i8"))?
        .call_method1("view", (datetime_dtype_str(t),))?;
    Ok(raw
        .call_method1("__getitem__", (PyTuple::empty(py),))?
        .unbind())
}

/// Append `v`'s slots for `shape`.
pub fn encode(v: &Bound<'_, PyAny>, shape: &Shape, out: &mut Slots) -> PyResult<()> {
    match shape {
        Shape::Leaf(Leaf::Bool, _) => out.push(u64::from(v.is_truthy()?)),
        Shape::Leaf(
            Leaf::Int {
                bits: 64,
                signed: false,
            },
            _,
        ) => out.push(match v.extract::<u64>() {
            Ok(u) => u,
            // A pointer argument given as a ctypes object (a function pointer, a
            // `c_void_p`, an array's `.ctypes`) or a cffi pointer: its address.
            Err(_) if !v.is_instance_of::<pyo3::types::PyInt>() => address_of(v)?,
            Err(_) => return Err(PyOverflowError::new_err("int too big to convert")),
        }),
        Shape::Leaf(Leaf::Int { .. }, t) if numba_typeinfer::npdatetime::is_datetime_like(*t) => {
            out.push(datetime_count(v, *t)? as u64)
        }
        Shape::Leaf(Leaf::Int { .. }, _) => {
            // A float (or another number) converted to an integer parameter, as an
            // explicit signature allows: truncated by `int()` as Numba's unboxing does.
            let i: i64 = match v.extract() {
                Ok(i) => i,
                Err(_) if !v.is_instance_of::<pyo3::types::PyInt>() => v
                    .py()
                    .get_type::<pyo3::types::PyInt>()
                    .call1((v,))?
                    .extract()
                    .map_err(|_| PyOverflowError::new_err("int too big to convert"))?,
                Err(_) => return Err(PyOverflowError::new_err("int too big to convert")),
            };
            out.push(i as u64);
        }
        Shape::Leaf(Leaf::Float, _) => out.push(v.extract::<f64>()?.to_bits()),
        Shape::Complex(_) => {
            let c = v.cast::<PyComplex>().map_err(PyErr::from);
            let (re, im) = match c {
                Ok(c) => (c.real(), c.imag()),
                // np.complex64 (not a Python complex) and other numbers: `complex(v)`.
                Err(_) => {
                    let z = v.py().get_type::<PyComplex>().call1((v,))?;
                    let z = z.cast::<PyComplex>().map_err(PyErr::from)?;
                    (z.real(), z.imag())
                }
            };
            out.push(re.to_bits());
            out.push(im.to_bits());
        }
        Shape::Tuple(items) | Shape::Named { items, .. } => {
            // A tuple (or namedtuple): its items borrowed, no per-item lookups.
            if let Ok(t) = v.cast::<PyTuple>() {
                if t.len() != items.len() {
                    return Err(PyTypeError::new_err(format!(
                        "expected a tuple of {} items, got {}",
                        items.len(),
                        t.len()
                    )));
                }
                for (item, s) in t.iter_borrowed().zip(items) {
                    encode(&item, s, out)?;
                }
                return Ok(());
            }
            let n: usize = v.len()?;
            if n != items.len() {
                return Err(PyTypeError::new_err(format!(
                    "expected a tuple of {} items, got {n}",
                    items.len()
                )));
            }
            for (i, s) in items.iter().enumerate() {
                encode(&v.get_item(i)?, s, out)?;
            }
        }
        Shape::Optional(inner) => {
            if v.is_none() {
                out.push(0);
                out.extend(std::iter::repeat_n(0, inner.slots()));
            } else {
                out.push(1);
                encode(v, inner, out)?;
            }
        }
        Shape::Enum(_) => out.push(v.getattr("value")?.extract::<i64>()? as u64),
        Shape::Slice => {
            let bound = |name: &str| -> PyResult<Option<i64>> {
                let x = v.getattr(name)?;
                if x.is_none() {
                    Ok(None)
                } else {
                    x.extract::<i64>().map(Some)
                }
            };
            // Numba's unboxing takes a zero step as it is (`slice.indices` and slicing
            // raise for it), with the defaults of a negative one.
            let step = bound("step")?.unwrap_or(1);
            let start = bound("start")?.unwrap_or(if step > 0 { 0 } else { i64::MAX });
            let stop = bound("stop")?.unwrap_or(if step > 0 { i64::MAX } else { i64::MIN });
            out.extend([start as u64, stop as u64, step as u64]);
        }
        Shape::Array(t) => crate::ndarray::encode(v, *t, out)?,
        Shape::Record(t) => out.push(crate::records::encode(v, *t)?),
        Shape::Chars(t) => crate::records::encode_chars(v, *t, out)?,
        Shape::NpGenerator => crate::npgen::encode(v, out)?,
        // A generator passed back into jitted code is borrowed from its Python object.
        Shape::Generator(t) => {
            let g = v
                .cast::<crate::generator::NativeGenerator>()
                .map_err(|_| PyTypeError::new_err(format!("expected a generator of type {t}")))?;
            let g = g.borrow();
            if g.gen_type() != *t {
                return Err(PyTypeError::new_err(format!(
                    "expected a generator of type {t}, got {}",
                    g.gen_type()
                )));
            }
            out.push(g.address() as u64);
        }
        // Object mode: the object itself, borrowed for the call.
        Shape::Object => out.push(v.as_ptr() as u64),
        // A `str`: its PEP 393 data, borrowed for the call (no MemInfo; the object is the
        // parent).
        Shape::Unicode => {
            let s = v.cast::<PyString>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "can't unbox a str from {}",
                    v.get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                ))
            })?;
            out.extend(unicode_fields(s));
        }
        // `bytes`: its buffer, borrowed for the call, as one byte per character.
        Shape::Bytes => {
            let b = v.cast::<pyo3::types::PyBytes>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "can't unbox bytes from {}",
                    v.get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                ))
            })?;
            out.extend(bytes_fields(b));
        }
        Shape::List {
            dtype, typed: true, ..
        } => crate::typed_list::encode_arg(v, *dtype, out)?,
        Shape::List { item, dtype, .. } => crate::lists::encode_list(v, item, *dtype, out)?,
        Shape::Set { item, dtype, .. } => crate::lists::encode_set(v, item, *dtype, out)?,
        Shape::Dict { dict, .. } => crate::dicts::encode_arg(v, *dict, out)?,
        Shape::Instance(t) => crate::jitclass::encode_arg(v, *t, out)?,
        Shape::Boxed { t, items } => crate::usertypes::encode(v, *t, items, out)?,
        Shape::None | Shape::Literal(_) => {}
    }
    Ok(())
}

/// The Python value of a literal type.
pub fn literal_value(py: Python<'_>, t: TypeId) -> PyResult<Py<PyAny>> {
    Ok(match t.get() {
        Type::StringLiteral(s) => s.into_pyobject(py)?.into_any().unbind(),
        Type::IntegerLiteral(i) => i.into_pyobject(py)?.into_any().unbind(),
        Type::BooleanLiteral(b) => PyBool::new(py, b).to_owned().into_any().unbind(),
        Type::Ellipsis => py.Ellipsis(),
        Type::SliceLiteral(a, b, c) => py
            .get_type::<pyo3::types::PySlice>()
            .call1((a, b, c))?
            .unbind(),
        // The NumPy scalar class or dtype a number-class / dtype type stands for.
        Type::NumberClass(d) | Type::DType(d) if d.is_scalar() => {
            let name = if d == numba_typeinfer::types::BOOLEAN {
                "bool".to_string()
            } else {
                d.to_string()
            };
            let dt = py.import("numpy")?.getattr("dtype")?.call1((name,))?;
            if matches!(t.get(), Type::NumberClass(_)) {
                dt.getattr("type")?.unbind()
            } else {
                dt.unbind()
            }
        }
        _ => py.None(),
    })
}

/// Read a value of `shape` from `slots` at `*pos`, advancing it.
pub fn decode(
    py: Python<'_>,
    slots: &[u64],
    pos: &mut usize,
    shape: &Shape,
) -> PyResult<Py<PyAny>> {
    let mut next = || -> PyResult<u64> {
        let v = slots
            .get(*pos)
            .copied()
            .ok_or_else(|| PyTypeError::new_err("result slots exhausted"))?;
        *pos += 1;
        Ok(v)
    };
    Ok(match shape {
        Shape::Leaf(Leaf::Bool, _) => PyBool::new(py, next()? & 1 == 1)
            .to_owned()
            .into_any()
            .unbind(),
        Shape::Leaf(
            Leaf::Int {
                bits: 64,
                signed: false,
            },
            _,
        ) => next()?.into_pyobject(py)?.into_any().unbind(),
        Shape::Leaf(Leaf::Int { signed: false, .. }, _) => {
            next()?.into_pyobject(py)?.into_any().unbind()
        }
        Shape::Leaf(Leaf::Int { .. }, t) if numba_typeinfer::npdatetime::is_datetime_like(*t) => {
            datetime_object(py, next()? as i64, *t)?
        }
        Shape::Leaf(Leaf::Int { .. }, _) => (next()? as i64).into_pyobject(py)?.into_any().unbind(),
        Shape::Leaf(Leaf::Float, _) => f64::from_bits(next()?)
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        Shape::Complex(_) => {
            let re = f64::from_bits(next()?);
            let im = f64::from_bits(next()?);
            PyComplex::from_doubles(py, re, im).into_any().unbind()
        }
        Shape::Slice => {
            let (start, stop, step) = (next()? as i64, next()? as i64, next()? as i64);
            // Numba's defaults come back as None, as its slice boxing does.
            let start =
                (!(start == 0 && step > 0 || start == i64::MAX && step < 0)).then_some(start);
            let stop =
                (!(stop == i64::MAX && step > 0 || stop == i64::MIN && step < 0)).then_some(stop);
            let step = (step != 1).then_some(step);
            py.import("builtins")?
                .getattr("slice")?
                .call1((start, stop, step))?
                .unbind()
        }
        Shape::Tuple(items) => {
            // SAFETY: a new tuple of `items.len()` slots, each set once below with a new
            // reference (PyTuple_SET_ITEM steals it); dropped on error.
            unsafe {
                let t = pyo3::ffi::PyTuple_New(items.len() as pyo3::ffi::Py_ssize_t);
                let t = Bound::from_owned_ptr_or_err(py, t)?;
                for (i, s) in items.iter().enumerate() {
                    let v = decode(py, slots, pos, s)?;
                    pyo3::ffi::PyTuple_SET_ITEM(
                        t.as_ptr(),
                        i as pyo3::ffi::Py_ssize_t,
                        v.into_ptr(),
                    );
                }
                t.unbind()
            }
        }
        Shape::Named { class, items } => {
            let vals = items
                .iter()
                .map(|s| decode(py, slots, pos, s))
                .collect::<PyResult<Vec<_>>>()?;
            let cls = class_by_key(py, class)?;
            cls.call1(PyTuple::new(py, vals)?)?.unbind()
        }
        Shape::Optional(inner) => {
            let flag = next()?;
            if flag & 1 == 1 {
                decode(py, slots, pos, inner)?
            } else {
                // None: the payload's slots are undefined, never read.
                *pos += inner.slots();
                py.None()
            }
        }
        Shape::None => py.None(),
        Shape::Boxed { t, items } => crate::usertypes::decode(py, slots, pos, *t, items)?,
        Shape::Bytes => {
            use numba_lower::model::unicode::{field, FIELDS};
            let f: SmallVec<[u64; 7]> = (0..FIELDS).map(|_| next()).collect::<PyResult<_>>()?;
            let (data, length, meminfo) = (
                f[field::DATA as usize] as *const u8,
                f[field::LENGTH as usize] as usize,
                f[field::MEMINFO as usize] as *mut numba_nrt::MemInfo,
            );
            // SAFETY: the fields describe `length` bytes; the new object copies them,
            // then the result's MemInfo reference (null for constants and borrowed
            // data) is released.
            let obj =
                pyo3::types::PyBytes::new(py, unsafe { std::slice::from_raw_parts(data, length) });
            // SAFETY: as above.
            unsafe { numba_nrt::NRT_decref(meminfo) };
            obj.into_any().unbind()
        }
        Shape::Unicode => {
            use numba_lower::model::unicode::{field, FIELDS};
            let f: SmallVec<[u64; 7]> = (0..FIELDS).map(|_| next()).collect::<PyResult<_>>()?;
            let at = |i: u32| f[i as usize];
            let (data, length, kind, meminfo) = (
                at(field::DATA),
                at(field::LENGTH) as isize,
                at(field::KIND) as i32,
                at(field::MEMINFO) as *mut numba_nrt::MemInfo,
            );
            // SAFETY: the fields describe PEP 393 data of `length` characters of `kind`
            // bytes; CPython copies it into the new object.
            let obj = unsafe {
                pyo3::ffi::PyUnicode_FromKindAndData(kind, data as *const std::ffi::c_void, length)
            };
            // SAFETY: the result owns one reference to its MemInfo (null for constants
            // and borrowed strings), released now that the data is copied.
            unsafe { numba_nrt::NRT_decref(meminfo) };
            // SAFETY: a new reference, or null with the error set.
            unsafe { Bound::from_owned_ptr_or_err(py, obj) }?.unbind()
        }
        Shape::Object => {
            let p = next()? as *mut pyo3::ffi::PyObject;
            // SAFETY: object-mode code stores a new reference (never null on success).
            unsafe { Bound::from_owned_ptr_or_err(py, p) }?.unbind()
        }
        Shape::Generator(t) => {
            let obj = next()? as usize;
            // SAFETY: the slot holds a new reference to a generator object of type t.
            let g = unsafe { crate::generator::NativeGenerator::adopt(obj, *t) };
            Py::new(py, g)?.into_any()
        }
        Shape::Literal(t) => literal_value(py, *t)?,
        Shape::List {
            dtype, typed: true, ..
        } => {
            let mi = next()? as *mut numba_nrt::MemInfo;
            next()?;
            crate::typed_list::wrap(py, mi, *dtype)?
        }
        Shape::List { item, .. } | Shape::Set { item, .. } => {
            let (mi, parent) = (next()?, next()?);
            let set = matches!(shape, Shape::Set { .. });
            crate::lists::decode_container(py, set, mi, parent, item)?
        }
        Shape::Dict { dict, .. } => {
            let mi = next()? as *mut numba_nrt::MemInfo;
            next()?;
            crate::dicts::wrap(py, mi, *dict)?
        }
        Shape::Instance(t) => {
            let mi = next()? as *mut numba_nrt::MemInfo;
            next()?;
            crate::jitclass::wrap(py, mi, *t)?
        }
        Shape::Record(t) => crate::records::decode(py, next()?, *t)?,
        Shape::NpGenerator => {
            next()?;
            crate::npgen::decode(py, next()?)?
        }
        Shape::Chars(t) => {
            let words = (0..numba_lower::callconv::char_slots(*t))
                .map(|_| next())
                .collect::<PyResult<Vec<u64>>>()?;
            crate::records::decode_chars(py, &words, *t)?
        }
        Shape::Enum(class) => {
            let v = next()? as i64;
            class_by_key(py, class)?.call1((v,))?.unbind()
        }
        Shape::Array(t) => {
            let n = numba_lower::model::array::ndim(*t) as usize;
            let fields: SmallVec<[u64; 16]> =
                (0..5 + 2 * n).map(|_| next()).collect::<PyResult<_>>()?;
            let parent = fields[1] as *mut pyo3::ffi::PyObject;
            let meminfo = fields[0] as *mut numba_nrt::MemInfo;
            if !meminfo.is_null() && !parent.is_null() && crate::dicts::owns_parent(meminfo, parent)
            {
                // An argument array a container adopted: the array itself (or a view of
                // it), as a borrowed one; the reference handed over is dropped.
                // SAFETY: the MemInfo keeps `parent` alive until released below.
                let arr = unsafe { Bound::from_borrowed_ptr(py, parent) };
                let out = if crate::ndarray::raw(&arr)
                    .is_some_and(|a| crate::ndarray::same_array(a, *t, &fields))
                    && !readonly_of_writeable(&arr, *t)
                {
                    arr.unbind()
                } else {
                    new_array(py, *t, &fields, Some(arr))?
                };
                // SAFETY: the reference the native code handed over.
                unsafe { numba_nrt::NRT_decref(meminfo) };
                return Ok(out);
            }
            if !meminfo.is_null() {
                // An NRT array: a NumPy array over its data whose base owns the reference
                // the native code handed over.
                let base = Bound::new(py, MemInfoView::owning(meminfo))?;
                return new_array(py, *t, &fields, Some(base.into_any()));
            }
            if parent.is_null() {
                // A global array frozen into the code (or a view of one): its memory lives
                // as long as the compiled function, so Python gets a copy, readonly when
                // the type is (Numba returns a readonly view of the constant).
                let arr = new_array(py, *t, &fields, None)?;
                let copy = arr.bind(py).call_method1("copy", ("K",))?;
                if matches!(t.get(), Type::Array { readonly: true, .. }) {
                    copy.getattr("flags")?.setattr("writeable", false)?;
                }
                return Ok(copy.unbind());
            }
            // SAFETY: a non-null parent is an argument array the caller still holds.
            let arr = unsafe { Bound::from_borrowed_ptr(py, parent) };
            if crate::ndarray::raw(&arr).is_some_and(|a| crate::ndarray::same_array(a, *t, &fields))
                && !readonly_of_writeable(&arr, *t)
            {
                return Ok(arr.unbind());
            }
            // A view of an argument array: its base keeps the argument alive.
            new_array(py, *t, &fields, Some(arr))?
        }
    })
}

/// Whether a result typed read-only (`np.broadcast_to`'s) is the same memory as a
/// writeable argument array: it is then returned as a new read-only view, not as the
/// argument itself.
fn readonly_of_writeable(arr: &Bound<'_, PyAny>, t: TypeId) -> bool {
    matches!(t.get(), Type::Array { readonly: true, .. })
        && arr
            .getattr("flags")
            .and_then(|f| f.getattr("writeable"))
            .and_then(|w| w.is_truthy())
            .unwrap_or(false)
}

/// The base of a NumPy array over NRT memory: it owns one reference to the MemInfo and
/// drops it when NumPy releases the array. Exposes the MemInfo's `refcount`.
#[pyclass(module = "numba_rs.runtime", name = "MemInfo")]
pub struct MemInfoView {
    meminfo: *mut numba_nrt::MemInfo,
}

// SAFETY: a MemInfo's reference count is atomic and its memory is not tied to a thread,
// so the view may be dropped on whichever thread NumPy releases the array.
unsafe impl Send for MemInfoView {}
unsafe impl Sync for MemInfoView {}

impl MemInfoView {
    fn owning(meminfo: *mut numba_nrt::MemInfo) -> MemInfoView {
        MemInfoView { meminfo }
    }
}

#[pymethods]
impl MemInfoView {
    /// The MemInfo's reference count.
    #[getter]
    fn refcount(&self) -> usize {
        if self.meminfo.is_null() {
            return 0;
        }
        // SAFETY: the view holds a reference, so the MemInfo is alive.
        unsafe {
            (*self.meminfo)
                .refct
                .load(std::sync::atomic::Ordering::SeqCst)
        }
    }
}

impl Drop for MemInfoView {
    fn drop(&mut self) {
        // SAFETY: the view owns one reference (NRT_decref ignores null).
        unsafe { numba_nrt::NRT_decref(self.meminfo) };
    }
}

/// The address a ctypes or cffi object stands for (`numba_rs._cinterop.address`), as an
/// argument of pointer type.
fn address_of(v: &Bound<'_, PyAny>) -> PyResult<u64> {
    v.py()
        .import("numba_rs._cinterop")?
        .call_method1("address", (v,))?
        .extract()
}

/// A Python `bytes`' fields as `model::unicode` lays them out for `bytes`: its buffer,
/// length, kind 1, whether it is ASCII, no hash yet, no MemInfo (the data is borrowed)
/// and the object as parent.
pub(crate) fn bytes_fields(b: &Bound<'_, pyo3::types::PyBytes>) -> [u64; 7] {
    use numba_lower::model::unicode::field;
    let data = b.as_bytes();
    let mut f = [0u64; 7];
    f[field::DATA as usize] = data.as_ptr() as u64;
    f[field::LENGTH as usize] = data.len() as u64;
    f[field::KIND as usize] = 1;
    f[field::IS_ASCII as usize] = u64::from(data.is_ascii());
    f[field::HASH as usize] = u64::MAX;
    f[field::PARENT as usize] = b.as_ptr() as u64;
    f
}

/// A Python `str`'s fields as `model::unicode` lays them out: data, length, kind,
/// is_ascii, hash (CPython's cached one, -1 until computed), MemInfo (none: the data is
/// borrowed) and parent.
pub(crate) fn unicode_fields(s: &Bound<'_, PyString>) -> [u64; 7] {
    // SAFETY: a live `str`.
    unsafe { unicode_fields_of(s.as_ptr()) }
}

/// [`unicode_fields`] of a `str` by pointer (the dispatcher's warm path).
///
/// # Safety
/// `p` is a live `str` object.
pub(crate) unsafe fn unicode_fields_of(p: *mut pyo3::ffi::PyObject) -> [u64; 7] {
    use numba_lower::model::unicode::field;
    let mut f = [0u64; 7];
    // SAFETY: `p` is a live `str`, ready since its creation (Python 3.11 readies every
    // string made from Python code).
    unsafe {
        f[field::DATA as usize] = pyo3::ffi::PyUnicode_DATA(p) as u64;
        f[field::LENGTH as usize] = pyo3::ffi::PyUnicode_GET_LENGTH(p) as u64;
        f[field::KIND as usize] = u64::from(pyo3::ffi::PyUnicode_KIND(p));
        f[field::IS_ASCII as usize] = u64::from(pyo3::ffi::PyUnicode_IS_ASCII(p));
    }
    // SAFETY: a `str` is a PyASCIIObject; its hash is -1 until CPython computes it.
    f[field::HASH as usize] = unsafe { (*(p as *mut pyo3::ffi::PyASCIIObject)).hash } as u64;
    f[field::PARENT as usize] = p as u64;
    f
}
