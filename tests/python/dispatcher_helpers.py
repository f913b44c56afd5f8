"""Jitted functions importable by name, for the dispatcher API tests: pickled by
reference and imported by worker processes."""

import math

from numba_rs import njit


@njit
def add_mul(a, b):
    """Add, then multiply."""
    return (a + b) * b


add_mul_py = add_mul.py_func
# A second dispatcher over the same function: its qualified name finds `add_mul`, another
# object, so it pickles by value.
add_mul_again = njit(add_mul_py)


@njit
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def make_scaler(k):
    """A jitted closure over ``k`` (not importable by name: pickled by value)."""

    @njit(fastmath=True)
    def scale(x):
        return math.sqrt(x) * k

    return scale


def scale_py(k, x):
    return math.sqrt(x) * k
