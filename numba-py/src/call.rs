//! The call path (seed 003): Python's vectorcall protocol straight into a compiled
//! specialisation.
//!
//! `f(1, 2)` from Python arrives in [`vectorcall`] with the arguments as a C array: no
//! tuple, no dict. Keywords and defaults are bound here as Numba's dispatcher binds them
//! ([`Params::bind`]; an argument left to its default is typed `omitted(default=...)`),
//! each argument is typed by the fast paths or the fingerprint cache
//! ([`crate::fingerprint`]), the specialisation is found in the dispatcher's published
//! snapshot (no lock, no reference count touched), the arguments are encoded into slots
//! on the stack and the native entry wrapper runs. A miss compiles (GIL released) and
//! takes the same road afterwards.
//!
//! The vectorcall slot is installed on the dispatcher's class (and its Python subclass,
//! which CPython 3.11 does not let inherit it) by [`enable_vectorcall`]; `tp_call`
//! (`PyObject_Call` with a tuple and a dict) goes through [`call_tuple`] to the same code.

use std::sync::atomic::{AtomicIsize, Ordering};

use numba_lower::{CompiledFunction, ExcInfo, STATUS_OK};
use numba_nrt::stack_guard;
use numba_typeinfer::types::{self, TypeId};
use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use smallvec::SmallVec;

use crate::fingerprint::scalar_typecode;
use crate::{boxing, Dispatcher};

/// Calls with at most this many arguments, all positional, take the warm path.
const MAX_FAST: usize = 8;

/// What a parameter left out of a call passes.
pub(crate) enum DefaultArg {
    /// Its default is a constant: typed `omitted(default=...)`, compiled in.
    Omitted(TypeId),
    /// Any other default: passed as a value.
    Value(Py<PyAny>),
}

/// The function's parameters, read once when the dispatcher is made (as Numba reads
/// `pysig` once).
pub(crate) struct Params {
    /// Positional parameter names.
    names: Vec<Py<PyString>>,
    /// Defaults of the trailing parameters.
    defaults: Vec<DefaultArg>,
    /// A `*args` parameter after the positional ones: extra positional arguments are
    /// passed as one tuple, as Numba's dispatcher packs them.
    star: bool,
    /// `**kwargs` or keyword-only parameters: bound through `inspect`.
    general: bool,
}

const CO_VARARGS: u32 = 0x4;
const CO_VARKEYWORDS: u32 = 0x8;

impl Params {
    /// `objects`: every default is passed as its value (object mode reads arguments as
    /// objects; no default is compiled in).
    pub(crate) fn read(func: &Bound<'_, PyAny>, objects: bool) -> PyResult<Params> {
        let code = func.getattr("__code__")?;
        let argcount: usize = code.getattr("co_argcount")?.extract()?;
        let kwonly: usize = code.getattr("co_kwonlyargcount")?.extract()?;
        let flags: u32 = code.getattr("co_flags")?.extract()?;
        let varnames = code.getattr("co_varnames")?;
        let mut names = Vec::with_capacity(argcount);
        for i in 0..argcount {
            let n = varnames.get_item(i)?.cast_into::<PyString>()?;
            names.push(n.unbind());
        }
        let mut values = Vec::new();
        let d = func.getattr("__defaults__")?;
        if !d.is_none() {
            for v in d.try_iter()? {
                values.push(v?);
            }
        }
        // Omitted types only when every default is a constant: the compiler reads the
        // defaults as constants all together.
        let mut all_constant = !objects;
        for v in &values {
            all_constant &= crate::constant_of(v)?.is_some();
        }
        let mut defaults = Vec::with_capacity(values.len());
        for v in values {
            defaults.push(if all_constant {
                let repr = v.repr()?.to_string();
                DefaultArg::Omitted(types::intern(types::Type::Omitted(repr)))
            } else {
                DefaultArg::Value(v.unbind())
            });
        }
        Ok(Params {
            names,
            defaults,
            star: flags & CO_VARARGS != 0,
            general: kwonly > 0 || flags & CO_VARKEYWORDS != 0,
        })
    }

    /// Positional parameters only, by name (a lifted loop's inputs).
    pub(crate) fn positional(py: Python<'_>, names: &[String]) -> Params {
        Params {
            names: names
                .iter()
                .map(|n| PyString::intern(py, n).unbind())
                .collect(),
            defaults: Vec::new(),
            star: false,
            general: false,
        }
    }

