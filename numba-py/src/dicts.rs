//! `numba_rs.typed.Dict`: a typed dict shared by reference between Python and compiled
//! code. The object owns one reference to the dict's MemInfo (numba-lower's `dicts`
//! payload); compiled code receives that MemInfo (no copy, no reflection) and a dict
//! compiled code returns becomes one of these around its MemInfo. The Python-side
//! methods call the payload's functions directly: keys and values are encoded with the
//! boundary codec into stack slots, never through a jitted dispatcher.
//!
//! Strings and arrays stored from Python are made to own their data first (a copy of a
//! `str`, a MemInfo holding a reference to the NumPy array), since the dict outlives the
//! Python objects they came from.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use numba_lower::callconv::release_slots;
use numba_lower::dicts::{self as rt, DictPayload};
use numba_lower::lists::{interned_ref_map, item_refs, ref_map};
use numba_lower::sets::{interned_key_program, key_program};
use numba_lower::Shape;
use numba_nrt::MemInfo;
use numba_typeinfer::types::TypeId;
use pyo3::exceptions::{PyKeyError, PyMemoryError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyTuple, PyType};

use crate::boxing::{decode, encode, Slots};

/// What the Python side needs to know of a dict type, computed once per type.
pub(crate) struct Layout {
    pub(crate) t: TypeId,
    kt: TypeId,
    vt: TypeId,
    key: Shape,
    value: Shape,
    key_prog: *const u8,
    key_refs: *const i32,
    value_refs: *const i32,
}

// SAFETY: the pointers are interned process-lifetime constants.
unsafe impl Send for Layout {}
unsafe impl Sync for Layout {}

static LAYOUTS: LazyLock<Mutex<HashMap<TypeId, Arc<Layout>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The layout of dicts of type `t` (`DictType[K,V]`).
pub(crate) fn layout(t: TypeId) -> PyResult<Arc<Layout>> {
    if let Some(l) = LAYOUTS.lock().unwrap_or_else(|e| e.into_inner()).get(&t) {
        return Ok(l.clone());
    }
    let Some((kt, vt)) = numba_typeinfer::dicts::dict_parts(t) else {
        return Err(PyTypeError::new_err(format!("{t} is not a dict type")));
    };
    if !numba_typeinfer::dicts::key_ok(kt) {
        return Err(crate::TypingError::new_err(format!(
            "{kt} as key is forbidden"
        )));
    }
    if !numba_typeinfer::dicts::value_ok(vt) {
        return Err(crate::TypingError::new_err(format!(
            "{vt} as value is forbidden"
        )));
    }
    let shape = |x: TypeId| {
        numba_lower::callconv::boundary_shape(x).map_err(|_| {
            crate::UnsupportedError::new_err(format!(
                "dicts of {x} are not supported by numba-rs yet"
            ))
        })
    };
    let (key, value) = (shape(kt)?, shape(vt)?);
    let prog = key_program(&key).ok_or_else(|| {
        crate::UnsupportedError::new_err(format!("{kt} keys are not supported by numba-rs yet"))
    })?;
    let l = Arc::new(Layout {
        t,
        kt,
        vt,
        key_prog: interned_key_program(prog),
        key_refs: interned_ref_map(ref_map(&key)),
        value_refs: interned_ref_map(ref_map(&value)),
        key,
        value,
    });
    LAYOUTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(t, l.clone());
    Ok(l)
}

/// The base class of `numba_rs.typed.Dict` (which adds the Python-level API): the
/// MemInfo, null until the dict is typed (an untyped `Dict()` is typed by its first
/// store, as Numba's).
#[pyclass(module = "numba_rs.typed", name = "_DictBase", subclass)]
pub struct TypedDict {
    mi: *mut MemInfo,
    layout: Option<Arc<Layout>>,
}

// SAFETY: a MemInfo's count is atomic and its payload is only touched with the GIL held.
unsafe impl Send for TypedDict {}
unsafe impl Sync for TypedDict {}

