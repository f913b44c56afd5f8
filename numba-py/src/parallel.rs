//! The threading layer's Python API (`numba_rs.set_num_threads`, ...) over numba-nrt's
//! pool, and the hooks that let the pool release the GIL while a parallel region runs.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;

use numba_nrt::parallel as pool;

/// Release the GIL if this thread holds it (a `nogil` function may call in without it).
unsafe extern "C" fn save_gil() -> *mut u8 {
    // SAFETY: PyGILState_Check may be called on any thread once Python is initialised,
    // and PyEval_SaveThread only when it returned 1 (the GIL is held here).
    unsafe {
        if ffi::PyGILState_Check() == 1 {
            ffi::PyEval_SaveThread() as *mut u8
        } else {
            std::ptr::null_mut()
        }
    }
}

unsafe extern "C" fn restore_gil(state: *mut u8) {
    if !state.is_null() {
        // SAFETY: `state` came from PyEval_SaveThread on this thread.
        unsafe { ffi::PyEval_RestoreThread(state as *mut ffi::PyThreadState) };
    }
}

pub(crate) fn install_hooks() {
    pool::set_gil_hooks(save_gil, restore_gil);
}

fn as_int(n: &Bound<'_, PyAny>, what: &str) -> PyResult<i64> {
    if n.is_instance_of::<pyo3::types::PyBool>() || !n.hasattr("__index__")? {
        return Err(PyTypeError::new_err(format!(
            "The number of {what} specified must be an integer"
        )));
    }
    n.call_method0("__index__")?.extract()
}

/// `set_num_threads(n)`: the threads parallel regions started on this thread use.
#[pyfunction]
pub(crate) fn set_num_threads(n: &Bound<'_, PyAny>) -> PyResult<()> {
    let n = as_int(n, "threads")?;
    pool::set_num_threads(n).map_err(PyValueError::new_err)
}

#[pyfunction]
pub(crate) fn get_num_threads() -> usize {
    pool::get_num_threads()
}

#[pyfunction]
pub(crate) fn get_thread_id() -> usize {
    pool::get_thread_id()
}

#[pyfunction]
pub(crate) fn set_parallel_chunksize(n: &Bound<'_, PyAny>) -> PyResult<usize> {
    let n = as_int(n, "chunksize")?;
    if n < 0 {
        return Err(PyValueError::new_err(
            "chunksize must be greater than or equal to zero",
        ));
    }
    Ok(pool::set_parallel_chunksize(n as usize))
}

#[pyfunction]
pub(crate) fn get_parallel_chunksize() -> usize {
    pool::get_parallel_chunksize()
}

/// `NUMBA_NUM_THREADS` as the pool reads it.
#[pyfunction]
pub(crate) fn config_num_threads() -> usize {
    pool::config_num_threads()
}

/// The layer's name once a parallel region has been compiled (Numba's `threading_layer()`).
#[pyfunction]
pub(crate) fn threading_layer() -> PyResult<&'static str> {
    if pool::layer_initialised() {
        Ok(pool::THREADING_LAYER)
    } else {
        Err(PyValueError::new_err("Threading layer is not initialized."))
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    install_hooks();
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(get_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(get_thread_id, m)?)?;
    m.add_function(wrap_pyfunction!(set_parallel_chunksize, m)?)?;
    m.add_function(wrap_pyfunction!(get_parallel_chunksize, m)?)?;
    m.add_function(wrap_pyfunction!(config_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(threading_layer, m)?)?;
    Ok(())
}
