//! Lists across the boundary (numba-lower's `model::list`, payload in `lists`): a Python
//! `list` argument becomes a new native list whose items are unboxed with the ordinary
//! codec and which remembers its Python list; after the call a reflected list's changes
//! are written back into that Python list (Numba's reflection) and the native list is
//! released. A list result becomes a Python `list` (or, when it is a reflected argument
//! coming back, that same Python list).

use numba_lower::lists::{interned_ref_map, numba_rs_list_new, ref_map, ListPayload};
use numba_lower::sets::{
    interned_key_program, key_program, numba_rs_set_add, numba_rs_set_new, numba_rs_set_next,
    SetPayload,
};
use numba_lower::Shape;
use numba_typeinfer::types::{self, TypeId};
use pyo3::exceptions::{PyMemoryError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PySet};
use smallvec::SmallVec;

use crate::boxing::{decode, encode, Slots};

/// The payload of a list's MemInfo.
///
/// # Safety
/// `mi` is a live list MemInfo.
unsafe fn payload<'a>(mi: *mut numba_nrt::MemInfo) -> &'a mut ListPayload {
    // SAFETY: the caller's contract: a list MemInfo's data is its payload.
    unsafe { &mut *(numba_nrt::NRT_MemInfo_data(mi) as *mut ListPayload) }
}

