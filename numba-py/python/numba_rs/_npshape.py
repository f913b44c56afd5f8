"""NumPy's shape functions as overloads (loaded with ``_npfuncs``): broadcasting
(``broadcast_to broadcast_arrays broadcast_shapes``), axis moves (``swapaxes moveaxis
rot90 squeeze``), reshaping and splitting (``reshape resize split array_split``), index
arithmetic (``ravel_multi_index unravel_index``) and ``take_along_axis``.

Views are built with ``numpy.lib.stride_tricks.as_strided`` (typed natively), so they
share the argument's memory as NumPy's do; ``broadcast_to``'s are read-only, as NumPy's
(typed so by an intrinsic). A function whose result has one entry per
dimension is generated for the rank it is typed at (the rank is a compile-time fact,
the sizes are not), so every tuple it builds has a static length.
"""

import importlib.util

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import types
from ._npcommon import (_axis, _can_asarray, _gen, _int_tuple, _ints_src, _is_array, _is_int,
                        _is_none, _is_number, _tup)
from ._npmanip import _asarray_ndim
from .errors import TypingError
from .extending import intrinsic, overload, register_jitable


















# ---------------------------------------------------------------------------------
# Broadcasting


def _readonly_typing(typingctx, arr):
    # The same array struct typed read-only: boxed, it is a NumPy array whose
    # `flags.writeable` is False (Numba's `get_readonly_array`).
    if not _is_array(arr):
        return None

    def codegen(context, builder, sig, args):
        # The result is a new reference to the same memory.
        context.nrt.incref(builder, sig.args[0], args[0])
        return args[0]

    return arr.copy(readonly=True)(arr), codegen


if importlib.util.find_spec("llvmlite") is not None:
    _readonly = intrinsic(_readonly_typing)
else:
    # Intrinsics are written with llvmlite (an optional dependency): without it the
    # views stay writeable.
    _readonly = register_jitable(lambda arr: arr)


@register_jitable
def _merge(x, y):
    # `x` is the dimension so far, `y` a shape's entry (checked, as NumPy checks each).
    if y < 0:
        raise ValueError("negative dimensions are not allowed")
    if x == 1:
        return y
    if y == 1 or y == x:
        return x
    raise ValueError("shape mismatch: objects cannot be broadcast to a single shape")


@register_jitable
def _bstride(size, stride, want):
    if want < 0:
        raise ValueError("all elements of broadcast shape must be non-negative")
    if size == want:
        return stride
    if size == 1:
        return 0
    raise ValueError("operands could not be broadcast together with remapped shapes")


def _broadcast_view_src(m, n, shape_expr):
    """Source of `_view(a, shape)`: `a` (rank m) seen with the rank-n shape."""
    lines = ["def _view(a, shape):", f"    sh = {shape_expr}"]
    strides = []
    for k in range(n):
        j = k - (n - m)
        if j < 0:
            lines.append(f"    if sh[{k}] < 0:")
            lines.append("        raise ValueError('all elements of broadcast shape must be non-negative')")
            strides.append("0")
        else:
            strides.append(f"_bstride(a.shape[{j}], a.strides[{j}], sh[{k}])")
    lines.append(f"    return as_strided(a, sh, {_tup(n, '{{}}').format(*strides) if n else '()'})")
    return "\n".join(lines) + "\n"


def _broadcast_to_shape(shape):
    """The rank and source of `shape` as broadcast_to takes it, or a TypingError with
    Numba's message."""
    n, shape_expr = _ints_src(shape, "shape")
    if n is not None:
        return n, shape_expr
    if isinstance(shape, types.UniTuple):
        raise TypingError('The second argument "shape" must be a tuple of integers')
    if isinstance(shape, types.BaseTuple):
        raise TypingError(f'"{shape}" object cannot be interpreted as an integer')
    raise TypingError(f'The argument "shape" must be a tuple or an integer. Got {shape}')