    /// How many argument types a signature for this function has (the star tuple
    /// counts as one).
    pub(crate) fn count(&self) -> usize {
        self.names.len() + usize::from(self.star)
    }

    fn default(&self, i: usize) -> Option<&DefaultArg> {
        let first = self.names.len().checked_sub(self.defaults.len())?;
        self.defaults.get(i.checked_sub(first)?)
    }

    /// The type of parameter `i` left to its constant default.
    fn omitted_type(&self, i: usize) -> TypeId {
        match self.default(i) {
            Some(DefaultArg::Omitted(t)) => *t,
            _ => types::NONE,
        }
    }

    /// Positional and keyword arguments in parameter order into `out`, with Numba's
    /// TypeErrors (`find_named_args`). A parameter left to a constant default is a null
    /// pointer (an omitted argument). With a `*args` parameter the extra positional
    /// arguments become one tuple, held in `star` for the call.
    fn bind<'py>(
        &self,
        py: Python<'py>,
        args: &[*mut ffi::PyObject],
        nargs: usize,
        kwnames: Option<&Bound<'py, PyTuple>>,
        out: &mut SmallVec<[*mut ffi::PyObject; MAX_FAST]>,
        star: &mut Option<Bound<'py, PyTuple>>,
    ) -> PyResult<()> {
        let n = self.names.len();
        let func_args = self.count();
        let nkw = kwnames.map_or(0, |k| k.len());
        let total = nargs + nkw;
        let minargs = n - self.defaults.len().min(n);
        if !self.star && total > n {
            return Err(PyTypeError::new_err(format!(
                "too many arguments: expected {n}, got {total}"
            )));
        }
        if total < minargs {
            let at_least = if minargs == func_args {
                ""
            } else {
                "at least "
            };
            return Err(PyTypeError::new_err(format!(
                "not enough arguments: expected {at_least}{minargs}, got {total}"
            )));
        }
        let given = nargs.min(n);
        out.extend_from_slice(&args[..given]);
        let mut used = 0;
        for i in given..n {
            let name = self.names[i].bind(py);
            // Keyword names are usually the interned strings of the code object: compare
            // pointers first and strings only when none is the same object.
            let found = kwnames.and_then(|k| {
                k.iter_borrowed()
                    .position(|kn| kn.as_ptr() == name.as_ptr())
                    .or_else(|| {
                        k.iter_borrowed()
                            .position(|kn| kn.eq(name).unwrap_or(false))
                    })
            });
            if let Some(j) = found {
                out.push(args[nargs + j]);
                used += 1;
            } else if let Some(d) = self.default(i) {
                out.push(match d {
                    DefaultArg::Omitted(_) => std::ptr::null_mut(),
                    DefaultArg::Value(v) => v.as_ptr(),
                });
            } else {
                return Err(PyTypeError::new_err(format!("missing argument '{name}'")));
            }
        }
        if used != nkw {
            return Err(PyTypeError::new_err("some keyword arguments unexpected"));
        }
        if self.star {
            // SAFETY: borrowed arguments the caller holds.
            let extra = args[given..nargs]
                .iter()
                .map(|&p| unsafe { Borrowed::from_ptr(py, p) });
            let t = PyTuple::new(py, extra)?;
            out.push(t.as_ptr());
            *star = Some(t);
        }
        Ok(())
    }
}

/// The offset of the vectorcall pointer in a dispatcher object, once known.
static OFFSET: AtomicIsize = AtomicIsize::new(0);

/// Install the vectorcall slot on `obj`'s class and the classes between it and
/// [`Dispatcher`]. CPython 3.11 copies `tp_vectorcall_offset` to subclasses but sets
/// `Py_TPFLAGS_HAVE_VECTORCALL` only on immutable ones (3.12 also on heap classes that
/// do not override `__call__`, as here), so the flag is set here.
pub(crate) fn enable_vectorcall(obj: &Bound<'_, Dispatcher>) {
    let py = obj.py();
    let offset = (&obj.get().vectorcall as *const _ as isize) - (obj.as_ptr() as isize);
    OFFSET.store(offset, Ordering::Relaxed);
    let base = <Dispatcher as pyo3::PyTypeInfo>::type_object_raw(py);
    // SAFETY: the classes are live type objects; the slot at `offset` of every instance
    // of them holds `vectorcall` (set by the constructor), and `__call__` is not
    // overridden below Dispatcher (CPUDispatcher's does not define one).
    unsafe {
        let mut tp = ffi::Py_TYPE(obj.as_ptr());
        while !tp.is_null() {
            if (*tp).tp_flags & ffi::Py_TPFLAGS_HAVE_VECTORCALL == 0
                || (*tp).tp_vectorcall_offset != offset
            {
                (*tp).tp_vectorcall_offset = offset;
                (*tp).tp_flags |= ffi::Py_TPFLAGS_HAVE_VECTORCALL;
            }
            if tp == base {
                break;
            }
            tp = (*tp).tp_base;
        }
    }
}

