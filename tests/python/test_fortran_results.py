"""Element-wise results of Fortran-ordered arrays are Fortran-ordered (Numba's ufunc
layout rule, and what NumPy's `K` order gives): the result's type, its flags, and every
operation on it against NumPy, including the aliasing that order decides
(`np.ascontiguousarray` of an F result copies)."""

import numpy as np
import pytest

from numba_rs import njit

F = np.asfortranarray(np.arange(12.0).reshape(3, 4) - 5.5)
C = np.ascontiguousarray(F)
ROW = np.arange(4.0)


def ops(a):
    return (a + 1, a * a, -a, np.sin(a), a > 0, np.where(a > 0, a, 0.25),
            np.where(a > 0, 1.0, 2.0), np.maximum(a, 0.5), np.abs(a))


@pytest.mark.parametrize("arr", [F, C], ids=["F", "C"])
def test_element_wise_results_keep_numpys_order(arr):
    got, want = njit(ops)(arr), ops(arr)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.array_equal(g, w)
        assert g.flags["F_CONTIGUOUS"] == w.flags["F_CONTIGUOUS"]
        assert g.flags["C_CONTIGUOUS"] == w.flags["C_CONTIGUOUS"]


def test_the_result_type_is_fortran_as_numba_types_it():
    f = njit(lambda a: a + 1)
    f(F)
    assert str(f.nopython_signatures[0].return_type) == "array(float64, 2d, F)"
    # A C operand (or a 1-d one, which is C) makes the result C, as in Numba.
    g = njit(lambda a, b: a + b)
    assert g(F, C).flags["C_CONTIGUOUS"] and g(F, ROW).flags["C_CONTIGUOUS"]


def uses(a):
    b = a * 2.0
    c = np.ascontiguousarray(b).reshape(-1)
    c[2] = 99.0  # a copy: b is F-ordered
    s = 0.0
    for row in b:
        s += row[0]
    stats = np.array([s, b[2, 3], b.max(), b.mean()])
    first = (b.ravel(), b.flatten(), b.T.copy(), b.sum(axis=0), b.sum(axis=1),
             b[1:, ::2].copy(), b.copy(), b.astype(np.int64), b @ np.ones(4), c, stats)
    b += 1.0
    return first + (b.copy(), b + np.ones((3, 4)))


def test_operations_on_fortran_results_match_numpy():
    for g, w in zip(njit(uses)(F), uses(F)):
        assert np.allclose(g, w) and g.shape == w.shape


def test_fuzz_303_1641_where_result_is_copied_by_ascontiguousarray():
    # The fuzzer's finding: the `where` result of an F array is F-ordered, so
    # `ascontiguousarray` copies, and the later store leaves it unchanged.
    def f(a):
        w = np.where(a > 6, a, 0.375)
        b5 = np.ascontiguousarray(w).reshape(-1)
        b5[2] = -1.0
        return w, b5

    a = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    for g, w in zip(njit(f)(a), f(a)):
        assert np.array_equal(g, w)


@pytest.mark.parametrize("seed", range(6))
def test_generated_expressions_over_mixed_orders(seed):
    rng = np.random.default_rng(seed)
    arrays = {"f": F, "c": C, "t": C.T.copy().T, "r": ROW}
    names = list(arrays)
    terms = []
    for _ in range(4):
        x, y = rng.choice(names[:3]), rng.choice(names)
        op = rng.choice(["+", "*", "-"])
        terms.append(f"({x} {op} {y})")
    src = "def g(f, c, t, r):\n    e = " + " + ".join(terms) + "\n    return e, np.ascontiguousarray(e)\n"
    ns = {"np": np}
    exec(src, ns)
    g = ns["g"]
    got, want = njit(g)(**arrays), g(**arrays)
    for x, y in zip(got, want):
        assert np.allclose(x, y)
        assert x.flags["F_CONTIGUOUS"] == y.flags["F_CONTIGUOUS"], src
