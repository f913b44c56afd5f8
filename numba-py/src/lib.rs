//! # numba-py
//!
//! The `numba_rs` Python module: thin pyo3 glue over numba-dispatch. It owns everything that
//! needs a Python interpreter and nothing else: reading a function's `__code__` (through
//! `marshal`) and `__globals__`, `typeof` of live argument values, unboxing arguments into
//! native slots and boxing results, and turning compile errors and native exceptions into
//! Python exceptions. No compiler logic lives here.
//!
//! Entry points (Python): `numba_rs._numba_rs.Dispatcher(py_func, signatures)` (subclassed
//! in Python by `numba_rs.dispatcher.CPUDispatcher`, which `numba_rs.njit` / `numba_rs.jit`
//! return), `numba_rs._numba_rs.typeof_name(value)`, and the NRT
//! counters behind `numba_rs.runtime.rtsys.get_allocation_stats()`.

mod boxing;
mod call;
mod dicts;
mod extending;
mod fingerprint;
mod generator;
mod irview;
mod jitclass;
mod lists;
mod ndarray;
mod npgen;
mod objloop;
mod objmode;
mod objmode_with;
mod parallel;
mod records;
mod typed_list;
mod typeobj;
mod ufunc;
mod usertypes;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, LazyLock};

use numba_bytecode::{CodeObject, Constant};
use numba_dispatch::{CompileError, ErrorKind, FunctionSource, JitOptions, Target};
use numba_ir::{Global, GlobalKind, GlobalResolver};
use numba_lower::{CompiledFunction, ExcInfo};
use numba_typeinfer::types::{self, TypeId};
use pyo3::exceptions::{PyRuntimeError, PySystemError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyBytes, PyComplex, PyDict, PyFloat, PyInt, PyModule, PyString, PyTuple,
};
use typeobj::Type;

/// A function's source: the Python function object, read under the GIL when compiling.
struct PySource {
    func: Py<PyAny>,
    /// This function's dispatcher, for a self-recursive call compiled before the
    /// function's name is bound (an explicit signature compiles at decoration), as
    /// Numba's `_temporary_dispatcher_map` does.
    this: Arc<std::sync::OnceLock<(u64, String)>>,
    /// Code generated per signature: called with the argument types (a tuple of
    /// `numba_rs.types` objects), it returns the Python function to compile (a stencil's
    /// loop nest); `func` then only gives the parameters.
    generate: Option<Py<PyAny>>,
    /// `parallel=` with its `stencil` option on: a stencil this function calls runs as
    /// parallel loops.
    parallel: bool,
    /// `inline=` a function: the cost model asked per call site.
    inline_model: Option<Py<PyAny>>,
    /// Whether calls offer literal argument types (an extension's overload).
    literal_args: numba_typeinfer::extension::LiteralArgs,
}

/// A global as a function compiled with `parallel` sees it: a stencil object gives the
/// dispatcher of its loop nest (parallel or serial), anything else [`classify`].
fn classify_in(py: Python<'_>, value: &Bound<'_, PyAny>, parallel: bool) -> PyResult<Global> {
    if let Ok(pick) = value.getattr("_numba_rs_stencil") {
        let d = pick.call1((parallel,))?;
        return classify(py, &d);
    }
    classify(py, value)
}

/// A C function's (name, address, signature text) when `value` is a ctypes function
/// pointer or a cffi function (`numba_rs._cinterop`), or the reason it cannot be called
/// (a ctypes function without `argtypes`, an unsupported C type); None for anything else.
fn c_function(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
) -> Option<Result<(String, u64, String), String>> {
    // Cheap filter first: only objects of ctypes' or cffi's classes, or functions of an
    // out-of-line cffi module's `lib`.
    let module = |o: &Bound<'_, PyAny>| -> String {
        o.get_type()
            .getattr("__module__")
            .and_then(|m| m.extract())
            .unwrap_or_default()
    };
    let m = module(value);
    let ool = value.is_instance_of::<pyo3::types::PyCFunction>()
        && value
            .getattr("__self__")
            .is_ok_and(|s| module(&s) == "_cffi_backend");
    if m != "ctypes" && m != "_cffi_backend" && !ool {
        return None;
    }
    let found = py
        .import("numba_rs._cinterop")
        .and_then(|c| c.getattr("c_function"))
        .and_then(|f| f.call1((value,)));
    extending::optional_answer(py, found)
}

/// A cffi `FFI` object: `cffi.FFI()` or an out-of-line module's `ffi`.
fn is_cffi_ffi(value: &Bound<'_, PyAny>) -> bool {
    let ty = value.get_type();
    let name = ty.name().map(|n| n.to_string()).unwrap_or_default();
    let module: String = ty
        .getattr("__module__")
        .and_then(|m| m.extract())
        .unwrap_or_default();
    name == "FFI" && (module == "cffi.api" || module == "_cffi_backend")
}

/// `literal_unroll` or `literally`, numba-rs's (`numba_rs.literal`) or Numba's own
/// (`numba.misc.literal`, `numba.misc.special`): its name.
fn special_function(value: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    if !value.is_instance_of::<pyo3::types::PyFunction>() {
        return Ok(None);
    }
    let name: String = value.getattr("__name__")?.extract()?;
    if name != "literal_unroll" && name != "literally" {
        return Ok(None);
    }
    let module: String = value
        .getattr("__module__")
        .and_then(|m| m.extract())
        .unwrap_or_default();
    let ours = module.starts_with("numba_rs");
    let numbas = module == "numba.misc.literal" || module == "numba.misc.special";
    Ok((ours || numbas).then_some(name))
}

