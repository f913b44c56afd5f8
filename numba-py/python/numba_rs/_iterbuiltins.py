"""Builtins over iterables that numba-rs types through overloads: ``map`` and ``filter``
(Numba supports both), and the forms of ``sum``, ``min`` and ``max`` the native templates
leave out. Loaded the first time typing meets one of them.

- ``map``/``filter``: a generator compiled from the loop CPython's builtin runs, consumed
  lazily where it is iterated (``for``, a comprehension, ``list``, ``sum``, ...). The
  function may be a jitted function, an inner function or lambda that captures nothing,
  or a builtin (``map(str, xs)``); ``filter(None, xs)`` keeps the truthy items.
- ``sum(x, start=...)`` with ``start`` as a keyword, and CPython's refusal of string,
  bytes and bytearray starts.
- ``min``/``max`` of one iterable whose items are not numbers (tuples, strings) or of
  several such values, compared with ``<``/``>`` as CPython compares them; an empty
  sequence is CPython's ValueError, an empty tuple Numba's compile-time error."""

from . import types
from .decorators import njit
from .errors import TypingError
from .extending import overload


@njit
def _map1(func, a):
    for x in a:
        yield func(x)


@njit
def _map2(func, a, b):
    for x, y in zip(a, b):
        yield func(x, y)


@njit
def _map3(func, a, b, c):
    for x, y, z in zip(a, b, c):
        yield func(x, y, z)


@njit
def _filter_func(func, a):
    for x in a:
        if func(x):
            yield x


@njit
def _filter_truthy(a):
    for x in a:
        if x:
            yield x


def _given(t):
    """An iterable was passed for this parameter (not its default)."""
    return t is not None and not isinstance(t, (types.Omitted, types.NoneType))


@overload(map)
def _map(func, a, b=None, c=None):
    if _given(c):
        return lambda func, a, b=None, c=None: _map3(func, a, b, c)
    if _given(b):
        return lambda func, a, b=None, c=None: _map2(func, a, b)
    return lambda func, a, b=None, c=None: _map1(func, a)


@overload(filter)
def _filter(func, a):
    if isinstance(func, types.NoneType) or func is None:
        return lambda func, a: _filter_truthy(a)
    if isinstance(func, (types.Number, types.Array)):
        raise TypingError(f"filter: {func} object is not callable")
    return lambda func, a: _filter_func(func, a)


@overload(sum)
def _sum(iterable, start=0):
    """``sum(iterable, start=...)`` with ``start`` as a keyword (the native template
    takes it positionally), and CPython's refusals of string-like starts."""
    s = start
    if isinstance(s, types.Omitted):
        s = None
    if isinstance(s, (types.UnicodeType, types.StringLiteral)):
        raise TypingError("sum() can't sum strings [use ''.join(seq) instead]")
    # bytes are typed `Bytes(uint8, 1d, C)`; a bytearray argument as a uint8 array.
    if s is not None and str(s).startswith("Bytes("):
        raise TypingError("sum() can't sum bytes [use b''.join(seq) instead]")
    if s is not None and isinstance(s, types.Array) and s.dtype == types.uint8:
        raise TypingError("sum() can't sum bytearray [use b''.join(seq) instead]")

    if isinstance(iterable, types.BaseTuple):
        # The native template sums tuples (of mixed types too) with a positional start.
        return lambda iterable, start=0: sum(iterable, start)

    def impl(iterable, start=0):
        acc = start
        for x in iterable:
            acc = acc + x
        return acc

    return impl


@njit
def _extreme(seq, take_max):
    it = iter(seq)
    try:
        best = next(it)
    except StopIteration:
        if take_max:
            raise ValueError("max() arg is an empty sequence")
        raise ValueError("min() arg is an empty sequence")
    for x in it:
        if (x > best) if take_max else (x < best):
            best = x
    return best


def _choose(name, args):
    """``min``/``max`` for what the native templates leave out: one iterable of items that
    are not numbers (tuples, strings), or several such values; an empty tuple is Numba's
    compile-time error."""
    take_max = name == "max"
    if len(args) == 1:
        (seq,) = args
        if isinstance(seq, types.BaseTuple) and len(seq) == 0:
            raise TypingError(f"{name}() argument is an empty tuple")
        if isinstance(seq, types.BaseTuple) and not isinstance(seq, types.UniTuple):
            return None  # mixed items: no common `<`
        return lambda *args: _extreme(args[0], take_max)
    if len(args) >= 2 and all(a == args[0] for a in args[1:]):
        return lambda *args: _extreme(args, take_max)
    return None


@overload(min)
def _min(*args):
    return _choose("min", args)


@overload(max)
def _max(*args):
    return _choose("max", args)
