"""`np.linalg.matrix_power`, `np.linalg.cond` and `np.roots` as overloads over the
native `np.dot`, `np.linalg.svd`/`inv`/`norm` and `np.linalg.eigvals` (loaded with
``_npfuncs``), following NumPy's definitions and errors."""

import numpy as np

from . import types
from ._npcommon import _is_array
from .errors import TypingError
from .extending import overload, register_jitable




@overload(np.linalg.matrix_power)
def _matrix_power(a, n):
    if not (_is_array(a) and a.ndim == 2):
        raise TypingError("np.linalg.matrix_power: the first argument must be a 2-d array")
    if not isinstance(n, types.Integer):
        raise TypingError("np.linalg.matrix_power: exponent must be an integer")
    inexact = isinstance(a.dtype, (types.Float, types.Complex))

    def impl(a, n):
        if a.shape[0] != a.shape[1]:
            raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
        m = a.shape[0]
        if n == 0:
            out = np.zeros((m, m), dtype=a.dtype)
            for i in range(m):
                out[i, i] = 1
            return out
        if n < 0:
            if not inexact:
                raise TypeError("Integers to negative integer powers are not allowed.")
            base = np.linalg.inv(np.ascontiguousarray(a))
            k = -n
        else:
            base = np.ascontiguousarray(a).copy()
            k = n
        # Binary powering, as NumPy's.
        result = np.zeros((m, m), dtype=a.dtype)
        for i in range(m):
            result[i, i] = 1
        first = True
        while k > 0:
            if k & 1:
                if first:
                    result = base.copy()
                    first = False
                else:
                    result = _mm(result, base)
            k >>= 1
            if k:
                base = _mm(base, base)
        return result

    return impl


@register_jitable
def _mm(x, y):
    # A matrix product for every dtype (np.dot takes floats and complexes only).
    m, k = x.shape
    n = y.shape[1]
    out = np.zeros((m, n), dtype=x.dtype)
    for i in range(m):
        for p in range(k):
            v = x[i, p]
            for j in range(n):
                out[i, j] += v * y[p, j]
    return out


@overload(np.linalg.cond)
def _cond(x, p=None):
    if not (_is_array(x) and x.ndim == 2):
        raise TypingError("np.linalg.cond: the argument must be a 2-d array")
    if not isinstance(x.dtype, (types.Float, types.Complex)):
        raise TypingError("np.linalg.cond: only float and complex arrays are supported")
    if p is None or isinstance(p, (types.NoneType, types.Omitted)):

        def impl(x, p=None):
            s = np.linalg.svd(np.ascontiguousarray(x))[1]
            return s[0] / s[-1]

        return impl

    def impl(x, p=None):
        if x.shape[0] != x.shape[1]:
            raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
        a = np.ascontiguousarray(x)
        return np.linalg.norm(a, p) * np.linalg.norm(np.linalg.inv(a), p)

    return impl


@overload(np.roots)
def _roots(p):
    if not (_is_array(p) and p.ndim == 1) and not isinstance(p, (types.List, types.UniTuple)):
        raise TypingError("np.roots: the argument must be a 1-d array or a sequence")

    def impl(p):
        c = np.asarray(p) * (1.0 + 0j)
        n = c.size
        nz = np.nonzero(c)[0]
        if nz.size == 0:
            return np.zeros(0, dtype=np.complex128)
        # Leading zeros are dropped; trailing zeros are roots at 0.
        lead, trail = nz[0], n - nz[-1] - 1
        c = c[lead:nz[-1] + 1]
        m = c.size - 1
        out = np.zeros(m + trail, dtype=np.complex128)
        if m > 0:
            comp = np.zeros((m, m), dtype=np.complex128)
            for i in range(1, m):
                comp[i, i - 1] = 1.0
            for j in range(m):
                comp[0, j] = -c[j + 1] / c[0]
            out[:m] = np.linalg.eigvals(comp)
        return out

    return impl


@overload(np.outer)
def _outer(a, b, out=None):
    """`np.outer(a, b, out=...)`: the product written into `out` (the native template
    takes the form without it)."""
    if any(_is_array(x) and x.ndim > 2 for x in (a, b)):
        raise TypingError("np.outer() only supported on 1 and 2-D arrays")
    if out is None or isinstance(out, (types.NoneType, types.Omitted)):
        def impl(a, b, out=None):
            return np.outer(a, b)

        return impl
    if not (_is_array(out) and out.ndim == 2):
        return None

    def impl(a, b, out=None):
        x = np.asarray(a).ravel()
        y = np.asarray(b).ravel()
        if out.shape != (x.size, y.size):
            raise ValueError("output array has the wrong shape")
        for i in range(x.size):
            for j in range(y.size):
                out[i, j] = x[i] * y[j]
        return out

    return impl


@overload(np.trace)
def _trace(a, offset=0):
    # What the native template refuses: Numba's words for an array not 2-d.
    if _is_array(a) and a.ndim != 2:
        raise TypingError("np.trace() only supported on 2-D arrays")
    return None
