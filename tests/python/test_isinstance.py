"""`isinstance` in compiled code (Numba's `ol_isinstance`): decided from the value's
type at compile time, and branches it decides are pruned before the function is typed
in full, so a branch written for another type never has to type. The oracle is CPython
running the same function (where Numba's answer is Python's), and Numba's documented
messages for what it refuses."""

import numpy as np
import pytest

from numba_rs import njit, typed, types
from numba_rs.errors import TypingError
from numba_rs.experimental import jitclass


def classify(a):
    if isinstance(a, (int, float)):
        if isinstance(a, int):
            return a + 1, "int"
        if isinstance(a, float):
            return a + 2.0, "float"
    elif isinstance(a, str):
        return a + ", world!", "str"
    elif isinstance(a, complex):
        return a.imag, "complex"
    elif isinstance(a, (tuple, list)):
        if isinstance(a, tuple):
            return "tuple"
        else:
            return "list"
    elif isinstance(a, set):
        return "set"
    elif isinstance(a, bytes):
        return "bytes"
    return "no match"


@pytest.mark.parametrize("value", [3, 5.0, "Hello", b"world", 1j, [1, 2, 3], (1, 3, 3, 3),
                                   {1, 2}, (1, "nba", 2), None, np.ones(3)])
def test_branches_for_other_types_are_not_typed(value):
    assert njit(classify)(value) == classify(value)


def test_every_class_against_every_kind_of_value():
    classes = (int, float, complex, str, list, tuple, bytes, set, range, np.int8,
               np.float32)
    values = (1, 2.3, 4j, "5", [6], (7,), b"8", {9}, None, (10, 11, 12), (13, "a", 14j),
              np.array([15, 16, 17]), np.int8(18), np.float32(19), np.ones(4),
              typed.Dict.empty(types.unicode_type, types.float64),
              typed.List.empty_list(types.complex128))
    for cls in classes:
        ns = {"C": cls}
        exec("def f(x):\n    return isinstance(x, C)\n", ns)
        f = ns["f"]
        jf = njit(f)
        for v in values:
            assert jf(v) == f(v), (cls, v)


def test_typed_containers_and_number_types():
    def which(a):
        if isinstance(a, typed.List):
            return "typed list"
        elif isinstance(a, (types.int32, types.int64)):
            if isinstance(a, types.int32):
                return "int32"
            return "int64"
        elif isinstance(a, typed.Dict):
            return "typed dict"
        return "no match"

    jw = njit(which)
    assert jw(typed.List([1, 2])) == "typed list"
    assert jw(np.int32(1)) == "int32"
    assert jw(2) == "int64"
    assert jw(typed.Dict.empty(types.int64, types.int64)) == "typed dict"
    assert jw(np.float32(1.0)) == "no match"
    # Numba's rule: a number matches its class's type exactly (bool is not int, and
    # an int64 value is an np.int64; Python says otherwise for these two).
    assert njit(lambda: isinstance(True, int))() is False
    assert njit(lambda: isinstance(1, np.intp))() is True
    # and a typed.Dict is a `dict` (Numba's rule; Python's typed.Dict is a Mapping).
    assert njit(lambda d: isinstance(d, dict))(typed.Dict.empty(types.int64, types.int64))


def test_dicts_and_locals():
    def f():
        a = {1: 2, 3: 4}
        b = {"a": 10, "b": np.zeros(3)}
        c = range(1, 2)
        return isinstance(a, dict) and isinstance(b, dict) and isinstance(c, range)

    assert njit(f)() == f()


def test_reassigned_argument():
    def f(a):
        x = 0
        if isinstance(a, int):
            a = (a, a)
        for i in range(len(a)):
            x += i
        return x

    assert njit(f)(3) == f(3)
    assert njit(f)((1, 2, 3)) == f((1, 2, 3))


def test_jitclass_instances():
    spec = [("value", types.int32)]

    @jitclass(spec)
    class Foo:
        def __init__(self, value):
            self.value = value

        def get(self):
            return self.value

        def incr(self):
            return self.value + 1

    @jitclass(spec)
    class Bar:
        def __init__(self, value):
            self.value = value

        def get(self):
            return self.value

    def check(obj):
        if isinstance(obj, (Foo, Bar)):
            x = obj.get()
            if isinstance(obj, Foo):  # only Foo has incr
                return obj.incr() + x, "Foo"
            return obj.get() + x, "Bar"
        return 0, "no match"

    jc = njit(check)
    assert jc(Foo(3)) == (7, "Foo") == check(Foo(3))
    assert jc(Bar(123)) == (246, "Bar") == check(Bar(123))
    assert jc(0) == (0, "no match") == check(0)


def test_errors_name_the_problem():
    def phi(x):
        if x > 4:
            z = 10
        else:
            z = "a"
        return isinstance(z, int)

    with pytest.raises(TypingError, match='cannot determine the type of variable "z" due to a branch'):
        njit(phi)(100)

    def not_a_class(x):
        return isinstance(x, (float, "not a type"))

    assert njit(not_a_class)(3.4) is True  # the first class answers
    with pytest.raises(TypingError, match="Cannot infer Numba type of Python type"):
        njit(not_a_class)(100)

    with pytest.raises(TypingError, match="Numba type classes.*are not supported"):
        njit(lambda: isinstance(1, types.Integer))()

    def optional(flag):
        z = 3 if flag else None
        return isinstance(z, int)

    with pytest.raises(TypingError, match="isinstance"):
        njit(optional)(True)

    def missing_arg(x):
        return callee(x)

    with pytest.raises(TypingError, match=r"Cannot bind 'args=\(int64,\) kws=\{\}' to signature '\(x, y\)'"):
        njit(missing_arg)(1)


@njit
def callee(x, y):
    return x + y
