//! The Rust half of `numba_rs.extending`: where the overloads a library registers are
//! found while typing ([`PyTemplates`], numba-typeinfer's `ExternalTemplates`).
//!
//! Each overloaded function has one dispatcher (made by `numba_rs.extending`) whose code
//! is chosen per argument types by the library's typing functions. A function numba-rs
//! types itself (a builtin, a NumPy function) keeps its own templates and reaches the
//! dispatcher only for argument types they reject; any other object (a plain Python
//! function, a NumPy function numba-rs lacks) is typed as the dispatcher itself.

use std::collections::{HashMap, HashSet};
use std::sync::{LazyLock, RwLock};

use numba_typeinfer::extension::ExternalTemplates;
use numba_typeinfer::types::TypeId;
use numba_typeinfer::TypingContext;
use pyo3::prelude::*;

/// Overloads of functions numba-rs types itself: the function's type → dispatcher.
static FUNCTIONS: LazyLock<RwLock<HashMap<TypeId, u64>>> = LazyLock::new(Default::default);

/// Overloaded objects numba-rs does not type: the object's address → its dispatcher's
/// id and name, and the object (kept alive so the address stays its own).
static OBJECTS: LazyLock<RwLock<HashMap<usize, Overloaded>>> = LazyLock::new(Default::default);

/// An overloaded object's dispatcher id and name, and the object.
type Overloaded = (u64, String, Py<PyAny>);

/// A user's type's implicit conversions (`can_convert_to`), asked once per pair.
type ConversionTable = HashMap<(TypeId, TypeId), Option<numba_typeinfer::conv::Conversion>>;
static CONVERSIONS: LazyLock<RwLock<ConversionTable>> = LazyLock::new(Default::default);
/// Names some `overload_method` / `overload_attribute` declared: other names never
/// reach Python.
static METHODS: LazyLock<RwLock<HashSet<String>>> = LazyLock::new(Default::default);
static ATTRIBUTES: LazyLock<RwLock<HashSet<String>>> = LazyLock::new(Default::default);

/// The dispatcher an overloaded object is typed as, if it is one numba-rs does not type.
pub(crate) fn overloaded_object(value: &Bound<'_, PyAny>) -> Option<(u64, String)> {
    let objects = OBJECTS.read().unwrap_or_else(|e| e.into_inner());
    if objects.is_empty() {
        return None;
    }
    objects
        .get(&(value.as_ptr() as usize))
        .map(|(id, name, _)| (*id, name.clone()))
}

/// numba-rs's own overloads of standard-library and NumPy functions, by the module that
/// defines the functions (`__module__`) and the module that overloads them.
const BUILTIN_OVERLOADS: &[(&str, &str)] = &[
    ("_heapq", "numba_rs._heapq"),
    ("heapq", "numba_rs._heapq"),
    // NumPy functions the native templates leave out (`np.sinc`, `np.interp`, ...).
    ("numpy", "numba_rs._npfuncs"),
    ("numpy.linalg", "numba_rs._npfuncs"),
    ("numpy.lib.stride_tricks", "numba_rs._npfuncs"),
    // `np.random.default_rng` (the module's other functions are typed natively): its
    // own module, which imports `numpy.random` (10 ms) only when code names it.
    ("numpy.random", "numba_rs._npgenerator"),
];

