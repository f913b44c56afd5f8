"""Numba's types as Python objects (``numba.core.types``): the class hierarchy with
Numba's names (``Integer``, ``Array``, ``UniTuple``, ``Literal``, ...), the instances
(``int64``, ``float64[:]``) and the attributes extension code reads (``Array.dtype``,
``UniTuple.count``, ``IntegerLiteral.literal_value``).

Each object stands for one entry of the compiler's type table (its ``typecode``): one
object per typecode, so equality and hashing are the table's, and a type round-trips
between Python and the compiler with nothing lost. The Rust side hands types to Python
through :func:`_from_code`, which picks the class from the type's kind.
"""

import functools

from . import _numba_bridge
from ._numba_rs import _Type, _type_info, _type_make, type_from_name

# Marks this module as numba-rs's when the drop-in switch installs it as
# ``numba.core.types``.
_NUMBA_RS = True


class Signature:
    """A function signature, as ``int64(int64, float64)`` builds it (Numba's
    ``typing.Signature``): ``return_type`` and ``args``; prints as Numba prints one."""

    def __init__(self, return_type, args, recvr=None, pysig=None):
        self.return_type = return_type
        self.args = tuple(args)
        self.recvr = recvr
        self.pysig = pysig

    def __str__(self):
        args = ", ".join(str(a) for a in self.args)
        comma = "," if len(self.args) == 1 else ""
        return f"({args}{comma}) -> {self.return_type}"

    __repr__ = __str__

    def __eq__(self, other):
        return (
            isinstance(other, Signature)
            and self.return_type == other.return_type
            and self.args == other.args
        )

    def __hash__(self):
        return hash((self.return_type, self.args))

    def replace(self, **kwargs):
        return Signature(
            kwargs.get("return_type", self.return_type),
            kwargs.get("args", self.args),
            kwargs.get("recvr", self.recvr),
            kwargs.get("pysig", self.pysig),
        )


# -- the class hierarchy ------------------------------------------------------------------


def _field(i, doc=None):
    """A type's field ``i`` (of ``_type_info``) as a read-only attribute."""
    return property(lambda self: self._info[i], doc=doc)


def _type_field(i, doc=None):
    """A type's field ``i`` holding a typecode, as the type object."""
    return property(lambda self: _from_code(self._info[i]), doc=doc)


def _class_field(i):
    """A type's field ``i`` holding a class key, as the Python class."""

    def get(self):
        from ._numba_rs import _class_by_key

        return _class_by_key(self._info[i])

    return property(get)


class Type(_Type):
    """Base of every numba-rs type (Numba's ``types.Type``)."""

    mutable = False
    reflected = False

    def __new__(cls, *args, **kwargs):
        if cls.__module__ != __name__:
            return _user_type(cls, args, kwargs)
        return _Type.__new__(cls, *args)

    def __init__(self, *args, **kwargs):
        # Instances come from the type table (``_from_code``); constructors with
        # arguments return the table's object, which needs no further set-up. A user's
        # subclass names its type here (Numba's ``Type.__init__(self, name)``): the name
        # is read while the type is made (``_user_type``).
        name = kwargs.get("name", args[0] if args else None)
        if isinstance(name, str) and type(self).__module__ != __name__:
            self.__dict__["_numba_rs_name"] = name

    @functools.cached_property
    def _info(self):
        # A typecode's entry never changes: read once per object.
        return _type_info(self.typecode)[1]

    @property
    def name(self):
        return str(self)

    @property
    def key(self):
        return str(self)

    def is_precise(self):
        return True

    def __reduce__(self):
        return (_from_code_text, (str(self),))


class Dummy(Type):
    """A type with no data (Numba's ``types.Dummy``)."""


# A user's opaque type classes, by the key their types carry.
_OPAQUE_CLASSES = {}


def _class_key(cls):
    return f"{cls.__module__}.{cls.__qualname__}#{id(cls):x}"