/// The vectorcall entry: a dispatcher called from Python.
///
/// # Safety
/// Called by CPython with the GIL held, `callable` a dispatcher, `args` holding
/// `nargs` positional arguments followed by one value per name in `kwnames`.
pub(crate) unsafe extern "C" fn vectorcall(
    callable: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargsf: usize,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls with the GIL held.
    let py = unsafe { Python::assume_attached() };
    let nargs = unsafe { ffi::PyVectorcall_NARGS(nargsf) } as usize;
    // SAFETY: `kwnames` is null or a tuple of str.
    let kwnames = unsafe { Borrowed::from_ptr_or_opt(py, kwnames) }
        .map(|k| unsafe { k.cast_unchecked::<PyTuple>() });
    let nkw = kwnames.as_ref().map_or(0, |k| k.len());
    let all = if nargs + nkw == 0 {
        &[][..]
    } else {
        // SAFETY: the protocol gives `nargs + len(kwnames)` arguments.
        unsafe { std::slice::from_raw_parts(args, nargs + nkw) }
    };
    // SAFETY: `callable` is an instance of Dispatcher (the slot is only installed there).
    let this = unsafe { Borrowed::from_ptr(py, callable).cast_unchecked::<Dispatcher>() };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        this.get().call_vector(py, all, nargs, kwnames.as_deref())
    }));
    match result {
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

/// `tp_call`: a call with a tuple and a dict (`PyObject_Call`, `functools.partial`, ...)
/// turned into the vectorcall form.
pub(crate) fn call_tuple(
    d: &Dispatcher,
    py: Python<'_>,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Py<PyAny>> {
    let mut all: SmallVec<[*mut ffi::PyObject; 8]> =
        args.iter_borrowed().map(|a| a.as_ptr()).collect();
    let nargs = all.len();
    let kwnames = match kwargs.filter(|k| !k.is_empty()) {
        None => None,
        Some(k) => {
            let mut names = Vec::with_capacity(k.len());
            for (name, value) in k.iter() {
                names.push(name);
                all.push(value.as_ptr());
            }
            Some(PyTuple::new(py, names)?)
        }
    };
    // `kwargs` keeps the values alive for the call.
    d.call_vector(py, &all, nargs, kwnames.as_ref())
}

impl Dispatcher {
    /// A call with `nargs` positional arguments followed by the values of `kwnames`.
    pub(crate) fn call_vector(
        &self,
        py: Python<'_>,
        args: &[*mut ffi::PyObject],
        nargs: usize,
        kwnames: Option<&Bound<'_, PyTuple>>,
    ) -> PyResult<Py<PyAny>> {
        if self.params.general {
            return self.call_general(py, args, nargs, kwnames);
        }
        if kwnames.is_none() && nargs == self.params.names.len() && !self.params.star {
            return self.call_bound(py, args);
        }
        let mut bound = SmallVec::new();
        let mut star = None;
        self.params
            .bind(py, args, nargs, kwnames, &mut bound, &mut star)?;
        // `star` holds the packed tuple for the call.
        self.call_bound(py, &bound)
    }

    /// The call once arguments are in parameter order (null for an omitted one).
    /// Typecodes and slots stay on the stack for up to [`MAX_FAST`] arguments; exact
    /// `int`, `float` and `bool` arguments are typed by their class and encoded without
    /// a conversion call.
    fn call_bound(&self, py: Python<'_>, args: &[*mut ffi::PyObject]) -> PyResult<Py<PyAny>> {
        let mut stack = [types::NONE; MAX_FAST];
        let mut heap = Vec::new();
        let tys: &mut [TypeId] = if args.len() <= MAX_FAST {
            &mut stack[..args.len()]
        } else {
            heap.resize(args.len(), types::NONE);
            &mut heap
        };
        // Arguments typed by their builtin class (bit i): encoded without a conversion.
        let mut builtin = 0u64;
        for (i, (t, &p)) in tys.iter_mut().zip(args).enumerate() {
            *t = if p.is_null() {
                self.params.omitted_type(i)
            } else if let Some(t) = scalar_typecode(p) {
                builtin |= 1u64.checked_shl(i as u32).unwrap_or(0);
                t
            } else if unsafe { ffi::Py_TYPE(p) } == std::ptr::addr_of_mut!(ffi::PyUnicode_Type) {
                // An exact `str` (SAFETY: `p` is a live object): `unicode_type`, encoded
                // from its PEP 393 fields directly.
                builtin |= 1u64.checked_shl(i as u32).unwrap_or(0);
                types::UNICODE
            } else {
                // SAFETY: a borrowed argument the caller holds for the call.
                let v = unsafe { Borrowed::from_ptr(py, p) };
                match crate::typeof_arg(&v) {
                    Ok(t) => t,
                    // Object mode takes any object (Numba's `typeof_pyval`).
                    Err(_) if self.object_mode != numba_dispatch::ObjectMode::Never => {
                        types::PYOBJECT
                    }
                    // Numba's report of an argument it cannot type.
                    Err(e) if e.is_instance_of::<crate::TypingError>(py) => {
                        let why = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
                        return Err(crate::TypingError::new_err(format!(
                            "non-precise type pyobject\nDuring: typing of argument {i} of \
                             {}\n\nThis error may have been caused by the following \
                             argument(s):\n- argument {i}: {why}",
                            self.core.name
                        )));
                    }
                    Err(e) => return Err(e),
                }
            };
        }
        let held;
        let c: &CompiledFunction = match self.core.lookup_ref(tys) {
            Some(c) => c,
            None => {
                let (c, changed) = self.compiled_for_call(py, tys, args)?;
                held = c;
                // Arguments compiled as literal types (`literally`) take no slots.
                if let Some(new) = changed {
                    for (i, (a, b)) in tys.iter().zip(&new).enumerate() {
                        if a != b {
                            builtin &= !1u64.checked_shl(i as u32).unwrap_or(0);
                        }
                    }
                    tys.copy_from_slice(&new);
                }
                &held
            }
        };
        let tys = &*tys;
        let mut slots = boxing::Slots::new();
        if c.object_env.is_some() {
            crate::objmode::ensure_env(py, c, self.py_func.bind(py))?;
        }
        // Objects kept for this call (buffer views of arguments, Generators the code
        // makes) are released when it returns.
        let mark = crate::ndarray::keep_mark();
        self.encode_args(py, c, args, tys, builtin, &mut slots)?;
        // Object-mode code calls the C API: it never runs without the GIL.
        let nogil = self.nogil && c.object_env.is_none();
        let out = run_entry(py, &self.core.name, c, &slots, nogil);
        crate::ndarray::keep_release(py, mark);
        if crate::lists::has_list(&c.arg_shapes) {
            crate::lists::release_args(py, &c.arg_shapes, &slots)?;
        }
        let out = out?;
        if matches!(c.ret_shape, Some(numba_lower::Shape::Generator(_))) {
            crate::generator::keep_args_alive(py, &out, args)?;
        }
        Ok(out)
    }

    /// Encode `args` (null for an omitted one) for `c`. An argument whose bit is set in
    /// `builtin` is exactly the builtin class its typecode in `tys` names (NumPy scalars
    /// share the typecodes but not the encoding). Returns the buffer views' mark
    /// ([`crate::ndarray::keep_mark`]) when an argument went through the general
    /// encoding, for the caller to release after the call; the fast paths touch none.
    pub(crate) fn encode_args(
        &self,
        py: Python<'_>,
        c: &CompiledFunction,
        args: &[*mut ffi::PyObject],
        tys: &[TypeId],
        builtin: u64,
        slots: &mut boxing::Slots,
    ) -> PyResult<Option<usize>> {
        if c.object_env.is_some() {
            // Object mode: each argument is its object (any number of them: an object-mode
            // specialisation runs calls of any types).
            slots.extend(args.iter().map(|&p| p as u64));
            return Ok(None);
        }
        let mut views = None;
        for (i, &p) in args.iter().enumerate() {
            if p.is_null() {
                continue; // an omitted argument is a ghost: no slots
            }
            if builtin >> i & 1 == 1 && c.arg_types[i] == tys[i] {
                // SAFETY: `p` is a live object of exactly the class its typecode names.
                match tys[i] {
                    types::INT64 => {
                        let mut overflow = 0;
                        let v = unsafe { ffi::PyLong_AsLongLongAndOverflow(p, &mut overflow) };
                        if overflow != 0 {
                            return Err(pyo3::exceptions::PyOverflowError::new_err(
                                "int too big to convert",
                            ));
                        }
                        slots.push(v as u64);
                        continue;
                    }
                    types::FLOAT64 => {
                        slots.push(unsafe { ffi::PyFloat_AS_DOUBLE(p) }.to_bits());
                        continue;
                    }
                    types::BOOLEAN => {
                        slots.push(u64::from(p == unsafe { ffi::Py_True() }));
                        continue;
                    }
                    types::UNICODE => {
                        // SAFETY: an exact `str`.
                        slots.extend(unsafe { boxing::unicode_fields_of(p) });
                        continue;
                    }
                    _ => {}
                }
            }
            let mark = *views.get_or_insert_with(crate::ndarray::keep_mark);
            let encoded = self.arg_shape(c, i).and_then(|shape| {
                // SAFETY: a borrowed argument the caller holds.
                boxing::encode(&*unsafe { Borrowed::from_ptr(py, p) }, shape, slots)
            });
            if let Err(e) = encoded {
                crate::ndarray::keep_release(py, mark);
                return Err(e);
            }
        }
        Ok(views)
    }

    fn arg_shape<'c>(&self, c: &'c CompiledFunction, i: usize) -> PyResult<&'c numba_lower::Shape> {
        c.arg_shapes.get(i).and_then(Option::as_ref).ok_or_else(|| {
            crate::UnsupportedError::new_err(format!(
                "{}: an argument of type {} cannot be passed from Python by numba-rs yet",
                self.core.name,
                c.arg_types.get(i).copied().unwrap_or(types::NONE)
            ))
        })
    }

    /// Functions with `**kwargs` or keyword-only parameters: bound by
    /// `inspect.signature` (off the fast path), then called with one value per
    /// parameter.
    fn call_general(
        &self,
        py: Python<'_>,
        args: &[*mut ffi::PyObject],
        nargs: usize,
        kwnames: Option<&Bound<'_, PyTuple>>,
    ) -> PyResult<Py<PyAny>> {
        // SAFETY: borrowed arguments the caller holds.
        let borrow = |p: *mut ffi::PyObject| unsafe { Borrowed::from_ptr(py, p) }.to_owned();
        let pos = PyTuple::new(py, args[..nargs].iter().map(|&p| borrow(p)))?;
        let kw = PyDict::new(py);
        if let Some(k) = kwnames {
            for (i, name) in k.iter().enumerate() {
                kw.set_item(name, borrow(args[nargs + i]))?;
            }
        }
        let sig = py
            .import("inspect")?
            .call_method1("signature", (self.py_func.bind(py),))?;
        let b = sig.call_method("bind", pos, Some(&kw))?;
        b.call_method0("apply_defaults")?;
        // One value per parameter in order: `*args` as one tuple (Numba's star-argument
        // tuple), keyword-only parameters after it.
        let values = b.getattr("arguments")?.call_method0("values")?;
        let bound = PyTuple::new(py, values.try_iter()?.collect::<PyResult<Vec<_>>>()?)?;
        let ptrs: SmallVec<[*mut ffi::PyObject; MAX_FAST]> =
            bound.iter_borrowed().map(|a| a.as_ptr()).collect();
        // `bound` holds the arguments for the call.
        self.call_bound(py, &ptrs)
    }
}