impl Drop for TypedDict {
    fn drop(&mut self) {
        // SAFETY: the object's own reference (or null).
        unsafe { numba_nrt::NRT_decref(self.mi) };
    }
}

/// The Python class `numba_rs.typed.<name>` (`Dict`, `List`), looked up once into
/// `cell`: what results of compiled code are wrapped in.
pub(crate) fn typed_class<'a>(
    py: Python<'_>,
    cell: &'a OnceLock<Py<PyType>>,
    name: &str,
) -> PyResult<&'a Py<PyType>> {
    if let Some(c) = cell.get() {
        return Ok(c);
    }
    let c = py
        .import("numba_rs.typed")?
        .getattr(name)?
        .cast_into::<PyType>()?
        .unbind();
    Ok(cell.get_or_init(|| c))
}

/// A MemInfo reference on its way into a typed container's object: released if the
/// object is never made.
pub(crate) struct OwnedMemInfo(pub(crate) *mut MemInfo);

impl OwnedMemInfo {
    /// The reference, handed over.
    pub(crate) fn take(&mut self) -> *mut MemInfo {
        std::mem::replace(&mut self.0, std::ptr::null_mut())
    }
}

impl Drop for OwnedMemInfo {
    fn drop(&mut self) {
        // SAFETY: a reference not handed over (or null).
        unsafe { numba_nrt::NRT_decref(self.0) };
    }
}

/// A `numba_rs.typed.Dict` owning `mi` (a reference the caller hands over).
pub(crate) fn wrap(py: Python<'_>, mi: *mut MemInfo, t: TypeId) -> PyResult<Py<PyAny>> {
    static CLASS: OnceLock<Py<PyType>> = OnceLock::new();
    let mut owned = OwnedMemInfo(mi);
    let l = layout(t)?;
    let obj = typed_class(py, &CLASS, "Dict")?.bind(py).call0()?;
    {
        let d = obj.cast::<TypedDict>()?;
        let mut d = d.borrow_mut();
        // The fresh object has no MemInfo of its own.
        d.mi = owned.take();
        d.layout = Some(l);
    }
    Ok(obj.unbind())
}

/// The slots compiled code receives for a `typed.Dict` argument of type `t`: its
/// MemInfo (borrowed for the call) and a null slot.
pub(crate) fn encode_arg(v: &Bound<'_, PyAny>, t: TypeId, out: &mut Slots) -> PyResult<()> {
    let d = v
        .cast::<TypedDict>()
        .map_err(|_| PyTypeError::new_err(format!("expected a typed.Dict of type {t}")))?;
    let d = d.borrow();
    match &d.layout {
        Some(l) if l.t == t => {}
        _ => {
            return Err(PyTypeError::new_err(format!(
                "expected a typed.Dict of type {t}, got {}",
                d.type_name()
            )))
        }
    }
    out.push(d.mi as u64);
    out.push(0);
    Ok(())
}

/// The type of a `typed.Dict` argument.
pub(crate) fn typeof_dict(v: &Bound<'_, PyAny>) -> Option<PyResult<TypeId>> {
    let d = v.cast::<TypedDict>().ok()?;
    let d = d.borrow();
    Some(match &d.layout {
        Some(l) => Ok(l.t),
        None => Err(crate::TypingError::new_err(
            "cannot pass an empty typed.Dict whose key and value types are not known yet: make it with Dict.empty(key_type=..., value_type=...) or store an item first",
        )),
    })
}