def _user_type(cls, args, kwargs):
    """The type a user's ``Type`` subclass makes (``IntervalType()``, ``MyType("name")``):
    one table entry per class and name (and ``key``, when the class defines its own), as
    Numba's types are equal by their key. The class's ``__init__`` gives the name: it runs
    first on a stand-in object to read it, then (as Python calls it) on the type itself."""
    # Any valid typecode: the stand-in carries `none`'s while the name is read.
    probe = _Type.__new__(cls, none.typecode)
    cls.__init__(probe, *args, **kwargs)
    name = probe.__dict__.get("_numba_rs_name", cls.__name__)
    key = _class_key(cls)
    if getattr(cls, "key", None) is not Type.key:
        key = f"{key}|{probe.key!r}"
    _OPAQUE_CLASSES.setdefault(key, cls)
    t = _make("opaque", str(name), key)
    from . import _usertypes

    _usertypes._type_made(t)
    return t


class Opaque(Dummy):
    """A type of the user's (Numba's ``types.Opaque``): subclass it and make the type
    with a name, ``MyType("my_type")``; values map to it through ``typeof_impl``. Its
    values carry no data in compiled code: they are passed between jitted functions and
    handed to the overloads written for the type."""

    def __new__(cls, *args, **kwargs):
        return _user_type(cls, args, kwargs)

    @property
    def name(self):
        return self._info[0]


class Hashable(Type):
    pass


class Callable(Type):
    pass


class IterableType(Type):
    pass


class IteratorType(IterableType):
    pass


class Number(Hashable):
    """Integers, floats and complex numbers."""

    bitwidth = _field(0)


class Integer(Number):
    signed = _field(1)

    @property
    def maxval(self):
        bits = self.bitwidth
        return (1 << (bits - 1)) - 1 if self.signed else (1 << bits) - 1

    @property
    def minval(self):
        return -(1 << (self.bitwidth - 1)) if self.signed else 0

    @classmethod
    def from_bitwidth(cls, bitwidth, signed=True):
        return _from_name(("int%d" if signed else "uint%d") % bitwidth)


class Float(Number):
    pass


