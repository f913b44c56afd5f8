"""`literal_unroll`: loops over tuples whose items have different types, one body copy
per item. CPython running the same function (where `literal_unroll` is the identity) is
the oracle."""

import numpy as np
import pytest

from numba_rs import literal_unroll, njit, types
from numba_rs.errors import TypingError
from numba_rs.extending import overload


def check(pyfunc, *args):
    got = njit(pyfunc)(*args)
    want = pyfunc(*args)
    if isinstance(want, np.ndarray):
        np.testing.assert_array_equal(got, want)
    else:
        assert got == want
    return got


def sum_items(t):
    acc = 0.0
    for x in literal_unroll(t):
        acc += x
    return acc


def test_mixed_numbers_argument():
    check(sum_items, (1, 2.5, True, np.float32(0.25), 7))
    check(sum_items, (3,))
    check(sum_items, ())


def sizes(t):
    total = 0
    n = 0
    for x in literal_unroll(t):
        total += x.size
        n += 1
    return total, n


def test_arrays_of_different_ranks_and_dtypes():
    t = (np.zeros(3), np.ones((2, 2), dtype=np.int32), np.arange(5, dtype=np.uint8))
    check(sizes, t)


def skip_and_stop(t, stop_after):
    out = 0.0
    seen = 0
    for x in literal_unroll(t):
        seen += 1
        if seen == 2:
            continue
        out += x * seen
        if seen >= stop_after:
            break
    return out, seen


@pytest.mark.parametrize("stop", [1, 2, 3, 5])
def test_break_and_continue(stop):
    check(skip_and_stop, (1, 2.5, 3j.imag, 4, np.float32(1.5)), stop)


def index_form(z):
    a = (12, 12.7, 3j, 4, z, 2 * z)
    acc = 0
    for i in range(len(literal_unroll(a))):
        acc += a[i]
        if acc.real < 26:
            acc -= 1
        else:
            break
    return acc


@pytest.mark.parametrize("z", [1, 3, 50])
def test_range_len_form_indexes_by_constant(z):
    check(index_form, z)


def nested(a, b):
    acc = 0.0
    for x in literal_unroll(a):
        for y in literal_unroll(b):
            acc += x * y
    return acc


def test_nested_unrolls_are_refused_as_by_numba():
    from numba_rs.errors import UnsupportedError

    with pytest.raises(UnsupportedError, match="Nesting of literal_unroll is unsupported"):
        njit(nested)((1, 2.5), (3, True, 0.5))


def inner_loop_that_leaves():
    # The inner unroll runs on a path that breaks out of the outer loop: it is not in
    # the outer loop's body, so it is not nested (Numba accepts this too).
    x = (12, 12.7, 3j, 4)
    y = ("foo", 8)
    acc = 0
    for a in literal_unroll(x):
        acc += a
        if acc.real < 26:
            acc -= 1
        else:
            for t in literal_unroll(y):
                acc += t is False
            break
    return acc


def sequential_in_a_plain_loop(n):
    acc = 0.0
    for i in range(n):
        for x in literal_unroll((1, 2.5)):
            acc += x * i
        for y in literal_unroll((3, True)):
            acc -= y
    return acc


def test_unrolls_that_are_not_nested():
    check(inner_loop_that_leaves)
    check(sequential_in_a_plain_loop, 4)


def sliced():
    x = (1000, 2.5, 3000, 4.25, 5)
    acc = 0.0
    for a in literal_unroll(x[1:4]):
        acc += a
    for a in literal_unroll(x[::-2]):
        acc -= a / 10
    return acc


def test_slices_of_a_built_tuple():
    check(sliced)


def star(*args):
    acc = 0
    for a in literal_unroll(args):
        acc += a
    return acc


def test_star_args():
    check(star, 1, 2.5, False, 4)


GLOBAL_TUPLE = (1, 2.5, 7)


def use_global():
    acc = 0.0
    for g in literal_unroll(GLOBAL_TUPLE):
        acc = acc * 2 + g
    return acc


def test_global_tuple():
    check(use_global)


def identity_on_arrays(a):
    s = 0.0
    for v in literal_unroll(a):
        s += v
    return s


def test_homogeneous_tuples_and_array_arguments():
    from numba_rs.errors import UnsupportedError

    check(identity_on_arrays, (1.0, 2.0, 3.0))
    # Numba accepts tuples only as arguments.
    with pytest.raises(UnsupportedError, match="only tuples are supported as function arguments, found array"):
        njit(identity_on_arrays)(np.arange(5.0))


def code_of(x):
    pass


@overload(code_of)
def _ol_code_of(x):
    # Each item arrives with its literal type: a different implementation per value.
    if isinstance(x, types.StringLiteral):
        n = len(x.literal_value)
        return lambda x: n
    if isinstance(x, types.IntegerLiteral):
        v = x.literal_value
        return lambda x: v % 1000


