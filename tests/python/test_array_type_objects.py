"""Array types written the Numba way: ``float64[:]``, ``int32[:, ::1]``,
``float64[::1, :]`` built from type objects, signatures as text in Numba's shorthand or in
its printed form (``array(float64, 1d, A)(array(float64, 1d, C), float64)``, what a Numba
``Signature`` prints), as type-object calls, tuples and lists: every form gives the same
specialisations, and every type prints as text that parses back. Numba's own objects are
accepted too (checked where Numba is installed)."""

import numpy as np
import pytest

import numba_rs
from numba_rs import float32, float64, int32, int64, njit, uint8
from numba_rs.types import Signature


@pytest.mark.parametrize(
    "make, text, layout, ndim",
    [
        (lambda: float64[:], "array(float64, 1d, A)", "A", 1),
        (lambda: float64[::1], "array(float64, 1d, C)", "C", 1),
        (lambda: int32[:, ::1], "array(int32, 2d, C)", "C", 2),
        (lambda: float64[::1, :], "array(float64, 2d, F)", "F", 2),
        (lambda: float64[:, :, :], "array(float64, 3d, A)", "A", 3),
        (lambda: uint8[:, :, ::1], "array(uint8, 3d, C)", "C", 3),
        (lambda: float32[::1, :, :], "array(float32, 3d, F)", "F", 3),
    ],
)
def test_array_types_from_type_objects(make, text, layout, ndim):
    t = make()
    assert str(t) == repr(t) == text
    assert t.layout == layout
    assert t.ndim == ndim
    assert t == make() and hash(t) == hash(make())
    # The printed text parses back to the same type.
    f = njit(f"{t}({t})")(lambda a: a)
    assert f.signatures == [(t,)]


@pytest.mark.parametrize(
    "key",
    [slice(1, None), slice(None, 3), slice(None, None, 2), 0, (slice(None, None, 1),) * 2,
     (slice(None), slice(None, None, 1), slice(None))],
)
def test_malformed_array_types_are_type_errors(key):
    with pytest.raises(TypeError):
        float64[key]


def axpy(x, a, b):
    return x * a + b


SIGNATURE_FORMS = [
    "float64[:](float64[::1], float64, float64)",
    "array(float64, 1d, A)(array(float64, 1d, C), float64, float64)",
    float64[:](float64[::1], float64, float64),
    [float64[:](float64[::1], float64, float64)],
    ["array(float64, 1d, A)(array(float64, 1d, C), float64, float64)"],
    (float64[::1], float64, float64),
    Signature(float64[:], (float64[::1], float64, float64)),
]


@pytest.mark.parametrize("sig", SIGNATURE_FORMS, ids=repr)
def test_every_signature_form_gives_the_same_specialisation(sig):
    f = njit(sig)(axpy)
    assert f.signatures == [(float64[::1], float64, float64)]
    x = np.linspace(-1.0, 1.0, 7)
    np.testing.assert_array_equal(f(x, 2.0, 0.5), axpy(x, 2.0, 0.5))
    # A non-contiguous array does not match a C-contiguous parameter (compiling is off).
    with pytest.raises(TypeError):
        f(x[::2], 2.0, 0.5)


def test_layout_any_accepts_strided_arrays():
    f = njit([float64(float64[:])])(lambda a: a.sum())
    x = np.arange(10.0)
    assert f(x) == x.sum()
    assert f(x[::3]) == x[::3].sum()
    g = njit("float64(float64[:, :])")(lambda m: m[0, 1] + m[1, 0])
    m = np.arange(12.0).reshape(3, 4)
    assert g(m.T) == m.T[0, 1] + m.T[1, 0]


def test_several_signatures_in_a_list():
    f = njit(["int64[:](int64[:])", float64[::1](float64[::1])])(lambda a: a + a)
    assert f.signatures == [(int64[:],), (float64[::1],)]
    np.testing.assert_array_equal(f(np.arange(3)), np.arange(3) * 2)
    np.testing.assert_array_equal(f(np.arange(3.0)), np.arange(3.0) * 2)


def test_numba_objects_are_accepted():
    numba = pytest.importorskip("numba")
    sig = numba.float64[:](numba.float64[::1], numba.float64, numba.float64)
    f = njit(sig)(axpy)
    assert f.signatures == [(float64[::1], float64, float64)]
    g = njit([sig])(axpy)
    assert g.signatures == f.signatures
    assert float64[::1] == numba.float64[::1]
    x = np.arange(4.0)
    np.testing.assert_array_equal(f(x, 3.0, 1.0), axpy(x, 3.0, 1.0))
    assert numba_rs.float64[:, ::1] == numba.float64[:, ::1]
