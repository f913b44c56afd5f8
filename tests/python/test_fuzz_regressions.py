"""Regressions found by fuzzing realistic programs against CPython, NumPy and Numba
0.68.1 (thirteenth session): uint64 mixed with signed integers, float16 and non-native
byte order rejected instead of crashing or misreading memory."""

import cmath
import math

import numpy as np
import pytest

import numba_rs
from numba_rs import njit
from numba_rs.errors import TypingError

U = np.array([5, 2**63 + 1, 2**64 - 1, 1001], dtype=np.uint64)


def count_big(a):
    c = 0
    for x in a:
        if x > 1000:
            c += 1
    return c


def compare_items(a):
    return a[1] > 0, a[1] == a[1], a[0] < -1, a[1] >= a[3]


def test_uint64_compares_with_signed_as_numba_does():
    # Numba compares uint64 with a signed integer in float64: values from 2**63 up are
    # large, not negative (CPython's answer).
    assert numba_rs.njit(count_big)(U) == count_big(U) == 3
    assert numba_rs.njit(compare_items)(U) == tuple(bool(v) for v in compare_items(U))
    # max of uint64 and int64 is float64 in Numba.
    got = numba_rs.njit(lambda a: max(a[1], 1))(U)
    assert got == float(2**63 + 1) and type(got) is float


def test_uint64_with_int64_arrays_use_numpys_float_loop():
    u = np.array([7, 2**63 + 5], dtype=np.uint64)
    i = np.array([3, 6], dtype=np.int64)
    for src in ["np.maximum(u, i)", "np.subtract(u, i[0])", "u < i", "u - i", "u % i",
                "u // i", "np.where(u > 0, 1, 0)"]:
        f = numba_rs.njit(eval("lambda u, i: " + src))
        got, want = f(u, i), eval(src)
        assert got.dtype == want.dtype, src
        np.testing.assert_array_equal(got, want, err_msg=src)


@pytest.mark.parametrize("make", [
    lambda: (lambda a: np.sqrt(a), np.array([1.5, 4.0], dtype=np.float16)),
    lambda: (lambda x: math.sqrt(x), np.float16(2.0)),
    lambda: (lambda x: np.float16(x) * 2, 2.0),
    lambda: (lambda a: a.astype(np.float16), np.ones(2)),
    lambda: (lambda n: np.ones(n, np.float16), 3),
])
def test_float16_is_a_typing_error(make):
    f, arg = make()
    with pytest.raises(TypingError):
        numba_rs.njit(f)(arg)


@pytest.mark.parametrize("dtype", [">f8", ">i4", ">c16"])
def test_non_native_byte_order_is_a_typing_error(dtype):
    a = np.arange(3).astype(dtype)
    with pytest.raises(TypingError, match="non-native byte order"):
        numba_rs.njit(lambda a: a.sum())(a)
    # The same values in native order work.
    assert numba_rs.njit(lambda a: a.sum())(a.astype(a.dtype.newbyteorder("="))) == 3


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc"])
@pytest.mark.parametrize("a", [
    np.array([np.nan, 1e300, -2.5, np.inf, -np.inf, -0.0, 0.5]),
    np.array([np.nan, -2.5, 3.5], dtype=np.float32),
    np.array([7, 2**63 + 5], dtype=np.uint64),
    np.array([-3, 4], dtype=np.int8),
    np.array([True, False]),
], ids=lambda a: str(a.dtype))
def test_rounding_ufuncs_keep_numpys_dtype_and_values(name, a):
    # Floats round in their own type (NaN and inf stay); whole numbers keep their dtype.
    f = numba_rs.njit(eval(f"lambda a: np.{name}(a)"))
    got, want = f(a), getattr(np, name)(a)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    x = numba_rs.njit(eval(f"lambda x: np.{name}(x)"))(a[0])
    assert x == getattr(np, name)(a[0]) or (np.isnan(x) and np.isnan(a[0]))


def halve_until_one(a):
    while a.size > 1:
        a = a[::2]
    return a[0]


def maybe_reversed(a, rev):
    b = a[::-1] if rev else a
    return b.sum(), b


def inverse_or_self(a, x):
    if x:
        return np.linalg.inv(a)
    return a


def test_array_variables_of_several_layouts():
    # A variable holding a C array on one path and an A (or F) array on another is typed
    # with the laxer layout, as in Numba.
    a = np.arange(10.0)
    assert numba_rs.njit(halve_until_one)(a) == halve_until_one(a)
    for rev in (True, False):
        s, b = numba_rs.njit(maybe_reversed)(a, rev)
        ws, wb = maybe_reversed(a, rev)
        assert s == ws
        np.testing.assert_array_equal(b, wb)
    m = np.array([[2.0, 1.0], [0.0, 4.0]])
    for x in (True, False):
        np.testing.assert_allclose(numba_rs.njit(inverse_or_self)(m, x), inverse_or_self(m, x))


