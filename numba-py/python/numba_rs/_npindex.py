"""NumPy's advanced indexing beyond Numba's one 1-d index array: several integer index
arrays in one subscript (`a[rows, cols]`), integer arrays of any rank, lists of ints and
boolean masks among them, mixed with slices, ints, `...` and None (loaded as the fallback of
`operator.getitem` on arrays, after the native templates refuse a subscript).

NumPy's rules: the advanced indices (arrays, and ints when an array is present) are
broadcast together to one shape; that shape's axes replace the indexed axes where they
were when the advanced indices sit next to each other, else they come first; the result
is a copy. The code is generated per subscript pattern (every rank is static)."""

import operator

import numpy as np

from . import types
from ._npcommon import _gen
from .errors import TypingError
from .extending import overload


def _kind(t):
    if isinstance(t, (types.Integer, types.Boolean)) and not isinstance(t, types.Boolean):
        return "int"
    if isinstance(t, types.SliceType) or isinstance(t, types.SliceLiteral):
        return "slice"
    if isinstance(t, types.EllipsisType):
        return "ellipsis"
    if isinstance(t, (types.NoneType,)):
        return "none"
    if isinstance(t, types.Array):
        if isinstance(t.dtype, types.Boolean):
            return "mask"
        if isinstance(t.dtype, types.Integer):
            return "array"
    if isinstance(t, (types.List, types.UniTuple)) and isinstance(t.dtype, types.Integer):
        return "list"
    return None




def _plan(a, index):
    """The shared part of a subscript's code: the view `w` with the advanced axes first,
    the flat index arrays `f0..`, their broadcast shape `b`, `rest` and `n`; and where
    the broadcast axes go in the result. None when the native indexing handles it."""
    if not isinstance(a, types.Array):
        return None
    items = list(index.types) if isinstance(index, types.BaseTuple) else [index]
    kinds = [_kind(t) for t in items]
    if None in kinds:
        for t, k in zip(items, kinds):
            if k is None and not isinstance(t, (types.Integer, types.Boolean, types.SliceType)):
                # Numba's words for an index no array subscript takes.
                raise TypingError(f"Unsupported array index type {t} in {index}")
        return None
    n_arrays = sum(k in ("array", "list", "mask") for k in kinds)
    multi_dim = any(k == "array" and t.ndim > 1 for k, t in zip(kinds, items))
    # Only what the native indexing leaves out: more than one array, or an n-d one.
    # (One array with a None: the native indexing takes no None beside an array.)
    # (A list or tuple of integers: the native indexing takes none, NumPy takes it as an
    # index array.)
    if n_arrays < 2 and not multi_dim and "mask" not in kinds[1:] and not (
            n_arrays and "none" in kinds) and "list" not in kinds:
        return None
    if kinds.count("ellipsis") > 1:
        raise TypingError("an index can only have a single ellipsis ('...')")
    tup = isinstance(index, types.BaseTuple)
    ref = (lambda i: f"index[{i}]") if tup else (lambda i: "index")
    # The entries per array axis: Ellipsis expanded; a mask stands for its ndim axes; a
    # None (np.newaxis) is a new axis of length 1, indexed whole (NumPy's meaning).
    nones = kinds.count("none")
    ndim = a.ndim + nones
    used = sum(t.ndim if k == "mask" else (0 if k == "ellipsis" else 1)
               for k, t in zip(kinds, items))
    if used - nones > a.ndim:
        raise TypingError(f"too many indices for array: array is {a.ndim}-dimensional, "
                          f"but {used - nones} were indexed")
    entries = []  # (kind, expression) per axis of `a` with its new axes
    lines = []
    if nones:
        # `a` with a length-1 axis where each None stands (a view).
        spots, pos = [], 0
        for k, t in zip(kinds, items):
            if k == "none":
                spots.append(pos)
            pos += (ndim - used) if k == "ellipsis" else (t.ndim if k == "mask" else 1)
        expand = ", ".join("None" if j in spots else ":" for j in range(ndim))
        lines.append(f"    a = a[{expand}]")
    for i, (k, t) in enumerate(zip(kinds, items)):
        if k == "none":
            entries.append(("full", None))
        elif k == "ellipsis":
            entries += [("full", None)] * (ndim - used)
            used = ndim
        elif k == "mask":
            lines.append(f"    nz{i} = np.nonzero({ref(i)})")
            entries += [("adv", f"nz{i}[{j}]") for j in range(t.ndim)]
        elif k in ("array", "list"):
            entries.append(("adv", f"np.asarray({ref(i)})"))
        elif k == "int":
            entries.append(("adv", ref(i)))
        else:
            entries.append(("slice", ref(i)))
    entries += [("full", None)] * (ndim - len(entries))
    adv = [j for j, (k, _) in enumerate(entries) if k == "adv"]
    adjacent = adv == list(range(adv[0], adv[-1] + 1))
    # The basic part as a view keeping the advanced axes whole.
    basic = ", ".join(e if k == "slice" else ":" for k, e in entries)
    lines.append(f"    v = a[{basic},]" if len(entries) == 1 else f"    v = a[{basic}]")
    # Advanced axes first, in order.
    k_adv = len(adv)
    src = "(" + "".join(f"{j}, " for j in adv) + ")"
    dst = "(" + "".join(f"{j}, " for j in range(k_adv)) + ")"
    lines.append(f"    w = np.moveaxis(v, {src}, {dst})")
    # The index arrays broadcast to one shape.
    for q, j in enumerate(adv):
        lines.append(f"    i{q} = np.asarray({entries[j][1]})")
    lines.append("    try:")
    lines.append("        b = np.broadcast_shapes(" + "".join(f"i{q}.shape, " for q in range(k_adv)) + ")")
    lines.append("    except ValueError:")
    lines.append("        raise IndexError('shape mismatch: indexing arrays could not be broadcast "
                 "together')")
    for q in range(k_adv):
        lines.append(f"    f{q} = np.ascontiguousarray(np.broadcast_to(i{q}, b)).reshape(-1)")
    lines.append("    rest = w.shape[" + str(k_adv) + ":]")
    lines.append("    n = 1")
    lines.append("    for d in b:")
    lines.append("        n *= d")
    nb = max((t.ndim if k == "array" else 1 if k in ("list", "mask") else 0)
             for k, t in zip(kinds, items) if k in ("array", "list", "int", "mask"))
    # Adjacent advanced indices: their axes go where the first one was.
    first = adv[0]
    moved = adjacent and first > 0
    axes = ("(" + "".join(f"{j}, " for j in range(nb)) + ")",
            "(" + "".join(f"{first + j}, " for j in range(nb)) + ")")
    return lines, k_adv, adv, moved, axes


