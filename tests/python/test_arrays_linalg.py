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
