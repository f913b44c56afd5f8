"""NumPy arrays bound to global names (and closure cells) used in jitted code, as Numba's
test_array_constants uses them: frozen into the compiled code at compile time and typed
readonly (Numba's `typeof_global`), read, indexed, iterated, reduced, used in arithmetic
and returned, checked against CPython running the same functions (NumPy is the oracle)."""

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.errors import TypingError

DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
          np.float32, np.float64, np.bool_, np.complex64, np.complex128]

# The globals of Numba's test_array_constants, and a few more layouts.
A0 = np.array(42)
A1 = np.arange(12)
A2 = A1[::2]
A3 = A1.reshape((3, 4)).T
A6 = np.frombuffer(b"XXXX_array_contents_XXXX", dtype=np.float32)
M = np.arange(1, 7, dtype=np.float64).reshape(2, 3)
MF = np.asfortranarray(M)
REV = np.arange(5.0)[::-1]
SUB = np.arange(30, dtype=np.int32).reshape(5, 6)[1::2, ::3]
V = np.array([1.0, 2.0, 3.0])
EMPTY = np.zeros((0, 3))
PAIR = (np.arange(3), (np.ones(2), 2.5))

# Rebound by the tests that need a global of a given dtype or value.
G = None


def fresh(fn):
    """A new dispatcher: it freezes the globals' current values when it compiles."""
    return njit(fn)


def check(fn, *args):
    got = fresh(fn)(*args)
    want = fn(*args)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    return got


def set_global(value):
    global G
    G = value


# --------------------------------------------------- Numba's test_array_constants


def getitem0(i):
    return A0[()]


def getitem1(i):
    return A1[i]


def getitem2(i):
    return A2[i]


def getitem3(i):
    return A3[i]


def getitem6(i):
    return A6[i]


@pytest.mark.parametrize("fn", [getitem0, getitem1, getitem2, getitem3, getitem6])
@pytest.mark.parametrize("i", [0, 1, 2])
def test_numba_array_const(fn, i):
    check(fn, i)


def test_issue_1850():
    constarr = np.array([86])

    def pyfunc():
        return constarr[0]

    assert fresh(pyfunc)() == 86


def test_alignment_and_contents_in_llvm_ir():
    # Issue #1933: the constant holds the elements and is aligned for the dtype.
    f = fresh(getitem6)
    assert f(1) == A6[1]
    (ir,) = f.inspect_llvm().values()
    lines = [ln for ln in ir.splitlines() if "XXXX_array_contents_XXXX" in ln]
    assert lines, "the array's bytes are not in the module"
    assert "constant [24 x i8]" in lines[0]
    assert ", align 4" in lines[0]


# ------------------------------------------------------------------ every dtype


def read_all_1d():
    s = G[0] * 0
    for i in range(len(G)):
        s += G[i]
    return s, G[-1], G.size, G.ndim, G.itemsize, G.shape, G.strides


def iterate():
    s = G[0] * 0
    n = 0
    for x in G:
        s += x
        n += 1
    return s, n


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_dtypes_read_and_iterate(dtype):
    set_global(np.array([1, 0, 3, 7, 2], dtype=dtype))
    assert fresh(read_all_1d)() == read_all_1d()
    assert fresh(iterate)() == iterate()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_dtypes_returned(dtype):
    set_global(np.array([[1, 0, 3], [7, 2, 1]], dtype=dtype))

    def ret():
        return G

    got = fresh(ret)()
    assert got.dtype == G.dtype
    np.testing.assert_array_equal(got, G)


def test_complex_values():
    set_global(np.array([1 + 2j, 3 - 4j, -0.5j], dtype=np.complex64))

    def f():
        return G.sum(), G[1].imag, G[2] * G[0]

    assert fresh(f)() == pytest.approx(f())


# -------------------------------------------------------------------- layouts


def attrs_m():
    return M.shape, M.strides, M.ndim, M.size, M.nbytes


def attrs_mf():
    return MF.shape, MF.strides, MF.ndim, MF.size, MF.nbytes


def sum_weighted_c():
    # Every element read by (i, j), so a wrong stride shows.
    s = 0.0
    for i in range(M.shape[0]):
        for j in range(M.shape[1]):
            s += M[i, j] * (i + 1) * (j + 3)
    return s