def _broadcast_view(array, shape):
    """A writeable view of `array` broadcast to `shape` (the typing of ``_view``)."""
    n, shape_expr = _broadcast_to_shape(shape)
    m = _asarray_ndim(array)
    if m > n:
        def impl(array, shape):
            raise ValueError(
                "input operand has more dimensions than allowed by the axis remapping")

        return impl
    view = _gen("_view", _broadcast_view_src(m, n, shape_expr), _bstride=_bstride)
    view = register_jitable(view)

    def impl(array, shape):
        return view(np.asarray(array), shape)

    return impl


def _view_of(array, shape):
    pass


# numba-rs's own code writing through broadcast views (``nditer``) takes them from here.
overload(_view_of)(_broadcast_view)


@overload(np.broadcast_to)
def _broadcast_to(array, shape):
    if not _can_asarray(array):
        raise TypingError('The first argument "array" must be array-like')
    if isinstance(shape, types.BaseTuple) and len(shape.types) == 0 and not (
            _is_number(array) or (_is_array(array) and array.ndim == 0)):
        raise TypingError("Cannot broadcast a non-scalar to a scalar array")
    n, _ = _broadcast_to_shape(shape)
    if _asarray_ndim(array) > n:
        return _broadcast_view(array, shape)  # its ValueError

    # NumPy's result is a read-only view (several of its elements may be one in memory).
    def impl(array, shape):
        return _readonly(_view_of(array, shape))

    return impl


def _shapes_src(name, ranks, args_expr):
    """Source of a function computing the broadcast shape of values of these ranks
    (`args_expr[i]` spells the i-th shape)."""
    n = max(ranks, default=0)
    dims = []
    for k in range(n):
        e = "1"
        for r, s in zip(ranks, args_expr):
            j = k - (n - r)
            if j >= 0:
                e = f"_merge({e}, {s}[{j}])"
        dims.append(e)
    body = _tup(n, "{{}}").format(*dims) if n else "()"
    return n, f"def {name}(args):\n    return {body}\n"


@overload(np.broadcast_shapes)
def _broadcast_shapes(*args):
    ranks = []
    for idx, t in enumerate(args):
        if _is_int(t):
            ranks.append(1)
        elif _int_tuple(t) is not None:
            ranks.append(_int_tuple(t))
        else:
            raise TypingError(f"Argument {idx} must be either an int or tuple[int]. Got {t}")
    exprs = [f"(args[{i}],)" if _is_int(t) else f"args[{i}]" for i, t in enumerate(args)]
    _, src = _shapes_src("_shape", ranks, exprs)
    shape = register_jitable(_gen("_shape", src, _merge=_merge))

    def impl(*args):
        return shape(args)

    return impl


@overload(np.broadcast_arrays)
def _broadcast_arrays(*args):
    for idx, t in enumerate(args):
        if not _can_asarray(t):
            raise TypingError(f'Argument "{idx}" must be array-like')
    # The result is a tuple, so (as in NumPy, unlike Numba's list) the arrays keep their
    # own dtypes.
    ranks = [_asarray_ndim(t) for t in args]
    exprs = [f"args[{i}].shape" for i in range(len(args))]
    if not all(_is_array(t) for t in args):
        # Numba broadcasts scalars and tuples to at least one dimension.
        ranks.append(1)
        exprs.append("(1,)")
    n, src = _shapes_src("_shape", ranks, exprs)
    shape = register_jitable(_gen("_shape", src, _merge=_merge))
    views = [
        register_jitable(_gen("_view", _broadcast_view_src(r, n, "shape"), _bstride=_bstride))
        for r in ranks[:len(args)]
    ]
    body = ["def impl(*args):",
            "    arrs = " + (_tup(len(args), "np.asarray(args[{i}])") if args else "()"),
            "    sh = _shape(arrs)",
            "    return " + (_tup(len(args), "_v{i}(arrs[{i}], sh)") if args else "()")]
    env = {"_shape": shape, **{f"_v{i}": v for i, v in enumerate(views)}}
    return _gen("impl", "\n".join(body) + "\n", **env)


# ---------------------------------------------------------------------------------
# Moving axes


