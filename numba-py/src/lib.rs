//! # numba-py
//!
//! The `numba_rs` Python module: thin pyo3 glue over numba-dispatch. It owns everything that
//! needs a Python interpreter and nothing else: reading a function's `__code__` (through
//! `marshal`) and `__globals__`, `typeof` of live argument values, unboxing arguments into
//! native slots and boxing results, and turning compile errors and native exceptions into
//! Python exceptions. No compiler logic lives here.
//!
//! Entry points (Python): `numba_rs._numba_rs.Dispatcher(py_func, signatures)` (wrapped by
//! `numba_rs.njit` / `numba_rs.jit`), `numba_rs._numba_rs.typeof_name(value)`, and the NRT
//! counters behind `numba_rs.runtime.rtsys.get_allocation_stats()`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use numba_bytecode::{CodeObject, Constant};
use numba_dispatch::{CompileError, ErrorKind, FunctionSource};
use numba_ir::{Global, GlobalKind, GlobalResolver};
use numba_lower::{CompiledFunction, ExcInfo, STATUS_OK};
use numba_typeinfer::types::{self, TypeId};
use pyo3::exceptions::{PyOverflowError, PyRuntimeError, PySystemError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyModule, PyString, PyTuple};
use smallvec::SmallVec;

/// A function's source: the Python function object, read under the GIL when compiling.
struct PySource {
    func: Py<PyAny>,
}

fn classify(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Global> {
    let repr = value.repr()?.to_string();
    let mk = |kind| {
        Ok(Global {
            kind,
            repr: repr.clone(),
        })
    };
    if let Ok(d) = value.cast::<Dispatcher>() {
        let d = d.borrow();
        return mk(GlobalKind::Dispatcher {
            id: d.core.id,
            name: d.core.name.clone(),
        });
    }
    if value.is_instance_of::<PyBool>() {
        return mk(GlobalKind::Const(Constant::Bool(value.extract()?)));
    }
    if value.is_instance_of::<PyInt>() {
        return match value.extract::<i64>() {
            Ok(i) => mk(GlobalKind::Const(Constant::Int(i))),
            Err(_) => mk(GlobalKind::Opaque {
                type_name: "int".into(),
            }),
        };
    }
    if value.is_instance_of::<PyFloat>() {
        return mk(GlobalKind::Const(Constant::Float(value.extract()?)));
    }
    if value.is_instance_of::<PyString>() {
        return mk(GlobalKind::Const(Constant::Str(value.extract()?)));
    }
    if value.is_none() {
        return mk(GlobalKind::Const(Constant::None));
    }
    if value.is_instance_of::<PyModule>() {
        let name: String = value.getattr("__name__")?.extract()?;
        return mk(GlobalKind::Module(name));
    }
    let builtins = py.import("builtins")?;
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
            && module.as_deref() == Some("builtins")
        {
            return mk(GlobalKind::ExceptionClass(name));
        }
        if module.as_deref() == Some("builtins")
            && builtins.getattr(name.as_str()).is_ok_and(|b| b.is(value))
        {
            return mk(GlobalKind::Builtin(name));
        }
        if let Some(m) = module {
            if m == "math" || m == "cmath" {
                return mk(GlobalKind::ModuleFunction { module: m, name });
            }
        }
    }
    let type_name = value.get_type().name()?.to_string();
    mk(GlobalKind::Opaque { type_name })
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
    fn load(&self) -> Result<(CodeObject, Box<dyn GlobalResolver>), String> {
        Python::attach(|py| -> PyResult<(CodeObject, Box<dyn GlobalResolver>)> {
            let func = self.func.bind(py);
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
                    table.insert(name, classify(py, &v)?);
                }
            }
            Ok((code, Box::new(table)))
        })
        .map_err(|e| e.to_string())
    }
}

pyo3::import_exception!(numba_rs.errors, TypingError);
pyo3::import_exception!(numba_rs.errors, UnsupportedError);

fn to_py_err(e: CompileError) -> PyErr {
    let text = e.to_string();
    match e.kind {
        ErrorKind::Typing => TypingError::new_err(text),
        ErrorKind::Unsupported => UnsupportedError::new_err(text),
        ErrorKind::Internal => PySystemError::new_err(text),
    }
}

/// A numba-rs type, printing as Numba prints it.
#[pyclass(module = "numba_rs.types", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash, Clone)]
struct Type {
    code: u32,
}

#[pymethods]
impl Type {
    fn __repr__(&self) -> String {
        TypeId(self.code).to_string()
    }
    fn __str__(&self) -> String {
        TypeId(self.code).to_string()
    }
    /// The typecode (index in the process-wide type table).
    #[getter]
    fn typecode(&self) -> u32 {
        self.code
    }
    /// `float64(int64, int64)` builds a signature string, as in `@njit(float64(int64))`.
    #[pyo3(signature = (*args))]
    fn __call__(&self, args: &Bound<'_, PyTuple>) -> PyResult<String> {
        let mut names = Vec::new();
        for a in args.iter() {
            let t = a.cast::<Type>().map_err(PyErr::from)?;
            names.push(TypeId(t.get().code).to_string());
        }
        Ok(format!("{}({})", TypeId(self.code), names.join(", ")))
    }
}

