"""NumPy's selection and comparison functions as overloads (loaded with ``_npfuncs``):
``select piecewise insert array_equal nanargmin nanargmax partition argpartition
trapezoid``, each following NumPy's definition and errors."""

import numpy as np

from . import types
from ._npcommon import _axis, _is_array, _is_int, _is_none, _is_number
from .errors import TypingError
from .extending import overload, register_jitable










def _seq_of_arrays(t):
    """The item type of a list or homogeneous tuple of arrays, or None."""
    if isinstance(t, (types.List, types.UniTuple)) and _is_array(t.dtype):
        return t.dtype
    return None


def _np_dtype(t):
    return np.dtype(str(t))


def _sample(t):
    # A value NumPy's promotion sees as the scalar argument would be (Python numbers are
    # weak, as a default of 0 is for NumPy).
    if isinstance(t, types.Boolean):
        return False
    if isinstance(t, types.Integer):
        return 0
    if isinstance(t, types.Float):
        return 0.0
    return 0j


@overload(np.select)
def _select(condlist, choicelist, default=0):
    # Numba's checks, in its order and with its messages.
    if not isinstance(condlist, (types.List, types.UniTuple)):
        raise TypingError("condlist must be a List or a Tuple")
    if not isinstance(choicelist, (types.List, types.UniTuple)):
        raise TypingError("choicelist must be a List or a Tuple")
    if not (_is_number(default) or _is_none(default) or _is_array(default)):
        raise TypingError("default must be a scalar (number or boolean)")
    cond = condlist.dtype
    choice = choicelist.dtype
    if not _is_array(cond):
        raise TypingError("items of condlist must be arrays")
    if not _is_array(choice):
        raise TypingError("items of choicelist must be arrays")
    if not isinstance(cond.dtype, types.Boolean):
        raise TypingError("condlist arrays must contain booleans")
    if cond.ndim != choice.ndim:
        raise TypingError(
            "condlist and choicelist elements must have the same number of dimensions")
    if cond.ndim < 1:
        raise TypingError("condlist arrays must be of at least dimension 1")
    if _is_array(default):
        dt = np.result_type(_np_dtype(choice.dtype), _np_dtype(default.dtype))
    elif _is_number(default) or _is_none(default):
        d = types.int64 if _is_none(default) else default
        dt = np.result_type(_np_dtype(choice.dtype), _sample(d))
    else:
        raise TypingError("default must be a scalar or an array")
    dt = dt.type

    def impl(condlist, choicelist, default=0):
        n = len(condlist)
        if n != len(choicelist):
            raise ValueError("list of cases must be same length as list of conditions")
        if n == 0:
            raise ValueError("select with an empty condition list is not possible")
        shape = np.broadcast_shapes(condlist[0].shape, choicelist[0].shape)
        out = np.empty(shape, dtype=dt)
        out[...] = default
        # The first condition that holds wins: apply them from the last.
        for i in range(n - 1, -1, -1):
            c = np.broadcast_to(condlist[i], shape)
            v = np.broadcast_to(choicelist[i], shape)
            out[...] = np.where(c, v, out)
        return out

    return impl


@overload(np.piecewise)
def _piecewise(x, condlist, funclist):
    if not _is_array(x):
        raise TypingError('The first argument "x" must be an array')
    cond = _seq_of_arrays(condlist)
    if cond is None or not isinstance(cond.dtype, types.Boolean):
        raise TypingError("condlist must be a list or tuple of boolean arrays")
    if not (isinstance(funclist, (types.List, types.UniTuple)) and _is_number(funclist.dtype)):
        raise TypingError(
            "np.piecewise: funclist must be a list or tuple of numbers (functions in "
            "funclist are not supported by numba-rs yet)")

    def impl(x, condlist, funclist):
        n = len(condlist)
        if len(funclist) != n and len(funclist) != n + 1:
            raise ValueError(
                "with the given conditions, funclist must have as many entries or one more")
        out = np.zeros(x.shape, dtype=x.dtype)
        if len(funclist) == n + 1:
            # The extra value holds where no condition does.
            other = np.ones(x.shape, dtype=np.bool_)
            for i in range(n):
                other &= ~condlist[i]
            out[other] = funclist[n]
        for i in range(n):
            out[condlist[i]] = funclist[i]
        return out

    return impl


