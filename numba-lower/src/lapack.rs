//! The LAPACK-like helpers generated code calls for `np.linalg` (and `np.vdot`,
//! `np.trace`): each copies its operands out of NumPy memory (any strides, in bytes) into
//! `faer` matrices, runs the decomposition there, writes the results into arrays the
//! caller allocated, and returns a [`Status`]. Inputs are never written.
//!
//! Every helper has the same C signature `i32 f(kind, descs, scalars)`: `kind` is the
//! element kind of the input ([`GemmKind`]), `descs` points at the [`Desc`]s of the
//! operands (inputs first, then outputs, as each helper documents), and `scalars` at a
//! small `f64` buffer holding scalar parameters and receiving scalar results. Real and
//! complex inputs are computed in `f64` and `Complex<f64>` (float32 and complex64 are widened
//! on the way in and rounded on the way out). Real-valued results of a complex input
//! (eigenvalues of `eigh`, singular values) are written with the matching real kind.
//!
//! Errors are statuses, never unwinding into generated code: a panic inside `faer` is caught
//! and reported as [`Status::Internal`].

use std::panic::{catch_unwind, AssertUnwindSafe};

use faer::linalg::solvers::{DenseSolveCore, SolveCore};
use faer::{c64, Conj, Mat, MatRef, Side};

pub use crate::blas::GemmKind;

/// One strided operand: `rows × cols` elements at `data`, strides in bytes. A vector is a
/// `len × 1` matrix.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Desc {
    pub data: *mut u8,
    pub rows: i64,
    pub cols: i64,
    pub row_stride: i64,
    pub col_stride: i64,
}

impl Desc {
    fn rows(&self) -> usize {
        self.rows.max(0) as usize
    }

    fn cols(&self) -> usize {
        self.cols.max(0) as usize
    }

    fn at(&self, i: usize, j: usize) -> *mut u8 {
        let off = i as isize * self.row_stride as isize + j as isize * self.col_stride as isize;
        self.data.wrapping_offset(off)
    }
}

/// What a helper returns; the lowering raises [`Status::exception`] for each failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Status {
    Ok = 0,
    Singular = 1,
    NotSquare = 2,
    NotPositiveDefinite = 3,
    NonFinite = 4,
    Empty = 5,
    Incompatible = 6,
    NoConvergence = 7,
    EigDomain = 8,
    EigvalsDomain = 9,
    NormOrder = 10,
    VectorSizes = 11,
    Internal = 12,
}

impl Status {
    /// The exception class key and message Numba raises for this status.
    pub fn exception(self) -> (&'static str, &'static str) {
        const LINALG: &str = "numpy.linalg.LinAlgError";
        match self {
            Status::Ok => ("", ""),
            Status::Singular => (LINALG, "Matrix is singular to machine precision."),
            Status::NotSquare => (LINALG, "Last 2 dimensions of the array must be square."),
            Status::NotPositiveDefinite => (LINALG, "Matrix is not positive definite."),
            Status::NonFinite => (LINALG, "Array must not contain infs or NaNs."),
            Status::Empty => (LINALG, "Arrays cannot be empty"),
            Status::Incompatible => (
                LINALG,
                "Incompatible array sizes, system is not dimensionally valid.",
            ),
            Status::NoConvergence => ("ValueError", "Internal algorithm failed to converge."),
            Status::EigDomain => (
                "ValueError",
                "eig() argument must not cause a domain change.",
            ),
            Status::EigvalsDomain => (
                "ValueError",
                "eigvals() argument must not cause a domain change.",
            ),
            Status::NormOrder => ("ValueError", "Invalid norm order for matrices."),
            Status::VectorSizes => (
                "ValueError",
                "incompatible array sizes for np.dot(a, b) (vector * vector)",
            ),
            Status::Internal => (
                "SystemError",
                "internal error in numba-rs's linear algebra runtime",
            ),
        }
    }
}

type Res = Result<(), Status>;

/// The element types the helpers compute in: `f64` for real inputs, `Complex<f64>` for
/// complex ones.
trait Field: faer::traits::ComplexField<Real = f64> + Copy {
    const COMPLEX: bool;
    fn to_c(self) -> c64;
    fn from_c(z: c64) -> Self;
    fn conj_(self) -> Self;
}

impl Field for f64 {
    const COMPLEX: bool = false;
    fn to_c(self) -> c64 {
        c64::new(self, 0.0)
    }
    fn from_c(z: c64) -> Self {
        z.re
    }
    fn conj_(self) -> Self {
        self
    }
}

