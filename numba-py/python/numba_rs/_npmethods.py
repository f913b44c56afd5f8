"""Array functions and methods in the forms numba-rs's native templates leave out
(numba-py's ``FALLBACK_OVERLOADS``): ``out=`` arrays, array-like arguments and Numba's
argument errors, for ``np.clip``/``a.clip``, ``np.where``, ``np.round``/``np.around``,
``np.real``/``np.imag`` of real arrays, ``np.copy`` of array-likes, ``np.frombuffer``,
``np.nonzero`` of 0-d arrays, ``np.ascontiguousarray``/``np.asfortranarray`` of numbers
and ``np.transpose`` of array-likes."""

import numpy as np

from . import types
from ._npcommon import _can_asarray, _dtype_of, _is_array, _is_none, _is_number
from ._npbuffer import view
from .errors import TypingError
from .extending import overload, overload_method, register_jitable


# --- np.clip / a.clip -----------------------------------------------------------------

@register_jitable
def _clip_out(shape, out, dt):
    # NumPy never broadcasts `out`: its shape must be the result's.
    if out is None:
        return np.empty(shape, dtype=dt)
    if out.shape != shape:
        raise ValueError("clip: the shape of the 'out' array does not match the shape "
                         "of the result")
    return out


def _clip(a, a_min, a_max, out=None):
    if not _can_asarray(a):
        raise TypingError('The argument "a" must be array-like')
    if not _is_none(a_min) and not _can_asarray(a_min):
        raise TypingError('The argument "a_min" must be a number or an array-like')
    if not _is_none(a_max) and not _can_asarray(a_max):
        raise TypingError('The argument "a_max" must be a number or an array-like')
    if not (_is_array(out) or _is_none(out)):
        raise TypingError('The argument "out" must be an array if it is provided')
    nd = max(getattr(t, "ndim", 0) for t in (a, a_min, a_max))
    if _is_array(out) and out.ndim != nd:
        raise TypingError('The argument "out" must have the same number of dimensions '
                          'as the result')
    has_min, has_max = not _is_none(a_min), not _is_none(a_max)
    if not (has_min or has_max):
        def impl(a, a_min, a_max, out=None):
            raise ValueError("array_clip: must set either max or min")

        return impl
    # The result has the input's dtype, as Numba's (NumPy's own for scalar bounds of the
    # same kind).
    dt = np.dtype(str(a.dtype if _is_array(a) else a)).type

    def impl(a, a_min, a_max, out=None):
        arr = np.asarray(a)
        lo = np.asarray(a_min) if has_min else arr
        hi = np.asarray(a_max) if has_max else arr
        ab, lob, hib = np.broadcast_arrays(arr, lo, hi)
        ret = _clip_out(ab.shape, out, dt)
        for idx in np.ndindex(ab.shape):
            v = ab[idx]
            if has_min:
                v = np.maximum(v, lob[idx])
            if has_max:
                v = np.minimum(v, hib[idx])
            ret[idx] = v
        return ret

    return impl


@overload(np.clip)
def _np_clip(a, a_min, a_max, out=None):
    kern = register_jitable(_clip(a, a_min, a_max, out))

    def impl(a, a_min, a_max, out=None):
        return kern(a, a_min, a_max, out)

    return impl


@overload_method(types.Array, "clip")
def _array_clip(a, a_min=None, a_max=None, out=None):
    kern = register_jitable(_clip(a, a_min, a_max, out))

    def impl(a, a_min=None, a_max=None, out=None):
        return kern(a, a_min, a_max, out)

    return impl


# --- np.nonzero / a.nonzero of 0-d arrays ---------------------------------------------

def _nonzero(a):
    if _is_array(a) and a.ndim == 0:
        raise TypingError("Calling nonzero on 0d arrays is not allowed. Use "
                          "np.atleast_1d(scalar).nonzero() instead.")
    raise TypingError(f"np.nonzero: unsupported argument {a}")


overload(np.nonzero)(_nonzero)
overload_method(types.Array, "nonzero")(_nonzero)


# --- np.where -------------------------------------------------------------------------

@overload(np.where)
def _where(condition, *xy):
    # `*xy` tells `np.where(c)` from `np.where(c, None, None)`.
    if not _can_asarray(condition):
        raise TypingError('The argument "condition" must be array-like')
    if len(xy) == 0:
        if _is_number(condition) or (_is_array(condition) and condition.ndim == 0):
            raise TypingError("Calling nonzero on 0d arrays is not allowed. Use "
                              "np.atleast_1d(scalar).nonzero() instead.")

        def impl(condition, *xy):
            return np.asarray(condition).nonzero()

        return impl
    if len(xy) != 2:
        raise TypingError("np.where takes a condition, or a condition, x and y")
    x, y = xy
    if _is_none(x) or _is_none(y):
        raise TypingError('Argument "x" or "y" cannot be None')
    for arg, name in ((x, "x"), (y, "y")):
        if not _can_asarray(arg):
            raise TypingError(f'The argument "{name}" must be array-like if provided')
    if _is_array(condition) or _is_array(x) or _is_array(y):
        if all(_is_array(t) or _is_number(t) for t in (condition, x, y)):
            raise TypingError(f"np.where: unsupported arguments {condition}, {x}, {y}")

    def impl(condition, *xy):
        return np.where(np.asarray(condition), np.asarray(xy[0]), np.asarray(xy[1]))

    return impl


