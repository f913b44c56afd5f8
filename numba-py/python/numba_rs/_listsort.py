"""``list.sort(key=f)`` and ``sorted(iterable, key=f)`` in jitted code, for the keyed forms
the native templates leave out (``key=None`` sorts natively). Loaded the first time
typing meets one of them.

The sort decorates each item with its key and its position, sorts those pairs natively
(a tuple sort), and takes the items in that order: the result is stable in both
directions, as CPython's Timsort is (Numba's own keyed sort is a quicksort, not stable).
The checks and messages are Numba's."""

from . import types
from .errors import TypingError
from .extending import overload, overload_method


def _is_nonelike(t):
    if t is None or isinstance(t, types.NoneType):
        return True
    return isinstance(t, types.Omitted) and t.value is None


def _check_key(key):
    if isinstance(key, types.Optional):
        raise TypingError(
            "Key must concretely be None or a Numba JIT compiled function, "
            "an Optional (union of None and a value) was found"
        )
    if not (_is_nonelike(key) or isinstance(key, types.Dispatcher)):
        raise TypingError("Key must be None or a Numba JIT compiled function")


def _check_reverse(reverse):
    if isinstance(reverse, types.Omitted):
        rty = reverse.value
    elif isinstance(reverse, types.Optional):
        rty = reverse.type
    else:
        rty = reverse
    if not isinstance(rty, (types.Boolean, types.Integer, int, bool)):
        raise TypingError(f"an integer is required for 'reverse' (got type {reverse})")


def _list_sort(lst, key=None, reverse=False):
    _check_key(key)
    _check_reverse(reverse)
    if _is_nonelike(key):
        # Reached only when the native sort rejected the items: they have no order.
        raise TypingError(f"'<' is not supported between items of {lst.dtype}")

    def keyed(lst, key=None, reverse=False):
        n = len(lst)
        # Descending keeps equal keys in their order: their positions sort negated.
        if reverse:
            decorated = [(key(lst[i]), -i) for i in range(n)]
        else:
            decorated = [(key(lst[i]), i) for i in range(n)]
        decorated.sort(reverse=reverse)
        ordered = [lst[abs(p[1])] for p in decorated]
        for i in range(n):
            lst[i] = ordered[i]

    return keyed


# Lists and typed lists (`ListType`, `numba_rs.typed.List`) sort the same way.
overload_method(types.List, "sort")(_list_sort)
overload_method(types.ListType, "sort")(_list_sort)


@overload(sorted)
def _sorted(iterable, key=None, reverse=False):
    _check_key(key)
    _check_reverse(reverse)
    if _is_nonelike(key):
        # Reached only when the native `sorted` rejected the items.
        raise TypingError(f"'<' is not supported between items of {iterable}")

    def impl(iterable, key=None, reverse=False):
        lst = list(iterable)
        lst.sort(key=key, reverse=reverse)
        return lst

    return impl