fn classify(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Global> {
    let repr = value.repr()?.to_string();
    let mk = |kind| {
        Ok(Global {
            kind,
            repr: repr.clone(),
        })
    };
    // An `@intrinsic`: typed and generated by `numba_rs.extending`.
    if let Ok(k) = value.getattr("_numba_rs_intrinsic") {
        if let Ok(key) = k.extract::<String>() {
            return mk(GlobalKind::Intrinsic(key));
        }
    }
    // A class or function a library made callable in jitted code (`type_callable` with
    // `lower_builtin`): an intrinsic of `numba_rs._usertypes`.
    if value.is_instance_of::<pyo3::types::PyType>()
        || value.is_instance_of::<pyo3::types::PyFunction>()
    {
        if let Some(key) = usertypes::callable_key(py, value)? {
            return mk(GlobalKind::Intrinsic(key));
        }
    }
    // A function numba-rs types itself, marked `_numba_rs_builtin = "module:name"`
    // (`numba_rs.experimental.jitclass._new`).
    if let Ok(k) = value.getattr("_numba_rs_builtin") {
        if let Ok(key) = k.extract::<String>() {
            if let Some((module, name)) = key.split_once(':') {
                return mk(GlobalKind::ModuleFunction {
                    module: module.into(),
                    name: name.into(),
                });
            }
        }
    }
    // `numba_rs.typed.Dict` (and subclasses): `Dict()`, `Dict.empty(...)` in jitted code.
    if let Ok(cls) = value.cast::<pyo3::types::PyType>() {
        if cls.is_subclass_of::<dicts::TypedDict>()? {
            return mk(GlobalKind::ModuleFunction {
                module: "numba_rs.typed".into(),
                name: "Dict".into(),
            });
        }
        if cls.is_subclass_of::<typed_list::TypedList>()? {
            return mk(GlobalKind::ModuleFunction {
                module: "numba_rs.typed".into(),
                name: "List".into(),
            });
        }
    }
    // `literal_unroll` (numba-rs's, or Numba's own): unrolled before typing;
    // `literally`: typed by the inference engine.
    match special_function(value)?.as_deref() {
        Some("literal_unroll") => {
            return mk(GlobalKind::Intrinsic(
                numba_ir::unroll::LITERAL_UNROLL.to_string(),
            ));
        }
        Some("literally") => return mk(GlobalKind::Intrinsic("literally".into())),
        _ => {}
    }
    // A cffi `FFI` object (in line or an out-of-line module's): typed as the module
    // `cffi.ffi`, whose `from_buffer` jitted code calls.
    if is_cffi_ffi(value) {
        return mk(GlobalKind::Module("cffi.ffi".into()));
    }
    // A ctypes function pointer or a cffi function: called through its address.
    if let Some(found) = c_function(py, value) {
        return mk(match found {
            Ok((name, address, signature)) => GlobalKind::CFunction {
                name,
                address,
                signature,
            },
            Err(message) => GlobalKind::Unsupported { message },
        });
    }
    // Standard-library functions numba-rs implements as overloads: their module is
    // loaded the first time compiled code refers to one.
    extending::load_builtin_overloads(py, value)?;
    // An object a library overloads that numba-rs does not type: its dispatcher.
    if let Some((id, name)) = extending::overloaded_object(value) {
        return mk(GlobalKind::Dispatcher { id, name });
    }
    if let Ok(d) = value.cast::<Dispatcher>() {
        let d = d.borrow();
        return mk(GlobalKind::Dispatcher {
            id: d.core.id,
            name: d.core.name.clone(),
        });
    }
    // A vectorize or guvectorize object: its loops are chosen per call.
    if let Ok(info) = value.getattr("_numba_rs_jit_ufunc") {
        if let Ok((id, name, gufunc)) = info.extract::<(u64, String, bool)>() {
            return mk(GlobalKind::UFunc { id, name, gufunc });
        }
    }
    // A cfunc object: calls from jitted code go to its kernel.
    if let Ok(k) = value.getattr("_numba_rs_kernel") {
        if let Ok(d) = k.cast::<Dispatcher>() {
            let d = d.borrow();
            return mk(GlobalKind::Dispatcher {
                id: d.core.id,
                name: d.core.name.clone(),
            });
        }
    }
    if let Some(c) = constant_of(value)? {
        return mk(GlobalKind::Const(c));
    }
    if let Some(kind) = objmode_with::with_context(py, value)? {
        return mk(GlobalKind::WithContext(kind));
    }
    if let Some(text) = objmode_with::type_object(py, value)? {
        let type_name = value.get_type().name()?.to_string();
        // The type it stands for, when numba-rs has a counterpart.
        let code = py
            .import("numba_rs.types")?
            .getattr("_code")?
            .call1((value,))
            .and_then(|c| c.extract::<u32>())
            .ok();
        return mk(GlobalKind::TypeObject {
            text,
            type_name,
            code,
        });
    }
    if let Some(kind) = frozen_value(py, value)? {
        return mk(kind);
    }
    if value.is_instance_of::<PyModule>() {
        let name: String = value.getattr("__name__")?.extract()?;
        // Numba's own `numba.typed` (code written against Numba): its `List`/`Dict` in
        // compiled code are numba-rs's typed containers.
        let name = if name == "numba.typed" {
            "numba_rs.typed".to_string()
        } else {
            name
        };
        return mk(GlobalKind::Module(name));
    }
    let builtins = py.import("builtins")?;
    if let Some(e) = enum_class(py, value)? {
        return mk(e);
    }
    if let Ok(cls) = value.cast::<pyo3::types::PyType>() {
        // A namedtuple class: a tuple subclass with `_fields`.
        if cls.is_subclass_of::<PyTuple>()? && value.hasattr("_fields")? {
            let fields: Vec<String> = value.getattr("_fields")?.extract()?;
            let name: String = value.getattr("__name__")?.extract()?;
            let key = boxing::register_class(value)?;
            return mk(GlobalKind::NamedTupleClass { name, key, fields });
        }
    }
    // A dtype object (`np.dtype('int32')`) stands for its scalar type.
    if let Ok(np) = py.import("numpy") {
        if value.is_instance(&np.getattr("dtype")?)? {
            // A structured dtype: the dtype of its record type (`np.empty(n, dtype=DT)`).
            if !value.getattr("names")?.is_none() {
                let rec = records::record_type(value)?;
                let t = types::intern(types::Type::DType(rec));
                return mk(GlobalKind::UserValue {
                    type_code: t.0,
                    type_name: t.to_string(),
                });
            }
            let name: String = value.getattr("type")?.getattr("__name__")?.extract()?;
            return mk(GlobalKind::ModuleFunction {
                module: "numpy".into(),
                name,
            });
        }
    }
    let exc_base = builtins.getattr("BaseException")?;
    if let Ok(name) = value
        .getattr("__name__")
        .and_then(|n| n.extract::<String>())
    {
        let module: Option<String> = value
            .getattr("__module__")
            .ok()
            .and_then(|m| m.extract().ok());
        let is_type = value.is_instance_of::<pyo3::types::PyType>();
        if is_type
            && value
                .cast::<pyo3::types::PyType>()
                .is_ok_and(|t| t.is_subclass(&exc_base).unwrap_or(false))
        {
            // A builtin exception by its name; any other class (one made by `exec` says
            // its module is `builtins` too) by its registered key.
            if module.as_deref() == Some("builtins")
                && builtins.getattr(name.as_str()).is_ok_and(|b| b.is(value))
            {
                return mk(GlobalKind::ExceptionClass(name));
            }
            let key = boxing::register_class(value)?;
            if key.contains('#') {
                // Another class of the same name: raises name the class by the repr the
                // IR prints, so it carries the key's `#n` too.
                return Ok(Global {
                    repr: format!("<class '{key}'>"),
                    kind: GlobalKind::ExceptionClass(key),
                });
            }
            return mk(GlobalKind::ExceptionClass(key));
        }
        if module.as_deref() == Some("builtins")
            && builtins.getattr(name.as_str()).is_ok_and(|b| b.is(value))
        {
            return mk(GlobalKind::Builtin(name));
        }
        if let Some(m) = module {
            // `operator.add` reports the C module `_operator`.
            let m = if m == "_operator" {
                "operator".to_string()
            } else {
                m
            };
            if m == "math" || m == "cmath" || m == "random" || m == "operator" {
                return mk(GlobalKind::ModuleFunction { module: m, name });
            }
            // `functools.reduce` (from the C module `_functools`).
            if m == "_functools"
                && name == "reduce"
                && py
                    .import("functools")
                    .and_then(|f| f.getattr("reduce"))
                    .is_ok_and(|v| v.is(value))
            {
                return mk(GlobalKind::ModuleFunction {
                    module: "functools".into(),
                    name,
                });
            }
            // `prange` and the threading queries jitted code may call: ours, or Numba's
            // own objects in code written for Numba (`from numba import prange`).
            let parallel_name = matches!(
                name.as_str(),
                "prange"
                    | "pndindex"
                    | "get_num_threads"
                    | "get_thread_id"
                    | "set_num_threads"
                    | "set_parallel_chunksize"
                    | "get_parallel_chunksize"
            );
            let numbas = parallel_name
                && m.starts_with("numba.")
                && py
                    .import("numba")
                    .and_then(|n| n.getattr(name.as_str()))
                    .is_ok_and(|v| v.is(value));
            // `carray`/`farray`: ours, or Numba's.
            if matches!(name.as_str(), "carray" | "farray")
                && (m == "numba_rs.cfunc"
                    || py
                        .import("numba")
                        .and_then(|n| n.getattr(name.as_str()))
                        .is_ok_and(|v| v.is(value)))
            {
                return mk(GlobalKind::ModuleFunction {
                    module: "numba".into(),
                    name,
                });
            }
            if parallel_name && (m == "numba_rs.parallel" || numbas) {
                return mk(GlobalKind::ModuleFunction {
                    module: "numba_rs".into(),
                    name,
                });
            }
        }
        // A NumPy function or dtype class bound to a name (`pyfunc = np.empty`): the
        // module attribute it is, found by identity (NumPy's `__module__`s vary). Only
        // modules already imported can hold it (importing `numpy.random` costs 10 ms).
        let loaded = py.import("sys")?.getattr("modules")?;
        for module in [
            "numpy",
            "numpy.random",
            "numpy.linalg",
            "numpy.lib.stride_tricks",
        ] {
            if let Ok(m) = loaded.get_item(module) {
                if m.getattr(name.as_str()).is_ok_and(|v| v.is(value)) {
                    return mk(GlobalKind::ModuleFunction {
                        module: module.to_string(),
                        name,
                    });
                }
            }
        }
    }
    let type_name = value.get_type().name()?.to_string();
    // A value of a user's type (`typeof_impl`), or a class reference with class methods.
    if let Some(found) = usertypes::global_value(py, value) {
        return mk(match found {
            Ok(type_code) => GlobalKind::UserValue {
                type_code,
                type_name,
            },
            Err(message) => GlobalKind::Unsupported { message },
        });
    }
    mk(GlobalKind::Opaque { type_name })
}

/// A global NumPy array, captured now as data (Numba freezes global arrays into the code
/// at compile time), or a tuple holding arrays and constants; `None` for anything else.
/// An array whose dtype has no plain byte representation (object, datetime, records,
/// non-native byte order) is `Unsupported`, naming its dtype.
fn frozen_value(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Option<GlobalKind>> {
    if value.get_type().is(py.get_type::<PyTuple>()) {
        let mut items = Vec::new();
        // A tuple of plain constants is a `Const`; one holding arrays, NumPy scalars or
        // jitted functions is frozen item by item.
        let mut holds_array = false;
        for item in value.try_iter()? {
            let item = item?;
            let kind = match constant_of(&item)? {
                Some(c) => GlobalKind::Const(c),
                None => match frozen_value(py, &item)? {
                    Some(k @ GlobalKind::Unsupported { .. }) => return Ok(Some(k)),
                    Some(k) => {
                        holds_array = true;
                        k
                    }
                    None => match item.cast::<Dispatcher>() {
                        // A jitted function: its type is all there is (`(f, g)` for
                        // `literal_unroll`, or indexed by a constant).
                        Ok(d) => {
                            let d = d.borrow();
                            holds_array = true;
                            GlobalKind::Dispatcher {
                                id: d.core.id,
                                name: d.core.name.clone(),
                            }
                        }
                        Err(_) => return Ok(None),
                    },
                },
            };
            items.push(kind);
        }
        return Ok(holds_array.then_some(GlobalKind::Tuple(items)));
    }
    if let Some(scalar) = numpy_scalar(py, value)? {
        return Ok(Some(scalar));
    }
    // `slice(1, None)`: its bounds, each an int or None.
    if let Ok(s) = value.cast::<pyo3::types::PySlice>() {
        let part = |name: &str| -> PyResult<Option<Option<i64>>> {
            let v = s.getattr(name)?;
            if v.is_none() {
                return Ok(Some(None));
            }
            Ok(v.extract::<i64>().ok().map(Some))
        };
        return Ok(match (part("start")?, part("stop")?, part("step")?) {
            (Some(a), Some(b), Some(c)) => Some(GlobalKind::Slice(a, b, c)),
            _ => Some(GlobalKind::Unsupported {
                message: "a slice global holds bounds that are not ints or None".into(),
            }),
        });
    }
    if value.get_type().name()? != "ndarray" || !value.hasattr("__array_interface__")? {
        return Ok(None);
    }
    let dtype = value.getattr("dtype")?;
    // A structured dtype is captured as its records' bytes, named by its record type.
    let record = if dtype.getattr("names")?.is_none() {
        None
    } else {
        records::record_type(&dtype).ok()
    };
    if record.is_none() && !plain_dtype(&dtype)? {
        return Ok(Some(GlobalKind::Unsupported {
            message: format!("Unsupported array dtype: {}", dtype.str()?),
        }));
    }
    let name: String = match record {
        Some(t) => t.to_string(),
        None => dtype.getattr("name")?.extract()?,
    };
    let itemsize: usize = dtype.getattr("itemsize")?.extract()?;
    let shape: Vec<i64> = value.getattr("shape")?.extract()?;
    let flags = value.getattr("flags")?;
    let layout = if flags.getattr("c_contiguous")?.is_truthy()? {
        numba_ir::ArrayLayout::C
    } else if flags.getattr("f_contiguous")?.is_truthy()? {
        numba_ir::ArrayLayout::F
    } else {
        numba_ir::ArrayLayout::A
    };
    // The elements in the order of the layout (a non-contiguous array as a C-ordered copy).
    let order = if layout == numba_ir::ArrayLayout::F {
        "F"
    } else {
        "C"
    };
    let data = bytes_of(&value.call_method1("tobytes", (order,))?)?;
    let array = numba_ir::ConstArray::new(name, itemsize, shape, layout, data)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(Some(GlobalKind::Array(array)))
}

/// The expression assigned to `target` in a Python `FunctionIR` (a call site).
fn call_expr<'py>(fir: &Bound<'py, PyAny>, target: &str) -> PyResult<Bound<'py, PyAny>> {
    fir.getattr("_definitions")?.get_item(target)?.get_item(0)
}

/// Whether a NumPy dtype is plain numbers in native byte order (bool, integers, floats,
/// complex): what a global array or scalar can be captured as bytes of.
fn plain_dtype(dtype: &Bound<'_, PyAny>) -> PyResult<bool> {
    let kind: String = dtype.getattr("kind")?.extract()?;
    let native: bool = dtype.getattr("isnative")?.extract()?;
    Ok(native && ["b", "i", "u", "f", "c", "M", "m"].contains(&kind.as_str()))
}

/// The bytes of a `tobytes()` result, shared by every load of the capture.
fn bytes_of(bytes: &Bound<'_, PyAny>) -> PyResult<std::sync::Arc<[u8]>> {
    Ok(bytes
        .cast::<PyBytes>()
        .map_err(PyErr::from)?
        .as_bytes()
        .into())
}

