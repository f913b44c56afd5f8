//! NumPy ufunc objects over compiled inner loops (`vectorize`, `guvectorize`), and the
//! hook through which those loops and cfuncs report a Python exception.
//!
//! A ufunc is made by NumPy's `PyUFunc_FromFuncAndDataAndSignature` from arrays of loop
//! pointers and type numbers that must live as long as the ufunc: they are kept in a
//! capsule stored in the ufunc's `obj` slot, which NumPy releases with the ufunc.

use std::ffi::{c_char, c_int, c_void, CString};

use numba_lower::ExcInfo;
use numba_typeinfer::{TypeId, UFuncLoop};
use numpy::npyffi::{objects::PyUFuncObject, PyUFuncGenericFunction, PY_UFUNC_API};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(make_ufunc, m)?)?;
    m.add_function(wrap_pyfunction!(register_jit_ufunc, m)?)?;
    Ok(())
}

/// What `_jit_select` returns: the kernel dispatcher, its argument types and result
/// type, nin, nout and a gufunc's core dimensions.
type JitLoop<'py> = (
    Bound<'py, PyAny>,
    Vec<Bound<'py, PyAny>>,
    Bound<'py, PyAny>,
    usize,
    usize,
    Option<Vec<Vec<u32>>>,
);

/// A `DUFunc`/`GUFunc` as jitted code sees it: its `_jit_select(types)` chooses or
/// compiles the loop for a call's argument types.
struct PyUFuncSource {
    obj: Py<PyAny>,
}

impl numba_dispatch::UFuncSource for PyUFuncSource {
    fn select_loop(&self, args: &[TypeId]) -> Result<UFuncLoop, String> {
        Python::attach(|py| {
            let types = crate::typeobj::py_types(py, args).map_err(|e| e.to_string())?;
            let r = self
                .obj
                .bind(py)
                .call_method1("_jit_select", (types,))
                .map_err(|e| e.value(py).to_string())?;
            let (kernel, kargs, kret, nin, nout, core): JitLoop<'_> =
                r.extract().map_err(|e: PyErr| e.to_string())?;
            let kernel = kernel
                .cast::<crate::Dispatcher>()
                .map_err(|e| e.to_string())?
                .get()
                .core
                .id;
            let code = |t: &Bound<'_, PyAny>| -> Result<TypeId, String> {
                Ok(TypeId(
                    t.cast::<crate::Type>()
                        .map_err(|e| e.to_string())?
                        .get()
                        .code,
                ))
            };
            Ok(UFuncLoop {
                kernel,
                args: kargs.iter().map(code).collect::<Result<_, _>>()?,
                ret: code(&kret)?,
                nin,
                nout,
                core,
            })
        })
    }
}

/// Register a `DUFunc`/`GUFunc` for calls from jitted code; its id.
#[pyfunction]
fn register_jit_ufunc(obj: Py<PyAny>) -> u64 {
    numba_dispatch::register_ufunc(std::sync::Arc::new(PyUFuncSource { obj }))
}

/// The arrays a ufunc object points into.
struct Storage {
    funcs: Vec<PyUFuncGenericFunction>,
    data: Vec<*mut c_void>,
    types: Vec<c_char>,
    name: CString,
    doc: CString,
    signature: Option<CString>,
    /// `target='parallel'`: each loop's data slot points at one of these (boxed: the
    /// pointers must stay put while the vector grows).
    #[allow(clippy::vec_box)]
    parallel: Vec<Box<numba_nrt::parallel::ParallelUfunc>>,
}

// SAFETY: the pointers are null data slots and JIT-compiled functions that live as long as
// the process; nothing in Storage is tied to a thread.
unsafe impl Send for Storage {}

