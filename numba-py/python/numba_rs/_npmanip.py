"""Array-manipulation functions for the argument forms numba-rs's native templates leave
out (numba-py's ``FALLBACK_OVERLOADS``): array-like arguments (tuples, lists, scalars)
and NumPy's and Numba's argument errors, plus two functions the native templates do not
type at all.

- ``atleast_1d atleast_2d atleast_3d``: several arguments (a tuple of results) and
  array-likes;
- ``expand_dims``: Numba's argument errors;
- ``shape size ravel``: array-likes (scalars, tuples, lists), and Numba's errors;
- ``flatnonzero``: array-likes, and Numba's truth-value rule for anything else;
- ``fill_diagonal``: NumPy's semantics (``wrap=``, a scalar or a sequence of values) with
  Numba's checks that the values fit the array's dtype;
- ``lib.stride_tricks.sliding_window_view``: a writeable view, as Numba's.
"""

import numpy as np

from . import types
from ._npcommon import (_axis, _can_asarray, _gen, _int_tuple, _is_array, _is_int, _is_none,
                        _is_number, _tup)
from .errors import TypingError
from .extending import overload, register_jitable


def _asarray_ndim(t):
    """The rank of ``np.asarray`` of a value of type `t` (one that `_can_asarray`)."""
    if _is_array(t):
        return t.ndim
    if isinstance(t, types.BaseTuple):
        return 1 + (_asarray_ndim(t.types[0]) if len(t.types) else 0)
    if isinstance(t, types.List):
        return 1 + _asarray_ndim(t.dtype)
    return 0


# ---------------------------------------------------------------------------------
# atleast_1d / atleast_2d / atleast_3d


def _atleast(func):
    def typing(*args):
        for t in args:
            if not _can_asarray(t):
                raise TypingError(f"np.{func.__name__} takes array-like arguments, got {t}")
        # Arrays go to the native single-argument form as they are (it keeps their
        # strides as NumPy does); array-likes become arrays first.
        parts = [f"np.{func.__name__}(" + (f"args[{i}]" if _is_array(t) else
                                          f"np.asarray(args[{i}])") + ")"
                 for i, t in enumerate(args)]
        if len(args) == 1:
            if _is_array(args[0]):
                return None  # the native template's, had it taken it
            body = parts[0]
        else:
            body = "(" + "".join(p + ", " for p in parts) + ")"
        return _gen("impl", f"def impl(*args):\n    return {body}\n")

    typing.__name__ = f"_{func.__name__}"
    return typing


for _f in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
    overload(_f)(_atleast(_f))


# ---------------------------------------------------------------------------------
# expand_dims, shape, size


@overload(np.expand_dims)
def _expand_dims(a, axis):
    # Reached only for arguments the native template refuses: its errors, as Numba's.
    if not _is_array(a):
        raise TypingError(f'First argument "a" must be an array. Got {a}')
    if not _is_int(axis):
        raise TypingError(f'Argument "axis" must be an integer. Got {axis}')
    return None


@overload(np.shape)
def _shape(a):
    if not _can_asarray(a):
        raise TypingError("The argument to np.shape must be array-like")

    def impl(a):
        return np.asarray(a).shape

    return impl


@overload(np.size)
def _size(a):
    if not _can_asarray(a):
        raise TypingError("The argument to np.size must be array-like")

    def impl(a):
        return np.asarray(a).size

    return impl


@overload(np.ravel)
def _ravel(a):
    # Arrays are the native template's; array-likes become arrays first.
    if _is_array(a) or not _can_asarray(a):
        return None

    def impl(a):
        return np.asarray(a).ravel()

    return impl


# ---------------------------------------------------------------------------------
# flatnonzero


@overload(np.flatnonzero)
def _flatnonzero(a):
    if isinstance(a, types.BaseTuple) and len(a.types) == 0:
        # `()` holds nothing (and has no element type to make an array of).
        def impl(a):
            return np.zeros(0, dtype=np.intp)

        return impl
    if _can_asarray(a):

        def impl(a):
            return np.nonzero(np.asarray(a).ravel())[0]

        return impl

    # Anything else (None, a string) is one value, nonzero when truthy: what NumPy's
    # 0-d object array of it gives (Numba's rule).
    def impl(a):
        return np.zeros(1 if a is not None and bool(a) else 0, dtype=np.intp)

    return impl


# ---------------------------------------------------------------------------------
# fill_diagonal


@register_jitable
def _diagonal_walk(a, wrap):
    # (end, step) of the diagonal in `a`'s C-order flat positions, as NumPy's.
    if a.ndim == 2:
        rows, cols = a.shape[0], a.shape[1]
        end = cols * rows if wrap else cols * min(rows, cols)
        return end, cols + 1
    n = a.shape[0]
    for d in a.shape:
        if d != n:
            raise ValueError("All dimensions of input must be of equal length")
    step = 1
    acc = 1
    for k in range(a.ndim - 1):
        acc *= a.shape[k]
        step += acc
    return a.size, step


@register_jitable
def _conform_check(v, finite_only, lo, hi):
    # Numba's guard against values that cannot be cast safely into `a`'s dtype: integer
    # dtypes take no inf/nan, and finite values must be in range.
    if not np.isfinite(v):
        if finite_only:
            raise ValueError("Unable to safely conform val to a.dtype")
        return
    if v < lo or v > hi:
        raise ValueError("Unable to safely conform val to a.dtype")


