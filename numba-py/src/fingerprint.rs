//! Typing arguments on the call path (seed 003's typecode resolution; numba-facts §4.2–4.4,
//! Numba's `typeof_typecode` and `compute_fingerprint` in `_typeof.cpp`).
//!
//! [`typeof_arg`] tries, in order:
//! 1. exact-type fast paths: `int`, `bool`, `float`, `complex`, `str`, `None`, NumPy scalars
//!    of the basic dtypes (a table of their classes), and native-byte-order `ndarray`s of
//!    those dtypes, read from the array's C struct and typed through a small table keyed
//!    by (dtype, ndim, layout, writeable);
//! 2. for everything it can describe (tuples, nested and named, and the values above
//!    inside them), a fingerprint byte string looked up in a fingerprint → typecode
//!    cache; a miss runs the slow typeof once and stores the result;
//! 3. otherwise the slow typeof, on every call (as Numba does for values without a
//!    fingerprint).
//!
//! Fingerprint bytes follow Numba's format where both describe a value (`i`, `f`, `c`,
//! `?`, `n`, `(`…`)`, `S`+typenum, `A`+ndim+layout+`W`/`R`+typenum). Ours differ for a
//! named tuple, which is `N` + its class's address + the items: the class decides the
//! type (its module, name and fields), and the classes are kept alive once cached so an
//! address cannot be reused by another class. `str` is `s`.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use std::sync::Mutex;

use numba_typeinfer::types::{self, Layout, TypeId};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyList, PyTuple};
use smallvec::SmallVec;

/// A fingerprint; short ones stay on the stack.
pub type Fingerprint = SmallVec<[u8; 32]>;

/// Numba's fingerprint hash (`_hashtable.cpp`: the Python 2 string hash), as a [`Hasher`].
#[derive(Default)]
pub struct FingerprintHasher {
    x: u64,
    started: bool,
}

impl Hasher for FingerprintHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if !self.started {
                self.x = u64::from(b) << 7;
                self.started = true;
            }
            self.x = self.x.wrapping_mul(1_000_003) ^ u64::from(b);
        }
    }

    fn write_usize(&mut self, len: usize) {
        // The slice's length prefix: folded in as Numba folds in the length.
        self.x ^= len as u64;
    }

    fn finish(&self) -> u64 {
        self.x
    }
}

type FingerprintMap = HashMap<Fingerprint, TypeId, BuildHasherDefault<FingerprintHasher>>;

/// Fingerprint → typecode, filled by the slow typeof once per fingerprint. Calls read the
/// published map without a lock; a miss copies it with the new entry under `WRITER` and
/// publishes the copy. Readers and the writer all hold the GIL (they hold a `Bound`) and
/// a reader drops its reference before it could release the GIL, so the map replaced
/// can be freed at once: only the current map is kept (in `WRITER`).
static FINGERPRINTS: AtomicPtr<FingerprintMap> = AtomicPtr::new(std::ptr::null_mut());
static WRITER: Mutex<Option<Box<FingerprintMap>>> = Mutex::new(None);

/// The published fingerprint map, borrowed while `_py` holds the GIL.
fn fingerprints<'py>(_py: Python<'py>) -> Option<&'py FingerprintMap> {
    let p = FINGERPRINTS.load(Ordering::Acquire);
    // SAFETY: the map is owned by WRITER and is replaced (and freed) only by a thread
    // holding the GIL, which this caller holds for as long as the reference lives.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// Publish a map with `fp -> t` added (with the GIL held, as `py` shows).
fn insert_fingerprint(py: Python<'_>, fp: Fingerprint, t: TypeId) {
    let mut current = WRITER.lock().unwrap_or_else(|e| e.into_inner());
    let mut next = Box::new(fingerprints(py).cloned().unwrap_or_default());
    next.insert(fp, t);
    let p = &*next as *const FingerprintMap as *mut FingerprintMap;
    FINGERPRINTS.store(p, Ordering::Release);
    *current = Some(next);
}

/// Classes whose address is part of a cached fingerprint, kept alive (Numba leaks the
/// type objects of its fingerprint table for the same reason).
static PINNED: Mutex<Vec<Py<PyAny>>> = Mutex::new(Vec::new());

