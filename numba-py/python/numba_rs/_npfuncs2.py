"""More NumPy functions as overloads (loaded with ``_npfuncs``), following NumPy's
definitions and Numba's signatures and error messages:

``bincount flip fliplr flipud roll asarray asarray_chkfinite diagflat indices iscomplex
isreal iscomplexobj isrealobj isscalar unwrap vsplit hsplit dsplit tril_indices_from
triu_indices_from``.

``bincount roll flip fliplr flipud asarray`` are typed natively for arrays; these
overloads serve the arguments the native templates reject (numba-py's
``FALLBACK_OVERLOADS``): lists, tuples, scalars, and Numba's errors for the rest.
"""

import numpy as np

from . import types
from ._npcommon import _can_asarray, _is_array, _is_int, _is_none, _is_number
from .errors import TypingError
from .extending import overload, register_jitable


def _is_seq(t):
    return isinstance(t, (types.List, types.UniTuple, types.ListType))


# -- bincount ---------------------------------------------------------------------------


def _check_1d(t):
    # Numba's `validate_1d_array_like`.
    if _is_array(t):
        if t.ndim != 1:
            raise TypingError("bincount(): input should have dimension 1")
    elif not _is_seq(t):
        raise TypingError("bincount(): input should be an array or sequence")


@overload(np.bincount)
def _bincount(a, weights=None, minlength=0):
    _check_1d(a)
    if not isinstance(a.dtype, types.Integer):
        return None
    if not _is_int(minlength):
        raise TypingError("minlength must be an integer")
    weighted = not _is_none(weights)
    if weighted:
        _check_1d(weights)
    # Weights are counted in float64 (NumPy's C implementation converts them).
    out_dt = np.float64 if weighted else np.intp

    def impl(a, weights=None, minlength=0):
        if weighted and len(a) != len(weights):
            raise ValueError("bincount(): weights and list don't have the same length")
        if minlength < 0:
            raise ValueError("'minlength' must not be negative")
        n = len(a)
        top = -1
        for i in range(n):
            if a[i] < 0:
                raise ValueError("bincount(): first argument must be non-negative")
            top = max(top, a[i])
        out = np.zeros(max(top + 1, minlength), out_dt)
        for i in range(n):
            if weighted:
                out[a[i]] += weights[i]
            else:
                out[a[i]] += 1
        return out

    return impl


# -- flips and roll ----------------------------------------------------------------------


@overload(np.flip)
def _flip(m):
    if not _is_array(m):
        raise TypingError(f"Cannot np.flip on {m} type")
    if m.ndim != 0:
        return None

    # Nothing to reverse in a 0-d array: NumPy's view of it.
    def impl(m):
        return m[...]

    return impl


def _asarray_type_ndim(t):
    """The rank `np.asarray` gives a value of type `t`."""
    if _is_array(t):
        return t.ndim
    if isinstance(t, (types.List, types.UniTuple, types.ListType)):
        return 1 + _asarray_type_ndim(t.dtype)
    if isinstance(t, types.BaseTuple):
        return 1 + (_asarray_type_ndim(t.types[0]) if len(t.types) else 0)
    return 0


def _flip_axis(name, axis):
    def typing(m):
        if not _can_asarray(m) or isinstance(m, types.StringLiteral):
            raise TypingError(f"Cannot np.{name} on {m} type")
        nd = _asarray_type_ndim(m)
        if nd < axis + 1:
            # Numba's error: its `A[::, ::-1, ...]` cannot index a smaller array.
            kind = types.Array(types.int64, nd, "C") if not _is_array(m) else m
            raise TypingError(f"cannot index array {kind} with {axis + 1} indices")
        if axis == 0:
            def impl(m):
                return np.asarray(m)[::-1, ...]
        else:
            def impl(m):
                return np.asarray(m)[:, ::-1, ...]

        return impl

    typing.__name__ = f"_{name}"
    return typing


overload(np.fliplr)(_flip_axis("fliplr", 1))
overload(np.flipud)(_flip_axis("flipud", 0))


@overload(np.roll)
def _roll(a, shift):
    if not _is_int(shift):
        raise TypingError("shift must be an integer")
    if not _can_asarray(a):
        raise TypingError('The first argument "a" must be array-like')

    def impl(a, shift):
        arr = np.asarray(a)
        out = np.empty(arr.shape, dtype=arr.dtype)
        n = arr.size
        if n == 0:
            return out
        src = arr.ravel()
        dst = out.reshape(-1)
        s = int(shift) % n
        for i in range(n):
            dst[(i + s) % n] = src[i]
        return out

    return impl


# -- asarray ------------------------------------------------------------------------------


