//! numba-dispatch
