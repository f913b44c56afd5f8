//! `numba_rs.typed.List`: a typed list (`ListType[T]`) shared by reference between Python
//! and compiled code, over the same payload compiled lists use (numba-lower's `lists`).
//! Compiled code receives the object's MemInfo (no copy, no reflection: changes made on
//! either side are seen on the other); a typed list compiled code returns becomes one of
//! these. The primitives here (length, item access, insertion, removal) call the payload
//! directly; `numba_rs.typed.List` builds the rest of the list API on them.

use std::sync::OnceLock;

use numba_lower::lists::{
    interned_ref_map, item_refs, numba_rs_list_clear, numba_rs_list_close_gap, numba_rs_list_new,
    numba_rs_list_open_gap, ref_map, ListPayload,
};
use numba_lower::Shape;
use numba_nrt::MemInfo;
use numba_typeinfer::types::{self, TypeId};
use pyo3::exceptions::{PyIndexError, PyMemoryError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::boxing::{decode, Slots};
use crate::dicts::OwnedSlots;

/// The base class of `numba_rs.typed.List`: the MemInfo (null until typed) and what
/// the items look like.
#[pyclass(module = "numba_rs.typed", name = "_ListBase", subclass)]
pub struct TypedList {
    mi: *mut MemInfo,
    t: Option<TypeId>,
    /// The item type (read on every operation: kept here, not looked up in the type
    /// table).
    item_t: Option<TypeId>,
    item: Shape,
    refs: *const i32,
}

// SAFETY: a MemInfo's count is atomic and its payload is only touched with the GIL held;
// `refs` is an interned constant.
unsafe impl Send for TypedList {}
unsafe impl Sync for TypedList {}

impl Drop for TypedList {
    fn drop(&mut self) {
        // SAFETY: the object's own reference (or null).
        unsafe { numba_nrt::NRT_decref(self.mi) };
    }
}

fn item_shape(dtype: TypeId) -> PyResult<Shape> {
    numba_lower::callconv::boundary_shape(dtype).map_err(|_| {
        crate::UnsupportedError::new_err(format!(
            "typed lists of {dtype} are not supported by numba-rs yet"
        ))
    })
}

/// A `numba_rs.typed.List` owning `mi` (a reference the caller hands over).
pub(crate) fn wrap(py: Python<'_>, mi: *mut MemInfo, dtype: TypeId) -> PyResult<Py<PyAny>> {
    static CLASS: OnceLock<Py<PyType>> = OnceLock::new();
    let mut owned = crate::dicts::OwnedMemInfo(mi);
    let item = item_shape(dtype)?;
    let obj = crate::dicts::typed_class(py, &CLASS, "List")?
        .bind(py)
        .call0()?;
    {
        let l = obj.cast::<TypedList>()?;
        let mut l = l.borrow_mut();
        // The fresh object has no MemInfo of its own.
        l.mi = owned.take();
        l.refs = interned_ref_map(ref_map(&item));
        l.item = item;
        l.t = Some(numba_typeinfer::lists::typed_list_of(dtype));
        l.item_t = Some(dtype);
    }
    Ok(obj.unbind())
}

/// The slots of a `typed.List` argument of type `t`: its MemInfo with a reference for
/// the call (released after it, as every list argument's) and a null parent.
pub(crate) fn encode_arg(v: &Bound<'_, PyAny>, dtype: TypeId, out: &mut Slots) -> PyResult<()> {
    let want = numba_typeinfer::lists::typed_list_of(dtype);
    let l = v
        .cast::<TypedList>()
        .map_err(|_| PyTypeError::new_err(format!("expected a typed.List of type {want}")))?;
    let l = l.borrow();
    if l.t != Some(want) || l.mi.is_null() {
        return Err(PyTypeError::new_err(format!(
            "expected a typed.List of type {want}"
        )));
    }
    // SAFETY: a live MemInfo: one more owner for the call.
    unsafe { numba_nrt::NRT_incref(l.mi) };
    out.push(l.mi as u64);
    out.push(0);
    Ok(())
}

/// The type of a `typed.List` argument.
pub(crate) fn typeof_list(v: &Bound<'_, PyAny>) -> Option<PyResult<TypeId>> {
    let l = v.cast::<TypedList>().ok()?;
    let l = l.borrow();
    Some(match l.t {
        Some(t) if !l.mi.is_null() => Ok(t),
        _ => Err(crate::TypingError::new_err(
            "cannot pass an empty typed.List whose item type is not known yet: make it with List.empty_list(item_type) or append an item first",
        )),
    })
}

impl TypedList {
    fn payload(&self) -> *mut ListPayload {
        // SAFETY: a live list MemInfo (callers check the list is typed).
        unsafe { numba_nrt::NRT_MemInfo_data(self.mi) as *mut ListPayload }
    }

    fn dtype(&self) -> Option<TypeId> {
        self.item_t.filter(|_| !self.mi.is_null())
    }

    fn len(&self) -> i64 {
        match self.dtype() {
            // SAFETY: a live payload.
            Some(_) => unsafe { (*self.payload()).size },
            None => 0,
        }
    }

    fn init_type(&mut self, dtype: TypeId, allocated: i64) -> PyResult<()> {
        let t = numba_typeinfer::lists::typed_list_of(dtype);
        if !numba_typeinfer::lists::storable(dtype) {
            return Err(crate::TypingError::new_err(format!(
                "typed lists of {dtype} are not supported"
            )));
        }
        let item = item_shape(dtype)?;
        let refs = interned_ref_map(ref_map(&item));
        // SAFETY: `refs` lives for the process.
        let mi = unsafe { numba_rs_list_new((item.slots() * 8) as i64, allocated.max(0), refs) };
        if mi.is_null() {
            return Err(PyMemoryError::new_err("cannot allocate a list"));
        }
        // SAFETY: the previous reference (null for an untyped list).
        unsafe { numba_nrt::NRT_decref(self.mi) };
        self.mi = mi;
        self.item = item;
        self.refs = refs;
        self.t = Some(t);
        self.item_t = Some(dtype);
        Ok(())
    }

    /// An item's slots owning their references, checked against the item type.
    fn owned<'a>(&'a self, v: &Bound<'_, PyAny>) -> PyResult<OwnedSlots<'a>> {
        let dtype = self.dtype().expect("typed");
        if crate::fingerprint::scalar_typecode(v.as_ptr()) != Some(dtype) {
            let t = crate::lists::unreflected(numba_typeinfer::strings::held_text(
                crate::typeof_arg(v)?,
            ));
            if t != dtype {
                numba_typeinfer::dicts::safe_cast(t, dtype).map_err(crate::TypingError::new_err)?;
            }
        }
        OwnedSlots::encode(v, &self.item)
    }

    fn at(&self, i: i64) -> *mut u64 {
        // SAFETY: callers check `i` against the size.
        unsafe {
            let p = &*self.payload();
            p.data.add((i * p.item_bytes) as usize) as *mut u64
        }
    }

    fn index(&self, i: i64, allow_end: bool) -> PyResult<i64> {
        let n = self.len();
        let j = if i < 0 { i + n } else { i };
        let hi = if allow_end { n } else { n - 1 };
        if j < 0 || j > hi {
            return Err(PyIndexError::new_err("list index out of range"));
        }
        Ok(j)
    }

    fn check_mutable(&self) -> PyResult<()> {
        if self._is_mutable() {
            Ok(())
        } else {
            Err(pyo3::exceptions::PyValueError::new_err("list is immutable"))
        }
    }

    fn ensure_typed(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        if self.dtype().is_none() {
            let t = crate::lists::unreflected(numba_typeinfer::strings::held_text(
                crate::typeof_arg(v)?,
            ));
            self.init_type(t, 0)?;
        }
        Ok(())
    }
}

#[pymethods]
impl TypedList {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(
        _args: &Bound<'_, pyo3::types::PyTuple>,
        _kwargs: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> Self {
        TypedList {
            mi: std::ptr::null_mut(),
            t: None,
            item_t: None,
            item: Shape::None,
            refs: std::ptr::null(),
        }
    }

    /// Type an untyped list as `ListType[item_type]` with room for `allocated` items.
    fn _init_type(&mut self, item_type: u32, allocated: i64) -> PyResult<()> {
        self.init_type(TypeId(item_type), allocated)
    }

    /// The typecode of the list's type, or None while untyped.
    #[getter]
    fn _typecode(&self) -> Option<u32> {
        self.dtype().and(self.t).map(|t| t.0)
    }

    fn __len__(&self) -> usize {
        self.len() as usize
    }

    /// Item `i` (an integer; slices are the Python class's).
    fn _getitem(&self, py: Python<'_>, i: i64) -> PyResult<Py<PyAny>> {
        let j = self.index(i, false)?;
        let at = self.at(j);
        // SAFETY: item `j` of the live payload; decoding consumes one reference per
        // MemInfo, taken here.
        unsafe {
            item_refs(self.refs, at, numba_nrt::NRT_incref);
            let slots = std::slice::from_raw_parts(at, self.item.slots());
            decode(py, slots, &mut 0, &self.item)
        }
    }

    fn _setitem(&mut self, i: i64, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.check_mutable()?;
        let j = self.index(i, false)?;
        let new = self.owned(v)?;
        let at = self.at(j);
        // SAFETY: item `j` of the live payload: its references released, the new item
        // (whose references the list takes) written over it.
        unsafe {
            item_refs(self.refs, new.slots.as_ptr(), numba_nrt::NRT_incref);
            item_refs(self.refs, at, numba_nrt::NRT_decref);
            std::ptr::copy_nonoverlapping(new.slots.as_ptr(), at, self.item.slots());
        }
        Ok(())
    }

    fn append(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.check_mutable()?;
        self.ensure_typed(v)?;
        let dtype = self.dtype().expect("typed above");
        // An exact int, float or bool into a list of that type: one word, no references.
        if crate::fingerprint::scalar_typecode(v.as_ptr()) == Some(dtype)
            && matches!(dtype, types::INT64 | types::FLOAT64 | types::BOOLEAN)
        {
            let p = v.as_ptr();
            // SAFETY: `p` is a live object of exactly the class `dtype` names.
            let w = unsafe {
                match dtype {
                    types::INT64 => {
                        let mut overflow = 0;
                        let x = pyo3::ffi::PyLong_AsLongLongAndOverflow(p, &mut overflow);
                        if overflow != 0 {
                            return Err(pyo3::exceptions::PyOverflowError::new_err(
                                "int too big to convert",
                            ));
                        }
                        x as u64
                    }
                    types::FLOAT64 => pyo3::ffi::PyFloat_AS_DOUBLE(p).to_bits(),
                    _ => u64::from(p == pyo3::ffi::Py_True()),
                }
            };
            // SAFETY: a live payload of one-word items, grown by one first.
            unsafe {
                let pl = self.payload();
                let n = (*pl).size;
                if numba_lower::lists::numba_rs_list_reserve(pl, n + 1) != 0 {
                    return Err(PyMemoryError::new_err("cannot grow the list"));
                }
                *((*pl).data as *mut u64).add(n as usize) = w;
                (*pl).size = n + 1;
            }
            return Ok(());
        }
        let n = self.len();
        self._insert(n, v)
    }

    /// Insert `v` before item `i` (clamped to the list, as `list.insert`).
    fn _insert(&mut self, i: i64, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.check_mutable()?;
        self.ensure_typed(v)?;
        let n = self.len();
        let j = (if i < 0 { i + n } else { i }).clamp(0, n);
        let new = self.owned(v)?;
        // SAFETY: a live payload; the gap at `j` receives the item and its references.
        unsafe {
            if numba_rs_list_open_gap(self.payload(), j) != 0 {
                return Err(PyMemoryError::new_err("cannot grow the list"));
            }
            item_refs(self.refs, new.slots.as_ptr(), numba_nrt::NRT_incref);
            std::ptr::copy_nonoverlapping(new.slots.as_ptr(), self.at(j), self.item.slots());
        }
        Ok(())
    }

    /// Remove and return item `i`.
    fn _pop(&mut self, py: Python<'_>, i: i64) -> PyResult<Py<PyAny>> {
        self.check_mutable()?;
        if self.len() == 0 {
            return Err(PyIndexError::new_err("pop from empty list"));
        }
        let j = self
            .index(i, false)
            .map_err(|_| PyIndexError::new_err("pop index out of range"))?;
        let v = self._getitem(py, j)?;
        // SAFETY: item `j` of the live payload: released, then the gap closed.
        unsafe {
            item_refs(self.refs, self.at(j), numba_nrt::NRT_decref);
            numba_rs_list_close_gap(self.payload(), j);
        }
        Ok(v)
    }

    fn clear(&mut self) -> PyResult<()> {
        self.check_mutable()?;
        if self.dtype().is_some() {
            // SAFETY: a live payload.
            unsafe { numba_rs_list_clear(self.payload()) };
        }
        Ok(())
    }

    /// Whether the list may change (Numba's `_is_mutable()`).
    fn _is_mutable(&self) -> bool {
        // SAFETY: a live payload.
        self.dtype().is_none() || unsafe { (*self.payload()).immutable == 0 }
    }

    /// Make the list read-only: every later change raises `ValueError`.
    fn _make_immutable(&mut self) {
        if self.dtype().is_some() {
            // SAFETY: a live payload.
            unsafe { (*self.payload()).immutable = 1 };
        }
    }

    /// Items the list has room for before it grows (Numba's `_allocated()`).
    fn _allocated(&self) -> i64 {
        match self.dtype() {
            // SAFETY: a live payload.
            Some(_) => unsafe { (*self.payload()).allocated },
            None => 0,
        }
    }

    /// The MemInfo's reference count (tests of sharing).
    fn _refcount(&self) -> usize {
        // SAFETY: a live MemInfo or null.
        unsafe { numba_nrt::NRT_MemInfo_refcount(self.mi) }
    }
}