def nonlocal_sum(n):
    total = 0

    def add(v):
        nonlocal total
        total += v

    for i in range(n):
        add(i)
    return total


def nonlocal_counter(n):
    count = n

    def bump():
        nonlocal count
        count = count + 1
        return count

    return bump(), bump(), count


def test_nonlocal_writes_of_inlined_inner_functions():
    # An inner function's `nonlocal` store assigns the enclosing function's variable.
    assert numba_rs.njit(nonlocal_sum)(5) == nonlocal_sum(5) == 10
    assert numba_rs.njit(nonlocal_counter)(0) == nonlocal_counter(0) == (1, 2, 2)


@pytest.mark.parametrize("dtype, lo, hi", [
    (np.uint8, 10, 300), (np.uint8, -1, 50), (np.uint8, -1.5, 50), (np.int8, -50, 200),
    (np.uint64, -3, 7), (np.int16, -1000, 1000),
])
def test_clip_bounds_outside_the_dtype(dtype, lo, hi):
    # Numba compares in the common type and casts back (no wrap-around of the bounds).
    a = np.array([0, 5, 100, np.iinfo(dtype).max], dtype=dtype)
    got = numba_rs.njit(lambda a, lo, hi: np.clip(a, lo, hi))(a, lo, hi)
    want = np.clip(a.astype(np.float64), lo, hi).astype(dtype)
    assert got.dtype == a.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("v", [np.uint8(5), np.int8(-128), np.int16(7), np.uint32(3),
                               np.uint64(5), 7], ids=lambda v: type(v).__name__)
def test_unary_operators_on_narrow_integers(v):
    # Numba negates and inverts in the operand's width, then widens to 64 bits.
    want = {
        "uint8": (251, 250, 5), "int8": (-128, 127, -128), "int16": (-7, -8, 7),
        "uint32": (4294967293, 4294967292, 3),
        "uint64": (2**64 - 5, 2**64 - 6, 5), "int": (-7, -8, 7),
    }[type(v).__name__]
    assert numba_rs.njit(lambda x: (-x, ~x, +x))(v) == want


def scalar_ufuncs():
    return (np.divide(2.0, 0.0), np.true_divide(7, 0), np.floor_divide(7, 0),
            np.remainder(7.0, 0.0), np.power(0.0, -1.0), np.reciprocal(0.0),
            np.floor_divide(-7, 2), np.remainder(-7, 3), np.greater(3, 2))


def test_ufuncs_on_numbers_follow_numpys_rules():
    # No ZeroDivisionError: inf, nan or 0 as NumPy (and Numba) give them.
    with np.errstate(all="ignore"):
        want = scalar_ufuncs()
    got = numba_rs.njit(scalar_ufuncs)()
    np.testing.assert_array_equal(np.array(got, dtype=float), np.array(want, dtype=float))


def test_rounding_ufuncs_reject_complex():
    with pytest.raises(TypingError):
        numba_rs.njit(lambda a: np.floor(a))(np.array([1 + 2j]))


def _raiser(base):
    class E(base):
        pass

    def h(x):
        if x:
            raise E("boom")
        return 1

    return numba_rs.njit(h), E


def test_classes_of_the_same_name_keep_their_identity():
    # Two exception classes named alike (a factory): each function raises its own.
    h1, e1 = _raiser(KeyError)
    h2, e2 = _raiser(IndexError)
    for h, e in ((h2, e2), (h1, e1)):
        with pytest.raises(e) as info:
            h(1)
        assert type(info.value) is e
    # Two namedtuple classes named alike: results come back as the one built.
    from collections import namedtuple

    p1 = namedtuple("Point", ["x", "y"])
    f1 = numba_rs.njit(lambda a: p1(a, 2.0))
    assert type(f1(1.0)) is p1
    p2 = namedtuple("Point", ["u", "v", "w"])
    f2 = numba_rs.njit(lambda a: p2(a, 2.0, 3.0))
    r = f2(1.0)
    assert type(r) is p2 and r == (1.0, 2.0, 3.0)
    assert type(f1(1.0)) is p1


def test_bool_scalar_index_is_a_typing_error():
    # NumPy adds an axis for `a[True]`; Numba rejects it (a bool is not an integer index).
    with pytest.raises(TypingError):
        numba_rs.njit(lambda a: a[True])(np.arange(3.0))
    with pytest.raises(TypingError):
        numba_rs.njit(lambda a: a[False, 0])(np.ones((2, 2)))


def test_math_exp2_and_cbrt():
    # Python 3.11's math functions, as CPython computes them.
    got = numba_rs.njit(lambda x: (math.exp2(x), math.cbrt(x), math.exp2(3)))(-27.0)
    assert got == (math.exp2(-27.0), math.cbrt(-27.0), math.exp2(3))


