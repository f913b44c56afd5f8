"""Matrix products in jitted code against NumPy: `np.dot` and `@` over 1-d and 2-d
operands of every float and complex dtype and any layout, and their errors."""

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.errors import TypingError

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def operands(dtype, seed=0):
    rng = np.random.default_rng(seed)

    def make(*shape):
        x = rng.uniform(-1, 1, shape)
        if np.dtype(dtype).kind == "c":
            x = x + 1j * rng.uniform(-1, 1, shape)
        return x.astype(dtype)

    a, b, v, w = make(6, 9), make(9, 4), make(9), make(6)
    return [(a, b), (a, v), (w, a), (v, v), (np.asfortranarray(a), b), (a, b.T.copy().T),
            (a[:, ::3], b[::3]), (a[::-1], v), (w[::2], a[::2]), (v[::-2], v[::2]),
            (a[:0], b), (a[:, :0], b[:0])]


def products(x, y):
    return np.dot(x, y), x @ y


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_dot_and_matmul_match_numpy(dtype):
    f = njit(products)
    rtol = 1e-5 if dtype in (np.float32, np.complex64) else 1e-12
    for x, y in operands(dtype):
        expected = np.dot(x, y)
        for got in f(x, y):
            assert np.shape(got) == np.shape(expected)
            if isinstance(expected, np.ndarray):
                assert got.dtype == expected.dtype
            np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)


def test_mismatched_inner_dimensions_are_value_errors():
    f = njit(products)
    with pytest.raises(ValueError, match="incompatible array sizes"):
        f(np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="incompatible array sizes"):
        f(np.ones(3), np.ones(4))


def test_unsupported_operands_are_typing_errors():
    with pytest.raises(TypingError):
        njit(products)(np.ones((2, 2), dtype=np.int64), np.ones((2, 2), dtype=np.int64))
    with pytest.raises(TypingError):
        njit(products)(np.ones((2, 2)), np.ones((2, 2), dtype=np.float32))


# --- np.linalg, np.vdot, np.outer, np.trace -------------------------------------------

LinAlgError = np.linalg.LinAlgError
DTYPE_IDS = lambda d: np.dtype(d).name  # noqa: E731


def tol(dtype):
    return 2e-4 if dtype in (np.float32, np.complex64) else 1e-10


def real_dtype(dtype):
    return np.float32 if dtype in (np.float32, np.complex64) else np.float64


