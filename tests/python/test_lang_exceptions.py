"""raise, assert and try/except in nopython mode, checked against CPython.

What reaches Python must have the same class and the same ``args`` as CPython's
exception. Functions that use ``assert`` are compiled from source text because pytest
rewrites the asserts of test modules.
"""

import functools
import re

import numpy as np
import pytest

from numba_rs import errors, njit


class MyError(Exception):
    pass


class MyValueError(ValueError):
    pass


@functools.cache
def jitted(pyfunc):
    return njit(pyfunc)


def python_exception(pyfunc, *args):
    try:
        pyfunc(*args)
    except Exception as e:  # noqa: BLE001 - the oracle
        return e
    raise AssertionError(f"{pyfunc.__name__}{args} did not raise in CPython")


def check(pyfunc, *args):
    """Same result, or same exception class and args, as CPython."""
    try:
        expected = pyfunc(*args)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)) as info:
            jitted(pyfunc)(*args)
        assert type(info.value) is type(e), (pyfunc.__name__, args, info.value, e)
        assert info.value.args == e.args, (pyfunc.__name__, args, info.value.args, e.args)
        return
    got = jitted(pyfunc)(*args)
    assert type(got) is type(expected) and got == expected, (pyfunc.__name__, args, got, expected)


# ------------------------------------------------------- raise, constant message


def raise_value_error(x):
    if x < 0:
        raise ValueError("x must be non-negative")
    return x * 2


def raise_key_error(x):
    if x == 3:
        raise KeyError("missing key")
    return x


def raise_custom(x):
    if x > 100:
        raise MyError("too big")
    return x + 1


def raise_custom_subclass(x):
    if x == 0:
        raise MyValueError("zero")
    return 10 // x


def raise_class_only(x):
    if x:
        raise MyError
    return 0


def raise_no_args(x):
    if x > 1:
        raise ValueError()
    return x


def raise_several(x):
    if x == 1:
        raise ValueError("one")
    elif x == 2:
        raise KeyError("two")
    elif x == 3:
        raise MyError("three")
    elif x == 4:
        raise IndexError("four")
    elif x == 5:
        raise TypeError("five")
    elif x == 6:
        raise RuntimeError("six")
    return -x


@pytest.mark.parametrize("x", [-5, -1, 0, 1, 10])
def test_raise_value_error(x):
    check(raise_value_error, x)


@pytest.mark.parametrize("x", [0, 3, 4])
def test_raise_key_error(x):
    check(raise_key_error, x)


@pytest.mark.parametrize("x", [0, 100, 101, 10**9])
def test_raise_custom_class(x):
    check(raise_custom, x)


@pytest.mark.parametrize("x", [0, 1, -3])
def test_raise_custom_subclass_is_also_value_error(x):
    check(raise_custom_subclass, x)
    if x == 0:
        with pytest.raises(ValueError):
            jitted(raise_custom_subclass)(x)


@pytest.mark.parametrize("x", [0, 1])
def test_raise_class_without_instance(x):
    check(raise_class_only, x)


@pytest.mark.parametrize("x", [0, 2])
def test_raise_without_arguments(x):
    check(raise_no_args, x)


@pytest.mark.parametrize("x", range(8))
def test_raise_several_classes(x):
    check(raise_several, x)


# ------------------------------------------------------ raise, runtime arguments


def raise_with_int(x):
    if x > 5:
        raise ValueError("bad", x)
    return x


def raise_with_two(x, y):
    if x > y:
        raise MyError("out of order", x, y, x - y)
    return y - x


def raise_only_runtime(x):
    if x != 0:
        raise KeyError(x)
    return 0


def raise_float_arg(x):
    if x < 0.0:
        raise ValueError("negative", x * 2.0)
    return x


@pytest.mark.parametrize("x", [0, 5, 6, 7, 2**40, 2**62])
def test_raise_with_runtime_int(x):
    check(raise_with_int, x)


@pytest.mark.parametrize("x,y", [(1, 2), (5, 2), (-1, -7), (0, 0)])
def test_raise_with_several_runtime_args(x, y):
    check(raise_with_two, x, y)


