"""NumPy functions on datetime64 / timedelta64 arrays that the native templates leave
out (numba-py's ``FALLBACK_OVERLOADS``): ``np.sign`` of timedeltas and
``np.searchsorted`` over datetimes, computed on the int64 counts with NaT where NumPy
puts it (``sign(NaT)`` is NumPy's -1; NaT sorts last, above every date). And every
other ``np.searchsorted``: NumPy's binary search step for step, NaNs in NumPy's order,
sequences and complex values, a constant ``side``."""

import numpy as np

from . import types
from .errors import TypingError
from .extending import overload, register_jitable

_NAT = np.iinfo(np.int64).min
_TOP = np.iinfo(np.int64).max


def _dt_array(t):
    return isinstance(t, types.Array) and isinstance(t.dtype, (types.NPDatetime, types.NPTimedelta))


def _dt(t):
    return isinstance(t, (types.NPDatetime, types.NPTimedelta))


@overload(np.sign)
def _sign(x):
    if not (_dt_array(x) and isinstance(x.dtype, types.NPTimedelta)):
        return None

    def impl(x):
        out = np.empty(x.shape, x.dtype)
        out.view(np.int64)[...] = np.sign(np.ascontiguousarray(x).view(np.int64))
        return out

    return impl


@register_jitable
def _keys(a):
    # The counts in NumPy's datetime order: NaT last.
    k = np.ascontiguousarray(a).view(np.int64).copy()
    flat = k.reshape(k.size)
    for i in range(flat.size):
        if flat[i] == _NAT:
            flat[i] = _TOP
    return k


@register_jitable
def _lt_real(x, y):
    # NumPy's sort order: NaN above every number.
    return x < y or (y != y and x == x)


@register_jitable
def _lt_complex(a, b):
    # NumPy's complex sort order (npysort's `less`): lexicographic, and
    # [R + Rj, R + nanj, nan + Rj, nan + nanj].
    if a.real < b.real:
        return a.imag == a.imag or b.imag != b.imag
    if a.real > b.real:
        return b.imag != b.imag and a.imag == a.imag
    if a.real == b.real or (a.real != a.real and b.real != b.real):
        return a.imag < b.imag or (b.imag != b.imag and a.imag == a.imag)
    return b.real != b.real


def _general_searchsorted(a, v, side):
    """`np.searchsorted` for what the native template leaves out: sequences, complex
    values, NaNs in NumPy's order; `side` must be a constant (Numba's rule)."""
    side_val = getattr(side, "literal_value", "left" if side is None or isinstance(
        side, types.Omitted) else side)
    if side_val not in ("left", "right"):
        raise TypingError(f"Invalid value given for 'side': {side_val}")
    item = a.dtype if isinstance(a, (types.Array, types.List, types.UniTuple)) else None
    if item is None or (isinstance(a, types.Array) and a.ndim != 1):
        raise TypingError(f"np.searchsorted: the first argument must be 1-d, not {a}")
    vitem = v.dtype if isinstance(v, (types.Array, types.List, types.UniTuple)) else v
    cplx = isinstance(item, types.Complex) or isinstance(vitem, types.Complex)
    lt = _lt_complex if cplx else _lt_real
    right = side_val == "right"

    @register_jitable
    def cmp(x, y):
        # NumPy's `side_to_cmp`: left is `x < y`, right `x <= y` (not `y < x`).
        if right:
            return not lt(y, x)
        return lt(x, y)

    @register_jitable
    def search(arr, keys, out):
        # NumPy's `binsearch` step for step (each key starts from the bounds the last
        # one left), so an unsorted `a` gives NumPy's answers too.
        n = arr.size
        lo, hi = 0, n
        if keys.size == 0:
            return
        last = keys[0]
        for k in range(keys.size):
            x = keys[k]
            if cmp(last, x):
                hi = n
            else:
                lo = 0
                hi = hi + 1 if hi < n else n
            last = x
            while lo < hi:
                mid = lo + ((hi - lo) >> 1)
                if cmp(arr[mid], x):
                    lo = mid + 1
                else:
                    hi = mid
            out[k] = lo

    if isinstance(v, (types.Array, types.List, types.UniTuple)):
        def impl(a, v, side="left"):
            arr = np.asarray(a)
            vals = np.asarray(v)
            out = np.empty(vals.shape, np.intp)
            search(arr, vals.ravel(), out.reshape(-1))
            return out

        return impl

    def impl(a, v, side="left"):
        out = np.empty(1, np.intp)
        keys = np.empty(1, np.asarray(a).dtype if cplx else type(v))
        keys[0] = v
        search(np.asarray(a), keys, out)
        return out[0]

    return impl


@overload(np.searchsorted)
def _searchsorted(a, v, side="left"):
    if not (_dt_array(a) and a.ndim == 1):
        return _general_searchsorted(a, v, side)
    vdt = v.dtype if isinstance(v, types.Array) else v
    if not (_dt(vdt) and str(vdt) == str(a.dtype)):
        raise TypingError(
            f"np.searchsorted of {a} takes values of its own dtype ({a.dtype}), not {v}"
        )
    if isinstance(v, types.Array):

        def impl(a, v, side="left"):
            return np.searchsorted(_keys(a), _keys(v), side=side)

    else:

        def impl(a, v, side="left"):
            one = np.empty(1, a.dtype)
            one[0] = v
            return np.searchsorted(_keys(a), _keys(one)[0], side=side)

    return impl