def _conform_bounds(dtype):
    """(checked, finite_only, lo, hi) for values written into an array of `dtype`:
    Numba checks integer and float dtypes only."""
    if isinstance(dtype, types.Boolean) or not isinstance(dtype, (types.Integer, types.Float)):
        return False, False, 0.0, 0.0
    nd = np.dtype(str(dtype))
    if isinstance(dtype, types.Integer):
        info = np.iinfo(nd)
        # As floats: comparisons with float values need no mixed-sign integer rules.
        return True, True, float(info.min), float(info.max)
    info = np.finfo(nd)
    return True, False, float(info.min), float(info.max)


@overload(np.fill_diagonal)
def _fill_diagonal(a, val, wrap=False):
    if not _is_array(a):
        raise TypingError('The first argument "a" must be an array')
    if a.ndim < 2:
        raise TypingError(f"The first argument must be at least 2-D (found {a.ndim}-D)")
    checked, finite_only, lo, hi = _conform_bounds(a.dtype)
    if _is_number(val) and not isinstance(val, types.Complex):

        def impl(a, val, wrap=False):
            if checked:
                _conform_check(val, finite_only, lo, hi)
            end, step = _diagonal_walk(a, wrap)
            for i in range(0, end, step):
                a.flat[i] = val

        return impl
    if isinstance(val, (types.BaseTuple, types.List)) or _is_array(val):

        def impl(a, val, wrap=False):
            vals = np.asarray(val).ravel()
            if checked:
                for v in vals:
                    _conform_check(v, finite_only, lo, hi)
            end, step = _diagonal_walk(a, wrap)
            if vals.size == 0:
                return
            k = 0
            for i in range(0, end, step):
                a.flat[i] = vals[k]
                k = (k + 1) % vals.size

        return impl
    raise TypingError('The argument "val" must be a number or a sequence of numbers')


# ---------------------------------------------------------------------------------
# sliding_window_view


def _sliding_window_src(ndim, nwin, ws_expr, axis_expr, naxes):
    """Source of the view: `nwin` windowed axes appended to `ndim`, each trimming the
    axis it windows (one axis may be windowed more than once, as NumPy allows). The
    loops over the (static) tuples are unrolled: their entries may differ in type."""
    nout = ndim + nwin
    msg = "sliding_window_view: Argument axis out of bounds for dimensions of the array"
    lines = ["def impl(x, window_shape, axis=None):",
             f"    ws = {ws_expr}",
             f"    axes = {axis_expr}",
             f"    norm = np.empty({naxes}, dtype=np.intp)"]
    # Numba's order: the axes are checked before their number is.
    lines += [f"    norm[{q}] = _axis(axes[{q}], {ndim}, '{msg}')" for q in range(naxes)]
    if nwin != naxes:
        lines.append("    raise ValueError('Must provide matching length window_shape and axis')")
    lines += [f"    shape = np.empty({nout}, dtype=np.intp)",
              f"    strides = np.empty({nout}, dtype=np.intp)",
              f"    for k in range({ndim}):",
              "        shape[k] = x.shape[k]",
              "        strides[k] = x.strides[k]"]
    for q in range(nwin if nwin == naxes else 0):
        lines += [f"    shape[{ndim + q}] = _trim(shape, norm[{q}], ws[{q}])",
                  f"    strides[{ndim + q}] = x.strides[norm[{q}]]"]
    lines.append(f"    return as_strided(x, {_tup(nout, 'shape[{i}]')}, "
                 f"{_tup(nout, 'strides[{i}]')})")
    return "\n".join(lines) + "\n"


@register_jitable
def _trim(shape, ax, dim):
    # Axis `ax` windowed by `dim`: the positions a window starts at; `dim` itself is the
    # new axis's length.
    if dim < 0:
        raise ValueError("`window_shape` cannot contain negative values")
    if shape[ax] < dim:
        raise ValueError("window_shape cannot be larger than input array shape")
    shape[ax] = shape[ax] - dim + 1
    return dim


@overload(np.lib.stride_tricks.sliding_window_view)
def _sliding_window_view(x, window_shape, axis=None):
    if not _is_array(x):
        raise TypingError('The first argument "x" must be an array')
    if _is_int(window_shape):
        nwin, ws_expr = 1, "(window_shape,)"
    elif _int_tuple(window_shape) is not None:
        nwin, ws_expr = _int_tuple(window_shape), "window_shape"
    else:
        raise TypingError("window_shape must be an integer or tuple of integers")
    ndim = x.ndim
    if _is_none(axis):
        # Every axis, in order.
        naxes, axis_expr = ndim, _tup(ndim, "{i}")
    elif _is_int(axis):
        naxes, axis_expr = 1, "(axis,)"
    elif _int_tuple(axis) is not None:
        naxes, axis_expr = _int_tuple(axis), "axis"
    else:
        raise TypingError("axis must be None, an integer or tuple of integers")
    src = _sliding_window_src(ndim, nwin, ws_expr, axis_expr, naxes)
    return _gen("impl", src, _axis=_axis, _trim=_trim)