@register_jitable
def _swap(k, i, j):
    if k == i:
        return j
    if k == j:
        return i
    return k


@overload(np.swapaxes)
def _swapaxes(a, axis1, axis2):
    if not _is_array(a):
        raise TypingError('The first argument "a" must be an array')
    if not _is_int(axis1):
        raise TypingError('The second argument "axis1" must be an integer')
    if not _is_int(axis2):
        raise TypingError('The third argument "axis2" must be an integer')
    n = a.ndim
    src = (
        "def impl(a, axis1, axis2):\n"
        "    i = _axis(axis1, a.ndim, 'np.swapaxes: Argument axis1 out of bounds')\n"
        "    j = _axis(axis2, a.ndim, 'np.swapaxes: Argument axis2 out of bounds')\n"
        f"    return np.transpose(a, {_tup(n, '_swap({i}, i, j)')})\n"
    )
    return _gen("impl", src, _axis=_axis, _swap=_swap)


@register_jitable
def _perm_slot(perm, k):
    return perm[k]




@overload(np.moveaxis)
def _moveaxis(a, source, destination):
    if not _is_array(a):
        raise TypingError('The first argument "a" must be an array')
    ns, s_expr = _ints_src(source, "source")
    nd, d_expr = _ints_src(destination, "destination")
    if ns is None:
        raise TypingError(
            'The second argument "source" must be an integer or sequence of integers')
    if nd is None:
        raise TypingError(
            'The third argument "destination" must be an integer or sequence of integers')
    if ns != nd:
        raise TypingError(
            "`source` and `destination` arguments must have the same number of elements")
    n = a.ndim
    src = (
        "def impl(a, source, destination):\n"
        f"    src = {s_expr}\n"
        f"    dst = {d_expr}\n"
        f"    perm = np.full({n}, -1, np.intp)\n"
        f"    used = np.zeros({n}, np.bool_)\n"
        f"    for q in range({ns}):\n"
        "        s = _axis(src[q], a.ndim, 'np.moveaxis: Argument source out of bounds')\n"
        "        d = _axis(dst[q], a.ndim, 'np.moveaxis: Argument destination out of bounds')\n"
        "        if used[s]:\n"
        "            raise ValueError('np.moveaxis: repeated axis in source argument')\n"
        "        if perm[d] >= 0:\n"
        "            raise ValueError('np.moveaxis: repeated axis in destination argument')\n"
        "        used[s] = True\n"
        "        perm[d] = s\n"
        "    nxt = 0\n"
        f"    for k in range({n}):\n"
        "        if perm[k] < 0:\n"
        "            while used[nxt]:\n"
        "                nxt += 1\n"
        "            perm[k] = nxt\n"
        "            used[nxt] = True\n"
        f"    return np.transpose(a, {_tup(n, 'perm[{i}]')})\n"
    )
    return _gen("impl", src, _axis=_axis)


@register_jitable
def _flip_axis(m, ax):
    return np.swapaxes(np.swapaxes(m, 0, ax)[::-1], 0, ax)


@overload(np.rot90)
def _rot90(m, k=1, axes=(0, 1)):
    if not _is_array(m):
        raise TypingError('The first argument "m" must be an array')
    if not _is_int(k):
        raise TypingError('The second argument "k" must be an integer')
    if not _is_none(axes) and _int_tuple(axes) != 2:
        raise TypingError("len(axes) must be 2.")
    if m.ndim < 2:
        raise TypingError("Input must be >= 2-d.")

    def impl(m, k=1, axes=(0, 1)):
        a0 = _axis(axes[0], m.ndim, "Axes are out of bounds")
        a1 = _axis(axes[1], m.ndim, "Axes are out of bounds")
        if a0 == a1:
            raise ValueError("Axes must be different.")
        r = k % 4
        if r == 0:
            return np.swapaxes(m, 0, 0)
        if r == 2:
            return _flip_axis(_flip_axis(m, a0), a1)
        if r == 1:
            return np.swapaxes(_flip_axis(m, a1), a0, a1)
        return _flip_axis(np.swapaxes(m, a0, a1), a1)

    return impl