/// A NumPy scalar (`np.int32(0)`, `np.bool_(True)`, `np.complex64(1j)`) as a constant of
/// its own dtype (a 0-d capture of its bytes); `None` for anything else. A dtype numba-rs
/// cannot compile (float16, datetimes, strings, non-native byte order) is `Unsupported`.
fn numpy_scalar(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Option<GlobalKind>> {
    let ty = value.get_type();
    let module: String = ty
        .getattr("__module__")
        .and_then(|m| m.extract())
        .unwrap_or_default();
    if module != "numpy" || !value.is_instance(&py.import("numpy")?.getattr("generic")?)? {
        return Ok(None);
    }
    let dtype = value.getattr("dtype")?;
    let name: String = dtype.getattr("name")?.extract()?;
    if !plain_dtype(&dtype)? {
        return Ok(Some(GlobalKind::Unsupported {
            message: format!(
                "Cannot determine Numba type of <class 'numpy.{name}'>: numba-rs does not \
                 support NumPy scalars of dtype {name} yet"
            ),
        }));
    }
    // (Which plain dtypes compile, float16 not among them, typing decides.)
    let itemsize: usize = dtype.getattr("itemsize")?.extract()?;
    let data = bytes_of(&value.call_method0("tobytes")?)?;
    let scalar =
        numba_ir::ConstArray::new(name, itemsize, Vec::new(), numba_ir::ArrayLayout::C, data)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(Some(GlobalKind::Scalar(scalar)))
}

/// An `enum.Enum` subclass whose members all have int values (what Numba supports).
fn enum_class(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Option<GlobalKind>> {
    let Ok(cls) = value.cast::<pyo3::types::PyType>() else {
        return Ok(None);
    };
    let enum_mod = py.import("enum")?;
    if !cls.is_subclass(&enum_mod.getattr("Enum")?)? {
        return Ok(None);
    }
    let int_enum = cls.is_subclass(&enum_mod.getattr("IntEnum")?)?;
    let mut members = Vec::new();
    for m in value.try_iter()? {
        let m = m?;
        let name: String = m.getattr("name")?.extract()?;
        match m.getattr("value")?.extract::<i64>() {
            Ok(v) if !m.getattr("value")?.is_instance_of::<PyBool>() => members.push((name, v)),
            _ => return Ok(None),
        }
    }
    Ok(Some(GlobalKind::EnumClass {
        name: cls.name()?.to_string(),
        key: boxing::register_class(value)?,
        members,
        int_enum,
    }))
}

/// A global frozen as a constant: numbers (IntEnum members are ints), strings, None, and
/// tuples of these. `None` for anything else.
fn constant_of(value: &Bound<'_, PyAny>) -> PyResult<Option<Constant>> {
    Ok(Some(if value.is_instance_of::<PyBool>() {
        Constant::Bool(value.extract()?)
    } else if value.is_instance_of::<PyInt>() {
        match value.extract::<i64>() {
            Ok(i) => Constant::Int(i),
            // 2**63 up to 2**64 - 1: marshal's form of a big int (typed uint64).
            Err(_) => match value.extract::<u64>() {
                Ok(mut u) => {
                    let mut digits = Vec::new();
                    while u > 0 {
                        digits.push((u & 0x7fff) as u16);
                        u >>= 15;
                    }
                    Constant::BigInt {
                        negative: false,
                        digits,
                    }
                }
                Err(_) => return Ok(None),
            },
        }
    } else if value.is_instance_of::<PyFloat>() {
        Constant::Float(value.extract()?)
    } else if let Ok(c) = value.cast::<PyComplex>() {
        Constant::Complex(c.real(), c.imag())
    } else if value.is_instance_of::<PyString>() {
        Constant::Str(value.extract()?)
    } else if value.is_none() {
        Constant::None
    } else if value.is(value.py().Ellipsis()) {
        Constant::Ellipsis
    } else if value.get_type().is(value.py().get_type::<PyTuple>()) {
        let mut items = Vec::new();
        for item in value.try_iter()? {
            match constant_of(&item?)? {
                Some(c) => items.push(c),
                None => return Ok(None),
            }
        }
        Constant::Tuple(items)
    } else {
        return Ok(None);
    }))
}

/// The names a function reads: its globals (and builtins) by name, and the values of its
/// closure cells by index.
struct PyGlobals {
    table: HashMap<String, Global>,
    freevars: Vec<Global>,
}

impl GlobalResolver for PyGlobals {
    fn resolve_global(&self, name: &str) -> Global {
        self.table.resolve_global(name)
    }

    fn resolve_attr(&self, module: &str, attr: &str) -> Option<Global> {
        Python::attach(|py| {
            let m = py.import(module).ok()?;
            let v = m.getattr(attr).ok()?;
            classify(py, &v).ok()
        })
    }

    fn resolve_freevar(&self, index: usize, name: &str) -> Global {
        self.freevars
            .get(index)
            .cloned()
            .unwrap_or_else(|| self.table.resolve_global(name))
    }
}

/// All `co_names` of a code object and its nested code objects.
fn all_names(code: &CodeObject) -> HashSet<String> {
    let mut names: HashSet<String> = code.names.iter().cloned().collect();
    for c in code.nested_code() {
        names.extend(c.names.iter().cloned());
    }
    names
}

impl FunctionSource for PySource {
    fn host(&self) -> Option<&(dyn std::any::Any + Send + Sync)> {
        Some(self)
    }

    fn inline_cost_model(&self, site: &numba_dispatch::InlineSite<'_>) -> Result<bool, String> {
        let Some(model) = &self.inline_model else {
            return Err("no inline cost model".into());
        };
        Python::attach(|py| {
            let run = || -> PyResult<bool> {
                // Numba's cost model reads the caller's untyped IR (whose Python function
                // numba-rs does not keep: its globals come from the frozen constants) and
                // the callee's, this function's.
                let caller = irview::function_ir(py, site.caller, None)?;
                let callee = irview::function_ir(py, site.callee, Some(self.func.bind(py)))?;
                let expr = call_expr(&caller, site.caller.var_name(site.target))?;
                model.bind(py).call1((expr, caller, callee))?.is_truthy()
            };
            run().map_err(|e| e.to_string())
        })
    }

    fn literal_args(&self) -> numba_typeinfer::extension::LiteralArgs {
        self.literal_args
    }

    fn overload_inline(&self, args: &[TypeId]) -> numba_dispatch::InlineOption {
        use numba_dispatch::InlineOption;
        let Some(generate) = &self.generate else {
            return InlineOption::Never;
        };
        Python::attach(|py| {
            let option = self
                .overload_option(py, generate.bind(py), args)
                .ok()
                .flatten();
            match option {
                None => InlineOption::Never,
                Some(o) => match o.extract::<String>().ok().as_deref() {
                    Some("always") => InlineOption::Always,
                    Some(_) => InlineOption::Never,
                    None => InlineOption::CostModel,
                },
            }
        })
    }

    fn overload_cost_model(
        &self,
        site: &numba_dispatch::TypedInlineSite<'_>,
    ) -> Result<bool, String> {
        let Some(generate) = &self.generate else {
            return Err("no inline cost model".into());
        };
        Python::attach(|py| {
            self.ask_overload_cost_model(py, generate.bind(py), site)
                .map_err(|e| e.to_string())
        })
    }

    fn parameters(&self) -> Result<numba_dispatch::Parameters, String> {
        Python::attach(|py| -> PyResult<numba_dispatch::Parameters> {
            let func = self.func.bind(py);
            let code = func.getattr("__code__")?;
            let n: usize = code.getattr("co_argcount")?.extract()?;
            let names: Vec<String> = code.getattr("co_varnames")?.extract()?;
            let mut defaults = Vec::new();
            let d = func.getattr("__defaults__")?;
            if !d.is_none() {
                for v in d.try_iter()? {
                    let v = v?;
                    let c = constant_of(&v)?.ok_or_else(|| {
                        PyValueError::new_err(format!(
                            "default value {} is not a constant numba-rs supports",
                            v.repr().map(|r| r.to_string()).unwrap_or_default()
                        ))
                    })?;
                    defaults.push(c);
                }
            }
            let flags: u32 = code.getattr("co_flags")?.extract()?;
            let k: usize = code.getattr("co_kwonlyargcount")?.extract()?;
            let kwdefaults = func.getattr("__kwdefaults__")?;
            let mut kwonly = Vec::with_capacity(k);
            for name in names.iter().skip(n).take(k) {
                let default = if kwdefaults.is_none() {
                    None
                } else {
                    match kwdefaults.get_item(name) {
                        Ok(v) => Some(constant_of(&v)?.ok_or_else(|| {
                            PyValueError::new_err(format!(
                                "default value {} is not a constant numba-rs supports",
                                v.repr().map(|r| r.to_string()).unwrap_or_default()
                            ))
                        })?),
                        Err(_) => None,
                    }
                };
                kwonly.push((name.clone(), default));
            }
            Ok(numba_dispatch::Parameters {
                names: names.into_iter().take(n).collect(),
                defaults,
                star: flags & numba_bytecode::code::CO_VARARGS != 0,
                kwonly,
            })
        })
        .map_err(|e| e.to_string())
    }

    fn module(&self) -> String {
        Python::attach(|py| {
            self.func
                .bind(py)
                .getattr("__module__")
                .and_then(|m| m.extract::<String>())
                .unwrap_or_else(|_| "__main__".into())
        })
    }

    fn load(&self) -> Result<(CodeObject, Box<dyn GlobalResolver>), String> {
        Python::attach(|py| self.load_function(py, self.func.bind(py))).map_err(|e| e.to_string())
    }

    fn cache_fingerprint(&self) -> Option<String> {
        if self.generate.is_some() {
            return None;
        }
        Python::attach(|py| -> PyResult<String> {
            py.import("numba_rs.caching")?
                .call_method1("fingerprint", (self.func.bind(py),))?
                .extract()
        })
        .ok()
    }

    fn source_file(&self) -> Option<std::path::PathBuf> {
        Python::attach(|py| -> PyResult<String> {
            self.func
                .bind(py)
                .getattr("__code__")?
                .getattr("co_filename")?
                .extract()
        })
        .ok()
        .map(std::path::PathBuf::from)
    }

    fn load_for(&self, args: &[TypeId]) -> Result<(CodeObject, Box<dyn GlobalResolver>), String> {
        let Some(generate) = &self.generate else {
            return self.load();
        };
        Python::attach(|py| {
            let run = || -> PyResult<_> {
                let items = typeobj::py_types(py, args)?;
                let func = generate.bind(py).call1((PyTuple::new(py, items)?,))?;
                self.load_function(py, &func)
            };
            run().map_err(|e| {
                // A typing function asking for literal arguments (`SentryLiteralArgs`,
                // Numba's `ForceLiteralArg`): passed on as a request, not a failure.
                let requested = e.value(py).getattr("requested_args").and_then(|r| {
                    r.try_iter()?
                        .map(|i| i?.extract())
                        .collect::<PyResult<Vec<usize>>>()
                });
                match requested {
                    Ok(mut idx) if !idx.is_empty() => {
                        idx.sort_unstable();
                        let text: Vec<String> = idx.iter().map(|i| i.to_string()).collect();
                        format!("{}{}", numba_dispatch::FORCE_LITERAL_PREFIX, text.join(","))
                    }
                    _ => e.to_string(),
                }
            })
        })
    }
}

impl PySource {
    /// Run an overload's cost model on a typed call site: `(expr, caller_info,
    /// callee_info)`, as Numba calls it.
    fn ask_overload_cost_model<'py>(
        &self,
        py: Python<'py>,
        generate: &Bound<'py, PyAny>,
        site: &numba_dispatch::TypedInlineSite<'_>,
    ) -> PyResult<bool> {
        let Some(model) = self.overload_option(py, generate, site.args)? else {
            return Err(PyRuntimeError::new_err("no inline cost model"));
        };
        let items = typeobj::py_types(py, site.args)?;
        let implementation = generate.call1((PyTuple::new(py, items)?,))?;
        let helper = py.import("numba_rs.inlining")?;
        let types = py.import("numba_rs.types")?;
        let signature = types.getattr("Signature")?.call1((
            typeobj::py_type(py, site.ret)?,
            PyTuple::new(py, typeobj::py_types(py, site.args)?)?,
        ))?;
        let info = |fir: Bound<'py, PyAny>, tm: Bound<'py, PyAny>| -> PyResult<Bound<'py, PyAny>> {
            helper
                .getattr("InlineInfo")?
                .call1((fir, tm, PyDict::new(py), signature.clone()))
        };
        let caller = irview::function_ir(py, site.caller, None)?;
        let expr = call_expr(&caller, site.caller.var_name(site.target))?;
        let caller_types = irview::typemap(py, site.caller, site.caller_types)?;
        let caller_info = info(caller, caller_types.into_any())?;
        let callee = irview::function_ir(py, site.callee, Some(&implementation))?;
        let callee_types = match site.callee_types {
            Some(t) => irview::typemap(py, site.callee, t)?.into_any(),
            None => PyDict::new(py).into_any(),
        };
        let callee_info = info(callee, callee_types)?;
        model.call1((expr, caller_info, callee_info))?.is_truthy()
    }

    /// The `inline=` option of an overload's implementation for these argument types
    /// (`'always'`, `'never'` or a cost model), asked of its generator's `inline_for`;
    /// None when the generator has none.
    fn overload_option<'py>(
        &self,
        py: Python<'py>,
        generate: &Bound<'py, PyAny>,
        args: &[TypeId],
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Ok(inline_for) = generate.getattr("inline_for") else {
            return Ok(None);
        };
        let items = typeobj::py_types(py, args)?;
        let option = inline_for.call1((PyTuple::new(py, items)?,))?;
        Ok((!option.is_none()).then_some(option))
    }

    /// The code object of `func` and a resolver for the names it reads as globals.
    fn load_function(
        &self,
        py: Python<'_>,
        func: &Bound<'_, PyAny>,
    ) -> PyResult<(CodeObject, Box<dyn GlobalResolver>)> {
        let code_obj = func.getattr("__code__")?;
        let marshal = py.import("marshal")?;
        let data = marshal.call_method1("dumps", (code_obj,))?;
        let bytes = data
            .cast::<PyBytes>()
            .map_err(PyErr::from)?
            .as_bytes()
            .to_vec();
        let code = numba_bytecode::marshal::read_code(&bytes)
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let globals = func.getattr("__globals__")?;
        let globals = globals.cast::<PyDict>().map_err(PyErr::from)?;
        let builtins = py.import("builtins")?;
        let mut table: HashMap<String, Global> = HashMap::new();
        for name in all_names(&code) {
            let value = match globals.get_item(&name)? {
                Some(v) => Some(v),
                None => builtins.getattr(name.as_str()).ok(),
            };
            if let Some(v) = value {
                table.insert(name, classify_in(py, &v, self.parallel)?);
            } else if let Some((id, own)) = self.this.get().filter(|(_, own)| *own == name) {
                let repr = format!("CPUDispatcher(<function {own}>)");
                table.insert(
                    name,
                    Global {
                        kind: GlobalKind::Dispatcher {
                            id: *id,
                            name: own.clone(),
                        },
                        repr,
                    },
                );
            }
        }
        // A jitted closure's free variables are frozen from its cells, as Numba does.
        let mut freevars = Vec::new();
        if let Ok(cells) = func.getattr("__closure__") {
            if !cells.is_none() {
                let names = code.freevars();
                for (i, cell) in cells.try_iter()?.enumerate() {
                    let g = match cell?.getattr("cell_contents") {
                        Ok(v) => classify_in(py, &v, self.parallel)?,
                        // An empty cell holding the function itself (a recursive inner
                        // function compiled at decoration): its own dispatcher.
                        Err(_) => match self.this.get() {
                            Some((id, own)) if names.get(i) == Some(own) => Global {
                                kind: GlobalKind::Dispatcher {
                                    id: *id,
                                    name: own.clone(),
                                },
                                repr: format!("CPUDispatcher(<function {own}>)"),
                            },
                            _ => Global {
                                kind: GlobalKind::Undefined,
                                repr: "Undefined".into(),
                            },
                        },
                    };
                    freevars.push(g);
                }
            }
        }
        Ok((code, Box::new(PyGlobals { table, freevars })))
    }
}

