"""NumPy arrays passed into jitted code: indexing, item assignment, attributes, `len` and
iteration over every numeric dtype and C, F and non-contiguous layouts, checked against
the same functions run by CPython on the same arrays (NumPy is the oracle)."""

import numpy as np
import pytest

from numba_rs import njit

DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
          np.float32, np.float64, np.bool_, np.complex64, np.complex128]


def sum_loop(a):
    s = 0
    for i in range(len(a)):
        s += a[i]
    return s


def sum_2d(a):
    s = 0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            s += a[i, j] * (i + 1)
    return s


def negative_indices(a):
    return a[-1], a[-len(a)], a[len(a) - 1]


def iterate(a):
    s = 0
    n = 0
    for x in a:
        s += x
        n += 1
    return s, n


def attributes(a):
    return a.ndim, a.size, a.itemsize, a.nbytes, a.shape, a.strides, len(a)


def row_views(a):
    s = 0.0
    for r in a:
        s += r[0] - r[r.shape[0] - 1]
    return s


def scale_in_place(a, k):
    for i in range(a.shape[0]):
        a[i] = a[i] * k
    return a


def fill_2d(a):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            a[i, j] = i * 10 + j


def sample(dtype, n=11, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_)
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.normal(size=n) + 1j * rng.normal(size=n)).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        return rng.normal(size=n).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), n).astype(dtype)


def same(got, expected):
    if isinstance(expected, tuple):
        return len(got) == len(expected) and all(same(g, e) for g, e in zip(got, expected))
    if isinstance(expected, (float, complex, np.floating, np.complexfloating)):
        return np.isclose(got, expected, rtol=1e-6, atol=1e-6)
    return got == expected


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_index_and_iterate_every_dtype(dtype):
    a = sample(dtype)
    # Numba accumulates `s = 0; s += a[i]` in int64/float64/complex128 (small NumPy
    # scalars would wrap instead): the oracle runs on the same values as Python numbers.
    values = a.tolist()
    assert same(njit(negative_indices)(a), negative_indices(values))
    assert same(njit(iterate)(a), iterate(values))
    if dtype != np.bool_:
        assert same(njit(sum_loop)(a), sum_loop(values))


@pytest.mark.parametrize("layout", ["C", "F", "A"])
def test_two_dimensional_layouts(layout):
    base = np.arange(35.0).reshape(5, 7)
    a = {"C": base, "F": np.asfortranarray(base), "A": base[::2, 1::2]}[layout]
    assert njit(sum_2d)(a) == sum_2d(a)
    assert njit(row_views)(a) == row_views(a)
    assert njit(attributes)(a) == attributes(a)


@pytest.mark.parametrize("view", ["strided", "column", "reversed"])
def test_non_contiguous_one_dimensional_views(view):
    base = np.arange(20.0)
    a = {"strided": base[::3], "column": base.reshape(4, 5)[:, 2], "reversed": base[::-1]}[view]
    assert njit(sum_loop)(a) == sum_loop(a)
    assert njit(attributes)(a) == attributes(a)


def test_read_only_arrays_can_be_read():
    a = np.arange(6.0)
    a.setflags(write=False)
    assert njit(sum_loop)(a) == sum_loop(a)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64, np.uint8])
def test_item_assignment_writes_the_callers_array(dtype):
    a = np.arange(8).astype(dtype)
    expected = scale_in_place(a.copy(), 3)
    got = njit(scale_in_place)(a, 3)
    assert got is a  # an argument array comes back as the same object
    np.testing.assert_array_equal(a, expected)


def test_two_dimensional_assignment_in_a_view():
    base = np.zeros((6, 8), dtype=np.int64)
    expected = base.copy()
    fill_2d(expected[1::2, ::3])
    njit(fill_2d)(base[1::2, ::3])
    np.testing.assert_array_equal(base, expected)


# ------------------------------------------------- arrays made in jitted code (NRT)

from numba_rs.runtime import rtsys  # noqa: E402


def make_filled(n):
    a = np.zeros(n)
    for i in range(n):
        a[i] = i * 1.5
    return a


def make_ones_2d(n, m):
    a = np.ones((n, m), dtype=np.int32)
    a[n - 1, m - 1] = 7
    return a


def make_empty_and_fill(n):
    a = np.empty(n, np.int64)
    for i in range(n):
        a[i] = i * i
    return a


def temporaries_in_a_loop(n):
    s = 0.0
    for k in range(n):
        t = np.zeros(3)
        t[1] = k
        s += t[1] + t[0]
    return s


def tuple_of_arrays(n):
    a = np.zeros(n)
    b = np.ones(n)
    pair = (a, b)
    return pair[1]


@pytest.mark.parametrize("n", [0, 1, 5, 100])
def test_created_arrays_match_numpy(n):
    for f in (make_filled, make_empty_and_fill, tuple_of_arrays):
        got = njit(f)(n)
        expected = f(n)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)
    assert njit(temporaries_in_a_loop)(n) == temporaries_in_a_loop(n)