@overload(np.array_equal)
def _array_equal(a1, a2, equal_nan=False):
    ok = lambda t: _is_array(t) or _is_number(t) or isinstance(  # noqa: E731
        t, (types.BaseTuple, types.List))
    if not (ok(a1) and ok(a2)):
        raise TypingError("Both arguments to \"array_equals\" must be array-like")

    def impl(a1, a2, equal_nan=False):
        x = np.asarray(a1)
        y = np.asarray(a2)
        if x.shape != y.shape:
            return False
        xf = x.ravel()
        yf = y.ravel()
        for i in range(xf.size):
            if xf[i] != yf[i]:
                if equal_nan and np.isnan(xf[i]) and np.isnan(yf[i]):
                    continue
                return False
        return True

    return impl


def _nanarg(name, better):
    def typing(a):
        if not _is_array(a):
            raise TypingError(f"np.{name}: the argument must be an array")

        def impl(a):
            flat = a.ravel()
            best = -1
            for i in range(flat.size):
                v = flat[i]
                if v != v:
                    continue
                if best < 0 or better(v, flat[best]):
                    best = i
            if best < 0:
                raise ValueError("All-NaN slice encountered")
            return best

        return impl

    typing.__name__ = f"_{name}"
    return typing


@register_jitable
def _less(x, y):
    return x < y


@register_jitable
def _greater(x, y):
    return x > y


overload(np.nanargmin)(_nanarg("nanargmin", _less))
overload(np.nanargmax)(_nanarg("nanargmax", _greater))


@overload(np.insert)
def _insert(arr, obj, values, axis=None):
    # Numba's checks and messages (insertion is into the flattened array).
    if not isinstance(arr, (types.Array, types.Sequence)):
        raise TypingError("arr must be either an Array or a Sequence")
    if not isinstance(values, (types.Number, types.Boolean, types.Array, types.Sequence)):
        raise TypingError("values must be a scalar, an Array or a Sequence")
    if not _is_none(axis):
        raise TypingError("The 'axis' argument is not supported")
    if isinstance(obj, (types.Array, types.Sequence)):
        if not isinstance(obj.dtype, types.Integer):
            raise TypingError("obj should be of Integer dtype")
    elif not isinstance(obj, types.Integer):
        raise TypingError("obj should be an Integer, an Array or a Sequence")
    scalar_obj = _is_int(obj)

    def impl(arr, obj, values, axis=None):
        a = np.asarray(arr).ravel()
        n = a.size
        vals = np.asarray(values).ravel().astype(a.dtype)
        if scalar_obj:
            idx = np.full(max(vals.size, 1), obj, dtype=np.intp)
        else:
            idx = np.asarray(obj).astype(np.intp).ravel()
        if vals.size == 0:
            return a.copy()
        if idx.size != vals.size:
            # One index for many values (a scalar obj) or one value for many indices.
            if vals.size == 1:
                vals = np.full(idx.size, vals[0], dtype=a.dtype)
            elif idx.size != 1:
                raise ValueError("shape mismatch: the number of values does not match the "
                                 "number of insertion indices")
        for k in range(idx.size):
            i = idx[k]
            if i < -n or i > n:
                raise IndexError("index is out of bounds for the given array size")
            if i < 0:
                idx[k] = i + n
        if scalar_obj or idx.size == 1:
            i = idx[0]
            out = np.empty(n + vals.size, dtype=a.dtype)
            out[:i] = a[:i]
            out[i:i + vals.size] = vals
            out[i + vals.size:] = a[i:]
            return out
        # Several positions: each value goes before the original element at its index
        # (stable in the order given, as NumPy's).
        order = np.argsort(idx, kind="mergesort")
        out = np.empty(n + idx.size, dtype=a.dtype)
        src = 0
        dst = 0
        for q in range(idx.size):
            k = order[q]
            while src < idx[k]:
                out[dst] = a[src]
                src += 1
                dst += 1
            out[dst] = vals[k]
            dst += 1
        while src < n:
            out[dst] = a[src]
            src += 1
            dst += 1
        return out

    return impl