pyo3::import_exception!(numba_rs.errors, TypingError);
pyo3::import_exception!(numba_rs.errors, UnsupportedError);
pyo3::import_exception!(numba_rs.errors, UnsupportedBytecodeError);
pyo3::import_exception!(numba_rs.errors, UnsupportedRewriteError);
pyo3::import_exception!(numba_rs.errors, NumbaValueError);
pyo3::import_exception!(numba_rs.errors, LiteralTypingError);
pyo3::import_exception!(numba_rs.errors, LoweringError);

fn to_py_err(e: CompileError) -> PyErr {
    let text = e.to_string();
    // No compiled signature accepts the arguments and compiling is disabled: Numba's
    // dispatcher raises TypeError.
    if e.function.is_none() && e.message.starts_with("No matching definition") {
        return PyTypeError::new_err(text);
    }
    match e.kind {
        ErrorKind::Typing => TypingError::new_err(text),
        ErrorKind::Unsupported => UnsupportedError::new_err(text),
        ErrorKind::UnsupportedBytecode => UnsupportedBytecodeError::new_err(text),
        ErrorKind::UnsupportedRewrite => UnsupportedRewriteError::new_err(text),
        ErrorKind::Value => NumbaValueError::new_err(text),
        ErrorKind::Internal => PySystemError::new_err(text),
        ErrorKind::Dispatch => PyTypeError::new_err(text),
        ErrorKind::NotImplemented => pyo3::exceptions::PyNotImplementedError::new_err(text),
        ErrorKind::Lowering => LoweringError::new_err(text),
    }
}

/// One parallel loop as the reports list it: (loop id, source line, pattern, the id of
/// the loop it was fused into).
type ParallelLoop = (usize, u32, String, Option<usize>);

/// NumPy scalar types by their `dtype.name`, typed as that dtype (Numba's typeof).
fn typeof_numpy_scalar(v: &Bound<'_, PyAny>) -> PyResult<Option<TypeId>> {
    let ty = v.get_type();
    let module: String = ty.getattr("__module__")?.extract().unwrap_or_default();
    if module != "numpy" || !v.hasattr("dtype")? {
        return Ok(None);
    }
    let name: String = v.getattr("dtype")?.getattr("name")?.extract()?;
    if name == "float16" {
        return Err(TypingError::new_err(
            "Cannot determine numba-rs type of <class 'numpy.float16'>: float16 is not \
             supported by numba-rs",
        ));
    }
    Ok(types::from_name(&name)
        .filter(|t| t.is_scalar())
        .or_else(|| numba_typeinfer::npdatetime::parse(&name)))
}

/// The numba-rs type of an argument value, or a TypingError: exact-type fast paths, then
/// the fingerprint cache, then [`typeof_slow`] ([`fingerprint`]).
fn typeof_arg(v: &Bound<'_, PyAny>) -> PyResult<TypeId> {
    fingerprint::typeof_arg(v, typeof_slow)
}

/// The typecode of a typed `Dict`/`List` argument that has its types (the fingerprint's
/// key for it: the type follows from the object alone).
fn typed_container_code(v: &Bound<'_, PyAny>) -> Option<u32> {
    dicts::typeof_dict(v)
        .or_else(|| typed_list::typeof_list(v))
        .or_else(|| jitclass::typeof_instance(v))?
        .ok()
        .map(|t| t.0)
}

/// The numba-rs type of an argument value from its Python attributes (every kind of
/// value; the fast paths and the fingerprint cache give the same answers sooner).
fn typeof_slow(v: &Bound<'_, PyAny>) -> PyResult<TypeId> {
    // Exact int first: the hot path, and an IntEnum member (an int subclass) is typed as
    // its enum below.
    if v.is_exact_instance_of::<PyInt>() {
        Ok(types::INT64)
    } else if v.is_instance_of::<PyBool>() {
        Ok(types::BOOLEAN)
    } else if v.is_exact_instance_of::<PyFloat>() {
        Ok(types::FLOAT64)
    } else if v.is_none() {
        Ok(types::NONE)
    } else if let Some(GlobalKind::EnumClass {
        name,
        key,
        int_enum,
        ..
    }) = enum_class(v.py(), v.get_type().as_any())?
    {
        Ok(types::intern(types::Type::EnumMember {
            name,
            class: key,
            int_enum,
        }))
    } else if v.is_instance_of::<PyInt>() {
        Ok(types::INT64)
    } else if v.is_instance_of::<PyFloat>() {
        Ok(types::FLOAT64)
    } else if v.is_instance_of::<PyComplex>() {
        Ok(types::COMPLEX128)
    } else if v.is_none() {
        Ok(types::NONE)
    } else if v.is(v.py().Ellipsis()) {
        // `...` passed in (an index built by the caller): known by its type.
        Ok(types::intern(types::Type::Ellipsis))
    } else if let Ok(d) = v.cast::<Dispatcher>() {
        // A jitted function passed as an argument: known by its type alone.
        let d = d.borrow();
        Ok(types::intern(types::Type::Dispatcher {
            id: d.core.id,
            name: d.core.name.clone(),
        }))
    } else if let Ok(g) = v.cast::<generator::NativeGenerator>() {
        Ok(g.borrow().gen_type())
    } else if let Some(t) = dicts::typeof_dict(v) {
        t
    } else if let Some(t) = typed_list::typeof_list(v) {
        t
    } else if let Some(t) = jitclass::typeof_instance(v) {
        t
    } else if v.is_instance_of::<pyo3::types::PySlice>() {
        // Numba's slice2_type / slice3_type: a step of None or 1 is a two-member slice.
        let step = v.getattr("step")?;
        let unit = step.is_none() || step.extract::<i64>().is_ok_and(|s| s == 1);
        let n = if unit { 2 } else { 3 };
        Ok(types::intern(types::Type::Slice(n)))
    } else if let Ok(t) = v.cast::<PyTuple>() {
        let items = t
            .iter()
            .map(|x| typeof_arg(&x))
            .collect::<PyResult<Vec<_>>>()?;
        let cls = v.get_type();
        if cls.is(v.py().get_type::<PyTuple>()) {
            return Ok(types::tuple_of(&items));
        }
        // A namedtuple: its fields name the attributes; the class rebuilds results.
        let fields: Vec<String> = cls.getattr("_fields")?.extract()?;
        let name: String = cls.getattr("__name__")?.extract()?;
        let key = boxing::register_class(cls.as_any())?;
        Ok(types::namedtuple_of(&name, &key, &fields, &items))
    } else if v.is_instance_of::<PyString>() {
        Ok(types::UNICODE)
    } else if v.is_instance_of::<PyBytes>() {
        Ok(types::BYTES)
    } else if let Ok(l) = v.cast::<pyo3::types::PyList>() {
        // Numba's typeof of a list: a reflected list of its first item's type.
        let Ok(first) = l.get_item(0) else {
            return Err(TypingError::new_err("can't infer type of empty list"));
        };
        let dtype = typeof_arg(&first)?;
        if !numba_typeinfer::lists::storable(dtype) {
            return Err(TypingError::new_err(format!(
                "lists of {dtype} are not supported by numba-rs yet"
            )));
        }
        Ok(types::intern(types::Type::List {
            dtype,
            reflected: true,
            typed: false,
        }))
    } else if let Ok(s) = v.cast::<pyo3::types::PySet>() {
        // Numba's typeof of a set: a reflected set of its first item's type.
        let Some(first) = s.iter().next() else {
            return Err(TypingError::new_err("can't infer type of empty set"));
        };
        let dtype = typeof_arg(&first)?;
        if !numba_typeinfer::sets::hashable(dtype) {
            return Err(TypingError::new_err(format!(
                "sets of {dtype} are not supported by numba-rs yet"
            )));
        }
        Ok(types::intern(types::Type::Set {
            dtype,
            reflected: true,
        }))
    } else if let Some(t) = typeof_ndarray(v)? {
        Ok(t)
    } else if let Some(t) = records::typeof_void(v)? {
        Ok(t)
    } else if let Some(t) = npgen::typeof_generator(v)? {
        Ok(t)
    } else if let Some(t) = typeof_numpy_scalar(v)? {
        Ok(t)
    } else if let Some(t) = typeof_number_class(v)? {
        Ok(t)
    } else if let Some(found) = c_function(v.py(), v).or_else(|| {
        // A `cfunc` object: the C function its `ctypes` pointer stands for. Known by its
        // class: a failed attribute lookup on the argument would make an AttributeError
        // holding a reference to it.
        let ty = v.get_type();
        let is_cfunc = ty.name().is_ok_and(|n| n == "CFunc")
            && ty
                .module()
                .is_ok_and(|m| m.to_str().is_ok_and(|m| m == "numba_rs.cfunc"));
        is_cfunc
            .then(|| v.getattr("ctypes").ok())
            .flatten()
            .and_then(|p| c_function(v.py(), &p))
    }) {
        // A C function passed as an argument: typed by its signature alone, so one
        // specialisation serves every function of that signature.
        let (_, _, signature) = found.map_err(TypingError::new_err)?;
        let (ret, args) =
            numba_typeinfer::parse_signature(&signature).map_err(TypingError::new_err)?;
        Ok(types::intern(types::Type::ExternalFunctionPointer {
            args,
            ret: ret.unwrap_or(types::NONE),
        }))
    } else if let Some(code) = py_user_type(v)? {
        Ok(TypeId(code))
    } else if let Some(t) = ndarray::buffer_view(v)?
        .map(|a| typeof_ndarray(&a))
        .transpose()?
        .flatten()
    {
        // `bytearray`, `memoryview`, `array.array`: an array over the buffer (uint8 for
        // bytes-like ones, the format's dtype otherwise; read-only where the buffer is).
        Ok(t)
    } else {
        let tn = v.get_type().name()?.to_string();
        Err(TypingError::new_err(format!(
            "Cannot determine numba-rs type of <class '{tn}'>"
        )))
    }
}

