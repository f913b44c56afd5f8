"""NumPy's array operations in the forms the native templates leave out: ``axis=`` for
``sort argsort cumsum cumprod take``, ``dtype=`` for ``sum prod cumsum cumprod``, and
``a.transpose(1, 0, 2)``. numba-rs's typing asks for these when a call passes a keyword
the native template does not take, or arguments it rejects (numba-py's
``FALLBACK_OVERLOADS``); each works along one axis by moving it last and treating the
other axes as rows, and returns a new C-ordered array as NumPy does."""

import numpy as np

from . import types
from ._npcommon import _axis_np, _dtype_of, _gen, _is_array, _is_int, _is_none, _tup
from .errors import TypingError
from .extending import overload, overload_method, register_jitable












@register_jitable
def _rows(a, ax):
    # `a` with axis `ax` last (the others in order), as C-ordered rows.
    return np.ascontiguousarray(np.moveaxis(a, ax, -1)).reshape(-1, a.shape[ax])


@register_jitable
def _unrows(rows, a, ax):
    # Rows back into `a`'s shape with the last axis returned to `ax` (C-ordered).
    moved = np.moveaxis(a, ax, -1).shape
    return np.ascontiguousarray(np.moveaxis(rows.reshape(moved), -1, ax))


_KINDS = ("quicksort", "mergesort", "stable")


def _sorter(arg):
    what = "argsort" if arg else "sort"

    def typing(a, axis=-1, kind=None):
        # Only what the native template leaves out: it handles the last axis of every
        # sortable array, and its refusals stand (this implementation sorts rows with
        # it, so taking those cases here would recurse).
        if _is_array(a) and isinstance(a.dtype, (types.NPDatetime, types.NPTimedelta)):
            return _datetime_sorter(arg, a, axis)
        # Only dtypes the native 1-d sort takes: this implementation calls it per row, so
        # a dtype it refuses would come back here (and recurse at run time).
        if not _is_array(a) or a.ndim == 0 or not isinstance(
                a.dtype, (types.Integer, types.Float, types.Boolean)):
            raise TypingError(f"np.{what}: unsupported array {a}")
        if not (_is_none(kind) or (isinstance(kind, types.StringLiteral)
                                   and kind.literal_value in _KINDS)):
            raise TypingError(f'np.{what}: "kind" must be one of {_KINDS}')
        if not (_is_int(axis) or _is_none(axis)):
            raise TypingError(f'np.{what}: the argument "axis" must be an integer or None')
        flat = _is_none(axis)

        def impl(a, axis=-1, kind=None):
            if flat:
                src = np.ascontiguousarray(a).reshape(1, -1)
                ax = 0
            else:
                ax = _axis_np(axis, a.ndim)
                src = _rows(a, ax)
            if arg:
                out = np.empty(src.shape, dtype=np.intp)
                for r in range(src.shape[0]):
                    out[r] = np.argsort(src[r], kind="mergesort")
            else:
                out = np.empty(src.shape, dtype=a.dtype)
                for r in range(src.shape[0]):
                    out[r] = np.sort(src[r])
            if flat:
                return out.reshape(-1)
            return _unrows(out, a, ax)

        return impl

    return typing


_NAT = np.iinfo(np.int64).min


def _datetime_sorter(arg, a, axis):
    # datetime64 / timedelta64: sorted as their int64 counts, NaT (the smallest count)
    # moved to the end, where NumPy sorts it.
    if a.ndim != 1:
        raise TypingError("sorting datetime64 / timedelta64 arrays of more than one "
                          "dimension is not supported by numba-rs yet")

    def impl(a, axis=-1, kind=None):
        v = np.ascontiguousarray(a).view(np.int64)
        order = np.argsort(v, kind="mergesort")
        n = v.size
        k = 0
        while k < n and v[order[k]] == _NAT:
            k += 1
        picked = np.empty(n, dtype=np.intp)
        picked[:n - k] = order[k:]
        picked[n - k:] = order[:k]
        if arg:
            return picked
        return v[picked].view(a.dtype)

    return impl


overload(np.sort)(_sorter(False))
overload(np.argsort)(_sorter(True))
overload_method(types.Array, "argsort")(_sorter(True))