def _numpy_dtype(t):
    """The NumPy dtype a `dtype=` argument of type `t` names, or None."""
    if isinstance(t, types.NumberClass):
        t = t.instance_type
    elif isinstance(t, types.DType):
        t = t.dtype
    if not isinstance(t, (types.Number, types.Boolean)):
        return None
    return np.dtype(str(t))


def _rows_of(t):
    """A sequence of equal-length number sequences (``[(1, 2), (3, 4)]``): the item
    dtype, else None."""
    if not isinstance(t, (types.List, types.UniTuple)):
        return None
    inner = t.dtype
    if isinstance(inner, (types.List, types.UniTuple)) and _is_number(inner.dtype):
        return inner.dtype
    return None


@overload(np.asarray)
def _asarray(a, dtype=None):
    if isinstance(a, types.ListType) and not _is_number(a.dtype):
        raise TypingError("asarray support for List is limited to Boolean and Number types")
    want = None if _is_none(dtype) else _numpy_dtype(dtype)
    if not _is_none(dtype) and want is None:
        return None
    if isinstance(a, types.BaseTuple) and len(a.types) == 0:
        # NumPy's `asarray(())`: an empty float64 array.
        dt = want.type if want is not None else np.float64

        def impl(a, dtype=None):
            return np.empty(0, dtype=dt)

        return impl
    item = _rows_of(a)
    if item is None:
        return None
    dt = (want if want is not None else np.dtype(str(item))).type

    # A list of tuples or a tuple of lists: one row per entry, all of one length.
    def impl(a, dtype=None):
        n = len(a)
        m = len(a[0]) if n > 0 else 0
        out = np.empty((n, m), dtype=dt)
        for i in range(n):
            row = a[i]
            if len(row) != m:
                raise ValueError("setting an array element with a sequence. The "
                                 "requested array has an inhomogeneous shape")
            for j in range(m):
                out[i, j] = row[j]
        return out

    return impl


@overload(np.asarray_chkfinite)
def _asarray_chkfinite(a, dtype=None):
    if not isinstance(a, (types.Array, types.Sequence, types.BaseTuple)):
        raise TypingError("The argument to np.asarray_chkfinite must be array-like")
    if not _is_none(dtype) and _numpy_dtype(dtype) is None:
        raise TypingError("dtype must be a valid Numpy dtype")
    keep = _is_none(dtype)

    def impl(a, dtype=None):
        arr = np.asarray(a) if keep else np.asarray(a).astype(dtype)
        for v in arr.ravel():
            if not np.isfinite(v):
                raise ValueError("array must not contain infs or NaNs")
        return arr

    return impl


# -- construction -------------------------------------------------------------------------


@overload(np.diagflat)
def _diagflat(v, k=0):
    if not _can_asarray(v):
        raise TypingError('The argument "v" must be array-like')
    if not isinstance(k, types.Integer):
        raise TypingError('The argument "k" must be an integer')

    def impl(v, k=0):
        flat = np.asarray(v).ravel()
        s = flat.size
        n = s + abs(k)
        out = np.zeros((n, n), flat.dtype)
        # Row offset for a diagonal below the main one, column offset above it.
        i = max(0, -k)
        j = max(0, k)
        for t in range(s):
            out[i + t, j + t] = flat[t]
        return out

    return impl


@overload(np.indices)
def _indices(dimensions):
    if not (isinstance(dimensions, types.UniTuple)
            and isinstance(dimensions.dtype, types.Integer)):
        raise TypingError('The argument "dimensions" must be a tuple of integers')
    n = len(dimensions)

    def impl(dimensions):
        out = np.empty((n,) + dimensions, dtype=np.int64)
        total = 1
        for d in dimensions:
            total *= d
        flat = out.reshape((n, total))
        # Entry (i, p) is coordinate i of the p-th index in C order.
        for p in range(total):
            rest = p
            for i in range(n - 1, -1, -1):
                flat[i, p] = rest % dimensions[i]
                rest //= dimensions[i]
        return out

    return impl


# -- type tests ---------------------------------------------------------------------------


@overload(np.iscomplex)
def _iscomplex(x):
    if not _can_asarray(x):
        return None

    def impl(x):
        return np.imag(np.asarray(x)) != 0

    return impl


@overload(np.isreal)
def _isreal(x):
    if not _can_asarray(x):
        return None

    def impl(x):
        return np.imag(np.asarray(x)) == 0

    return impl


def _element_type(t):
    # The dtype NumPy's `asarray` would give a value of type `t` (strings count as
    # not complex, as NumPy's `<U` dtype).
    while True:
        if isinstance(t, (types.Number, types.Boolean)):
            return t
        if isinstance(t, types.BaseTuple):
            if len(t.types) == 0:
                return types.float64
            t = t.types[0]
            continue
        dt = getattr(t, "dtype", None)
        if dt is None:
            return t
        t = dt


