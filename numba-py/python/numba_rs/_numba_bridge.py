"""numba-rs types to and from Numba's own type objects, for extension code written
against an installed Numba (``from numba.core import types``): its typing functions
receive Numba's objects, so ``isinstance(x, types.Integer)`` answers as under Numba, and
the types it gives back (signatures, ``types.Array(...)``) are read back into numba-rs's.

Only types both have cross over; anything else stays a numba-rs object.
"""

import ast
import sys
import types as _pytypes


def numba_types():
    """Numba's real ``numba.core.types`` when Numba is imported (not numba-rs standing in
    for it through the drop-in switch), else None."""
    m = sys.modules.get("numba.core.types")
    if m is None or getattr(m, "_NUMBA_RS", False):
        return None
    global _VIRTUAL
    if not _VIRTUAL:
        _VIRTUAL = True
        _register_virtual_subclasses(m)
    return m


_VIRTUAL = False

# numba-rs's type classes that answer ``isinstance`` for Numba's class of the same name
# (code written against Numba checks a dispatcher's signatures with Numba's classes).
_VIRTUAL_CLASSES = (
    "Literal", "IntegerLiteral", "StringLiteral", "BooleanLiteral", "Number", "Integer",
    "Float", "Complex", "Boolean", "Array", "BaseTuple", "UniTuple", "Tuple", "Optional",
    "NoneType", "UnicodeType", "ClassInstanceType",
)


def _register_virtual_subclasses(nt):
    from . import types as rt

    for name in _VIRTUAL_CLASSES:
        ours, theirs = getattr(rt, name, None), getattr(nt, name, None)
        if ours is not None and hasattr(theirs, "register"):
            theirs.register(ours)


def _numba_module(mod):
    return isinstance(mod, str) and (mod == "numba" or mod.startswith("numba."))


def _from_numba(value):
    """Whether ``value`` is Numba's: a module of the package, or a class (or instance of
    one) with a Numba class among its bases (a ``types.Opaque`` subclass made with
    ``type(...)`` is named after its metaclass's module)."""
    if isinstance(value, _pytypes.ModuleType):
        return _numba_module(value.__name__)
    if _numba_module(getattr(value, "__module__", None)):
        return True
    if isinstance(value, (_pytypes.FunctionType, _pytypes.BuiltinFunctionType)):
        return False
    cls = value if isinstance(value, type) else type(value)
    # numba-rs's own classes (its errors derive from Numba's when Numba is loaded) are
    # not Numba's.
    if str(getattr(cls, "__module__", "")).startswith("numba_rs"):
        return False
    return any(_numba_module(getattr(b, "__module__", None)) for b in cls.__mro__[1:])


def wants_numba_types(func):
    """Whether ``func`` (a typing function) reads Numba's own types: it or the function
    around it names something from the ``numba`` package."""
    if numba_types() is None:
        return False
    seen = set()
    while func is not None and id(func) not in seen:
        seen.add(id(func))
        g = getattr(func, "__globals__", None) or {}
        code = getattr(func, "__code__", None)
        names = code.co_names if code is not None else g.keys()
        for n in names:
            if n in g and _from_numba(g[n]):
                return True
        for cell in getattr(func, "__closure__", None) or ():
            try:
                if _from_numba(cell.cell_contents):
                    return True
            except ValueError:
                pass
        func = getattr(func, "__wrapped__", None)
    return False


# Numba's opaque type objects behind numba-rs's, by typecode: typing functions written
# against Numba get their own objects back.
_NUMBA_OPAQUE = {}


def to_numba(t):
    """Numba's type object for a numba-rs type (the numba-rs object when Numba has no
    counterpart)."""
    nt = numba_types()
    if nt is None:
        return t
    from . import types as rt

    if isinstance(t, rt.NoneType):
        return nt.none
    if isinstance(t, rt.Opaque):
        return _NUMBA_OPAQUE.get(t.typecode, t)
    try:
        if isinstance(t, rt.LiteralStrKeyDict):
            return nt.LiteralStrKeyDict(
                {nt.literal(k.literal_value): to_numba(v) for k, v in t.literal_value.items()}
            )
        if isinstance(t, rt.Literal) and not isinstance(t, rt.SliceLiteral):
            return nt.literal(t.literal_value)
        if isinstance(t, (rt.Integer, rt.Float, rt.Complex, rt.Boolean)):
            return getattr(nt, str(t))
        if isinstance(t, rt.NoneType):
            return nt.none
        if isinstance(t, rt.UnicodeType):
            return nt.unicode_type
        if isinstance(t, rt.Array):
            return nt.Array(to_numba(t.dtype), t.ndim, t.layout, readonly=t.readonly)
        if isinstance(t, rt.UniTuple):
            return nt.UniTuple(to_numba(t.dtype), t.count)
        if isinstance(t, rt.Tuple):
            return nt.Tuple([to_numba(x) for x in t.types])
        if isinstance(t, rt.BaseNamedTuple):
            items = [to_numba(x) for x in t.types]
            cls = t.instance_class
            if isinstance(t, rt.NamedUniTuple):
                return nt.NamedUniTuple(items[0], len(items), cls)
            return nt.NamedTuple(items, cls)
        if isinstance(t, rt.Optional):
            return nt.Optional(to_numba(t.type))
        if isinstance(t, rt.Omitted):
            try:
                return nt.Omitted(ast.literal_eval(t.value))
            except (ValueError, SyntaxError):
                return t
        if isinstance(t, rt.SliceType):
            return nt.slice3_type if t.members == 3 else nt.slice2_type
        if isinstance(t, rt.DType):
            return nt.DType(to_numba(t.dtype))
        if isinstance(t, rt.NumberClass):
            return nt.NumberClass(to_numba(t.instance_type))
        if isinstance(t, rt.EnumMember):
            cls = nt.IntEnumMember if isinstance(t, rt.IntEnumMember) else nt.EnumMember
            return cls(t.instance_class, nt.int64)
        if isinstance(t, rt.CPointer):
            return nt.CPointer(to_numba(t.dtype))
        if isinstance(t, rt.VoidPtr):
            return nt.voidptr
        if isinstance(t, rt.EllipsisType):
            return nt.ellipsis
        if isinstance(t, rt.RangeType):
            return nt.range_state64_type
        if isinstance(t, rt.DictType):
            return nt.DictType(to_numba(t.key_type), to_numba(t.value_type))
        if isinstance(t, rt.ListType):
            return nt.ListType(to_numba(t.item_type))
    except Exception:  # a Numba constructor refused: keep numba-rs's object
        return t
    return t