def _accumulate(name, product):
    def typing(a, axis=None, dtype=None):
        if not _is_array(a):
            raise TypingError("The argument must be an array")
        if not (_is_int(axis) or _is_none(axis)):
            raise TypingError('The argument "axis" must be an integer or None')
        if _is_none(dtype):
            # NumPy's accumulation type: small ints and bools widen to the platform int.
            dt = getattr(np, name)(np.ones(1, dtype=np.dtype(str(a.dtype)))).dtype.type
        else:
            dt = _dtype_of(dtype)
            if dt is None:
                raise TypingError('The argument "dtype" must be a NumPy dtype')
        flat = _is_none(axis)

        def impl(a, axis=None, dtype=None):
            if flat:
                src = np.ascontiguousarray(a).reshape(1, -1)
                ax = 0
            else:
                ax = _axis_np(axis, a.ndim)
                src = _rows(a, ax)
            out = np.empty(src.shape, dtype=dt)
            for r in range(src.shape[0]):
                acc = dt(1) if product else dt(0)
                for c in range(src.shape[1]):
                    if product:
                        acc = acc * dt(src[r, c])
                    else:
                        acc = acc + dt(src[r, c])
                    out[r, c] = acc
            if flat:
                return out.reshape(-1)
            return _unrows(out, a, ax)

        return impl

    return typing


for _name, _prod in (("cumsum", False), ("cumprod", True)):
    overload(getattr(np, _name))(_accumulate(_name, _prod))
    overload_method(types.Array, _name)(_accumulate(_name, _prod))


def _reduce(name, product):
    def typing(a, axis=None, dtype=None):
        if not _is_array(a):
            raise TypingError("The argument must be an array")
        if isinstance(axis, types.BaseTuple):
            return _reduce_axes(name, product, a, axis, dtype)
        dt = _dtype_of(dtype)
        if dt is None:
            raise TypingError('The argument "dtype" must be a NumPy dtype')
        if not (_is_int(axis) or _is_none(axis)):
            raise TypingError('The argument "axis" must be an integer or None')
        flat = _is_none(axis)
        # The whole array, or a 1-d one along its axis, reduces to a number (Numba's).
        scalar = flat or a.ndim == 1

        def impl(a, axis=None, dtype=None):
            if flat:
                src = np.ascontiguousarray(a).reshape(1, -1)
                ax = 0
            else:
                ax = _axis_np(axis, a.ndim)
                src = _rows(a, ax)
            out = np.empty(src.shape[0], dtype=dt)
            for r in range(src.shape[0]):
                acc = dt(1) if product else dt(0)
                for c in range(src.shape[1]):
                    if product:
                        acc = acc * dt(src[r, c])
                    else:
                        acc = acc + dt(src[r, c])
                out[r] = acc
            if scalar:
                return out[0]
            return out.reshape(np.moveaxis(a, ax, -1).shape[:-1])

        return impl

    return typing


_AXIS_ERROR = np.exceptions.AxisError


@register_jitable
def _norm_axes(axis, ndim):
    # NumPy's `normalize_axis_tuple`: every axis checked (AxisError) before duplicates.
    k = len(axis)
    out = np.empty(k, dtype=np.intp)
    for i in range(k):
        v = axis[i]
        if v < -ndim or v >= ndim:
            raise _AXIS_ERROR(f"axis {v} is out of bounds for array of dimension {ndim}")
        out[i] = v + ndim if v < 0 else v
    for i in range(k):
        for j in range(i):
            if out[i] == out[j]:
                raise ValueError("duplicate value in 'axis'")
    return out


def _reduce_axes(name, product, a, axis, dtype):
    """``a.sum(axis=(0, 2))``: the reduced axes moved last and summed as rows; the result
    has the other axes in order (a number when every axis is reduced)."""
    if not all(_is_int(t) for t in axis.types):
        raise TypingError(f"NumPy {name} only supports integer axis value or tuple of integers")
    n, k = a.ndim, len(axis.types)
    if k > n:
        # More axes than dimensions: an axis out of bounds or a duplicate, raised at run
        # time as NumPy does.
        def impl(a, axis=None, dtype=None):
            _norm_axes(axis, n)
            raise ValueError("duplicate value in 'axis'")

        return impl
    if _is_none(dtype):
        sample = np.ones((1,) * n, dtype=np.dtype(str(a.dtype)))
        dt = getattr(np, name)(sample, axis=tuple(range(k))).dtype.type
    else:
        dt = _dtype_of(dtype)
        if dt is None:
            raise TypingError('The argument "dtype" must be a NumPy dtype')
    if k == 0:
        # No axis reduced: a copy in the result dtype, keeping an F-ordered array's
        # order (NumPy's 'K').
        if a.layout == "F":
            def impl(a, axis=None, dtype=None):
                return a.T.astype(dt).T
        else:
            def impl(a, axis=None, dtype=None):
                return a.astype(dt)

        return impl
    m = n - k
    src = f"""
def impl(a, axis=None, dtype=None):
    ax = _norm_axes(axis, {n})
    keep = np.ones({n}, dtype=np.bool_)
    for i in range({k}):
        keep[ax[i]] = False
    perm = np.empty({n}, dtype=np.intp)
    j = 0
    for i in range({n}):
        if keep[i]:
            perm[j] = i
            j += 1
    for i in range({k}):
        perm[{m} + i] = ax[i]
    b = np.transpose(a, {_tup(n, "perm[{i}]")})
    cols = 1
    for i in range({m}, {n}):
        cols *= b.shape[i]
    rows = b.size // cols if cols else 1
    for i in range({m}):
        rows = rows if cols else rows * b.shape[i]
    src = np.ascontiguousarray(b).reshape(rows, cols)
    out = np.empty(rows, dtype=dt)
    for r in range(rows):
        acc = dt({1 if product else 0})
        for c in range(cols):
            acc = acc {"*" if product else "+"} dt(src[r, c])
        out[r] = acc
    {"return out[0]" if m == 0 else f"return out.reshape({_tup(m, 'b.shape[{i}]')})"}
"""
    return _gen("impl", src, dt=dt, _norm_axes=_norm_axes)


