"""What numba-rs's NumPy overload modules share (``_npfuncs``, ``_npshape``,
``_npselect``, ``_npaxis``, ``_nplinalg``, ``_npindex``): the type tests their typing
functions make, source generation for implementations whose tuples have one entry per
dimension (the rank is a compile-time fact), and NumPy's axis normalisation."""

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import types
from .extending import register_jitable


def _is_array(t):
    return isinstance(t, types.Array)


def _is_number(t):
    return isinstance(t, (types.Number, types.Boolean))


def _is_int(t):
    return isinstance(t, (types.Integer, types.Boolean))


def _can_asarray(t):
    """What ``np.asarray`` takes in compiled code (Numba's ``type_can_asarray``): arrays,
    sequences, tuples, string constants, numbers, bools and typed lists."""
    return isinstance(t, (types.Array, types.Sequence, types.BaseTuple, types.StringLiteral,
                          types.Number, types.Boolean, types.ListType))


def _dtype_of(t):
    """The scalar class a ``dtype=`` argument names (a number class, a dtype object or a
    constant string), or None."""
    if isinstance(t, types.NumberClass):
        return np.dtype(str(t.instance_type)).type
    if isinstance(t, types.DType):
        return np.dtype(str(t.dtype)).type
    if isinstance(t, types.StringLiteral):
        return np.dtype(t.literal_value).type
    return None


def _is_none(t):
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


def _int_tuple(t):
    """The length of a tuple of integers, or None."""
    if isinstance(t, types.BaseTuple) and all(_is_int(x) for x in t.types):
        return len(t.types)
    return None


def _ints_src(t, name):
    """An integer or a tuple of integers argument named `name`: its length and the source
    of it as a tuple (``(name,)`` for an integer); ``(None, None)`` for anything else."""
    if _is_int(t):
        return 1, f"({name},)"
    n = _int_tuple(t)
    if n is None:
        return None, None
    return n, name


def _gen(name, src, **env):
    """The function `name` defined by generated source (`np` and `as_strided` in scope)."""
    ns = {"np": np, "as_strided": as_strided, **env}
    exec(compile(src, f"<numba_rs.{name}>", "exec"), ns)
    return ns[name]


def _tup(n, fmt):
    """``(e0, e1, ...,)``: `fmt` formatted with ``i`` for each of `n` entries."""
    return "(" + "".join(fmt.format(i=i) + ", " for i in range(n)) + ")"


@register_jitable
def _axis(axis, ndim, what):
    # NumPy's normalisation of a possibly negative axis (its AxisError is a ValueError).
    if axis < -ndim or axis >= ndim:
        raise ValueError(what)
    if axis < 0:
        return axis + ndim
    return axis


_AXIS_ERROR = np.exceptions.AxisError


@register_jitable
def _axis_np(axis, ndim):
    # NumPy's `normalize_axis_index`, with its AxisError (a ValueError and IndexError)
    # and message.
    if axis < -ndim or axis >= ndim:
        raise _AXIS_ERROR(f"axis {axis} is out of bounds for array of dimension {ndim}")
    if axis < 0:
        return axis + ndim
    return axis