@pytest.mark.parametrize("x", [0, 1, -9])
def test_raise_only_runtime_arg(x):
    check(raise_only_runtime, x)


@pytest.mark.parametrize("x", [0.0, 1.5, -0.25, -1e10])
def test_raise_with_runtime_float(x):
    check(raise_float_arg, x)


def test_runtime_args_do_not_leak_between_calls():
    f = jitted(raise_with_int)
    for x in (6, 99, 7):
        with pytest.raises(ValueError) as info:
            f(x)
        assert info.value.args == ("bad", x)


# ------------------------------------------------------------------------ assert

ASSERT_SOURCE = """
def checked(x):
    assert x > 0, "x must be positive"
    return x * 2

def bare(x):
    assert x > 0
    return x

def two_asserts(x, y):
    assert x != 0, "x is zero"
    assert y != 0
    return x + y
"""


def assert_functions():
    namespace = {}
    exec(compile(ASSERT_SOURCE, "assert_fixture.py", "exec"), namespace)
    return namespace


@pytest.mark.parametrize("name", ["checked", "bare"])
@pytest.mark.parametrize("x", [3, 1, 0, -1])
def test_assert(name, x):
    py = assert_functions()[name]
    check(py, x)


@pytest.mark.parametrize("x,y", [(1, 1), (0, 1), (1, 0), (0, 0)])
def test_two_asserts(x, y):
    check(assert_functions()["two_asserts"], x, y)


# -------------------------------------------------------------------- try/except
# Numba 0.68 only matches bare ``except:`` and ``except Exception:``; handlers naming a
# narrower class are rejected at compile time (tested further down).


def bare_except(x):
    try:
        if x < 0:
            raise ValueError("negative")
        r = x * 2
    except:  # noqa: E722
        r = -1
    return r


def except_exception(x):
    try:
        if x == 1:
            raise KeyError("one")
        if x == 2:
            raise MyError("two")
        return x
    except Exception:
        return -x


def except_catches_builtin_error(x):
    try:
        return 100 // x
    except Exception:
        return -1


def except_in_loop(n):
    caught = 0
    total = 0
    for i in range(n):
        try:
            if i % 3 == 0:
                raise ValueError("multiple of three")
            total += i
        except Exception:
            caught += 1
    return caught, total


def handler_then_continue(x):
    r = 0
    try:
        if x > 2:
            raise MyError("x")
        r = x
    except Exception:
        r = -100
    return r + 1


def nested_try(x):
    r = 0
    try:
        try:
            if x == 1:
                raise ValueError("inner")
            r = 1
        except Exception:
            r = 2
            if x == 1:
                raise KeyError("from handler")
    except Exception:
        r = 3
    return r


@pytest.mark.parametrize("x", [-2, 0, 3])
def test_bare_except(x):
    check(bare_except, x)


@pytest.mark.parametrize("x", [0, 1, 2, 3])
def test_except_exception(x):
    check(except_exception, x)


@pytest.mark.parametrize("x", [0, 1, -7, 50])
def test_except_catches_zero_division(x):
    check(except_catches_builtin_error, x)


@pytest.mark.parametrize("n", [0, 1, 3, 10])
def test_except_in_loop(n):
    expected = except_in_loop(n)
    assert jitted(except_in_loop)(n) == expected


@pytest.mark.parametrize("x", [0, 2, 3, 9])
def test_handler_then_continue(x):
    check(handler_then_continue, x)


@pytest.mark.parametrize("x", [0, 1])
def test_nested_try(x):
    check(nested_try, x)


# --------------------------------------------------- exceptions across calls


@njit
def jit_callee(x):
    if x < 0:
        raise ValueError("callee got negative", x)
    if x == 0:
        raise MyError("callee got zero")
    return x * 10


def py_callee(x):
    if x < 0:
        raise ValueError("callee got negative", x)
    if x == 0:
        raise MyError("callee got zero")
    return x * 10


def caller_catches_all(x):
    try:
        return jit_callee(x)
    except Exception:
        return -2


def caller_bare_except(x):
    try:
        r = jit_callee(x)
    except:  # noqa: E722
        r = -3
    return r