impl Field for c64 {
    const COMPLEX: bool = true;
    fn to_c(self) -> c64 {
        self
    }
    fn from_c(z: c64) -> Self {
        z
    }
    fn conj_(self) -> Self {
        self.conj()
    }
}

/// Read one element of `kind` at `p` (a real kind reads an imaginary part of zero).
///
/// # Safety
/// `p` must point at a readable element of `kind`.
unsafe fn load(kind: GemmKind, p: *const u8) -> c64 {
    // SAFETY: guaranteed by the caller; unaligned reads accept any array.
    unsafe {
        match kind {
            GemmKind::F32 => c64::new(f64::from(p.cast::<f32>().read_unaligned()), 0.0),
            GemmKind::F64 => c64::new(p.cast::<f64>().read_unaligned(), 0.0),
            GemmKind::C64 => {
                let [re, im] = p.cast::<[f32; 2]>().read_unaligned();
                c64::new(f64::from(re), f64::from(im))
            }
            GemmKind::C128 => {
                let [re, im] = p.cast::<[f64; 2]>().read_unaligned();
                c64::new(re, im)
            }
        }
    }
}

/// Write `z` as one element of `kind` at `p` (a real kind keeps the real part).
///
/// # Safety
/// `p` must point at a writable element of `kind`.
unsafe fn store(kind: GemmKind, p: *mut u8, z: c64) {
    // SAFETY: guaranteed by the caller.
    unsafe {
        match kind {
            GemmKind::F32 => p.cast::<f32>().write_unaligned(z.re as f32),
            GemmKind::F64 => p.cast::<f64>().write_unaligned(z.re),
            GemmKind::C64 => p
                .cast::<[f32; 2]>()
                .write_unaligned([z.re as f32, z.im as f32]),
            GemmKind::C128 => p.cast::<[f64; 2]>().write_unaligned([z.re, z.im]),
        }
    }
}

/// The real kind of the same precision (for singular values and `eigh`'s eigenvalues).
fn real_kind(kind: GemmKind) -> GemmKind {
    match kind {
        GemmKind::F32 | GemmKind::C64 => GemmKind::F32,
        GemmKind::F64 | GemmKind::C128 => GemmKind::F64,
    }
}

/// The machine epsilon of the input's precision (what LAPACK's `s`/`d` routines use).
fn eps(kind: GemmKind) -> f64 {
    match real_kind(kind) {
        GemmKind::F32 => f64::from(f32::EPSILON),
        _ => f64::EPSILON,
    }
}

/// One helper call: the kind, the operands and the scalar buffer.
struct Call {
    kind: GemmKind,
    descs: *const Desc,
    scalars: *mut f64,
}

impl Call {
    /// Operand `i`.
    ///
    /// # Safety
    /// The caller passed at least `i + 1` descriptors.
    unsafe fn desc(&self, i: usize) -> Desc {
        // SAFETY: guaranteed by the caller.
        unsafe { *self.descs.add(i) }
    }

    /// Scalar slot `i`.
    ///
    /// # Safety
    /// The caller passed at least `i + 1` scalar slots.
    unsafe fn get(&self, i: usize) -> f64 {
        // SAFETY: guaranteed by the caller.
        unsafe { *self.scalars.add(i) }
    }

    /// # Safety
    /// As [`Call::get`].
    unsafe fn set(&self, i: usize, v: f64) {
        // SAFETY: guaranteed by the caller.
        unsafe { *self.scalars.add(i) = v }
    }

    /// A copy of operand `d` as a matrix.
    ///
    /// # Safety
    /// `d` must describe readable memory of `self.kind`.
    unsafe fn read<T: Field>(&self, d: &Desc) -> Mat<T> {
        let kind = self.kind;
        // SAFETY: every (i, j) is inside the operand.
        Mat::from_fn(d.rows(), d.cols(), |i, j| unsafe {
            T::from_c(load(kind, d.at(i, j)))
        })
    }

    /// Fill operand `d` (of `kind`) with `f(i, j)`.
    ///
    /// # Safety
    /// `d` must describe writable memory of `kind`.
    unsafe fn write_with(kind: GemmKind, d: &Desc, f: impl Fn(usize, usize) -> c64) {
        for j in 0..d.cols() {
            for i in 0..d.rows() {
                // SAFETY: (i, j) is inside the operand.
                unsafe { store(kind, d.at(i, j), f(i, j)) };
            }
        }
    }

    /// Write `m` into operand `d` of the input's kind.
    ///
    /// # Safety
    /// As [`Call::write_with`]; `m` is at least as large as `d`.
    unsafe fn write<T: Field>(&self, d: &Desc, m: MatRef<'_, T>) {
        // SAFETY: guaranteed by the caller.
        unsafe { Self::write_with(self.kind, d, |i, j| m[(i, j)].to_c()) }
    }

