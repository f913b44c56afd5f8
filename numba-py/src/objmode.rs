//! The Python half of object mode: the C API table object-mode code is linked against,
//! the helpers it calls for work Python's evaluation loop does in C (global lookup,
//! `raise`, unpacking, `for` steps, calls with `*args`/`**kwargs`), and each function's
//! environment tuple (`numba_lower::objmode` describes its layout).
//!
//! Helpers run with the GIL held (object-mode code is only entered from Python) and
//! follow the C API's conventions: a new reference, or null with the error set.

use numba_bytecode::Constant;
use numba_lower::CompiledFunction;
use pyo3::exceptions::{PyNameError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyComplex, PyDict, PyFrozenSet, PyList, PySet, PyString, PyTuple};

/// Install the table (once, at module import).
pub(crate) fn install() {
    macro_rules! table {
        ($($name:ident),* $(,)?) => {
            vec![$((stringify!($name).to_string(), ffi::$name as *const () as usize)),*]
        };
    }
    let mut t = table![
        Py_IncRef,
        Py_DecRef,
        PyNumber_Add,
        PyNumber_Subtract,
        PyNumber_Multiply,
        PyNumber_TrueDivide,
        PyNumber_FloorDivide,
        PyNumber_Remainder,
        PyNumber_Power,
        PyNumber_Lshift,
        PyNumber_Rshift,
        PyNumber_And,
        PyNumber_Or,
        PyNumber_Xor,
        PyNumber_MatrixMultiply,
        PyNumber_InPlaceAdd,
        PyNumber_InPlaceSubtract,
        PyNumber_InPlaceMultiply,
        PyNumber_InPlaceTrueDivide,
        PyNumber_InPlaceFloorDivide,
        PyNumber_InPlaceRemainder,
        PyNumber_InPlacePower,
        PyNumber_InPlaceLshift,
        PyNumber_InPlaceRshift,
        PyNumber_InPlaceAnd,
        PyNumber_InPlaceOr,
        PyNumber_InPlaceXor,
        PyNumber_InPlaceMatrixMultiply,
        PyNumber_Negative,
        PyNumber_Positive,
        PyNumber_Invert,
        PyObject_Not,
        PyObject_IsTrue,
        PyObject_RichCompare,
        PySequence_Contains,
        PyBool_FromLong,
        PyLong_FromLongLong,
        PyObject_GetAttr,
        PyObject_SetAttr,
        PyObject_GetItem,
        PyObject_SetItem,
        PyObject_DelItem,
        PyObject_GetIter,
        PySequence_Tuple,
        PyObject_Call,
        PyTuple_New,
        PyTuple_SetItem,
        PyTuple_GetItem,
        PyList_New,
        PyList_SetItem,
        PySet_New,
        PySet_Add,
        PyDict_New,
        PyDict_SetItem,
    ];
    let helpers: [(&str, usize); 9] = [
        (
            "numba_rs_objmode_with",
            crate::objmode_with::numba_rs_objmode_with as *const () as usize,
        ),
        (
            "numba_rs_obj_global",
            numba_rs_obj_global as *const () as usize,
        ),
        (
            "numba_rs_obj_freevar",
            numba_rs_obj_freevar as *const () as usize,
        ),
        (
            "numba_rs_obj_raise",
            numba_rs_obj_raise as *const () as usize,
        ),
        (
            "numba_rs_obj_raise_builtin",
            numba_rs_obj_raise_builtin as *const () as usize,
        ),
        (
            "numba_rs_obj_iternext",
            numba_rs_obj_iternext as *const () as usize,
        ),
        (
            "numba_rs_obj_unpack",
            numba_rs_obj_unpack as *const () as usize,
        ),
        ("numba_rs_obj_call", numba_rs_obj_call as *const () as usize),
        (
            "numba_rs_obj_unbound",
            numba_rs_obj_unbound as *const () as usize,
        ),
    ];
    t.extend(helpers.iter().map(|(n, a)| (n.to_string(), *a)));
    // SAFETY: taking the singletons' addresses only.
    unsafe {
        t.push(("_Py_NoneStruct".into(), ffi::Py_None() as usize));
        t.push(("_Py_TrueStruct".into(), ffi::Py_True() as usize));
        t.push(("_Py_FalseStruct".into(), ffi::Py_False() as usize));
    }
    numba_lower::objmode::install_python_api(t);
}