/// numba-rs's own overloads of built-in functions and methods for arguments the native
/// templates reject, by typing key, and the module defining them.
const FALLBACK_OVERLOADS: &[(&str, &str)] = &[
    ("sorted", "numba_rs._listsort"),
    // Lazily consumed generators over the loop CPython's builtins run.
    ("map", "numba_rs._iterbuiltins"),
    ("filter", "numba_rs._iterbuiltins"),
    // `sum(x, start=...)` and the refusals of string-like starts.
    ("sum", "numba_rs._iterbuiltins"),
    // `min`/`max` of tuples and strings, and the empty-tuple error.
    ("min", "numba_rs._iterbuiltins"),
    ("max", "numba_rs._iterbuiltins"),
    ("list.sort", "numba_rs._listsort"),
    // `axis=` / `dtype=` forms and `a.transpose(1, 0, 2)`.
    ("numpy.outer", "numba_rs._nplinalg"),
    ("numpy.trace", "numba_rs._nplinalg"),
    // datetime64 / timedelta64 arrays.
    ("numpy.sign", "numba_rs._npdtfuncs"),
    ("numpy.searchsorted", "numba_rs._npdtfuncs"),
    ("numpy.sort", "numba_rs._npaxis"),
    ("numpy.argsort", "numba_rs._npaxis"),
    ("numpy.cumsum", "numba_rs._npaxis"),
    ("numpy.cumprod", "numba_rs._npaxis"),
    ("numpy.sum", "numba_rs._npaxis"),
    ("numpy.prod", "numba_rs._npaxis"),
    ("numpy.take", "numba_rs._npaxis"),
    ("array.argsort", "numba_rs._npaxis"),
    ("array.cumsum", "numba_rs._npaxis"),
    ("array.cumprod", "numba_rs._npaxis"),
    ("array.sum", "numba_rs._npaxis"),
    ("array.prod", "numba_rs._npaxis"),
    ("array.transpose", "numba_rs._npaxis"),
    ("array.take", "numba_rs._npaxis"),
    // Array-like arguments (tuples, lists, scalars) and NumPy's argument errors for
    // shape functions.
    ("numpy.atleast_1d", "numba_rs._npmanip"),
    ("numpy.atleast_2d", "numba_rs._npmanip"),
    ("numpy.atleast_3d", "numba_rs._npmanip"),
    ("numpy.flatnonzero", "numba_rs._npmanip"),
    ("numpy.shape", "numba_rs._npmanip"),
    ("numpy.size", "numba_rs._npmanip"),
    ("numpy.expand_dims", "numba_rs._npmanip"),
    ("numpy.reshape", "numba_rs._npmanip"),
    ("numpy.ravel", "numba_rs._npmanip"),
    ("array.reshape", "numba_rs._npmanip"),
    ("array.ravel", "numba_rs._npmanip"),
    // `out=`, array-like arguments and NumPy's argument errors for element-wise
    // array functions and methods.
    ("numpy.clip", "numba_rs._npmethods"),
    ("array.clip", "numba_rs._npmethods"),
    ("numpy.where", "numba_rs._npmethods"),
    ("numpy.round", "numba_rs._npmethods"),
    ("numpy.around", "numba_rs._npmethods"),
    ("numpy.round_", "numba_rs._npmethods"),
    ("array.round", "numba_rs._npmethods"),
    ("numpy.real", "numba_rs._npmethods"),
    ("numpy.imag", "numba_rs._npmethods"),
    ("numpy.copy", "numba_rs._npmethods"),
    ("numpy.unique", "numba_rs._npmethods"),
    ("numpy.nonzero", "numba_rs._npmethods"),
    ("numpy.ascontiguousarray", "numba_rs._npmethods"),
    ("numpy.transpose", "numba_rs._npmethods"),
    ("numpy.asfortranarray", "numba_rs._npmethods"),
    ("array.nonzero", "numba_rs._npmethods"),
    // Array-like arguments and Numba's argument errors for NumPy functions the native
    // templates type for arrays.
    ("numpy.bincount", "numba_rs._npfuncs"),
    ("numpy.roll", "numba_rs._npfuncs"),
    ("numpy.flip", "numba_rs._npfuncs"),
    ("numpy.fliplr", "numba_rs._npfuncs"),
    ("numpy.flipud", "numba_rs._npfuncs"),
    ("numpy.asarray", "numba_rs._npfuncs"),
    ("numpy.ones", "numba_rs._npfuncs"),
    ("array.repeat", "numba_rs._npfuncs"),
    // Several advanced indices in one subscript.
    ("operator.getitem", "numba_rs._npindex"),
    ("operator.setitem", "numba_rs._npindex"),
];

/// Import the module of numba-rs overloads for `value`'s module, once, if there is one.
pub(crate) fn load_builtin_overloads(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
    let Ok(module) = value.getattr("__module__") else {
        return Ok(());
    };
    let Ok(module) = module.extract::<String>() else {
        return Ok(());
    };
    let Some((_, overloads)) = BUILTIN_OVERLOADS.iter().find(|(m, _)| *m == module) else {
        return Ok(());
    };
    load_overload_module(py, overloads)
}

/// Import one of numba-rs's overload modules, once.
pub(crate) fn load_overload_module(py: Python<'_>, overloads: &'static str) -> PyResult<()> {
    static LOADED: std::sync::Mutex<Vec<&str>> = std::sync::Mutex::new(Vec::new());
    if LOADED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&overloads)
    {
        return Ok(());
    }
    py.import(overloads)?;
    LOADED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(overloads);
    Ok(())
}