    /// Write real values into the vector operand `d`, in the input's real kind.
    ///
    /// # Safety
    /// As [`Call::write_with`]; `vals` has at least `d.rows` items.
    unsafe fn write_real(&self, d: &Desc, vals: &[f64]) {
        // SAFETY: guaranteed by the caller.
        unsafe { Self::write_with(real_kind(self.kind), d, |i, _| c64::new(vals[i], 0.0)) }
    }
}

/// `|z|` (num-complex's `norm` needs its `std` feature, which faer leaves off).
fn cabs(z: c64) -> f64 {
    z.re.hypot(z.im)
}

fn finite<T: Field>(m: &Mat<T>) -> bool {
    (0..m.ncols()).all(|j| {
        (0..m.nrows()).all(|i| {
            let z = m[(i, j)].to_c();
            z.re.is_finite() && z.im.is_finite()
        })
    })
}

fn square(d: &Desc) -> Res {
    if d.rows == d.cols {
        Ok(())
    } else {
        Err(Status::NotSquare)
    }
}

fn check_finite<T: Field>(m: &Mat<T>) -> Res {
    if finite(m) {
        Ok(())
    } else {
        Err(Status::NonFinite)
    }
}

/// Whether an LU factor has an exactly zero pivot (LAPACK's `getrf` info > 0).
fn singular<T: Field>(u: MatRef<'_, T>) -> bool {
    (0..u.nrows().min(u.ncols())).any(|i| u[(i, i)].to_c() == c64::new(0.0, 0.0))
}

/// Scale each column of an eigenvector matrix to unit norm, as LAPACK's `geev` returns them
/// (complex ones also rotated so that their largest component is real).
fn normalise_columns(v: &mut Mat<c64>, rotate: bool) {
    for j in 0..v.ncols() {
        let norm = (0..v.nrows())
            .map(|i| v[(i, j)].norm_sqr())
            .sum::<f64>()
            .sqrt();
        if norm == 0.0 {
            continue;
        }
        let mut scale = c64::new(1.0 / norm, 0.0);
        if rotate {
            let big = (0..v.nrows())
                .map(|i| v[(i, j)])
                .fold(
                    c64::new(0.0, 0.0),
                    |a, b| if cabs(b) > cabs(a) { b } else { a },
                );
            if cabs(big) > 0.0 {
                scale *= big.conj() / cabs(big);
            }
        }
        for i in 0..v.nrows() {
            v[(i, j)] *= scale;
        }
    }
}

/// `inv`: descs `[a, out (n×n)]`.
unsafe fn inv<T: Field>(c: &Call) -> Res {
    // SAFETY (all helpers): the lowering passes the descriptors and scalar slots each
    // helper documents, over arrays of the input's kind.
    let (a, out) = unsafe { (c.desc(0), c.desc(1)) };
    square(&a)?;
    let m = unsafe { c.read::<T>(&a) };
    check_finite(&m)?;
    if a.rows == 0 {
        return Ok(());
    }
    let lu = m.as_ref().partial_piv_lu();
    if singular(lu.U()) {
        return Err(Status::Singular);
    }
    let x = lu.inverse();
    unsafe { c.write(&out, x.as_ref()) };
    Ok(())
}

/// `solve`: descs `[a, b, x]`, `b` and `x` as `n × nrhs` (a vector is one column).
unsafe fn solve<T: Field>(c: &Call) -> Res {
    let (a, b, out) = unsafe { (c.desc(0), c.desc(1), c.desc(2)) };
    let am = unsafe { c.read::<T>(&a) };
    check_finite(&am)?;
    let mut bm = unsafe { c.read::<T>(&b) };
    check_finite(&bm)?;
    if a.rows != b.rows {
        return Err(Status::Incompatible);
    }
    square(&a)?;
    if a.rows == 0 {
        return Ok(());
    }
    let lu = am.as_ref().partial_piv_lu();
    if singular(lu.U()) {
        return Err(Status::Singular);
    }
    lu.solve_in_place_with_conj(Conj::No, bm.as_mut());
    unsafe { c.write(&out, bm.as_ref()) };
    Ok(())
}