def sum_weighted_f():
    s = 0.0
    for i in range(MF.shape[0]):
        for j in range(MF.shape[1]):
            s += MF[i, j] * (i + 1) * (j + 3)
    return s


def sum_weighted_sub():
    s = 0
    for i in range(SUB.shape[0]):
        for j in range(SUB.shape[1]):
            s += SUB[i, j] * (i + 1) * (j + 3)
    return s, SUB.shape


def reversed_reads():
    return REV[0], REV[4], REV[1:3].sum(), len(REV)


def test_c_and_f_attributes_match_numpy():
    assert fresh(attrs_m)() == attrs_m()
    assert fresh(attrs_mf)() == attrs_mf()


@pytest.mark.parametrize("fn", [sum_weighted_c, sum_weighted_f])
def test_c_and_f_elements(fn):
    assert fresh(fn)() == fn()


def test_non_contiguous_globals():
    assert fresh(sum_weighted_sub)() == sum_weighted_sub()
    assert fresh(reversed_reads)() == reversed_reads()


def row_products():
    s = 0.0
    for r in M:
        s += r[0] * r[2]
    return s


def test_iterate_rows_of_2d_global():
    assert fresh(row_products)() == row_products()


# ---------------------------------------------- readonly typing, layout from the flags


def write_c():
    M[0, 0] = 1.0


def write_f():
    MF[0, 0] = 1.0


def write_a():
    A2[0] = 1


def write_0d():
    A0[()] = 1


def write_view():
    v = M[0]
    v[1] = 5.0


def write_reshaped():
    M.reshape(6)[0] = 5.0


def fill():
    M.fill(0.0)


def sort():
    V.sort()


@pytest.mark.parametrize("fn, typ", [
    (write_c, "readonly array(float64, 2d, C)"),
    (write_f, "readonly array(float64, 2d, F)"),
    (write_a, "readonly array(int64, 1d, A)"),
    (write_0d, "readonly array(int64, 0d, C)"),
    (write_view, "readonly array(float64, 1d, C)"),
    (write_reshaped, "readonly array(float64, 1d, C)"),
])
def test_global_arrays_are_readonly(fn, typ):
    # Numba's test_write_to_global_array: a global array is a constant.
    with pytest.raises(TypingError, match=r"Cannot modify readonly array of type: " + typ.replace("(", r"\(").replace(")", r"\)")):
        fresh(fn)()


@pytest.mark.parametrize("fn", [fill, sort])
def test_in_place_methods_rejected(fn):
    with pytest.raises(TypingError, match="readonly array"):
        fresh(fn)()


@njit
def writes_into(x):
    x[0] = 1.0


def passes_to_writer():
    writes_into(V)


def test_passing_to_a_jitted_writer_rejected():
    with pytest.raises(TypingError):
        fresh(passes_to_writer)()


def copy_is_writeable():
    c = M.copy()
    c[0, 0] = -1.0
    return c


def test_copy_is_writeable():
    got = check(copy_is_writeable)
    assert got.flags.writeable
    assert M[0, 0] == 1.0


# ------------------------------------------------------ arithmetic and reductions


def reductions():
    return M.sum(), MF.min(), M.max(), np.mean(MF), A1.prod(), V.argmax()


def axis_sums():
    return MF.sum(axis=0)


def arithmetic(x):
    return M * x + V


def ufuncs():
    return np.sqrt(M) + np.sin(V)


def linalg():
    return np.dot(M, V), M @ V


def masks():
    return M[M > 2.5]


def sorted_view():
    return np.sort(REV)


def transposed():
    return M.T


def slices():
    return M[1:, ::2]


def test_reductions():
    assert fresh(reductions)() == pytest.approx(reductions())


@pytest.mark.parametrize("fn, args", [
    (axis_sums, ()),
    (arithmetic, (2.0,)),
    (ufuncs, ()),
    (masks, ()),
    (sorted_view, ()),
    (transposed, ()),
    (slices, ()),
])
def test_array_operations(fn, args):
    check(fn, *args)


def test_linalg():
    got = fresh(linalg)()
    want = linalg()
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)


def with_argument(a):
    return (a * V).sum() + A1[3]