/// Fill a specialisation's environment before its first call: `(globals, builtins,
/// {freevar name: cell}, (lifted loops...), constants...)`. The tuple is never released: the code reading it
/// lives as long as the process.
pub(crate) fn ensure_env(
    py: Python<'_>,
    c: &CompiledFunction,
    func: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let Some(env) = &c.object_env else {
        return Ok(());
    };
    let cell = env.cell as *mut *mut ffi::PyObject;
    // SAFETY: `cell` is the compiled code's environment word; the GIL serialises access.
    if unsafe { !(*cell).is_null() } {
        return Ok(());
    }
    let globals = func.getattr("__globals__")?;
    let builtins = func.getattr("__builtins__")?;
    let builtins = if builtins.is_instance_of::<PyDict>() {
        builtins
    } else {
        builtins.getattr("__dict__")?
    };
    let cells = PyDict::new(py);
    let closure = func.getattr("__closure__")?;
    if !closure.is_none() {
        let names = func.getattr("__code__")?.getattr("co_freevars")?;
        for (name, c) in names.try_iter()?.zip(closure.try_iter()?) {
            cells.set_item(name?, c?)?;
        }
    }
    let mut loops = Vec::with_capacity(env.lifted.len());
    for &id in &env.lifted {
        loops.push(crate::Dispatcher::lifted(py, id, func)?.into_any());
    }
    let loops = PyTuple::new(py, loops)?;
    let mut items: Vec<Py<PyAny>> = vec![
        globals.unbind(),
        builtins.unbind(),
        cells.into_any().unbind(),
        loops.into_any().unbind(),
    ];
    for k in &env.consts {
        items.push(constant_object(py, k)?);
    }
    let tuple = PyTuple::new(py, items)?;
    // SAFETY: as above; the reference is handed to the compiled code for good.
    unsafe { *cell = tuple.into_ptr() };
    Ok(())
}

/// A code object's constant as the Python value.
pub(crate) fn constant_object(py: Python<'_>, k: &Constant) -> PyResult<Py<PyAny>> {
    Ok(match k {
        Constant::None => py.None(),
        Constant::Ellipsis => py.Ellipsis(),
        Constant::StopIteration => py
            .get_type::<pyo3::exceptions::PyStopIteration>()
            .into_any()
            .unbind(),
        Constant::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Constant::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        Constant::BigInt { negative, digits } => {
            // Base 2**15 digits, least significant first (marshal's form).
            let mut v = 0i64.into_pyobject(py)?.into_any();
            for (i, d) in digits.iter().enumerate() {
                let part = (*d as i64).into_pyobject(py)?.into_any();
                let shifted = part.call_method1("__lshift__", (15 * i,))?;
                v = v.add(shifted)?;
            }
            if *negative {
                v = v.neg()?;
            }
            v.unbind()
        }
        Constant::Float(f) => f.into_pyobject(py)?.into_any().unbind(),
        Constant::Complex(re, im) => PyComplex::from_doubles(py, *re, *im).into_any().unbind(),
        Constant::Str(s) => PyString::intern(py, s).into_any().unbind(),
        Constant::Bytes(b) => PyBytes::new(py, b).into_any().unbind(),
        Constant::Tuple(items) => PyTuple::new(py, objects(py, items)?)?.into_any().unbind(),
        Constant::List(items) => PyList::new(py, objects(py, items)?)?.into_any().unbind(),
        Constant::Set(items) => PySet::new(py, objects(py, items)?)?.into_any().unbind(),
        Constant::FrozenSet(items) => PyFrozenSet::new(py, objects(py, items)?)?
            .into_any()
            .unbind(),
        Constant::Dict(pairs) => {
            let d = PyDict::new(py);
            for (k, v) in pairs {
                d.set_item(constant_object(py, k)?, constant_object(py, v)?)?;
            }
            d.into_any().unbind()
        }
        Constant::Code(_) => {
            return Err(crate::UnsupportedError::new_err(
                "a code object constant in object mode",
            ))
        }
    })
}

/// Each constant's Python value.
fn objects(py: Python<'_>, items: &[Constant]) -> PyResult<Vec<Py<PyAny>>> {
    items.iter().map(|i| constant_object(py, i)).collect()
}

/// Run a helper body: its result as a new reference, or null with the error set (a
/// panic becomes an internal error, never an abort across the C boundary).
fn guarded(f: impl FnOnce(Python<'_>) -> PyResult<Py<PyAny>>) -> *mut ffi::PyObject {
    // SAFETY: object-mode code runs with the GIL held.
    let py = unsafe { Python::assume_attached() };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(py))) {
        Ok(Ok(v)) => v.into_ptr(),
        Ok(Err(e)) => {
            e.restore(py);
            std::ptr::null_mut()
        }
        Err(p) => {
            crate::internal_error(&p).restore(py);
            std::ptr::null_mut()
        }
    }
}

