//! Jitclass instances from Python: `numba_rs._numba_rs._InstanceBase`, the base of the
//! proxy class `numba_rs.experimental.jitclass` makes for each class. A proxy owns one
//! reference to its instance's MemInfo (a one-item list payload holding the record of
//! the fields in their boundary slot form, `numba_lower::impls::jitclass`); compiled code
//! receives that MemInfo by reference and an instance compiled code returns becomes a
//! proxy of its class around it. Fields are read and written from Python with the
//! boundary codec straight on the record, never through a jitted function.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use numba_lower::callconv::Leaf;
use numba_lower::lists::{ref_map, ListPayload};
use numba_lower::Shape;
use numba_nrt::MemInfo;
use numba_typeinfer::jitclass::ClassKind;
use numba_typeinfer::types::{self, TypeId};
use pyo3::exceptions::{PyAttributeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyFloat, PyType};

use crate::boxing::decode;
use crate::dicts::OwnedSlots;

/// One field as Python reads it: its slot offset in the record and its shape.
#[derive(Clone)]
struct Field {
    at: usize,
    shape: Shape,
    /// Where its references are, relative to its first slot (`[count, (slot, flag)...]`).
    refs: Vec<i32>,
}

/// A class as Python sees it: its instance type, fields and proxy class (none yet for
/// a structref type whose boxing is not defined).
struct Class {
    t: TypeId,
    fields: Vec<Field>,
    proxy: Option<Py<PyType>>,
}

static CLASSES: LazyLock<Mutex<HashMap<TypeId, Arc<Class>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn class_of(t: TypeId) -> PyResult<Arc<Class>> {
    CLASSES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&t)
        .cloned()
        .ok_or_else(|| PyTypeError::new_err(format!("{t} is not a registered jitclass")))
}

/// `_jitclass_register(name, fields, proxy)`: register a class whose fields are
/// `[(name, typecode)]` and whose instances Python sees as `proxy` objects; the instance
/// type's typecode.
#[pyfunction]
#[pyo3(signature = (name, fields, proxy, key=None))]
pub(crate) fn _jitclass_register(
    name: &str,
    fields: Vec<(String, u32)>,
    proxy: Bound<'_, PyType>,
    key: Option<&str>,
) -> PyResult<u32> {
    register_class(
        name,
        key.unwrap_or(name),
        fields,
        Some(proxy),
        ClassKind::JitClass,
    )
}

/// `_structref_register(qualname, fields, proxy)`: register a structref type (a
/// `types.StructRef` subclass with these fields); `proxy`, the class its boxed values
/// take, may come later (`_class_set_proxy`).
#[pyfunction]
#[pyo3(signature = (name, fields, proxy=None, key=None))]
pub(crate) fn _structref_register(
    name: &str,
    fields: Vec<(String, u32)>,
    proxy: Option<Bound<'_, PyType>>,
    key: Option<&str>,
) -> PyResult<u32> {
    register_class(
        name,
        key.unwrap_or(name),
        fields,
        proxy,
        ClassKind::StructRef,
    )
}

fn check_proxy(proxy: &Bound<'_, PyType>) -> PyResult<()> {
    if !proxy.is_subclass_of::<InstanceBase>()? {
        return Err(PyTypeError::new_err(format!(
            "{} is not a proxy class: it must derive from numba_rs's StructRefProxy (or be a jitclass)",
            proxy.name().map(|n| n.to_string()).unwrap_or_default()
        )));
    }
    Ok(())
}

fn register_class(
    name: &str,
    key: &str,
    fields: Vec<(String, u32)>,
    proxy: Option<Bound<'_, PyType>>,
    kind: ClassKind,
) -> PyResult<u32> {
    if let Some(p) = &proxy {
        check_proxy(p)?;
    }
    let typed = typed_fields(fields)?;
    let laid = lay_out(&typed)?;
    let t = numba_typeinfer::jitclass::register_kind(name, key, typed, kind);
    CLASSES.lock().unwrap_or_else(|e| e.into_inner()).insert(
        t,
        Arc::new(Class {
            t,
            fields: laid,
            proxy: proxy.map(Bound::unbind),
        }),
    );
    Ok(t.0)
}