def random(dtype, *shape, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.uniform(-1, 1, shape)
    return x.astype(dtype)


def well_conditioned(dtype, n, seed=1):
    return (random(dtype, n, n, seed=seed) + n * np.eye(n)).astype(dtype)


def hermitian(dtype, n, seed=1):
    x = random(dtype, n, n, seed=seed)
    return (x + x.conj().T + 2 * n * np.eye(n)).astype(dtype)


def layouts(x):
    """The same values C-ordered, Fortran-ordered and as a strided (non-contiguous) view."""
    big = np.zeros(tuple(2 * s for s in x.shape), dtype=x.dtype)
    view = big[tuple(slice(None, None, 2) for _ in x.shape)]
    view[...] = x
    assert not view.flags.c_contiguous and not view.flags.f_contiguous
    return [np.ascontiguousarray(x), np.asfortranarray(x), view]


def close(got, want, dtype, scale=1.0):
    t = tol(dtype) * scale
    np.testing.assert_allclose(got, want, rtol=t, atol=t)


def inv(a):
    return np.linalg.inv(a)


def solve(a, b):
    return np.linalg.solve(a, b)


def det(a):
    return np.linalg.det(a)


def slogdet(a):
    return np.linalg.slogdet(a)


def eig(a):
    return np.linalg.eig(a)


def eigvals(a):
    return np.linalg.eigvals(a)


def eigh(a):
    return np.linalg.eigh(a)


def eigvalsh(a):
    return np.linalg.eigvalsh(a)


def svd(a):
    return np.linalg.svd(a)


def svd_full(a, full):
    return np.linalg.svd(a, full_matrices=full)


def qr(a):
    return np.linalg.qr(a)


def cholesky(a):
    return np.linalg.cholesky(a)


def lstsq(a, b):
    return np.linalg.lstsq(a, b)


def lstsq_rcond(a, b, rcond):
    return np.linalg.lstsq(a, b, rcond=rcond)


def norm(x):
    return np.linalg.norm(x)


def norm_ord(x, ord):
    return np.linalg.norm(x, ord)


def norm_inf_constant(x):
    return np.linalg.norm(x, ord=np.inf), np.linalg.norm(x, -np.inf)


def matrix_rank(a):
    return np.linalg.matrix_rank(a)


def matrix_rank_tol(a, tol):
    return np.linalg.matrix_rank(a, tol)


def pinv(a):
    return np.linalg.pinv(a)


def trace(a, k):
    return np.trace(a), np.trace(a, k), np.trace(a, offset=-k)


def vdot(a, b):
    return np.vdot(a, b)


def outer(a, b):
    return np.outer(a, b)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_inv_matches_numpy_on_every_layout(dtype):
    f = njit(inv)
    for a in layouts(well_conditioned(dtype, 5)):
        got = f(a)
        assert got.dtype == dtype and got.shape == (5, 5)
        close(got, np.linalg.inv(a), dtype)
    assert f(np.empty((0, 0), dtype=dtype)).shape == (0, 0)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_solve_with_vector_and_matrix_right_hand_sides(dtype):
    f = njit(solve)
    a = well_conditioned(dtype, 6)
    for b in [random(dtype, 6, seed=2), random(dtype, 6, 3, seed=3)]:
        want = np.linalg.solve(a, b)
        for aa in layouts(a):
            for bb in layouts(b):
                got = f(aa, bb)
                assert got.dtype == dtype and got.shape == want.shape
                close(got, want, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_det_and_slogdet_match_numpy(dtype):
    fd, fs = njit(det), njit(slogdet)
    # A row swap in front makes the sign negative for the real case.
    a = well_conditioned(dtype, 5)[[1, 0, 2, 3, 4]]
    for aa in layouts(a):
        close(fd(aa), np.linalg.det(aa), dtype, scale=10)
        sign, logdet = fs(aa)
        want_sign, want_logdet = np.linalg.slogdet(aa)
        close(sign, want_sign, dtype)
        close(logdet, want_logdet, dtype)
    singular = np.array([[1, 2], [2, 4]], dtype=dtype)
    assert fd(singular) == 0
    assert fs(singular) == (0, -np.inf)
    assert fd(np.empty((0, 0), dtype=dtype)) == 1


def real_spectrum(dtype, n, seed=4):
    """A non-symmetric matrix with real, distinct eigenvalues: P·diag(1..n)·P⁻¹."""
    p = well_conditioned(np.float64, n, seed=seed)
    a = p @ np.diag(np.arange(1.0, n + 1)) @ np.linalg.inv(p)
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_eig_and_eigvals_satisfy_a_v_equals_v_w(dtype):
    fe, fv = njit(eig), njit(eigvals)
    a = real_spectrum(dtype, 5) if np.dtype(dtype).kind == "f" else random(dtype, 5, 5)
    for aa in layouts(a):
        w, v = fe(aa)
        assert w.dtype == dtype and v.dtype == dtype and v.shape == (5, 5)
        close(aa @ v, v * w, dtype, scale=50)
        np.testing.assert_allclose(np.linalg.norm(v, axis=0), 1, rtol=tol(dtype) * 10)
        want = np.sort_complex(np.linalg.eigvals(aa))
        close(np.sort_complex(w), want, dtype, scale=50)
        close(np.sort_complex(fv(aa)), want, dtype, scale=50)


def test_eig_of_a_real_matrix_with_complex_eigenvalues_is_a_value_error():
    rotation = np.array([[0.0, -1.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match=r"eig\(\) argument must not cause a domain change"):
        njit(eig)(rotation)
    with pytest.raises(ValueError, match=r"eigvals\(\) argument must not cause a domain change"):
        njit(eigvals)(rotation)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_eigh_and_eigvalsh_match_numpy(dtype):
    fh, fv = njit(eigh), njit(eigvalsh)
    a = hermitian(dtype, 6)
    # Only the lower triangle is read (UPLO='L', as NumPy's default).
    scribbled = a.copy()
    scribbled[np.triu_indices(6, 1)] = 99
    for aa in layouts(scribbled):
        w, v = fh(aa)
        assert w.dtype == real_dtype(dtype) and v.dtype == dtype
        want = np.linalg.eigvalsh(a)
        close(w, want, dtype, scale=10)
        close(a @ v, v * w, dtype, scale=50)
        close(v.conj().T @ v, np.eye(6), dtype, scale=10)
        close(fv(aa), want, dtype, scale=10)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5)])
def test_svd_reconstructs_and_matches_numpy_shapes(dtype, shape):
    f, ff = njit(svd), njit(svd_full)
    a = random(dtype, *shape)
    k = min(shape)
    for aa in layouts(a):
        for full, (u, s, vh) in [(True, f(aa)), (True, ff(aa, True)), (False, ff(aa, False))]:
            wu, ws, wvh = np.linalg.svd(aa, full_matrices=full)
            assert (u.shape, s.shape, vh.shape) == (wu.shape, ws.shape, wvh.shape)
            assert u.dtype == dtype and vh.dtype == dtype and s.dtype == real_dtype(dtype)
            close(s, ws, dtype, scale=10)
            close((u[:, :k] * s) @ vh[:k], aa, dtype, scale=10)
            close(u.conj().T @ u, np.eye(u.shape[1]), dtype, scale=10)
            close(vh @ vh.conj().T, np.eye(vh.shape[0]), dtype, scale=10)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5)])