/// Borrow an object the generated code passes.
///
/// # Safety
/// `p` is a live object and the GIL is held.
unsafe fn obj<'py>(py: Python<'py>, p: *mut ffi::PyObject) -> Bound<'py, PyAny> {
    // SAFETY: per the contract.
    unsafe { Borrowed::from_ptr(py, p) }.to_owned()
}

fn env_item<'py>(env: &Bound<'py, PyAny>, i: usize) -> PyResult<Bound<'py, PyAny>> {
    env.cast::<PyTuple>()
        .map_err(|_| PyRuntimeError::new_err("object-mode environment is not set"))?
        .get_item(i)
}

/// `name` from the function's globals, then its builtins.
unsafe extern "C" fn numba_rs_obj_global(
    env: *mut ffi::PyObject,
    name: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    guarded(|py| {
        // SAFETY: live objects from the generated code.
        let (env, name) = unsafe { (obj(py, env), obj(py, name)) };
        for i in 0..2 {
            let d = env_item(&env, i)?;
            if let Some(v) = d.cast::<PyDict>()?.get_item(&name)? {
                return Ok(v.unbind());
            }
        }
        Err(PyNameError::new_err(format!(
            "name '{name}' is not defined"
        )))
    })
}

/// A free variable's value, from its cell.
unsafe extern "C" fn numba_rs_obj_freevar(
    env: *mut ffi::PyObject,
    name: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    guarded(|py| {
        // SAFETY: live objects from the generated code.
        let (env, name) = unsafe { (obj(py, env), obj(py, name)) };
        let cells = env_item(&env, 2)?;
        let cell = cells
            .cast::<PyDict>()?
            .get_item(&name)?
            .ok_or_else(|| PyNameError::new_err(format!("free variable '{name}' has no cell")))?;
        cell.getattr("cell_contents")
            .map_err(|_| {
                PyNameError::new_err(format!(
                    "cannot access free variable '{name}' where it is not associated with a \
                 value in enclosing scope"
                ))
            })
            .map(Bound::unbind)
    })
}

/// Set the error `raise exc` sets; a bare `raise` (null) has nothing to re-raise here.
unsafe extern "C" fn numba_rs_obj_raise(exc: *mut ffi::PyObject) {
    guarded(|py| {
        if exc.is_null() {
            return Err(PyRuntimeError::new_err("No active exception to reraise"));
        }
        // SAFETY: a live object from the generated code.
        let e = unsafe { obj(py, exc) };
        let base = py.get_type::<pyo3::exceptions::PyBaseException>();
        if e.is_instance_of::<pyo3::types::PyType>()
            && e.cast::<pyo3::types::PyType>()?.is_subclass(&base)?
        {
            return Err(PyErr::from_value(e.call0()?));
        }
        if e.is_instance(&base)? {
            return Err(PyErr::from_value(e));
        }
        Err(PyTypeError::new_err(
            "exceptions must derive from BaseException",
        ))
    });
}

/// `raise Cls(*args)` for a builtin exception class named `name`.
unsafe extern "C" fn numba_rs_obj_raise_builtin(
    env: *mut ffi::PyObject,
    name: *mut ffi::PyObject,
    args: *mut ffi::PyObject,
) {
    guarded(|py| {
        // SAFETY: live objects from the generated code (`args` may be null).
        let (env, name) = unsafe { (obj(py, env), obj(py, name)) };
        let cls = env_item(&env, 1)?
            .cast::<PyDict>()?
            .get_item(&name)?
            .ok_or_else(|| PyNameError::new_err(format!("name '{name}' is not defined")))?;
        let inst = if args.is_null() {
            cls.call0()?
        } else {
            // SAFETY: as above.
            let a = unsafe { obj(py, args) };
            cls.call1(a.cast::<PyTuple>()?)?
        };
        Err(PyErr::from_value(inst))
    });
}