@register_jitable
def _valid_kths(n, kth):
    # Numba's `valid_kths`: a scalar or 1-d kth, each in [-n, n), negatives counted
    # from the end.
    ks = np.asarray(kth)
    if ks.ndim > 1:
        raise ValueError("kth must be scalar or 1-D")
    for k in ks.ravel():
        if k < -n or k >= n:
            raise ValueError("kth out of bounds")


def _partition(name, arg):
    def typing(a, kth):
        if not (_is_array(a) or isinstance(a, (types.Sequence, types.BaseTuple))):
            raise TypingError("The first argument must be an array-like")
        if _is_array(a) and a.ndim == 0:
            raise TypingError("The first argument must be at least 1-D (found 0-D)")
        kdt = kth.dtype if isinstance(kth, (types.Array, types.Sequence, types.UniTuple)) else kth
        if not _is_int(kdt):
            raise TypingError("Partition index must be integer")

        # A sort along the last axis is a valid partition for every kth (NumPy's order
        # within each side is unspecified); stable for the indices. Row by row, so any
        # layout and rank works.
        def impl(a, kth):
            arr = np.asarray(a)
            if arr.size == 0:
                if arg:
                    return arr.astype(np.intp)
                return arr.copy()
            n = arr.shape[-1]
            _valid_kths(n, kth)
            rows = np.ascontiguousarray(arr).reshape((-1, n))
            if arg:
                out = np.empty(rows.shape, dtype=np.intp)
            else:
                out = np.empty(rows.shape, dtype=arr.dtype)
            for r in range(rows.shape[0]):
                if arg:
                    out[r] = np.argsort(rows[r], kind="mergesort")
                else:
                    out[r] = np.sort(rows[r])
            # The input's layout, as NumPy's (an F-ordered array gives an F-ordered one).
            if arg:
                res = np.empty_like(arr, dtype=np.intp)
            else:
                res = np.empty_like(arr)
            res[...] = out.reshape(arr.shape)
            return res

        return impl

    typing.__name__ = f"_{name}"
    return typing


overload(np.partition)(_partition("partition", False))
overload(np.argpartition)(_partition("argpartition", True))


@overload(np.trapezoid)
def _trapezoid(y, x=None, dx=1.0, axis=-1):
    if not _is_array(y):
        raise TypingError('The first argument "y" must be an array')
    if not (_is_none(x) or _is_array(x)):
        raise TypingError('The argument "x" must be an array or None')
    if not _is_int(axis):
        raise TypingError('The argument "axis" must be an integer')
    with_x = not _is_none(x)
    dt = np.result_type(_np_dtype(y.dtype), np.float64).type
    one_d = y.ndim == 1

    def impl(y, x=None, dx=1.0, axis=-1):
        ax = _axis(axis, y.ndim, "axis is out of bounds")
        # The integration axis last, the others as rows.
        yl = np.ascontiguousarray(np.swapaxes(y, ax, y.ndim - 1))
        n = yl.shape[-1]
        rows = yl.reshape(-1, n)
        if with_x:
            xs = np.asarray(x)
            if xs.ndim == 1:
                if xs.size != n:
                    raise ValueError("x and y must have the same length along axis")
                d = np.diff(xs) * 1.0
                drows = np.empty((rows.shape[0], max(n - 1, 0)))
                for r in range(rows.shape[0]):
                    drows[r] = d
            else:
                xl = np.ascontiguousarray(np.swapaxes(xs, ax, y.ndim - 1))
                drows = np.diff(xl.reshape(-1, n)) * 1.0
        else:
            drows = np.full((rows.shape[0], max(n - 1, 0)), dx * 1.0)
        out = np.empty(rows.shape[0], dtype=dt)
        for r in range(rows.shape[0]):
            acc = rows[r, 0] * 0.0
            for i in range(n - 1):
                acc += drows[r, i] * (rows[r, i + 1] + rows[r, i]) / 2.0
            out[r] = acc
        if one_d:
            return out[0]
        return out.reshape(yl.shape[:-1])

    return impl