/// The numba-rs type of an argument value, or a TypingError.
fn typeof_arg(v: &Bound<'_, PyAny>) -> PyResult<TypeId> {
    if v.is_instance_of::<PyBool>() {
        Ok(types::BOOLEAN)
    } else if v.is_instance_of::<PyInt>() {
        Ok(types::INT64)
    } else if v.is_instance_of::<PyFloat>() {
        Ok(types::FLOAT64)
    } else if v.is_instance_of::<PyString>() {
        Ok(types::UNICODE)
    } else if let Some(t) = typeof_ndarray(v)? {
        Ok(t)
    } else {
        let tn = v.get_type().name()?.to_string();
        Err(TypingError::new_err(format!(
            "Cannot determine numba-rs type of <class '{tn}'>: only int, float and bool arguments are supported yet"
        )))
    }
}

/// `Array(dtype, ndim, layout, readonly)` of a NumPy array (numba-facts §3.2), read through
/// its Python attributes; `None` for anything that is not an `ndarray`.
fn typeof_ndarray(v: &Bound<'_, PyAny>) -> PyResult<Option<TypeId>> {
    let ty = v.get_type();
    if ty.name()? != "ndarray" || !v.hasattr("__array_interface__")? {
        return Ok(None);
    }
    let dtype_name: String = v.getattr("dtype")?.getattr("name")?.extract()?;
    let dtype = types::from_name(&dtype_name).ok_or_else(|| {
        TypingError::new_err(format!(
            "Cannot determine numba-rs type of an array of dtype {dtype_name}"
        ))
    })?;
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
    Ok(Some(types::intern(types::Type::Array {
        dtype,
        ndim,
        layout,
        readonly,
    })))
}

fn unbox(v: &Bound<'_, PyAny>, t: TypeId) -> PyResult<u64> {
    Ok(match t {
        types::BOOLEAN => u64::from(v.is_truthy()?),
        types::FLOAT64 | types::FLOAT32 => v.extract::<f64>()?.to_bits(),
        types::UINT64 => v.extract::<u64>()?,
        t if t.is_integer() => {
            let i: i64 = v
                .extract()
                .map_err(|_| PyOverflowError::new_err("int too big to convert"))?;
            i as u64
        }
        t => return Err(TypingError::new_err(format!("cannot pass a value as {t}"))),
    })
}

fn box_result(py: Python<'_>, raw: u64, t: TypeId) -> PyResult<Py<PyAny>> {
    Ok(match t {
        types::NONE => py.None(),
        types::BOOLEAN => PyBool::new(py, raw & 1 == 1).to_owned().into_any().unbind(),
        types::FLOAT64 => f64::from_bits(raw).into_pyobject(py)?.into_any().unbind(),
        types::FLOAT32 => f32::from_bits(raw as u32)
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        types::UINT64 => raw.into_pyobject(py)?.into_any().unbind(),
        t if t.is_integer() => {
            let bits = t.bitwidth();
            let v = ((raw << (64 - bits)) as i64) >> (64 - bits);
            if t.is_signed() {
                v.into_pyobject(py)?.into_any().unbind()
            } else {
                (raw & (u64::MAX >> (64 - bits)))
                    .into_pyobject(py)?
                    .into_any()
                    .unbind()
            }
        }
        t => {
            return Err(PyTypeError::new_err(format!(
                "cannot return a value of type {t} to Python yet"
            )))
        }
    })
}

fn raise_native(py: Python<'_>, exc: *const ExcInfo) -> PyErr {
    // SAFETY: a non-OK status from generated code leaves a static ExcInfo (or null).
    let (class, msg) = unsafe { ExcInfo::read(exc) };
    let cls = py
        .import("builtins")
        .and_then(|b| b.getattr(class.as_str()))
        .unwrap_or_else(|_| py.get_type::<PySystemError>().into_any());
    // `raise X` (a class, or `assert` without a message) instantiates it with no
    // arguments; the static ExcInfo then carries an empty message.
    let inst = if msg.is_empty() {
        cls.call0()
    } else {
        cls.call1((msg,))
    };
    match inst {
        Ok(inst) => PyErr::from_value(inst),
        Err(e) => e,
    }
}

/// The dispatcher object behind `@njit`: compiles per argument-type tuple and calls.
#[pyclass(module = "numba_rs", frozen)]
struct Dispatcher {
    core: Arc<numba_dispatch::Dispatcher>,
    py_func: Py<PyAny>,
    /// Positional parameters, to see cheaply when a call needs defaults filled in.
    argcount: usize,
}