/// `_jitclass_set_constructor(typecode, dispatcher_id)`: the class object of a jitclass
/// is this dispatcher in compiled code (`isinstance(x, Cls)` tests for its instances).
#[pyfunction]
pub(crate) fn _jitclass_set_constructor(code: u32, id: u64) -> PyResult<()> {
    let t = class_of(TypeId(code))?.t;
    numba_typeinfer::jitclass::set_constructor(t, id);
    Ok(())
}

/// `_class_set_proxy(typecode, proxy)`: the class boxed values of a registered record
/// type take from now on (a structref's `define_boxing`).
#[pyfunction]
pub(crate) fn _class_set_proxy(code: u32, proxy: Bound<'_, PyType>) -> PyResult<()> {
    check_proxy(&proxy)?;
    let t = TypeId(code);
    let old = class_of(t)?;
    let fields = old.fields.clone();
    CLASSES.lock().unwrap_or_else(|e| e.into_inner()).insert(
        t,
        Arc::new(Class {
            t,
            fields,
            proxy: Some(proxy.unbind()),
        }),
    );
    Ok(())
}

/// `[(name, typecode)]` from Python as field types, each typecode checked.
fn typed_fields(fields: Vec<(String, u32)>) -> PyResult<Vec<(String, TypeId)>> {
    fields
        .into_iter()
        .map(|(n, c)| {
            if c as usize >= types::count() {
                Err(PyTypeError::new_err(format!(
                    "no type has the typecode {c}"
                )))
            } else {
                Ok((n, TypeId(c)))
            }
        })
        .collect()
}

fn lay_out(typed: &[(String, TypeId)]) -> PyResult<Vec<Field>> {
    let mut laid = Vec::with_capacity(typed.len());
    let mut at = 0usize;
    for (n, t) in typed {
        let shape = numba_lower::callconv::boundary_shape(*t).map_err(|_| {
            crate::TypingError::new_err(format!(
                "jitclass field '{n}' of type {t}: values of this type cannot be stored in a jitclass by numba-rs yet"
            ))
        })?;
        let refs = ref_map(&shape);
        let n_slots = shape.slots();
        laid.push(Field { at, shape, refs });
        at += n_slots;
    }
    Ok(laid)
}

/// `_jitclass_set_fields(typecode, fields)`: the fields of a class registered before its
/// deferred field types were defined (none of its instances exist yet).
#[pyfunction]
pub(crate) fn _jitclass_set_fields(
    py: Python<'_>,
    code: u32,
    fields: Vec<(String, u32)>,
) -> PyResult<()> {
    let t = TypeId(code);
    let old = class_of(t)?;
    let typed = typed_fields(fields)?;
    // Registered first: the layout of a field of the class's own type needs the class.
    numba_typeinfer::jitclass::set_fields(t, typed.clone());
    let laid = lay_out(&typed)?;
    CLASSES.lock().unwrap_or_else(|e| e.into_inner()).insert(
        t,
        Arc::new(Class {
            t,
            fields: laid,
            proxy: old.proxy.as_ref().map(|p| p.clone_ref(py)),
        }),
    );
    Ok(())
}

/// The base class of jitclass proxies. Frozen: its instance is set once, when the proxy
/// is made around it (`wrap`), so reads need no borrow checks.
#[pyclass(
    module = "numba_rs._numba_rs",
    name = "_InstanceBase",
    subclass,
    frozen
)]
pub struct InstanceBase {
    held: OnceLock<Held>,
}

/// The class and one reference to the instance's MemInfo.
struct Held {
    class: Arc<Class>,
    mi: *mut MemInfo,
}

// SAFETY: a MemInfo's count is atomic and its payload is only touched with the GIL held.
unsafe impl Send for Held {}
unsafe impl Sync for Held {}

impl Drop for Held {
    fn drop(&mut self) {
        // SAFETY: the proxy's own reference.
        unsafe { numba_nrt::NRT_decref(self.mi) };
    }
}

impl InstanceBase {
    fn held(&self) -> PyResult<&Held> {
        self.held.get().ok_or_else(|| {
            PyTypeError::new_err("this jitclass object was not made by its class's constructor")
        })
    }

