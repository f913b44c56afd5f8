//! NumPy arrays across the boundary without reading a Python attribute: an argument's
//! fields come from its C struct (`PyArrayObject_fields`), a result is made with NumPy's
//! C API (`PyArray_NewFromDescr`) over the native memory, with a base object that keeps
//! that memory alive (a [`MemInfoView`](crate::boxing::MemInfoView) owning an NRT
//! reference, or the argument array a view was taken from).

use std::os::raw::{c_int, c_long};

use numba_typeinfer::types::{Type, TypeId};
use numpy::npyffi::{get_type_object, NpyTypes, PyArrayObject, PY_ARRAY_API};
use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;

/// `PyArrayObject_fields` (NumPy 1.x and 2.x agree on these leading fields).
#[repr(C)]
pub struct RawArray {
    ob_base: ffi::PyObject,
    pub data: *mut u8,
    pub nd: i32,
    pub dimensions: *mut isize,
    pub strides: *mut isize,
    pub base: *mut ffi::PyObject,
    pub descr: *mut RawDescr,
    pub flags: i32,
}

/// The leading fields of `PyArray_Descr`, the same in NumPy 1.x and 2.x (the element
/// size is not among them: it moved in 2.0, so it is taken from the type).
#[repr(C)]
pub struct RawDescr {
    ob_base: ffi::PyObject,
    pub typeobj: *mut ffi::PyTypeObject,
    pub kind: u8,
    pub type_: u8,
    pub byteorder: u8,
    pub former_flags: u8,
    pub type_num: i32,
}

pub const NPY_ARRAY_C_CONTIGUOUS: i32 = 0x1;
pub const NPY_ARRAY_F_CONTIGUOUS: i32 = 0x2;
pub const NPY_ARRAY_WRITEABLE: i32 = 0x400;

impl RawArray {
    pub fn shape(&self) -> &[isize] {
        let n = self.nd.max(0) as usize;
        if n == 0 {
            return &[];
        }
        // SAFETY: a live array has `nd` dimensions.
        unsafe { std::slice::from_raw_parts(self.dimensions, n) }
    }

    pub fn strides(&self) -> &[isize] {
        let n = self.nd.max(0) as usize;
        if n == 0 {
            return &[];
        }
        // SAFETY: a live array has `nd` strides.
        unsafe { std::slice::from_raw_parts(self.strides, n) }
    }

    pub fn type_num(&self) -> i32 {
        // SAFETY: a live array's descr is a live PyArray_Descr.
        unsafe { (*self.descr).type_num }
    }
}

/// `v` as an array struct when it is an `ndarray` or a subclass of it.
pub fn raw<'a>(v: &'a Bound<'_, PyAny>) -> Option<&'a RawArray> {
    let py = v.py();
    // SAFETY: NumPy's API table (imported on first use) holds its type objects; an object
    // of an ndarray type is a PyArrayObject.
    unsafe {
        let t = get_type_object(py, NpyTypes::PyArray_Type);
        (ffi::PyObject_TypeCheck(v.as_ptr(), t) != 0).then(|| &*(v.as_ptr() as *const RawArray))
    }
}

/// The element type of an array type.
fn dtype(t: TypeId) -> TypeId {
    match t.get() {
        Type::Array { dtype, .. } => dtype,
        _ => t,
    }
}

/// Bytes per element of an array type's dtype (numba-typeinfer's one definition).
pub fn itemsize(t: TypeId) -> u64 {
    numba_typeinfer::records::field_size(dtype(t))
}

/// NumPy's typenum for an array type's dtype (`NPY_LONG` for int64 where C's long has
/// 64 bits, as `np.dtype('int64').num` is there).
fn typenum(t: TypeId) -> PyResult<c_int> {
    let long64 = std::mem::size_of::<c_long>() == 8;
    Ok(match dtype(t).get() {
        Type::Boolean => 0,
        Type::Integer { bits: 8, signed } => 1 + c_int::from(!signed),
        Type::Integer { bits: 16, signed } => 3 + c_int::from(!signed),
        Type::Integer { bits: 32, signed } => 5 + c_int::from(!signed),
        Type::Integer { bits: 64, signed } => (if long64 { 7 } else { 9 }) + c_int::from(!signed),
        Type::Float { bits: 16 } => 23,
        Type::Float { bits: 32 } => 11,
        Type::Float { bits: 64 } => 12,
        Type::Complex { bits: 64 } => 14,
        Type::Complex { bits: 128 } => 15,
        _ => {
            return Err(PyTypeError::new_err(format!(
                "an array of {} cannot be returned to Python",
                dtype(t)
            )))
        }
    })
}

