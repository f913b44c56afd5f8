"""Tuples in nopython mode, checked against CPython running the same functions.

Homogeneous tuples type as UniTuple(T, n), mixed ones as Tuple(...); both are passed
in, returned (boxed back to Python tuples), nested, packed and unpacked.
namedtuple instances keep their class across the boundary.
"""

import collections
import functools

import pytest

import numba_rs
from numba_rs import njit

Point = collections.namedtuple("Point", ["x", "y"])
Record = collections.namedtuple("Record", ["ident", "weight", "flag"])


@functools.cache
def jitted(pyfunc):
    return njit(pyfunc)


def same(got, expected):
    """Equal value *and* matching Python types, recursively (True is not 1)."""
    if isinstance(expected, tuple):
        return (
            type(got) is type(expected)
            and len(got) == len(expected)
            and all(same(g, e) for g, e in zip(got, expected))
        )
    return type(got) is type(expected) and got == expected


def check(pyfunc, *args):
    expected = pyfunc(*args)
    got = jitted(pyfunc)(*args)
    assert same(got, expected), (pyfunc.__name__, args, got, expected)


# ---------------------------------------------------------------- construction


def make_pair(a, b):
    return (a, b)


def make_triple(a, b, c):
    return a, b, c


def make_nested(a, b):
    return ((a, b), (b, (a, a + b)))


def multiple_results(a, b):
    return a + b, a - b, a * b


def identity(t):
    return t


def swap(t):
    return (t[1], t[0])


@pytest.mark.parametrize("a,b", [(0, 0), (1, -1), (2**40, 7), (3, 4)])
def test_homogeneous_int_tuple_returned(a, b):
    check(make_pair, a, b)
    check(multiple_results, a, b)
    check(make_nested, a, b)


@pytest.mark.parametrize("a,b", [(0.0, 1.5), (-2.25, 3.0), (1e300, -0.0)])
def test_homogeneous_float_tuple_returned(a, b):
    check(make_pair, a, b)
    check(multiple_results, a, b)


@pytest.mark.parametrize(
    "a,b,c", [(1, 2.5, True), (-3, 0.0, False), (0, -1e-9, True), (2**50, 3.25, False)]
)
def test_heterogeneous_tuple_returned(a, b, c):
    check(make_triple, a, b, c)
    check(make_pair, a, c)
    check(make_pair, b, a)


@pytest.mark.parametrize(
    "t",
    [
        (1, 2),
        (1.5, -2.5),
        (True, False),
        (1, 2.5),
        (3.5, 7),
        (False, 9),
        (1, 2, 3, 4, 5, 6, 7, 8),
        ((1, 2), (3.5, True)),
        (((1,), 2.0), 3),
    ],
)
def test_tuple_argument_round_trips(t):
    check(identity, t)


@pytest.mark.parametrize("t", [(1, 2), (1.5, 2), (True, 3.0), ((1, 2), 3), (4, (5.5, 6))])
def test_swap(t):
    check(swap, t)


# ------------------------------------------------------------ packing/unpacking


def unpack3(t):
    a, b, c = t
    return a * 100 + b * 10 + c


def unpack_nested(t):
    (a, b), c = t
    return a - b + c


def unpack_hetero(t):
    i, x, flag = t
    if flag:
        return x * i
    return x - i


def swap_vars(a, b):
    a, b = b, a
    return a, b


def rotate(a, b, c):
    a, b, c = b, c, a
    return a, b, c


def nested_arg(t):
    return t[0][1] + t[1][0] * t[1][1][0]


@pytest.mark.parametrize("t", [(1, 2, 3), (0, 0, 0), (-5, 7, 2**33), (9, -9, 9)])
def test_unpack3(t):
    check(unpack3, t)


@pytest.mark.parametrize("t", [((1, 2), 3), ((-4, 10), 0), ((2**40, 1), -1)])
def test_unpack_nested(t):
    check(unpack_nested, t)


@pytest.mark.parametrize("t", [(3, 1.5, True), (3, 1.5, False), (-2, 0.25, True), (0, -8.0, False)])
def test_unpack_heterogeneous(t):
    check(unpack_hetero, t)


@pytest.mark.parametrize("a,b", [(1, 2), (1.5, -3.5), (0, 0), (True, False)])
def test_swap_vars(a, b):
    check(swap_vars, a, b)
    check(rotate, a, b, a)