class Complex(Number):
    @property
    def underlying_float(self):
        return _from_name("float%d" % (self.bitwidth // 2))


class Boolean(Hashable):
    bitwidth = 8


class NoneType(Opaque):
    pass


class EllipsisType(Opaque):
    pass


class PyObject(Dummy):
    pass


class RawPointer(Opaque):
    pass


class VoidPtr(RawPointer):
    pass


class CPointer(Type):
    mutable = True

    def __new__(cls, dtype, addrspace=None):
        return _make("cpointer", _code(dtype))

    dtype = _type_field(0)


class ExternalFunctionPointer(Callable, Opaque):
    """A C function's address (a ctypes or cffi function), with its C signature."""

    @property
    def sig(self):
        return Signature(_from_code(self._info[1]), [_from_code(c) for c in self._info[0]])


class ArrayCTypes(Type):
    """``array.ctypes``: the array's data for C (``void*`` or a pointer of the dtype)."""

    @property
    def dtype(self):
        return _from_code(self._info[0]).dtype

    @property
    def ndim(self):
        return _from_code(self._info[0]).ndim


class Omitted(Opaque):
    """An argument left out, its parameter's default taken."""

    def __new__(cls, value):
        return _make("omitted", value)

    value = _field(0)


class Literal(Type):
    """A constant known at compile time (Numba's ``types.Literal``)."""

    literal_value = _field(0)

    @property
    def literal_type(self):
        return unliteral(self)


class IntegerLiteral(Literal, Integer):
    def __new__(cls, value):
        return _make("literal", int(value))

    @property
    def bitwidth(self):
        return 64

    @property
    def signed(self):
        return True


class BooleanLiteral(Literal, Boolean):
    def __new__(cls, value):
        return _make("literal", bool(value))


class UnicodeType(IterableType, Hashable):
    pass


class StringLiteral(Literal, Dummy):
    def __new__(cls, value):
        return _make("literal", str(value))


class ArrayCompatible(Type):
    pass


class Buffer(IterableType, ArrayCompatible):
    mutable = True

    dtype = _type_field(0)

    ndim = _field(1)

    layout = _field(2)

    readonly = _field(3)

    @property
    def is_c_contig(self):
        return self.layout == "C" or (self.ndim == 1 and self.layout in "CF")

    @property
    def is_f_contig(self):
        return self.layout == "F" or (self.ndim == 1 and self.layout in "CF")

    @property
    def is_contig(self):
        return self.layout in "CF"

    def copy(self, dtype=None, ndim=None, layout=None, readonly=None):
        return Array(
            self.dtype if dtype is None else dtype,
            self.ndim if ndim is None else ndim,
            self.layout if layout is None else layout,
            readonly=self.readonly if readonly is None else readonly,
        )


class Array(Buffer):
    """A NumPy array type: ``Array(dtype, ndim, layout, readonly=False)``."""

    def __new__(cls, dtype, ndim, layout, readonly=False, name=None, aligned=True):
        return _make("array", _code(dtype), int(ndim), str(layout), bool(readonly))

    @property
    def mutable(self):
        return not self.readonly

    @property
    def aligned(self):
        return True


class BaseTuple(Type):
    @property
    def types(self):
        raise NotImplementedError

    @property
    def count(self):
        return len(self.types)

    def __len__(self):
        return len(self.types)

    def __iter__(self):
        return iter(self.types)

    def __getitem__(self, i):
        if isinstance(i, (int, slice)) and not isinstance(i, bool):
            if isinstance(i, slice) and i.start is None and i.stop is None:
                return super().__getitem__(i)
            return self.types[i]
        return super().__getitem__(i)


class BaseAnonymousTuple(BaseTuple):
    pass


class UniTuple(BaseAnonymousTuple):
    """A tuple of ``count`` items of one type: ``UniTuple(dtype, count)``."""

    def __new__(cls, dtype, count):
        return _make("unituple", _code(dtype), int(count))

    dtype = _type_field(0)

    count = _field(1)

    @property
    def types(self):
        return (self.dtype,) * self.count


class Tuple(BaseAnonymousTuple):
    """A tuple of items of several types: ``Tuple([t1, t2])`` (a ``UniTuple`` when they
    are all one type, as in Numba)."""

    def __new__(cls, types):
        return _make("tuple", *[_code(t) for t in types])

    @property
    def types(self):
        return tuple(_from_code(c) for c in self._info[0])


class BaseNamedTuple(BaseTuple):
    @property
    def fields(self):
        return tuple(self._info[2])

    @property
    def types(self):
        return tuple(_from_code(c) for c in self._info[1])

    instance_class = _class_field(3)


class NamedUniTuple(BaseNamedTuple):
    @property
    def dtype(self):
        return self.types[0]


class NamedTuple(BaseNamedTuple):
    pass


class DeferredType:
    """A type defined later (Numba's ``deferred_type()``): a jitclass field may refer to
    its own class through it, ``optional(node_type)``, then
    ``node_type.define(Node.class_type.instance_type)``."""

    def __init__(self):
        self._define = None

    def get(self):
        if self._define is None:
            raise RuntimeError("deferred type not defined")
        return self._define

    def define(self, typ):
        if self._define is not None:
            raise TypeError("deferred type already defined")
        if not isinstance(typ, _Type):
            raise TypeError(f"arg is not a Type; got: {type(typ)}")
        self._define = typ

    def __repr__(self):
        return f"DeferredType#{id(self)}"


def deferred_type():
    """A new :class:`DeferredType`."""
    return DeferredType()


class _PendingOptional:
    """``Optional`` of a deferred type, resolved once the deferred type is defined."""

    def __init__(self, typ):
        self.type = typ


_PendingOptional.__name__ = "Optional"


class Optional(Type):
    """``Optional(t)``: a value of type ``t`` or None."""

    def __new__(cls, typ):
        if isinstance(typ, DeferredType):
            return _PendingOptional(typ)
        return _make("optional", _code(typ))

    type = _type_field(0)


class SliceType(Type):
    members = _field(0)


class SliceLiteral(Literal, SliceType):
    @property
    def literal_value(self):
        return slice(*self._info)


class RangeType(IterableType):
    pass


class RangeIteratorType(IteratorType):
    pass


class ArrayIterator(IteratorType):
    array_type = _type_field(0)


class Module(Dummy):
    @property
    def pymod(self):
        import importlib

        return importlib.import_module(self._info[0])


class Function(Callable, Opaque):
    """A function numba-rs types by a template (a builtin, a NumPy or math function)."""

    typing_key = _field(0)


class BoundFunction(Callable, Opaque):
    typing_key = _field(0)

    this = _type_field(1)


class Dispatcher(Callable, Opaque):
    """A jitted function used as a value."""

    @property
    def dispatcher(self):
        from .dispatcher import _dispatcher_by_id

        return _dispatcher_by_id(self._info[0])


class NumberClass(Callable, Opaque):
    def __new__(cls, instance_type):
        return _make("number_class", _code(instance_type))

    instance_type = _type_field(0)


class DType(Type):
    def __new__(cls, dtype):
        return _make("dtype", _code(dtype))

    dtype = _type_field(0)


class ExceptionClass(Callable, Opaque):
    pass


class ExceptionInstance(Type):
    pass


class EnumMember(Type):
    instance_class = _class_field(1)

    @property
    def dtype(self):
        return int64


class IntEnumMember(EnumMember, Integer):
    @property
    def bitwidth(self):
        return 64

    @property
    def signed(self):
        return True


class EnumClass(Callable, Opaque):
    instance_class = _class_field(1)


class IntEnumClass(EnumClass):
    pass


class NamedTupleClass(Callable, Opaque):
    instance_class = _class_field(1)


class Generator(IteratorType):
    yield_type = _type_field(1)


class UFunc(Callable, Opaque):
    pass


# Numba classes numba-rs has no instances of yet: kept so that extension code that names
# them (``isinstance(t, types.ListType)``, ``overload_method(types.DictType, ...)``)
# imports and runs; no numba-rs type is an instance of one.
class Container(IterableType):
    pass


class Sequence(Container):
    pass


class MutableSequence(Sequence):
    pass


class List(MutableSequence):
    """A Python list of one item type: ``List(dtype, reflected=False)`` (Numba's
    reflected list when it came from a Python argument)."""

    def __new__(cls, dtype, reflected=False, initial_value=None):
        return _make("list", _code(dtype), bool(reflected))

    dtype = _type_field(0)
    reflected = _field(1)
    # Numba's initial values of literal lists: numba-rs keeps none.
    initial_value = None


class ListType(IterableType):
    """Numba's typed list type: ``ListType(item_type)`` (``numba_rs.typed.List``)."""

    def __new__(cls, itemty):
        return _make("list_type", _code(itemty))

    item_type = _type_field(0)
    dtype = item_type


class DictType(IterableType):
    """Numba's typed dict type: ``DictType(key_type, value_type)``."""

    def __new__(cls, keyty, valty, initial_value=None):
        return _make("dict", _code(keyty), _code(valty))

    key_type = _type_field(0)
    value_type = _type_field(1)
    initial_value = None

    @property
    def keyvalue_type(self):
        return Tuple([self.key_type, self.value_type])


class LiteralStrKeyDict(Literal, Hashable):
    """A dict display with string-constant keys and values of several types (Numba's
    ``LiteralStrKeyDict``): read-only, its ``literal_value`` the dict of each key's literal
    type to its value's type (literal where the value is a constant). Not a tuple, though
    laid out as one."""

    mutable = False

    def __new__(cls, literal_value, value_index=None):
        keys = [str(k.literal_value if isinstance(k, Literal) else k) for k in literal_value]
        return _make(
            "literal_str_key_dict", keys, [_code(v) for v in literal_value.values()]
        )

    @property
    def literal_value(self):
        keys, _, literals = self._info
        return {literal(k): _from_code(c) for k, c in zip(keys, literals)}

    @property
    def types(self):
        return tuple(_from_code(c) for c in self._info[1])

    @property
    def count(self):
        return len(self._info[0])

    @property
    def fields(self):
        return tuple(self._info[0])

    def __len__(self):
        return self.count


class ClassInstanceType(Type):
    """The type of a jitclass's instances (Numba's ``ClassInstanceType``); each class has
    its own subclass, so ``overload_method`` can target one class's instances."""

    @property
    def class_type(self):
        return _JITCLASS_TYPES.get(self.typecode)

    @property
    def struct(self):
        """The fields: name to type, in order (Numba's ``ClassInstanceType.struct``)."""
        return dict(getattr(self.class_type, "struct", {}))

    @property
    def jit_props(self):
        return {}


class StructRef(Type):
    """A mutable struct passed by reference (Numba's ``types.StructRef``): subclass it,
    register the subclass (``numba_rs.experimental.structref.register``) and make types
    with their fields, ``MyStructType(fields=[("x", int64), ...])``. Types of one class
    with the same fields are one type; ``preprocess_fields`` may rewrite the fields
    (``unliteral`` them, or refer to the type itself through ``Optional(self)``).

    Instances are NRT-managed records of the fields, shared by reference between Python
    (a ``StructRefProxy``) and compiled code, as jitclass instances are."""

    def __new__(cls, fields):
        return _structref_type(cls, fields)

    def __init__(self, fields=None):
        pass  # the type comes from the table, made by `__new__`

    def preprocess_fields(self, fields):
        """Rewrite the fields before the type is made (the default keeps them)."""
        return fields

    @property
    def _fields(self):
        return _STRUCTREF_FIELDS[self.typecode]

    @property
    def name(self):
        return str(self)

    @name.setter
    def name(self, value):
        # `preprocess_fields` may name the type while it is made (Numba's pattern for a
        # type referring to itself); Numba's `StructRef.__init__` then names it from
        # its fields, as the compiler does.
        self.__dict__["_numba_rs_name"] = value

    @property
    def _typename(self):
        return type(self).__qualname__

    @property
    def field_dict(self):
        """The fields, name to type (read-only)."""
        import types as pytypes

        return pytypes.MappingProxyType(dict(self._fields))

    @property
    def instance_type(self):
        return self


# Each structref type's fields as given (name, type object), by typecode, and the type
# each class and field list made.
_STRUCTREF_FIELDS = {}
_STRUCTREF_TYPES = {}


def _structref_field(pair):
    try:
        name, typ = pair
    except (TypeError, ValueError):
        raise ValueError(f"expecting a (name, type) pair for a field, got {pair!r}") from None
    if not isinstance(name, str):
        raise ValueError("expecting a str for field name")
    if not isinstance(typ, _Type) and not (isinstance(typ, type) and issubclass(typ, Any)):
        nt = _numba_bridge.numba_types()
        if nt is None or not isinstance(typ, nt.Type):
            raise ValueError("expecting a Numba Type for field type")
        typ = _from_code(_code(typ))  # Numba's type object: its numba-rs counterpart
    return name, typ


def _structref_type(cls, fields):
    """The type ``cls(fields)`` makes: registered once per class and final field list; a
    type whose fields refer to itself (``preprocess_fields`` giving ``Optional(self)``)
    is its own each time, as Numba names such types by their identity."""
    from ._numba_rs import _structref_register, _jitclass_set_fields

    fields = tuple(map(_structref_field, fields))
    provisional = None
    if cls.preprocess_fields is not StructRef.preprocess_fields:
        # `preprocess_fields` sees the type itself: made first, fields given after.
        code = _structref_register(cls.__qualname__, [], None,
                                   f"{cls.__module__}.{cls.__qualname__}")
        _INSTANCE_CLASSES[code] = cls
        provisional = _from_code(code)
        fields = tuple(map(_structref_field, provisional.preprocess_fields(fields)))
    for name, t in fields:
        if isinstance(t, type):
            raise ValueError(f"field {name!r} of {cls.__qualname__} has no concrete type ({t.__name__})")
    codes = [(n, _code(t)) for n, t in fields]

    def mentions(code):
        def refers(c):
            kind, info = _type_info(c)
            return c == code or (kind == "optional" and info[0] == code)

        return any(refers(c) for _, c in codes)

    if provisional is not None and mentions(provisional.typecode):
        _jitclass_set_fields(provisional.typecode, codes)
        _STRUCTREF_FIELDS[provisional.typecode] = fields
        _structref_made(provisional)
        return provisional
    key = (_class_key(cls), tuple(codes))
    t = _STRUCTREF_TYPES.get(key)
    if t is None:
        if provisional is not None:
            _jitclass_set_fields(provisional.typecode, codes)
            code = provisional.typecode
        else:
            code = _structref_register(cls.__qualname__, codes, None,
                                       f"{cls.__module__}.{cls.__qualname__}")
            _INSTANCE_CLASSES[code] = cls
        _STRUCTREF_FIELDS[code] = fields
        t = _STRUCTREF_TYPES[key] = _from_code(code)
        _structref_made(t)
    return t


def _structref_made(t):
    """Give a new structref type the proxy class its type class boxes to, if defined."""
    from .experimental import structref

    structref._type_made(t)


# Each jitclass's `ClassInstanceType` subclass and class object, by typecode.
_INSTANCE_CLASSES = {}
_JITCLASS_TYPES = {}


class DictView(IterableType):
    """``keys[...]``, ``values[...]``, ``items[...]``: a dict's views."""

    parent = _type_field(0)


class Set(Container):
    """A Python set of one item type: ``Set(dtype, reflected=False)``."""

    def __new__(cls, dtype, reflected=False):
        return _make("set", _code(dtype), bool(reflected))

    dtype = _type_field(0)
    reflected = _field(1)


class Undefined(Dummy):
    pass


class Record(Type):
    pass


class NPDatetime(Type):
    """``datetime64[unit]``: ``NPDatetime('D')`` (``''`` for the generic unit)."""

    def __new__(cls, unit=""):
        return _make("npdatetime", unit)

    unit = _field(0)


class Record(Type):
    """Numba's ``Record``: one item of a NumPy structured dtype
    (``Record.from_dtype(np.dtype([('x', 'f8'), ('y', 'i4')]))``). In compiled code a
    record refers to its bytes: ``a[i].x = 1`` writes into the array."""

    def __new__(cls, dtype):
        return cls.from_dtype(dtype)

    @classmethod
    def from_dtype(cls, dtype):
        import numpy as np

        return _make("record_from_dtype", np.dtype(dtype))

    @property
    def dtype(self):
        """The NumPy structured dtype."""
        return _type_info(self.typecode)[1][0]

    @property
    def fields(self):
        """``{name: (type, offset)}``: every field (a title too, as Numba lists it)."""
        _, names, codes, offsets = _type_info(self.typecode)[1]
        return {n: (_from_code(c), o) for n, c, o in zip(names, codes, offsets)}

    def typeof(self, name):
        """The type of field ``name`` (Numba's ``Record.typeof``)."""
        return self.fields[name][0]

    def offset(self, name):
        """The byte offset of field ``name``."""
        return self.fields[name][1]

    @property
    def size(self):
        return self.dtype.itemsize

    def __len__(self):
        return len(self.fields)


class NumPyRandomGeneratorType(Type):
    """Numba's ``NumPyRandomGeneratorType``: a ``numpy.random.Generator``."""


class NPTimedelta(Type):
    """``timedelta64[unit]``: ``NPTimedelta('s')``."""

    def __new__(cls, unit=""):
        return _make("nptimedelta", unit)

    unit = _field(0)


class CharSeq(Type):
    """``[char x n]``: an item of a NumPy ``S<n>`` array."""

    def __new__(cls, count):
        return _make("char_seq", int(count))

    count = _field(0)


class UnicodeCharSeq(Type):
    """``[unichr x n]``: an item of a NumPy ``<U<n>`` array."""

    def __new__(cls, count):
        return _make("unicode_char_seq", int(count))

    count = _field(0)


class Bytes(Buffer):
    """``Bytes(uint8, 1d, C)``: an immutable ``bytes`` (read-only)."""

    def __new__(cls, dtype=None, ndim=1, layout="C", readonly=True):
        if (dtype is not None and _code(dtype) != _code(uint8)) or ndim != 1 or layout != "C":
            raise TypeError("numba-rs types bytes only as Bytes(uint8, 1d, C)")
        return _make("bytes")


class TypeRef(Dummy):
    pass


class Any(Dummy):
    pass


# -- the type table ----------------------------------------------------------------------

_CLASS_BY_KIND = {
    "boolean": Boolean,
    "integer": Integer,
    "float": Float,
    "complex": Complex,
    "none": NoneType,
    "unicode": UnicodeType,
    "bytes": Bytes,
    "char_seq": CharSeq,
    "unicode_char_seq": UnicodeCharSeq,
    "pyobject": PyObject,
    "ellipsis": EllipsisType,
    "cpointer": CPointer,
    "voidptr": VoidPtr,
    "range": RangeType,
    "range_iter": RangeIteratorType,
    "unituple": UniTuple,
    "list": List,
    "set": Set,
    "dict": DictType,
    "list_type": ListType,
    "dict_view": DictView,
    "literal_str_key_dict": LiteralStrKeyDict,
    "class_instance": ClassInstanceType,
    "undefined": Undefined,
    "tuple": Tuple,
    "module": Module,
    "function": Function,
    "number_class": NumberClass,
    "dispatcher": Dispatcher,
    "ufunc": UFunc,
    "exception_class": ExceptionClass,
    "exception_instance": ExceptionInstance,
    "integer_literal": IntegerLiteral,
    "boolean_literal": BooleanLiteral,
    "string_literal": StringLiteral,
    "optional": Optional,
    "omitted": Omitted,
    "array": Array,
    "slice": SliceType,
    "slice_literal": SliceLiteral,
    "dtype": DType,
    "npdatetime": NPDatetime,
    "record": Record,
    "np_generator": NumPyRandomGeneratorType,
    "nptimedelta": NPTimedelta,
    "bound_function": BoundFunction,
    "named_tuple_class": NamedTupleClass,
    "generator": Generator,
    "array_iter": ArrayIterator,
    "external_function_pointer": ExternalFunctionPointer,
    "array_ctypes": ArrayCTypes,
}

_by_code = {}


def _from_code(code):
    """The object for typecode ``code`` (made once)."""
    t = _by_code.get(code)
    if t is None:
        kind, info = _type_info(code)
        if kind == "named_tuple":
            cls = NamedUniTuple if len(set(info[1])) == 1 else NamedTuple
        elif kind == "enum_member":
            cls = IntEnumMember if info[2] else EnumMember
        elif kind == "enum_class":
            cls = IntEnumClass if info[2] else EnumClass
        elif kind == "opaque":
            cls = _OPAQUE_CLASSES.get(info[1], Opaque)
        elif kind == "class_instance":
            cls = _INSTANCE_CLASSES.get(code, ClassInstanceType)
        else:
            cls = _CLASS_BY_KIND.get(kind, Type)
        t = _Type.__new__(cls, code)
        _by_code[code] = t
        if not _numba_bridge._VIRTUAL:
            # Numba loaded since: its classes learn to recognise ours.
            _numba_bridge.numba_types()
    return t


def _make(kind, *args):
    return _from_code(_type_make(kind, args))


def _from_name(name):
    return type_from_name(name)


def _from_code_text(text):
    return _make("parse", text)


def _code(t):
    """The typecode of a type given as a numba-rs type, a Numba type object, a NumPy
    dtype or a scalar class."""
    if isinstance(t, _Type):
        return t.typecode
    from ._numba_bridge import from_foreign

    return from_foreign(t).typecode


def literal(value):
    """The literal type of a constant (Numba's ``types.literal``)."""
    return _make("literal", value)


def unliteral(t):
    """A literal type's base type; any other type itself."""
    if isinstance(t, IntegerLiteral):
        return int64
    if isinstance(t, BooleanLiteral):
        return boolean
    if isinstance(t, StringLiteral):
        return unicode_type
    return t


def maybe_literal(value):
    try:
        return literal(value)
    except TypeError:
        return None


# -- instances ---------------------------------------------------------------------------

boolean = bool_ = _from_name("bool")
int8 = _from_name("int8")
int16 = _from_name("int16")
int32 = _from_name("int32")
int64 = intp = int_ = _from_name("int64")
uint8 = byte = _from_name("uint8")
uint16 = _from_name("uint16")
uint32 = _from_name("uint32")
uint64 = uintp = _from_name("uint64")
float32 = _from_name("float32")
float64 = double = _from_name("float64")
complex64 = _from_name("complex64")
complex128 = _from_name("complex128")
none = void = _from_name("none")
pyobject = ffi_forced_object = _from_name("pyobject")
unicode_type = string = _from_name("unicode_type")
ellipsis = _from_name("ellipsis")
intc = int32
uintc = uint32
long_ = longlong = ssize_t = int64
ulong = ulonglong = size_t = uint64
short = int16
ushort = uint16
char = int8
uchar = uint8
float_ = float32
slice2_type = _make("slice", 2)
slice3_type = _make("slice", 3)
voidptr = _make("voidptr")
range_state64_type = range_state_type = _make("range")
range_iter64_type = range_iter_type = _make("range_iter")

signed_domain = frozenset([int8, int16, int32, int64])
unsigned_domain = frozenset([uint8, uint16, uint32, uint64])
integer_domain = signed_domain | unsigned_domain
real_domain = frozenset([float32, float64])
complex_domain = frozenset([complex64, complex128])
number_domain = real_domain | integer_domain | complex_domain

# Numba's short aliases.
b1 = boolean
i1, i2, i4, i8 = int8, int16, int32, int64
u1, u2, u4, u8 = uint8, uint16, uint32, uint64
f4, f8 = float32, float64
c8, c16 = complex64, complex128

optional = Optional

_HIDDEN = ("Signature",)
__all__ = [
    n
    for n, v in list(globals().items())
    if not n.startswith("_") and n not in _HIDDEN and isinstance(v, _Type)
] + ["deferred_type", "optional"]