/// Make the references a value's slots hold its own (see the module doc), from `*pos`.
pub(crate) fn own(shape: &Shape, slots: &mut [u64], pos: &mut usize) -> PyResult<()> {
    match shape {
        Shape::Unicode | Shape::Bytes => {
            let n = shape.slots();
            // SAFETY: the slots hold a string encoded by the boundary codec.
            if unsafe { numba_lower::strings::own_slots(&mut slots[*pos..*pos + n]) } != 0 {
                return Err(PyMemoryError::new_err("cannot allocate a string"));
            }
            *pos += n;
        }
        Shape::Array(_) => {
            let (mi, parent) = (slots[*pos], slots[*pos + 1]);
            if mi != 0 {
                // SAFETY: a live MemInfo.
                unsafe { numba_nrt::NRT_incref(mi as *mut MemInfo) };
            } else {
                slots[*pos] = array_owner(parent as *mut pyo3::ffi::PyObject, slots[*pos + 4])?
                    as u64;
            }
            *pos += shape.slots();
        }
        Shape::Dict { .. } | Shape::Instance(_) => {
            // SAFETY: the argument dict's (jitclass object's) live MemInfo.
            unsafe { numba_nrt::NRT_incref(slots[*pos] as *mut MemInfo) };
            *pos += 2;
        }
        Shape::Tuple(items) | Shape::Named { items, .. } => {
            for i in items {
                own(i, slots, pos)?;
            }
        }
        Shape::Optional(inner) => {
            let flag = slots[*pos];
            *pos += 1;
            if flag & 1 == 1 {
                own(inner, slots, pos)?;
            } else {
                *pos += inner.slots();
            }
        }
        // A typed list: the object's MemInfo, with a reference of its own.
        // A typed list: `encode` already took a reference to its MemInfo.
        Shape::List { typed: true, .. } => *pos += 2,
        // A Python list: `encode` made a new native list (its reference is these slots');
        // it forgets the Python list (nothing is reflected into it later) and its items
        // are made to own what they borrow from Python, at every depth.
        Shape::List { item, .. } => {
            let mi = slots[*pos] as *mut MemInfo;
            slots[*pos + 1] = 0;
            *pos += 2;
            if !mi.is_null() {
                // SAFETY: a live list MemInfo whose items are `item`-shaped.
                unsafe {
                    let p = &*(numba_nrt::NRT_MemInfo_data(mi)
                        as *const numba_lower::lists::ListPayload);
                    let words = item.slots();
                    for i in 0..p.size.max(0) as usize {
                        let at = (p.data as *mut u64).add(i * words);
                        own(item, std::slice::from_raw_parts_mut(at, words), &mut 0)?;
                    }
                }
            }
        }
        // A Python set: as a list, its items made to own what they borrow (their
        // hashes and places are unchanged).
        Shape::Set { item, .. } => {
            let mi = slots[*pos] as *mut MemInfo;
            slots[*pos + 1] = 0;
            *pos += 2;
            if !mi.is_null() {
                // SAFETY: a live set MemInfo whose items are `item`-shaped; each item is
                // rewritten in place.
                unsafe {
                    let p = numba_nrt::NRT_MemInfo_data(mi) as *const numba_lower::sets::SetPayload;
                    let words = item.slots();
                    let mut at = 0i64;
                    loop {
                        let e = numba_lower::sets::numba_rs_set_next(p, &mut at) as *mut u64;
                        if e.is_null() {
                            break;
                        }
                        own(item, std::slice::from_raw_parts_mut(e, words), &mut 0)?;
                    }
                }
            }
        }
        Shape::Boxed { .. } | Shape::Generator(_) => {
            return Err(crate::UnsupportedError::new_err(
                "a typed container cannot hold objects of user types or generators stored from Python yet (store them from compiled code)",
            ))
        }
        _ => *pos += shape.slots(),
    }
    Ok(())
}

unsafe extern "C" fn release_pyobject(_data: *mut u8, _size: usize, info: *mut std::ffi::c_void) {
    Python::attach(|_py| {
        // SAFETY: the reference `array_owner` took.
        unsafe { pyo3::ffi::Py_DECREF(info as *mut pyo3::ffi::PyObject) };
    });
}

/// Whether `mi` is a MemInfo [`array_owner`] made for the NumPy array `parent` (an
/// argument array compiled code stored into a container): such an array crosses back
/// as the array itself, as a borrowed one does.
pub(crate) fn owns_parent(mi: *mut MemInfo, parent: *mut pyo3::ffi::PyObject) -> bool {
    // SAFETY: a live MemInfo.
    let m = unsafe { &*mi };
    m.dtor
        .is_some_and(|d| std::ptr::fn_addr_eq(d, release_pyobject as numba_nrt::Destructor))
        && m.dtor_info == parent.cast()
}