/// Append the slots of a native list made from the Python list `v` (items of `dtype`,
/// unboxed with `item`'s shape): its MemInfo (a reference the caller releases with
/// [`release_arg`]) and `v` as its parent.
pub fn encode_list(
    v: &Bound<'_, PyAny>,
    item: &Shape,
    dtype: TypeId,
    out: &mut Slots,
) -> PyResult<()> {
    let l = v.cast::<PyList>().map_err(|_| {
        PyTypeError::new_err(format!(
            "can't unbox a list from {}",
            v.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let n = l.len();
    let bytes = item.slots() * 8;
    let refs = interned_ref_map(ref_map(item));
    // SAFETY: `refs` lives for the process.
    let mi = unsafe { numba_rs_list_new(bytes as i64, n as i64, refs) };
    if mi.is_null() {
        return Err(PyMemoryError::new_err("cannot allocate a list"));
    }
    // On an error the list is released with the items unboxed so far.
    let fill = || -> PyResult<()> {
        // Python ints, floats and bools: checked by exact class, stored directly.
        if matches!(dtype, types::INT64 | types::FLOAT64 | types::BOOLEAN) {
            // SAFETY: the payload has room for `n` one-slot items.
            let data = unsafe { payload(mi).data as *mut u64 };
            for i in 0..n {
                // SAFETY: `i < n`, the list's length, which nothing changes meanwhile.
                let p = unsafe { pyo3::ffi::PyList_GET_ITEM(l.as_ptr(), i as isize) };
                if crate::fingerprint::scalar_typecode(p) != Some(dtype) {
                    // A subclass or a NumPy scalar of the same type: the general codec.
                    break_heterogeneous(l, i, dtype)?;
                    let mut tmp = Slots::new();
                    encode(&l.get_item(i)?, item, &mut tmp)?;
                    // SAFETY: as below.
                    unsafe {
                        *data.add(i) = tmp[0];
                        payload(mi).size = i as i64 + 1;
                    }
                    continue;
                }
                // SAFETY: `p` is a live object of exactly the class `dtype` names.
                let w = unsafe {
                    match dtype {
                        types::INT64 => {
                            let mut overflow = 0;
                            let v = pyo3::ffi::PyLong_AsLongLongAndOverflow(p, &mut overflow);
                            if overflow != 0 {
                                return Err(pyo3::exceptions::PyOverflowError::new_err(
                                    "int too big to convert",
                                ));
                            }
                            v as u64
                        }
                        types::FLOAT64 => pyo3::ffi::PyFloat_AS_DOUBLE(p).to_bits(),
                        _ => u64::from(p == pyo3::ffi::Py_True()),
                    }
                };
                // SAFETY: as above.
                unsafe {
                    *data.add(i) = w;
                    payload(mi).size = i as i64 + 1;
                }
            }
            return Ok(());
        }
        let mut tmp = Slots::new();
        // Compared per item only when the item's type is not the list's own (reading a
        // type's structure takes the type table's lock).
        let want = unreflected(dtype);
        let shared = holds_borrowed(item);
        for (i, x) in l.iter().enumerate() {
            let t = crate::typeof_arg(&x)?;
            if t != dtype && unreflected(t) != want {
                return Err(PyTypeError::new_err(format!(
                    "can't unbox heterogeneous list: {dtype} != {t}"
                )));
            }
            tmp.clear();
            encode(&x, item, &mut tmp)?;
            // The list owns its items' references: a typed dict's or a jitclass
            // object's MemInfo, borrowed by the argument codec, gets one of its own.
            if shared {
                acquire_borrowed(item, &tmp, &mut 0);
            }
            // SAFETY: the payload has room for `n` items of `bytes` bytes.
            unsafe {
                let p = payload(mi);
                std::ptr::copy_nonoverlapping(
                    tmp.as_ptr() as *const u8,
                    p.data.add(i * bytes),
                    bytes,
                );
                p.size = i as i64 + 1;
            }
        }
        Ok(())
    };
    if let Err(e) = fill() {
        // SAFETY: the list owns the items unboxed so far.
        unsafe { numba_nrt::NRT_decref(mi) };
        return Err(e);
    }
    out.push(mi as u64);
    out.push(v.as_ptr() as u64);
    Ok(())
}

/// Whether values of `shape` hold a MemInfo the argument codec borrows.
fn holds_borrowed(shape: &Shape) -> bool {
    match shape {
        Shape::Dict { .. } | Shape::Instance(_) => true,
        Shape::Tuple(items) | Shape::Named { items, .. } => items.iter().any(holds_borrowed),
        Shape::Optional(inner) => holds_borrowed(inner),
        _ => false,
    }
}

/// Take a reference for each MemInfo the argument codec borrows in `slots` (a typed
/// dict's, a jitclass object's), from `*pos`, advancing it.
fn acquire_borrowed(shape: &Shape, slots: &[u64], pos: &mut usize) {
    match shape {
        Shape::Dict { .. } | Shape::Instance(_) => {
            // SAFETY: the live MemInfo of the Python object just encoded.
            unsafe { numba_nrt::NRT_incref(slots[*pos] as *mut numba_nrt::MemInfo) };
            *pos += 2;
        }
        Shape::Tuple(items) | Shape::Named { items, .. } => {
            for s in items {
                acquire_borrowed(s, slots, pos);
            }
        }
        Shape::Optional(inner) => {
            let present = slots[*pos] & 1 == 1;
            *pos += 1;
            if present {
                acquire_borrowed(inner, slots, pos);
            } else {
                *pos += inner.slots();
            }
        }
        other => *pos += other.slots(),
    }
}

/// `t` with every list and set in it not reflected: a nested Python list types as a
/// reflected list, and unboxes as an item of either kind.
pub(crate) fn unreflected(t: TypeId) -> TypeId {
    match t.get() {
        types::Type::List { dtype, typed, .. } => types::intern(types::Type::List {
            dtype: unreflected(dtype),
            reflected: false,
            typed,
        }),
        types::Type::Set { dtype, .. } => types::intern(types::Type::Set {
            dtype: unreflected(dtype),
            reflected: false,
        }),
        _ => t,
    }
}

/// The error for item `i` of `l` when it is not of the list's item type.
fn break_heterogeneous(l: &Bound<'_, PyList>, i: usize, dtype: TypeId) -> PyResult<()> {
    let t = crate::typeof_arg(&l.get_item(i)?)?;
    if unreflected(t) == unreflected(dtype) {
        return Ok(());
    }
    Err(PyTypeError::new_err(format!(
        "can't unbox heterogeneous list: {dtype} != {t}"
    )))
}

/// Box item `i` (a new Python object; the list keeps its own reference).
///
/// # Safety
/// `p` holds more than `i` items of `item`'s shape.
unsafe fn box_item(py: Python<'_>, p: &ListPayload, i: i64, item: &Shape) -> PyResult<Py<PyAny>> {
    let words = (p.item_bytes / 8) as usize;
    // SAFETY: the caller's contract.
    let slots = unsafe {
        std::slice::from_raw_parts(p.data.add((i * p.item_bytes) as usize) as *const u64, words)
    };
    // Decoding consumes a reference per MemInfo: take one for it.
    // SAFETY: as above.
    unsafe { numba_lower::lists::numba_rs_list_acquire(p, i, i + 1) };
    decode(py, slots, &mut 0, item)
}

/// Write a reflected list's changes back into its Python list: all of it when the
/// jitted code changed the list, else into its nested reflected lists.
///
/// # Safety
/// `mi` is a live list MemInfo of `item`-shaped items.
unsafe fn reflect(
    py: Python<'_>,
    mi: *mut numba_nrt::MemInfo,
    parent: &Bound<'_, PyList>,
    item: &Shape,
) -> PyResult<()> {
    // SAFETY: the caller's contract.
    let p = unsafe { payload(mi) };
    if p.dirty != 0 {
        // SAFETY: a live payload of `item`-shaped items.
        let items = unsafe { new_pylist(py, p, item)? };
        // SAFETY: both are lists; the slice assignment takes its own references.
        let r =
            unsafe { pyo3::ffi::PyList_SetSlice(parent.as_ptr(), 0, isize::MAX, items.as_ptr()) };
        if r != 0 {
            return Err(PyErr::fetch(py));
        }
        p.dirty = 0;
        return Ok(());
    }
    if let Shape::List {
        item: inner,
        reflected: true,
        ..
    } = item
    {
        for i in 0..p.size {
            // SAFETY: item `i` holds a list's MemInfo and parent.
            let (imi, ipar) = unsafe {
                let w = p.data.add((i * p.item_bytes) as usize) as *const u64;
                (
                    *w as *mut numba_nrt::MemInfo,
                    *w.add(1) as *mut pyo3::ffi::PyObject,
                )
            };
            if imi.is_null() || ipar.is_null() {
                continue;
            }
            // SAFETY: the parent is a Python list the outer Python list still holds.
            let ipar = unsafe { Bound::from_borrowed_ptr(py, ipar) };
            if let Ok(ipar) = ipar.cast::<PyList>() {
                // SAFETY: a live inner list.
                unsafe { reflect(py, imi, ipar, inner)? };
            }
        }
    }
    Ok(())
}

/// A new Python list of the payload's items (boxed; the payload keeps its own).
///
/// # Safety
/// `p` is a live payload of `item`-shaped items.
unsafe fn new_pylist<'py>(
    py: Python<'py>,
    p: &ListPayload,
    item: &Shape,
) -> PyResult<Bound<'py, PyList>> {
    use numba_lower::Leaf;
    use pyo3::ffi;
    // SAFETY: a new list of `size` slots, each set once below with a new reference
    // (SET_ITEM steals it); dropped on error with the slots set so far (NULL ones are
    // skipped by its deallocation).
    unsafe {
        let l = ffi::PyList_New(p.size as isize);
        let l = Bound::from_owned_ptr_or_err(py, l)?.cast_into::<PyList>()?;
        let words = p.data as *const u64;
        for i in 0..p.size {
            let obj = match item {
                Shape::Leaf(
                    Leaf::Int {
                        bits: 64,
                        signed: true,
                    },
                    _,
                ) => ffi::PyLong_FromLongLong(*words.add(i as usize) as i64),
                Shape::Leaf(Leaf::Float, _) => {
                    ffi::PyFloat_FromDouble(f64::from_bits(*words.add(i as usize)))
                }
                Shape::Leaf(Leaf::Bool, _) => {
                    ffi::PyBool_FromLong((*words.add(i as usize) & 1) as std::os::raw::c_long)
                }
                _ => box_item(py, p, i, item)?.into_ptr(),
            };
            if obj.is_null() {
                return Err(PyErr::fetch(py));
            }
            ffi::PyList_SET_ITEM(l.as_ptr(), i as isize, obj);
        }
        Ok(l)
    }
}

/// After a call: write back and release every list and set argument (`slots` as encoded
/// for `shapes`), those held in tuple arguments too.
pub fn release_args(py: Python<'_>, shapes: &[Option<Shape>], slots: &[u64]) -> PyResult<()> {
    let mut pos = 0usize;
    let mut first_err = None;
    for s in shapes.iter().flatten() {
        release_arg(py, s, slots, &mut pos, &mut first_err);
    }
    first_err.map_or(Ok(()), Err)
}

/// [`release_args`] for one argument of shape `s` at `slots[*pos..]`, advancing `pos`.
fn release_arg(
    py: Python<'_>,
    s: &Shape,
    slots: &[u64],
    pos: &mut usize,
    first_err: &mut Option<PyErr>,
) {
    match s {
        Shape::List {
            item, reflected, ..
        }
        | Shape::Set {
            item, reflected, ..
        } => {
            let (mi, parent) = (slots[*pos] as *mut numba_nrt::MemInfo, slots[*pos + 1]);
            if *reflected && parent != 0 && !mi.is_null() {
                // SAFETY: the argument's parent is the caller's list or set.
                let par =
                    unsafe { Bound::from_borrowed_ptr(py, parent as *mut pyo3::ffi::PyObject) };
                let set = matches!(s, Shape::Set { .. });
                // SAFETY: the container the call was given.
                if let Err(e) = unsafe { reflect_into(py, set, mi, &par, item) } {
                    first_err.get_or_insert(e);
                }
            }
            // SAFETY: the argument's reference, made by `encode_list`/`encode_set`
            // (null for a `None` an optional slot stands for).
            unsafe { numba_nrt::NRT_decref(mi) };
            *pos += 2;
        }
        Shape::Tuple(items) | Shape::Named { items, .. } => {
            for x in items {
                release_arg(py, x, slots, pos, first_err);
            }
        }
        Shape::Optional(x) if holds_list(x) => {
            let present = slots[*pos] != 0;
            *pos += 1;
            if present {
                release_arg(py, x, slots, pos, first_err);
            } else {
                *pos += x.slots();
            }
        }
        _ => *pos += s.slots(),
    }
}

/// Whether a value of this shape holds a list or set made for the call.
fn holds_list(s: &Shape) -> bool {
    match s {
        Shape::List { .. } | Shape::Set { .. } => true,
        Shape::Tuple(items) | Shape::Named { items, .. } => items.iter().any(holds_list),
        Shape::Optional(x) => holds_list(x),
        _ => false,
    }
}

/// Whether any argument is a list or set, or a tuple holding one (to release after the
/// call).
pub fn has_list(shapes: &[Option<Shape>]) -> bool {
    shapes.iter().flatten().any(holds_list)
}

// ------------------------------------------------------------------------------- sets

/// The payload of a set's MemInfo.
///
/// # Safety
/// `mi` is a live set MemInfo.
unsafe fn set_payload<'a>(mi: *mut numba_nrt::MemInfo) -> &'a mut SetPayload {
    // SAFETY: the caller's contract.
    unsafe { &mut *(numba_nrt::NRT_MemInfo_data(mi) as *mut SetPayload) }
}

/// Append the slots of a native set made from the Python set `v` (as [`encode_list`]).
pub fn encode_set(
    v: &Bound<'_, PyAny>,
    item: &Shape,
    dtype: TypeId,
    out: &mut Slots,
) -> PyResult<()> {
    let s = v.cast::<PySet>().map_err(|_| {
        PyTypeError::new_err(format!(
            "can't unbox a set from {}",
            v.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let key = key_program(item)
        .ok_or_else(|| PyTypeError::new_err(format!("sets of {dtype} are not supported")))?;
    let key = interned_key_program(key);
    let refs = interned_ref_map(ref_map(item));
    // SAFETY: `key` and `refs` live for the process.
    let mi = unsafe { numba_rs_set_new((item.slots() * 8) as i64, key, refs) };
    if mi.is_null() {
        return Err(PyMemoryError::new_err("cannot allocate a set"));
    }
    let fill = || -> PyResult<()> {
        let mut tmp = Slots::new();
        for x in s.iter() {
            let t = crate::typeof_arg(&x)?;
            if t != dtype {
                return Err(PyTypeError::new_err(format!(
                    "can't unbox heterogeneous set: {dtype} != {t}"
                )));
            }
            tmp.clear();
            encode(&x, item, &mut tmp)?;
            // SAFETY: a live set; `tmp` holds one item of its type.
            if unsafe { numba_rs_set_add(set_payload(mi), tmp.as_ptr()) } < 0 {
                return Err(PyMemoryError::new_err("cannot grow a set"));
            }
        }
        // SAFETY: as above.
        unsafe { set_payload(mi).dirty = 0 };
        Ok(())
    };
    if let Err(e) = fill() {
        // SAFETY: the set owns what it holds.
        unsafe { numba_nrt::NRT_decref(mi) };
        return Err(e);
    }
    out.push(mi as u64);
    out.push(v.as_ptr() as u64);
    Ok(())
}

/// The items of a set, boxed, in table order.
///
/// # Safety
/// `mi` is a live set MemInfo of `item`-shaped items.
unsafe fn set_items(
    py: Python<'_>,
    mi: *mut numba_nrt::MemInfo,
    item: &Shape,
) -> PyResult<Vec<Py<PyAny>>> {
    // SAFETY: the caller's contract.
    unsafe {
        let p = set_payload(mi);
        let words = (p.item_bytes / 8) as usize;
        let mut pos = 0i64;
        let mut out = Vec::with_capacity(p.used as usize);
        loop {
            let at = numba_rs_set_next(p, &mut pos);
            if at.is_null() {
                break;
            }
            let slots: SmallVec<[u64; 8]> = std::slice::from_raw_parts(at, words).into();
            // Decoding consumes one reference per MemInfo: take them first.
            numba_lower::lists::item_refs(p.refs, at, numba_nrt::NRT_incref);
            out.push(decode(py, &slots, &mut 0, item)?);
        }
        Ok(out)
    }
}

/// Write a reflected set's changes back into its Python set.
///
/// # Safety
/// As [`set_items`].
unsafe fn reflect_set(
    py: Python<'_>,
    mi: *mut numba_nrt::MemInfo,
    parent: &Bound<'_, PySet>,
    item: &Shape,
) -> PyResult<()> {
    // SAFETY: the caller's contract.
    unsafe {
        if set_payload(mi).dirty == 0 {
            return Ok(());
        }
        let items = set_items(py, mi, item)?;
        parent.clear();
        for x in items {
            parent.add(x)?;
        }
        set_payload(mi).dirty = 0;
    }
    Ok(())
}

// ------------------------------------------------------------------------- both kinds

/// Write a reflected list's (`set` false) or set's changes back into `parent` when it is
/// a Python object of that kind; whether it was.
///
/// # Safety
/// `mi` is a live container MemInfo of that kind with `item`-shaped items.
unsafe fn reflect_into(
    py: Python<'_>,
    set: bool,
    mi: *mut numba_nrt::MemInfo,
    parent: &Bound<'_, PyAny>,
    item: &Shape,
) -> PyResult<bool> {
    // SAFETY: the caller's contract.
    unsafe {
        if set {
            if let Ok(s) = parent.cast::<PySet>() {
                reflect_set(py, mi, s, item)?;
                return Ok(true);
            }
        } else if let Ok(l) = parent.cast::<PyList>() {
            reflect(py, mi, l, item)?;
            return Ok(true);
        }
    }
    Ok(false)
}

/// Box a list (`set` false) or set result from its two slots, consuming the reference
/// it holds: its Python object when it is a reflected argument coming back (changes
/// written back), else a new Python list or set.
pub fn decode_container(
    py: Python<'_>,
    set: bool,
    mi: u64,
    parent: u64,
    item: &Shape,
) -> PyResult<Py<PyAny>> {
    let mi = mi as *mut numba_nrt::MemInfo;
    struct Release(*mut numba_nrt::MemInfo);
    impl Drop for Release {
        fn drop(&mut self) {
            // SAFETY: the result's own reference.
            unsafe { numba_nrt::NRT_decref(self.0) };
        }
    }
    let _release = Release(mi);
    if parent != 0 {
        // SAFETY: a reflected container's parent is an argument the caller still holds.
        let par = unsafe { Bound::from_borrowed_ptr(py, parent as *mut pyo3::ffi::PyObject) };
        // SAFETY: a live container MemInfo of this kind.
        if unsafe { reflect_into(py, set, mi, &par, item)? } {
            return Ok(par.unbind());
        }
    }
    // SAFETY: a live container MemInfo of this kind.
    unsafe {
        if set {
            let items = set_items(py, mi, item)?;
            Ok(PySet::new(py, items)?.into_any().unbind())
        } else {
            Ok(new_pylist(py, payload(mi), item)?.into_any().unbind())
        }
    }
}

/// Forget the Python containers a value's lists and sets were unboxed from (their
/// parents, at every depth), so nothing is reflected into them later: an object-mode
/// block's results outlive the Python objects they were made from.
pub(crate) fn detach(slots: &mut [u64], pos: &mut usize, shape: &Shape) {
    match shape {
        Shape::List { item, .. } => {
            let mi = slots[*pos] as *mut numba_nrt::MemInfo;
            slots[*pos + 1] = 0;
            *pos += 2;
            if !mi.is_null() && holds_containers(item) {
                // SAFETY: an unboxed list's MemInfo; each item is `item.slots()` words.
                unsafe {
                    let p = payload(mi);
                    let words = item.slots();
                    for i in 0..p.size.max(0) as usize {
                        let at = (p.data as *mut u64).add(i * words);
                        let item_slots = std::slice::from_raw_parts_mut(at, words);
                        detach(item_slots, &mut 0, item);
                    }
                }
            }
        }
        Shape::Set { .. } => {
            slots[*pos + 1] = 0;
            *pos += 2;
        }
        Shape::Tuple(items) | Shape::Named { items, .. } => {
            for s in items {
                detach(slots, pos, s);
            }
        }
        Shape::Optional(x) => {
            let present = slots[*pos] != 0;
            *pos += 1;
            if present {
                detach(slots, pos, x);
            } else {
                *pos += x.slots();
            }
        }
        other => *pos += other.slots(),
    }
}

/// Whether values of this shape hold lists or sets.
fn holds_containers(shape: &Shape) -> bool {
    match shape {
        Shape::List { .. } | Shape::Set { .. } => true,
        Shape::Tuple(items) | Shape::Named { items, .. } => items.iter().any(holds_containers),
        Shape::Optional(x) => holds_containers(x),
        _ => false,
    }
}