@pytest.mark.parametrize("t", [((1, 2), (3, (4,))), ((0, -1), (5, (-2,))), ((1.5, 2.5), (2.0, (4.0,)))])
def test_nested_argument(t):
    check(nested_arg, t)


# ---------------------------------------------------------------------- indexing


def const_index(t):
    return t[0] + t[-1] * 10 + t[2] * 100


def const_index_hetero(t):
    return t[1], t[0], t[-1]


def var_index_weighted(t):
    s = 0
    for i in range(len(t)):
        s += t[i] * (i + 1)
    return s


def var_index_max(t):
    best = t[0]
    for i in range(1, len(t)):
        if t[i] > best:
            best = t[i]
    return best


def var_index_arg(t, i):
    return t[i]


TUPLES = [(1, 2, 3), (5, -4, 3, 2, 1), (0, 0, 7, 0), (2**40, -(2**40), 1, 9, 9, 9, 9)]


@pytest.mark.parametrize("t", TUPLES)
def test_constant_index(t):
    check(const_index, t)


@pytest.mark.parametrize("t", [(1, 2.5, True), (0.5, -1, 2), (False, 3, 4.75)])
def test_constant_index_heterogeneous(t):
    check(const_index_hetero, t)


@pytest.mark.parametrize("t", TUPLES + [(1.5, -2.5, 3.0), (7,)])
def test_variable_index_in_loop(t):
    check(var_index_weighted, t)
    check(var_index_max, t)


@pytest.mark.parametrize("i", [0, 1, 2, 3, -1, -4])
def test_variable_index_argument(i):
    check(var_index_arg, (10, 20, 30, 40), i)


@pytest.mark.parametrize("i", [4, 100, -5])
def test_variable_index_out_of_range_raises(i):
    with pytest.raises(IndexError):
        var_index_arg((10, 20, 30, 40), i)
    with pytest.raises(IndexError):
        jitted(var_index_arg)((10, 20, 30, 40), i)


# ----------------------------------------------------------------------- slicing


def slices(t):
    return t[1:3], t[:2], t[2:], t[::2], t[::-1], t[-2:], t[1:-1]


def slice_hetero(t):
    return t[1:], t[:-1]


@pytest.mark.parametrize("t", [(1, 2, 3, 4, 5), (1.5, 2.5, 3.5), (9, 8, 7, 6, 5, 4, 3, 2)])
def test_constant_slices(t):
    check(slices, t)


@pytest.mark.parametrize("t", [(1, 2.5, True), (False, 0, -1.5, 3)])
def test_constant_slices_heterogeneous(t):
    check(slice_hetero, t)


# -------------------------------------------------- iteration, len, sum by loop


def iterate_sum(t):
    s = 0
    for v in t:
        s += v
    return s


def iterate_count_positive(t):
    n = 0
    for v in t:
        if v > 0:
            n += 1
    return n


def length(t):
    return len(t)


@pytest.mark.parametrize("t", TUPLES + [(0.5, 0.25, -1.0), (True, True, False), (3,)])
def test_iterate_homogeneous(t):
    check(iterate_sum, t)
    check(iterate_count_positive, t)


@pytest.mark.parametrize("t", TUPLES + [(1, 2.5), (1, (2, 3), 4.5), (True,), ()])
def test_len(t):
    check(length, t)


# ------------------------------------------------------------------- comparison


def eq_ne(a, b):
    return a == b, a != b


def ordering(a, b):
    return a < b, a <= b, a > b, a >= b


PAIRS = [
    ((1, 2), (1, 2)),
    ((1, 2), (1, 3)),
    ((2, 0), (1, 9)),
    ((1, 2, 3), (1, 2, 3)),
    ((0, 0, 1), (0, 0, 0)),
    ((1.5, 2.0), (1.5, 2.0)),
    ((1.5, 2.0), (1.5, -2.0)),
    ((-1, 5), (-1, 5)),
]


@pytest.mark.parametrize("a,b", PAIRS)
def test_equality(a, b):
    check(eq_ne, a, b)
    check(eq_ne, b, a)


@pytest.mark.parametrize("a,b", PAIRS)
def test_ordering(a, b):
    check(ordering, a, b)
    check(ordering, b, a)