/// `slogdet` and `det`: descs `[a]`; scalars out: sign (re, im), log|det|, det (re, im).
unsafe fn slogdet<T: Field>(c: &Call) -> Res {
    let a = unsafe { c.desc(0) };
    square(&a)?;
    let result = |sign: c64, logdet: f64| {
        let det = sign * logdet.exp();
        for (i, v) in [sign.re, sign.im, logdet, det.re, det.im]
            .into_iter()
            .enumerate()
        {
            unsafe { c.set(i, v) };
        }
    };
    if a.rows == 0 {
        result(c64::new(1.0, 0.0), 0.0);
        return Ok(());
    }
    let m = unsafe { c.read::<T>(&a) };
    check_finite(&m)?;
    let lu = m.as_ref().partial_piv_lu();
    let u = lu.U();
    if singular(u) {
        result(c64::new(0.0, 0.0), f64::NEG_INFINITY);
        return Ok(());
    }
    // The permutation's parity: n minus its number of cycles.
    let perm = lu.P().arrays().0;
    let mut seen = vec![false; perm.len()];
    let mut cycles = 0;
    for start in 0..perm.len() {
        if !seen[start] {
            cycles += 1;
            let mut i = start;
            while !seen[i] {
                seen[i] = true;
                i = perm[i];
            }
        }
    }
    let mut sign = c64::new(
        if (perm.len() - cycles) % 2 == 0 {
            1.0
        } else {
            -1.0
        },
        0.0,
    );
    let mut logdet = 0.0;
    for i in 0..u.nrows() {
        let d = u[(i, i)].to_c();
        let abs = cabs(d);
        sign *= d / abs;
        logdet += abs.ln();
    }
    if !T::COMPLEX {
        sign = c64::new(sign.re.signum(), 0.0);
    }
    result(sign, logdet);
    Ok(())
}

/// `eig`: descs `[a, w (n), v (n×n)]`; `eigvals`: `[a, w]`. A real input whose eigenvalues
/// are not all real is an error (the result type is real, as in Numba).
unsafe fn eig_common<T: Field>(c: &Call, vectors: bool) -> Res {
    let a = unsafe { c.desc(0) };
    square(&a)?;
    let m = unsafe { c.read::<T>(&a) };
    check_finite(&m)?;
    if a.rows == 0 {
        return Ok(());
    }
    let domain = if vectors {
        Status::EigDomain
    } else {
        Status::EigvalsDomain
    };
    let w = unsafe { c.desc(1) };
    if !vectors {
        let vals = m
            .as_ref()
            .eigenvalues()
            .map_err(|_| Status::NoConvergence)?;
        if !T::COMPLEX && vals.iter().any(|z| z.im != 0.0) {
            return Err(domain);
        }
        unsafe { Call::write_with(c.kind, &w, |i, _| vals[i]) };
        return Ok(());
    }
    let e = m.as_ref().eigen().map_err(|_| Status::NoConvergence)?;
    let vals: Vec<c64> = e.S().column_vector().iter().copied().collect();
    if !T::COMPLEX && vals.iter().any(|z| z.im != 0.0) {
        return Err(domain);
    }
    let mut v = e.U().to_owned();
    normalise_columns(&mut v, T::COMPLEX);
    let vd = unsafe { c.desc(2) };
    unsafe {
        Call::write_with(c.kind, &w, |i, _| vals[i]);
        Call::write_with(c.kind, &vd, |i, j| v[(i, j)]);
    }
    Ok(())
}

unsafe fn eig<T: Field>(c: &Call) -> Res {
    unsafe { eig_common::<T>(c, true) }
}

unsafe fn eigvals<T: Field>(c: &Call) -> Res {
    unsafe { eig_common::<T>(c, false) }
}

/// `eigh`: descs `[a, w (n, real), v (n×n)]`; `eigvalsh`: `[a, w]`. Only the lower
/// triangle of `a` is read (Numba's `UPLO='L'`); eigenvalues ascend.
unsafe fn eigh_common<T: Field>(c: &Call, vectors: bool) -> Res {
    let a = unsafe { c.desc(0) };
    square(&a)?;
    let m = unsafe { c.read::<T>(&a) };
    check_finite(&m)?;
    if a.rows == 0 {
        return Ok(());
    }
    let w = unsafe { c.desc(1) };
    if !vectors {
        let vals = m
            .as_ref()
            .self_adjoint_eigenvalues(Side::Lower)
            .map_err(|_| Status::NoConvergence)?;
        unsafe { c.write_real(&w, &vals) };
        return Ok(());
    }
    let e = m
        .as_ref()
        .self_adjoint_eigen(Side::Lower)
        .map_err(|_| Status::NoConvergence)?;
    let vals: Vec<f64> = e.S().column_vector().iter().map(|x| x.to_c().re).collect();
    let vd = unsafe { c.desc(2) };
    unsafe {
        c.write_real(&w, &vals);
        c.write(&vd, e.U());
    }
    Ok(())
}

