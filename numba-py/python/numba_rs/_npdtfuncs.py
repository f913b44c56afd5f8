"""NumPy functions on datetime64 / timedelta64 arrays that the native templates leave
out (numba-py's ``FALLBACK_OVERLOADS``): ``np.sign`` of timedeltas and
``np.searchsorted`` over datetimes, computed on the int64 counts with NaT where NumPy
puts it (``sign(NaT)`` is NumPy's -1; NaT sorts last, above every date)."""

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


@overload(np.searchsorted)
def _searchsorted(a, v, side="left"):
    if not (_dt_array(a) and a.ndim == 1):
        return None
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