def test_qr_is_orthonormal_times_upper_triangular(dtype, shape):
    f = njit(qr)
    a = random(dtype, *shape)
    for aa in layouts(a):
        q, r = f(aa)
        wq, wr = np.linalg.qr(aa)
        assert q.shape == wq.shape and r.shape == wr.shape
        assert q.dtype == dtype and r.dtype == dtype
        close(q @ r, aa, dtype, scale=10)
        close(q.conj().T @ q, np.eye(q.shape[1]), dtype, scale=10)
        assert np.all(np.tril(r, -1) == 0)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_cholesky_matches_numpy(dtype):
    f = njit(cholesky)
    a = hermitian(dtype, 5)
    for aa in layouts(a):
        got = f(aa)
        assert got.dtype == dtype
        close(got, np.linalg.cholesky(aa), dtype, scale=10)
        assert np.all(np.triu(got, 1) == 0)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_lstsq_matches_numpy(dtype):
    f, fr = njit(lstsq), njit(lstsq_rcond)
    cases = [
        (random(dtype, 8, 4), random(dtype, 8, seed=2)),  # overdetermined, vector
        (random(dtype, 8, 4), random(dtype, 8, 3, seed=2)),  # overdetermined, matrix
        (random(dtype, 3, 5), random(dtype, 3, seed=2)),  # underdetermined: no residuals
    ]
    deficient = random(dtype, 8, 4, seed=3)  # rank 2 (exactly, in every precision)
    deficient[:, 2:] = 0
    cases.append((deficient, random(dtype, 8, 2, seed=4)))
    for a, b in cases:
        wx, wres, wrank, wsv = np.linalg.lstsq(a, b, rcond=None)
        for aa in layouts(a):
            x, res, rank, sv = f(aa, b)
            assert x.dtype == dtype and x.shape == wx.shape
            assert res.dtype == real_dtype(dtype) and sv.dtype == real_dtype(dtype)
            assert rank == wrank and res.shape == wres.shape
            close(x, wx, dtype, scale=100)
            close(res, wres, dtype, scale=100)
            close(sv, wsv, dtype, scale=10)
        # An rcond that cuts every singular value but the largest: rank 1.
        assert fr(a, b, 0.999)[2] == 1


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_vector_and_matrix_norms_match_numpy(dtype):
    f, fo = njit(norm), njit(norm_ord)
    v = random(dtype, 7)
    v[3] = 0
    m = random(dtype, 4, 6)
    for vv in layouts(v):
        close(f(vv), np.linalg.norm(vv), dtype)
        for ord in [2, 1, np.inf, -np.inf, 0, 3, -1, 0.5]:
            with np.errstate(divide="ignore"):  # |0| ** -1 (inf, in both)
                want = np.linalg.norm(vv, ord)
            close(fo(vv, ord), want, dtype, scale=10)
    for mm in layouts(m):
        close(f(mm), np.linalg.norm(mm), dtype)
        for ord in [1, -1, 2, -2, np.inf, -np.inf]:
            close(fo(mm, ord), np.linalg.norm(mm, ord), dtype, scale=10)
    close(njit(norm_inf_constant)(m), (np.linalg.norm(m, np.inf), np.linalg.norm(m, -np.inf)), dtype)
    with pytest.raises(ValueError, match="Invalid norm order for matrices."):
        fo(m, 3)
    assert fo(np.empty((0, 3), dtype=dtype), 1) == 0


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_matrix_rank_pinv_and_trace_match_numpy(dtype):
    fr, frt, fp, ft = njit(matrix_rank), njit(matrix_rank_tol), njit(pinv), njit(trace)
    full = random(dtype, 6, 4)
    rank1 = random(dtype, 6, 1) @ random(dtype, 1, 4, seed=2)
    for a in [full, rank1]:
        for aa in layouts(a):
            assert fr(aa) == np.linalg.matrix_rank(aa)
            got = fp(aa)
            assert got.dtype == dtype and got.shape == (4, 6)
            close(got, np.linalg.pinv(aa), dtype, scale=1000)
    assert frt(full, 1e3) == 0
    assert fr(np.zeros(4, dtype=dtype)) == 0 and fr(random(dtype, 4)) == 1
    sq = random(dtype, 5, 5)
    for aa in layouts(sq):
        close(ft(aa, 2), (np.trace(aa), np.trace(aa, 2), np.trace(aa, offset=-2)), dtype)
    close(ft(sq, 9), (np.trace(sq), 0, 0), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_vdot_conjugates_the_first_operand(dtype):
    f = njit(vdot)
    a, b = random(dtype, 9), random(dtype, 9, seed=2)
    for aa in layouts(a):
        for bb in [b, b[::-1]]:
            # Scalars cross into Python as float/complex (as from Numba).
            close(f(aa, bb), np.vdot(aa, bb), dtype)
    with pytest.raises(ValueError, match="incompatible array sizes"):
        f(a, b[:3])


def test_outer_flattens_and_follows_numpy_multiply_types():
    f = njit(outer)
    cases = [
        (np.arange(4), np.arange(3)),
        (np.arange(4, dtype=np.int32), np.linspace(0, 1, 5)),
        (np.array([True, False]), np.array([True, True, False])),
        (random(np.complex64, 2, 3), random(np.float32, 4)),
        (np.asfortranarray(random(np.float64, 3, 2)), random(np.float64, 4, 3)[::2, ::-1]),
        (2.5, np.arange(3)),
        (np.arange(3.0), 2),
    ]
    for a, b in cases:
        want = np.outer(a, b)
        got = f(a, b)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_linalg_errors_raise_what_numba_raises():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    nonsquare = np.ones((2, 3))
    nan = np.array([[1.0, np.nan], [0.0, 1.0]])
    with pytest.raises(LinAlgError, match="Matrix is singular to machine precision."):
        njit(inv)(singular)
    with pytest.raises(LinAlgError, match="Matrix is singular to machine precision."):
        njit(solve)(singular, np.ones(2))
    for f in [inv, det, eig, eigvalsh, cholesky]:
        with pytest.raises(LinAlgError, match="Last 2 dimensions of the array must be square"):
            njit(f)(nonsquare)
    with pytest.raises(LinAlgError, match="Matrix is not positive definite."):
        njit(cholesky)(np.array([[1.0, 2.0], [2.0, 1.0]]))
    for f in [inv, det, eig, eigh, svd, qr, pinv]:
        with pytest.raises(LinAlgError, match="Array must not contain infs or NaNs."):
            njit(f)(nan)
    with pytest.raises(LinAlgError, match="Array must not contain infs or NaNs."):
        njit(solve)(np.eye(2), np.array([1.0, np.inf]))
    with pytest.raises(LinAlgError, match="Arrays cannot be empty"):
        njit(svd)(np.empty((0, 3)))
    with pytest.raises(LinAlgError, match="system is not dimensionally valid"):
        njit(solve)(np.eye(3), np.ones(2))
    with pytest.raises(LinAlgError, match="system is not dimensionally valid"):
        njit(lstsq)(np.ones((3, 2)), np.ones(4))


def catch_singular(a):
    try:
        x = np.linalg.inv(a)
        return x.sum()
    except np.linalg.LinAlgError:
        return -1.0


def test_linalg_error_can_be_caught_in_jitted_code():
    f = njit(catch_singular)
    assert f(np.array([[1.0, 2.0], [2.0, 4.0]])) == -1.0
    assert f(np.eye(3)) == 3.0


def test_linalg_as_a_module_global():
    from numpy.linalg import inv as imported_inv

    def g(a):
        return imported_inv(a)

    np.testing.assert_allclose(njit(g)(np.eye(2) * 2), np.eye(2) / 2)
    la = np.linalg

    def h(a):
        return la.det(a)

    assert njit(h)(np.eye(3) * 2) == pytest.approx(8.0)


@pytest.mark.parametrize(
    "f, args",
    [
        (inv, (np.eye(2, dtype=np.int64),)),
        (inv, (np.ones(3),)),
        (det, (np.ones((2, 2, 2)),)),
        (solve, (np.eye(2), np.ones(2, dtype=np.float32))),
        (eigh, (np.ones(3),)),
        (svd, (np.eye(2, dtype=np.int32),)),
        (vdot, (np.ones((2, 2)), np.ones((2, 2)))),
        (vdot, (np.ones(2), np.ones(2, dtype=np.complex128))),
        (outer, (np.ones((2, 2, 2)), np.ones(2))),
        (norm, (np.ones((2, 2, 2)),)),
        (lstsq, (np.eye(2), np.ones((2, 2, 2)))),
    ],
)
def test_unsupported_linalg_operands_are_typing_errors(f, args):
    with pytest.raises(TypingError):
        njit(f)(*args)


def test_dot_method_is_np_dot():
    def f(a, b):
        return a.dot(b), b.dot(b)

    rng = np.random.default_rng(3)
    a, b = rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, 3)
    got, expected = njit(f)(a, b), f(a, b)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)
    assert got[1] == pytest.approx(expected[1], rel=1e-12)
