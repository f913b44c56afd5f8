"""Buffer-protocol arguments (`bytearray`, `memoryview`, `array.array`): typed as arrays
over the buffer (uint8 for bytes-like objects, the format's dtype otherwise; read-only
where the buffer is, as Numba types them), so writes reach the caller's object, and the
buffer is released when the call returns. CPython running the same function on a NumPy
view of the same buffer is the oracle; NRT counts balance (conftest)."""

import array

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.errors import TypingError


def total_and_poke(b):
    s = 0
    for i in range(len(b)):
        s += b[i]
    b[0] = 65
    return s


@pytest.mark.parametrize("make", [
    lambda: bytearray(b"hello"),
    lambda: memoryview(bytearray(b"xyz")),
    lambda: array.array("d", [1.5, 2.5, -3.0]),
    lambda: array.array("i", [7, 8, 9]),
], ids=["bytearray", "memoryview", "array_d", "array_i"])
def test_reads_and_writes_reach_the_caller(make):
    mine, theirs = make(), make()
    got = njit(total_and_poke)(mine)
    want = total_and_poke(theirs)  # CPython on the object itself
    assert got == want
    assert bytes(memoryview(mine)) == bytes(memoryview(theirs))


def test_readonly_buffers_are_readonly_arrays():
    with pytest.raises(TypingError, match="readonly"):
        njit(total_and_poke)(memoryview(b"abc"))

    def stats(b):
        return b.sum(), b.shape, b.dtype.itemsize

    for v in (memoryview(b"abc"), array.array("i", [1, 2, 3]),
              memoryview(np.arange(12.0).reshape(3, 4))[::2]):
        got = njit(stats)(v)
        want = stats(np.asarray(v))
        assert got == (want[0].item(), want[1], want[2])


def test_the_buffer_is_released_after_the_call():
    b = bytearray(b"abc")
    njit(total_and_poke)(b)
    b.extend(b"def")  # BufferError if the call still held an export
    assert b == bytearray(b"Abcdef")


def test_bytearray_argument_released_after_each_call():
    # Each call views the bytearray's buffer; the view must be released when the call
    # returns (it used to linger in pyo3's deferred-decref pool, keeping the bytearray
    # exported, so it could not be resized, and one view alive per call).
    import sys

    f = njit(lambda b: b[1])
    buf = bytearray(range(16))
    f(buf)
    before = sys.getrefcount(buf)
    for _ in range(5):
        assert f(buf) == 1
    assert sys.getrefcount(buf) == before
    buf.append(3)
    assert len(buf) == 17