/// A NumPy scalar class (`np.int32`) or a plain dtype (`np.dtype('f4')`) passed as an
/// argument: Numba's `NumberClass` / `DType` of its number type (known by the type).
fn typeof_number_class(v: &Bound<'_, PyAny>) -> PyResult<Option<TypeId>> {
    let py = v.py();
    let Ok(np) = py.import("numpy") else {
        return Ok(None);
    };
    let dtype_cls = np.getattr("dtype")?;
    let (dtype, class) = if let Ok(cls) = v.cast::<pyo3::types::PyType>() {
        if !cls.is_subclass(&np.getattr("generic")?)? {
            return Ok(None);
        }
        (dtype_cls.call1((v,))?, true)
    } else if v.is_instance(&dtype_cls)? && v.getattr("names")?.is_none() {
        (v.clone(), false)
    } else {
        return Ok(None);
    };
    let name: String = dtype.getattr("name")?.extract()?;
    let Some(t) = types::from_name(&name).or_else(|| numba_typeinfer::npdatetime::parse(&name))
    else {
        return Ok(None);
    };
    Ok(Some(types::intern(if class {
        types::Type::NumberClass(t)
    } else {
        types::Type::DType(t)
    })))
}

/// The type of a value of a user's class (`typeof_impl`, or Numba's own when Numba is
/// loaded), when `numba_rs._usertypes` knows one.
fn py_user_type(v: &Bound<'_, PyAny>) -> PyResult<Option<u32>> {
    let py = v.py();
    // Only once the extension API is in use: plain programs never pay for the import.
    let Some(m) = py
        .import("sys")?
        .getattr("modules")?
        .get_item("numba_rs._usertypes")
        .ok()
    else {
        return Ok(None);
    };
    m.call_method1("_typecode_of_value", (v,))?.extract()
}

/// `Array(dtype, ndim, layout, readonly)` of a NumPy array (numba-facts §3.2), read through
/// its Python attributes; `None` for anything that is not an `ndarray`.
fn typeof_ndarray(v: &Bound<'_, PyAny>) -> PyResult<Option<TypeId>> {
    let ty = v.get_type();
    let name = ty.name()?;
    if !(name == "ndarray" || name == "recarray") || !v.hasattr("__array_interface__")? {
        return Ok(None);
    }
    let np_dtype = v.getattr("dtype")?;
    // A structured dtype: an array of records.
    if !np_dtype.getattr("names")?.is_none() {
        let dtype = records::record_type(&np_dtype)?;
        return Ok(Some(array_type_of(v, dtype)?));
    }
    let dtype_name: String = np_dtype.getattr("name")?.extract()?;
    // Numba rejects these too: numba-rs reads elements in native order and has no
    // float16 arithmetic.
    let native: bool = np_dtype.getattr("isnative")?.extract()?;
    if !native || dtype_name == "float16" {
        let what = if native {
            "float16 arrays are".to_string()
        } else {
            format!("arrays in non-native byte order ({}) are", np_dtype.str()?)
        };
        return Err(TypingError::new_err(format!(
            "Cannot determine numba-rs type of an array of dtype {dtype_name}: {what} not \
             supported by numba-rs"
        )));
    }
    // Character data: `S8` items are `[char x 8]`, `<U8` items `[unichr x 8]`.
    let char_kind: String = np_dtype.getattr("kind")?.extract()?;
    let dtype = match char_kind.as_str() {
        "S" | "U" => {
            let itemsize: u32 = np_dtype.getattr("itemsize")?.extract()?;
            if char_kind == "S" {
                types::intern(types::Type::CharSeq(itemsize))
            } else {
                types::intern(types::Type::UnicodeCharSeq(itemsize / 4))
            }
        }
        _ => types::from_name(&dtype_name)
            .or_else(|| numba_typeinfer::npdatetime::parse(&dtype_name))
            .ok_or_else(|| {
                TypingError::new_err(format!("Unsupported array dtype: {dtype_name}"))
            })?,
    };
    array_type_of(v, dtype).map(Some)
}

/// `Array(dtype, ndim, layout, readonly)` of the array `v` whose dtype types as `dtype`.
fn array_type_of(v: &Bound<'_, PyAny>, dtype: TypeId) -> PyResult<TypeId> {
    let ndim: u32 = v.getattr("ndim")?.extract()?;
    let flags = v.getattr("flags")?;
    let layout = if flags.getattr("c_contiguous")?.is_truthy()? {
        types::Layout::C
    } else if flags.getattr("f_contiguous")?.is_truthy()? {
        types::Layout::F
    } else {
        types::Layout::A
    };
    let readonly = !flags.getattr("writeable")?.is_truthy()?;
    Ok(types::intern(types::Type::Array {
        dtype,
        ndim,
        layout,
        readonly,
    }))
}

/// The Python exception a native function raised (its `ExcInfo`).
pub(crate) fn raise_native(py: Python<'_>, exc: *const ExcInfo) -> PyErr {
    // SAFETY: a non-OK status from generated code leaves a record (or null) not read yet.
    let raised = unsafe { ExcInfo::take(exc) };
    let build = || -> PyResult<PyErr> {
        let cls = boxing::class_by_key(py, &raised.class)?;
        let mut args = Vec::with_capacity(raised.arg_types.len());
        let mut pos = 0usize;
        for &t in &raised.arg_types {
            // Constant arguments travel as literal types, with no slots.
            if t.is_literal() {
                args.push(boxing::literal_value(py, t)?);
                continue;
            }
            let v = match numba_lower::boundary_shape(t) {
                Ok(shape) => boxing::decode(py, &raised.slots, &mut pos, &shape)?,
                Err(_) => py.None(),
            };
            args.push(v);
        }
        let inst = cls.call1(PyTuple::new(py, args)?)?;
        Ok(PyErr::from_value(inst))
    };
    build().unwrap_or_else(|e| e)
}

/// The dispatcher object behind `@njit`: compiles per argument-type tuple and calls.
#[pyclass(module = "numba_rs", frozen, subclass)]
struct Dispatcher {
    /// The vectorcall entry ([`call::vectorcall`]), at the offset the class's
    /// `tp_vectorcall_offset` names.
    vectorcall: pyo3::ffi::vectorcallfunc,
    core: Arc<numba_dispatch::Dispatcher>,
    py_func: Py<PyAny>,
    /// Parameter names and defaults, for binding keyword and omitted arguments.
    params: call::Params,
    /// Release the GIL while native code runs.
    nogil: bool,
    /// Whether specialisations may be compiled in object mode (arguments no type
    /// describes are then typed `pyobject`).
    object_mode: numba_dispatch::ObjectMode,
}

impl Dispatcher {
    /// The Python object for a loop lifted out of `py_func` (an object-mode function):
    /// called by its object-mode code with the loop's inputs. It is a
    /// `numba_rs.dispatcher.LiftedLoop`, so it has a dispatcher's Python API.
    pub(crate) fn lifted(
        py: Python<'_>,
        id: u64,
        py_func: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let kwargs = PyDict::new(py);
        kwargs.set_item("_lifted_core", id)?;
        Ok(py
            .import("numba_rs.dispatcher")?
            .getattr("LiftedLoop")?
            .call((py_func,), Some(&kwargs))?
            .unbind())
    }

    /// The dispatcher of lifted loop `id` (registered by numba-dispatch).
    fn for_lifted(py: Python<'_>, id: u64, py_func: Py<PyAny>) -> PyResult<Dispatcher> {
        let core = numba_dispatch::lookup_dispatcher(id).ok_or_else(|| {
            UnsupportedError::new_err("internal error: lifted loop not registered")
        })?;
        let names = core.parameters().map(|p| p.names).unwrap_or_default();
        Ok(Dispatcher {
            vectorcall: call::vectorcall,
            core,
            py_func,
            params: call::Params::positional(py, &names),
            nogil: false,
            // A lifted loop takes any object (untypeable inputs are `pyobject`, and the
            // loop then compiles in object mode, as Numba's LiftedLoop falls back).
            object_mode: numba_dispatch::ObjectMode::Force,
        })
    }
}

/// The Python error for a panic caught at the boundary.
fn internal_error(p: &Box<dyn std::any::Any + Send>) -> PyErr {
    let msg = p
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    UnsupportedError::new_err(format!("internal compiler error in numba-rs: {msg}"))
}

/// The target every dispatcher of this module compiles for (its typing context, rewrites
/// and CPU back end); held by each dispatcher as a value.
static TARGET: LazyLock<Arc<Target>> = LazyLock::new(|| Arc::new(Target::default()));

fn signature_key(py: Python<'_>, tys: &[TypeId]) -> PyResult<Py<PyTuple>> {
    Ok(PyTuple::new(py, typeobj::py_types(py, tys)?)?.unbind())
}

impl Dispatcher {
    /// Numba's TypeError for an explicit signature with the wrong number of arguments.
    fn check_signature_length(&self, given: usize) -> PyResult<()> {
        let takes = self.params.count();
        // Object mode reads its arguments as objects, whatever types a signature gives.
        if given == takes || self.object_mode != numba_dispatch::ObjectMode::Never {
            return Ok(());
        }
        Err(PyTypeError::new_err(format!(
            "Signature mismatch: {given} argument types given, but function takes {takes} arguments"
        )))
    }

