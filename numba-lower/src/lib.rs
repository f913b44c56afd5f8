//! numba-lower
