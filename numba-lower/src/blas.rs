//! The matrix-product helper generated code calls for `np.dot` and `@`: one general matrix
//! multiply `C = A·B` over strided operands, done by the `gemm` crate's blocked kernels
//! (the ones faer uses; SIMD chosen at run time, threads through rayon for products big
//! enough to pay for them). Strides arrive in bytes, as arrays hold them.

use gemm::{c32, c64, Parallelism};

/// Element kinds, as the lowering passes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum GemmKind {
    F32 = 0,
    F64 = 1,
    C64 = 2,
    C128 = 3,
}

impl GemmKind {
    pub(crate) fn from_code(code: i32) -> Option<GemmKind> {
        [GemmKind::F32, GemmKind::F64, GemmKind::C64, GemmKind::C128]
            .get(usize::try_from(code).ok()?)
            .copied()
    }

    /// Bytes per element.
    pub fn itemsize(self) -> isize {
        match self {
            GemmKind::F32 => 4,
            GemmKind::F64 | GemmKind::C64 => 8,
            GemmKind::C128 => 16,
        }
    }
}

/// `C (m×n) = A (m×k) · B (k×n)`; every stride is in bytes and a multiple of the item
/// size. C need not be initialised.
///
/// # Safety
/// Each operand must be valid for its shape and strides; C must be writable and its
/// elements must not alias one another.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn numba_rs_gemm(
    code: i32,
    m: i64,
    k: i64,
    n: i64,
    a: *const u8,
    rsa: i64,
    csa: i64,
    b: *const u8,
    rsb: i64,
    csb: i64,
    c: *mut u8,
    rsc: i64,
    csc: i64,
) {
    let Some(kind) = GemmKind::from_code(code) else {
        return;
    };
    let size = kind.itemsize();
    let (m, k, n) = (m.max(0) as usize, k.max(0) as usize, n.max(0) as usize);
    let el = |s: i64| s as isize / size;
    let (rsa, csa, rsb, csb, rsc, csc) = (el(rsa), el(csa), el(rsb), el(csb), el(rsc), el(csc));
    if m == 0 || n == 0 {
        return;
    }
    // Threads only pay for themselves on larger products.
    let par = if m.saturating_mul(n).saturating_mul(k) >= 48 * 48 * 48 {
        Parallelism::Rayon(0)
    } else {
        Parallelism::None
    };
    // C = 0·C + 1·(A·B), C not read; the four kinds differ only in element type.
    macro_rules! gemm {
        ($t:ty, $zero:expr, $one:expr) => {
            // SAFETY: guaranteed by the caller (strides in elements of $t).
            unsafe {
                gemm::gemm::<$t>(
                    m,
                    n,
                    k,
                    c.cast(),
                    csc,
                    rsc,
                    false,
                    a.cast(),
                    csa,
                    rsa,
                    b.cast(),
                    csb,
                    rsb,
                    $zero,
                    $one,
                    false,
                    false,
                    false,
                    par,
                )
            }
        };
    }
    match kind {
        GemmKind::F32 => gemm!(f32, 0.0, 1.0),
        GemmKind::F64 => gemm!(f64, 0.0, 1.0),
        GemmKind::C64 => gemm!(c32, c32::new(0.0, 0.0), c32::new(1.0, 0.0)),
        GemmKind::C128 => gemm!(c64, c64::new(0.0, 0.0), c64::new(1.0, 0.0)),
    }
}

/// The helper by symbol name, with its address.
pub fn symbols() -> Vec<(&'static str, usize)> {
    vec![("numba_rs_gemm", numba_rs_gemm as *const () as usize)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_with_byte_strides() {
        // [[1, 2], [3, 4]] · [[5, 6], [7, 8]] = [[19, 22], [43, 50]] (by hand); B is read
        // transposed from [[5, 7], [6, 8]] through swapped strides.
        let a = [1.0f64, 2.0, 3.0, 4.0];
        let bt = [5.0f64, 7.0, 6.0, 8.0];
        let mut c = [f64::NAN; 4];
        // SAFETY: 2×2 operands with in-bounds strides; c is a separate buffer.
        unsafe {
            numba_rs_gemm(
                GemmKind::F64 as i32,
                2,
                2,
                2,
                a.as_ptr().cast(),
                16,
                8,
                bt.as_ptr().cast(),
                8,
                16,
                c.as_mut_ptr().cast(),
                16,
                8,
            )
        };
        assert_eq!(c, [19.0, 22.0, 43.0, 50.0]);
    }

    #[test]
    fn an_empty_inner_dimension_gives_zeros() {
        let mut c = [f32::NAN; 2];
        // SAFETY: k = 0 reads nothing from A or B.
        unsafe {
            numba_rs_gemm(
                GemmKind::F32 as i32,
                1,
                0,
                2,
                std::ptr::null(),
                0,
                4,
                std::ptr::null(),
                8,
                4,
                c.as_mut_ptr().cast(),
                8,
                4,
            )
        };
        assert_eq!(c, [0.0, 0.0]);
    }
}