/// A MemInfo over an array's data that keeps the NumPy array alive.
/// The runtime's hook for a borrowed array stored into a container by compiled code: a
/// MemInfo owning a reference to the NumPy array (null on failure). Takes the GIL, which
/// a `nogil` function does not hold.
pub(crate) unsafe extern "C" fn adopt_hook(parent: *mut u8, data: *mut u8) -> *mut u8 {
    Python::attach(|_py| {
        array_owner(parent as *mut pyo3::ffi::PyObject, data as u64)
            .map(|mi| mi as *mut u8)
            .unwrap_or(std::ptr::null_mut())
    })
}

fn array_owner(obj: *mut pyo3::ffi::PyObject, data: u64) -> PyResult<*mut MemInfo> {
    // SAFETY: `obj` is the live array the slots were encoded from; the MemInfo holds a
    // reference until its destructor runs.
    unsafe {
        pyo3::ffi::Py_INCREF(obj);
        let mi = numba_nrt::NRT_MemInfo_new(
            data as *mut u8,
            0,
            Some(release_pyobject),
            obj as *mut std::ffi::c_void,
        );
        if mi.is_null() {
            pyo3::ffi::Py_DECREF(obj);
            return Err(PyMemoryError::new_err("cannot allocate a MemInfo"));
        }
        Ok(mi)
    }
}

/// Temporary owned slots of one key, value or item, released when dropped (after the
/// container took its own references).
pub(crate) struct OwnedSlots<'a> {
    pub(crate) slots: Slots,
    pub(crate) shape: &'a Shape,
}

impl<'a> OwnedSlots<'a> {
    /// `v` encoded as `shape` with every reference its own (see [`own`]).
    pub(crate) fn encode(v: &Bound<'_, PyAny>, shape: &'a Shape) -> PyResult<Self> {
        let mut s = OwnedSlots {
            slots: Slots::new(),
            shape,
        };
        encode(v, shape, &mut s.slots)?;
        own(shape, &mut s.slots, &mut 0)?;
        Ok(s)
    }

    /// Zeroed room for one value of `shape` (the runtime writes it; null references
    /// until then).
    pub(crate) fn room(shape: &'a Shape) -> Self {
        OwnedSlots {
            slots: Slots::from_elem(0, shape.slots().max(1)),
            shape,
        }
    }
}

impl Drop for OwnedSlots<'_> {
    fn drop(&mut self) {
        release_slots(self.shape, &self.slots, &mut 0);
    }
}

impl TypedDict {
    fn type_name(&self) -> String {
        self.layout
            .as_ref()
            .map(|l| l.t.to_string())
            .unwrap_or_else(|| "an untyped Dict".into())
    }

    /// The payload (the dict is typed).
    fn payload(&self) -> *mut DictPayload {
        // SAFETY: a live dict MemInfo.
        unsafe { numba_nrt::NRT_MemInfo_data(self.mi) as *mut DictPayload }
    }

    fn typed(&self) -> Option<&Arc<Layout>> {
        self.layout.as_ref().filter(|_| !self.mi.is_null())
    }

    /// Check that `v` (of Python type `t`) converts to `want` as Numba's typed dict
    /// converts it.
    fn check_cast(v: &Bound<'_, PyAny>, want: TypeId) -> PyResult<()> {
        if crate::fingerprint::scalar_typecode(v.as_ptr()) == Some(want) {
            return Ok(());
        }
        let t = crate::typeof_arg(v)?;
        let t = crate::lists::unreflected(numba_typeinfer::strings::held_text(t));
        if t == want {
            return Ok(());
        }
        numba_typeinfer::dicts::safe_cast(t, want).map_err(crate::TypingError::new_err)
    }