@overload(np.squeeze, prefer_literal=True)
def _squeeze(a, axis=None):
    if not _is_array(a):
        raise TypingError('The first argument "a" must be an array')
    n = a.ndim
    if _is_none(axis):
        if n > 0:
            raise TypingError(
                "np.squeeze without axis= is not supported: the result's rank would "
                "depend on the array's shape at run time; pass axis= (a constant)")

        def impl(a, axis=None):
            # Strides spelled out: Numba's as_strided refuses strides=None.
            return as_strided(a, a.shape, a.strides)

        return impl
    if isinstance(axis, types.IntegerLiteral):
        axes = (axis.literal_value,)
    elif isinstance(axis, types.BaseTuple) and all(
            isinstance(x, types.IntegerLiteral) for x in axis.types):
        axes = tuple(x.literal_value for x in axis.types)
    else:
        raise TypingError("np.squeeze's axis must be a constant integer or tuple of integers")
    norm = []
    for x in axes:
        if x < -n or x >= n:
            raise TypingError(f"axis {x} is out of bounds for array of dimension {n}")
        norm.append(x % n)
    if len(set(norm)) != len(norm):
        raise TypingError("repeated axis")
    keep = [k for k in range(n) if k not in norm]
    checks = "".join(
        f"    if a.shape[{k}] != 1:\n"
        "        raise ValueError('cannot select an axis to squeeze out which has size not "
        "equal to one')\n" for k in norm)
    shape = "(" + "".join(f"a.shape[{k}], " for k in keep) + ")"
    strides = "(" + "".join(f"a.strides[{k}], " for k in keep) + ")"
    src = (f"def impl(a, axis=None):\n{checks}"
           f"    return as_strided(a, {shape}, {strides})\n")
    return _gen("impl", src)


# ---------------------------------------------------------------------------------
# Reshaping and splitting


@overload(np.reshape)
def _reshape(a, newshape):
    if not _can_asarray(a):
        raise TypingError('The first argument "a" must be array-like')

    def impl(a, newshape):
        return np.asarray(a).reshape(newshape)

    return impl


@overload(np.resize)
def _resize(a, new_shape):
    if not _can_asarray(a):
        raise TypingError('The argument "a" must be array-like')
    n, shape = _ints_src(new_shape, "new_shape")
    if n is None:
        raise TypingError('The argument "new_shape" must be an integer or a tuple of integers')
    src = (
        "def impl(a, new_shape):\n"
        f"    sh = {shape}\n"
        "    total = 1\n"
        "    for d in sh:\n"
        "        if d < 0:\n"
        "            raise ValueError('All elements of `new_shape` must be non-negative')\n"
        "        total *= d\n"
        "    flat = np.asarray(a).ravel()\n"
        "    out = np.empty(sh, dtype=flat.dtype)\n"
        "    of = out.reshape(-1)\n"
        "    if flat.size == 0:\n"
        "        of[:] = 0\n"
        "        return out\n"
        "    for i in range(total):\n"
        "        of[i] = flat[i % flat.size]\n"
        "    return out\n"
    )
    return _gen("impl", src)


@register_jitable
def _front(a, axis):
    # Axis `axis` moved to the front by a swap (undone by the same swap).
    return np.swapaxes(a, 0, axis)