for _name, _prod in (("sum", False), ("prod", True)):
    overload(getattr(np, _name))(_reduce(_name, _prod))
    overload_method(types.Array, _name)(_reduce(_name, _prod))


@overload_method(types.Array, "transpose")
def _transpose(a, *axes):
    if len(axes) == 1 and _is_none(axes[0]):
        # `a.transpose(None)`: the axes reversed, as with no argument.
        def impl(a, *axes):
            return np.transpose(a)

        return impl
    if len(axes) == 1 and isinstance(axes[0], types.BaseTuple):

        def impl(a, *axes):
            return np.transpose(a, axes[0])

        return impl
    if len(axes) == a.ndim and all(_is_int(t) for t in axes):

        def impl(a, *axes):
            return np.transpose(a, axes)

        return impl
    raise TypingError("axes don't match array")


def _int_seq(t):
    """Integers, or a (nested) list / tuple of them."""
    if _is_int(t):
        return True
    if isinstance(t, (types.List, types.UniTuple)):
        return _int_seq(t.dtype)
    if isinstance(t, types.Tuple):
        return all(_int_seq(x) for x in t.types)
    return False


def _take(a, indices, axis=None):
    if not _is_array(a):
        raise TypingError("The first argument must be an array")
    if _is_none(axis):
        # The flattened array's items (what the native `take` does; not called here, so
        # that a refusal of it cannot come back to this overload).
        if _is_int(indices):

            def impl(a, indices, axis=None):
                flat = np.ascontiguousarray(a).reshape(-1)
                n = flat.size
                if indices < -n or indices >= n:
                    raise IndexError("index out of bounds")
                return flat[indices]

            return impl
        if not ((_is_array(indices) and _is_int(indices.dtype)) or _int_seq(indices)):
            raise TypingError('The argument "indices" must be integers')

        def impl(a, indices, axis=None):
            flat = np.ascontiguousarray(a).reshape(-1)
            idx = np.asarray(indices)
            out = np.empty(idx.shape, dtype=a.dtype)
            of = out.reshape(-1)
            ix = idx.ravel()
            n = flat.size
            for k in range(ix.size):
                i = ix[k]
                if i < -n or i >= n:
                    raise IndexError("index out of bounds")
                of[k] = flat[i]
            return out

        return impl
    if not _is_int(axis):
        raise TypingError('The argument "axis" must be an integer or None')
    if not ((_is_array(indices) and _is_int(indices.dtype)) or _int_seq(indices)):
        raise TypingError('The argument "indices" must be integers')
    scalar = _is_int(indices)
    if scalar and a.ndim == 1:

        def impl(a, indices, axis=None):
            _axis_np(axis, 1)
            n = a.shape[0]
            if indices < -n or indices >= n:
                raise IndexError("index out of bounds")
            return a[indices]

        return impl

    def impl(a, indices, axis=None):
        ax = _axis_np(axis, a.ndim)
        moved = np.moveaxis(a, ax, 0)
        n = moved.shape[0]
        if scalar:
            i = indices
            if i < -n or i >= n:
                raise IndexError("index out of bounds")
            return np.ascontiguousarray(moved[i if i >= 0 else i + n])
        idx = np.asarray(indices).ravel()
        picked = np.empty((idx.size,) + moved.shape[1:], dtype=a.dtype)
        for k in range(idx.size):
            i = idx[k]
            if i < -n or i >= n:
                raise IndexError("index out of bounds")
            picked[k] = moved[i if i >= 0 else i + n]
        return np.ascontiguousarray(np.moveaxis(picked, 0, ax))

    return impl


overload(np.take)(_take)
overload_method(types.Array, "take")(_take)