@overload(np.iscomplexobj)
def _iscomplexobj(x):
    optional = isinstance(x, types.Optional)
    base = x.type if optional else x
    cmplx = isinstance(_element_type(base), types.Complex)
    if optional:
        def impl(x):
            if x is None:
                return False
            return cmplx
    else:
        def impl(x):
            return cmplx

    return impl


@overload(np.isrealobj)
def _isrealobj(x):
    def impl(x):
        return not np.iscomplexobj(x)

    return impl


@overload(np.isscalar)
def _isscalar(element):
    res = isinstance(element, (types.Boolean, types.Number, types.UnicodeType,
                               types.StringLiteral, types.NPTimedelta, types.NPDatetime))

    def impl(element):
        return res

    return impl


# -- unwrap, splits, triangle indices ------------------------------------------------------


@overload(np.unwrap)
def _unwrap(p, discont=None, axis=-1, period=6.283185307179586):
    if not isinstance(axis, (int, types.Integer)):
        raise TypingError('The argument "axis" must be an integer')
    if not _can_asarray(p):
        raise TypingError('The argument "p" must be array-like')
    if not (isinstance(discont, (types.Integer, types.Float)) or _is_none(discont)):
        raise TypingError('The argument "discont" must be a scalar')
    if not isinstance(period, (float, types.Number)):
        raise TypingError('The argument "period" must be a scalar')
    item = np.dtype(str(_element_type(p)))
    per = np.dtype(str(period)) if isinstance(period, types.Number) else np.float64
    dt = np.result_type(item, per).type
    integer = np.issubdtype(dt, np.integer)
    no_discont = _is_none(discont)

    def impl(p, discont=None, axis=-1, period=6.283185307179586):
        if axis != -1:
            raise ValueError('Value for argument "axis" is not supported')
        arr = np.asarray(p).astype(dt)
        shape = arr.shape
        n = shape[-1]
        rows = arr.reshape((arr.size // n, n))
        disc = period / 2 if no_discont else discont
        # NumPy's interval [-period/2, period/2); for integers the boundary is exact
        # only for an even period.
        if integer:
            high, rem = divmod(period, 2)
            ambiguous = rem == 0
        else:
            high = period / 2
            ambiguous = True
        low = -high
        for r in range(rows.shape[0]):
            # Each correction is of the original step; they add up along the row.
            acc = rows[r, 0] * 0
            prev = rows[r, 0]
            for i in range(1, n):
                cur = rows[r, i]
                dd = cur - prev
                mod = np.mod(dd - low, period) + low
                if ambiguous and mod == low and dd > 0:
                    mod = high
                corr = mod - dd
                if abs(dd) < disc:
                    corr = corr * 0
                acc = acc + corr
                rows[r, i] = cur + acc
                prev = cur
        return rows.reshape(shape)

    return impl


def _vhd_split(name, mindim, axis):
    def typing(ary, indices_or_sections):
        if not _is_array(ary):
            raise TypingError('The argument "ary" must be an array')
        if not isinstance(indices_or_sections, (types.Integer, types.Array, types.List,
                                                types.UniTuple)):
            raise TypingError('The argument "indices_or_sections" must be int or 1d-array')
        # hsplit splits a 1-d array along its only axis.
        ax = 0 if (axis == 1 and ary.ndim == 1) else axis
        msg = f"{name} only works on arrays of {mindim} or more dimensions"
        if ary.ndim < mindim:
            def impl(ary, indices_or_sections):
                raise ValueError(msg)
        else:
            def impl(ary, indices_or_sections):
                return np.split(ary, indices_or_sections, axis=ax)

        return impl

    typing.__name__ = f"_{name}"
    return typing


overload(np.vsplit)(_vhd_split("vsplit", 2, 0))
overload(np.hsplit)(_vhd_split("hsplit", 1, 1))
overload(np.dsplit)(_vhd_split("dsplit", 3, 2))


def _tri_indices_from(name, which):
    def typing(arr, k=0):
        if not isinstance(k, types.Integer):
            raise TypingError("k must be an integer")
        if not _is_array(arr) or arr.ndim != 2:
            raise TypingError("input array must be 2-d")

        def impl(arr, k=0):
            return which(arr.shape[0], k, arr.shape[1])

        return impl

    typing.__name__ = f"_{name}"
    return typing


@register_jitable
def _tril_indices(n, k, m):
    return np.tril_indices(n, k, m)


@register_jitable
def _triu_indices(n, k, m):
    return np.triu_indices(n, k, m)


overload(np.tril_indices_from)(_tri_indices_from("tril_indices_from", _tril_indices))
overload(np.triu_indices_from)(_tri_indices_from("triu_indices_from", _triu_indices))