def _split(name, equal):
    def typing(ary, indices_or_sections, axis=0):
        if isinstance(ary, (types.UniTuple, types.ListType, types.List)):
            # Numba's: an array-like sequence is split as its array.
            if equal:
                def impl(ary, indices_or_sections, axis=0):
                    return np.split(np.asarray(ary), indices_or_sections, axis=axis)
            else:
                def impl(ary, indices_or_sections, axis=0):
                    return np.array_split(np.asarray(ary), indices_or_sections, axis=axis)

            return impl
        if not _is_array(ary):
            raise TypingError('The first argument "ary" must be an array')
        if not _is_int(axis):
            raise TypingError('The argument "axis" must be an integer')
        ios = indices_or_sections
        if isinstance(ios, types.BaseTuple) and not isinstance(ios, types.UniTuple) and (
                _int_tuple(ios) is not None):
            # Mixed integer types: the same indices as one homogeneous tuple.
            src = (
                "def impl(ary, indices_or_sections, axis=0):\n"
                f"    return np.{name}(ary, "
                + _tup(len(ios.types), "np.intp(indices_or_sections[{i}])")
                + ", axis=axis)\n")
            return _gen("impl", src)
        if _is_int(ios):

            def impl(ary, indices_or_sections, axis=0):
                ax = _axis(axis, ary.ndim, "np.split: Argument axis out of bounds")
                moved = _front(ary, ax)
                n = moved.shape[0]
                s = indices_or_sections
                if s <= 0:
                    raise ValueError("number sections must be larger than 0.")
                if equal and n % s != 0:
                    raise ValueError("array split does not result in an equal division")
                each, extra = n // s, n % s
                out = []
                start = 0
                for i in range(s):
                    stop = start + each + (1 if i < extra else 0)
                    out.append(_front(moved[start:stop], ax))
                    start = stop
                return out

            return impl
        if (_is_array(ios) and ios.ndim == 1 and _is_int(ios.dtype)) or (
                isinstance(ios, (types.List, types.UniTuple)) and _is_int(ios.dtype)) or (
                _int_tuple(ios) is not None):

            def impl(ary, indices_or_sections, axis=0):
                ax = _axis(axis, ary.ndim, "np.split: Argument axis out of bounds")
                moved = _front(ary, ax)
                out = []
                # NumPy's: each piece is the slice from the previous index to this one
                # (Python's slice rules: negatives count from the end, out of range
                # clips, a decreasing pair is empty).
                prev = 0
                for b in indices_or_sections:
                    out.append(_front(moved[prev:b], ax))
                    prev = b
                out.append(_front(moved[prev:], ax))
                return out

            return impl
        raise TypingError(
            'The argument "indices_or_sections" must be an integer or a sequence of integers')

    typing.__name__ = f"_{name}"
    return typing


overload(np.split)(_split("split", True))
overload(np.array_split)(_split("array_split", False))


# ---------------------------------------------------------------------------------
# Index arithmetic


@register_jitable
def _clip_index(i, d, mode):
    if mode == "raise":
        if i < 0 or i >= d:
            raise ValueError("invalid entry in coordinates array")
        return i
    if mode == "wrap":
        i = i % d
        return i
    if mode == "clip":
        return min(max(i, 0), d - 1)
    raise ValueError("clipmode must be one of 'clip', 'raise', or 'wrap'")


@overload(np.ravel_multi_index)
def _ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    if not isinstance(multi_index, types.BaseTuple):
        raise TypingError('The argument "multi_index" must be a tuple')
    m = len(multi_index.types)
    nd, dims_expr = _ints_src(dims, "dims")
    if nd is None:
        raise TypingError('The argument "dims" must be a tuple of integers')
    if nd != m:
        raise TypingError(
            f"parameter multi_index must be a sequence of length {nd}")
    kinds = ["int" if _is_int(t) else "array" if _is_array(t) and _is_int(t.dtype) else None
             for t in multi_index.types]
    if None in kinds:
        raise TypingError("multi_index must hold integers or integer arrays")
    lines = [
        "def impl(multi_index, dims, mode='raise', order='C'):",
        f"    ds = {dims_expr}",
        # Each axis in the flat order from the fastest: C walks the last axis fastest.
        "    if order == 'C':",
        f"        axes = {_tup(m, str(m - 1) + ' - {i}')}",
        "    elif order == 'F':",
        f"        axes = {_tup(m, '{i}')}",
        "    else:",
        "        raise ValueError(\"only 'C' or 'F' order is permitted\")",
    ]
    arrays = [i for i, k in enumerate(kinds) if k == "array"]
    if arrays:
        lines += [
            f"    shape = multi_index[{arrays[0]}].shape",
            "    out = np.empty(shape, dtype=np.intp)",
            "    of = out.reshape(-1)",
        ]
        for i in arrays:
            lines += [
                f"    if multi_index[{i}].shape != shape:",
                "        raise ValueError('shape mismatch: objects cannot be broadcast to a "
                "single shape')",
                f"    f{i} = np.ascontiguousarray(multi_index[{i}]).reshape(-1)",
            ]
        lines.append("    for p in range(of.size):")
        ind = "        "
    else:
        ind = "    "
    vals = ", ".join(
        f"np.intp(f{i}[p])" if k == "array" else f"np.intp(multi_index[{i}])"
        for i, k in enumerate(kinds))
    lines += [
        f"{ind}vals = ({vals},)",
        f"{ind}acc = 0",
        f"{ind}step = 1",
        f"{ind}for q in range({m}):",
        f"{ind}    k = axes[q]",
        f"{ind}    acc += _clip_index(vals[k], ds[k], mode) * step",
        f"{ind}    step *= ds[k]",
    ]
    lines.append("        of[p] = acc\n    return out" if arrays else "    return acc")
    return _gen("impl", "\n".join(lines) + "\n", _clip_index=_clip_index)