unsafe fn eigh<T: Field>(c: &Call) -> Res {
    unsafe { eigh_common::<T>(c, true) }
}

unsafe fn eigvalsh<T: Field>(c: &Call) -> Res {
    unsafe { eigh_common::<T>(c, false) }
}

/// The singular values of an operand, after Numba's checks (not empty, finite).
unsafe fn singular_values<T: Field>(c: &Call, a: &Desc) -> Result<Vec<f64>, Status> {
    if a.rows == 0 || a.cols == 0 {
        return Err(Status::Empty);
    }
    let m = unsafe { c.read::<T>(a) };
    check_finite(&m)?;
    m.as_ref()
        .singular_values()
        .map_err(|_| Status::NoConvergence)
}

/// `svd`: descs `[a, u, s (real), vh]`; scalar in: full_matrices (0 or 1). `u` is
/// `m × m` (or `m × k`), `vh` is `n × n` (or `k × n`), `k = min(m, n)`.
unsafe fn svd<T: Field>(c: &Call) -> Res {
    let (a, u, s, vh) = unsafe { (c.desc(0), c.desc(1), c.desc(2), c.desc(3)) };
    if a.rows == 0 || a.cols == 0 {
        return Err(Status::Empty);
    }
    let m = unsafe { c.read::<T>(&a) };
    check_finite(&m)?;
    let full = unsafe { c.get(0) } != 0.0;
    let d = if full {
        m.as_ref().svd()
    } else {
        m.as_ref().thin_svd()
    }
    .map_err(|_| Status::NoConvergence)?;
    let vals: Vec<f64> = d.S().column_vector().iter().map(|x| x.to_c().re).collect();
    let v = d.V();
    unsafe {
        c.write(&u, d.U());
        c.write_real(&s, &vals);
        Call::write_with(c.kind, &vh, |i, j| v[(j, i)].to_c().conj());
    }
    Ok(())
}

/// `qr` (reduced): descs `[a, q (m×k), r (k×n)]`.
unsafe fn qr<T: Field>(c: &Call) -> Res {
    let (a, q, r) = unsafe { (c.desc(0), c.desc(1), c.desc(2)) };
    if a.rows == 0 || a.cols == 0 {
        return Err(Status::Empty);
    }
    let m = unsafe { c.read::<T>(&a) };
    check_finite(&m)?;
    let d = m.as_ref().qr();
    let qm = d.compute_thin_Q();
    let rm = d.thin_R();
    unsafe {
        c.write(&q, qm.as_ref());
        Call::write_with(c.kind, &r, |i, j| {
            if i > j {
                c64::new(0.0, 0.0)
            } else {
                rm[(i, j)].to_c()
            }
        });
    }
    Ok(())
}

/// `cholesky`: descs `[a, l (n×n)]`; the lower factor, zeros above the diagonal. As in
/// Numba, only the lower triangle is read and the input is not checked for NaNs.
unsafe fn cholesky<T: Field>(c: &Call) -> Res {
    let (a, out) = unsafe { (c.desc(0), c.desc(1)) };
    square(&a)?;
    if a.rows == 0 {
        return Ok(());
    }
    let m = unsafe { c.read::<T>(&a) };
    let l = m
        .as_ref()
        .llt(Side::Lower)
        .map_err(|_| Status::NotPositiveDefinite)?;
    unsafe { c.write(&out, l.L()) };
    Ok(())
}

