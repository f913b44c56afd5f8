"""NumPy functions numba-rs implements as overloads written over the operations it
compiles natively (as Numba writes most of ``arraymath.py``): loaded the first time
compiled code refers to a NumPy function the native templates do not type
(numba-py's ``BUILTIN_OVERLOADS``). Each follows NumPy's definition (the formula
NumPy's own source uses where it is one) and Numba's signatures and errors:

``sinc angle isclose allclose tri tril triu repeat nan_to_num average interp digitize
vander geomspace ediff1d extract count_nonzero isin setdiff1d setxor1d union1d
intersect1d cross kron tile argwhere logspace polyval convolve correlate triu_indices
tril_indices append delete trim_zeros hanning hamming blackman bartlett isneginf
isposinf fix percentile quantile nanpercentile nanquantile cov corrcoef``.
"""

import numpy as np

from . import types
from ._npcommon import _is_array, _is_none, _is_number
from ._npfuncs2 import _asarray_type_ndim
from .errors import TypingError
from .extending import overload, overload_method, register_jitable






def _is_array_like(t):
    return _is_array(t) or _is_number(t) or isinstance(
        t, (types.UniTuple, types.Tuple, types.List, types.ListType))




def _check_int(t, what):
    # Numba's `check_is_integer`: a bool is not an integer here.
    if not isinstance(t, types.Integer):
        raise TypingError(f"{what} must be an integer")


def _result_dtype(func, *items):
    """The dtype NumPy's own ``func`` gives for inputs of these element types (NumPy is the
    oracle for its promotion rules), as a scalar class for compiled code."""
    samples = [np.ones(1, dtype=np.dtype(str(t))) for t in items]
    return func(*samples).dtype.type


@overload(np.sinc)
def _sinc(x):
    if _is_array(x):
        dt = _result_dtype(np.sinc, x.dtype)

        def impl(x):
            out = np.empty(x.shape, dtype=dt)
            flat = x.ravel()
            of = out.reshape(-1)
            for i in range(flat.size):
                v = flat[i]
                if v == 0:
                    of[i] = 1.0
                else:
                    y = np.pi * v
                    of[i] = np.sin(y) / y
            return out

        return impl
    if _is_number(x):
        def impl(x):
            if x == 0:
                x = 1.0e-20
            y = np.pi * x
            return np.sin(y) / y

        return impl
    raise TypingError("Argument \"x\" must be a Number or array-like.")


@overload(np.angle)
def _angle(z, deg=False):
    if not (_is_array(z) or _is_number(z)):
        raise TypingError("Argument \"z\" must be a complex or Array[complex]")
    item = z.dtype if _is_array(z) else z
    if isinstance(item, types.Complex) and _is_array(z):
        # complex64 gives float32: the result keeps the parts' width.
        dt = _result_dtype(np.angle, z.dtype)

        def impl(z, deg=False):
            a = np.arctan2(np.imag(z), np.real(z))
            if deg:
                return (a * (180.0 / np.pi)).astype(dt)
            return a.astype(dt)

        return impl
    if isinstance(item, types.Complex):
        def impl(z, deg=False):
            a = np.arctan2(np.imag(z), np.real(z))
            if deg:
                return a * (180.0 / np.pi)
            return a

        return impl
    if _is_array(z):
        dt = _result_dtype(np.angle, z.dtype)

        def impl(z, deg=False):
            # A real value's imaginary part is +0 (NumPy's `arctan2(0, z)`); ints and
            # bools give float64, floats keep their width.
            x = z.astype(dt)
            a = np.arctan2(np.zeros_like(x), x)
            if deg:
                return (a * (180.0 / np.pi)).astype(dt)
            return a.astype(dt)

        return impl

    def impl(z, deg=False):
        a = np.arctan2(0.0, z * 1.0)
        if deg:
            return a * (180.0 / np.pi)
        return a

    return impl


@register_jitable
def _close(a, b, rtol, atol, equal_nan):
    # NumPy's `isclose`: finite values within tolerance, equal infinities, NaNs when
    # `equal_nan`; integers compared as floats (NumPy's `result_type(y, 1.0)`; the
    # smallest int64 has no int64 absolute value).
    a = a + 0.0
    b = b + 0.0
    if np.isfinite(a) and np.isfinite(b):
        return abs(a - b) <= atol + rtol * abs(b)
    if a == b:
        return True
    return equal_nan and np.isnan(a) and np.isnan(b)


