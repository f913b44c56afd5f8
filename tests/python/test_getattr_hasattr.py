"""`getattr(x, name[, default])` and `hasattr(x, name)` with a constant name in compiled
code (Numba types both from the attribute's literal name); CPython is the oracle."""

from collections import namedtuple

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.errors import TypingError
from numba_rs.experimental import jitclass

P = namedtuple("P", "x y")
NAME = "ndim"


def shape_and_ndim(a):
    return getattr(a, "shape")[0] + getattr(a, NAME)


def fields(p):
    return getattr(p, "x") * 2 + getattr(p, "y", 5) + getattr(p, "z", 7)


def probe(a):
    return hasattr(a, "shape"), hasattr(a, "nope"), hasattr(a, "sum")


def complex_parts(z):
    return getattr(z, "real") + getattr(z, "imag")


def branch_on_hasattr(x):
    # The branch for the other kind never types (as for isinstance).
    if hasattr(x, "shape"):
        return x.sum()
    return x * 2.0


def method_through_getattr(a):
    return getattr(a, "sum")()


@pytest.mark.parametrize(
    "fn, args",
    [
        (shape_and_ndim, (np.zeros((3, 2)),)),
        (fields, (P(1, 2),)),
        (probe, (np.zeros(2),)),
        (probe, (1.5,)),
        (complex_parts, (1 + 2j,)),
        (branch_on_hasattr, (np.arange(4.0),)),
        (branch_on_hasattr, (1.5,)),
        (method_through_getattr, (np.arange(5),)),
    ],
)
def test_matches_cpython(fn, args):
    assert njit(fn)(*args) == fn(*args)


def test_jitclass_fields_and_methods():
    @jitclass([("v", "float64")])
    class Box:
        def __init__(self, v):
            self.v = v

        def twice(self):
            return self.v * 2

    def use(b):
        return getattr(b, "v") + getattr(b, "twice")(), hasattr(b, "v"), hasattr(b, "w")

    assert njit(use)(Box(1.5)) == (4.5, True, False)


def test_missing_attribute_without_default_is_numbas_error():
    with pytest.raises(TypingError, match="Unknown attribute 'nope' of type array"):
        njit(lambda a: getattr(a, "nope"))(np.zeros(2))


def test_name_not_known_at_compile_time_is_refused():
    with pytest.raises(TypingError, match="getattr"):
        njit(lambda a, s: getattr(a, s))(np.zeros(2), "shape")