@register_jitable
def _unravel_one(i, ds, order, size):
    if i < 0 or i >= size:
        raise ValueError("index out of bounds for array with the given size")
    out = np.empty(len(ds), dtype=np.intp)
    if order == "C":
        for k in range(len(ds) - 1, -1, -1):
            out[k] = i % ds[k]
            i //= ds[k]
    elif order == "F":
        for k in range(len(ds)):
            out[k] = i % ds[k]
            i //= ds[k]
    else:
        raise ValueError("only 'C' or 'F' order is permitted")
    return out


@overload(np.unravel_index)
def _unravel_index(indices, shape, order="C"):
    n, shape_expr = _ints_src(shape, "shape")
    if n is None:
        raise TypingError('The argument "shape" must be a tuple of integers')
    if _is_int(indices):
        src = (
            "def impl(indices, shape, order='C'):\n"
            f"    ds = {shape_expr}\n"
            "    size = 1\n"
            "    for d in ds:\n"
            "        size *= d\n"
            "    r = _unravel_one(indices, ds, order, size)\n"
            f"    return {_tup(n, 'r[{i}]')}\n"
        )
    elif _is_array(indices) and _is_int(indices.dtype):
        src = (
            "def impl(indices, shape, order='C'):\n"
            f"    ds = {shape_expr}\n"
            "    size = 1\n"
            "    for d in ds:\n"
            "        size *= d\n"
            "    flat = np.ascontiguousarray(indices).reshape(-1)\n"
            f"    outs = np.empty(({n}, flat.size), dtype=np.intp)\n"
            "    for p in range(flat.size):\n"
            "        outs[:, p] = _unravel_one(flat[p], ds, order, size)\n"
            f"    return {_tup(n, 'outs[{i}].reshape(indices.shape)')}\n"
        )
    else:
        raise TypingError('The argument "indices" must be an integer or an integer array')
    return _gen("impl", src, _unravel_one=_unravel_one)