/// `lstsq`: descs `[a (m×n), b (m×nrhs), x (n×nrhs), residuals (nrhs, real),
/// sv (min(m, n), real)]`; scalar in: rcond (< 0: machine precision); scalars out: rank,
/// whether residuals were computed (full rank and m > n, else the array is to be empty).
unsafe fn lstsq<T: Field>(c: &Call) -> Res {
    let (a, b, x, res, sv) = unsafe { (c.desc(0), c.desc(1), c.desc(2), c.desc(3), c.desc(4)) };
    let am = unsafe { c.read::<T>(&a) };
    check_finite(&am)?;
    let bm = unsafe { c.read::<T>(&b) };
    check_finite(&bm)?;
    if a.rows == 0 || a.cols == 0 || b.rows == 0 || b.cols == 0 {
        return Err(Status::Empty);
    }
    if a.rows != b.rows {
        return Err(Status::Incompatible);
    }
    let (m, n, nrhs) = (a.rows(), a.cols(), b.cols());
    let d = am.as_ref().thin_svd().map_err(|_| Status::NoConvergence)?;
    let s: Vec<f64> = d.S().column_vector().iter().map(|x| x.to_c().re).collect();
    let rcond = unsafe { c.get(0) };
    let tol = if rcond < 0.0 { eps(c.kind) } else { rcond } * s[0];
    let rank = s.iter().filter(|&&v| v > tol).count();
    // x = V · diag(1/s) · Uᴴ · b over the singular values above the cut-off.
    let (u, v) = (d.U(), d.V());
    let uh = Mat::<T>::from_fn(s.len(), m, |i, j| u[(j, i)].conj_());
    let mut y: Mat<T> = &uh * &bm;
    for i in 0..s.len() {
        let scale = if s[i] > tol { 1.0 / s[i] } else { 0.0 };
        for j in 0..nrhs {
            y[(i, j)] = T::from_c(y[(i, j)].to_c() * scale);
        }
    }
    let xm: Mat<T> = v * y.as_ref();
    let full = rank == n && m > n;
    if full {
        // Σᵢ |(A·x - b)ᵢⱼ|² per right-hand side.
        let ax: Mat<T> = &am * &xm;
        let sums: Vec<f64> = (0..nrhs)
            .map(|j| {
                (0..m)
                    .map(|i| (ax[(i, j)].to_c() - bm[(i, j)].to_c()).norm_sqr())
                    .sum()
            })
            .collect();
        unsafe { c.write_real(&res, &sums) };
    }
    unsafe {
        c.write(&x, xm.as_ref());
        c.write_real(&sv, &s);
        c.set(1, rank as f64);
        c.set(2, if full { 1.0 } else { 0.0 });
    }
    Ok(())
}

/// `norm`: descs `[x]`; scalars in: is a vector, ord is None, ord; scalar out (slot 3):
/// the norm.
unsafe fn norm<T: Field>(c: &Call) -> Res {
    let a = unsafe { c.desc(0) };
    let (vector, none, ord) = unsafe { (c.get(0) != 0.0, c.get(1) != 0.0, c.get(2)) };
    let m = unsafe { c.read::<T>(&a) };
    let abs = |i: usize, j: usize| cabs(m[(i, j)].to_c());
    let (rows, cols) = (a.rows(), a.cols());
    let value = if none {
        m.as_ref().norm_l2()
    } else if rows * cols == 0 {
        0.0
    } else if vector {
        let it = (0..rows).map(|i| abs(i, 0));
        if ord == 2.0 {
            m.as_ref().norm_l2()
        } else if ord == f64::INFINITY {
            it.fold(f64::NEG_INFINITY, f64::max)
        } else if ord == f64::NEG_INFINITY {
            it.fold(f64::INFINITY, f64::min)
        } else if ord == 0.0 {
            it.filter(|&x| x != 0.0).count() as f64
        } else if ord == 1.0 {
            it.sum()
        } else {
            it.map(|x| x.powf(ord)).sum::<f64>().powf(1.0 / ord)
        }
    } else {
        let abs = &abs;
        let row_sums = move || (0..rows).map(move |i| (0..cols).map(|j| abs(i, j)).sum::<f64>());
        let col_sums = move || (0..cols).map(move |j| (0..rows).map(|i| abs(i, j)).sum::<f64>());
        if ord == f64::INFINITY {
            row_sums().fold(0.0, f64::max)
        } else if ord == f64::NEG_INFINITY {
            row_sums().fold(f64::MAX, f64::min)
        } else if ord == 1.0 {
            col_sums().fold(0.0, f64::max)
        } else if ord == -1.0 {
            col_sums().fold(f64::MAX, f64::min)
        } else if ord == 2.0 || ord == -2.0 {
            let s = unsafe { singular_values::<T>(c, &a)? };
            if ord == 2.0 {
                s[0]
            } else {
                s[s.len() - 1]
            }
        } else {
            return Err(Status::NormOrder);
        }
    };
    unsafe { c.set(3, value) };
    Ok(())
}

/// `matrix_rank`: descs `[a]`; scalars in: is a vector, tol is None, tol; scalar out
/// (slot 3): the rank.
unsafe fn matrix_rank<T: Field>(c: &Call) -> Res {
    let a = unsafe { c.desc(0) };
    let (vector, none, tol) = unsafe { (c.get(0) != 0.0, c.get(1) != 0.0, c.get(2)) };
    let rank = if vector {
        // NumPy's (and Numba's) rule for a vector: rank 1 when any element is non-zero.
        let m = unsafe { c.read::<T>(&a) };
        usize::from((0..a.rows()).any(|i| m[(i, 0)].to_c() != c64::new(0.0, 0.0)))
    } else {
        let s = unsafe { singular_values::<T>(c, &a)? };
        let t = if none {
            s[0] * a.rows.max(a.cols) as f64 * eps(c.kind)
        } else {
            tol
        };
        s.iter().take_while(|&&v| v > t).count()
    };
    unsafe { c.set(3, rank as f64) };
    Ok(())
}