/// `@overload(func)`'s registration: `dispatcher` implements `func`. Returns whether
/// numba-rs types `func` itself (its own templates then come first).
#[pyfunction]
pub(crate) fn _register_overload(
    py: Python<'_>,
    func: &Bound<'_, PyAny>,
    dispatcher: &Bound<'_, crate::Dispatcher>,
) -> PyResult<bool> {
    let d = dispatcher.get();
    let (id, name) = (d.core.id, d.core.name.clone());
    let g = crate::classify(py, func)?;
    // An operator is also keyed as typing's operator fallbacks look it up
    // (`operator.getitem` for `x[i]`), whether or not numba-rs types it itself.
    if let numba_ir::GlobalKind::ModuleFunction { module, name } = &g.kind {
        if module == "operator" {
            let key = numba_typeinfer::Type::Function(format!("operator.{name}"));
            FUNCTIONS
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .insert(numba_typeinfer::types::intern(key), id);
        }
    }
    let typed = crate::TARGET.typing.resolve_global(&g).ok().filter(|t| {
        use numba_typeinfer::Type as T;
        matches!(
            t.get(),
            T::Function(_) | T::NumberClass(_) | T::BoundFunction { .. }
        )
    });
    match typed {
        Some(t) => {
            FUNCTIONS
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .insert(t, id);
            Ok(true)
        }
        None => {
            OBJECTS
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .insert(func.as_ptr() as usize, (id, name, func.clone().unbind()));
            Ok(false)
        }
    }
}

/// `@overload_method(Class, name)` / `@overload_attribute(Class, name)` declared `name`.
#[pyfunction]
pub(crate) fn _declare_member(name: String, attribute: bool) {
    let set = if attribute { &ATTRIBUTES } else { &METHODS };
    set.write().unwrap_or_else(|e| e.into_inner()).insert(name);
}

/// numba-typeinfer's view of the overloads registered from Python.
pub(crate) struct PyTemplates;

/// Call `numba_rs.extending.<helper>(*args)`: the Python half of every hook here.
fn call_helper<'py>(
    py: Python<'py>,
    helper: &str,
    args: impl pyo3::call::PyCallArgs<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    py.import("numba_rs.extending")?
        .getattr(helper)?
        .call1(args)
}

/// A helper's answer: None for "not mine", a value, or the text of the error it raised.
pub(crate) fn optional_answer<T: for<'a, 'py> FromPyObject<'a, 'py>>(
    py: Python<'_>,
    r: PyResult<Bound<'_, PyAny>>,
) -> Option<Result<T, String>> {
    match r {
        Ok(v) if v.is_none() => None,
        Ok(v) => Some(v.extract::<T>().map_err(|e| {
            let e: PyErr = e.into();
            e.to_string()
        })),
        Err(e) => Some(Err(e
            .value(py)
            .str()
            .map(|s| s.to_string())
            .unwrap_or_default())),
    }
}

/// Whether some `overload_method` / `overload_attribute` declared `name`.
fn declared(set: &RwLock<HashSet<String>>, name: &str) -> bool {
    set.read().unwrap_or_else(|e| e.into_inner()).contains(name)
}

impl PyTemplates {
    /// Ask `numba_rs.extending.<finder>(type, name)` for a member's dispatcher.
    fn member(&self, finder: &str, recv: TypeId, name: &str) -> Option<u64> {
        Python::attach(|py| -> PyResult<Option<u64>> {
            let t = crate::typeobj::py_type(py, recv)?;
            call_helper(py, finder, (t, name))?.extract()
        })
        .ok()
        .flatten()
    }
}

/// numba-lower's view of `@intrinsic` code generation (`numba_rs.extending`).
pub(crate) struct PyCodegen;

impl numba_lower::external::ExternalCodegen for PyCodegen {
    fn codegen(&self, key: &str, args: &[TypeId], ret: TypeId) -> Result<(String, String), String> {
        Python::attach(|py| -> PyResult<(String, String)> {
            let codes: Vec<u32> = args.iter().map(|t| t.0).collect();
            call_helper(py, "_codegen_intrinsic", (key, codes, ret.0))?.extract()
        })
        .map_err(|e| e.to_string())
    }
}

/// The LLVM type numba-rs gives values of a type, described for llvmlite:
/// `("int", bits)`, `("float",)`, `("double",)`, `("ptr",)`, `("struct", [members])`,
/// `("array", count, element)`.
#[pyfunction]
pub(crate) fn _llvm_type_desc(py: Python<'_>, code: u32) -> PyResult<Py<PyAny>> {
    use numba_lower::external::LlvmTypeDesc as D;
    fn describe<'py>(py: Python<'py>, d: &D) -> PyResult<Bound<'py, PyAny>> {
        Ok(match d {
            D::Int(bits) => ("int", *bits).into_pyobject(py)?.into_any(),
            D::Float => ("float",).into_pyobject(py)?.into_any(),
            D::Double => ("double",).into_pyobject(py)?.into_any(),
            D::Ptr => ("ptr",).into_pyobject(py)?.into_any(),
            D::Struct(members) => {
                let m = members
                    .iter()
                    .map(|x| describe(py, x))
                    .collect::<PyResult<Vec<_>>>()?;
                ("struct", m).into_pyobject(py)?.into_any()
            }
            D::Array(n, e) => ("array", *n, describe(py, e)?)
                .into_pyobject(py)?
                .into_any(),
        })
    }
    let d = numba_lower::external::llvm_type_desc(TypeId(code))
        .map_err(|e| pyo3::exceptions::PyTypeError::new_err(e.to_string()))?;
    Ok(describe(py, &d)?.unbind())
}