@overload(np.take_along_axis, prefer_literal=True)
def _take_along_axis(arr, indices, axis):
    # Numba's checks and messages: the axis must be a literal integer (or None).
    if not _is_array(arr):
        raise TypingError('The first argument "arr" must be an array')
    if not _is_array(indices):
        raise TypingError('The second argument "indices" must be an array')
    if not isinstance(indices.dtype, types.Integer):
        raise TypingError("The indices array must contain integers")
    nd = 1 if _is_none(axis) else arr.ndim
    if nd != indices.ndim:
        raise TypingError("`indices` and `arr` must have the same number of dimensions")
    if _is_none(axis):
        def impl(arr, indices, axis):
            flat = arr.flatten()
            n = flat.size
            out = np.empty(indices.shape, dtype=arr.dtype)
            for c in range(indices.shape[0]):
                j = np.intp(indices[c])
                if j < -n or j >= n:
                    raise IndexError("index out of bounds")
                out[c] = flat[j if j >= 0 else j + n]
            return out

        return impl
    if not isinstance(axis, types.Integer):
        raise TypingError("axis must be an integer")
    if not isinstance(axis, types.IntegerLiteral):
        raise TypingError("axis must be a literal value")
    ax = axis.literal_value
    if ax < 0:
        ax += arr.ndim
    if ax < 0 or ax >= arr.ndim:
        raise TypingError("axis is out of bounds")
    last = arr.ndim - 1

    def impl(arr, indices, axis):
        # The dimensions other than the axis broadcast together (Numba's check).
        for d in range(arr.ndim):
            if d != ax:
                d1 = arr.shape[d]
                d2 = indices.shape[d]
                if d1 != 1 and d2 != 1 and d1 != d2:
                    raise ValueError("`arr` and `indices` dimensions don't match")
        # Both with the axis last, as rows: each row of indices picks from its row of arr.
        a = np.swapaxes(arr, ax, last)
        ix = np.swapaxes(indices, ax, last)
        lead = np.broadcast_shapes(a.shape[:-1], ix.shape[:-1])
        a = np.ascontiguousarray(np.broadcast_to(a, lead + a.shape[-1:]))
        ix = np.ascontiguousarray(np.broadcast_to(ix, lead + ix.shape[-1:]))
        n, w = a.shape[-1], ix.shape[-1]
        ar = a.reshape(-1, n)
        ir = ix.reshape(-1, w)
        out = np.empty(ir.shape, dtype=arr.dtype)
        for r in range(ir.shape[0]):
            for c in range(w):
                j = np.intp(ir[r, c])
                if j < -n or j >= n:
                    raise IndexError("index out of bounds")
                out[r, c] = ar[r, j if j >= 0 else j + n]
        # A new C-contiguous array, as NumPy's.
        return np.ascontiguousarray(np.swapaxes(out.reshape(ix.shape), ax, last))

    return impl


# ---------------------------------------------------------------------------------
# Iteration


@overload(np.nditer)
def _nditer(op):
    # One array (or number), or a tuple of them broadcast together: each step yields the
    # current element as a 0-d view (a tuple of them for a tuple), in C order, as Numba's
    # `np.nditer`.
    many = isinstance(op, types.BaseTuple)
    items = list(op.types) if many else [op]
    for t in items:
        if not (_is_array(t) or _is_number(t)):
            raise TypingError("np.nditer takes an array or a tuple of arrays")
    k = len(items)
    ranks = [t.ndim if _is_array(t) else 0 for t in items]
    n = max(ranks)
    refs = [f"op[{i}]" for i in range(k)] if many else ["op"]
    lines = ["def impl(op):"]
    for i, r in enumerate(refs):
        lines.append(f"    a{i} = np.asarray({r})")
    if k > 1:
        lines.append("    shape = np.broadcast_shapes(" + "".join(f"a{i}.shape, " for i in range(k)) + ")")
        for i in range(k):
            # Writeable views: the loop may write through them.
            lines.append(f"    a{i} = _view_of(a{i}, shape)")
    else:
        lines.append("    shape = a0.shape")
    lines.append("    return _walk(" + ", ".join(f"a{i}" for i in range(k)) + ", shape)")
    # The generator: a 0-d view per position (a slice of one element per axis).
    walk = [f"def _walk({', '.join(f'a{i}' for i in range(k))}, shape):"]
    if n == 0:
        views = [f"as_strided(a{i}, (), ())" for i in range(k)]
        walk.append("    yield " + (f"({', '.join(views)},)" if many else views[0]))
    else:
        walk.append("    for idx in np.ndindex(shape):")
        sl = ", ".join(f"idx[{d}]:idx[{d}] + 1" for d in range(n))
        views = [f"as_strided(a{i}[{sl}], (), ())" for i in range(k)]
        walk.append("        yield " + (f"({', '.join(views)},)" if many else views[0]))
    walker = register_jitable(_gen("_walk", "\n".join(walk) + "\n"))
    return _gen("impl", "\n".join(lines) + "\n", _walk=walker, _view_of=_view_of)
