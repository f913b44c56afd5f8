//! numba-nrt