/// One `for` step: `(item, True)`, or `(None, False)` when the iterator is exhausted.
unsafe extern "C" fn numba_rs_obj_iternext(it: *mut ffi::PyObject) -> *mut ffi::PyObject {
    guarded(|py| {
        // SAFETY: a live iterator from the generated code; PyIter_Next returns a new
        // reference, or null (exhausted, or with the error set).
        let item = unsafe { ffi::PyIter_Next(it) };
        if item.is_null() {
            if let Some(e) = PyErr::take(py) {
                return Err(e);
            }
            return Ok(PyTuple::new(
                py,
                [
                    py.None(),
                    false.into_pyobject(py)?.to_owned().into_any().unbind(),
                ],
            )?
            .into_any()
            .unbind());
        }
        // SAFETY: the new reference just returned.
        let item = unsafe { Bound::from_owned_ptr(py, item) };
        Ok(
            PyTuple::new(py, [item, true.into_pyobject(py)?.to_owned().into_any()])?
                .into_any()
                .unbind(),
        )
    })
}

/// `a, b = value`: a tuple of exactly `count` items, with CPython's errors.
unsafe extern "C" fn numba_rs_obj_unpack(
    value: *mut ffi::PyObject,
    count: i64,
) -> *mut ffi::PyObject {
    guarded(|py| {
        // SAFETY: a live object from the generated code.
        let v = unsafe { obj(py, value) };
        let count = count as usize;
        let mut it = v.try_iter().map_err(|_| {
            PyTypeError::new_err(format!(
                "cannot unpack non-iterable {} object",
                v.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?;
        let mut items = Vec::with_capacity(count);
        for _ in 0..count {
            match it.next() {
                Some(x) => items.push(x?),
                None => {
                    return Err(PyValueError::new_err(format!(
                        "not enough values to unpack (expected {count}, got {})",
                        items.len()
                    )))
                }
            }
        }
        if let Some(extra) = it.next() {
            extra?;
            return Err(PyValueError::new_err(format!(
                "too many values to unpack (expected {count})"
            )));
        }
        Ok(PyTuple::new(py, items)?.into_any().unbind())
    })
}

/// `f(*args, *vararg, **kw, **varkw)`.
unsafe extern "C" fn numba_rs_obj_call(
    func: *mut ffi::PyObject,
    args: *mut ffi::PyObject,
    kw: *mut ffi::PyObject,
    vararg: *mut ffi::PyObject,
    varkw: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    guarded(|py| {
        // SAFETY: live objects from the generated code; `kw`, `vararg` and `varkw` may be
        // null.
        let f = unsafe { obj(py, func) };
        let mut pos: Vec<Bound<'_, PyAny>> = unsafe { obj(py, args) }
            .try_iter()?
            .collect::<PyResult<_>>()?;
        if !vararg.is_null() {
            let va = unsafe { obj(py, vararg) };
            let items = va.try_iter().map_err(|_| {
                PyTypeError::new_err(format!(
                    "{} argument after * must be an iterable, not {}",
                    describe(&f),
                    va.get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                ))
            })?;
            for x in items {
                pos.push(x?);
            }
        }
        let kwargs = PyDict::new(py);
        if !kw.is_null() {
            kwargs.update(unsafe { obj(py, kw) }.cast::<pyo3::types::PyMapping>()?)?;
        }
        if !varkw.is_null() {
            let vk = unsafe { obj(py, varkw) };
            let keys = vk.call_method0("keys").map_err(|_| {
                PyTypeError::new_err(format!(
                    "{} argument after ** must be a mapping, not {}",
                    describe(&f),
                    vk.get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                ))
            })?;
            for k in keys.try_iter()? {
                let k = k?;
                if kwargs.contains(&k)? {
                    return Err(PyTypeError::new_err(format!(
                        "{} got multiple values for keyword argument '{k}'",
                        describe(&f)
                    )));
                }
                kwargs.set_item(&k, vk.get_item(&k)?)?;
            }
        }
        let kwargs = if kwargs.is_empty() {
            None
        } else {
            Some(&kwargs)
        };
        Ok(f.call(PyTuple::new(py, pos)?, kwargs)?.unbind())
    })
}

/// How CPython names a callable in call errors (`f()`).
fn describe(f: &Bound<'_, PyAny>) -> String {
    f.getattr("__qualname__")
        .map(|n| format!("{n}()"))
        .unwrap_or_else(|_| "function".into())
}

/// UnboundLocalError for a local read before assignment.
unsafe extern "C" fn numba_rs_obj_unbound(name: *mut ffi::PyObject) {
    guarded(|py| {
        // SAFETY: a live str from the generated code.
        let n = unsafe { obj(py, name) };
        Err(pyo3::exceptions::PyUnboundLocalError::new_err(format!(
            "cannot access local variable '{n}' where it is not associated with a value"
        )))
    });
}
