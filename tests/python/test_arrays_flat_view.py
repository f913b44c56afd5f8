"""`a.flat` (iteration, indexing, assignment), `np.ndenumerate` and `a.view(dtype)` in
jitted code, against NumPy running the same functions on C, F and strided arrays."""

import numpy as np
import pytest

from numba_rs import njit


def layouts(x):
    return [np.ascontiguousarray(x), np.asfortranarray(x),
            np.repeat(np.repeat(x, 2, axis=0), 3, axis=-1)[::2, ::3]]


def flat_reads(a):
    s = 0.0
    k = 0
    for x in a.flat:
        s += x * (k + 1)
        k += 1
    return s, a.flat[3], a.flat[-1], len(a.flat)


def flat_writes(a):
    for i in range(len(a.flat)):
        if i % 3 == 0:
            a.flat[i] = i + 50
    return a


def enumerated(a):
    s = 0.0
    last = (0, 0)
    for idx, x in np.ndenumerate(a):
        s += (idx[0] * 100 + idx[1]) * (x + 0.0)
        last = idx
    return s, last


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.uint8])
def test_flat_and_ndenumerate_match_numpy(dtype):
    base = (np.arange(20).reshape(4, 5) % 7).astype(dtype)
    for a in layouts(base):
        got, exp = njit(flat_reads)(a), flat_reads(a)
        assert got == pytest.approx(exp)
        np.testing.assert_array_equal(njit(flat_writes)(a.copy(order="K")),
                                      flat_writes(a.copy(order="K")))
        (gs, gl), (es, el) = njit(enumerated)(a), enumerated(a)
        assert gs == pytest.approx(es) and gl == el
    # A strided view written through flat changes its parent.
    parent = np.zeros((4, 6))
    njit(flat_writes)(parent[::2, 1::2])
    expected = np.zeros((4, 6))
    flat_writes(expected[::2, 1::2])
    np.testing.assert_array_equal(parent, expected)


def test_flat_index_out_of_range_is_index_error():
    with pytest.raises(IndexError):
        njit(lambda a: a.flat[6])(np.zeros((2, 3)))


def view_as(a, dt):
    return a.view(dt)


@pytest.mark.parametrize("src,dst", [(np.float64, np.int64), (np.int32, np.float32),
                                     (np.float64, np.uint8), (np.uint8, np.int32),
                                     (np.complex128, np.float64), (np.int16, np.int16)])
def test_view_reinterprets_memory(src, dst):
    a = (np.arange(24) * 37 % 251).astype(src).reshape(2, -1)
    got = njit(lambda a: a.view(dst))(a)
    expected = a.view(dst)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    got[0, 0] = 0
    assert a.view(dst)[0, 0] == 0  # the same memory


def test_view_errors_are_numpys():
    with pytest.raises(ValueError, match="contiguous"):
        njit(lambda a: a.view(np.int32))(np.zeros((4, 4))[:, ::2])
    with pytest.raises(ValueError, match="divisor"):
        njit(lambda a: a.view(np.int64))(np.zeros(3, dtype=np.int32))


def test_wrappers_of_new_arrays_keep_them_alive():
    # The arrays here are made inside the function (NRT memory, reference counted), so
    # the wrappers must hold their own references (Numba's premature-free tests).
    def enumerate_new(n):
        x = np.arange(n)
        res = np.zeros_like(x)
        for i, v in np.ndenumerate(x):
            res[i] = v * 2
        return res

    def flat_new(n):
        s = 0
        for v in np.arange(n).reshape(2, -1).flat:
            s += v
        return s

    def view_new(n):
        v = np.zeros(n).view(np.int64)
        v[0] = 1
        return v

    np.testing.assert_array_equal(njit(enumerate_new)(6), enumerate_new(6))
    assert njit(flat_new)(8) == flat_new(8)
    np.testing.assert_array_equal(njit(view_new)(4), view_new(4))


# np.ndindex: the index tuples of a shape in C order.


def ndindex_walk(a):
    s = 0.0
    for idx in np.ndindex(a.shape):
        s += a[idx] * (idx[0] + 1)
    n = 0
    for i, j in np.ndindex(3, 2):
        n = n * 7 + i * 10 + j
    return s, n


def ndindex_count(n):
    c = 0
    for t in np.ndindex(n, 2):
        c += t[0] + 1
    return c


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 2), (0, 3)])
def test_ndindex_matches_numpy(shape):
    a = np.arange(float(np.prod(shape))).reshape(shape)
    assert njit(ndindex_walk)(a) == ndindex_walk(a)


def test_ndindex_counts_and_rejects_negative_dimensions():
    f = njit(ndindex_count)
    assert f(4) == ndindex_count(4) and f(0) == 0
    with pytest.raises(ValueError):
        np.ndindex(-1, 2)  # the oracle raises as well
    with pytest.raises(ValueError, match="negative dimensions"):
        f(-1)