/// A NumPy ufunc named `name` with `nin` inputs and `nout` outputs whose loops are
/// `(inner loop address, NumPy type numbers of the nin + nout operands, the loop's data
/// pointer or 0)` in the order
/// NumPy should try them; `identity` is one of NumPy's `PyUFunc_*` identity codes;
/// `signature` makes a generalized ufunc (`"(n),(n)->()"`). With `parallel` (target
/// `'parallel'`) NumPy calls numba-nrt's splitting loop, which runs each compiled loop
/// over slices of the outer range on the pool (`ncore` core dimensions, `cost` the
/// estimated work of one outer iteration).
#[pyfunction]
#[pyo3(signature = (name, doc, nin, nout, loops, identity, signature=None, parallel=false, ncore=0, cost=20, writable=Vec::new(), registered=false))]
#[allow(clippy::too_many_arguments)]
fn make_ufunc(
    py: Python<'_>,
    name: &str,
    doc: &str,
    nin: i32,
    nout: i32,
    loops: Vec<(usize, Vec<i32>, usize)>,
    identity: i32,
    signature: Option<&str>,
    parallel: bool,
    ncore: i64,
    cost: i64,
    writable: Vec<usize>,
    registered: bool,
) -> PyResult<Py<PyAny>> {
    let nargs = (nin + nout) as usize;
    let mut st = Storage {
        funcs: Vec::with_capacity(loops.len()),
        data: vec![std::ptr::null_mut(); loops.len()],
        types: Vec::with_capacity(loops.len() * nargs),
        name: CString::new(name).map_err(|e| PyValueError::new_err(e.to_string()))?,
        doc: CString::new(doc).map_err(|e| PyValueError::new_err(e.to_string()))?,
        signature: signature
            .map(CString::new)
            .transpose()
            .map_err(|e| PyValueError::new_err(e.to_string()))?,
        parallel: Vec::new(),
    };
    for (addr, tys, data) in &loops {
        if *addr == 0 || tys.len() != nargs {
            return Err(PyValueError::new_err(format!(
                "a loop of {name} needs an address and {nargs} type numbers"
            )));
        }
        // SAFETY: the address is a loop the compiler built with NumPy's inner-loop
        // signature (numba_lower::wrappers), alive for the rest of the process.
        let f = unsafe {
            std::mem::transmute::<
                usize,
                unsafe extern "C" fn(*mut *mut c_char, *mut isize, *mut isize, *mut c_void),
            >(*addr)
        };
        st.types.extend(tys.iter().map(|&t| t as c_char));
        if *data != 0 {
            // A loop with data of its own (an object-mode kernel's, which takes the GIL
            // for every element): run as it is, never split over the pool.
            let k = st.funcs.len();
            st.data[k] = *data as *mut c_void;
            st.funcs.push(Some(f));
        } else if parallel {
            let spec = Box::new(numba_nrt::parallel::ParallelUfunc {
                // SAFETY: the same function with pointer-typed parameters.
                inner: unsafe {
                    std::mem::transmute::<
                        unsafe extern "C" fn(*mut *mut c_char, *mut isize, *mut isize, *mut c_void),
                        numba_nrt::parallel::UfuncLoop,
                    >(f)
                },
                nargs: nargs as i64,
                ncore,
                cost: cost.max(1),
            });
            let k = st.funcs.len();
            st.data[k] = &*spec as *const numba_nrt::parallel::ParallelUfunc as *mut c_void;
            st.parallel.push(spec);
            // SAFETY: numba-nrt's splitting loop has NumPy's inner-loop signature.
            st.funcs.push(Some(unsafe {
                std::mem::transmute::<
                    unsafe extern "C" fn(*mut *mut u8, *mut i64, *mut i64, *mut u8),
                    unsafe extern "C" fn(*mut *mut c_char, *mut isize, *mut isize, *mut c_void),
                >(numba_nrt::parallel::numba_rs_parallel_ufunc_loop)
            }));
        } else {
            st.funcs.push(Some(f));
        }
    }
    let sig_ptr = st
        .signature
        .as_ref()
        .map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: every array holds `loops.len()` entries (types: times nargs) and, moved into
    // the capsule below, outlives the ufunc; the strings are NUL-terminated.
    let obj = unsafe {
        PY_UFUNC_API.PyUFunc_FromFuncAndDataAndSignature(
            py,
            st.funcs.as_mut_ptr(),
            st.data.as_mut_ptr(),
            st.types.as_mut_ptr(),
            // A DUFunc is made with no loops, which are then set in place, as Numba
            // makes its DUFuncs: NumPy then resolves types by its legacy linear search
            // (the first loop the inputs cast to safely, in signature order) rather than
            // registering each loop as an exact-dtype method, so a call picks the loop
            // Numba's would. Numba builds a GUFunc's ufunc with its loops registered
            // (`registered`), where an exact match wins.
            if registered { loops.len() as c_int } else { 0 },
            nin,
            nout,
            identity,
            st.name.as_ptr(),
            st.doc.as_ptr(),
            0,
            sig_ptr,
        )
    };
    // SAFETY: a new reference, or null with the Python error set.
    let ufunc = unsafe { Bound::from_owned_ptr_or_err(py, obj) }?;
    // Moving `st` keeps its heap buffers where they are.
    let capsule =
        PyCapsule::new_with_value_and_destructor(py, st, c"numba_rs.ufunc_storage", |_, _| {})?;
    // SAFETY: `ufunc` is a PyUFuncObject NumPy just made, whose `obj` slot is empty; NumPy
    // drops the reference stored there when the ufunc dies.
    unsafe {
        let u = ufunc.as_ptr() as *mut PyUFuncObject;
        (*u).fields.obj = capsule.into_ptr();
        if !registered {
            (*u).fields.ntypes = loops.len() as c_int;
        }
        // `writable_args`: those inputs are iterated read-write, so a cast copy is written
        // back (NumPy's NPY_ITER_READWRITE | NPY_ITER_UPDATEIFCOPY).
        let flags = (*u).fields.op_flags;
        if !writable.is_empty() && !flags.is_null() {
            for &k in writable.iter().filter(|&&k| k < nin as usize) {
                *flags.add(k) |= 0x0001_0000 | 0x0080_0000;
            }
        }
    }
    Ok(ufunc.unbind())
}