@pytest.mark.parametrize("name", ["square", "reciprocal", "negative", "positive", "sign"])
def test_unary_ufuncs_on_bools_take_int8_loops(name):
    # Numba's (and, where it has one, NumPy's) int8 loop: no bool results.
    b = np.array([True, False])
    got = numba_rs.njit(eval(f"lambda a: np.{name}(a)"))(b)
    assert got.dtype == np.int8
    want = {"square": [1, 0], "reciprocal": [1, 0], "negative": [-1, 0],
            "positive": [1, 0], "sign": [1, 0]}[name]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["power", "fmod"])
def test_binary_ufuncs_on_bools_take_int8_loops(name):
    a = np.array([True, False, True, False])
    b = np.array([True, True, False, False])
    got = numba_rs.njit(eval(f"lambda a, b: np.{name}(a, b)"))(a, b)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a, b)
    assert got.dtype == want.dtype == np.int8
    np.testing.assert_array_equal(got, want)


def test_operator_ufuncs_on_uint64_and_int64_numbers_use_the_float_loop():
    u, i = np.uint64(2**63 + 5), np.int64(6)
    got = numba_rs.njit(lambda u, i: (np.remainder(u, i), np.floor_divide(u, i)))(u, i)
    want = (np.remainder(u, i), np.floor_divide(u, i))
    assert got == tuple(float(w) for w in want)
    assert all(type(g) is float for g in got)


# ---- issue 41's fuzzing pass (range iterators counting down, linked callees)

M63 = 2**63 - 1


def _count_range(a, b, s):
    c = 0
    last = 0
    for i in range(a, b, s):
        c += 1
        last = i
    return c, last, len(range(a, b, s))


def _count_reversed(a, b, s):
    n = 0
    first = 0
    for i in reversed(range(a, b, s)):
        if n == 0:
            first = i
        n += 1
    return n, first


@pytest.mark.parametrize(
    "a, b, s",
    [(0, M63, 2**61 + 1), (-(2**63), M63, 2**62), (M63, -(2**63), -(2**62)),
     (2**62, M63, 3 * 2**60), (5, 5, 1), (5, 0, 2), (0, 10, 3), (10, -3, -4),
     (-7, 7, 1), (M63 - 5, M63, 5_764_607_523_034_234_880)],
)
def test_range_lengths_never_overflow(a, b, s):
    # CPython's unsigned range-length arithmetic: spans past int64 still count right.
    assert njit(_count_range)(a, b, s) == _count_range(a, b, s)
    if a not in (-(2**63), M63):
        # (A reversed range starting at int64's very end has no int64 stop; not yet.)
        assert njit(_count_reversed)(a, b, s) == _count_reversed(a, b, s)


@njit
def _h0(x0, d0=1):
    return np.empty(3)


@njit
def _h1(x0, x1, d0=3, d1=1):
    t = _h0(x0, (d1 + x1) * d0).sum() - _h0(1).sum()
    return (t, x1)


@njit
def _h2(x0, x1, d0=2):
    t = _h1(_h1(x1, x1), _h1(d0, x1)[0])
    return (t, x1)


@njit
def _h3(x0, x1, d0=3):
    if d0 > -1:
        return _h1(_h2(x1, d0 - (x0 - d0) + d0)[1], x0)[1]
    return 0


def test_a_callee_linked_directly_and_through_another_callee():
    # _h1 reaches _h3's module twice: inside _h2's library, where the optimiser dropped
    # its constant arguments, and directly. The direct call must get its own copy (it was
    # "Incorrect number of arguments passed to called function").
    assert _h3(2, 0) == 2


# --- found by `cargo xtask fuzz` (tests/fuzz), issue 50 ------------------------------


def literal_list_slices(p):
    m = [float(p) % 1000.0, 2.0]
    whole = m[:]
    tail = m[1:]
    k = [p, 2, 3]
    return whole, tail, k[::2], len(m[:1])


def test_slices_of_literal_lists_are_lists():
    # A list only read was compiled as a tuple, and its slices came back as tuples.
    got = njit(literal_list_slices)(-20)
    assert got == literal_list_slices(-20)
    assert [type(x) for x in got[:3]] == [list, list, list]


def test_minimum_of_float_and_complex_arrays():
    a = np.array([1.5, -2.0, 3.0, np.nan])
    c = np.array([1 + 2j, -3 + 0j, 3 + 0j, 1j])
    for fn in (np.minimum, np.maximum, np.fmin, np.fmax):
        f = njit(eval("lambda x, y: np.%s(x, y)" % fn.__name__))
        np.testing.assert_array_equal(f(a, c), fn(a, c))
        np.testing.assert_array_equal(f(c, a), fn(c, a))