/// NumPy views of buffer-protocol arguments (`bytearray`, `memoryview`, `array.array`)
/// made for calls in progress on this thread: each holds its exporter's buffer (so it
/// cannot be resized) until its call returns ([`keep_mark`] / [`keep_release`]).
mod keep {
    use std::cell::RefCell;

    use pyo3::prelude::*;

    thread_local! {
        pub(super) static VIEWS: RefCell<Vec<Py<PyAny>>> = const { RefCell::new(Vec::new()) };
    }
}

/// Keep `obj` alive until the dispatcher call in progress on this thread returns (a
/// Generator compiled code made: its value borrows the object).
pub fn keep_for_call(_py: Python<'_>, obj: Py<PyAny>) {
    keep::VIEWS.with(|k| k.borrow_mut().push(obj));
}

/// The position to release buffer views back to after a call.
pub fn keep_mark() -> usize {
    keep::VIEWS.with(|k| k.borrow().len())
}

/// Release the buffer views made since `mark` (the call that made them returned).
pub fn keep_release(py: Python<'_>, mark: usize) {
    let released: Vec<Py<PyAny>> = keep::VIEWS.with(|k| {
        let mut k = k.borrow_mut();
        let n = k.len().min(mark);
        k.split_off(n)
    });
    // Dropped as bound references: the vectorcall entry runs on `assume_attached`, where
    // dropping a `Py` would only queue its decref in pyo3's pool (each call's view, and
    // the exporter's buffer, then stayed alive).
    for v in released {
        drop(v.into_bound(py));
    }
}

/// A NumPy array over a buffer-protocol object's memory (`numpy.asarray`), or None.
pub fn buffer_view<'py>(v: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    // SAFETY: a live object.
    if unsafe { ffi::PyObject_CheckBuffer(v.as_ptr()) } == 0 {
        return Ok(None);
    }
    let a = v.py().import("numpy")?.getattr("asarray")?.call1((v,))?;
    Ok(raw(&a).is_some().then_some(a))
}

/// Append the array struct of argument `v` (typed `t`): no MemInfo (the caller keeps the
/// array alive), the array itself as parent.
pub fn encode(v: &Bound<'_, PyAny>, t: TypeId, out: &mut crate::boxing::Slots) -> PyResult<()> {
    if raw(v).is_none() {
        // A `bytearray`, `memoryview` or other buffer exporter typed as an array: a view
        // of its memory, kept for the call (writes reach the caller's object).
        if let Some(view) = buffer_view(v)? {
            encode(&view, t, out)?;
            keep::VIEWS.with(|k| k.borrow_mut().push(view.unbind()));
            return Ok(());
        }
    }
    let a = raw(v).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "expected a NumPy array for {t}, got {}",
            v.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let shape = a.shape();
    out.push(0);
    out.push(v.as_ptr() as u64);
    out.push(shape.iter().product::<isize>() as u64);
    out.push(itemsize(t));
    out.push(a.data as u64);
    out.extend(shape.iter().map(|&x| x as u64));
    out.extend(a.strides().iter().map(|&x| x as u64));
    Ok(())
}

