"""NumPy datetime64 / timedelta64 in compiled code (numba-typeinfer's `npdatetime`,
numba-lower's `impls/npdatetime`): scalars and arrays across the boundary, the
operators and arithmetic ufuncs with NumPy's unit resolution (the finer unit; calendar
units through the calendar for datetimes), NaT absorbing arithmetic and comparing
unequal, `np.isnat`, reductions, sorting (NaT last), constants and constructors. NumPy
on the same values is the oracle (CPython for Python's `max`/`min`); NRT counts balance
(conftest)."""

import itertools
import re

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.errors import TypingError

D, T = np.datetime64, np.timedelta64
DA = np.array(["2020-01-01", "NaT", "2021-06-30", "1969-12-31"], dtype="M8[D]")
TA = np.array([1, -2, "NaT", 40], dtype="m8[h]")
G = D("2020-05-05")


def same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    if isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        return
    if isinstance(want, (np.datetime64, np.timedelta64)):
        assert type(got) is type(want) and got.dtype == want.dtype
        assert (np.isnat(got) and np.isnat(want)) or got == want
        return
    if isinstance(want, (float, np.floating)) and np.isnan(want):
        assert np.isnan(got)
        return
    assert got == want


CASES = {
    "td_add_td": (lambda a, b: a + b, (T(1, "h"), T(30, "m"))),
    "td_sub_td": (lambda a, b: a - b, (T(1, "D"), T(3, "h"))),
    "td_mul_int": (lambda a, b: a * b, (T(3, "s"), 4)),
    "int_mul_td": (lambda a, b: a * b, (4, T(3, "s"))),
    "td_mul_float": (lambda a, b: a * b, (T(-3, "s"), 0.5)),
    "td_div_int": (lambda a, b: a / b, (T(-7, "s"), 2)),
    "td_floordiv_int": (lambda a, b: a // b, (T(-3, "ps"), 2)),
    "td_div_float": (lambda a, b: a / b, (T(7, "s"), 2.0)),
    "td_div_td": (lambda a, b: a / b, (T(7, "h"), T(2, "m"))),
    "td_floordiv_td": (lambda a, b: a // b, (T(-7, "h"), T(2, "h"))),
    "td_mod_td": (lambda a, b: a % b, (T(-7, "h"), T(2, "h"))),
    "td_neg": (lambda a, b: -a, (T(7, "h"), 0)),
    "td_abs": (lambda a, b: abs(a), (T(-3, "h"), 0)),
    "dt_add_td": (lambda a, b: a + b, (D("2020-02-28"), T(36, "h"))),
    "month_add_days": (lambda a, b: a + b, (D("2020-03", "M"), T(1, "D"))),
    "year_sub_day": (lambda a, b: a - b, (D("2021", "Y"), D("2020-02-29"))),
    "dt_sub_dt": (lambda a, b: a - b, (D("2020-03-01"), D("2020-02-28T12:00"))),
    "dt_lt_dt": (lambda a, b: a < b, (D("2020-03-01"), D("2020-02-28T12:00"))),
    "dt_eq_dt": (lambda a, b: a == b, (D("2020-03-01"), D("2020-03-01T00:00"))),
    "nat_add": (lambda a, b: a + b, (D("NaT", "D"), T(1, "D"))),
    "nat_eq": (lambda a, b: a == b, (D("NaT", "D"), D("NaT", "D"))),
    "nat_ne": (lambda a, b: a != b, (D("NaT", "D"), D("NaT", "D"))),
    "nat_lt": (lambda a, b: a < b, (T("NaT", "s"), T(1, "s"))),
    "isnat": (lambda a, b: (np.isnat(a), np.isnat(b)), (D("NaT", "D"), T(1, "D"))),
    "array_add_td": (lambda a, b: a + b, (DA, T(12, "h"))),
    "array_sub_array": (lambda a, b: a - b, (DA, DA[::-1])),
    "array_lt_scalar": (lambda a, b: a < b, (DA, D("2020-06-01"))),
    "isnat_array": (lambda a, b: np.isnat(a), (DA, 0)),
    "td_array_mul": (lambda a, b: a * b, (TA, 2)),
    "td_array_div_td": (lambda a, b: a / b, (TA, T(500, "ms"))),
    "np_add": (lambda a, b: np.add(a, b), (DA, TA)),
    "np_subtract": (lambda a, b: np.subtract(a, b), (DA, DA[::-1])),
    "np_floor_divide": (lambda a, b: np.floor_divide(a, b), (TA, T(7, "m"))),
    "np_negative": (lambda a, b: np.negative(a), (TA, 0)),
    "np_absolute": (lambda a, b: np.absolute(a), (TA, 0)),
    "np_maximum": (lambda a, b: np.maximum(a, b), (DA, DA[::-1])),
    "np_fmin": (lambda a, b: np.fmin(a, b), (DA, DA[::-1])),
    "array_max": (lambda a, b: a.max(), (TA, 0)),
    "array_min_no_nat": (lambda a, b: np.min(a), (DA[[0, 2, 3]], 0)),
    "sort": (lambda a, b: np.sort(a), (DA, 0)),
    "argsort": (lambda a, b: np.argsort(a), (TA, 0)),
    "global_constant": (lambda a, b: a > G, (DA, 0)),
    "constructor_td": (lambda a, b: a + np.timedelta64(2, "D"), (DA, 0)),
    "constructor_dt": (lambda a, b: a > np.datetime64("2020-06-01"), (DA, 0)),
    "constructor_dt_ms": (lambda a, b: np.datetime64("1970-01-01T00:00:01.5"), (0, 0)),
    "empty_dtype": (lambda a, b: np.empty(3, dtype="M8[D]").shape, (0, 0)),
    "getitem": (lambda a, b: a[0] + b, (DA, T(1, "D"))),
    "astype_int": (lambda a, b: a.astype(np.int64), (DA, 0)),
    "view_int": (lambda a, b: a.view(np.int64), (DA, 0)),
    "bool_of_td": (lambda a, b: (bool(a), bool(b)), (T(5, "ms"), T(0, "s"))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_numpy(name):
    f, args = CASES[name]
    same(njit(f)(*args), f(*args))


def test_setitem_and_iteration():
    def put(a, v):
        a[1] = v
        return a

    same(njit(put)(DA.copy(), D("2000-01-01")), put(DA.copy(), D("2000-01-01")))

    def total(a):
        s = np.timedelta64(0, "h")
        for x in a:
            if not np.isnat(x):
                s += x
        return s

    same(njit(total)(TA), total(TA))


def test_int_of_a_timedelta_is_its_count():
    # Numba's `int(td)` (CPython's goes through datetime.timedelta and refuses).
    assert njit(lambda a: int(a))(T(5, "ms")) == 5
    assert njit(lambda a: int(a))(D("2020-03-01")) == D("2020-03-01").astype(np.int64)


def test_python_max_min_follow_python_with_nat():
    # Python's max/min compare with `>` / `<`, which are False with NaT.
    cases = (T(0), T(1), T(2), T("NaT"))
    for a, b in itertools.product(cases, cases):
        same(njit(lambda a, b: max(a, b))(a, b), max(a, b))
        same(njit(lambda a, b: min(a, b))(a, b), min(a, b))


def test_generated_unit_arithmetic():
    # Random counts in random units: sums, differences and comparisons against NumPy.
    rng = np.random.RandomState(5)
    units = ["W", "D", "h", "m", "s", "ms", "us"]
    f = njit(lambda a, b: (a + b, a - b, a < b, a == b, a / b if b else a / a))
    for _ in range(40):
        a = T(int(rng.randint(-1000, 1000)), units[rng.randint(len(units))])
        b = T(int(rng.randint(-1000, 1000)), units[rng.randint(len(units))])
        want = (a + b, a - b, a < b, a == b, a / b if b else a / a)
        same(f(a, b), want)


def test_incompatible_units_are_typing_errors():
    with pytest.raises(TypingError):
        njit(lambda a, b: a + b)(T(1, "Y"), T(1, "D"))
    with pytest.raises(TypingError):
        njit(lambda a, b: a + b)(D("2020-01-01"), D("2020-01-02"))
    with pytest.raises(TypingError):
        njit(lambda a: np.sin(a))(TA)


def test_datetime_array_expressions_fuse():
    # `(d + a) > thr` is one fused loop (one allocation: the boolean result), as the
    # array-expression rewrite fuses numbers; the values agree with NumPy.
    from numba_rs.runtime import rtsys

    a = np.arange(1000).astype("m8[s]")
    d, thr = D("2020-01-01"), D("2020-01-01T00:10")
    f = njit(lambda a, d, thr: ((d + a) > thr).sum())
    assert f(a, d, thr) == ((d + a) > thr).sum()
    before = rtsys.get_allocation_stats().alloc
    f(a, d, thr)
    assert rtsys.get_allocation_stats().alloc - before == 1


def test_sign_and_searchsorted():
    """`np.sign` of timedeltas (NaT's sign is NumPy's -1) and `np.searchsorted` over
    datetimes (NaT sorts last), both sides, scalar and array values."""
    td = np.array([3, -2, 0, "NaT", 7], dtype="m8[s]")
    same(njit(lambda x: np.sign(x))(td), np.sign(td))
    a = np.sort(np.array(["2020-01-01", "NaT", "2021-01-01", "2019-05-05"], dtype="M8[D]"))
    v = np.array(["2020-06-01", "NaT", "2018-01-01", "2021-01-01"], dtype="M8[D]")
    left = njit(lambda a, v: np.searchsorted(a, v))
    right = njit(lambda a, v: np.searchsorted(a, v, side="right"))
    same(left(a, v), np.searchsorted(a, v))
    same(right(a, v), np.searchsorted(a, v, side="right"))
    for x in v:
        assert left(a, x) == np.searchsorted(a, x)
        assert right(a, x) == np.searchsorted(a, x, side="right")
    with pytest.raises(TypingError):
        left(a, np.array([1], dtype="M8[s]"))


def test_hash_is_the_count():
    """`hash` of a datetime64 / timedelta64 with a unit is its int64 count (Numba's, and
    what NumPy's `astype(int)` reads); a generic timedelta is NumPy 2.2's ValueError."""
    f = njit(lambda x: hash(x))
    for v in [T(3, "ms"), T(-4, "ms"), T(27, "D"), T("NaT", "ms"), D("2014-02-27"),
              D("2000-01-01T01:02:03"), D("NaT", "D")]:
        assert f(v) == int(np.asarray(v).astype(np.int64))
    with pytest.raises(ValueError, match="Can't hash generic timedelta64"):
        f(T(3))


def test_calendar_units_with_weeks():
    DT, TD = np.datetime64, np.timedelta64
    add = njit(lambda a, b: a + b)
    sub = njit(lambda a, b: a - b)
    lt = njit(lambda a, b: a < b)
    for a, b in [(DT("2014"), TD(3, "W")), (DT("2014-02"), TD(1, "W")),
                 (DT("1969"), TD(2, "W")), (DT("2014-01-07", "W"), TD(2, "W"))]:
        want, got = a + b, add(a, b)
        assert got == want and got.dtype == want.dtype
        assert add(b, a) == want
    for a, b in [(DT("2014-01-08"), DT("2014", "W")), (DT("2014"), DT("2014-01-09", "W"))]:
        want, got = a - b, sub(a, b)
        assert got == want and got.dtype == want.dtype
        assert lt(a, b) == (a < b) and lt(b, a) == (b < a)


def test_builtin_max_min_keep_python_nat_rule():
    TD = np.timedelta64
    fmax, fmin = njit(lambda a: max(a)), njit(lambda a: min(a))
    for arr in [np.array([TD(1, "ns"), TD(4, "ns"), TD("NaT", "ns")]),
                np.array([TD("NaT", "ns"), TD(1, "ns")]),
                np.array([TD(3, "D"), TD(1, "D")])]:
        for f, pf in ((fmax, max), (fmin, min)):
            want, got = pf(arr), f(arr)
            assert np.isnat(want) == np.isnat(got)
            if not np.isnat(want):
                assert want == got
    with pytest.raises(ValueError, match=r"max\(\) arg is an empty sequence"):
        fmax(np.array([], dtype="m8[s]"))


def test_isinstance_datetime_classes():
    f = njit(lambda a: (isinstance(a, np.datetime64), isinstance(a, np.timedelta64),
                        isinstance(a, complex)))
    assert f(np.datetime64("2020-01-01")) == (True, False, False)
    assert f(np.timedelta64(3, "s")) == (False, True, False)


def test_datetime_ufunc_unit_mismatch_message():
    f = njit(lambda a, b: np.add(a, b))
    with pytest.raises(TypingError, match=re.escape(
            "ufunc 'add' is not supported between datetime64[ns] and timedelta64[M]")):
        f(np.array(["2020-01-01"], dtype="M8[ns]"), np.timedelta64(1, "M"))


def test_vectorize_with_datetime_signature():
    from numba_rs import vectorize

    f = vectorize(["NPTimedelta('s')(NPTimedelta('s'), int64)"])(lambda x, y: x * y)
    assert f(np.timedelta64(2), 3) == np.timedelta64(6)


def test_unsupported_dtype_argument_is_named():
    f = njit(lambda x: x + 1)
    with pytest.raises(TypingError) as e:
        f(np.array("2010", dtype="datetime64[10Y]"))
    assert "argument 0" in str(e.value)
    assert "Unsupported array dtype: datetime64[10Y]" in str(e.value)


def test_datetime_ufuncs_into_output_arrays():
    a = np.array(["2020-01-01", "NaT", "2021-03-04"], "M8[D]")
    b = np.array([1, 2, -3], "m8[D]")
    add = njit(lambda x, y, o: np.add(x, y, o))
    got = add(a, b, np.empty(3, "M8[D]"))
    np.testing.assert_array_equal(got, np.add(a, b))
    # Into a finer unit: exact.
    got = add(a, b, np.empty(3, "M8[s]"))
    np.testing.assert_array_equal(got, np.add(a, b, np.empty(3, "M8[s]")))
    sub = njit(lambda x, y, o: np.subtract(x, y, o))
    np.testing.assert_array_equal(sub(a, a, np.empty(3, "m8[D]")), a - a)
    isnat = njit(lambda x, o: np.isnat(x, o))
    np.testing.assert_array_equal(isnat(a, np.empty(3, np.bool_)), np.isnat(a))
    c = np.array(["2020-01-05", "2020-01-01", "NaT"], "M8[D]")
    for uf, f in [(np.maximum, lambda x, y, o: np.maximum(x, y, o)),
                  (np.minimum, lambda x, y, o: np.minimum(x, y, o)),
                  (np.fmax, lambda x, y, o: np.fmax(x, y, o)),
                  (np.fmin, lambda x, y, o: np.fmin(x, y, o))]:
        out = np.empty(3, "M8[D]")
        r = njit(f)(a, c, out)
        np.testing.assert_array_equal(out, uf(a, c))
        assert r is out or np.shares_memory(r, out)