    /// A key's slots for a lookup (borrowed from the Python object).
    fn key_slots(l: &Layout, k: &Bound<'_, PyAny>) -> PyResult<Slots> {
        Self::check_cast(k, l.kt)?;
        let mut s = Slots::new();
        encode(k, &l.key, &mut s)?;
        Ok(s)
    }

    /// Type the dict from its first item's key and value (Numba's `typeof` of each).
    fn ensure_typed(&mut self, k: &Bound<'_, PyAny>, v: &Bound<'_, PyAny>) -> PyResult<()> {
        if self.typed().is_some() {
            return Ok(());
        }
        // A Python list or set stored in a typed container is a copy: not reflected.
        let kt = numba_typeinfer::strings::held_text(crate::typeof_arg(k)?);
        let vt =
            crate::lists::unreflected(numba_typeinfer::strings::held_text(crate::typeof_arg(v)?));
        self.init_type(numba_typeinfer::dicts::dict_of(kt, vt), 0)
    }

    fn init_type(&mut self, t: TypeId, n_keys: i64) -> PyResult<()> {
        let l = layout(t)?;
        // SAFETY: interned constants that live for the process.
        let mi = unsafe {
            rt::numba_rs_dict_new(
                l.key.slots() as i64,
                l.value.slots() as i64,
                l.key_prog,
                l.key_refs,
                l.value_refs,
                n_keys,
            )
        };
        if mi.is_null() {
            return Err(PyMemoryError::new_err("cannot allocate a dict"));
        }
        // SAFETY: the object's previous reference (null for an untyped dict).
        unsafe { numba_nrt::NRT_decref(self.mi) };
        self.mi = mi;
        self.layout = Some(l);
        Ok(())
    }

    /// Box the value at `at` (borrowed in the payload).
    fn box_value(py: Python<'_>, l: &Layout, at: *const u64) -> PyResult<Py<PyAny>> {
        Self::box_slots(py, &l.value, l.value_refs, at)
    }

    fn box_slots(
        py: Python<'_>,
        shape: &Shape,
        refs: *const i32,
        at: *const u64,
    ) -> PyResult<Py<PyAny>> {
        // SAFETY: `at` holds a value of `shape` in the live payload; decoding consumes
        // one reference per MemInfo, taken here.
        unsafe {
            item_refs(refs, at, numba_nrt::NRT_incref);
            let slots = std::slice::from_raw_parts(at, shape.slots());
            decode(py, slots, &mut 0, shape)
        }
    }

    fn store(&mut self, k: &Bound<'_, PyAny>, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.ensure_typed(k, v)?;
        let l = self.layout.clone().expect("typed above");
        Self::check_cast(k, l.kt)?;
        Self::check_cast(v, l.vt)?;
        let key = OwnedSlots::encode(k, &l.key)?;
        let value = OwnedSlots::encode(v, &l.value)?;
        // SAFETY: a live payload; slots of its key and value types.
        let r = unsafe {
            rt::numba_rs_dict_setitem(self.payload(), key.slots.as_ptr(), value.slots.as_ptr())
        };
        if r != 0 {
            return Err(PyMemoryError::new_err("cannot grow the dict"));
        }
        Ok(())
    }

    /// The entries' keys, values or pairs, boxed, in order.
    fn collect(&self, py: Python<'_>, kind: u8) -> PyResult<Vec<Py<PyAny>>> {
        let Some(l) = self.typed() else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        let mut pos = 0i64;
        loop {
            // SAFETY: a live payload; `pos` is the iteration cursor.
            let at = unsafe { rt::numba_rs_dict_next(self.payload(), &mut pos) };
            if at.is_null() {
                return Ok(out);
            }
            let k = || Self::box_slots(py, &l.key, l.key_refs, at);
            // SAFETY: the value follows the key's slots.
            let v = || Self::box_value(py, l, unsafe { at.add(l.key.slots()) });
            out.push(match kind {
                0 => k()?,
                1 => v()?,
                _ => PyTuple::new(py, [k()?, v()?])?.into_any().unbind(),
            });
        }
    }
}