impl ExternalTemplates for PyTemplates {
    fn function(&self, func: TypeId) -> Option<u64> {
        let registered = || {
            FUNCTIONS
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .get(&func)
                .copied()
        };
        if let Some(did) = registered() {
            return Some(did);
        }
        // numba-rs's own overloads for the forms its native templates leave out
        // (`sorted(x, key=f)`, `l.sort(key=f)`), loaded the first time one is needed.
        let (key, this) = match func.get() {
            numba_typeinfer::Type::Function(k) => (k, None),
            numba_typeinfer::Type::BoundFunction { key, this } => (key, Some(this)),
            _ => return None,
        };
        let (_, module) = FALLBACK_OVERLOADS.iter().find(|(k, _)| *k == key)?;
        Python::attach(|py| load_overload_module(py, module)).ok()?;
        match this {
            None => registered(),
            Some(this) => {
                let name = key.rsplit('.').next()?;
                self.method(this, name)
            }
        }
    }

    fn module_attribute(&self, module: &str, name: &str) -> Option<u64> {
        // numba-rs's own NumPy overloads (`np.linalg.cond` read through the module).
        if module == "numpy" || module.starts_with("numpy.") {
            Python::attach(|py| load_overload_module(py, "numba_rs._npfuncs")).ok()?;
        }
        if OBJECTS.read().unwrap_or_else(|e| e.into_inner()).is_empty() {
            return None;
        }
        Python::attach(|py| {
            let m = py.import(module).ok()?;
            let v = m.getattr(name).ok()?;
            overloaded_object(&v).map(|(id, _)| id)
        })
    }

    fn method(&self, recv: TypeId, name: &str) -> Option<u64> {
        if !declared(&METHODS, name) {
            return None;
        }
        self.member("_find_method", recv, name)
    }

    fn intrinsic(
        &self,
        key: &str,
        args: &[TypeId],
    ) -> Option<Result<(TypeId, Vec<TypeId>), String>> {
        Python::attach(|py| {
            let codes: Vec<u32> = args.iter().map(|t| t.0).collect();
            let r = call_helper(py, "_type_intrinsic", (key, codes));
            let answer = optional_answer::<(u32, Vec<u32>)>(py, r)?;
            Some(answer.map(|(r, a)| (TypeId(r), a.into_iter().map(TypeId).collect())))
        })
    }

    fn intrinsic_parameters(&self, key: &str) -> Option<Vec<String>> {
        Python::attach(|py| -> PyResult<Vec<String>> {
            call_helper(py, "_intrinsic_parameters", (key,))?.extract()
        })
        .ok()
    }

    fn conversion(&self, from: TypeId, to: TypeId) -> Option<numba_typeinfer::conv::Conversion> {
        use numba_typeinfer::conv::Conversion;
        if let Some(c) = CONVERSIONS
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(from, to))
        {
            return *c;
        }
        let answer = Python::attach(|py| {
            call_helper(py, "_can_convert", (from.0, to.0))
                .and_then(|r| r.extract::<Option<u8>>())
                .ok()
                .flatten()
        });
        let c = match answer {
            Some(1) => Some(Conversion::Exact),
            Some(2) => Some(Conversion::Promote),
            Some(3) => Some(Conversion::Safe),
            Some(4) => Some(Conversion::Unsafe),
            _ => None,
        };
        CONVERSIONS
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert((from, to), c);
        c
    }

    fn prints(&self, t: TypeId) -> bool {
        Python::attach(|py| {
            call_helper(py, "_prints", (t.0,))
                .and_then(|r| r.extract::<bool>())
                .unwrap_or(false)
        })
    }

    fn attribute(&self, recv: TypeId, name: &str) -> Option<u64> {
        // A user's type also asks Python: its attributes may come from Numba's own
        // registries (`make_attribute_wrapper` imported from Numba).
        let user = matches!(recv.get(), numba_typeinfer::types::Type::Opaque { .. });
        if !user && !declared(&ATTRIBUTES, name) {
            return None;
        }
        self.member("_find_attribute", recv, name)
    }
}