def nested_unmatched(x):
    r = 0
    try:
        try:
            if x > 0:
                raise ValueError("bad value", x)
            r += 1
        except ZeroDivisionError:
            r += 10
    except ValueError:
        r += 100
    return r


def unmatched_in_loop(n):
    hits = 0
    for i in range(n):
        try:
            try:
                if i % 3 == 0:
                    raise KeyError(i)
                if i % 3 == 1:
                    raise ValueError(i)
            except ValueError:
                hits += 1
        except KeyError:
            hits += 100
    return hits


def unmatched_escapes(x):
    try:
        try:
            if x:
                raise IndexError("out")
        except ZeroDivisionError:
            return 1
    except KeyError:
        return 2
    return 3


def test_unmatched_inner_handler_reaches_the_outer_try():
    # An exception no inner `except` matched left the function instead of reaching the
    # enclosing `try`'s handler (CPython's RERAISE goes through the handler's cleanup).
    for x in (0, 1):
        assert njit(nested_unmatched)(x) == nested_unmatched(x)
    assert njit(unmatched_in_loop)(10) == unmatched_in_loop(10)
    assert njit(unmatched_escapes)(0) == 3
    with pytest.raises(IndexError, match="out"):
        njit(unmatched_escapes)(1)


def slp_breaker(p1, p2, z3):
    # LLVM 19's SLP vectoriser left a value used before its definition in this
    # function's optimised module; code generation then crashed the interpreter.
    z4 = cmath.sqrt(complex(-8.375, 9.375)) / (1.0 + abs(cmath.sqrt(complex(-8.375, 9.375))))
    for i5 in range(2, 10, 2):
        m6 = [max(p2, 737) % 1000003]
        if not p2 in m6 or p1 << 0 in m6:
            m7 = [min(m6) % 1000003 for y8 in m6 if y8 > 6]
            for i9 in range(10):
                m10 = [4.625 / (abs(-1.75) + 1.0) % 1000.0 for k11 in range(8)]
                z4 = (z4 + z3 * sum(m10) * sum(m10)) / (1.0 + abs(z4 + z3 * sum(m10) * sum(m10)))
    return z4


def test_module_the_optimiser_breaks_is_compiled_again_without_vectorisers():
    args = (92, 596, complex(3.5, -7.5))
    assert cmath.isclose(njit(slp_breaker)(*args), slp_breaker(*args), rel_tol=1e-9)


def filtered_out_then_filled(l2):
    m3 = [y * 2 for y in l2 if False]
    m3.insert(-2, 212)
    m3.append(5)
    return m3


def test_comprehension_with_nothing_kept_is_typed_by_later_stores():
    # The comprehension's list reached `m3` through the inlined function's return cast,
    # which refining the list's item type did not follow back (`list(undefined)`).
    assert njit(filtered_out_then_filled)([9, 18, 2]) == filtered_out_then_filled([9, 18, 2])


@njit
def _raise_value(a):
    raise ValueError(a)


def raise_in_handler(a):
    try:
        _raise_value(a)
    except Exception:
        raise ValueError(a, 2)


def test_raise_in_a_handler_after_a_caught_call():
    # The handler's own cleanup block must not route its re-raise to itself (a hang
    # while the unmatched-handler fix was being made; Numba's test_dynamic_raise).
    for arg in (1, 1.5, "s", (1, 2)):
        with pytest.raises(ValueError) as e:
            njit(raise_in_handler)(arg)
        assert e.value.args == (arg, 2)


def append_conditional(x):
    m = []
    m.append(x if x > 0 else -1.0)
    k = numba_rs.typed.List()
    k.append(1 if x > 0 else 2)
    return m, list(k)


def test_empty_list_typed_by_appending_a_conditional_expression():
    # The bound method is read before the argument's branches, and reached the call
    # through a phi that refining the list did not follow.
    for x in (3.5, -2.0):
        got = njit(append_conditional)(x)
        assert (got[0], got[1]) == append_conditional(x)


def chained_getattr(a):
    b = a + getattr(a, "size")
    c = np.zeros(getattr(b, "shape")[0])
    return getattr(c, "size") + getattr(b, "ndim")


def test_getattr_of_a_value_typed_through_another_getattr():
    a = np.ones((3, 4))
    assert njit(chained_getattr)(a) == chained_getattr(a)


def caught_missing_keys(k):
    d = {5: 1.5}
    try:
        v = d[k]
    except KeyError:
        v = -1.0
    lists = {5: [1, 2]}
    try:
        got = lists[k]
    except KeyError:
        got = [0]
    return v, got


def test_missing_key_caught_inside_try():
    # The KeyError is pending inside a `try` while control reaches the handler's check;
    # the lookup's value was read through the null entry meanwhile (a segfault).
    for k in (5, 7):
        assert njit(caught_missing_keys)(k) == caught_missing_keys(k)