def caller_does_not_catch(x):
    return jit_callee(x) + 1


@pytest.mark.parametrize("x", [-3, 0, 4])
def test_callee_exception_caught_by_caller(x):
    assert jitted(caller_catches_all)(x) == (-2 if x <= 0 else py_callee(x))
    assert jitted(caller_bare_except)(x) == (-3 if x <= 0 else py_callee(x))


@pytest.mark.parametrize("x", [-3, 0, 4])
def test_callee_exception_propagates_to_python(x):
    if x > 0:
        assert jitted(caller_does_not_catch)(x) == py_callee(x) + 1
        return
    e = python_exception(py_callee, x)
    with pytest.raises(type(e)) as info:
        jitted(caller_does_not_catch)(x)
    assert type(info.value) is type(e)
    assert info.value.args == e.args


# ------------------------------------------------------ unsupported: except as


def except_as(x):
    try:
        if x:
            raise ValueError("v")
        return 0
    except ValueError as e:  # noqa: F841
        return 1


# Numba 0.68.1 raises numba.errors.UnsupportedBytecodeError ("Exception object cannot be
# stored into variable (e).") -- a plain Exception subclass, not a NumbaError.
REJECTED = tuple(
    getattr(errors, name)
    for name in ("UnsupportedError", "TypingError", "UnsupportedBytecodeError")
    if hasattr(errors, name)
)


def test_except_as_is_rejected_at_first_call():
    f = njit(except_as)  # decorating is fine: the error comes with the first call
    with pytest.raises(REJECTED):
        f(1)


def bare_reraise_in_try():
    try:
        raise ValueError("ERROR")
    except Exception:
        raise


@pytest.mark.parametrize("pyfunc, message", [
    (except_as, "Exception object cannot be stored into variable (e)"),
    (bare_reraise_in_try, "The re-raising of an exception is not yet supported."),
])
def test_unsupported_bytecode_is_numbas_class(pyfunc, message):
    # Numba's UnsupportedBytecodeError (and an UnsupportedError, as numba-rs raised
    # before), with Numba's message.
    with pytest.raises(errors.UnsupportedBytecodeError, match=message.replace("(", r"\(")
                       .replace(")", r"\)").replace(".", r"\.")) as info:
        njit(pyfunc)(1) if pyfunc is except_as else njit(pyfunc)()
    assert isinstance(info.value, errors.UnsupportedError)


def except_specific(x):
    try:
        return 100 // x
    except ZeroDivisionError:
        return -1


def except_specific_user_class(x):
    try:
        if x:
            raise MyError("m")
        return 0
    except MyError:
        return 1


def except_specific_unmatched(x):
    try:
        if x > 0:
            raise ValueError("v", x)
        return 0
    except KeyError:
        return 1


# Beyond Numba 0.68.1, which rejects any class but Exception ("Exception matching is
# limited to <class 'Exception'>"): numba-rs matches classes as CPython does, and an
# unmatched exception propagates unchanged.
@pytest.mark.parametrize("pyfunc", [except_specific, except_specific_user_class])
@pytest.mark.parametrize("x", [0, 1, 3, -7])
def test_except_specific_class_like_cpython(pyfunc, x):
    assert njit(pyfunc)(x) == pyfunc(x)


@pytest.mark.parametrize("x", [-2, 0, 4])
def test_unmatched_except_reraises_like_cpython(x):
    f = njit(except_specific_unmatched)
    try:
        expected = ("ok", except_specific_unmatched(x))
    except ValueError as e:
        expected = ("raised", e.args)
    try:
        got = ("ok", f(x))
    except ValueError as e:
        got = ("raised", e.args)
    assert got == expected


# ------------------------------------------------ references across control flow


def caught_with_live_array(x):
    out = np.zeros(3)
    try:
        if x < 0:
            raise ValueError("neg")
        out[0] = x
    except Exception:
        out[0] = -1.0
    return out


def rebound_in_and_loop(u0, maxit):
    # The loop exits from two blocks (`and`): each block's releases on entry cover both.
    u = u0.copy()
    it = 0
    while it < maxit and it < 100:
        u = u + 1.0
        it += 1
    return u