@overload(np.isclose)
def _isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    if not (_is_array_like(a) and _is_array_like(b)):
        raise TypingError("The first two arguments must be array-likes")
    if _is_number(a) and _is_number(b):
        def impl(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
            return _close(a, b, rtol, atol, equal_nan)

        return impl

    def impl(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
        x = np.asarray(a)
        y = np.asarray(b)
        shape = np.broadcast_shapes(x.shape, y.shape)
        out = np.empty(shape, dtype=np.bool_)
        xb = x + np.zeros(shape, dtype=x.dtype)
        yb = y + np.zeros(shape, dtype=y.dtype)
        xf = xb.ravel()
        yf = yb.ravel()
        of = out.reshape(-1)
        for i in range(of.size):
            of[i] = _close(xf[i], yf[i], rtol, atol, equal_nan)
        return out

    return impl


@overload(np.allclose)
def _allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    if not _is_array_like(a):
        raise TypingError('The first argument "a" must be array-like')
    if not _is_array_like(b):
        raise TypingError('The second argument "b" must be array-like')
    if not isinstance(rtol, (float, types.Float)):
        raise TypingError('The third argument "rtol" must be a floating point')
    if not isinstance(atol, (float, types.Float)):
        raise TypingError('The fourth argument "atol" must be a floating point')
    if not isinstance(equal_nan, (bool, types.Boolean)):
        raise TypingError('The fifth argument "equal_nan" must be a boolean')
    if _is_number(a) and _is_number(b):
        def impl(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
            return _close(a, b, rtol, atol, equal_nan)

        return impl

    def impl(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
        return bool(np.all(np.isclose(a, b, rtol, atol, equal_nan)))

    return impl


@overload(np.tri)
def _tri(N, M=None, k=0):
    _check_int(N, "N")
    if not _is_none(M):
        _check_int(M, "M")
    _check_int(k, "k")

    def impl(N, M=None, k=0):
        # Negative sizes give empty dimensions, as NumPy's `arange`-based definition.
        rows = max(N, 0)
        cols = rows if M is None else max(M, 0)
        out = np.zeros((rows, cols), dtype=np.float64)
        for i in range(rows):
            for j in range(min(max(i + k + 1, 0), cols)):
                out[i, j] = 1.0
        return out

    return impl


def _tri_part(m, k, lower):
    if not _is_array(m):
        raise TypingError("The first argument must be an array")
    _check_int(k, "k")
    if m.ndim == 1:
        def impl(m, k=0):
            n = m.shape[0]
            out = np.empty((n, n), dtype=m.dtype)
            for i in range(n):
                for j in range(n):
                    keep = (j - i <= k) if lower else (j - i >= k)
                    out[i, j] = m[j] if keep else 0
            return out

        return impl
    if m.ndim == 2:
        def impl(m, k=0):
            out = m.copy()
            for i in range(m.shape[0]):
                for j in range(m.shape[1]):
                    keep = (j - i <= k) if lower else (j - i >= k)
                    if not keep:
                        out[i, j] = 0
            return out

        return impl

    # More dimensions: each matrix of the last two axes on its own (NumPy's mask
    # broadcast over the leading axes).
    def impl(m, k=0):
        out = m.copy()
        rows, cols = m.shape[-2], m.shape[-1]
        mats = out.reshape((-1, rows, cols))
        for b in range(mats.shape[0]):
            for i in range(rows):
                for j in range(cols):
                    keep = (j - i <= k) if lower else (j - i >= k)
                    if not keep:
                        mats[b, i, j] = 0
        return out

    return impl


@overload(np.tril)
def _tril(m, k=0):
    return _tri_part(m, k, True)


@overload(np.triu)
def _triu(m, k=0):
    return _tri_part(m, k, False)


@overload(np.repeat)
def _repeat(a, repeats):
    if not _is_array_like(a):
        raise TypingError("The first argument must be an array-like")
    if isinstance(repeats, types.Integer):
        def impl(a, repeats):
            if repeats < 0:
                raise ValueError("negative dimensions are not allowed")
            flat = np.asarray(a).ravel()
            out = np.empty(flat.size * repeats, dtype=flat.dtype)
            for i in range(flat.size):
                for r in range(repeats):
                    out[i * repeats + r] = flat[i]
            return out

        return impl
    if isinstance(repeats, (types.Array, types.List)) and isinstance(
            repeats.dtype, types.Integer):
        def impl(a, repeats):
            flat = np.asarray(a).ravel()
            reps = np.asarray(repeats).ravel()
            if reps.size == 1:
                return np.repeat(flat, reps[0])
            if reps.size != flat.size:
                raise ValueError("operands could not be broadcast together")
            total = 0
            for r in reps:
                if r < 0:
                    raise ValueError("negative dimensions are not allowed")
                total += r
            out = np.empty(total, dtype=flat.dtype)
            at = 0
            for i in range(flat.size):
                for _ in range(reps[i]):
                    out[at] = flat[i]
                    at += 1
            return out

        return impl
    raise TypingError(
        "The repeats argument must be an integer or an array-like of integer dtype")


@overload_method(types.Array, "repeat")
def _array_repeat(a, repeats):
    # Numba's `a.repeat`: np.repeat's checks and result.
    _repeat(a, repeats)

    def impl(a, repeats):
        return np.repeat(a, repeats)

    return impl


@overload(np.nan_to_num)
def _nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    if _is_number(x):
        if isinstance(x, types.Complex):
            def impl(x, copy=True, nan=0.0, posinf=None, neginf=None):
                r = np.nan_to_num(np.array([x.real]), True, nan, posinf, neginf)[0]
                i = np.nan_to_num(np.array([x.imag]), True, nan, posinf, neginf)[0]
                return complex(r, i)

            return impl

        def impl(x, copy=True, nan=0.0, posinf=None, neginf=None):
            return np.nan_to_num(np.array([x]), True, nan, posinf, neginf)[0]

        return impl
    if not _is_array(x):
        raise TypingError("The first argument must be a scalar or an array-like")
    dtype = x.dtype
    if isinstance(dtype, (types.Integer, types.Boolean)):
        def impl(x, copy=True, nan=0.0, posinf=None, neginf=None):
            return x.copy() if copy else x

        return impl

    def fix(v, nan, hi, lo):
        if np.isnan(v):
            return nan
        if np.isinf(v):
            return hi if v > 0 else lo
        return v

    fix = register_jitable(fix)
    if isinstance(dtype, types.Complex):
        def fix_one(v, nan, hi, lo):
            return complex(fix(v.real, nan, hi, lo), fix(v.imag, nan, hi, lo))

    else:
        fix_one = fix
    fix_one = register_jitable(fix_one)
    # The defaults for infinities: the largest finite values of x's (parts') type.
    finfo = np.finfo(np.dtype(str(dtype)))
    fmax, fmin = finfo.max, finfo.min

    def impl(x, copy=True, nan=0.0, posinf=None, neginf=None):
        hi = fmax if posinf is None else posinf
        lo = fmin if neginf is None else neginf
        if copy:
            out = x.copy()
            flat = out.reshape(-1)
            for i in range(flat.size):
                flat[i] = fix_one(flat[i], nan, hi, lo)
            return out
        # In place (NumPy's copy=False), whatever x's layout.
        for idx in np.ndindex(x.shape):
            x[idx] = fix_one(x[idx], nan, hi, lo)
        return x

    return impl


@overload(np.average)
def _average(a, axis=None, weights=None):
    if not _is_array_like(a):
        raise TypingError("The first argument must be array-like")
    if not _is_none(axis):
        # Numba's own limit, raised when called.
        def impl(a, axis=None, weights=None):
            raise TypeError("Numba does not support average with axis.")

        return impl
    if _is_none(weights):
        def impl(a, axis=None, weights=None):
            return np.mean(np.asarray(a))

        return impl

    def impl(a, axis=None, weights=None):
        arr = np.asarray(a)
        w = np.asarray(weights)
        # Other shapes broadcast, as Numba's; only 1-d weights may differ in shape.
        if arr.shape != w.shape and w.ndim != 1:
            raise TypeError("1D weights expected when shapes of a and weights differ.")
        wsum = np.sum(w)
        if wsum == 0:
            raise ZeroDivisionError("Weights sum to zero, can't be normalized.")
        return np.sum(np.multiply(arr, w)) / wsum

    return impl


_LIKELY_IN_CACHE_SIZE = 8


@register_jitable
def _search_with_guess(key, arr, n, guess):
    """NumPy's `binary_search_with_guess`: the index j with arr[j] <= key < arr[j + 1],
    -1 below, n above; searched from the last answer, in NumPy's order (which decides
    the answer for unsorted sample points)."""
    imin = 0
    imax = n
    if key > arr[n - 1]:
        return n
    if key < arr[0]:
        return -1
    if n <= 4:
        i = 1
        while i < n and key >= arr[i]:
            i += 1
        return i - 1
    guess = max(1, min(guess, n - 3))
    # Each comparison as NumPy writes it: with NaN sample points the form decides.
    if key < arr[guess]:
        if not key < arr[guess - 1]:
            return guess - 1
        imax = guess - 1
        if guess > _LIKELY_IN_CACHE_SIZE and key >= arr[guess - _LIKELY_IN_CACHE_SIZE]:
            imin = guess - _LIKELY_IN_CACHE_SIZE
    else:
        if key < arr[guess + 1]:
            return guess
        if key < arr[guess + 2]:
            return guess + 1
        imin = guess + 2
        if guess < n - _LIKELY_IN_CACHE_SIZE - 1 and key < arr[guess + _LIKELY_IN_CACHE_SIZE]:
            imax = guess + _LIKELY_IN_CACHE_SIZE
    while imin < imax:
        mid = imin + ((imax - imin) >> 1)
        if key >= arr[mid]:
            imin = mid + 1
        else:
            imax = mid
    return imin - 1


@register_jitable
def _lerp_part(slope, x, x0, x1, y0, y1):
    # NumPy's interpolation of one real part: from the left point, else (NaN, as
    # from an infinite slope) from the right one, else the common value.
    v = slope * (x - x0) + y0
    if np.isnan(v):
        v = slope * (x - x1) + y1
        if np.isnan(v) and y0 == y1:
            v = y0
    return v


@register_jitable
def _interp_real(dx, dy, j, xv):
    slope = (dy[j + 1] - dy[j]) / (dx[j + 1] - dx[j])
    return _lerp_part(slope, xv, dx[j], dx[j + 1], dy[j], dy[j + 1])


@register_jitable
def _interp_complex(dx, dy, j, xv):
    # NumPy's complex slope: each part times the reciprocal of the step.
    inv = 1 / (dx[j + 1] - dx[j])
    re = _lerp_part((dy[j + 1].real - dy[j].real) * inv, xv, dx[j], dx[j + 1],
                    dy[j].real, dy[j + 1].real)
    im = _lerp_part((dy[j + 1].imag - dy[j].imag) * inv, xv, dx[j], dx[j + 1],
                    dy[j].imag, dy[j + 1].imag)
    return complex(re, im)


def _interp_core(between):
    """NumPy's `arr_interp` / `arr_interp_complex` (compiled_base.c) over float64
    sample points, giving an array of x's shape; `between` interpolates inside an
    interval."""
    def core(x, xp, fp, dt):
        dz = np.asarray(x).astype(np.float64)
        dx = np.asarray(xp).astype(np.float64)
        dy = np.asarray(fp).astype(dt)
        n = len(dx)
        if n == 0:
            raise ValueError("array of sample points is empty")
        if n != len(dy):
            raise ValueError("fp and xp are not of the same size.")
        out = np.empty(dz.shape, dtype=dt)
        zf = dz.ravel()
        of = out.reshape(-1)
        if n == 1:
            of[:] = dy[0]
            return out
        j = 0
        for i in range(zf.size):
            xv = zf[i]
            if np.isnan(xv):
                of[i] = xv
                continue
            j = _search_with_guess(xv, dx, n, j)
            if j == -1:
                of[i] = dy[0]
            elif j >= n - 1:
                of[i] = dy[n - 1]
            elif dx[j] == xv:
                # Exactly on a sample point: no interpolation that could give NaN.
                of[i] = dy[j]
            else:
                of[i] = between(dx, dy, j, xv)
        return out

    return register_jitable(core)


_interp_core_real = _interp_core(_interp_real)
_interp_core_complex = _interp_core(_interp_complex)


def _elem_dtype(t):
    """The NumPy dtype of an array-like's elements."""
    while isinstance(t, (types.Array, types.List, types.UniTuple, types.ListType)):
        t = t.dtype
    if isinstance(t, types.BaseTuple):
        # A mixed tuple: its entries' common type; an empty one is float64.
        if not t.types:
            return np.dtype(np.float64)
        return np.result_type(*[_elem_dtype(x) for x in t.types])
    return np.dtype(str(t))


@overload(np.interp)
def _interp(x, xp, fp):
    if getattr(xp, "ndim", 1) > 1:
        raise TypingError("xp must be 1D")
    if getattr(fp, "ndim", 1) > 1:
        raise TypingError("fp must be 1D")
    cast_msg = "Cannot cast array data from complex dtype to float64 dtype"
    if np.issubdtype(_elem_dtype(xp), np.complexfloating):
        raise TypingError(cast_msg)
    dt = np.result_type(_elem_dtype(fp), np.float64)
    core = _interp_core_complex if np.issubdtype(dt, np.complexfloating) else _interp_core_real
    dt = dt.type
    if isinstance(x, types.Number):
        if isinstance(x, types.Complex):
            raise TypingError(cast_msg)

        def impl(x, xp, fp):
            return core(x, xp, fp, dt).ravel()[0]

        return impl

    def impl(x, xp, fp):
        return core(x, xp, fp, dt)

    return impl


@register_jitable
def _monotonic(bins):
    """Whether `bins` increase (else they decrease), as NumPy's `check_array_monotonic`
    decides it (the first two distinct values; NaNs compare false), or ValueError."""
    n = bins.size
    i = 1
    while i < n and bins[i] == bins[i - 1]:
        i += 1
    if i == n:
        return True
    increasing = bins[0] < bins[i]
    for k in range(i, n):
        if (bins[k - 1] > bins[k]) if increasing else (bins[k - 1] < bins[k]):
            raise ValueError("bins must be monotonically increasing or decreasing")
    return increasing


@register_jitable
def _bin_of(v, bins, right, increasing):
    n = bins.size
    if increasing:
        if right:
            return np.searchsorted(bins, v, side="left")
        return np.searchsorted(bins, v, side="right")
    # Decreasing bins: reversed, the result counted from the end (NumPy's own way).
    rev = bins[::-1]
    if right:
        return n - np.searchsorted(rev, v, side="left")
    return n - np.searchsorted(rev, v, side="right")


@overload(np.digitize)
def _digitize(x, bins, right=False):
    if not _is_array_like(bins) or _is_number(bins):
        raise TypingError("bins must be an array-like")
    if _is_number(x):
        def impl(x, bins, right=False):
            b = np.asarray(bins)
            return _bin_of(x, b, right, _monotonic(b))

        return impl

    def impl(x, bins, right=False):
        b = np.asarray(bins)
        inc = _monotonic(b)
        xs = np.asarray(x)
        out = np.empty(xs.shape, dtype=np.intp)
        fx = xs.ravel()
        of = out.reshape(-1)
        for i in range(fx.size):
            of[i] = _bin_of(fx[i], b, right, inc)
        return out

    return impl


@overload(np.vander)
def _vander(x, N=None, increasing=False):
    if not (_is_array(x) or isinstance(x, (types.BaseTuple, types.List))):
        raise TypingError("x must be an array-like")
    if not _is_none(N) and not isinstance(N, types.Integer):
        raise TypingError("Second argument N must be None or an integer")
    if _asarray_type_ndim(x) != 1:
        # NumPy's check, made when called (Numba's too).
        def impl(x, N=None, increasing=False):
            raise ValueError("x must be a one-dimensional array or sequence.")

        return impl

    # NumPy's result dtype: the input's promoted with int.
    dt = np.promote_types(_elem_dtype(x), np.int64).type
    empty = isinstance(x, types.BaseTuple) and len(x.types) == 0

    def impl(x, N=None, increasing=False):
        xs = np.empty(0, dtype=dt) if empty else np.asarray(x)
        cols = xs.size if N is None else N
        if cols < 0:
            raise ValueError("Negative dimensions are not allowed")
        out = np.empty((xs.size, cols), dtype=dt)
        for i in range(xs.size):
            p = dt(1)
            for j in range(cols):
                c = j if increasing else cols - 1 - j
                out[i, c] = p
                p = p * xs[i]
        return out

    return impl


@overload(np.geomspace)
def _geomspace(start, stop, num=50):
    if not isinstance(start, types.Number):
        raise TypingError('The argument "start" must be a number')
    if not isinstance(stop, types.Number):
        raise TypingError('The argument "stop" must be a number')
    if not isinstance(num, types.Integer):
        raise TypingError('The argument "num" must be an integer')
    if isinstance(start, types.Complex) or isinstance(stop, types.Complex):
        # At least complex128 (NumPy's result_type with None, a float64).
        dt = np.result_type(np.dtype(str(start)), np.dtype(str(stop)), np.float64).type

        def impl(start, stop, num=50):
            if start == 0 or stop == 0:
                raise ValueError("Geometric sequence cannot include zero")
            a = dt(start)
            b = dt(stop)
            # NumPy 2's rotation: the start's direction (its complex sign) taken out,
            # the sequence computed from there and turned back.
            sign = a / abs(a)
            a = a / sign
            b = b / sign
            return sign * _cgeom_between(a, b, num)

        return impl

    def impl(start, stop, num=50):
        if start == 0 or stop == 0:
            raise ValueError("Geometric sequence cannot include zero")
        # Two negative bounds: the positive sequence negated (mixed signs have no real
        # logarithm: NaN inside, as NumPy's).
        if start < 0 and stop < 0:
            return -_geom_between(-start, -stop, num)
        return _geom_between(start, stop, num)

    return impl


_LOG10E = 0.4342944819032518
_LN10 = 2.302585092994046


@register_jitable
def _clog10(z):
    # NumPy's complex log10: the natural logarithm scaled by log10(e).
    return complex(np.log(abs(z)) * _LOG10E, np.arctan2(z.imag, z.real) * _LOG10E)


@register_jitable
def _cpow10(y):
    # NumPy's `power(10, y)` for a complex y: an integral real exponent by repeated
    # multiplication (NumPy's `npy_cpow`), else exp(y * log(10)) as C's `cpow`.
    n = int(y.real)
    if y.imag == 0 and n == y.real and -100 < n < 100:
        acc = 1.0 + 0j
        p = 10.0 + 0j
        m = abs(n)
        while m > 0:
            if m & 1:
                acc = acc * p
            p = p * p
            m >>= 1
        if n < 0:
            return 1.0 / acc
        return acc
    mag = np.exp(y.real * _LN10)
    ang = y.imag * _LN10
    return complex(mag * np.cos(ang), mag * np.sin(ang))


@register_jitable
def _cgeom_between(a, b, num):
    y = np.linspace(_clog10(a), _clog10(b), num)
    out = np.empty(num, dtype=np.complex128)
    for i in range(num):
        out[i] = _cpow10(y[i])
    if num > 0:
        out[0] = a
        if num > 1:
            out[num - 1] = b
    return out


@register_jitable
def _geom_between(a, b, num):
    out = np.logspace(np.log10(a), np.log10(b), num)
    # The bounds exactly (10 ** log10(x) need not be x).
    if num > 0:
        out[0] = a
        if num > 1:
            out[num - 1] = b
    return out


@overload(np.ediff1d)
def _ediff1d(ary, to_end=None, to_begin=None):
    if not (_is_array(ary) or _is_number(ary) or isinstance(ary, (types.UniTuple, types.List))):
        raise TypingError("ary must be an array-like")
    if _is_array(ary) and isinstance(ary.dtype, types.Boolean):
        raise TypingError("Boolean dtype is unsupported (as per NumPy)")

    def impl(ary, to_end=None, to_begin=None):
        flat = np.asarray(ary).ravel()
        d = flat[1:] - flat[:-1] if flat.size > 0 else flat[:0]
        begin = np.asarray(to_begin).ravel() if to_begin is not None else d[:0]
        end = np.asarray(to_end).ravel() if to_end is not None else d[:0]
        out = np.empty(begin.size + d.size + end.size, dtype=d.dtype)
        out[:begin.size] = begin
        out[begin.size:begin.size + d.size] = d
        out[begin.size + d.size:] = end
        return out

    return impl


@overload(np.extract)
def _extract(condition, arr):
    if not (_is_array(arr) or _is_array_like(arr)):
        raise TypingError("arr must be an array-like")

    def impl(condition, arr):
        c = np.asarray(condition).ravel()
        a = np.asarray(arr).ravel()
        if a.size == 0:
            raise ValueError("Cannot extract from an empty array")
        # NumPy reads conditions past the array's end only to fail (an IndexError
        # there; Numba's ValueError) when one of them holds.
        for i in range(a.size, c.size):
            if c[i]:
                raise ValueError("condition shape inconsistent with arr shape")
        n = min(c.size, a.size)
        count = 0
        for i in range(n):
            if c[i]:
                count += 1
        out = np.empty(count, dtype=a.dtype)
        at = 0
        for i in range(n):
            if c[i]:
                out[at] = a[i]
                at += 1
        return out

    return impl


# -- counting, sets, products --------------------------------------------------------------

@overload(np.count_nonzero)
def _count_nonzero(a, axis=None):
    if not _is_array_like(a):
        raise TypingError("The argument to np.count_nonzero must be array-like")
    if not _is_none(axis):
        if not isinstance(axis, types.Integer):
            raise TypingError("The argument \"axis\" must be an integer")

        def impl(a, axis=None):
            return np.sum(np.asarray(a) != 0, axis=axis)

        return impl

    def impl(a, axis=None):
        flat = np.asarray(a).ravel()
        n = 0
        for v in flat:
            if v != 0:
                n += 1
        return n

    return impl


@register_jitable
def _in1d(ar1, ar2, assume_unique, invert):
    """Each entry of `ar1`'s membership in `ar2` (NumPy's ``_in1d`` by sorting, as Numba
    follows it; with `assume_unique` NumPy's result for repeated entries too)."""
    ar1 = np.asarray(ar1).ravel()
    ar2 = np.asarray(ar2).ravel()
    if len(ar2) < 10 * len(ar1) ** 0.145:
        # Few test values: compare against each directly.
        mask = np.full(len(ar1), invert, dtype=np.bool_)
        for v in ar2:
            if invert:
                mask &= ar1 != v
            else:
                mask |= ar1 == v
        return mask
    if not assume_unique:
        # The unique values of ar1 and where each entry went (`return_inverse`).
        order1 = np.argsort(ar1, kind="mergesort")
        aux = ar1[order1]
        first = np.empty(aux.shape, dtype=np.bool_)
        first[:1] = True
        first[1:] = aux[1:] != aux[:-1]
        ar1 = aux[first]
        inv = np.empty(first.shape, dtype=np.intp)
        inv[order1] = np.cumsum(first) - 1
        ar2 = np.unique(ar2)
    ar = np.concatenate((ar1, ar2))
    # Stable, so an entry of ar1 comes before an equal entry of ar2.
    order = np.argsort(ar, kind="mergesort")
    sar = ar[order]
    flag = np.empty(sar.size, np.bool_)
    if invert:
        flag[:-1] = sar[1:] != sar[:-1]
    else:
        flag[:-1] = sar[1:] == sar[:-1]
    flag[-1:] = invert
    ret = np.empty(ar.shape, dtype=np.bool_)
    ret[order] = flag
    if assume_unique:
        return ret[:len(ar1)]
    return ret[inv]


def _check_set_args(name, ar1, ar2, **flags):
    if not (_is_array_like(ar1) and _is_array_like(ar2)):
        raise TypingError(f"{name}: first two args must be array-like")
    for what, t in flags.items():
        if not isinstance(t, (types.Boolean, bool)):
            raise TypingError(f'{name}: Argument "{what}" must be boolean')


@register_jitable
def _operands_1d(ar1, ar2, assume_unique):
    # NumPy's set functions' operands: unique values, or raveled when assumed unique.
    a = np.asarray(ar1)
    b = np.asarray(ar2)
    if assume_unique:
        return a.ravel(), b.ravel()
    return np.unique(a), np.unique(b)


@overload(np.isin)
def _isin(element, test_elements, assume_unique=False, invert=False):
    _check_set_args("isin", element, test_elements, assume_unique=assume_unique,
                    invert=invert)

    def impl(element, test_elements, assume_unique=False, invert=False):
        e = np.asarray(element)
        return _in1d(e, test_elements, assume_unique, invert).reshape(e.shape)

    return impl


@overload(np.setdiff1d)
def _setdiff1d(ar1, ar2, assume_unique=False):
    _check_set_args("setdiff1d", ar1, ar2, assume_unique=assume_unique)

    def impl(ar1, ar2, assume_unique=False):
        a, b = _operands_1d(ar1, ar2, assume_unique)
        return a[_in1d(a, b, True, True)]

    return impl


@overload(np.setxor1d)
def _setxor1d(ar1, ar2, assume_unique=False):
    _check_set_args("setxor1d", ar1, ar2, assume_unique=assume_unique)

    def impl(ar1, ar2, assume_unique=False):
        a, b = _operands_1d(ar1, ar2, assume_unique)
        # The sorted union, less every value that occurs twice.
        aux = np.sort(np.concatenate((a, b)))
        flag = np.empty(aux.shape[0] + 1, dtype=np.bool_)
        flag[0] = True
        flag[-1] = True
        flag[1:-1] = aux[1:] != aux[:-1]
        return aux[flag[1:] & flag[:-1]]

    return impl


@overload(np.union1d)
def _union1d(ar1, ar2):
    if not (_is_array_like(ar1) and _is_array_like(ar2)):
        raise TypingError("The arguments to np.union1d must be array-like")
    kinds = [str(getattr(t, "dtype", "")) for t in (ar1, ar2)]
    if any("unichr" in k for k in kinds) and kinds[0] != kinds[1]:
        raise TypingError("For Unicode arrays, arrays must have same dtype")

    def impl(ar1, ar2):
        return np.unique(np.concatenate((np.asarray(ar1).ravel(), np.asarray(ar2).ravel())))

    return impl


@overload(np.intersect1d)
def _intersect1d(ar1, ar2, assume_unique=False):
    _check_set_args("intersect1d", ar1, ar2, assume_unique=assume_unique)

    def impl(ar1, ar2, assume_unique=False):
        a, b = _operands_1d(ar1, ar2, assume_unique)
        # The values that occur twice in the sorted union.
        aux = np.sort(np.concatenate((a, b)))
        return aux[:-1][aux[1:] == aux[:-1]]

    return impl


def _leaf_dtype(t):
    """The NumPy dtype `np.asarray` gives a value of type `t` (an array, a number or a
    possibly nested list/tuple of them)."""
    if _is_array(t):
        return np.dtype(str(t.dtype))
    if isinstance(t, (types.List, types.UniTuple, types.ListType)):
        return _leaf_dtype(t.dtype)
    if isinstance(t, types.BaseTuple):
        dts = [_leaf_dtype(x) for x in t.types]
        return np.result_type(*dts) if dts else np.dtype(np.float64)
    return np.dtype(str(t))


_NP_2_5 = tuple(int(x) for x in np.__version__.split(".")[:2]) >= (2, 5)


@overload(np.cross)
def _cross(a, b):
    if not (_is_array_like(a) and _is_array_like(b)):
        raise TypingError("Inputs must be array-like.")
    # NumPy's promotion of the two inputs (as Numba's `np.promote_types`).
    dt = np.promote_types(_leaf_dtype(a), _leaf_dtype(b)).type
    new_msgs = _NP_2_5

    def impl(a, b):
        a_ = np.asarray(a)
        b_ = np.asarray(b)
        na = a_.shape[-1]
        nb = b_.shape[-1]
        if (na != 2 and na != 3) or (nb != 2 and nb != 3):
            raise ValueError(
                "Incompatible dimensions for cross product\n(dimension must be 2 or 3)")
        if new_msgs:
            if na == 2 or nb == 2:
                raise ValueError(
                    f"Both input arrays must be (arrays of) 3-dimensional vectors, but "
                    f"they are {na} and {nb} dimensional instead.")
        if na == 2 and nb == 2:
            raise ValueError(
                "Dimensions for both inputs is 2.\n"
                "Please replace your numpy.cross(a, b) call with "
                "a call to `cross2d(a, b)` from `numba.np.extensions`.")
        # The vectors' leading dimensions broadcast together; one row per vector.
        shape = np.broadcast_shapes(a_.shape[:-1], b_.shape[:-1])
        av = np.ascontiguousarray(np.broadcast_to(a_, shape + (na,))).reshape(-1, na)
        bv = np.ascontiguousarray(np.broadcast_to(b_, shape + (nb,))).reshape(-1, nb)
        m = av.shape[0]
        out = np.empty((m, 3), dtype=dt)
        zero = dt(0)
        for i in range(m):
            a0 = dt(av[i, 0])
            a1 = dt(av[i, 1])
            a2 = dt(av[i, 2]) if na == 3 else zero
            b0 = dt(bv[i, 0])
            b1 = dt(bv[i, 1])
            b2 = dt(bv[i, 2]) if nb == 3 else zero
            out[i, 0] = a1 * b2 - a2 * b1
            out[i, 1] = a2 * b0 - a0 * b2
            out[i, 2] = a0 * b1 - a1 * b0
        return out.reshape(shape + (3,))

    return impl


@overload(np.kron)
def _kron(a, b):
    scalar = (lambda t: isinstance(t, (types.Number, types.Boolean)))
    if (scalar(a) and (_is_array(b) or scalar(b))) or (scalar(b) and _is_array(a)):
        # A scalar is a 0-d array: each element scaled.
        def impl(a, b):
            return a * b

        return impl
    if not (_is_array(a) and _is_array(b)) or a.ndim > 2 or b.ndim > 2:
        raise TypingError("np.kron() only supported on 1 and 2-D arrays")
    dt = _result_dtype(np.multiply, a.dtype, b.dtype)
    if a.ndim != b.ndim:
        # NumPy's rule: the smaller one gains leading axes of length 1.
        a_row, b_row = a.ndim == 1, b.ndim == 1

        def impl(a, b):
            a2 = np.ascontiguousarray(a).reshape((1, a.shape[0])) if a_row else a
            b2 = np.ascontiguousarray(b).reshape((1, b.shape[0])) if b_row else b
            return np.kron(a2, b2)

        return impl
    if a.ndim == 1:
        def impl(a, b):
            n, m = a.shape[0], b.shape[0]
            out = np.empty(n * m, dtype=dt)
            for i in range(n):
                for j in range(m):
                    out[i * m + j] = a[i] * b[j]
            return out

        return impl

    def impl(a, b):
        (p, q), (r, s) = a.shape, b.shape
        out = np.empty((p * r, q * s), dtype=dt)
        for i in range(p):
            for j in range(q):
                for k in range(r):
                    for m in range(s):
                        out[i * r + k, j * s + m] = a[i, j] * b[k, m]
        return out

    return impl


@overload(np.tile)
def _tile(A, reps):
    if not _is_array_like(A):
        raise TypingError("The first argument must be array-like")
    if not isinstance(reps, types.Integer):
        raise TypingError("np.tile with a tuple of repetitions is not supported by numba-rs yet")

    if _is_number(A):
        def impl(A, reps):
            return np.full(max(reps, 0), A)

        return impl

    def impl(A, reps):
        a = np.asarray(A)
        r = max(reps, 0)
        flat = a.reshape(-1, a.shape[-1])
        rows, n = flat.shape
        out = np.empty((rows, n * r), dtype=a.dtype)
        for i in range(rows):
            for t in range(r):
                for j in range(n):
                    out[i, t * n + j] = flat[i, j]
        return out.reshape(a.shape[:-1] + (n * r,))

    return impl


@overload(np.argwhere)
def _argwhere(a):
    if _is_array_like(a) and not _is_number(a) and not (_is_array(a) and a.ndim == 0):
        # NumPy's `transpose(nonzero(a))`: the indices column by column, an F-ordered
        # result.
        def impl(a):
            arr = np.asarray(a)
            idx = np.nonzero(arr)
            out = np.empty((arr.ndim, idx[0].size), dtype=np.intp)
            for d in range(arr.ndim):
                out[d] = idx[d]
            return out.T

        return impl
    if _is_array(a):
        def impl(a):
            return np.zeros((1 if a.ravel()[0] != 0 else 0, 0), dtype=np.intp)

        return impl

    # A scalar or any other value: one empty index row when it is true (Numba's).
    def impl(a):
        if a is not None and bool(a):
            return np.zeros((1, 0), dtype=np.intp)
        return np.zeros((0, 0), dtype=np.intp)

    return impl


@overload(np.logspace)
def _logspace(start, stop, num=50, endpoint=True, base=10.0):
    if not isinstance(start, types.Number):
        raise TypingError('The first argument "start" must be a number')
    if not isinstance(stop, types.Number):
        raise TypingError('The second argument "stop" must be a number')
    if not isinstance(num, (int, types.Integer)):
        raise TypingError('The third argument "num" must be an integer')

    def impl(start, stop, num=50, endpoint=True, base=10.0):
        if not endpoint:
            step = (stop - start) / num
            return np.power(base, np.linspace(start, stop - step, num))
        return np.power(base, np.linspace(start, stop, num))

    return impl


@overload(np.polyval)
def _polyval(p, x):
    if not _is_array_like(p):
        raise TypingError("The first argument must be an array-like")
    if _is_number(x):
        def impl(p, x):
            c = np.asarray(p)
            acc = x * 0
            for v in c:
                acc = acc * x + v
            return acc

        return impl

    def impl(p, x):
        c = np.asarray(p)
        xs = np.asarray(x)
        acc = np.zeros_like(xs * c[0]) if c.size > 0 else np.zeros_like(xs * 1)
        for v in c:
            acc = acc * xs + v
        return acc

    return impl


def _check_1d(*args):
    # Numba's limit for np.convolve / np.correlate.
    if any(_is_array(t) and t.ndim != 1 for t in args):
        raise TypingError("only supported on 1D arrays")


def _elem(t):
    """The element type of an array-like argument (an array's, a sequence's, a number
    itself), for asking NumPy the result dtype."""
    while isinstance(t, (types.Array, types.List, types.UniTuple)):
        t = t.dtype
    return t


@register_jitable
def _mode_window(mode, n, m):
    """The slice of the full result (length n + m - 1) that `mode` keeps, as NumPy's."""
    lo, hi = min(n, m), max(n, m)
    if mode == "full":
        return 0, n + m - 1
    if mode == "same":
        start = (lo - 1) // 2
        return start, start + hi
    if mode == "valid":
        return lo - 1, hi
    raise ValueError("mode must be one of 'valid', 'same', or 'full'")


def _check_mode(mode):
    if not (mode is None or isinstance(mode, (types.UnicodeType, types.StringLiteral,
                                              types.Omitted))):
        raise TypingError("mode must be a string")


@register_jitable
def _operands(a, v):
    x = np.asarray(a).ravel()
    y = np.asarray(v).ravel()
    if x.size == 0:
        raise ValueError("'a' cannot be empty")
    if y.size == 0:
        raise ValueError("'v' cannot be empty")
    return x, y


@overload(np.convolve)
def _convolve(a, v, mode="full"):
    if not (_is_array_like(a) and _is_array_like(v)):
        raise TypingError("The arguments must be array-likes")
    _check_1d(a, v)
    _check_mode(mode)
    dt = _result_dtype(np.convolve, _elem(a), _elem(v))

    def impl(a, v, mode="full"):
        x, y = _operands(a, v)
        n, m = x.size, y.size
        lo, hi = _mode_window(mode, n, m)
        full = np.zeros(n + m - 1, dtype=dt)
        for i in range(n):
            for j in range(m):
                full[i + j] += x[i] * y[j]
        return full[lo:hi].copy()

    return impl


@overload(np.correlate)
def _correlate(a, v, mode="valid"):
    if not (_is_array_like(a) and _is_array_like(v)):
        raise TypingError("The arguments must be array-likes")
    _check_1d(a, v)
    _check_mode(mode)
    # NumPy conjugates the second operand of complex inputs.
    item = v.dtype if _is_array(v) else v
    conj = isinstance(item, types.Complex)
    dt = _result_dtype(np.correlate, _elem(a), _elem(v))

    def impl(a, v, mode="valid"):
        x, y = _operands(a, v)
        if conj:
            y = np.conj(y)
        n, m = x.size, y.size
        lo, hi = _mode_window(mode, n, m)
        if mode == "same" and m > n:
            # NumPy correlates the longer operand first and reverses: its 'same' window
            # is centred from the other end.
            lo = (n - 1) - (n - 1) // 2
            hi = lo + m
        # c[k] = sum_j x[j + k] * y[j], k from -(m - 1) to n - 1.
        full = np.zeros(n + m - 1, dtype=dt)
        for kk in range(n + m - 1):
            k = kk - (m - 1)
            acc = full[kk]
            for j in range(max(0, -k), min(m, n - k)):
                acc += x[j + k] * y[j]
            full[kk] = acc
        return full[lo:hi].copy()

    return impl


def _tri_indices(mask):
    def typing(n, k=0, m=None):
        # Numba requires integers, where NumPy takes any number.
        _check_int(n, "n")
        _check_int(k, "k")
        if not _is_none(m):
            _check_int(m, "m")

        def impl(n, k=0, m=None):
            cols = n if m is None else m
            return np.nonzero(mask(np.ones((n, cols)), k))

        return impl

    return typing


overload(np.triu_indices)(_tri_indices(np.triu))
overload(np.tril_indices)(_tri_indices(np.tril))


@overload(np.append)
def _append(arr, values, axis=None):
    if not _is_array_like(arr):
        raise TypingError('The first argument "arr" must be array-like')
    if not _is_array_like(values):
        raise TypingError('The second argument "values" must be array-like')
    if _is_none(axis):
        def impl(arr, values, axis=None):
            return np.concatenate((np.asarray(arr).ravel(), np.asarray(values).ravel()))

        return impl
    if not isinstance(axis, types.Integer):
        raise TypingError('The third argument "axis" must be an integer')

    def impl(arr, values, axis=None):
        return np.concatenate((np.asarray(arr), np.asarray(values)), axis=axis)

    return impl


@overload(np.delete)
def _delete(arr, obj):
    # Numba's checks and messages (deletion is from the flattened array).
    if not isinstance(arr, (types.Array, types.Sequence)):
        raise TypingError("arr must be either an Array or a Sequence")
    if isinstance(obj, types.SliceType):
        def impl(arr, obj):
            a = np.asarray(arr).ravel()
            keep = np.ones(a.size, dtype=np.bool_)
            keep[obj] = False
            return a[keep]

        return impl
    if isinstance(obj, (types.Array, types.Sequence)):
        if not isinstance(obj.dtype, types.Integer):
            raise TypingError("obj should be of Integer dtype")

        def impl(arr, obj):
            a = np.asarray(arr).ravel()
            n = a.size
            keep = np.ones(n, dtype=np.bool_)
            for i in np.asarray(obj).ravel():
                if i < -n or i >= n:
                    raise IndexError("index out of bounds for the array")
                keep[i] = False
            return a[keep]

        return impl
    if not isinstance(obj, types.Integer):
        raise TypingError("obj should be of Integer dtype")

    def impl(arr, obj):
        a = np.asarray(arr).ravel()
        n = a.size
        if obj < -n or obj >= n:
            raise IndexError("obj must be less than the len(arr)")
        i = obj + n if obj < 0 else obj
        return np.concatenate((a[:i], a[i + 1:]))

    return impl


@overload(np.trim_zeros)
def _trim_zeros(filt, trim="fb"):
    if not _is_array(filt):
        raise TypingError("The first argument must be an array")
    if filt.ndim > 1:
        raise TypingError("array must be 1D")
    if not isinstance(trim, (str, types.UnicodeType, types.StringLiteral)):
        raise TypingError("The second argument must be a string")

    # A "zero" is an element equal to 0, or an empty string for string arrays (NumPy
    # stores '\0' as '').
    zero = _empty_str if isinstance(filt.dtype, (types.UnicodeCharSeq, types.CharSeq)) \
        else _zero_num

    def impl(filt, trim="fb"):
        first = 0
        last = filt.size
        if "f" in trim or "F" in trim:
            while first < last and zero(filt[first]):
                first += 1
        if "b" in trim or "B" in trim:
            while last > first and zero(filt[last - 1]):
                last -= 1
        return filt[first:last]

    return impl


@register_jitable
def _zero_num(v):
    return v == 0


@register_jitable
def _empty_str(v):
    return len(v) == 0


def _window(name, formula):
    def typing(M):
        _check_int(M, "M")

        def impl(M):
            if M < 1:
                return np.empty(0, dtype=np.float64)
            if M == 1:
                return np.ones(1, dtype=np.float64)
            # n = 1 - M, 3 - M, ..., M - 1 stepped as a float: a loop indexed by an
            # integer is vectorised with a vector cosine that is not correctly rounded
            # (values then differ from NumPy's by an ulp).
            out = np.empty(M, dtype=np.float64)
            n = 1.0 - M
            for i in range(M):
                out[i] = formula(n, M)
                n += 2.0
            return out

        return impl

    return typing


# NumPy's formulas, at n = 1 - M, 3 - M, ..., M - 1.
@register_jitable
def _hanning(n, M):
    return 0.5 + 0.5 * np.cos(np.pi * n / (M - 1))


@register_jitable
def _hamming(n, M):
    return 0.54 + 0.46 * np.cos(np.pi * n / (M - 1))


@register_jitable
def _bartlett(n, M):
    if n <= 0:
        return 1 + n / (M - 1)
    return 1 - n / (M - 1)


overload(np.hanning)(_window("hanning", _hanning))
overload(np.hamming)(_window("hamming", _hamming))


@overload(np.blackman)
def _blackman_window(M):
    _check_int(M, "M")

    def impl(M):
        if M < 1:
            return np.empty(0, dtype=np.float64)
        if M == 1:
            return np.ones(1, dtype=np.float64)
        # NumPy's formula term by term, one cosine per loop with n stepped as a float
        # (as `_window`'s): a loop body with two cosines is vectorised with a vector
        # cosine that is not correctly rounded, and the end values (near 0, a
        # cancellation) then differ from NumPy's by ~1e-17.
        out = np.empty(M, dtype=np.float64)
        n = 1.0 - M
        for i in range(M):
            out[i] = 0.42 + 0.5 * np.cos(np.pi * n / (M - 1))
            n += 2.0
        n = 1.0 - M
        for i in range(M):
            out[i] += 0.08 * np.cos(2.0 * np.pi * n / (M - 1))
            n += 2.0
        return out

    return impl


overload(np.bartlett)(_window("bartlett", _bartlett))


# NumPy's Chebyshev coefficients for the modified Bessel function I0 (Cephes'), on
# [0, 8] and (8, inf).
from numpy.lib import _function_base_impl as _np_fb  # noqa: E402

_I0A = tuple(float(c) for c in _np_fb._i0A)
_I0B = tuple(float(c) for c in _np_fb._i0B)


@register_jitable
def _chbevl(x, vals):
    b0 = vals[0]
    b1 = 0.0
    b2 = 0.0
    for i in range(1, len(vals)):
        b2 = b1
        b1 = b0
        b0 = x * b1 - b2 + vals[i]
    return 0.5 * (b0 - b2)


@register_jitable
def _i0_scalar(x):
    # NumPy's `i0` of one float.
    if x < 0:
        x = -x
    if x <= 8.0:
        return np.exp(x) * _chbevl(0.5 * x - 2.0, _I0A)
    return np.exp(x) * _chbevl(32.0 / x - 2.0, _I0B) / np.sqrt(x)


@overload(np.kaiser)
def _kaiser(M, beta):
    _check_int(M, "M")
    if not isinstance(beta, (types.Integer, types.Float)):
        raise TypingError("beta must be an integer or float")

    def impl(M, beta):
        if M < 1:
            return np.empty(0, dtype=np.float64)
        if M == 1:
            return np.ones(1, dtype=np.float64)
        # NumPy's: i0(beta * sqrt(1 - ((n - alpha) / alpha)**2)) / i0(beta).
        alpha = (M - 1) / 2.0
        b = np.float64(beta)
        t = _i0_scalar(b)
        out = np.empty(M, dtype=np.float64)
        for i in range(M):
            out[i] = _i0_scalar(b * np.sqrt(1 - ((i - alpha) / alpha) ** 2.0)) / t
        return out

    return impl


def _signed_inf(negative):
    # NumPy's `logical_and(isinf(x), signbit(x) [inverted], out)`.
    def typing(x, out=None):
        if _is_none(out):
            def impl(x, out=None):
                return np.logical_and(np.isinf(x), np.signbit(x) == negative)
        else:
            def impl(x, out=None):
                return np.logical_and(np.isinf(x), np.signbit(x) == negative, out)

        return impl

    return typing


overload(np.isneginf)(_signed_inf(True))
overload(np.isposinf)(_signed_inf(False))


@overload(np.fix)
def _fix(x):
    def impl(x):
        return np.where(x >= 0, np.floor(x), np.ceil(x))

    return impl


# -- order statistics, covariance ----------------------------------------------------------

@register_jitable
def _quantile_sorted(s, q):
    # NumPy's default ('linear') method on sorted data: the position q * (n - 1),
    # interpolated between its neighbours.
    n = s.size
    pos = q * (n - 1)
    lo = int(np.floor(pos))
    hi = min(lo + 1, n - 1)
    frac = pos - lo
    a = s[lo]
    b = s[hi]
    if frac == 0:
        return a * 1.0
    return a + (b - a) * frac


def _quantiles(name, scale, skip_nan):
    def typing(a, q):
        if not _is_array_like(a):
            raise TypingError(f"The first argument of np.{name} must be array-like")
        if not (_is_number(q) or _is_array_like(q)):
            raise TypingError(f"The second argument of np.{name} must be a number or array-like")

        def values(a):
            flat = np.asarray(a).ravel().astype(np.float64)
            if skip_nan:
                flat = flat[~np.isnan(flat)]
            return np.sort(flat)

        values = register_jitable(values)

        def one(s, qv):
            if qv < 0 or qv > scale:
                if scale == 100.0:
                    raise ValueError("Percentiles must be in the range [0, 100]")
                raise ValueError("Quantiles must be in the range [0, 1]")
            if s.size == 0:
                if skip_nan:
                    return np.nan
                raise ValueError("a must be non-empty")
            if not skip_nan and np.isnan(s[-1]):
                return np.nan
            return _quantile_sorted(s, qv / scale)

        one = register_jitable(one)
        if _is_number(q):
            def impl(a, q):
                return one(values(a), q)

            return impl

        def impl(a, q):
            s = values(a)
            qs = np.asarray(q)
            out = np.empty(qs.shape, dtype=np.float64)
            fq = qs.ravel()
            of = out.reshape(-1)
            for i in range(fq.size):
                of[i] = one(s, fq[i])
            return out

        return impl

    return typing


overload(np.percentile)(_quantiles("percentile", 100.0, False))
overload(np.quantile)(_quantiles("quantile", 1.0, False))
overload(np.nanpercentile)(_quantiles("nanpercentile", 100.0, True))
overload(np.nanquantile)(_quantiles("nanquantile", 1.0, True))


@register_jitable
def _as_rows(m):
    x = np.atleast_2d(np.asarray(m) * 1.0)
    return x


@register_jitable
def _cov_matrix(m, y, rowvar, bias, ddof):
    x = _as_rows(m)
    if not rowvar and x.shape[0] != 1:
        x = x.T.copy()
    if y is not None:
        yy = _as_rows(y)
        if not rowvar and yy.shape[0] != 1:
            yy = yy.T.copy()
        x = np.concatenate((x, yy))
    nvars, nobs = x.shape
    d = (0 if bias else 1) if ddof is None else ddof
    fact = nobs - d
    means = np.empty(nvars)
    for i in range(nvars):
        means[i] = x[i].sum() / nobs
    out = np.empty((nvars, nvars))
    for i in range(nvars):
        for j in range(i, nvars):
            acc = 0.0
            for k in range(nobs):
                acc += (x[i, k] - means[i]) * (x[j, k] - means[j])
            out[i, j] = acc / fact
            out[j, i] = out[i, j]
    return out


@overload(np.cov)
def _cov(m, y=None, rowvar=True, bias=False, ddof=None):
    if not _is_array_like(m):
        raise TypingError("m must be array-like")
    one = (_is_number(m) or (_is_array(m) and m.ndim <= 1)) and _is_none(y)
    if one:
        # One variable: NumPy's squeezed result, a 0-d array.
        def impl(m, y=None, rowvar=True, bias=False, ddof=None):
            return _cov_matrix(m, y, rowvar, bias, ddof).reshape(())

        return impl

    def impl(m, y=None, rowvar=True, bias=False, ddof=None):
        return _cov_matrix(m, y, rowvar, bias, ddof)

    return impl


@overload(np.corrcoef)
def _corrcoef(x, y=None, rowvar=True):
    if not _is_array_like(x):
        raise TypingError("x must be array-like")

    def impl(x, y=None, rowvar=True):
        c = _cov_matrix(x, y, rowvar, False, None)
        n = c.shape[0]
        out = np.empty((n, n))
        for i in range(n):
            for j in range(n):
                v = c[i, j] / np.sqrt(c[i, i] * c[j, j])
                # Clip to [-1, 1] as NumPy does against rounding.
                out[i, j] = max(-1.0, min(1.0, v))
        return out

    return impl


# The shape and selection functions load with these.
from . import _npdtfuncs, _npfuncs2, _npindex, _nplinalg, _npmanip, _npmethods, _npselect, _npshape  # noqa: E402,F401
