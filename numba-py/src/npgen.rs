//! `numpy.random.Generator` at the boundary: its type, its `bitgen_t` (from the bit
//! generator's capsule) as an argument, and NumPy's distribution functions
//! (`libnpyrandom`, linked by `build.rs`) registered with the JIT for the methods'
//! primitives (numba-lower's `impls/npgen.rs`).

use numba_typeinfer::types::{self, Type, TypeId};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// Whether `v` is a `numpy.random.Generator`.
pub fn is_generator(v: &Bound<'_, PyAny>) -> bool {
    let cls = v.get_type();
    cls.name().is_ok_and(|n| n == "Generator")
        && cls
            .module()
            .is_ok_and(|m| m.to_str().is_ok_and(|m| m.starts_with("numpy.random")))
}

/// The type of a Generator argument (its methods' overloads are loaded with it).
pub fn typeof_generator(v: &Bound<'_, PyAny>) -> PyResult<Option<TypeId>> {
    if !is_generator(v) {
        return Ok(None);
    }
    crate::extending::load_overload_module(v.py(), "numba_rs._npgenerator")?;
    Ok(Some(types::intern(Type::NumPyRandomGenerator)))
}

/// A Generator argument: its `bitgen_t *` and the object (borrowed for the call).
pub fn encode(v: &Bound<'_, PyAny>, out: &mut crate::boxing::Slots) -> PyResult<()> {
    if !is_generator(v) {
        return Err(PyTypeError::new_err(format!(
            "expected a numpy.random.Generator, got {}",
            v.get_type().name()?
        )));
    }
    let capsule = v.getattr("bit_generator")?.getattr("capsule")?;
    // SAFETY: a BitGenerator's capsule holds its `bitgen_t` under this name; the
    // Generator (alive for the call) keeps it.
    let p = unsafe { pyo3::ffi::PyCapsule_GetPointer(capsule.as_ptr(), c"BitGenerator".as_ptr()) };
    if p.is_null() {
        return Err(PyErr::fetch(v.py()));
    }
    out.push(p as u64);
    out.push(v.as_ptr() as u64);
    Ok(())
}

/// A Generator result: the Python object it came from.
pub fn decode(py: Python<'_>, object: u64) -> PyResult<Py<PyAny>> {
    if object == 0 {
        return Err(PyTypeError::new_err(
            "a Generator without its Python object",
        ));
    }
    // SAFETY: the object of a Generator argument, alive while the call's arguments are.
    Ok(unsafe { Bound::from_borrowed_ptr(py, object as *mut pyo3::ffi::PyObject) }.unbind())
}

#[cfg(npyrandom)]
macro_rules! npyrandom {
    ($($name:ident),* $(,)?) => {
        extern "C" {
            $(fn $name();)*
        }
        /// NumPy's distribution functions, by name, for the JIT.
        fn npyrandom_symbols() -> Vec<(&'static str, usize)> {
            vec![$((stringify!($name), $name as *const () as usize)),*]
        }
    };
}

#[cfg(npyrandom)]
npyrandom!(
    random_standard_uniform,
    random_standard_normal,
    random_standard_exponential,
    random_standard_cauchy,
    random_normal,
    random_uniform,
    random_exponential,
    random_standard_gamma,
    random_gamma,
    random_beta,
    random_chisquare,
    random_f,
    random_pareto,
    random_weibull,
    random_power,
    random_laplace,
    random_gumbel,
    random_logistic,
    random_lognormal,
    random_rayleigh,
    random_standard_t,
    random_noncentral_chisquare,
    random_noncentral_f,
    random_wald,
    random_vonmises,
    random_triangular,
    random_poisson,
    random_negative_binomial,
    random_geometric,
    random_zipf,
    random_logseries,
    random_binomial,
    random_hypergeometric,
    random_bounded_uint64_fill,
    random_bounded_uint32_fill,
    random_bounded_uint16_fill,
    random_bounded_uint8_fill,
    random_bounded_bool_fill,
    random_interval,
    random_standard_uniform_f,
    random_standard_normal_f,
    random_standard_exponential_f,
    random_standard_gamma_f,
);

/// Register NumPy's distribution functions with the JIT (nothing when the build had
/// no `libnpyrandom`), and the constructor compiled `np.random.default_rng` calls.
pub fn install() {
    #[cfg(npyrandom)]
    numba_lower::runtime::register_host_symbols(&npyrandom_symbols());
    numba_lower::runtime::register_host_symbols(&[(
        "numba_rs_default_rng",
        numba_rs_default_rng as *const () as usize,
    )]);
}

/// `np.random.default_rng(seed)` for compiled code (`has_seed` 0: no seed, fresh OS
/// entropy): NumPy's own constructor, so the stream is NumPy's for the same seed. Writes
/// the Generator's `bitgen_t *` and the object to `out` and returns 0 (-1 on failure).
/// The object is kept alive until the dispatcher call in progress returns (the
/// buffer-view keep list): a Generator value borrows its object, as an argument does,
/// and a result returned to Python takes a reference of its own.
extern "C" fn numba_rs_default_rng(seed: i64, has_seed: i32, out: *mut [usize; 2]) -> i32 {
    let made = Python::attach(|py| -> PyResult<(usize, Py<PyAny>)> {
        let rng = py.import("numpy.random")?.getattr("default_rng")?;
        let g = if has_seed != 0 {
            rng.call1((seed,))?
        } else {
            rng.call0()?
        };
        let mut slots = crate::boxing::Slots::new();
        encode(&g, &mut slots)?;
        Ok((slots[0] as usize, g.unbind()))
    });
    match made {
        Ok((bitgen, g)) => {
            // SAFETY: `out` points at two words the caller allocated.
            unsafe { *out = [bitgen, g.as_ptr() as usize] };
            Python::attach(|py| crate::ndarray::keep_for_call(py, g));
            0
        }
        Err(_) => -1,
    }
}