# --- np.round / np.around -------------------------------------------------------------

def _round(a, decimals=0, out=None):
    if not _can_asarray(a):
        raise TypingError('The argument "a" must be array-like')
    if not (_is_array(out) or _is_none(out)):
        raise TypingError('The argument "out" must be an array if it is provided')
    if _is_none(out):
        raise TypingError(f"np.round: unsupported arguments {a}, {decimals}")
    if _is_array(a):
        def impl(a, decimals=0, out=None):
            if a.shape != out.shape:
                raise ValueError("invalid output shape")
            for idx in np.ndindex(a.shape):
                out[idx] = np.round(a[idx], decimals)
            return out

        return impl

    def impl(a, decimals=0, out=None):
        out[0] = np.round(a, decimals)
        return out

    return impl


overload(np.round)(_round)
overload(np.around)(_round)


# --- np.real / np.imag of real values -------------------------------------------------

@overload(np.real)
def _real(val):
    if _is_array(val) and not isinstance(val.dtype, types.Complex):
        def impl(val):
            return val

        return impl
    raise TypingError(f"np.real: unsupported argument {val}")


@overload(np.imag)
def _imag(val):
    if _is_array(val) and not isinstance(val.dtype, types.Complex):
        def impl(val):
            return np.zeros_like(val)

        return impl
    raise TypingError(f"np.imag: unsupported argument {val}")


# --- np.copy of array-likes -----------------------------------------------------------

@overload(np.copy)
def _copy(a):
    if not _can_asarray(a) or _is_array(a):
        raise TypingError('The argument "a" must be array-like')

    def impl(a):
        return np.asarray(a).copy()

    return impl


# --- np.frombuffer --------------------------------------------------------------------

@register_jitable
def _array_bytes(buffer):
    return buffer.reshape(-1).view(np.uint8)


@register_jitable
def _bytes_view(buffer):
    return view(buffer)


def _frombuffer_dtype(dtype):
    if _is_none(dtype):
        return np.float64
    dt = _dtype_of(dtype)
    if dt is not None:
        return dt
    if isinstance(dtype, types.UnicodeType):
        raise TypingError("If np.frombuffer dtype is a string it must be a string constant.")
    raise TypingError(f'The argument "dtype" must be a data-type, not {dtype}')


@overload(np.frombuffer)
def _frombuffer(buffer, dtype=None, count=-1, offset=0):
    if not isinstance(buffer, types.Buffer):
        raise TypingError(f'Argument "buffer" must be buffer-like, not {buffer}')
    dt = _frombuffer_dtype(dtype)
    size = np.dtype(dt).itemsize
    if _is_array(buffer):
        as_bytes = _array_bytes
    else:
        # A `bytes` value is its own data model in compiled code: a read-only view of
        # its memory, as NumPy's of `bytes` is.
        as_bytes = _bytes_view

    def impl(buffer, dtype=None, count=-1, offset=0):
        raw = as_bytes(buffer)
        n = raw.size
        if offset < 0 or offset > n:
            raise ValueError("offset must be non-negative and no greater than buffer length")
        left = n - offset
        if count < 0:
            if left % size != 0:
                raise ValueError("buffer size must be a multiple of element size")
            k = left // size
        else:
            if count * size > left:
                raise ValueError("buffer is smaller than requested size")
            k = count
        return raw[offset:offset + k * size].view(dt)

    return impl


# --- np.ascontiguousarray / np.asfortranarray of numbers ------------------------------

def _as_layout(a):
    # Arrays are the native templates'; a number is a one-element array (NumPy's
    # `ndim >= 1`).
    if not _is_number(a):
        raise TypingError('The argument "a" must be array-like')

    def impl(a):
        return np.array([a])

    return impl


overload(np.ascontiguousarray)(_as_layout)
overload(np.asfortranarray)(_as_layout)


# --- np.transpose of what is not an array ---------------------------------------------

@overload(np.transpose)
def _transpose(a, axes=None):
    # Arrays are the native template's; Numba refuses tuples by name.
    if isinstance(a, types.BaseTuple):
        raise TypingError("np.transpose does not accept tuples")
    if _is_number(a) or isinstance(a, types.List):
        def impl(a, axes=None):
            return np.transpose(np.asarray(a), axes)

        return impl
    raise TypingError(f'The argument "a" must be array-like, not {a}')