    /// The specialisation compiled for exactly the argument types of `signature` (a tuple
    /// of types), or KeyError.
    fn overload(&self, signature: &Bound<'_, PyAny>) -> PyResult<Arc<CompiledFunction>> {
        let mut tys = Vec::new();
        for t in signature.try_iter()? {
            tys.push(TypeId(t?.cast::<Type>().map_err(PyErr::from)?.get().code));
        }
        self.core
            .lookup(&tys)
            .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err((signature.clone().unbind(),)))
    }

    /// `text(o)` for every specialisation as a dict keyed by argument types, or for the one
    /// `signature` names.
    fn per_overload(
        &self,
        py: Python<'_>,
        signature: Option<&Bound<'_, PyAny>>,
        text: impl Fn(&CompiledFunction) -> PyResult<String>,
    ) -> PyResult<Py<PyAny>> {
        if let Some(sig) = signature {
            let o = self.overload(sig)?;
            return Ok(PyString::new(py, &text(&o)?).into_any().unbind());
        }
        let d = PyDict::new(py);
        for o in self.core.overloads() {
            d.set_item(signature_key(py, &o.arg_types)?, text(&o)?)?;
        }
        Ok(d.into_any().unbind())
    }

    /// One list of `parallel=True` facts of the specialisation `signature` names, or of
    /// every specialisation, concatenated.
    fn parallel_facts<T: Clone>(
        &self,
        signature: Option<&Bound<'_, PyAny>>,
        facts: impl Fn(&CompiledFunction) -> &Vec<T>,
    ) -> PyResult<Vec<T>> {
        Ok(match signature {
            Some(sig) => facts(&*self.overload(sig)?).clone(),
            None => self
                .core
                .overloads()
                .iter()
                .flat_map(|o| facts(o).clone())
                .collect(),
        })
    }

    /// Issue the compile warnings of `c` (once per specialisation, whichever path
    /// compiled it), at the function's file and the warning's line.
    fn warn_for(&self, py: Python<'_>, c: &Arc<CompiledFunction>) -> PyResult<()> {
        if c.warnings.is_empty() {
            return Ok(());
        }
        let filename: Option<String> = self
            .py_func
            .bind(py)
            .getattr("__code__")
            .and_then(|c| c.getattr("co_filename"))
            .and_then(|f| f.extract())
            .ok();
        issue_warnings(py, c, filename.as_deref())
    }

    /// The specialisation for `tys` through `resolve` (which looks up first), compiling
    /// or converting on a miss.
    /// The specialisation for a call's arguments, compiled if needed. A function that
    /// asks for some arguments as literals (`literally`) is compiled for their values'
    /// literal types: the types it was compiled for are returned when they changed.
    fn compiled_for_call(
        &self,
        py: Python<'_>,
        tys: &[TypeId],
        args: &[*mut pyo3::ffi::PyObject],
    ) -> PyResult<(Arc<CompiledFunction>, Option<Vec<TypeId>>)> {
        let mut cur = tys.to_vec();
        let mut changed = false;
        loop {
            match self.resolve_detached(py, &cur)? {
                Ok(c) => {
                    self.after_compile(py, &c)?;
                    return Ok((c, changed.then_some(cur)));
                }
                Err(e) if !e.force_literal.is_empty() => {
                    let mut progress = false;
                    for &i in &e.force_literal {
                        let Some(&p) = args.get(i).filter(|p| !p.is_null()) else {
                            return Err(to_py_err(e));
                        };
                        // SAFETY: a borrowed argument the caller holds for the call.
                        let v = unsafe { Borrowed::from_ptr(py, p) };
                        let lit = literal_type_of(&v)?;
                        if cur[i] != lit {
                            cur[i] = lit;
                            progress = true;
                        }
                    }
                    if !progress {
                        return Err(to_py_err(e));
                    }
                    changed = true;
                }
                Err(e) => return Err(to_py_err(e)),
            }
        }
    }

    /// Resolve (compiling if needed) with the GIL released: compiling reattaches only
    /// to read the function's code and globals, and threads that wait for another
    /// thread's compilation of the same signature must not hold it.
    fn resolve_detached(
        &self,
        py: Python<'_>,
        tys: &[TypeId],
    ) -> PyResult<Result<Arc<CompiledFunction>, CompileError>> {
        let core = self.core.clone();
        let r = py.detach(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| core.resolve(tys)))
        });
        r.map_err(|p| internal_error(&p))
    }

    /// A new specialisation's warnings.
    fn after_compile(&self, py: Python<'_>, c: &Arc<CompiledFunction>) -> PyResult<()> {
        self.warn_for(py, c)?;
        if self.nogil && c.object_env.is_some() {
            // Object-mode code calls the C API: it keeps the GIL (Numba's warning).
            let cat = py.import("numba_rs.errors")?.getattr("NumbaWarning")?;
            py.import("warnings")?.call_method1(
                "warn",
                (
                    "Code running in object mode won't allow parallel execution despite nogil=True.",
                    cat,
                    3,
                ),
            )?;
        }
        Ok(())
    }
}

/// The literal type of a value `literally` asks for (an int, a bool or a str), or
/// Numba's LiteralTypingError naming the value's class.
fn literal_type_of(v: &Bound<'_, PyAny>) -> PyResult<TypeId> {
    if v.is_instance_of::<PyBool>() {
        return Ok(types::intern(types::Type::BooleanLiteral(v.is_truthy()?)));
    }
    if v.is_instance_of::<PyInt>() {
        if let Ok(i) = v.extract::<i64>() {
            return Ok(types::intern(types::Type::IntegerLiteral(i)));
        }
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(types::intern(types::Type::StringLiteral(s.to_string())));
    }
    if let Ok(s) = v.cast::<pyo3::types::PySlice>() {
        // Numba's SliceLiteral; a bound beyond int64 is typeof's ValueError.
        let part = |name: &str| -> PyResult<Option<i64>> {
            let x = s.getattr(name)?;
            if x.is_none() {
                return Ok(None);
            }
            x.extract::<i64>().map(Some).map_err(|e| {
                if x.is_instance_of::<PyInt>() {
                    pyo3::exceptions::PyValueError::new_err(format!("Int value is too large: {x}"))
                } else {
                    e
                }
            })
        };
        let (a, b, c) = (part("start")?, part("stop")?, part("step")?);
        return Ok(types::intern(types::Type::SliceLiteral(a, b, c)));
    }
    let cls = v.get_type();
    let module: String = cls.getattr("__module__")?.extract().unwrap_or_default();
    let name: String = cls.getattr("__qualname__")?.extract()?;
    Err(LiteralTypingError::new_err(format!(
        "Cannot request literal type for a value of type {module}.{name}: only int, bool \
         and str values have literal types"
    )))
}

