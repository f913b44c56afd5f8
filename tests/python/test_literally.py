"""`numba_rs.literally` and `SentryLiteralArgs`: a function compiled once per argument
value, the argument typed as a literal. CPython running the same functions (where
`literally` is the identity) is the oracle for values; the signatures show the literal
types."""

import numpy as np
import pytest

import numba_rs
from numba_rs import literally, njit, types
from numba_rs.errors import LiteralTypingError, TypingError
from numba_rs.extending import SentryLiteralArgs, overload


def test_one_specialisation_per_value():
    @njit
    def foo(x):
        return literally(x) * 2

    assert foo(3) == 6 and foo(4) == 8 and foo(3) == 6
    assert [s[0] for s in foo.signatures] == [types.literal(3), types.literal(4)]
    assert all(isinstance(s[0], types.IntegerLiteral) for s in foo.signatures)


def test_request_passes_to_the_callers_argument():
    @njit
    def foo(x):
        return literally(x) * 2

    @njit
    def bar(y, x):
        return foo(y) + x

    assert bar(3, 7) == 13
    [sig] = bar.signatures
    assert sig[0] == types.literal(3)
    assert not isinstance(sig[1], types.Literal)


def test_keyword_arguments_and_bools():
    @njit
    def inner(x, flag):
        return x + 1 if literally(flag) else x - 1

    @njit
    def outer(a, b, flag):
        return inner(a + b, flag)

    assert outer(a=1, b=2, flag=True) == 4
    assert outer(1, 2, False) == 2
    assert {s[2] for s in outer.signatures} == {types.literal(True), types.literal(False)}


def sized(n):
    pass


@overload(sized)
def _ol_sized(n):
    # The literal value chooses the code: an array of that many zeros.
    SentryLiteralArgs(["n"]).for_function(_ol_sized).bind(n)
    k = n.literal_value
    return lambda n: np.zeros(k)


def test_sentry_literal_args_in_an_overload():
    @njit
    def make(m):
        return sized(m)

    for m in (2, 5):
        np.testing.assert_array_equal(make(m), np.zeros(m))
    assert {s[0] for s in make.signatures} == {types.literal(2), types.literal(5)}


def test_not_an_argument_is_a_typing_error():
    @njit
    def foo(a):
        return literally(1 + a)

    with pytest.raises(TypingError, match="Invalid use of non-Literal type"):
        foo(1)


def test_value_without_a_literal_type():
    @njit
    def foo(x):
        return literally(x)

    with pytest.raises(LiteralTypingError, match="numpy.ndarray"):
        foo(np.arange(3))


def test_literally_through_the_module_and_in_python():
    @njit
    def foo(x):
        return numba_rs.literally(x) + 1

    assert foo(41) == 42 and foo.signatures[0][0] == types.literal(41)
    assert literally(5) == 5