/// The Python error for a failing native status: `STATUS_EXC` means the error is
/// already set (object mode, an `objmode` block); any other reads the `ExcInfo` record.
pub(crate) fn status_error(py: Python<'_>, status: i32, exc: *const ExcInfo) -> PyErr {
    if status == numba_lower::STATUS_EXC {
        return PyErr::take(py).unwrap_or_else(|| {
            pyo3::exceptions::PySystemError::new_err("error return without exception set")
        });
    }
    crate::raise_native(py, exc)
}

/// Call an entry wrapper so that running out of stack (deep recursion) returns
/// [`stack_guard::STACK_OVERFLOW`] rather than crashing the interpreter.
///
/// # Safety
/// The same as calling `entry` with these arguments.
pub(crate) unsafe fn call_entry(
    entry: numba_lower::EntryFn,
    ret: *mut u64,
    exc: *mut *const ExcInfo,
    args: *const u64,
) -> i32 {
    // SAFETY: the two function types differ only in the pointee of the exception slot.
    let entry: stack_guard::GuardedEntry = unsafe { std::mem::transmute(entry) };
    // SAFETY: the caller's contract.
    unsafe { stack_guard::call_guarded(entry, ret, exc.cast(), args) }
}

/// [`call_entry`] without the guard, for code that cannot recurse.
///
/// # Safety
/// The same as calling `entry` with these arguments.
unsafe fn plain_call(
    entry: numba_lower::EntryFn,
    ret: *mut u64,
    exc: *mut *const ExcInfo,
    args: *const u64,
) -> i32 {
    // SAFETY: the caller's contract.
    unsafe { entry(ret, exc, args) }
}