/// `pinv`: descs `[a (m×n), out (n×m)]`; scalar in: rcond (relative to the largest
/// singular value).
unsafe fn pinv<T: Field>(c: &Call) -> Res {
    let (a, out) = unsafe { (c.desc(0), c.desc(1)) };
    let m = unsafe { c.read::<T>(&a) };
    check_finite(&m)?;
    if a.rows == 0 || a.cols == 0 {
        return Ok(());
    }
    let d = m.as_ref().thin_svd().map_err(|_| Status::NoConvergence)?;
    let s: Vec<f64> = d.S().column_vector().iter().map(|x| x.to_c().re).collect();
    let cut = s[0] * unsafe { c.get(0) };
    let (u, v) = (d.U(), d.V());
    // V · diag(s⁺) · Uᴴ, with s⁺ zero at and below the cut-off.
    let sinv_uh = Mat::<T>::from_fn(s.len(), a.rows(), |i, j| {
        let scale = if s[i] > cut { 1.0 / s[i] } else { 0.0 };
        T::from_c(u[(j, i)].to_c().conj() * scale)
    });
    let p: Mat<T> = v * sinv_uh.as_ref();
    unsafe { c.write(&out, p.as_ref()) };
    Ok(())
}

/// `np.trace`: descs `[a]`; scalar in: offset; scalars out (slots 1, 2): the sum (re, im).
unsafe fn trace<T: Field>(c: &Call) -> Res {
    let a = unsafe { c.desc(0) };
    let k = unsafe { c.get(0) } as i64;
    let (mut rows, mut cols) = (a.rows, a.cols);
    if k < 0 {
        rows += k;
    } else {
        cols -= k;
    }
    let n = rows.min(cols).max(0) as usize;
    let (dr, dc) = if k >= 0 {
        (0, k as usize)
    } else {
        ((-k) as usize, 0)
    };
    let mut sum = c64::new(0.0, 0.0);
    for i in 0..n {
        sum += unsafe { load(c.kind, a.at(i + dr, i + dc)) };
    }
    unsafe {
        c.set(1, sum.re);
        c.set(2, sum.im);
    }
    Ok(())
}

/// `np.vdot`: descs `[a, b]` (vectors); scalars out (slots 0, 1): `Σ conj(aᵢ)·bᵢ`.
unsafe fn vdot<T: Field>(c: &Call) -> Res {
    let (a, b) = unsafe { (c.desc(0), c.desc(1)) };
    if a.rows != b.rows {
        return Err(Status::VectorSizes);
    }
    let mut sum = c64::new(0.0, 0.0);
    for i in 0..a.rows() {
        let (x, y) = unsafe { (load(c.kind, a.at(i, 0)), load(c.kind, b.at(i, 0))) };
        sum += x.conj() * y;
    }
    unsafe {
        c.set(0, sum.re);
        c.set(1, sum.im);
    }
    Ok(())
}

/// Run one helper for the element type `kind` computes in, catching panics.
///
/// # Safety
/// As each helper documents.
unsafe fn run(
    kind: i32,
    descs: *const Desc,
    scalars: *mut f64,
    real: unsafe fn(&Call) -> Res,
    complex: unsafe fn(&Call) -> Res,
) -> i32 {
    let Some(kind) = GemmKind::from_code(kind) else {
        return Status::Internal as i32;
    };
    let call = Call {
        kind,
        descs,
        scalars,
    };
    let f = if matches!(kind, GemmKind::C64 | GemmKind::C128) {
        complex
    } else {
        real
    };
    // SAFETY: guaranteed by the caller.
    match catch_unwind(AssertUnwindSafe(|| unsafe { f(&call) })) {
        Ok(Ok(())) => Status::Ok as i32,
        Ok(Err(s)) => s as i32,
        Err(_) => Status::Internal as i32,
    }
}

macro_rules! entries {
    ($($name:ident => $imp:ident),* $(,)?) => {
        $(
            /// Generated code's entry for one helper (see the module documentation).
            ///
            /// # Safety
            /// `descs` and `scalars` must hold what the helper documents, each
            /// descriptor over valid memory of the kind, outputs writable and not
            /// overlapping the inputs.
            pub unsafe extern "C" fn $name(kind: i32, descs: *const Desc, scalars: *mut f64) -> i32 {
                // SAFETY: guaranteed by the caller.
                unsafe { run(kind, descs, scalars, $imp::<f64>, $imp::<c64>) }
            }
        )*

        /// The helpers by symbol name, with their addresses.
        pub fn symbols() -> Vec<(&'static str, usize)> {
            vec![$((stringify!($name), $name as *const () as usize)),*]
        }
    };
}