/// Array types by (ndim, layout, writeable, typenum) for 1 to [`ARRAY_NDIM`]
/// dimensions, 0 until first seen: read without a lock (Numba's `cached_arycode`).
static ARRAY_TYPES: [AtomicU32; ARRAY_NDIM * 3 * 2 * TYPENUMS] =
    [const { AtomicU32::new(0) }; ARRAY_NDIM * 3 * 2 * TYPENUMS];

/// Arrays of more dimensions are interned on every call.
const ARRAY_NDIM: usize = 8;

/// NumPy's typenums below this are the basic dtypes (`NPY_OBJECT`); `NPY_HALF` is 23.
const TYPENUMS: usize = 24;

/// NumPy's classes, read once NumPy has been imported.
struct NumpyTypes {
    ndarray: usize,
    /// Exact scalar classes of the basic dtypes: (class address, typenum, type).
    scalars: Vec<(usize, u8, TypeId)>,
    /// Element type by typenum.
    dtypes: [Option<TypeId>; TYPENUMS],
}

static NUMPY: PyOnceLock<NumpyTypes> = PyOnceLock::new();

/// NumPy's tables, or None while NumPy has not been imported (then no NumPy value can be
/// an argument, and importing it here would slow down the first call).
fn numpy(py: Python<'_>) -> Option<&'static NumpyTypes> {
    if let Some(n) = NUMPY.get(py) {
        return Some(n);
    }
    // `sys.modules` read through the C API: this runs on every call that misses the
    // fast paths until NumPy is imported.
    let name = pyo3::intern!(py, "numpy");
    // SAFETY: with the GIL held, the modules dict is a borrowed reference and
    // PyDict_GetItem returns a borrowed reference (or null) without raising.
    let np = unsafe {
        let modules = ffi::PyImport_GetModuleDict();
        let m = ffi::PyDict_GetItem(modules, name.as_ptr());
        Borrowed::from_ptr_or_opt(py, m)?.to_owned()
    };
    NUMPY.get_or_try_init(py, || load_numpy(&np)).ok()
}

fn load_numpy(np: &Bound<'_, PyAny>) -> PyResult<NumpyTypes> {
    let ndarray = np.getattr("ndarray")?.as_ptr() as usize;
    let dtype = np.getattr("dtype")?;
    let mut scalars = Vec::new();
    let mut dtypes = [None; TYPENUMS];
    // Not `e` (float16): numba-rs rejects it, on the slow path.
    for code in "?bBhHiIlLqQfdgFDG".chars() {
        let d = dtype.call1((code.to_string(),))?;
        let num: usize = d.getattr("num")?.extract()?;
        let name: String = d.getattr("name")?.extract()?;
        let Some(ty) = types::from_name(&name).filter(|t| t.is_scalar()) else {
            continue;
        };
        if num >= TYPENUMS {
            continue;
        }
        dtypes[num] = Some(ty);
        // The class stays alive with the numpy module.
        let cls = d.getattr("type")?.as_ptr() as usize;
        scalars.push((cls, num as u8, ty));
    }
    Ok(NumpyTypes {
        ndarray,
        scalars,
        dtypes,
    })
}

/// What the array fast path reads from an `ndarray`.
struct ArrayInfo {
    typenum: u8,
    ndim: u32,
    layout: Layout,
    writeable: bool,
}

use crate::ndarray::{
    RawArray, NPY_ARRAY_C_CONTIGUOUS, NPY_ARRAY_F_CONTIGUOUS, NPY_ARRAY_WRITEABLE,
};

/// The fields of an exact `ndarray` of a basic, native-order dtype; None for others.
fn array_info(np: &NumpyTypes, v: &Bound<'_, PyAny>) -> Option<ArrayInfo> {
    let p = v.as_ptr();
    // SAFETY: `p` is a live object; its type pointer is always readable.
    if unsafe { ffi::Py_TYPE(p) } as usize != np.ndarray {
        return None;
    }
    // SAFETY: the object's type is exactly numpy.ndarray, so it is a PyArrayObject whose
    // descr is a live PyArray_Descr.
    let (nd, flags, byteorder, type_num) = unsafe {
        let a = &*(p as *const RawArray);
        let d = &*a.descr;
        (a.nd, a.flags, d.byteorder, d.type_num)
    };
    if byteorder == b'>' || !(0..TYPENUMS as i32).contains(&type_num) {
        return None;
    }
    np.dtypes[type_num as usize]?;
    let layout = if flags & NPY_ARRAY_C_CONTIGUOUS != 0 {
        Layout::C
    } else if flags & NPY_ARRAY_F_CONTIGUOUS != 0 {
        Layout::F
    } else {
        Layout::A
    };
    Some(ArrayInfo {
        typenum: type_num as u8,
        ndim: u32::try_from(nd).ok()?,
        layout,
        writeable: flags & NPY_ARRAY_WRITEABLE != 0,
    })
}

fn layout_char(l: Layout) -> u8 {
    match l {
        Layout::C => b'C',
        Layout::F => b'F',
        Layout::A => b'A',
    }
}

/// The type of an array the fast path read, through [`ARRAY_TYPES`].
fn array_type(np: &NumpyTypes, a: &ArrayInfo) -> Option<TypeId> {
    let layout = match a.layout {
        Layout::C => 0,
        Layout::F => 1,
        Layout::A => 2,
    };
    let slot = (a.ndim as usize)
        .checked_sub(1)
        .filter(|&d| d < ARRAY_NDIM)
        .map(|d| ((d * 3 + layout) * 2 + usize::from(a.writeable)) * TYPENUMS + a.typenum as usize)
        .map(|i| &ARRAY_TYPES[i]);
    if let Some(code) = slot.map(|s| s.load(Ordering::Relaxed)).filter(|&c| c != 0) {
        return Some(TypeId(code));
    }
    let t = types::intern(types::Type::Array {
        dtype: np.dtypes[a.typenum as usize]?,
        ndim: a.ndim,
        layout: a.layout,
        readonly: !a.writeable,
    });
    if let Some(s) = slot {
        s.store(t.0, Ordering::Relaxed);
    }
    Some(t)
}

fn numpy_scalar(np: &NumpyTypes, v: &Bound<'_, PyAny>) -> Option<(u8, TypeId)> {
    // SAFETY: `v` is a live object.
    let cls = unsafe { ffi::Py_TYPE(v.as_ptr()) } as usize;
    np.scalars
        .iter()
        .find(|(c, _, _)| *c == cls)
        .map(|&(_, num, ty)| (num, ty))
}

/// The typecode of an exact `int`, `float` or `bool` (seed 003's first fast paths).
#[inline]
pub fn scalar_typecode(p: *mut ffi::PyObject) -> Option<TypeId> {
    // SAFETY: `p` is a live object; taking the address of a static type is safe.
    let t = unsafe { ffi::Py_TYPE(p) };
    if t == std::ptr::addr_of_mut!(ffi::PyLong_Type) {
        // Numba's `typeof` of an int: int64, or uint64 from 2**63 up to 2**64 - 1;
        // beyond that the slow typeof raises its error. Two 30-bit digits or fewer
        // (CPython 3.11's `ob_size`) is an int64 without converting: the call path
        // converts it once, when encoding.
        // SAFETY: an exact int is a PyVarObject.
        let digits = unsafe { (*(p as *mut ffi::PyVarObject)).ob_size }.abs();
        if digits <= 2 {
            return Some(types::INT64);
        }
        let mut overflow = 0;
        // SAFETY: an exact int: the conversion cannot fail other than by overflow.
        unsafe { ffi::PyLong_AsLongLongAndOverflow(p, &mut overflow) };
        if overflow == 0 {
            return Some(types::INT64);
        }
        if overflow > 0 {
            // SAFETY: as above; an error here is cleared.
            let u = unsafe { ffi::PyLong_AsUnsignedLongLong(p) };
            if u == u64::MAX && unsafe { !ffi::PyErr_Occurred().is_null() } {
                unsafe { ffi::PyErr_Clear() };
                return None;
            }
            return Some(types::UINT64);
        }
        None
    } else if t == std::ptr::addr_of_mut!(ffi::PyFloat_Type) {
        Some(types::FLOAT64)
    } else if t == std::ptr::addr_of_mut!(ffi::PyBool_Type) {
        Some(types::BOOLEAN)
    } else {
        None
    }
}

/// Step 1: the type of `v` from its exact type alone, without any cache.
pub fn fast_type(v: &Bound<'_, PyAny>) -> Option<TypeId> {
    if let Some(t) = scalar_typecode(v.as_ptr()) {
        return Some(t);
    }
    let py = v.py();
    // SAFETY: `v` is a live object.
    let ty = unsafe { ffi::Py_TYPE(v.as_ptr()) };
    // Taking the address of an extern static is safe.
    if ty == std::ptr::addr_of_mut!(ffi::PyComplex_Type) {
        return Some(types::COMPLEX128);
    }
    if ty == std::ptr::addr_of_mut!(ffi::PyUnicode_Type) {
        return Some(types::UNICODE);
    }
    if v.is_none() {
        return Some(types::NONE);
    }
    let np = NUMPY.get(py)?;
    if ty as usize == np.ndarray {
        return array_info(np, v).and_then(|a| array_type(np, &a));
    }
    numpy_scalar(np, v).map(|(_, t)| t)
}

/// Append `v`'s fingerprint to `out`; false when `v` has none (then `out` holds junk).
pub fn fingerprint(v: &Bound<'_, PyAny>, out: &mut Fingerprint) -> bool {
    let py = v.py();
    let p = v.as_ptr();
    // SAFETY: `p` is a live object.
    let ty = unsafe { ffi::Py_TYPE(p) };
    let (is_int, is_float, is_bool, is_complex, is_str, is_tuple) = {
        (
            ty == std::ptr::addr_of_mut!(ffi::PyLong_Type),
            ty == std::ptr::addr_of_mut!(ffi::PyFloat_Type),
            ty == std::ptr::addr_of_mut!(ffi::PyBool_Type),
            ty == std::ptr::addr_of_mut!(ffi::PyComplex_Type),
            ty == std::ptr::addr_of_mut!(ffi::PyUnicode_Type),
            ty == std::ptr::addr_of_mut!(ffi::PyTuple_Type),
        )
    };
    if v.is_none() {
        out.push(b'n');
    } else if is_bool {
        out.push(b'?');
    } else if is_int {
        out.push(b'i');
    } else if is_float {
        out.push(b'f');
    } else if is_complex {
        out.push(b'c');
    } else if is_str {
        out.push(b's');
    } else if let Ok(t) = v.cast::<PyTuple>() {
        if is_tuple {
            out.push(b'(');
        } else {
            // A tuple subclass (a namedtuple; the slow typeof checks it is one).
            out.push(b'N');
            out.extend_from_slice(&(ty as usize).to_le_bytes());
            out.push(b'(');
        }
        for item in t.iter_borrowed() {
            if !fingerprint(&item, out) {
                return false;
            }
        }
        out.push(b')');
    } else if ty == std::ptr::addr_of_mut!(ffi::PyBytes_Type) {
        out.push(b'b');
    } else if ty == std::ptr::addr_of_mut!(ffi::PyByteArray_Type) {
        out.push(b'a');
    } else if let Some(np) = NUMPY
        .get(py)
        .filter(|np| numpy_scalar(np, v).is_some() || array_info(np, v).is_some())
    {
        if let Some((num, _)) = numpy_scalar(np, v) {
            out.push(b'S');
            out.push(num);
        } else if let Some(a) = array_info(np, v) {
            out.push(b'A');
            out.extend_from_slice(&(a.ndim as i32).to_le_bytes());
            out.push(layout_char(a.layout));
            out.push(if a.writeable { b'W' } else { b'R' });
            out.push(a.typenum);
        }
    } else if NUMPY.get(py).is_some() && record_fingerprint(v, out) {
        // A structured array or record scalar: its class and dtype object (pinned).
    } else if NUMPY.get(py).is_some() && crate::ndarray::raw(v).is_some() {
        // Arrays of other dtypes or byte orders: typed (and rejected) by the slow path.
        return false;
    } else if let Ok(l) = v.cast::<PyList>() {
        // A list is typed by its first item (an empty one has no fingerprint).
        out.push(b'[');
        let Ok(first) = l.get_item(0) else {
            return false;
        };
        return fingerprint(&first, out);
    } else if ty == std::ptr::addr_of_mut!(ffi::PySet_Type) {
        out.push(b'{');
        let Some(Ok(item)) = v.try_iter().ok().and_then(|mut it| it.next()) else {
            return false;
        };
        return fingerprint(&item, out);
    } else if let Some(num) = dtype_typenum(v) {
        out.push(b'D');
        out.push(num);
    } else if let Some(unit) = datetime_scalar_dtype(v) {
        // `np.datetime64` / `np.timedelta64`: typed by their dtype, unit included (their
        // buffer's format does not say the unit).
        out.push(b'M');
        out.extend_from_slice(unit.as_bytes());
        out.push(0);
    } else if crate::npgen::is_generator(v) {
        // A numpy.random.Generator: one type, whatever its bit generator.
        out.push(b'G');
    } else if let Some(code) = crate::typed_container_code(v) {
        // A typed.Dict / typed.List: its type is its typecode (an untyped one has none).
        out.push(b'T');
        out.extend_from_slice(&code.to_le_bytes());
    } else if !buffer_fingerprint(v, out) {
        return false;
    }
    true
}

/// The dtype string (`<M8[D]`) of a `np.datetime64` / `np.timedelta64` scalar.
fn datetime_scalar_dtype(v: &Bound<'_, PyAny>) -> Option<String> {
    let ty = v.get_type();
    let name = ty.name().ok()?;
    if name != "datetime64" && name != "timedelta64" {
        return None;
    }
    if !ty
        .module()
        .is_ok_and(|m| m.to_str().is_ok_and(|m| m == "numpy"))
    {
        return None;
    }
    v.getattr("dtype").ok()?.getattr("str").ok()?.extract().ok()
}

/// The typenum of a NumPy dtype object of a basic, native-order dtype.
fn dtype_typenum(v: &Bound<'_, PyAny>) -> Option<u8> {
    let np = NUMPY.get(v.py())?;
    // SAFETY: NumPy is imported (its tables are loaded); a dtype object is a
    // PyArray_Descr.
    unsafe {
        let t = numpy::npyffi::get_type_object(v.py(), numpy::npyffi::NpyTypes::PyArrayDescr_Type);
        if ffi::PyObject_TypeCheck(v.as_ptr(), t) == 0 {
            return None;
        }
        let d = &*(v.as_ptr() as *const crate::ndarray::RawDescr);
        if d.byteorder == b'>' || !(0..TYPENUMS as i32).contains(&d.type_num) {
            return None;
        }
        np.dtypes[d.type_num as usize]?;
        Some(d.type_num as u8)
    }
}

/// Numba's fingerprint of an object exporting the buffer protocol (`memoryview`,
/// `array.array`, ...): `B`, ndim, contiguity, `R`/`W`, the format and the class.
fn buffer_fingerprint(v: &Bound<'_, PyAny>, out: &mut Fingerprint) -> bool {
    let p = v.as_ptr();
    // SAFETY: `p` is live; a buffer obtained here is released before returning.
    unsafe {
        if ffi::PyObject_CheckBuffer(p) == 0 {
            return false;
        }
        let mut view = std::mem::MaybeUninit::<ffi::Py_buffer>::zeroed();
        if ffi::PyObject_GetBuffer(p, view.as_mut_ptr(), ffi::PyBUF_FULL_RO) != 0 {
            ffi::PyErr_Clear();
            return false;
        }
        let view = view.assume_init_mut();
        let contig = if ffi::PyBuffer_IsContiguous(view, b'C' as std::os::raw::c_char) != 0 {
            b'C'
        } else if ffi::PyBuffer_IsContiguous(view, b'F' as std::os::raw::c_char) != 0 {
            b'F'
        } else {
            b'A'
        };
        out.push(b'B');
        out.extend_from_slice(&view.ndim.to_le_bytes());
        out.push(contig);
        out.push(if view.readonly != 0 { b'R' } else { b'W' });
        if !view.format.is_null() {
            out.extend_from_slice(std::ffi::CStr::from_ptr(view.format).to_bytes());
        }
        out.push(0);
        out.extend_from_slice(&(ffi::Py_TYPE(p) as usize).to_le_bytes());
        ffi::PyBuffer_Release(view);
    }
    true
}

/// The fingerprint of an array of a structured dtype (an `ndarray` or `recarray`) or of
/// an `np.void` / `np.record` scalar: its class, its dtype object's address (the dtype
/// is pinned with the fingerprint), and an array's dimensions, layout and writeability.
fn record_fingerprint(v: &Bound<'_, PyAny>, out: &mut Fingerprint) -> bool {
    let cls = v.get_type();
    if let Some(a) = crate::ndarray::raw(v) {
        // NPY_VOID; ndarray and recarray only (the slow typeof's classes).
        if a.type_num() != 20 || !cls.name().is_ok_and(|n| n == "ndarray" || n == "recarray") {
            return false;
        }
        let layout = if a.flags & NPY_ARRAY_C_CONTIGUOUS != 0 {
            b'C'
        } else if a.flags & NPY_ARRAY_F_CONTIGUOUS != 0 {
            b'F'
        } else {
            b'A'
        };
        out.push(b'R');
        out.extend_from_slice(&(cls.as_ptr() as usize).to_le_bytes());
        out.extend_from_slice(&(a.descr as usize).to_le_bytes());
        out.extend_from_slice(&a.nd.to_le_bytes());
        out.push(layout);
        out.push(u8::from(a.flags & NPY_ARRAY_WRITEABLE != 0));
        return true;
    }
    if !cls.name().is_ok_and(|n| n == "void" || n == "record")
        || !cls
            .module()
            .is_ok_and(|m| m.to_str().is_ok_and(|m| m == "numpy"))
    {
        return false;
    }
    let Ok(dt) = v.getattr("dtype") else {
        return false;
    };
    out.push(b'V');
    out.extend_from_slice(&(cls.as_ptr() as usize).to_le_bytes());
    out.extend_from_slice(&(dt.as_ptr() as usize).to_le_bytes());
    true
}

/// Keep alive the classes whose addresses `v`'s fingerprint may hold (tuple subclasses
/// and buffer exporters, at any depth), and a structured value's dtype.
fn pin_classes(v: &Bound<'_, PyAny>, pinned: &mut Vec<Py<PyAny>>) {
    pinned.push(v.get_type().into_any().unbind());
    let structured = crate::ndarray::raw(v).is_some_and(|a| a.type_num() == 20)
        || v.get_type()
            .name()
            .is_ok_and(|n| n == "void" || n == "record");
    if structured {
        if let Ok(dt) = v.getattr("dtype") {
            pinned.push(dt.unbind());
        }
    }
    if let Ok(t) = v.cast::<PyTuple>() {
        for item in t.iter_borrowed() {
            pin_classes(&item, pinned);
        }
    }
}

/// The type of an argument: fast paths, then the fingerprint cache, then `slow`.
pub fn typeof_arg(
    v: &Bound<'_, PyAny>,
    slow: impl Fn(&Bound<'_, PyAny>) -> PyResult<TypeId>,
) -> PyResult<TypeId> {
    if let Some(t) = fast_type(v) {
        return Ok(t);
    }
    // NumPy values need its tables; reading them is deferred until NumPy is imported.
    let _ = numpy(v.py());
    let mut fp = Fingerprint::new();
    if !fingerprint(v, &mut fp) {
        return slow(v);
    }
    if let Some(&t) = fingerprints(v.py()).and_then(|m| m.get(&fp[..])) {
        return Ok(t);
    }
    let t = slow(v)?;
    let mut pinned = Vec::new();
    pin_classes(v, &mut pinned);
    PINNED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(pinned);
    insert_fingerprint(v.py(), fp, t);
    Ok(t)
}

/// `numba_rs._numba_rs.compute_fingerprint(value)`: the fingerprint bytes, or None for a
/// value typed by the slow typeof on every call.
#[pyfunction]
pub fn compute_fingerprint(py: Python<'_>, value: &Bound<'_, PyAny>) -> Option<Py<PyBytes>> {
    let _ = numpy(py);
    let mut fp = Fingerprint::new();
    fingerprint(value, &mut fp).then(|| PyBytes::new(py, &fp).unbind())
}
