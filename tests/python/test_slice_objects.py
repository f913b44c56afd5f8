"""`slice` objects in compiled code: the constructor with one to three arguments (None
included), `.indices(n)` and its errors, slices passed in and returned, literal slices
(`literally`). CPython's own `slice` is the oracle."""

import itertools
import sys

import numpy as np
import pytest

from numba_rs import literally, njit
from numba_rs.errors import TypingError


def construct(*args):
    s = slice(*args)
    return s.start, s.stop, s.step


def construct_and_use(args, a):
    return a[slice(*args)]


def indices(s, *n):
    return s.indices(*n)


MAX, MIN = sys.maxsize, -sys.maxsize - 1


@pytest.mark.parametrize(
    "args,want",
    [
        ((None,), (0, MAX, 1)),
        ((5,), (0, 5, 1)),
        ((None, 2), (0, 2, 1)),
        ((1, None, 3), (1, MAX, 3)),
        ((None, None, -1), (MAX, MIN, -1)),
        ((10, None, -1), (10, MIN, -1)),
    ],
)
def test_constructor_defaults(args, want):
    # Numba's slice model fills the defaults CPython leaves as None.
    assert njit(construct)(*args) == want


def test_constructor_matches_python_on_arrays():
    a = np.arange(10)
    cf = njit(construct_and_use)
    options = (None, -1, 0, 1, 3)
    for n in (1, 2, 3):
        for args in itertools.product(options, repeat=n):
            try:
                want = construct_and_use(args, a)
            except ValueError as e:
                with pytest.raises(ValueError, match=str(e)):
                    cf(args, a)
            else:
                np.testing.assert_array_equal(cf(args, a), want)


def test_constructor_arity_errors():
    cf = njit(construct_and_use)
    for args in [(), (1, 2, 3, 4)]:
        with pytest.raises(TypingError, match="No implementation of function"):
            cf(args, np.arange(3))


def test_none_step_keeps_layout():
    def none_step(a, i, j):
        return a[slice(i, j, None)]

    def int_step(a, i, j, k):
        return a[slice(i, j, k)]

    a = np.arange(10)
    f, g = njit(none_step), njit(int_step)
    np.testing.assert_array_equal(f(a, 1, 5), none_step(a, 1, 5))
    np.testing.assert_array_equal(g(a, 1, 5, 2), int_step(a, 1, 5, 2))
    assert f.nopython_signatures[0].return_type.layout == "C"
    assert g.nopython_signatures[0].return_type.layout == "A"


def test_indices_matches_python():
    cf = njit(indices)
    bounds = list(range(-4, 4)) + [None]
    for s in itertools.starmap(slice, itertools.product(bounds, bounds, bounds)):
        for n in range(-2, 4):
            try:
                want = s.indices(n)
            except ValueError as e:
                # A zero step with a negative length: CPython checks the length first.
                with pytest.raises(ValueError, match=str(e)):
                    cf(s, n)
            else:
                assert cf(s, n) == want


def test_indices_typing_errors():
    cf = njit(indices)
    with pytest.raises(TypingError, match=r"indices\(\) takes exactly one argument \(3 given\)"):
        cf(slice(None), 1, 2, 3)
    with pytest.raises(TypingError, match="'float64' object cannot be interpreted as an integer"):
        cf(slice(None, None, 0), 1.2)


def test_typeof_step_one_is_two_member():
    f = njit(lambda s: s.step)
    assert f(slice(1, 2, 1)) == 1
    assert str(f.nopython_signatures[0].args[0]) == "slice<a:b>"
    assert f(slice(1, 2, 2)) == 2
    assert str(f.nopython_signatures[1].args[0]) == "slice<a:b:c>"


def test_literal_slices_round_trip():
    @njit
    def f(x):
        return literally(x)

    for s in [slice(1, 4, 2), slice(1, 2), slice(1), slice(None, 1, 1), slice(1, None, 1),
              slice(None, None, 1), slice(None), slice(None, None, None)]:
        got = f(s)
        assert (got.start, got.stop, got.step) == (s.start, s.stop, s.step)


def test_literal_slice_too_large():
    @njit
    def f(x):
        return literally(x)

    with pytest.raises(ValueError, match="Int value is too large"):
        f(slice(None, None, -(2**63) - 1))