entries! {
    numba_rs_linalg_inv => inv,
    numba_rs_linalg_solve => solve,
    numba_rs_linalg_slogdet => slogdet,
    numba_rs_linalg_eig => eig,
    numba_rs_linalg_eigvals => eigvals,
    numba_rs_linalg_eigh => eigh,
    numba_rs_linalg_eigvalsh => eigvalsh,
    numba_rs_linalg_svd => svd,
    numba_rs_linalg_qr => qr,
    numba_rs_linalg_cholesky => cholesky,
    numba_rs_linalg_lstsq => lstsq,
    numba_rs_linalg_norm => norm,
    numba_rs_linalg_matrix_rank => matrix_rank,
    numba_rs_linalg_pinv => pinv,
    numba_rs_linalg_trace => trace,
    numba_rs_linalg_vdot => vdot,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc(data: &mut [f64], rows: i64, cols: i64) -> Desc {
        // C order.
        Desc {
            data: data.as_mut_ptr().cast(),
            rows,
            cols,
            row_stride: 8 * cols,
            col_stride: 8,
        }
    }

    #[test]
    fn inverse_of_a_2x2_and_a_singular_matrix() {
        // inv([[4, 7], [2, 6]]) = [[0.6, -0.7], [-0.2, 0.4]] (by hand, det 10).
        let mut a = [4.0, 7.0, 2.0, 6.0];
        let mut out = [0.0; 4];
        let descs = [desc(&mut a, 2, 2), desc(&mut out, 2, 2)];
        let mut scalars = [0.0; 8];
        // SAFETY: two 2×2 operands as `inv` documents.
        let st = unsafe {
            numba_rs_linalg_inv(GemmKind::F64 as i32, descs.as_ptr(), scalars.as_mut_ptr())
        };
        assert_eq!(st, Status::Ok as i32);
        for (got, want) in out.iter().zip([0.6, -0.7, -0.2, 0.4]) {
            assert!((got - want).abs() < 1e-12, "{out:?}");
        }
        let mut s = [1.0, 2.0, 2.0, 4.0];
        let descs = [desc(&mut s, 2, 2), desc(&mut out, 2, 2)];
        // SAFETY: as above.
        let st = unsafe {
            numba_rs_linalg_inv(GemmKind::F64 as i32, descs.as_ptr(), scalars.as_mut_ptr())
        };
        assert_eq!(st, Status::Singular as i32);
    }

    #[test]
    fn determinant_sign_follows_the_pivots() {
        // det([[0, 1], [1, 0]]) = -1: one row swap.
        let mut a = [0.0, 1.0, 1.0, 0.0];
        let descs = [desc(&mut a, 2, 2)];
        let mut scalars = [0.0; 8];
        // SAFETY: one 2×2 operand and five scalar slots.
        let st = unsafe {
            numba_rs_linalg_slogdet(GemmKind::F64 as i32, descs.as_ptr(), scalars.as_mut_ptr())
        };
        assert_eq!(st, Status::Ok as i32);
        assert_eq!((scalars[0], scalars[2]), (-1.0, 0.0));
        assert!((scalars[3] + 1.0).abs() < 1e-15);
    }

    #[test]
    fn cholesky_rejects_an_indefinite_matrix_and_nan_is_reported() {
        let mut a = [1.0, 2.0, 2.0, 1.0];
        let mut out = [0.0; 4];
        let descs = [desc(&mut a, 2, 2), desc(&mut out, 2, 2)];
        let mut scalars = [0.0; 8];
        // SAFETY: two 2×2 operands.
        let st = unsafe {
            numba_rs_linalg_cholesky(GemmKind::F64 as i32, descs.as_ptr(), scalars.as_mut_ptr())
        };
        assert_eq!(st, Status::NotPositiveDefinite as i32);
        let mut n = [1.0, f64::NAN, 0.0, 1.0];
        let descs = [desc(&mut n, 2, 2), desc(&mut out, 2, 2)];
        // SAFETY: as above.
        let st = unsafe {
            numba_rs_linalg_inv(GemmKind::F64 as i32, descs.as_ptr(), scalars.as_mut_ptr())
        };
        assert_eq!(st, Status::NonFinite as i32);
    }
}
