//! numba-py