    fn class(&self) -> PyResult<&Arc<Class>> {
        self.held().map(|h| &h.class)
    }

    /// The record's slots, from field `f` on.
    ///
    /// # Safety
    /// `h` is this proxy's and its record holds `f`.
    unsafe fn field_slots(h: &Held, f: &Field) -> *mut u64 {
        // SAFETY: the caller's contract: a live one-item list payload.
        unsafe {
            let p = numba_nrt::NRT_MemInfo_data(h.mi) as *const ListPayload;
            ((*p).data as *mut u64).add(f.at)
        }
    }

    /// Field `i` as a Python object.
    fn get_field(&self, py: Python<'_>, i: usize) -> PyResult<Py<PyAny>> {
        let h = self.held()?;
        let f = h
            .class
            .fields
            .get(i)
            .ok_or_else(|| PyAttributeError::new_err(format!("no field {i}")))?;
        // SAFETY: the proxy's live record holds field `i`.
        unsafe {
            let p = Self::field_slots(h, f);
            // Scalars, the common case, straight from their slot.
            match &f.shape {
                Shape::Leaf(Leaf::Float, _) => {
                    return Ok(PyFloat::new(py, f64::from_bits(*p)).into_any().unbind())
                }
                Shape::Leaf(
                    Leaf::Int {
                        bits: 64,
                        signed: true,
                    },
                    _,
                ) => return Ok((*p as i64).into_pyobject(py)?.into_any().unbind()),
                _ => {}
            }
            let slots = std::slice::from_raw_parts(p, f.shape.slots());
            acquire(&f.refs, p);
            decode(py, slots, &mut 0, &f.shape)
        }
    }
}

/// Take a reference for each MemInfo a field's slots hold (decoding consumes them).
///
/// # Safety
/// `slots` holds a value laid out as the map says.
unsafe fn acquire(refs: &[i32], slots: *const u64) {
    let n = refs.first().copied().unwrap_or(0) as usize;
    for k in 0..n {
        let (slot, flag) = (refs[1 + 2 * k], refs[2 + 2 * k]);
        // SAFETY: the caller's contract.
        unsafe {
            if flag < 0 || *slots.add(flag as usize) & 1 == 1 {
                numba_nrt::NRT_incref(*slots.add(slot as usize) as *mut MemInfo);
            }
        }
    }
}