impl Dispatcher {
    fn compiled_for(&self, tys: &[TypeId]) -> PyResult<Arc<CompiledFunction>> {
        if let Some(c) = self.core.lookup(tys) {
            return Ok(c);
        }
        let core = self.core.clone();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| core.resolve(tys)));
        match r {
            Ok(res) => res.map_err(to_py_err),
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                Err(UnsupportedError::new_err(format!(
                    "internal compiler error in numba-rs: {msg}"
                )))
            }
        }
    }
}

#[pymethods]
impl Dispatcher {
    #[new]
    #[pyo3(signature = (py_func, signatures=None))]
    fn new(py: Python<'_>, py_func: Py<PyAny>, signatures: Option<Vec<String>>) -> PyResult<Self> {
        let name: String = py_func.bind(py).getattr("__qualname__")?.extract()?;
        let core = numba_dispatch::register(
            &name,
            Box::new(PySource {
                func: py_func.clone_ref(py),
            }),
        );
        let argcount: usize = py_func
            .bind(py)
            .getattr("__code__")?
            .getattr("co_argcount")?
            .extract()?;
        let d = Dispatcher {
            core,
            py_func,
            argcount,
        };
        for s in signatures.unwrap_or_default() {
            let (ret, args) = numba_typeinfer::parse_signature(&s).map_err(TypingError::new_err)?;
            d.core.compile_explicit(ret, &args).map_err(to_py_err)?;
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
        // Keywords and defaults are bound as Python binds them (`inspect.signature`), off
        // the fast path: a call with every argument positional skips this.
        let bound;
        // A wrong argument count raises Python's TypeError from `bind`, as Numba's
        // dispatcher raises TypeError.
        let args = if kwargs.is_some_and(|k| !k.is_empty()) || args.len() != self.argcount {
            let sig = py
                .import("inspect")?
                .call_method1("signature", (self.py_func.bind(py),))?;
            let b = sig.call_method("bind", args, kwargs)?;
            b.call_method0("apply_defaults")?;
            bound = b.getattr("args")?.cast_into::<PyTuple>()?;
            &bound
        } else {
            args
        };
        // Small argument lists stay on the stack: no allocation per call.
        let mut tys: SmallVec<[TypeId; 8]> = SmallVec::new();
        for a in args.iter() {
            tys.push(typeof_arg(&a)?);
        }
        let c = self.compiled_for(&tys)?;
        let mut slots: SmallVec<[u64; 8]> = SmallVec::new();
        for (a, &t) in args.iter().zip(&c.arg_types) {
            slots.push(unbox(&a, t)?);
        }
        let mut ret: u64 = 0;
        let mut exc: *const ExcInfo = std::ptr::null();
        // SAFETY: entry was compiled for c.arg_types and slots holds one encoded value each.
        let status = unsafe { (c.entry)(&mut ret, &mut exc, slots.as_ptr()) };
        if status != STATUS_OK {
            return Err(raise_native(py, exc));
        }
        box_result(py, ret, c.return_type)
    }

    /// Argument types of every compiled specialisation.
    #[getter]
    fn signatures(&self, py: Python<'_>) -> PyResult<Vec<Py<PyTuple>>> {
        self.core
            .signatures()
            .into_iter()
            .map(|sig| {
                let items: Vec<Type> = sig.iter().map(|t| Type { code: t.0 }).collect();
                Ok(PyTuple::new(py, items)?.unbind())
            })
            .collect()
    }

    #[getter]
    fn py_func(&self, py: Python<'_>) -> Py<PyAny> {
        self.py_func.clone_ref(py)
    }

    /// The unoptimised LLVM IR of each specialisation, keyed by argument types.
    fn inspect_llvm(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        let d = PyDict::new(py);
        for o in self.core.overloads() {
            let items: Vec<Type> = o.arg_types.iter().map(|t| Type { code: t.0 }).collect();
            d.set_item(PyTuple::new(py, items)?, o.llvm_ir.clone())?;
        }
        Ok(d.unbind())
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
fn type_from_name(name: &str) -> PyResult<Type> {
    types::from_name(name)
        .map(|t| Type { code: t.0 })
        .ok_or_else(|| PyTypeError::new_err(format!("unknown type {name}")))
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
fn typeof_value(v: &Bound<'_, PyAny>) -> PyResult<Type> {
    typeof_arg(v).map(|t| Type { code: t.0 })
}

#[pymodule]
fn _numba_rs(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Dispatcher>()?;
    m.add_class::<Type>()?;
    m.add_function(wrap_pyfunction!(allocation_stats, m)?)?;
    m.add_function(wrap_pyfunction!(type_from_name, m)?)?;
    m.add_function(wrap_pyfunction!(typeof_value, m)?)?;
    m.add_function(wrap_pyfunction!(dis_text, m)?)?;
    Ok(())
}
