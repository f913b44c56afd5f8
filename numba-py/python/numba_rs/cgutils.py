"""The code-generation helpers extension code calls from ``lower_builtin``, ``box`` and
``unbox`` functions (Numba's ``numba.core.cgutils``), over llvmlite's IR builder and
numba-rs's data models: struct proxies for ``StructModel`` types, null checks,
stack slots and branch helpers."""

from contextlib import contextmanager


def _ir():
    from llvmlite import ir

    return ir


def __getattr__(name):
    if name == "true_bit":
        return _ir().Constant(_ir().IntType(1), 1)
    if name == "false_bit":
        return _ir().Constant(_ir().IntType(1), 0)
    if name == "voidptr_t":
        return _ir().IntType(8).as_pointer()
    raise AttributeError(f"module 'numba_rs.cgutils' has no attribute {name!r}")


def get_null_value(ltype):
    return _ir().Constant(ltype, None)


def is_null(builder, val):
    return builder.icmp_unsigned("==", val, get_null_value(val.type))


def is_not_null(builder, val):
    return builder.icmp_unsigned("!=", val, get_null_value(val.type))


def alloca_once(builder, ty, size=None, name="", zfill=False):
    """A stack slot made once, in the function's entry block."""
    with builder.goto_entry_block():
        ptr = builder.alloca(ty, size=size, name=name)
        if zfill:
            builder.store(_ir().Constant(ty, None), ptr)
    return ptr


def alloca_once_value(builder, value, name="", zfill=False):
    ptr = alloca_once(builder, value.type, name=name, zfill=zfill)
    builder.store(value, ptr)
    return ptr


def pack_array(builder, values, ty=None):
    ty = ty or values[0].type
    agg = _ir().Constant(_ir().ArrayType(ty, len(values)), _ir().Undefined)
    for i, v in enumerate(values):
        agg = builder.insert_value(agg, v, i)
    return agg


def pack_struct(builder, values):
    agg = _ir().Constant(_ir().LiteralStructType([v.type for v in values]), _ir().Undefined)
    for i, v in enumerate(values):
        agg = builder.insert_value(agg, v, i)
    return agg


def unpack_tuple(builder, tup, count=None):
    if count is None:
        count = len(tup.type.elements)
    return [builder.extract_value(tup, i) for i in range(count)]


@contextmanager
def if_likely(builder, pred):
    with builder.if_then(pred, likely=True):
        yield


@contextmanager
def if_unlikely(builder, pred):
    with builder.if_then(pred, likely=False):
        yield


def create_struct_proxy(fe_type, kind="value"):
    """A class whose instances read and write the members of a ``StructModel`` type's
    value by name: ``proxy = create_struct_proxy(t)(context, builder, value=v)``,
    ``proxy.lo = x``, ``proxy._getvalue()``."""
    from ._usertypes import _struct_fields

    names = _struct_fields(fe_type)

    class StructProxy(_StructProxy):
        _fe_type = fe_type
        _names = names

    StructProxy.__name__ = f"StructProxy({fe_type})"
    return StructProxy


class _StructProxy:
    _fe_type = None
    _names = ()

    def __init__(self, context, builder, value=None, ref=None):
        from ._intrinsic import _ll

        object.__setattr__(self, "_builder", builder)
        object.__setattr__(self, "_context", context)
        llty = _ll(self._fe_type)
        if ref is None:
            ref = alloca_once(builder, llty, zfill=True)
            if value is not None:
                builder.store(value, ref)
        object.__setattr__(self, "_ref", ref)

    def _field(self, name):
        try:
            i = self._names.index(name)
        except ValueError:
            raise AttributeError(f"{self._fe_type} has no field {name!r}") from None
        int32 = _ir().IntType(32)
        return self._builder.gep(self._ref, [int32(0), int32(i)], inbounds=True)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self._builder.load(self._field(name))

    def __setattr__(self, name, value):
        if name.startswith("_"):
            object.__setattr__(self, name, value)
            return
        self._builder.store(value, self._field(name))

    def __getitem__(self, i):
        return getattr(self, self._names[i])

    def __setitem__(self, i, value):
        setattr(self, self._names[i], value)

    def _getvalue(self):
        return self._builder.load(self._ref)

    def _getpointer(self):
        return self._ref

    def _setvalue(self, value):
        self._builder.store(value, self._ref)