#[pymethods]
impl TypedDict {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, pyo3::types::PyDict>>) -> Self {
        TypedDict {
            mi: std::ptr::null_mut(),
            layout: None,
        }
    }

    /// Type an untyped dict as `DictType[key_type,value_type]` with room for `n_keys`.
    fn _init_type(&mut self, key_type: u32, value_type: u32, n_keys: i64) -> PyResult<()> {
        let (kt, vt) = (TypeId(key_type), TypeId(value_type));
        self.init_type(numba_typeinfer::dicts::dict_of(kt, vt), n_keys)
    }

    /// The typecode of the dict's type, or None while untyped.
    #[getter]
    fn _typecode(&self) -> Option<u32> {
        self.typed().map(|l| l.t.0)
    }

    fn __len__(&self) -> usize {
        match self.typed() {
            // SAFETY: a live payload.
            Some(_) => unsafe { (*self.payload()).used as usize },
            None => 0,
        }
    }

    fn __getitem__(&self, py: Python<'_>, k: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let Some(l) = self.typed() else {
            return Err(PyKeyError::new_err(k.clone().unbind()));
        };
        let key = Self::key_slots(l, k)?;
        // SAFETY: a live payload; a key of its type.
        let at = unsafe { rt::numba_rs_dict_lookup(self.payload(), key.as_ptr()) };
        if at.is_null() {
            return Err(PyKeyError::new_err(k.clone().unbind()));
        }
        Self::box_value(py, l, at)
    }

    fn __setitem__(&mut self, k: &Bound<'_, PyAny>, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.store(k, v)
    }

    fn __delitem__(&mut self, k: &Bound<'_, PyAny>) -> PyResult<()> {
        let Some(l) = self.typed() else {
            return Err(PyKeyError::new_err(k.clone().unbind()));
        };
        let key = Self::key_slots(l, k)?;
        // SAFETY: a live payload; a key of its type.
        if unsafe { rt::numba_rs_dict_delitem(self.payload(), key.as_ptr()) } == 0 {
            return Err(PyKeyError::new_err(k.clone().unbind()));
        }
        Ok(())
    }

    fn __contains__(&self, k: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Some(l) = self.typed() else {
            return Ok(false);
        };
        // A key of a type the dict's keys do not convert from is not in it.
        let Ok(key) = Self::key_slots(l, k) else {
            return Ok(false);
        };
        // SAFETY: a live payload; a key of its type.
        Ok(!unsafe { rt::numba_rs_dict_lookup(self.payload(), key.as_ptr()) }.is_null())
    }

    /// `d.get(k, default)`.
    #[pyo3(signature = (k, default=None))]
    fn get(
        &self,
        py: Python<'_>,
        k: &Bound<'_, PyAny>,
        default: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let dflt = || {
            default
                .as_ref()
                .map(|d| d.clone().unbind())
                .unwrap_or_else(|| py.None())
        };
        let Some(l) = self.typed() else {
            return Ok(dflt());
        };
        let key = Self::key_slots(l, k)?;
        // SAFETY: a live payload; a key of its type.
        let at = unsafe { rt::numba_rs_dict_lookup(self.payload(), key.as_ptr()) };
        if at.is_null() {
            return Ok(dflt());
        }
        Self::box_value(py, l, at)
    }

    /// `d.pop(k[, default])`.
    #[pyo3(signature = (k, *default))]
    fn pop(
        &mut self,
        py: Python<'_>,
        k: &Bound<'_, PyAny>,
        default: &Bound<'_, PyTuple>,
    ) -> PyResult<Py<PyAny>> {
        let missing = || -> PyResult<Py<PyAny>> {
            match default.len() {
                0 => Err(PyKeyError::new_err(k.clone().unbind())),
                1 => Ok(default.get_item(0)?.unbind()),
                n => Err(PyTypeError::new_err(format!(
                    "pop expected at most 2 arguments, got {}",
                    n + 1
                ))),
            }
        };
        let Some(l) = self.typed().cloned() else {
            return missing();
        };
        let key = Self::key_slots(&l, k)?;
        let mut out = OwnedSlots::room(&l.value);
        // SAFETY: a live payload; a key of its type; room for a value.
        let found =
            unsafe { rt::numba_rs_dict_pop(self.payload(), key.as_ptr(), out.slots.as_mut_ptr()) };
        if found == 0 {
            out.slots.fill(0);
            return missing();
        }
        // `out` owns the value's references: box with one more, then drop them.
        Self::box_slots(py, &l.value, l.value_refs, out.slots.as_ptr())
    }

    /// `d.popitem()`: the last item inserted.
    fn popitem(&mut self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        // Numba's typed dict's words.
        let Some(l) = self.typed().cloned() else {
            return Err(PyKeyError::new_err("dictionary is empty"));
        };
        let mut k = OwnedSlots::room(&l.key);
        let mut v = OwnedSlots::room(&l.value);
        // SAFETY: a live payload; room for a key and a value.
        let found = unsafe {
            rt::numba_rs_dict_popitem(self.payload(), k.slots.as_mut_ptr(), v.slots.as_mut_ptr())
        };
        if found == 0 {
            k.slots.fill(0);
            v.slots.fill(0);
            return Err(PyKeyError::new_err("dictionary is empty"));
        }
        let key = Self::box_slots(py, &l.key, l.key_refs, k.slots.as_ptr())?;
        let value = Self::box_slots(py, &l.value, l.value_refs, v.slots.as_ptr())?;
        Ok(PyTuple::new(py, [key, value])?.into_any().unbind())
    }

    /// `d.setdefault(k, default)`.
    #[pyo3(signature = (k, default=None))]
    fn setdefault(
        &mut self,
        py: Python<'_>,
        k: &Bound<'_, PyAny>,
        default: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        if self.__contains__(k)? {
            return self.__getitem__(py, k);
        }
        let default = default.unwrap_or_else(|| py.None().into_bound(py));
        self.store(k, &default)?;
        Ok(default.unbind())
    }

    fn clear(&mut self) -> PyResult<()> {
        if self.typed().is_some() {
            // SAFETY: a live payload.
            if unsafe { rt::numba_rs_dict_clear(self.payload()) } != 0 {
                return Err(PyMemoryError::new_err("cannot allocate a dict"));
            }
        }
        Ok(())
    }

    /// A shallow copy (a new typed dict of the same type).
    fn _copy_into(&self, other: &Bound<'_, TypedDict>) -> PyResult<()> {
        let Some(l) = self.typed().cloned() else {
            return Ok(());
        };
        // SAFETY: a live payload.
        let mi = unsafe { rt::numba_rs_dict_copy(self.payload()) };
        if mi.is_null() {
            return Err(PyMemoryError::new_err("cannot allocate a dict"));
        }
        let mut o = other.borrow_mut();
        // SAFETY: the other object's previous reference.
        unsafe { numba_nrt::NRT_decref(o.mi) };
        o.mi = mi;
        o.layout = Some(l);
        Ok(())
    }

    fn keys_list(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        self.collect(py, 0)
    }

    fn values_list(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        self.collect(py, 1)
    }

    fn items_list(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        self.collect(py, 2)
    }

    /// Entry `i` of the payload's order as `(next position, key)` for iteration, or
    /// None at the end; the dict's size is checked by the Python iterator.
    fn _next_key(&self, py: Python<'_>, pos: i64) -> PyResult<Option<(i64, Py<PyAny>)>> {
        let Some(l) = self.typed() else {
            return Ok(None);
        };
        let mut p = pos;
        // SAFETY: a live payload; `p` the cursor.
        let at = unsafe { rt::numba_rs_dict_next(self.payload(), &mut p) };
        if at.is_null() {
            return Ok(None);
        }
        Ok(Some((p, Self::box_slots(py, &l.key, l.key_refs, at)?)))
    }

    /// The MemInfo's reference count (tests of sharing).
    fn _refcount(&self) -> usize {
        // SAFETY: a live MemInfo or null.
        unsafe { numba_nrt::NRT_MemInfo_refcount(self.mi) }
    }
}