def _checks(k_adv, adv):
    out = []
    for q in range(k_adv):
        out.append(f"        j{q} = f{q}[p]")
        out.append(f"        if j{q} < -w.shape[{q}] or j{q} >= w.shape[{q}]:")
        out.append(f"            raise IndexError('index out of bounds for axis {adv[q]}')")
    return out


@overload(operator.getitem)
def _advanced_getitem(a, index):
    plan = _plan(a, index)
    if plan is None:
        return None
    body, k_adv, adv, moved, (src, dst) = plan
    lines = ["def impl(a, index):"] + body
    lines.append("    out = np.empty((n,) + rest, dtype=a.dtype)")
    lines.append("    for p in range(n):")
    # Every index checked, as NumPy's fancy indexing checks (Numba's too).
    lines += _checks(k_adv, adv)
    lines.append("        out[p] = w[" + ", ".join(f"j{q}" for q in range(k_adv)) + "]")
    lines.append("    res = out.reshape(b + rest)")
    if moved:
        lines.append(f"    return np.ascontiguousarray(np.moveaxis(res, {src}, {dst}))")
    else:
        lines.append("    return res")
    return _gen("impl", "\n".join(lines) + "\n")


@overload(operator.setitem)
def _advanced_setitem(a, index, value):
    plan = _plan(a, index)
    if plan is None:
        return None
    if a.readonly:
        raise TypingError(f"Cannot modify readonly array of type: {a}")
    body, k_adv, adv, moved, (src, dst) = plan
    lines = ["def impl(a, index, value):"] + body
    # The value broadcast to the selection's shape, read in the order of `b + rest`.
    lines.append("    shape = b + rest")
    if moved:
        lines.append(f"    target = np.moveaxis(np.empty(shape, dtype=np.bool_), {src}, {dst}).shape")
        lines.append("    vals = np.moveaxis(np.broadcast_to(np.asarray(value), target), "
                     f"{dst}, {src})")
    else:
        lines.append("    vals = np.broadcast_to(np.asarray(value), shape)")
    lines.append("    flat = np.ascontiguousarray(vals).reshape((n,) + rest)")
    lines.append("    for p in range(n):")
    lines += _checks(k_adv, adv)
    lines.append("        w[" + ", ".join(f"j{q}" for q in range(k_adv)) + "] = flat[p]")
    return _gen("impl", "\n".join(lines) + "\n")
