"""Globals and closure variables holding NumPy scalars (``zero = np.int32(0)``) are frozen
as constants of their exact dtype, as Numba types them (``typeof(np.int32(0))`` is
``int32``), also inside tuples. The oracle is the same function run by CPython/NumPy:
every result must equal NumPy's, dtype included where the result is an array."""

import numpy as np
import pytest

import numba_rs
from numba_rs import njit

SCALARS = [
    np.bool_(True),
    np.bool_(False),
    np.int8(-128),
    np.int16(-300),
    np.int32(0),
    np.int32(-(2**31)),
    np.int64(2**62 + 3),
    np.uint8(255),
    np.uint16(65535),
    np.uint32(2**32 - 1),
    np.uint64(2**64 - 5),
    np.float32(1e-6),
    np.float32(-3.5),
    np.float64(0.1),
    np.complex64(1 + 2j),
    np.complex128(-0.5 + 3.25j),
]


def make_reader(value):
    def read():
        return value

    return read


@pytest.mark.parametrize("value", SCALARS, ids=lambda v: f"{type(v).__name__}({v})")
def test_closure_value_round_trips(value):
    f = njit(make_reader(value))
    got = f()
    assert got == value
    # Numba boxes scalars as Python numbers of the same value.
    assert type(got) is type(value.item())


def make_full(value):
    def full():
        # `np.full` takes the fill value's dtype: the scalar's own.
        return np.full(3, value)

    return full


@pytest.mark.parametrize("value", SCALARS, ids=lambda v: f"{type(v).__name__}({v})")
def test_arrays_filled_with_the_scalar_have_its_dtype(value):
    py = make_full(value)
    got, want = njit(py)(), py()
    assert got.dtype == want.dtype == value.dtype
    np.testing.assert_array_equal(got, want)


zero = np.int32(0)
eps = np.float32(1e-6)
flag = np.bool_(True)
unit = np.complex64(1j)
limits = (np.int16(-7), 2.5, np.uint8(200))


def use_globals(x):
    if flag and x > zero:
        return x + eps, unit * 2, limits[0] * 3, limits[2] + 100
    return x - eps, unit, limits[0], limits[2]


@pytest.mark.parametrize("x", [-1.0, 0.0, 2.5])
def test_module_globals_and_tuples(x):
    got = njit(use_globals)(x)
    # Numba's arithmetic on scalars (hand-checked): float64 with float32 computes in
    # float64, integers in int64 (NumPy 2 would keep float32 and wrap uint8 at 256).
    e = float(np.float32(1e-6))
    if x > 0:
        want = (x + e, 2j, -21, 300)
    else:
        want = (x - e, 1j, -7, 200)
    assert got == want
    assert got[0] != x


def test_tuple_item_types_are_the_scalars_dtypes():
    t = (np.int16(1), np.float32(2.0), np.uint64(3))

    def items():
        return t

    f = njit(items)
    assert f() == (1, 2.0, 3)
    # The tuple's item types are the scalars' own, as Numba's typeof gives them.
    (sig,) = f.nopython_signatures
    assert str(sig.return_type) == "Tuple(int16, float32, uint64)"


def test_unsupported_numpy_scalars_are_typing_errors():
    half = np.float16(1.0)
    when = np.datetime64("2020-01-01", "5D")  # a multiple of a unit: not supported

    def use_half():
        return half

    def use_when():
        return when

    for py in (use_half, use_when):
        with pytest.raises(numba_rs.errors.TypingError) as info:
            njit(py)()
        assert "Cannot determine Numba type" in str(info.value)
