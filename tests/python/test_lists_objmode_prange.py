"""Lists crossing `objmode` blocks (a captured list boxed to Python, a declared
`List(T)` result unboxed into a list of its own), lists and sets local to `prange`
iterations, and a reduction into a list refused by name. CPython's result for the same
code is the oracle; NRT counts balance (conftest)."""

import warnings

import numpy as np
import pytest

from numba_rs import njit, objmode, prange
from numba_rs.errors import UnsupportedError

warnings.filterwarnings("ignore", message=".*reflected (list|set).*")


def test_list_captured_by_objmode_is_boxed():
    @njit
    def f(n):
        l = [1, 2]
        l.append(n)
        with objmode(y="intp", z="float64"):
            y = sum(l)
            z = float(np.mean(l))
        return y, z

    assert f(3) == (6, 2.0)


def test_objmode_list_results_are_unboxed_and_owned():
    @njit
    def flat(n):
        with objmode(m="List(int64)"):
            m = [x * 2 for x in range(n)]
        m.append(-1)
        return m

    @njit
    def nested(n):
        with objmode(m="List(List(float64))"):
            m = [[float(i)] * i for i in range(1, n)]
        total = 0.0
        for row in m:
            total += sum(row)
        return m, total

    @njit
    def aset(n):
        with objmode(s="Set(int64)"):
            s = {i % 3 for i in range(n)}
        s.add(10)
        return len(s)

    assert flat(3) == [0, 2, 4, -1]
    assert flat(0) == [-1]
    m, total = nested(4)
    assert m == [[1.0], [2.0, 2.0], [3.0, 3.0, 3.0]] and total == 14.0
    assert aset(7) == 4


def test_objmode_result_of_the_wrong_type_is_a_type_error():
    @njit
    def f():
        with objmode(m="List(int64)"):
            m = (1, 2)
        return m

    with pytest.raises(TypeError):
        f()


def test_lists_and_sets_local_to_prange_iterations():
    @njit(parallel=True)
    def local(n):
        out = np.zeros(n)
        for i in prange(n):
            t = [i, i + 1]
            t.append(i * 2)
            s = {i, 2}
            out[i] = sum(t) + len(s)
        return out

    def py(n):
        return np.array([sum([i, i + 1, i * 2]) + len({i, 2}) for i in range(n)], dtype=float)

    np.testing.assert_array_equal(local(50), py(50))


def test_reduction_into_a_list_is_refused_by_name():
    @njit(parallel=True)
    def red(n):
        l = [0]
        for i in prange(n):
            l += [i]
        return l

    with pytest.raises(UnsupportedError, match="reduction of list variable 'l'"):
        red(5)