def literal_items():
    acc = 0
    for t in literal_unroll(("apple", "orange", "banana", 3390155550)):
        acc += code_of(t)
    return acc


def test_items_keep_their_literal_types():
    want = len("apple") + len("orange") + len("banana") + 3390155550 % 1000
    assert njit(literal_items)() == want


def test_literal_unroll_is_the_identity_in_python():
    t = (1, "a")
    assert literal_unroll(t) is t


def test_unknown_length_is_a_typing_error():
    @njit
    def inner():
        return (1, 2.5)

    @njit
    def f():
        acc = 0.0
        for x in literal_unroll(inner()):
            acc += x
        return acc

    with pytest.raises(TypingError):
        f()


# Lists of constants built in the function are unrolled as tuples (Numba's
# TransformLiteralUnrollConstListToTuple): items of different types each get their copy.


def const_lists():
    x = [12, 12.7, 3j, 4]
    y = ["foo", 8]
    acc = 0
    for a in literal_unroll(x):
        acc += a
        if acc.real < 26:
            acc -= 1
        else:
            for t in literal_unroll(y):
                acc += t is False
            break
    if x[0] < 23:
        acc += 2
    return acc


def test_mixed_constant_lists():
    check(const_lists)


def literal_list_items():
    acc = 0
    for t in literal_unroll(["apple", "orange", "banana", 3390155550]):
        acc += code_of(t)
    return acc


def test_constant_list_items_keep_their_literal_types():
    want = len("apple") + len("orange") + len("banana") + 3390155550 % 1000
    assert njit(literal_list_items)() == want


def test_constant_list_indexed_by_unrolled_range():
    def f():
        z = ["apple", "orange", "banana"]
        out = 0
        for i in range(len(literal_unroll(z))):
            out += len(z[i]) * (i + 1)
        return out

    check(f)


def test_list_with_a_variable_item_is_refused():
    from numba_rs.errors import UnsupportedError

    @njit
    def f(y):
        x = [10, y]
        r = 0
        for a in literal_unroll(x):
            r += a
        return r

    with pytest.raises(UnsupportedError, match="Found non-constant value at position 1 in a list argument to literal_unroll"):
        f(10)


def test_list_argument_is_refused():
    from numba_rs.errors import UnsupportedError

    @njit
    def f(t):
        acc = 0.0
        for a in literal_unroll(t):
            acc += a.sum()
        return acc

    with pytest.raises(UnsupportedError, match="Invalid use of literal_unroll with a function argument"):
        f([np.zeros(3), np.ones(3)])


def test_string_is_refused():
    from numba_rs.errors import UnsupportedError

    @njit
    def string():
        n = 0
        for c in literal_unroll("ABCDE"):
            n += 1
        return n

    with pytest.raises(UnsupportedError, match="argument should be a tuple or a list of constant values") as e:
        string()
    assert "found unknown problem" in str(e.value)


def test_two_arguments_are_refused():
    from numba_rs.errors import UnsupportedError

    @njit
    def f():
        x = (10, 20)
        r = 0
        for a in literal_unroll(x, x):
            r += a
        return r

    with pytest.raises(UnsupportedError, match="literal_unroll takes one argument, found 2"):
        f()


from collections import namedtuple  # noqa: E402

ABC = namedtuple("ABC", ["a", "b", "c"])


def unroll_made_namedtuple():
    abc = ABC(1, 2j, 3.4)
    out = 0
    for i in literal_unroll(abc):
        out += i
    return out


def iterate_named_unituple(x):
    s = 0
    for v in x:
        s = s * 10 + v
    return s


def test_namedtuples():
    check(unroll_made_namedtuple)
    check(sum_items, ABC(1, 2.5, True))
    check(iterate_named_unituple, ABC(1, 2, 3))


@njit
def _one():
    return 1


@njit
def _two():
    return 2


FUNCS = (_one, _two)


def test_global_tuple_of_jitted_functions():
    # A tuple of dispatchers bound to a global or a closure variable is frozen like a
    # tuple of constants (each item a function type without data).
    def unrolled():
        out = 0
        for f in literal_unroll(FUNCS):
            out = out * 10 + f()
        return out

    def indexed():
        return FUNCS[0]() + FUNCS[1]() * 10

    pair = (_two, _one)

    def closure():
        out = 0
        for f in literal_unroll(pair):
            out = out * 10 + f()
        return out

    assert njit(unrolled)() == unrolled() == 12
    assert njit(indexed)() == indexed() == 21
    assert njit(closure)() == closure() == 21


def test_strings_never_equal_other_kinds_in_unrolled_tuples():
    # Numba's `unicode_eq`: a string and a value of another kind (a tuple here) compare
    # unequal, so a test against each item of a mixed tuple types.
    def f(t):
        n = 0
        for a in literal_unroll(t):
            if a == "b":
                n += 1
            if a != "a":
                n += 10
        return n

    t = ("a", "b", 12, 3j, ("f",), [1])
    assert njit(f)(t) == f(t)