#[pymethods]
impl InstanceBase {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(
        _args: &Bound<'_, pyo3::types::PyTuple>,
        _kwargs: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> Self {
        InstanceBase {
            held: OnceLock::new(),
        }
    }

    /// The typecode of this object's instance type.
    fn _numba_rs_typecode(&self) -> PyResult<u32> {
        Ok(self.class()?.t.0)
    }

    /// Field `i` as a Python object.
    fn _get(&self, py: Python<'_>, i: usize) -> PyResult<Py<PyAny>> {
        self.get_field(py, i)
    }

    /// Store `value` into field `i` (converted as an argument of the field's type is; the
    /// record owns what it holds).
    fn _set(&self, i: usize, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let h = self.held()?;
        let f = h
            .class
            .fields
            .get(i)
            .ok_or_else(|| PyAttributeError::new_err(format!("no field {i}")))?;
        // SAFETY: the proxy's live record holds field `i`.
        let p = unsafe { Self::field_slots(h, f) };
        if let Shape::Leaf(Leaf::Float, _) = &f.shape {
            // A float field holds no reference: overwrite its slot.
            let x: f64 = value.extract()?;
            // SAFETY: as above.
            unsafe { *p = x.to_bits() };
            return Ok(());
        }
        let mut new = OwnedSlots::encode(value, &f.shape)?;
        let n = f.shape.slots();
        // SAFETY: the proxy's live record holds field `i`; the old value's references
        // are the record's, released (by `old`'s drop) once replaced.
        let old = unsafe {
            let old = OwnedSlots {
                slots: std::slice::from_raw_parts(p, n).iter().copied().collect(),
                shape: &f.shape,
            };
            std::ptr::copy_nonoverlapping(new.slots.as_ptr(), p, n);
            old
        };
        // The record owns the new references now: `new` releases nothing.
        new.slots.iter_mut().for_each(|w| *w = 0);
        drop(old);
        Ok(())
    }
}

/// A proxy around `mi` (whose reference it takes) of instance type `t`.
pub(crate) fn wrap(py: Python<'_>, mi: *mut MemInfo, t: TypeId) -> PyResult<Py<PyAny>> {
    let class = match class_of(t) {
        Ok(c) => c,
        Err(e) => {
            // SAFETY: the reference handed over.
            unsafe { numba_nrt::NRT_decref(mi) };
            return Err(e);
        }
    };
    let Some(proxy) = &class.proxy else {
        // SAFETY: as above.
        unsafe { numba_nrt::NRT_decref(mi) };
        return Err(PyTypeError::new_err(format!(
            "cannot convert native {t} to Python object: no boxing is defined for it (structref.define_boxing)"
        )));
    };
    // The base's `__new__`: the proxy class's own `__new__` constructs through the
    // jitted constructor.
    let base = py.get_type::<InstanceBase>();
    let obj = match base.call_method1("__new__", (proxy.bind(py),)) {
        Ok(o) => o,
        Err(e) => {
            // SAFETY: as above.
            unsafe { numba_nrt::NRT_decref(mi) };
            return Err(e);
        }
    };
    let inst = obj.cast::<InstanceBase>()?;
    if let Err(Held { mi, .. }) = inst.get().held.set(Held { class, mi }) {
        // Unreachable: the object was just made. Keep the count right regardless.
        // SAFETY: the reference handed over.
        unsafe { numba_nrt::NRT_decref(mi) };
    }
    Ok(obj.unbind())
}

/// The instance type of a proxy object, if `v` is one.
pub(crate) fn typeof_instance(v: &Bound<'_, PyAny>) -> Option<PyResult<TypeId>> {
    let inst = v.cast::<InstanceBase>().ok()?;
    Some(inst.get().class().map(|c| c.t))
}

/// Encode a proxy as an argument: its MemInfo (borrowed for the call) and a null slot.
pub(crate) fn encode_arg(
    v: &Bound<'_, PyAny>,
    t: TypeId,
    out: &mut crate::boxing::Slots,
) -> PyResult<()> {
    let inst = v.cast::<InstanceBase>().map_err(|_| {
        PyTypeError::new_err(format!(
            "can't unbox a {t} from {}",
            v.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let h = inst.get().held()?;
    let c = &h.class;
    if c.t != t {
        return Err(PyTypeError::new_err(format!(
            "can't unbox a {t} from an instance of {}",
            c.t
        )));
    }
    out.push(h.mi as u64);
    // SAFETY: the proxy's live one-item payload: the record's address (the value's
    // second word, `numba_lower::impls::jitclass::RECORD`).
    out.push(unsafe { (*(numba_nrt::NRT_MemInfo_data(h.mi) as *const ListPayload)).data } as u64);
    Ok(())
}

/// A field of a jitclass proxy class (`Cls.x`): a data descriptor reading and writing the
/// record directly, one native call per access.
#[pyclass(module = "numba_rs._numba_rs", name = "_Field", frozen)]
pub struct FieldDescriptor {
    index: usize,
    #[pyo3(get)]
    __doc__: Option<String>,
}

#[pymethods]
impl FieldDescriptor {
    #[new]
    #[pyo3(signature = (index, doc=None))]
    fn new(index: usize, doc: Option<String>) -> Self {
        FieldDescriptor {
            index,
            __doc__: doc,
        }
    }

    fn __get__(
        slf: &Bound<'_, Self>,
        obj: Option<&Bound<'_, PyAny>>,
        _owner: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let Some(obj) = obj.filter(|o| !o.is_none()) else {
            return Ok(slf.clone().into_any().unbind());
        };
        let inst = obj.cast::<InstanceBase>()?;
        inst.get().get_field(py, slf.get().index)
    }

    fn __set__(&self, obj: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let inst = obj.cast::<InstanceBase>()?;
        inst.get()._set(self.index, value)
    }
}