@pytest.mark.parametrize("n,m", [(1, 1), (3, 4), (5, 2)])
def test_created_two_dimensional_arrays(n, m):
    got = njit(make_ones_2d)(n, m)
    np.testing.assert_array_equal(got, make_ones_2d(n, m))
    assert got.flags.c_contiguous and got.dtype == np.int32


def test_a_returned_array_owns_its_memory():
    before = rtsys.get_allocation_stats()
    a = njit(make_filled)(4)
    assert a.base.refcount == 1  # the NumPy array holds the only reference
    mid = rtsys.get_allocation_stats()
    assert mid.mi_alloc - before.mi_alloc == mid.mi_free - before.mi_free + 1
    del a
    after = rtsys.get_allocation_stats()
    assert after.mi_alloc - before.mi_alloc == after.mi_free - before.mi_free


def test_negative_dimension_is_value_error():
    with pytest.raises(ValueError, match="negative dimensions"):
        njit(make_filled)(-1)


@pytest.mark.parametrize("shape", [(1 << 62,), (1 << 56, 64), (1 << 40, 1 << 40, 0)], ids=str)
def test_a_size_that_overflows_is_value_error_not_a_crash(shape):
    # As Numba: the byte size is checked for overflow before allocating.
    with pytest.raises(ValueError, match="array is too big"):
        njit(lambda s: np.empty(s, np.int64))(shape)


EMPTY = np.empty
INT32 = np.dtype("int32")
F32 = np.float32


def test_numpy_functions_and_dtypes_bound_to_names():
    def make(n):
        return EMPTY(n).shape, np.zeros(n, INT32), np.ones(n, "uint8"), np.full(n, 2, F32), \
            np.zeros_like(np.ones(n), dtype="int16")

    got, expected = njit(make)(3), make(3)
    assert got[0] == expected[0]
    for g, e in zip(got[1:], expected[1:]):
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(g, e)



def read_at(a, i):
    return a[i]


def write_at(a, i, j):
    a[i, j] = 1.0


def test_boundscheck_raises_index_error():
    a = np.arange(5.0)
    checked = njit(boundscheck=True)(read_at)
    assert checked(a, 4) == 4.0 and checked(a, -5) == 0.0
    for bad in (5, -6, 100):
        with pytest.raises(IndexError):
            checked(a, bad)
    with pytest.raises(IndexError):
        njit(boundscheck=True)(write_at)(np.zeros((2, 3)), 1, 3)
    # Without it, an index is only wrapped (no check), as in Numba.
    assert njit(read_at)(a, -1) == 4.0


def test_numba_boundscheck_environment_variable():
    import subprocess
    import sys

    code = (
        "import numpy as np\n"
        "from numba_rs import njit\n"
        "f = njit(lambda a, i: a[i])\n"
        "try:\n"
        "    f(np.arange(3.0), 7)\n"
        "    print('unchecked')\n"
        "except IndexError:\n"
        "    print('IndexError')\n"
    )
    env = dict(__import__("os").environ, NUMBA_BOUNDSCHECK="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "IndexError", out.stderr


def test_slice_bounds_of_any_integer_width():
    def f(a, start, stop, step):
        b = a[start:stop:step]
        return b.sum()

    def g(a, i):
        a[i:] = 3
        return a[i - 1]

    a = np.arange(10, dtype=np.int32)
    cf = njit("int64(int32[::1], int32, int32, int32)")(f)
    for bounds in [(1, 8, 2), (0, 10, 1), (9, 0, -2), (-3, 10, 1)]:
        assert cf(a, *bounds) == f(a, *bounds)
    cg = njit("int32(int32[::1], int16)")(g)
    x, y = a.copy(), a.copy()
    assert cg(x, np.int16(2)) == g(y, 2)
    np.testing.assert_array_equal(x, y)


Holder = __import__("collections").namedtuple("Holder", ("arr", "n"))


def test_containers_built_by_calls_own_their_arrays():
    # Each result crosses back several times: a double free or a leak shows up as a crash
    # or in the NRT-balance fixture.
    def make(n):
        h = Holder(np.arange(n), n)
        return h

    def loops(n):
        a = np.arange(n) * 2
        b = np.ones(n)
        s = 0.0
        for i, x in enumerate(a):
            s += i * x
        for x, y in zip(a, b):
            s += x * y
        return s, Holder(a, 1)

    for n in (3, 0, 1, 5):
        got = njit(make)(n)
        assert type(got) is Holder and got.n == n
        np.testing.assert_array_equal(got.arr, np.arange(n))
        s, h = njit(loops)(n)
        assert s == loops(n)[0]
        np.testing.assert_array_equal(h.arr, np.arange(n) * 2)


def test_tuple_concatenation_owns_its_arrays():
    def f(x):
        a = np.arange(3)
        return (a,) + (x,), (x, a) + (a,)

    for _ in range(3):
        (t1, t2) = njit(f)(123)
        np.testing.assert_array_equal(t1[0], np.arange(3))
        assert t1[1] == 123 and t2[0] == 123
        assert np.shares_memory(t2[1], t2[2])  # one array, in both items