def rebound_in_or_loop(u0, maxit):
    u = u0.copy()
    it = 0
    while not (it >= maxit or it >= 100):
        u = u * 2.0
        it += 1
    return u


@pytest.mark.parametrize("x", [-1.0, 2.0])
def test_try_except_with_a_live_array_releases_it_once(x):
    for _ in range(3):  # a double release aborted the process on the second call
        np.testing.assert_array_equal(jitted(caught_with_live_array)(x), caught_with_live_array(x))


@pytest.mark.parametrize("maxit", [0, 1, 2, 150])
def test_array_rebound_in_a_loop_with_a_compound_condition(maxit):
    u0 = np.arange(3.0)
    for f in (rebound_in_and_loop, rebound_in_or_loop):
        for _ in range(3):
            np.testing.assert_array_equal(jitted(f)(u0, maxit), f(u0, maxit))


_CALLEE_RAISES_IN_TRY = '''
import numpy as np
import numba_rs
from numba_rs.typed import List

@numba_rs.njit
def callee(a, n, raise_at):
    for i in range(n):
        if i == raise_at:
            raise IndexError
    return a

@numba_rs.njit
def caller(n, raise_at):
    a = np.zeros(3)
    lst = List.empty_list(numba_rs.types.int64)
    try:
        callee(a, n, raise_at)
        callee(lst, n, raise_at)
    except Exception:
        return a.sum() + len(lst) + 1.0
    return a.sum() + len(lst)

for _ in range(20):
    assert caller(10, 10) == 0.0
    assert caller(10, 5) == 1.0
print("ok")
'''


@pytest.mark.parametrize("seed", ["2", "3", "4"])
def test_failed_call_inside_try_releases_no_garbage(seed):
    """A call that raises inside `try` leaves its (never written) result a zero value:
    the handler's release of it once decref'd stack garbage, a crash that depended on the
    interpreter's hash seed."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONHASHSEED=seed)
    r = subprocess.run(
        [sys.executable, "-c", _CALLEE_RAISES_IN_TRY],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


# -- raising out of a loop over a container inside `try` -----------------------------
# The loop's iterator (holding the container) is released where the loop ends and
# again where the handler starts; a released iterator must release nothing the second
# time (it crashed the interpreter before).


def raise_in_loop(a, stop):
    try:
        for p in a:
            if p == stop:
                raise ValueError(p)
    except ValueError:
        return 1
    return 2


def raise_after_break(a):
    n = 0
    try:
        for p in a:
            n += 1
            break
        raise KeyError(n)
    except KeyError:
        return n
    return -1


def raise_in_enumerate_zip(a, b, stop):
    total = 0
    try:
        for i, (x, y) in enumerate(zip(a, b)):
            total += x * y
            if i == stop:
                raise IndexError(i)
    except IndexError:
        return total
    return -total


def catch_inside_loop(a):
    caught = 0
    for p in a:
        try:
            if p % 2:
                raise ValueError(p)
        except ValueError:
            caught += 1
    return caught


@pytest.mark.parametrize(
    "make", [np.arange, lambda n: list(range(n)), lambda n: np.arange(n * 2)[::2]]
)
def test_raise_out_of_loops_over_containers(make):
    a = make(5)
    for stop in (-1, 0, 3):
        assert njit(raise_in_loop)(a, stop) == raise_in_loop(a, stop)
        assert njit(raise_in_enumerate_zip)(a, a, stop) == raise_in_enumerate_zip(a, a, stop)
    assert njit(raise_after_break)(a) == raise_after_break(a)
    assert njit(catch_inside_loop)(a) == catch_inside_loop(a)


def raise_string():
    raise "illegal"  # noqa: B016 (what the test is about)


def test_raising_a_string_is_numbas_unsupported_error():
    # CPython: TypeError at run time; Numba refuses it when compiling, with this message.
    with pytest.raises(TypeError):
        raise_string()
    with pytest.raises(errors.UnsupportedError,
                       match="Directly raising a string constant as an exception is not supported"):
        njit(raise_string)()