@pytest.mark.parametrize("a,b", [((1, 2.5), (1, 2.5)), ((1, 2.5), (1, 3.5)), ((2, 0.0), (1, 9.0))])
def test_heterogeneous_comparison(a, b):
    check(eq_ne, a, b)
    check(ordering, a, b)


# -------------------------------------------------------- concatenation and `in`


def concat(a, b):
    return a + b


def concat_literal(t):
    return t + (100, 200)


def contains(t, x):
    return x in t


def not_contains(t, x):
    return x not in t


@pytest.mark.parametrize(
    "a,b",
    [((1, 2), (3, 4)), ((1,), (2, 3, 4)), ((1.5,), (2.5, 3.5)), ((1, 2.5), (True,)), ((1, 2), ())],
)
def test_concatenation(a, b):
    check(concat, a, b)


@pytest.mark.parametrize("t", [(1, 2), (-1,), (7, 8, 9)])
def test_concatenation_with_literal(t):
    check(concat_literal, t)


@pytest.mark.parametrize("x", [0, 1, 3, 5, -1, 2**40])
def test_contains(x):
    t = (1, 3, 5, 2**40)
    check(contains, t, x)
    check(not_contains, t, x)


@pytest.mark.parametrize("x", [0.5, 1.0, 2.0, -0.0])
def test_contains_float(x):
    check(contains, (0.0, 0.5, 1.5), x)


# ------------------------------------------------------------------- namedtuples


def norm2(p):
    return p.x * p.x + p.y * p.y


def moved(p, dx, dy):
    return Point(p.x + dx, p.y + dy)


def point_fields_by_index(p):
    return p[0] - p[1]


def unpack_point(p):
    x, y = p
    return y, x


def make_point(x, y):
    return Point(x, y)


def describe(r):
    if r.flag:
        return r.weight * r.ident
    return -r.weight


def reweight(r, w):
    return Record(r.ident, r.weight * w, not r.flag)


POINTS = [Point(0, 0), Point(3, 4), Point(-2, 7), Point(1.5, -2.5)]


@pytest.mark.parametrize("p", POINTS)
def test_namedtuple_attributes(p):
    check(norm2, p)
    check(point_fields_by_index, p)
    check(unpack_point, p)


@pytest.mark.parametrize("p", POINTS)
def test_namedtuple_returned_keeps_class(p):
    got = jitted(moved)(p, 1, 2)
    assert type(got) is Point
    assert same(got, moved(p, 1, 2))
    assert got.x == p.x + 1 and got.y == p.y + 2


@pytest.mark.parametrize("x,y", [(1, 2), (0.5, 0.25), (-3, 9)])
def test_namedtuple_constructed_inside(x, y):
    got = jitted(make_point)(x, y)
    assert type(got) is Point
    assert same(got, make_point(x, y))


@pytest.mark.parametrize("r", [Record(3, 1.5, True), Record(-1, 0.25, False), Record(0, -2.0, True)])
def test_heterogeneous_namedtuple(r):
    check(describe, r)
    got = jitted(reweight)(r, 2.0)
    assert type(got) is Record
    assert same(got, reweight(r, 2.0))


KwPoint = collections.namedtuple("KwPoint", ["x", "y", "z"])


def kw_points(a):
    p = KwPoint(z=a, x=1, y=2.5)
    q = KwPoint(7, z=3, y=a)
    return p, q, p.z + q.y


def test_namedtuple_built_with_keywords():
    got = njit(kw_points)(4)
    want = kw_points(4)
    assert got == want
    assert type(got[0]) is KwPoint


def kw_points_missing(a):
    return KwPoint(x=a, y=1)


def test_namedtuple_missing_field_is_a_typing_error():
    with pytest.raises(numba_rs.errors.TypingError, match="KwPoint"):
        njit(kw_points_missing)(1)


def test_tuples_over_1000_items_are_numbas_unsupported_error():
    # Numba's issue 2195: refused before typing, with Numba's message, instead of
    # compiling a prohibitively large module.
    import numba_rs

    @numba_rs.njit
    def eattuple(tup):
        return len(tup)

    with pytest.raises(numba_rs.errors.UnsupportedError) as info:
        eattuple(tuple(range(1001)))
    assert "Tuple 'tup' length must be smaller than 1000" in str(info.value)
    assert eattuple(tuple(range(20))) == 20
