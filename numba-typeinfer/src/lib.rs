//! numba-typeinfer