/// Run a specialisation's entry wrapper over encoded argument slots.
pub(crate) fn run_entry(
    py: Python<'_>,
    name: &str,
    c: &CompiledFunction,
    slots: &[u64],
    nogil: bool,
) -> PyResult<Py<PyAny>> {
    let ret_shape = c.ret_shape.as_ref().ok_or_else(|| {
        use numba_typeinfer::types::Type;
        // Values that stand for compile-time things (modules, functions, classes) have
        // no Python object, as in Numba; other kinds are numba-rs's gap.
        if matches!(
            c.return_type.get(),
            Type::Module(_)
                | Type::Function(_)
                | Type::NumberClass(_)
                | Type::BoundFunction { .. }
                | Type::ExceptionClass(_)
                // Numba's words: a heterogeneous literal dict does not escape.
                | Type::LiteralStrKeyDict { .. }
        ) {
            return pyo3::exceptions::PyTypeError::new_err(format!(
                "cannot convert native {} to Python object",
                c.return_type
            ));
        }
        crate::UnsupportedError::new_err(format!(
            "{name}: returning a value of type {} to Python is not supported by numba-rs yet",
            c.return_type
        ))
    })?;
    // The result's slots: a plain stack array for small results (a SmallVec's
    // `from_elem` is a memset call, then a copy that stalls on it: measurable on the
    // call path of a trivial function), a vector for large ones.
    let n = ret_shape.slots().max(1);
    let mut small = [0u64; 8];
    let mut large = Vec::new();
    let ret: &mut [u64] = if n <= small.len() {
        &mut small[..n]
    } else {
        large.resize(n, 0);
        &mut large
    };
    let mut exc: *const ExcInfo = std::ptr::null();
    let entry = c.entry;
    type Call = unsafe fn(numba_lower::EntryFn, *mut u64, *mut *const ExcInfo, *const u64) -> i32;
    let call: Call = if c.may_recurse {
        call_entry
    } else {
        plain_call
    };
    let status = if nogil {
        let (ret_ptr, exc_ptr, args_ptr) = (
            ret.as_mut_ptr() as usize,
            &mut exc as *mut *const ExcInfo as usize,
            slots.as_ptr() as usize,
        );
        // SAFETY: as below; the pointers stay valid while the GIL is released.
        py.detach(move || unsafe {
            call(
                entry,
                ret_ptr as *mut u64,
                exc_ptr as *mut *const ExcInfo,
                args_ptr as *const u64,
            )
        })
    } else {
        // SAFETY: entry was compiled for c.arg_types and the arguments were typed (or
        // converted) to them; slots holds their encoded values and ret has room for the
        // result's slots.
        unsafe { call(entry, ret.as_mut_ptr(), &mut exc, slots.as_ptr()) }
    };
    if status == stack_guard::STACK_OVERFLOW {
        return Err(pyo3::exceptions::PyRecursionError::new_err(
            "maximum recursion depth exceeded",
        ));
    }
    if status != STATUS_OK {
        return Err(status_error(py, status, exc));
    }
    // SAFETY: the entry stored a value of the return type in `ret[0]`; each constructor
    // returns a new reference (or null with an exception set).
    let fast = unsafe {
        match c.return_type {
            types::INT64 => ffi::PyLong_FromLongLong(ret[0] as i64),
            types::FLOAT64 => ffi::PyFloat_FromDouble(f64::from_bits(ret[0])),
            types::BOOLEAN => ffi::PyBool_FromLong((ret[0] & 1) as std::os::raw::c_long),
            _ => {
                let mut pos = 0;
                return boxing::decode(py, ret, &mut pos, ret_shape);
            }
        }
    };
    // SAFETY: a new reference or null with the error set.
    unsafe { Bound::from_owned_ptr_or_err(py, fast) }.map(Bound::unbind)
}