/// A NumPy array of type `t` over the array struct `fields`
/// (`numba_lower::model::array`), whose base is `base` (the object keeping the memory
/// alive; none for memory that outlives the array).
pub fn new_array(
    py: Python<'_>,
    t: TypeId,
    fields: &[u64],
    base: Option<Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let n = numba_lower::model::array::ndim(t) as usize;
    let readonly = matches!(t.get(), Type::Array { readonly: true, .. });
    let mut dims: smallvec::SmallVec<[isize; 4]> =
        fields[5..5 + n].iter().map(|&x| x as isize).collect();
    let mut strides: smallvec::SmallVec<[isize; 4]> = fields[5 + n..5 + 2 * n]
        .iter()
        .map(|&x| x as isize)
        .collect();
    // SAFETY: NumPy's C API with the GIL held; the descr reference is stolen by
    // NewFromDescr, the base reference by SetBaseObject; data, dims and strides describe
    // memory the base keeps alive.
    unsafe {
        let descr = match char_dtype(py, t)? {
            Some(d) => d.into_ptr() as *mut numpy::npyffi::PyArray_Descr,
            None => PY_ARRAY_API.PyArray_DescrFromType(py, typenum(t)?),
        };
        if descr.is_null() {
            return Err(PyErr::fetch(py));
        }
        let arr = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            get_type_object(py, NpyTypes::PyArray_Type),
            descr,
            n as c_int,
            dims.as_mut_ptr(),
            strides.as_mut_ptr(),
            fields[4] as *mut std::ffi::c_void,
            if readonly { 0 } else { NPY_ARRAY_WRITEABLE },
            std::ptr::null_mut(),
        );
        let arr = Bound::from_owned_ptr_or_err(py, arr)?;
        if let Some(b) = base {
            if PY_ARRAY_API.PyArray_SetBaseObject(
                py,
                arr.as_ptr() as *mut PyArrayObject,
                b.into_ptr(),
            ) < 0
            {
                return Err(PyErr::fetch(py));
            }
        }
        Ok(arr.unbind())
    }
}

/// The dtype object of an array of character data (`S8`, `<U8`) or of datetimes
/// (`M8[D]`); none for others.
fn char_dtype<'py>(py: Python<'py>, t: TypeId) -> PyResult<Option<Bound<'py, PyAny>>> {
    let spec = match dtype(t).get() {
        Type::CharSeq(n) => format!("S{n}"),
        Type::UnicodeCharSeq(n) => format!("<U{n}"),
        Type::NPDatetime(_) | Type::NPTimedelta(_) => crate::boxing::datetime_dtype_str(dtype(t)),
        Type::Record { .. } => return crate::records::dtype_of(py, dtype(t)).map(Some),
        _ => return Ok(None),
    };
    let np = py.import("numpy")?;
    Ok(Some(np.getattr("dtype")?.call1((spec,))?))
}

/// One typenum per dtype: `NPY_LONGLONG` is `NPY_LONG` where both have 64 bits.
fn canonical(num: c_int) -> c_int {
    if std::mem::size_of::<c_long>() == 8 && matches!(num, 9 | 10) {
        num - 2
    } else {
        num
    }
}

/// Whether the array struct `fields` (of type `t`) describes exactly the argument array
/// `a`: same data, shape, strides and dtype.
pub fn same_array(a: &RawArray, t: TypeId, fields: &[u64]) -> bool {
    let n = numba_lower::model::array::ndim(t) as usize;
    let same_dtype = match dtype(t).get() {
        // NPY_STRING, NPY_UNICODE (the strides tell the item size).
        Type::CharSeq(_) => a.type_num() == 18,
        Type::UnicodeCharSeq(_) => a.type_num() == 19,
        // NPY_DATETIME, NPY_TIMEDELTA (the unit is the type's: an argument's own).
        Type::NPDatetime(_) => a.type_num() == 21,
        Type::NPTimedelta(_) => a.type_num() == 22,
        // NPY_VOID (the type was read from this very dtype).
        Type::Record { .. } => a.type_num() == 20,
        _ => typenum(t).is_ok_and(|num| canonical(num) == canonical(a.type_num())),
    };
    a.data as u64 == fields[4]
        && same_dtype
        && a.shape()
            .iter()
            .map(|&x| x as u64)
            .eq(fields[5..5 + n].iter().copied())
        && a.strides()
            .iter()
            .map(|&x| x as u64)
            .eq(fields[5 + n..5 + 2 * n].iter().copied())
}