/// `numba_lower::runtime::ErrorReportHook`: make the record a Python exception, pending
/// for NumPy to raise after the loop, or reported as unraisable (a cfunc's caller is C).
///
/// # Safety
/// `rec` must be null or a record generated code stored and nobody read.
/// The first error a parallel ufunc's kernel raised on a worker thread.
static WORKER_ERROR: std::sync::Mutex<Option<PyErr>> = std::sync::Mutex::new(None);

/// After a parallel ufunc loop, on the calling thread: raise what a worker stashed.
pub(crate) extern "C" fn parallel_ufunc_done() {
    let err = WORKER_ERROR
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    if let Some(err) = err {
        Python::attach(|py| {
            if !PyErr::occurred(py) {
                err.restore(py);
            }
        });
    }
}

pub(crate) unsafe extern "C" fn error_report_hook(status: i32, rec: *const ExcInfo, mode: i32) {
    let _ = status;
    Python::attach(|py| {
        let err = crate::raise_native(py, rec);
        if mode == numba_lower::wrappers::REPORT_LOOP {
            // On a pool worker (a `target='parallel'` loop): the error belongs to the
            // thread that called the ufunc, which takes it when the divisions are done
            // (`parallel_ufunc_done`); set here it would be lost with the worker's state.
            if numba_nrt::parallel::get_thread_id() != 0 {
                let mut slot = WORKER_ERROR.lock().unwrap_or_else(|e| e.into_inner());
                if slot.is_none() {
                    *slot = Some(err);
                }
                return;
            }
            // A loop stops at its first error; an earlier one (another loop of the same
            // call) stays the one raised.
            if PyErr::occurred(py) {
                return;
            }
            err.restore(py);
        } else {
            // Named as Numba names the context ("Exception ignored in: '<...>'").
            let ctx = pyo3::types::PyString::new(py, "<numba_rs cfunc wrapper>");
            err.write_unraisable(py, Some(ctx.as_any()));
        }
    });
}
