//! numba-parfor