#[pymethods]
impl Dispatcher {
    /// `fastmath` is the flag bits (`numba_lower::fastmath`), `error_model` `'python'` or
    /// `'numpy'`; the Python decorators validate and translate the user's options.
    #[new]
    /// `wrappers` asks every specialisation for foreign entry points: `"ufunc"` (a NumPy
    /// inner loop), `"gufunc"` (with `core_dims`, each argument's core dimension indices)
    /// or `"cfunc"` (the C ABI); see `numba_lower::wrappers`.
    #[pyo3(signature = (py_func, signatures=None, fastmath=0, error_model="python", nogil=false, boundscheck=None, parallel=None, wrappers=None, core_dims=None, locals=None, object_mode="never", looplift=true, cache=None, inline=None, _lifted_core=None, _generate=None, _literal_args=None, nrt=true, no_rewrites=false, _target="cpu"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        py_func: Py<PyAny>,
        signatures: Option<Vec<String>>,
        fastmath: u32,
        error_model: &str,
        nogil: bool,
        boundscheck: Option<bool>,
        parallel: Option<Vec<(String, bool)>>,
        wrappers: Option<&str>,
        core_dims: Option<Vec<Vec<usize>>>,
        locals: Option<Vec<(String, String)>>,
        object_mode: &str,
        looplift: bool,
        cache: Option<(String, String, String)>,
        inline: Option<Py<PyAny>>,
        _lifted_core: Option<u64>,
        _generate: Option<Py<PyAny>>,
        _literal_args: Option<&str>,
        nrt: bool,
        no_rewrites: bool,
        _target: &str,
    ) -> PyResult<Self> {
        let code_target = match _target {
            "cpu" => numba_dispatch::CodeTarget::Cpu,
            "cuda" => numba_dispatch::CodeTarget::Cuda,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown code target {other:?} (expected 'cpu' or 'cuda')"
                )))
            }
        };
        let literal_args = match _literal_args {
            None | Some("never") => numba_typeinfer::extension::LiteralArgs::Never,
            Some("fallback") => numba_typeinfer::extension::LiteralArgs::Fallback,
            Some("prefer") => numba_typeinfer::extension::LiteralArgs::Prefer,
            Some(other) => {
                return Err(PyValueError::new_err(format!(
                    "_literal_args must be 'never', 'fallback' or 'prefer', not {other:?}"
                )))
            }
        };
        if let Some(id) = _lifted_core {
            return Dispatcher::for_lifted(py, id, py_func);
        }
        let object_mode = match object_mode {
            "never" => numba_dispatch::ObjectMode::Never,
            "force" => numba_dispatch::ObjectMode::Force,
            other => {
                return Err(PyValueError::new_err(format!(
                    "object_mode must be 'never' or 'force', not {other:?}"
                )))
            }
        };
        // `locals={'c': 'int64'}`: each declared type as signature text.
        let locals = locals
            .unwrap_or_default()
            .into_iter()
            .map(|(name, text)| {
                let (_, args) = numba_typeinfer::parse_signature(&format!("({text},)"))
                    .map_err(TypingError::new_err)?;
                match args.as_slice() {
                    [t] => Ok((name, *t)),
                    _ => Err(TypingError::new_err(format!(
                        "locals: {text:?} is not one type"
                    ))),
                }
            })
            .collect::<PyResult<Vec<_>>>()?;
        let wrappers = match wrappers {
            None => numba_lower::Wrappers::default(),
            Some("ufunc") => numba_lower::Wrappers {
                ufunc: true,
                ..Default::default()
            },
            Some("gufunc") => numba_lower::Wrappers {
                gufunc: Some(core_dims.unwrap_or_default()),
                ..Default::default()
            },
            Some("cfunc") => numba_lower::Wrappers {
                cfunc: true,
                ..Default::default()
            },
            Some("cfunc_raises") => numba_lower::Wrappers {
                cfunc: true,
                cfunc_raises: true,
                ..Default::default()
            },
            Some(other) => {
                return Err(PyValueError::new_err(format!(
                    "unknown wrapper kind {other:?}"
                )))
            }
        };
        // `parallel=True` or a dict, as (option, enabled) pairs the decorator checked.
        let parallel = parallel
            .map(|pairs| {
                numba_parfor::ParforOptions::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), *v)))
            })
            .transpose()
            .map_err(PyValueError::new_err)?;
        let name: String = py_func.bind(py).getattr("__qualname__")?.extract()?;
        let short: String = py_func.bind(py).getattr("__name__")?.extract()?;
        let this = Arc::new(std::sync::OnceLock::new());
        let error_model = match error_model {
            "python" => numba_lower::ErrorModel::Python,
            "numpy" => numba_lower::ErrorModel::Numpy,
            other => {
                return Err(PyValueError::new_err(format!(
                    "error_model must be 'python' or 'numpy', not {other:?}"
                )))
            }
        };
        // `inline=`: 'never' (the default), 'always' or a cost model, as Numba's
        // `InlineOptions` checks it.
        let (inline, inline_model) = match inline {
            None => (numba_dispatch::InlineOption::Never, None),
            Some(v) => {
                let b = v.bind(py);
                match b.extract::<String>().ok().as_deref() {
                    Some("never") => (numba_dispatch::InlineOption::Never, None),
                    Some("always") => (numba_dispatch::InlineOption::Always, None),
                    _ if !b.is_instance_of::<PyString>() && b.is_callable() => {
                        (numba_dispatch::InlineOption::CostModel, Some(v))
                    }
                    _ => {
                        return Err(PyValueError::new_err(format!(
                            "kwarg 'inline' must be one of the strings 'always' or 'never', \
                             or it can be a callable that returns True/False. Found value {}",
                            b.repr()?
                        )))
                    }
                }
            }
        };
        let generated = _generate.is_some();
        let core = numba_dispatch::register_with(
            &name,
            Box::new(PySource {
                func: py_func.clone_ref(py),
                this: this.clone(),
                generate: _generate,
                // `parallel={'stencil': False}` keeps the stencils it calls serial.
                parallel: parallel.is_some_and(|p| p.stencil),
                inline_model,
                literal_args,
            }),
            TARGET.clone(),
            JitOptions {
                fastmath,
                error_model,
                boundscheck,
                parallel,
                wrappers,
                locals,
                object_mode,
                no_looplift: !looplift,
                nogil,
                generated,
                no_nrt: !nrt,
                no_rewrites,
                // `cache=True`: the directory, file stem and source file numba_rs.caching
                // chose.
                cache: cache.map(|(dir, stem, source)| numba_dispatch::cache::CacheSite {
                    dir: dir.into(),
                    stem,
                    source: source.into(),
                }),
                inline,
                code_target,
            },
        );
        let _ = this.set((core.id, short));
        core.set_display(py_func.bind(py).repr()?.to_string());
        let params = call::Params::read(
            py_func.bind(py),
            object_mode != numba_dispatch::ObjectMode::Never,
        )?;
        let d = Dispatcher {
            vectorcall: call::vectorcall,
            core,
            py_func,
            params,
            nogil,
            object_mode,
        };
        for s in signatures.unwrap_or_default() {
            let (ret, args) = numba_typeinfer::parse_signature(&s).map_err(TypingError::new_err)?;
            d.check_signature_length(args.len())?;
            let c = d.core.compile_explicit(ret, &args).map_err(to_py_err)?;
            d.warn_for(py, &c)?;
        }
        Ok(d)
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        call::call_tuple(self, py, args, kwargs)
    }

    /// Install the vectorcall entry on this object's class (idempotent; the Python
    /// subclass calls it from `__init__`).
    fn _enable_vectorcall(slf: &Bound<'_, Self>) {
        call::enable_vectorcall(slf);
    }

    /// The on-disk cache's counts (Numba's `stats.cache_hits` and `cache_misses`): two
    /// lists of (argument types, count).
    fn _cache_stats(&self, py: Python<'_>) -> PyResult<(Counts, Counts)> {
        let s = self.core.cache_stats();
        let conv = |v: Vec<(Vec<TypeId>, usize)>| -> PyResult<Counts> {
            v.into_iter()
                .map(|(args, n)| Ok((typeobj::py_types(py, &args)?, n)))
                .collect()
        };
        Ok((conv(s.hits)?, conv(s.misses)?))
    }

    /// Compile-time metadata per specialisation, as Numba's `get_metadata`: a dict keyed
    /// by argument types (or just the one asked for) whose `pipeline_times` maps each
    /// pass to seconds.
    #[pyo3(signature = (signature=None))]
    fn get_metadata(
        &self,
        py: Python<'_>,
        signature: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let all = PyDict::new(py);
        for o in self.core.overloads() {
            let times = PyDict::new(py);
            for (name, d) in &o.timings {
                times.set_item(name, d.as_secs_f64())?;
            }
            let meta = PyDict::new(py);
            meta.set_item("pipeline_times", times)?;
            meta.set_item("symbol", &o.symbol)?;
            all.set_item(signature_key(py, &o.arg_types)?, meta)?;
        }
        match signature {
            None => Ok(all.into_any().unbind()),
            Some(sig) => all
                .get_item(sig)?
                .map(|m| m.unbind())
                .ok_or_else(|| PyTypeError::new_err("no specialisation for that signature")),
        }
    }

    /// The parallel loops of every specialisation (or of the one `signature` names):
    /// (loop id, source line, pattern, the id of the loop it was fused into or None).
    #[pyo3(signature = (signature=None))]
    fn _parallel_loops(&self, signature: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<ParallelLoop>> {
        self.parallel_facts(signature, |o| &o.parallel_loops)
    }

    /// The fusions of parallel loops tried in every specialisation (or in the one
    /// `signature` names): (first loop, second loop, Numba's report line).
    #[pyo3(signature = (signature=None))]
    fn _fusion_reports(
        &self,
        signature: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<(usize, usize, String)>> {
        self.parallel_facts(signature, |o| &o.fusion_reports)
    }

    /// The parallel loops nested in each parallel loop's body, in every specialisation
    /// (or in the one `signature` names): (outer loop id, inner loop ids).
    #[pyo3(signature = (signature=None))]
    fn _nested_parfors(
        &self,
        signature: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<(usize, Vec<usize>)>> {
        self.parallel_facts(signature, |o| &o.nested_parfors)
    }

    /// Allocations hoisted out of parallel loops in every specialisation (or in the one
    /// `signature` names): (loop id, source line, allocating function).
    #[pyo3(signature = (signature=None))]
    fn _hoisted_allocations(
        &self,
        signature: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<(usize, u32, String)>> {
        self.parallel_facts(signature, |o| &o.hoisted_allocations)
    }

    /// Argument types of every compiled specialisation.
    #[getter]
    fn signatures(&self, py: Python<'_>) -> PyResult<Vec<Py<PyTuple>>> {
        self.core
            .signatures()
            .into_iter()
            .map(|sig| Ok(PyTuple::new(py, typeobj::py_types(py, &sig)?)?.unbind()))
            .collect()
    }

    /// The dispatcher's id (its type's key in the compiler: `types.Dispatcher`).
    #[getter]
    fn _id(&self) -> u64 {
        self.core.id
    }

    #[getter]
    fn py_func(&self, py: Python<'_>) -> Py<PyAny> {
        self.py_func.clone_ref(py)
    }

    /// The final (optimised) LLVM IR of each specialisation, keyed by argument types, or
    /// of the one `signature` (a tuple of argument types) names, as Numba's
    /// `inspect_llvm` gives its library's final module.
    #[pyo3(signature = (signature=None))]
    fn inspect_llvm(
        &self,
        py: Python<'_>,
        signature: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        self.per_overload(py, signature, |o| Ok(o.optimized_ir.to_string()))
    }

    /// The host assembly of each specialisation (or of the one `signature` names),
    /// generated on demand from its optimised module.
    #[pyo3(signature = (signature=None))]
    fn inspect_asm(
        &self,
        py: Python<'_>,
        signature: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        self.per_overload(py, signature, |o| match &o.assembly {
            // Made when compiled: a kernel's PTX, or NUMBA_DUMP_ASSEMBLY's text.
            Some(text) => Ok(text.clone()),
            None => numba_lower::assembly_of(&o.optimized_ir)
                .map_err(|e| PyRuntimeError::new_err(e.to_string())),
        })
    }

    /// The annotated typed IR of one specialisation (the text between
    /// `NUMBA_DUMP_ANNOTATION`'s header and closing rule), for `inspect_types`.
    fn _type_annotation(&self, signature: &Bound<'_, PyAny>) -> PyResult<String> {
        let o = self.overload(signature)?;
        let text = o.type_annotation.get().unwrap_or_default();
        let mut lines: Vec<&str> = text.lines().collect();
        if lines.first().is_some_and(|l| l.contains("ANNOTATION")) {
            lines.remove(0);
        }
        if lines
            .last()
            .is_some_and(|l| !l.is_empty() && l.chars().all(|c| c == '='))
        {
            lines.pop();
        }
        Ok(lines.join("\n"))
    }

    /// The loops lifted out of one (object-mode) specialisation: their dispatchers, as its
    /// code calls them.
    fn _lifted<'py>(
        &self,
        py: Python<'py>,
        signature: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let o = self.overload(signature)?;
        let Some(env) = &o.object_env else {
            return Ok(PyTuple::empty(py));
        };
        if env.lifted.is_empty() {
            return Ok(PyTuple::empty(py));
        }
        objmode::ensure_env(py, &o, self.py_func.bind(py))?;
        // SAFETY: the cell holds the environment tuple just made (or made before).
        let tuple = unsafe { Borrowed::from_ptr(py, *(env.cell as *mut *mut pyo3::ffi::PyObject)) };
        Ok(tuple.get_item(3)?.cast_into::<PyTuple>()?)
    }

    /// The first source line of a lifted loop (`None` for a function).
    fn _first_line(&self) -> Option<u32> {
        self.core.first_line()
    }

    /// One specialisation's final IR as Python objects (Numba's `metadata['preserved_ir']`):
    /// what lowering saw, without the dels (Numba preserves the IR before it inserts
    /// them). None for a specialisation loaded from the cache.
    fn _preserved_ir<'py>(
        &self,
        py: Python<'py>,
        signature: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let c = self.overload(signature)?;
        let Some(typed) = &c.typed_ir else {
            return Ok(None);
        };
        let mut ir = typed.0.clone();
        for block in ir.blocks.values_mut() {
            block
                .body
                .retain(|i| !matches!(i.stmt, numba_ir::Stmt::Del { .. }));
        }
        irview::function_ir(py, &ir, Some(self.py_func.bind(py))).map(Some)
    }

    /// The return type of one specialisation.
    fn _return_type(&self, signature: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        typeobj::py_type(signature.py(), self.overload(signature)?.return_type)
    }

    /// Run one specialisation directly, without dispatch (an overload's `entry_point`).
    /// Each argument must be of, or convert to, the specialisation's argument type.
    #[pyo3(signature = (signature, *args))]
    fn _run_overload(
        &self,
        py: Python<'_>,
        signature: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
    ) -> PyResult<Py<PyAny>> {
        let c = self.overload(signature)?;
        if args.len() != c.arg_types.len() {
            return Err(PyTypeError::new_err(format!(
                "{}() takes {} positional arguments but {} were given",
                self.core.name,
                c.arg_types.len(),
                args.len()
            )));
        }
        for (a, &want) in args.iter().zip(&c.arg_types) {
            let got = typeof_arg(&a)?;
            // A str or bytes passed for a character-array item is stored into one.
            let text_item = matches!(
                want.get(),
                types::Type::CharSeq(_) | types::Type::UnicodeCharSeq(_)
            ) && (got == types::UNICODE || got == types::BYTES);
            if got != want && !text_item && numba_typeinfer::conv::can_convert(got, want).is_none()
            {
                return Err(PyTypeError::new_err(format!(
                    "{}: an argument of type {got} cannot be passed as {want}",
                    self.core.name
                )));
            }
        }
        let ptrs: Vec<*mut pyo3::ffi::PyObject> = args.iter().map(|a| a.as_ptr()).collect();
        let mut slots = boxing::Slots::new();
        // No argument is marked builtin: each converts through its shape.
        crate::objmode::ensure_env(py, &c, self.py_func.bind(py))?;
        let views = self.encode_args(py, &c, &ptrs, &c.arg_types, 0, &mut slots)?;
        let nogil = self.nogil && c.object_env.is_none();
        let out = call::run_entry(py, &self.core.name, &c, &slots, nogil);
        if let Some(mark) = views {
            ndarray::keep_release(py, mark);
        }
        let out = out?;
        generator::keep_args_alive(py, &out, &ptrs)?;
        Ok(out)
    }

    /// The foreign entry points of one specialisation (argument types as a tuple):
    /// `(ufunc loop address, cfunc address, return type)`, 0 for one not built.
    fn _wrapper_addresses(
        &self,
        signature: &Bound<'_, PyAny>,
    ) -> PyResult<(usize, usize, Py<PyAny>)> {
        let o = self.overload(signature)?;
        Ok((
            o.wrappers.ufunc_loop,
            o.wrappers.cfunc,
            typeobj::py_type(signature.py(), o.return_type)?,
        ))
    }

    /// Whether a call with new argument types may compile (Numba's `_can_compile`).
    #[getter]
    fn _can_compile(&self) -> bool {
        self.core.can_compile()
    }

    /// Numba's `disable_compile(val=True)`: afterwards a call with argument types not
    /// compiled yet converts to a compiled signature or raises TypeError.
    #[pyo3(signature = (val=true))]
    fn disable_compile(&self, val: bool) {
        self.core.disable_compile(val);
    }

    /// Numba's `recompile()`: every existing signature compiled again, reading the
    /// globals afresh.
    fn recompile(&self) -> PyResult<()> {
        self.core.recompile().map_err(to_py_err)
    }

    /// Compile one signature given as text (`"f8(f8)"`, `"(int64,)"`) now, leaving whether
    /// later calls may compile unchanged; returns its argument types.
    fn _compile_text(&self, py: Python<'_>, text: &str) -> PyResult<Py<PyTuple>> {
        let (ret, args) = numba_typeinfer::parse_signature(text).map_err(TypingError::new_err)?;
        self.check_signature_length(args.len())?;
        let c = self.core.compile_signature(ret, &args).map_err(to_py_err)?;
        self.warn_for(py, &c)?;
        signature_key(py, &c.arg_types)
    }

    fn __repr__(&self) -> String {
        format!("CPUDispatcher(<function {}>)", self.core.name)
    }
}

/// `(alloc, free, mi_alloc, mi_free)` of the NRT.
#[pyfunction]
fn allocation_stats() -> (usize, usize, usize, usize) {
    let s = numba_nrt::allocation_stats();
    (s.alloc, s.free, s.mi_alloc, s.mi_free)
}

/// The type object for a type name (`int64`, `float64`, `bool`, ...).
#[pyfunction]
fn type_from_name(py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
    let t = types::from_name(name)
        .ok_or_else(|| PyTypeError::new_err(format!("unknown type {name}")))?;
    typeobj::py_type(py, t)
}

/// A signature string's return type (None when it gives only the arguments) and
/// argument types (`"f8(i8, f8[:])"`).
#[pyfunction]
fn parse_signature(py: Python<'_>, text: &str) -> PyResult<ParsedSignature> {
    let (ret, args) = numba_typeinfer::parse_signature(text).map_err(TypingError::new_err)?;
    Ok((
        ret.map(|r| typeobj::py_type(py, r)).transpose()?,
        typeobj::py_types(py, &args)?,
    ))
}

/// `dis.dis`-style listing of a code object given as `marshal.dumps(code)` bytes, from the
/// Rust front end (`numba_bytecode::listing`), optionally followed by Numba's CFG dump.
#[pyfunction]
#[pyo3(signature = (marshalled, cfg = false))]
fn dis_text(marshalled: &[u8], cfg: bool) -> PyResult<String> {
    let code = numba_bytecode::marshal::read_code(marshalled)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut text =
        numba_bytecode::listing::dis(&code).map_err(|e| PyValueError::new_err(e.to_string()))?;
    if cfg {
        let analysed = numba_bytecode::ByteCode::decode(code)
            .and_then(|bc| numba_bytecode::flow::analyze(&bc));
        match analysed {
            Ok(df) => text.push_str(&df.cfg.numba_dump()),
            Err(e) => return Err(PyValueError::new_err(e.to_string())),
        }
    }
    Ok(text)
}

/// The numba-rs type of a value, for `numba_rs.typeof`.
#[pyfunction(name = "typeof")]
fn typeof_value(v: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    typeobj::py_type(v.py(), typeof_arg(v)?)
}

/// `print(...)` in jitted code: decode the values and call Python's `print`, so the text
/// and `sys.stdout` are CPython's. Native code may run without the GIL (`nogil=True`), so
/// this attaches to the interpreter first.
unsafe extern "C" fn print_hook(types: *const u32, n: u64, slots: *const u64, end: u32) {
    Python::attach(|py| {
        // SAFETY: generated code passes n typecodes and the slots their shapes take.
        let tys = unsafe { std::slice::from_raw_parts(types, n as usize) };
        let shapes: Vec<Option<numba_lower::Shape>> = tys
            .iter()
            .map(|&t| numba_lower::boundary_shape(TypeId(t)).ok())
            .collect();
        let total: usize = shapes.iter().flatten().map(|s| s.slots()).sum();
        // SAFETY: as above.
        let slots = unsafe { std::slice::from_raw_parts(slots, total) };
        let run = || -> PyResult<()> {
            let mut pos = 0;
            let mut args = Vec::with_capacity(shapes.len());
            for s in &shapes {
                args.push(match s {
                    Some(s) => boxing::decode(py, slots, &mut pos, s)?,
                    None => py.None(),
                });
            }
            // `end=" "` only for the pieces of a print a user's type splits.
            let kwargs = if end == numba_lower::runtime::PRINT_END_SPACE {
                let k = pyo3::types::PyDict::new(py);
                k.set_item("end", " ")?;
                Some(k)
            } else {
                None
            };
            py.import("builtins")?
                .getattr("print")?
                .call(PyTuple::new(py, args)?, kwargs.as_ref())?;
            Ok(())
        };
        if let Err(e) = run() {
            // Native code cannot take a Python exception from print: report it.
            e.print(py);
        }
    });
}

/// `except Class:` in jitted code: `issubclass` on the Python classes behind the keys.
unsafe extern "C" fn exc_match_hook(
    raised: *const std::ffi::c_char,
    class: *const std::ffi::c_char,
) -> bool {
    Python::attach(|py| {
        // SAFETY: generated code passes NUL-terminated class keys.
        let (r, c) = unsafe {
            (
                std::ffi::CStr::from_ptr(raised).to_string_lossy(),
                std::ffi::CStr::from_ptr(class).to_string_lossy(),
            )
        };
        let test = || -> PyResult<bool> {
            let r = boxing::class_by_key(py, &r)?;
            let c = boxing::class_by_key(py, &c)?;
            r.cast::<pyo3::types::PyType>()?.is_subclass(&c)
        };
        test().unwrap_or(false)
    })
}

/// Issue a specialisation's compile warnings once (as Python warnings of Numba's
/// categories, from `numba_rs.errors`): at their source line in `filename` when they
/// have one (Numba's carry their location), else at the caller.
fn issue_warnings(
    py: Python<'_>,
    c: &Arc<CompiledFunction>,
    filename: Option<&str>,
) -> PyResult<()> {
    static ISSUED: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());
    let key = Arc::as_ptr(c) as usize;
    {
        let mut done = ISSUED.lock().unwrap_or_else(|e| e.into_inner());
        if done.contains(&key) {
            return Ok(());
        }
        done.push(key);
    }
    let errors = py.import("numba_rs.errors")?;
    let warnings = py.import("warnings")?;
    for w in &c.warnings {
        let cat = errors
            .getattr(w.category.as_str())
            .or_else(|_| errors.getattr("NumbaWarning"))?;
        match filename {
            Some(f) if w.line > 0 => {
                warnings.call_method1("warn_explicit", (w.message.as_str(), cat, f, w.line))?;
            }
            _ => {
                warnings.call_method1("warn", (w.message.as_str(), cat, 3))?;
            }
        }
    }
    Ok(())
}

