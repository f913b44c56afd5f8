"""`numba_rs.extending.register_jitable` (Numba's `numba.extending.register_jitable`): a
plain Python function that jitted code calls compiled; the names of Numba's extension API
numba-rs lacks raise an AttributeError naming themselves. CPython's result is the oracle."""

import math

import numpy as np
import pytest

import numba_rs
from numba_rs.extending import register_jitable


@register_jitable
def clamp(x, lo, hi):
    return min(max(x, lo), hi)


@register_jitable(fastmath=True)
def norm2(a):
    s = 0.0
    for v in a:
        s += v * v
    return math.sqrt(s)


def clamp_all(a, lo, hi):
    out = np.empty_like(a)
    for i in range(a.size):
        out[i] = clamp(a[i], lo, hi)
    return out, norm2(out)


def test_register_jitable_from_python_and_jit():
    assert clamp is not None and clamp(5, 0, 3) == 3  # still the Python function
    assert type(clamp).__name__ == "function"
    a = np.linspace(-2.0, 2.0, 9)
    want = clamp_all(a, -1.0, 1.5)
    got = numba_rs.njit(clamp_all)(a, -1.0, 1.5)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == pytest.approx(want[1])
    # Integers too: a specialisation per argument types.
    assert numba_rs.njit(lambda x: clamp(x, 0, 10))(42) == 10


def test_register_jitable_in_parallel_code():
    @numba_rs.njit(parallel=True)
    def f(a):
        out = np.empty_like(a)
        for i in numba_rs.prange(a.size):
            out[i] = clamp(a[i], 0.0, 0.5)
        return out

    a = np.random.default_rng(3).random(10_000)
    np.testing.assert_array_equal(f(a), np.clip(a, 0.0, 0.5))


def test_missing_extension_api_is_an_attribute_error_naming_it():
    # hasattr / getattr(m, n, default) must work: a missing name is AttributeError.
    assert hasattr(numba_rs.extending, "overload")
    assert hasattr(numba_rs.extending, "typeof_impl")  # opaque user types (test_user_types)
    assert hasattr(numba_rs.extending, "lower_cast")  # implicit conversions (test_user_conversions)
    assert not hasattr(numba_rs.extending, "lower_setattr")
    assert getattr(numba_rs.extending, "lower_getattr", None) is None
    assert hasattr(numba_rs.extending, "lower_builtin")  # user types (test_interval)
    with pytest.raises(AttributeError, match="infer_global.*not supported by numba-rs"):
        numba_rs.extending.infer_global
    with pytest.raises(AttributeError, match="no_such_name"):
        numba_rs.extending.no_such_name


def test_top_level_error_classes():
    assert numba_rs.TypingError is numba_rs.errors.TypingError
    with pytest.raises(numba_rs.TypingError):
        numba_rs.njit(lambda x: x + "a")(1)