def from_foreign(x):
    """A numba-rs type from a Numba type object, a NumPy dtype or scalar class, a Python
    number class or a type string (``'float64[:]'``)."""
    from . import types as rt

    if isinstance(x, rt._Type):
        return x
    if isinstance(x, str):
        from ._numba_rs import parse_signature

        _, args = parse_signature(f"({x},)")
        if len(args) != 1:
            raise TypeError(f"{x!r} is not one type")
        return args[0]
    builtin = {int: rt.int64, float: rt.float64, bool: rt.boolean, complex: rt.complex128}
    if x in builtin:
        return builtin[x]
    nt = numba_types()
    if nt is not None and isinstance(x, nt.Type):
        return _from_numba_type(nt, rt, x)
    try:
        import numpy as np

        return rt._from_name(np.dtype(x).name)
    except TypeError:
        pass
    raise TypeError(f"numba-rs cannot use {x!r} as a type")


def _from_numba_type(nt, rt, x):
    if isinstance(x, nt.LiteralStrKeyDict):
        return rt.LiteralStrKeyDict(
            {k: from_foreign(v) for k, v in x.literal_value.items()}
        )
    if isinstance(x, nt.Literal) and not isinstance(x, nt.SliceLiteral):
        return rt.literal(x.literal_value)
    if isinstance(x, nt.NumPyRandomGeneratorType):
        return rt._make("parse", "NumPyRandomGeneratorType")
    if isinstance(x, nt.Record):
        return rt._make("record_from_dtype", x.dtype)
    if isinstance(x, nt.NestedArray):
        raise TypeError(f"numba-rs takes nested arrays only as record fields, not {x}")
    if isinstance(x, nt.Array):
        return rt.Array(from_foreign(x.dtype), x.ndim, x.layout, readonly=not x.mutable)
    if isinstance(x, nt.UniTuple):
        return rt.UniTuple(from_foreign(x.dtype), x.count)
    if isinstance(x, nt.BaseAnonymousTuple):
        return rt.Tuple([from_foreign(i) for i in x.types])
    if isinstance(x, nt.Optional):
        return rt.Optional(from_foreign(x.type))
    if isinstance(x, nt.ListType):
        return rt.ListType(from_foreign(x.item_type))
    if isinstance(x, nt.List):
        return rt.List(from_foreign(x.dtype), reflected=x.reflected)
    if isinstance(x, nt.Set):
        return rt.Set(from_foreign(x.dtype), reflected=x.reflected)
    if isinstance(x, nt.DictType):
        return rt.DictType(from_foreign(x.key_type), from_foreign(x.value_type))
    if isinstance(x, nt.CPointer):
        return rt.CPointer(from_foreign(x.dtype))
    if isinstance(x, nt.DType):
        return rt.DType(from_foreign(x.dtype))
    if isinstance(x, nt.NumberClass):
        return rt.NumberClass(from_foreign(x.instance_type))
    if x == nt.voidptr:
        return rt.voidptr
    if isinstance(x, nt.NoneType):
        return rt.none
    if not type(x).__module__.startswith("numba.core"):
        # A user's type class (an Opaque subclass, or any Type with a StructModel).
        return _from_numba_user_type(rt, x)
    try:
        return rt._make("parse", str(x))
    except TypeError:
        raise TypeError(f"numba-rs has no counterpart of Numba's type {x}") from None


def _from_numba_user_type(rt, x):
    """numba-rs's type for a user's Numba type object: one with Numba's ``OpaqueModel``
    (no data) or ``StructModel`` (its members laid out by numba-rs's data models)."""
    from numba.core.datamodel import default_manager, models

    try:
        model = default_manager.lookup(x)
    except Exception:
        raise TypeError(f"numba-rs has no counterpart of Numba's type {x}") from None
    if not isinstance(model, (models.OpaqueModel, models.StructModel)):
        raise TypeError(
            f"numba-rs supports Numba's user types with OpaqueModel or StructModel; {x} "
            f"has {type(model).__name__}"
        )
    key = "numba:" + rt._class_key(type(x))
    if getattr(type(x), "key", None) is not getattr(nt_base(), "key", None):
        key = f"{key}|{x.key!r}"
    t = rt._make("opaque", str(x), key)
    if t.typecode not in _NUMBA_OPAQUE:
        _NUMBA_OPAQUE[t.typecode] = x
        if isinstance(model, models.StructModel):
            from . import _usertypes

            members = [from_foreign(m) for m in model._members]
            _usertypes._register_struct(t, tuple(model._fields), members)
    return t


def rt_type():
    from . import types as rt

    return rt._Type


def nt_base():
    return numba_types().Type
