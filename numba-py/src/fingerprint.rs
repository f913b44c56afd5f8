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
use std::sync::{LazyLock, Mutex, RwLock};

use numba_typeinfer::types::{self, Layout, TypeId};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyTuple};
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

/// Fingerprint → typecode, filled by the slow typeof once per fingerprint.
static FINGERPRINTS: LazyLock<RwLock<FingerprintMap>> =
    LazyLock::new(|| RwLock::new(FingerprintMap::default()));

/// Classes whose address is part of a cached fingerprint, kept alive (Numba leaks the
/// type objects of its fingerprint table for the same reason).
static PINNED: Mutex<Vec<Py<PyAny>>> = Mutex::new(Vec::new());

/// Array types by (typenum, ndim, layout, writeable), packed into a word.
static ARRAY_TYPES: LazyLock<RwLock<HashMap<u64, TypeId>>> =
    LazyLock::new(|| RwLock::new(HashMap::new()));

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
    let modules = py.import("sys").ok()?.getattr("modules").ok()?;
    let modules = modules.cast::<PyDict>().ok()?;
    let np = modules.get_item("numpy").ok()??;
    NUMPY.get_or_try_init(py, || load_numpy(&np)).ok()
}

fn load_numpy(np: &Bound<'_, PyAny>) -> PyResult<NumpyTypes> {
    let ndarray = np.getattr("ndarray")?.as_ptr() as usize;
    let dtype = np.getattr("dtype")?;
    let mut scalars = Vec::new();
    let mut dtypes = [None; TYPENUMS];
    for code in "?bBhHiIlLqQfdgFDGe".chars() {
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

/// `PyArrayObject_fields` and `PyArray_Descr` (NumPy 1.x and 2.x agree on these
/// leading fields).
#[repr(C)]
struct RawArray {
    ob_base: ffi::PyObject,
    data: *mut u8,
    nd: i32,
    dimensions: *mut isize,
    strides: *mut isize,
    base: *mut ffi::PyObject,
    descr: *mut RawDescr,
    flags: i32,
}

#[repr(C)]
struct RawDescr {
    ob_base: ffi::PyObject,
    typeobj: *mut ffi::PyTypeObject,
    kind: u8,
    type_: u8,
    byteorder: u8,
    former_flags: u8,
    type_num: i32,
}

const NPY_ARRAY_C_CONTIGUOUS: i32 = 0x1;
const NPY_ARRAY_F_CONTIGUOUS: i32 = 0x2;
const NPY_ARRAY_WRITEABLE: i32 = 0x400;

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
    let key = u64::from(a.typenum)
        | u64::from(a.ndim) << 8
        | u64::from(layout_char(a.layout)) << 40
        | u64::from(a.writeable) << 48;
    if let Some(&t) = ARRAY_TYPES
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&key)
    {
        return Some(t);
    }
    let t = types::intern(types::Type::Array {
        dtype: np.dtypes[a.typenum as usize]?,
        ndim: a.ndim,
        layout: a.layout,
        readonly: !a.writeable,
    });
    ARRAY_TYPES
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, t);
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

/// Step 1: the type of `v` from its exact type alone, without any cache.
pub fn fast_type(v: &Bound<'_, PyAny>) -> Option<TypeId> {
    let py = v.py();
    // SAFETY: `v` is a live object.
    let ty = unsafe { ffi::Py_TYPE(v.as_ptr()) };
    // Taking the address of an extern static is safe.
    if ty == std::ptr::addr_of_mut!(ffi::PyLong_Type) {
        return Some(types::INT64);
    }
    if ty == std::ptr::addr_of_mut!(ffi::PyFloat_Type) {
        return Some(types::FLOAT64);
    }
    if ty == std::ptr::addr_of_mut!(ffi::PyBool_Type) {
        return Some(types::BOOLEAN);
    }
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
    if let Some((_, t)) = numpy_scalar(np, v) {
        return Some(t);
    }
    array_info(np, v).and_then(|a| array_type(np, &a))
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
    } else if let Some(np) = NUMPY.get(py) {
        if let Some((num, _)) = numpy_scalar(np, v) {
            out.push(b'S');
            out.push(num);
        } else if let Some(a) = array_info(np, v) {
            out.push(b'A');
            out.extend_from_slice(&(a.ndim as i32).to_le_bytes());
            out.push(layout_char(a.layout));
            out.push(if a.writeable { b'W' } else { b'R' });
            out.push(a.typenum);
        } else {
            return false;
        }
    } else {
        return false;
    }
    true
}

/// Keep alive the tuple subclasses whose addresses `v`'s fingerprint holds.
fn pin_classes(v: &Bound<'_, PyAny>, pinned: &mut Vec<Py<PyAny>>) {
    if let Ok(t) = v.cast::<PyTuple>() {
        if !v.is_exact_instance_of::<PyTuple>() {
            pinned.push(v.get_type().into_any().unbind());
        }
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
    if let Some(&t) = FINGERPRINTS
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&fp[..])
    {
        return Ok(t);
    }
    let t = slow(v)?;
    let mut pinned = Vec::new();
    pin_classes(v, &mut pinned);
    PINNED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(pinned);
    FINGERPRINTS
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(fp, t);
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
