//! numba-rewrite
