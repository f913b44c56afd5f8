"""``out[slices] = expression`` whose operands overlap ``out``: the expression is
evaluated as NumPy evaluates it (into a temporary, then assigned), with one temporary at
most however many operands overlap, and none when nothing overlaps. The oracle is NumPy
running the same statement."""

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.runtime import rtsys


def laplace(u, c):
    u[1:-1, 1:-1] = (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]) * c


def shift_up(u):
    u[:-1, :] = u[1:, :] * 2.0 + u[:-1, :]


def shift_down(u):
    u[1:, :] = u[:-1, :] - u[1:, :] * 0.5


def shift_left(u):
    u[:, :-1] = u[:, 1:] + 1.0


def shift_right(u):
    u[:, 1:] = u[:, :-1] * u[:, 1:]


def same(u):
    u[:, :] = u[:, :] * 3.0 - u


def reversed_rows(u):
    u[:, :] = u[::-1, :] + u


def transposed(u):
    u[:, :] = u.T + u


def broadcast_row(u):
    u[1:, :] = u[0, :] + u[:-1, :]


def strided_1d(v):
    v[::2] = v[1::2] + v[::-2]


def three_d(w):
    w[1:, :, 1:] = w[:-1, :, :-1] + w[1:, :, 1:] * 2.0


CASES = [
    (laplace, lambda r: (r.random((7, 9)), 0.25)),
    (shift_up, lambda r: (r.random((6, 5)),)),
    (shift_down, lambda r: (r.random((6, 5)),)),
    (shift_left, lambda r: (r.random((4, 8)),)),
    (shift_right, lambda r: (r.random((4, 8)),)),
    (same, lambda r: (r.random((5, 5)),)),
    (reversed_rows, lambda r: (r.random((5, 3)),)),
    (transposed, lambda r: (r.random((6, 6)),)),
    (broadcast_row, lambda r: (r.random((5, 4)),)),
    (strided_1d, lambda r: (r.random(10),)),
    (three_d, lambda r: (r.random((3, 4, 5)),)),
]


@pytest.mark.parametrize("f, make", CASES, ids=[f.__name__ for f, _ in CASES])
@pytest.mark.parametrize("order", ["C", "F"])
def test_overlapping_store_equals_numpy(f, make, order):
    args = make(np.random.default_rng(7))
    args = tuple(np.asarray(a, order=order) if isinstance(a, np.ndarray) else a for a in args)
    want = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    f(*want)
    got = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    jf = njit(f)
    jf(*got)
    np.testing.assert_array_equal(got[0], want[0])
    # At most one temporary per statement, however many operands overlap.
    before = rtsys.get_allocation_stats().alloc
    jf(*tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args))
    assert rtsys.get_allocation_stats().alloc - before <= 1


def disjoint(u, v):
    u[1:-1, 1:-1] = (v[2:, 1:-1] + v[:-2, 1:-1]) * 0.5


def test_no_temporary_without_overlap():
    r = np.random.default_rng(3)
    u, v = r.random((6, 7)), r.random((6, 7))
    want = u.copy()
    disjoint(want, v)
    jf = njit(disjoint)
    jf(u.copy(), v)
    before = rtsys.get_allocation_stats().alloc
    jf(u, v)
    assert rtsys.get_allocation_stats().alloc == before
    np.testing.assert_array_equal(u, want)


def converts(u):
    u[1:] = u[:-1] * 1.75


def test_the_temporary_keeps_the_expression_dtype():
    # The expression is float64; the store converts into the int array afterwards.
    u = np.arange(8, dtype=np.int64)
    want = u.copy()
    converts(want)
    njit(converts)(u)
    np.testing.assert_array_equal(u, want)