def test_mixed_with_argument_array():
    a = np.array([2.0, 3.0, 4.0])
    assert fresh(with_argument)(a) == with_argument(a)


# ------------------------------------------------------------ returned constants


def ret_m():
    return M


def ret_mf():
    return MF


def ret_a0():
    return A0


def ret_empty():
    return EMPTY, EMPTY.shape, EMPTY.sum()


def test_returned_constant_is_a_readonly_copy():
    # Numba returns a readonly array over the constant's memory; numba-rs returns a
    # readonly copy of it (the constant lives in the compiled code).
    got = fresh(ret_m)()
    np.testing.assert_array_equal(got, M)
    assert got is not M
    assert not got.flags.writeable
    assert got.flags.c_contiguous
    assert M.flags.writeable


def test_returned_fortran_constant_keeps_its_order():
    got = fresh(ret_mf)()
    np.testing.assert_array_equal(got, MF)
    assert got.flags.f_contiguous
    assert not got.flags.writeable


def test_returned_0d_and_empty():
    got = fresh(ret_a0)()
    assert got.shape == () and got[()] == 42
    arr, shape, s = fresh(ret_empty)()
    assert arr.shape == (0, 3) and shape == (0, 3) and s == 0.0


def ret_view(i):
    return A3[i]


def test_returned_view_of_constant():
    f = fresh(ret_view)
    for i in range(4):
        np.testing.assert_array_equal(f(i), A3[i])


# ------------------------------------------------------ frozen at compile time


def read_g(i):
    return G[i] + G.sum()


def test_frozen_at_compile_time():
    set_global(np.arange(4))
    f = fresh(read_g)
    assert f(1) == 1 + 6
    old = G
    # Changed in place and rebound: the compiled specialisation keeps what it froze.
    old[1] = 100
    assert f(1) == 1 + 6
    set_global(np.arange(4) * 10)
    assert f(1) == 1 + 6
    # A new specialisation (another argument type) freezes the value of its compile.
    assert f(np.int32(1)) == 10 + 60
    assert fresh(read_g)(1) == 10 + 60


def test_large_global_is_not_put_in_the_module():
    # Past Numba's 1 MB limit the array is not an LLVM constant; still a frozen copy.
    big = np.arange(300_000, dtype=np.float64)
    set_global(big)

    def f():
        return G.sum(), G[-1]

    jf = fresh(f)
    assert jf() == f()
    (ir,) = jf.inspect_llvm().values()
    assert len(ir) < big.nbytes
    big[-1] = 0.0
    assert jf() == (np.arange(300_000, dtype=np.float64).sum(), 299_999.0)


# ------------------------------------------------------------ closures and tuples


def make_closure():
    table = np.linspace(0.0, 1.0, 5)

    def inner(i):
        return table[i] + table.sum()

    return inner


def test_closure_cell_array():
    inner = make_closure()
    assert njit(inner)(2) == inner(2)


def tuple_items():
    return PAIR[0].sum() + PAIR[1][0][1] + PAIR[1][1], PAIR[0][2]


def tuple_returned():
    return PAIR


def test_tuple_of_arrays():
    assert fresh(tuple_items)() == tuple_items()
    got = fresh(tuple_returned)()
    np.testing.assert_array_equal(got[0], PAIR[0])
    np.testing.assert_array_equal(got[1][0], PAIR[1][0])
    assert got[1][1] == 2.5


def write_tuple_item():
    PAIR[0][0] = 1


def test_tuple_arrays_are_readonly():
    with pytest.raises(TypingError, match="readonly"):
        fresh(write_tuple_item)()


# ------------------------------------------------------------ unsupported dtypes
# (Structured dtypes are constants too: test_records.py.)


@pytest.mark.parametrize("value, name", [
    (np.array([1, "x"], dtype=object), "object"),
    (np.arange(3, dtype=">i4"), ">i4"),
    (np.arange(3, dtype=np.float16), "float16"),
])
def test_unsupported_dtype_names_it(value, name):
    set_global(value)

    def f():
        return G[0]

    with pytest.raises(TypingError) as info:
        fresh(f)()
    msg = str(info.value)
    assert "Untyped global name 'G'" in msg
    assert f"Unsupported array dtype: {name}" in msg