/// A signature's return type (if given) and argument types, as Python type objects.
type ParsedSignature = (Option<Py<PyAny>>, Vec<Py<PyAny>>);

/// Counts by argument types (the cache's hits or misses).
type Counts = Vec<(Vec<Py<PyAny>>, usize)>;

/// Name this build for the on-disk cache (numba_rs passes its extension file's stamp):
/// cache files another build wrote are ignored.
#[pyfunction]
fn _set_cache_compiler(id: String) {
    numba_dispatch::cache::set_compiler_id(id);
}

/// Give the compiled code CPython's string-hash key, so `hash(s)` and the order of string
/// sets agree with the interpreter's under any `PYTHONHASHSEED`.
fn install_hash_secret() {
    extern "C" {
        // CPython's `_Py_HashSecret_t`: its SipHash view is two 64-bit keys first.
        static _Py_HashSecret: [u64; 3];
    }
    // SAFETY: the interpreter defines the secret before any extension module loads, and
    // never changes it afterwards.
    let [k0, k1, _] = unsafe { _Py_HashSecret };
    numba_lower::strings::set_hash_secret(k0, k1);
}

/// Start LLVM's one-time set-up on a thread of its own, at the lowest priority, while the
/// package's Python modules import (`NUMBA_RS_WARMUP=0` turns it off).
fn start_warm_up() {
    if std::env::var("NUMBA_RS_WARMUP").map_or(true, |v| v != "0") {
        numba_lower::jit::warm_up_in_background(|| {
            LazyLock::force(&TARGET);
        });
    }
}

/// Where libdevice's bitcode is (`numba_rs.cuda` finds it): kernels calling math
/// functions link it.
#[pyfunction]
#[pyo3(name = "_set_libdevice")]
fn set_libdevice(path: String) {
    numba_lower::cuda::set_libdevice_path(path.into());
}

/// Wait for LLVM's background warm-up (registered to run before `os.fork`).
#[pyfunction]
#[pyo3(name = "_join_warm_up")]
fn join_warm_up(py: Python<'_>) {
    py.detach(numba_lower::jit::join_warm_up);
}

#[pymodule]
fn _numba_rs(m: &Bound<'_, PyModule>) -> PyResult<()> {
    numba_nrt::tune_malloc();
    install_hash_secret();
    numba_lower::runtime::set_print_hook(print_hook);
    numba_lower::runtime::set_adopt_hook(dicts::adopt_hook);
    numba_lower::runtime::set_exc_match_hook(exc_match_hook);
    numba_lower::runtime::set_error_report_hook(ufunc::error_report_hook);
    numba_nrt::parallel::set_parallel_ufunc_done_hook(ufunc::parallel_ufunc_done);
    objmode::install();
    npgen::install();
    ufunc::register(m)?;
    objloop::register(m)?;
    m.add_class::<Dispatcher>()?;
    m.add_class::<Type>()?;
    m.add_class::<boxing::MemInfoView>()?;
    m.add_class::<generator::NativeGenerator>()?;
    m.add_class::<dicts::TypedDict>()?;
    m.add_class::<typed_list::TypedList>()?;
    m.add_class::<jitclass::InstanceBase>()?;
    m.add_class::<jitclass::FieldDescriptor>()?;
    m.add_function(wrap_pyfunction!(jitclass::_jitclass_register, m)?)?;
    m.add_function(wrap_pyfunction!(jitclass::_jitclass_set_fields, m)?)?;
    m.add_function(wrap_pyfunction!(jitclass::_structref_register, m)?)?;
    m.add_function(wrap_pyfunction!(jitclass::_class_set_proxy, m)?)?;
    m.add_function(wrap_pyfunction!(jitclass::_jitclass_set_constructor, m)?)?;
    parallel::register(m)?;
    m.add_function(wrap_pyfunction!(allocation_stats, m)?)?;
    m.add_function(wrap_pyfunction!(type_from_name, m)?)?;
    m.add_function(wrap_pyfunction!(typeobj::_type_info, m)?)?;
    m.add_function(wrap_pyfunction!(typeobj::_type_make, m)?)?;
    m.add_function(wrap_pyfunction!(typeobj::_class_by_key, m)?)?;
    m.add_function(wrap_pyfunction!(extending::_register_overload, m)?)?;
    m.add_function(wrap_pyfunction!(extending::_declare_member, m)?)?;
    numba_typeinfer::extension::install(Box::new(extending::PyTemplates));
    numba_lower::external::install(Box::new(extending::PyCodegen));
    m.add_function(wrap_pyfunction!(extending::_llvm_type_desc, m)?)?;
    m.add_function(wrap_pyfunction!(usertypes::_register_user_members, m)?)?;
    m.add_function(wrap_pyfunction!(usertypes::_slot_codec, m)?)?;
    m.add_function(wrap_pyfunction!(parse_signature, m)?)?;
    m.add_function(wrap_pyfunction!(typeof_value, m)?)?;
    m.add_function(wrap_pyfunction!(dis_text, m)?)?;
    m.add_function(wrap_pyfunction!(fingerprint::compute_fingerprint, m)?)?;
    m.add_function(wrap_pyfunction!(_set_cache_compiler, m)?)?;
    m.add_function(wrap_pyfunction!(join_warm_up, m)?)?;
    m.add_function(wrap_pyfunction!(set_libdevice, m)?)?;
    start_warm_up();
    Ok(())
}
