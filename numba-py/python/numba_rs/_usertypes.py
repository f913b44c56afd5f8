"""Types a user defines for their own classes: Numba's low-level extension API.

- ``typeof_impl.register(MyClass)``: the type of an argument of the class;
- a ``types.Type`` (or ``types.Opaque``) subclass for the type, and
  ``register_model(MyType)`` with ``models.StructModel`` (a struct of typed members, laid
  out by numba-rs's data models) or ``models.OpaqueModel`` (no data);
- ``make_attribute_wrapper(MyType, "member", "attr")``: ``value.attr`` reads a member;
- ``type_callable(MyClass)`` with ``lower_builtin(MyClass, *types)``: calling the class in
  jitted code builds a value (the lowering writes its body with llvmlite, as an
  ``@intrinsic`` does);
- ``unbox(MyType)`` / ``box(MyType)`` with ``NativeValue``: converting arguments and
  results, written with llvmlite against ``c.pyapi`` (CPython's C API by name) and
  ``c.context``; numba-rs compiles each once per type (numba-lower's ``boxing``).

When Numba is loaded, a class registered with Numba's own ``typeof_impl`` whose type is
a Numba ``types.Opaque`` with Numba's ``OpaqueModel`` is accepted too.
"""

import ctypes
import functools
import inspect
import itertools

from . import _numba_bridge, models
from .errors import TypingError


@functools.singledispatch
def typeof_impl(val, c):
    """The numba-rs type of a Python value of a registered class (Numba's
    ``typeof_impl``): ``@typeof_impl.register(MyClass)`` registers
    ``fn(val, c) -> type``."""
    return None


# What `typeof_impl` answers for a class nobody registered.
_NO_TYPEOF = typeof_impl.dispatch(object)


class _TypeofContext:
    """The ``c`` a typeof function receives (Numba's ``_TypeofContext``)."""

    purpose = "argument"


def _typecode_of_value(value):
    """The typecode of a value of a user's class, or None (called by numba-py when its
    own typeof does not know the value)."""
    impl = typeof_impl.dispatch(type(value))
    if impl is not _NO_TYPEOF:
        t = impl(value, _TypeofContext())
        if t is None:
            return None
        return _numba_bridge.from_foreign(t).typecode
    return _numba_typecode(value)


def _numba_typecode(value):
    """Numba's type of the value through Numba's own ``typeof`` when Numba is loaded,
    as a numba-rs type where it has a counterpart (an opaque type with OpaqueModel)."""
    if _numba_bridge.numba_types() is None:
        return None
    try:
        from numba.core.typing.typeof import Purpose, typeof

        t = typeof(value, Purpose.argument)
    except Exception:
        return None
    if t is None:
        return None
    try:
        return _numba_bridge.from_foreign(t).typecode
    except TypeError:
        return None


class _AsNumbaType:
    """``as_numba_type.register(MyClass, my_type)`` (Numba's ``as_numba_type``): the type
    a class stands for in annotations."""

    def __init__(self):
        self._table = {}

    def register(self, cls, t):
        self._table[cls] = t

    def __call__(self, cls):
        try:
            return self._table[cls]
        except KeyError:
            raise TypingError(f"Cannot convert {cls!r} to a numba-rs type") from None


as_numba_type = _AsNumbaType()


# -- models ---------------------------------------------------------------------------

_MODELS = {}        # type class -> model class
_USER_TYPES = {}    # typecode -> type object (every user type made so far)
_FIELDS = {}        # typecode -> member names of a StructModel type


def _by_mro(table, t):
    for klass in type(t).__mro__:
        if klass in table:
            return table[klass]
    return None


_MEMBERS = {}       # typecode -> member types of a StructModel type


def _register_struct(t, fields, members):
    """Lay the user type ``t`` out as a struct of these named members."""
    from ._numba_rs import _register_user_members
    from .types import _code

    _FIELDS[t.typecode] = tuple(fields)
    _MEMBERS[t.typecode] = tuple(members)
    _register_user_members(t.typecode, [_code(m) for m in members])


def _apply_model(t):
    model = _by_mro(_MODELS, t)
    if model is None or not issubclass(model, models.StructModel):
        return
    m = model(None, t)
    _register_struct(t, m._fields, m._members)


def _type_made(t):
    """A user type was made (numba_rs.types): apply what is registered for its class."""
    if t.typecode in _USER_TYPES:
        return
    _USER_TYPES[t.typecode] = t
    _apply_model(t)


def _types_of(cls):
    return [t for t in list(_USER_TYPES.values()) if isinstance(t, cls)]


def register_model(fe_type_class):
    """``@register_model(MyType)`` on ``models.StructModel`` / ``models.OpaqueModel`` (or
    a subclass): how values of the type are laid out."""

    def decorate(model):
        if not (isinstance(model, type) and issubclass(model, (models.StructModel, models.OpaqueModel))):
            raise NotImplementedError(
                f"register_model({getattr(fe_type_class, '__name__', fe_type_class)}): "
                f"numba-rs supports models.StructModel and models.OpaqueModel, not "
                f"{getattr(model, '__name__', model)}"
            )
        _MODELS[fe_type_class] = model
        for t in _types_of(fe_type_class):
            _apply_model(t)
        return model

    return decorate


def _struct_fields(t):
    from .types import _from_code, _code

    code = _code(t)
    fields = _FIELDS.get(code)
    if fields is None:
        raise TypingError(f"{_from_code(code)} has no StructModel registered")
    return fields


def _struct_member_types(t):
    from .types import _code

    return _MEMBERS[_code(t)]


def make_attribute_wrapper(typeclass, struct_attr, python_attr):
    """``value.python_attr`` in jitted code reads the member ``struct_attr`` of a
    ``StructModel`` type."""
    from .extending import overload_attribute

    reader = _field_reader(struct_attr)

    @overload_attribute(typeclass, python_attr)
    def _attribute(obj):
        if struct_attr not in _FIELDS.get(obj.typecode, ()):
            return None
        return _getter(reader)


def _adopt_numba_attribute(t, name):
    """For a Numba user type: make ``value.name`` an overload attribute whose code is the
    lowering Numba's registry holds (``lower_getattr``, as ``make_attribute_wrapper``
    registers it), typed by Numba's typing context. False when Numba has none."""
    x = _numba_bridge._NUMBA_OPAQUE.get(getattr(t, "typecode", None))
    if x is None:
        return False
    from numba.core import imputils
    from numba.core.registry import cpu_target

    impl = None
    for fn, attr, tys in list(imputils.builtin_registry.getattrs):
        if attr == name and tys and isinstance(x, tys[0]):
            impl = fn
            break
    if impl is None:
        return False
    try:
        cpu_target.typing_context.refresh()
        attrty = cpu_target.typing_context.resolve_getattr(x, name)
    except Exception:
        return False
    if attrty is None:
        return False
    from ._intrinsic import Intrinsic
    from .extending import overload_attribute
    from .types import Signature

    result = _numba_bridge.from_foreign(attrty)

    def typing(tyctx, obj):
        def codegen(context, builder, sig, args):
            return impl(context, builder, x, args[0], name)

        return Signature(result, (obj,)), codegen

    typing.__name__ = typing.__qualname__ = f"get_{name}"
    reader = Intrinsic(typing)

    @overload_attribute(type(x), name)
    def _attribute(obj):
        return _getter(reader)

    return True


def _getter(reader):
    def get(obj):
        return reader(obj)

    return get


@functools.lru_cache(maxsize=None)
def _field_reader(name):
    from ._intrinsic import Intrinsic
    from .types import Signature

    def typing(tyctx, obj):
        fields = _struct_fields(obj)
        i = fields.index(name)
        member = _struct_member_types(obj)[i]

        def codegen(context, builder, sig, args):
            return builder.extract_value(args[0], i)

        return Signature(member, (obj,)), codegen

    typing.__name__ = typing.__qualname__ = f"get_{name}"
    return Intrinsic(typing)


# -- calling a class in jitted code ------------------------------------------------------

_TYPERS = {}     # Python callable -> [typer]
_LOWERINGS = {}  # Python callable -> [(argument specs, implementation)]
_CALLABLES = {}  # Python callable -> its intrinsic


def type_callable(func):
    """``@type_callable(MyClass)`` on ``fn(context) -> typer``: ``typer(*argtypes)`` gives
    the type of ``MyClass(...)`` in jitted code (None: not these arguments)."""

    def decorate(typing):
        from ._intrinsic import CodegenContext

        typer = typing(CodegenContext.typing_context)
        _TYPERS.setdefault(func, []).append(typer)
        return typing

    return decorate


def lower_builtin(func, *argtys):
    """``@lower_builtin(MyClass, types.Float, ...)`` on ``impl(context, builder, sig,
    args)``: the code of a call ``type_callable`` typed, written with llvmlite."""

    def decorate(impl):
        _LOWERINGS.setdefault(func, []).append((argtys, impl))
        return impl

    return decorate


def _spec_matches(spec, t):
    from . import types as rt

    if spec is getattr(rt, "Any", None):
        return True
    if isinstance(spec, type):
        if isinstance(t, spec) or isinstance(rt.unliteral(t), spec):
            return True
        # A Numba class matches Numba's counterpart of the type (a user's Numba type).
        return _numba_bridge.numba_types() is not None and isinstance(
            _numba_bridge.to_numba(rt.unliteral(t)), spec
        )
    try:
        spec = _numba_bridge.from_foreign(spec)
    except TypeError:
        return False
    return spec == t or spec == rt.unliteral(t)


def _lowering_for(func, args):
    for specs, impl in reversed(_LOWERINGS.get(func, ())):
        if len(specs) == len(args) and all(_spec_matches(s, a) for s, a in zip(specs, args)):
            return impl
    return None


def _callable_key(cls):
    """The intrinsic key of a class ``type_callable`` made callable (numba-py asks when it
    meets the class as a global), or None."""
    try:
        known = cls in _TYPERS or _from_numba_registries(cls)
    except TypeError:  # unhashable
        return None
    if not known:
        return None
    intr = _CALLABLES.get(cls)
    if intr is None:
        intr = _CALLABLES[cls] = _callable_intrinsic(cls)
    return intr._numba_rs_intrinsic


def _from_numba_registries(func):
    """Adopt what Numba's own ``type_callable`` / ``lower_builtin`` registered for
    ``func`` (extension code imported from Numba when Numba is loaded): its typer, given
    Numba's types, and its lowerings, run with numba-rs's codegen context."""
    nt = _numba_bridge.numba_types()
    if nt is None:
        return False
    from numba.core import imputils
    from numba.core.typing import templates

    typers = []
    for key, fnty in list(templates.builtin_registry.globals):
        if key is not func or not isinstance(fnty, nt.Function):
            continue
        tmpl = fnty.templates[0] if getattr(fnty, "templates", None) else None
        generic = getattr(tmpl, "generic", None)
        if tmpl is None or generic is None:
            continue
        try:
            typer = generic(tmpl(_NumbaTypingContext()))
        except Exception:
            continue
        typers.append(_numba_typer(typer))
    if not typers:
        return False
    _TYPERS[func] = typers
    for impl, key, argtys in list(imputils.builtin_registry.functions):
        if key is func:
            _LOWERINGS.setdefault(func, []).append((tuple(argtys), impl))
    return True


class _NumbaTypingContext:
    """The context a Numba template's ``generic`` receives: Numba's own typing context
    where it has what the typer asks."""

    def __getattr__(self, name):
        from numba.core.registry import cpu_target

        return getattr(cpu_target.typing_context, name)


def _numba_typer(typer):
    @functools.wraps(typer)
    def typed(*args, **kwargs):
        args = [_numba_bridge.to_numba(a) for a in args]
        kwargs = {k: _numba_bridge.to_numba(v) for k, v in kwargs.items()}
        r = typer(*args, **kwargs)
        if r is None:
            return None
        from .types import Signature

        if hasattr(r, "return_type") and hasattr(r, "args"):
            return Signature(_numba_bridge.from_foreign(r.return_type),
                             [_numba_bridge.from_foreign(a) for a in r.args])
        return _numba_bridge.from_foreign(r)

    return typed


def _callable_intrinsic(func):
    from ._intrinsic import Intrinsic
    from .types import Signature, _code, _from_code, unliteral

    class CallableIntrinsic(Intrinsic):
        def parameters(self):
            typer = _TYPERS[func][-1]
            return [
                p.name for p in inspect.signature(typer).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            ]

        def type_for(self, codes):
            tys = [_from_code(c) for c in codes]
            for attempt in (tys, [unliteral(t) for t in tys]):
                for typer in reversed(_TYPERS[func]):
                    r = typer(*attempt)
                    if r is None:
                        continue
                    sig = r if isinstance(r, Signature) else Signature(r, attempt)
                    impl = _lowering_for(func, list(sig.args))
                    if impl is None:
                        raise TypingError(
                            f"No definition for lowering {getattr(func, '__name__', func)}"
                            f"({', '.join(str(a) for a in sig.args)}) -> {sig.return_type}"
                        )
                    sig_args = [_code(a) for a in sig.args]
                    ret = _code(sig.return_type)
                    self._typed[tuple(sig_args)] = (ret, sig_args, impl, sig)
                    return ret, sig_args
            return None

    def typing(tyctx, *args):  # the name calls and errors show
        raise AssertionError("typed by type_for")

    typing.__name__ = typing.__qualname__ = getattr(func, "__qualname__", "callable")
    return CallableIntrinsic(typing)


# -- boxing and unboxing ---------------------------------------------------------------

_UNBOXERS = {}  # type class -> fn(typ, obj, c) -> NativeValue
_BOXERS = {}    # type class -> fn(typ, val, c) -> PyObject* value


class NativeValue:
    """What an unbox function returns (Numba's ``NativeValue``): the value, and an
    ``i1`` that is true when unboxing failed (the Python error set)."""

    def __init__(self, value, is_error=None, cleanup=None):
        self.value = value
        self.is_error = is_error
        self.cleanup = cleanup


def unbox(typeclass):
    """``@unbox(MyType)`` on ``fn(typ, obj, c) -> NativeValue``: an argument's value from
    its Python object, written with llvmlite (``c.builder``, ``c.pyapi``,
    ``c.context``)."""

    def decorate(fn):
        _UNBOXERS[typeclass] = fn
        return fn

    return decorate


def box(typeclass):
    """``@box(MyType)`` on ``fn(typ, val, c) -> PyObject*``: a result's Python object (a
    new reference, or null with the Python error set)."""

    def decorate(fn):
        _BOXERS[typeclass] = fn
        return fn

    return decorate


# Objects boxing code embeds (`c.pyapi.serialize_object`): kept alive for the process.
_KEPT = []
_SYMBOLS = itertools.count()


class PythonAPI:
    """``c.pyapi``: CPython's C API called by name from llvmlite code. numba-rs maps each
    function the code declares to its address in the running interpreter."""

    def __init__(self, context, builder):
        from llvmlite import ir

        self.context = context
        self.builder = builder
        self.module = builder.module
        self.pyobj = ir.IntType(8).as_pointer()
        self.voidptr = self.pyobj
        self.cstring = self.pyobj
        self.long = ir.IntType(ctypes.sizeof(ctypes.c_long) * 8)
        self.ulong = self.long
        self.longlong = ir.IntType(64)
        self.ulonglong = self.longlong
        self.double = ir.DoubleType()
        self.py_ssize_t = ir.IntType(64)
        self.int = ir.IntType(32)

    def _fn(self, name, ret, args, var_arg=False):
        from llvmlite import ir

        fnty = ir.FunctionType(ret, args, var_arg=var_arg)
        existing = self.module.globals.get(name)
        if existing is not None:
            return existing
        return ir.Function(self.module, fnty, name=name)

    def _call(self, name, ret, args, values, var_arg=False):
        return self.builder.call(self._fn(name, ret, args, var_arg), values)

    def _cstring(self, text):
        from llvmlite import ir

        data = bytearray(text.encode("utf-8") + b"\0")
        name = f"numba_rs.cstr.{next(_SYMBOLS)}"
        g = ir.GlobalVariable(self.module, ir.ArrayType(ir.IntType(8), len(data)), name=name)
        g.global_constant = True
        g.linkage = "internal"
        g.initializer = ir.Constant(g.value_type, data)
        return self.builder.bitcast(g, self.cstring)

    def _data(self, name):
        """The address of a C-API data symbol (``_Py_NoneStruct``, ``PyExc_TypeError``)."""
        from llvmlite import ir

        g = self.module.globals.get(name)
        if g is None:
            g = ir.GlobalVariable(self.module, self.pyobj, name=name)
        return g

    # references
    def incref(self, obj):
        self._call("Py_IncRef", _void(), [self.pyobj], [obj])

    def decref(self, obj):
        self._call("Py_DecRef", _void(), [self.pyobj], [obj])

    def get_null_object(self):
        from llvmlite import ir

        return ir.Constant(self.pyobj, None)

    def borrow_none(self):
        return self.builder.bitcast(self._data("_Py_NoneStruct"), self.pyobj)

    def make_none(self):
        none = self.borrow_none()
        self.incref(none)
        return none

    # errors
    def err_occurred(self):
        return self._call("PyErr_Occurred", self.pyobj, [], [])

    def err_clear(self):
        self._call("PyErr_Clear", _void(), [], [])

    def err_set_string(self, exctype, msg):
        if isinstance(exctype, str):
            exctype = self.builder.load(self._data(exctype))
        if isinstance(msg, str):
            msg = self._cstring(msg)
        self._call("PyErr_SetString", _void(), [self.pyobj, self.cstring], [exctype, msg])

    def raise_object(self, exc):
        self._call("PyErr_SetObject", _void(), [self.pyobj, self.pyobj], [exc, self.make_none()])

    # attributes and calls
    def object_getattr_string(self, obj, attr):
        return self._call("PyObject_GetAttrString", self.pyobj, [self.pyobj, self.cstring],
                          [obj, self._cstring(attr)])

    def object_getattr(self, obj, attr):
        return self._call("PyObject_GetAttr", self.pyobj, [self.pyobj, self.pyobj], [obj, attr])

    def object_setattr_string(self, obj, attr, val):
        return self._call("PyObject_SetAttrString", self.int,
                          [self.pyobj, self.cstring, self.pyobj],
                          [obj, self._cstring(attr), val])

    def object_istrue(self, obj):
        return self._call("PyObject_IsTrue", self.int, [self.pyobj], [obj])

    def object_getitem(self, obj, key):
        return self._call("PyObject_GetItem", self.pyobj, [self.pyobj, self.pyobj], [obj, key])

    def call_function_objargs(self, callee, objargs):
        from llvmlite import ir

        return self._call("PyObject_CallFunctionObjArgs", self.pyobj, [self.pyobj],
                          [callee, *objargs, ir.Constant(self.pyobj, None)], var_arg=True)

    def call(self, callee, args=None, kws=None):
        from llvmlite import ir

        null = ir.Constant(self.pyobj, None)
        return self._call("PyObject_Call", self.pyobj, [self.pyobj] * 3,
                          [callee, args if args is not None else self.tuple_pack([]),
                           kws if kws is not None else null])

    def tuple_pack(self, items):
        from llvmlite import ir

        return self._call("PyTuple_Pack", self.pyobj, [self.py_ssize_t],
                          [ir.Constant(self.py_ssize_t, len(items)), *items], var_arg=True)

    def tuple_getitem(self, tup, idx):
        from llvmlite import ir

        return self._call("PyTuple_GetItem", self.pyobj, [self.pyobj, self.py_ssize_t],
                          [tup, ir.Constant(self.py_ssize_t, idx)])

    def tuple_size(self, tup):
        return self._call("PyTuple_Size", self.py_ssize_t, [self.pyobj], [tup])

    # objects the code refers to
    def serialize_object(self, obj):
        _KEPT.append(obj)
        return obj

    def unserialize(self, obj):
        """A new reference to an object ``serialize_object`` kept."""
        from llvmlite import ir

        p = ir.Constant(ir.IntType(64), id(obj)).inttoptr(self.pyobj)
        self.incref(p)
        return p

    # numbers
    def float_as_double(self, obj):
        return self._call("PyFloat_AsDouble", self.double, [self.pyobj], [obj])

    def float_from_double(self, val):
        return self._call("PyFloat_FromDouble", self.pyobj, [self.double], [val])

    def long_as_longlong(self, obj):
        return self._call("PyLong_AsLongLong", self.longlong, [self.pyobj], [obj])

    def long_as_ulonglong(self, obj):
        return self._call("PyLong_AsUnsignedLongLong", self.ulonglong, [self.pyobj], [obj])

    def long_as_ssize_t(self, obj):
        return self._call("PyLong_AsSsize_t", self.py_ssize_t, [self.pyobj], [obj])

    def long_from_longlong(self, val):
        return self._call("PyLong_FromLongLong", self.pyobj, [self.longlong], [val])

    def long_from_ulonglong(self, val):
        return self._call("PyLong_FromUnsignedLongLong", self.pyobj, [self.ulonglong], [val])

    def long_from_ssize_t(self, val):
        return self._call("PyLong_FromSsize_t", self.pyobj, [self.py_ssize_t], [val])

    def long_from_long(self, val):
        return self._call("PyLong_FromLong", self.pyobj, [self.long], [val])

    def number_as_ssize_t(self, obj):
        from llvmlite import ir

        return self._call("PyNumber_AsSsize_t", self.py_ssize_t, [self.pyobj, self.pyobj],
                          [obj, ir.Constant(self.pyobj, None)])

    def number_float(self, obj):
        return self._call("PyNumber_Float", self.pyobj, [self.pyobj], [obj])

    def number_long(self, obj):
        return self._call("PyNumber_Long", self.pyobj, [self.pyobj], [obj])

    def bool_from_bool(self, bval):
        return self._call("PyBool_FromLong", self.pyobj, [self.long],
                          [self.builder.zext(bval, self.long)])

    def bool_from_long(self, ival):
        return self._call("PyBool_FromLong", self.pyobj, [self.long], [ival])

    def string_from_string(self, text):
        return self._call("PyUnicode_FromString", self.pyobj, [self.cstring],
                          [self._cstring(text) if isinstance(text, str) else text])

    # values of numba-rs's own scalar types
    def to_native_value(self, typ, obj):
        from . import types as rt

        c = self.context
        typ = rt.unliteral(typ)
        if isinstance(typ, rt.Boolean):
            r = self.object_istrue(obj)
            from llvmlite import ir

            return NativeValue(self.builder.icmp_signed("!=", r, ir.Constant(self.int, 0)),
                               is_error=self._is_error())
        if isinstance(typ, rt.Integer):
            v = self.long_as_longlong(obj) if typ.signed else self.long_as_ulonglong(obj)
            return NativeValue(c.cast(self.builder, v, rt.int64 if typ.signed else rt.uint64, typ),
                               is_error=self._is_error())
        if isinstance(typ, rt.Float):
            v = self.float_as_double(obj)
            return NativeValue(c.cast(self.builder, v, rt.float64, typ), is_error=self._is_error())
        return self._through_codec_in(typ, obj)

    def from_native_value(self, typ, val, env_manager=None):
        from . import types as rt

        c = self.context
        typ = rt.unliteral(typ)
        if isinstance(typ, rt.Boolean):
            return self.bool_from_bool(val)
        if isinstance(typ, rt.Integer):
            if typ.signed:
                return self.long_from_longlong(c.cast(self.builder, val, typ, rt.int64))
            return self.long_from_ulonglong(c.cast(self.builder, val, typ, rt.uint64))
        if isinstance(typ, rt.Float):
            return self.float_from_double(c.cast(self.builder, val, typ, rt.float64))
        if typ == rt.none:
            return self.make_none()
        return self._through_codec_out(typ, val)

    def _codec(self, typ):
        from ._numba_rs import _slot_codec
        from .types import _code

        code = _code(typ)
        return code, _slot_codec(code)

    def _fnptr(self, address, ret, args):
        from llvmlite import ir

        fnty = ir.FunctionType(ret, args)
        return self.builder.inttoptr(ir.Constant(ir.IntType(64), address), fnty.as_pointer())

    def _through_codec_in(self, typ, obj):
        """Any other type through numba-rs's own argument codec (an array borrows the
        object's data, as arguments do)."""
        from llvmlite import ir

        from . import cgutils
        from ._intrinsic import _ll

        code, (n, load, _store, unbox_fn, _box_fn) = self._codec(typ)
        i64 = ir.IntType(64)
        slots = cgutils.alloca_once(self.builder, ir.ArrayType(i64, max(n, 1)))
        sp = self.builder.bitcast(slots, i64.as_pointer())
        unbox = self._fnptr(unbox_fn, self.int, [self.int, self.pyobj, i64.as_pointer()])
        err = self.builder.call(unbox, [ir.Constant(self.int, code), obj, sp])
        llty = _ll(typ)
        out = cgutils.alloca_once(self.builder, llty, zfill=True)
        is_error = self.builder.icmp_signed("!=", err, ir.Constant(self.int, 0))
        with self.builder.if_then(self.builder.not_(is_error)):
            fill = self._fnptr(load, ir.VoidType(), [i64.as_pointer(), llty.as_pointer()])
            self.builder.call(fill, [sp, out])
        return NativeValue(self.builder.load(out), is_error=is_error)

    def _through_codec_out(self, typ, val):
        """Any other type through numba-rs's own result codec: a new reference."""
        from llvmlite import ir

        from . import cgutils

        code, (n, _load, store, _unbox_fn, box_fn) = self._codec(typ)
        # The codec takes the references the slots hold; boxing borrows the value.
        self.context.nrt.incref(self.builder, typ, val)
        i64 = ir.IntType(64)
        slots = cgutils.alloca_once(self.builder, ir.ArrayType(i64, max(n, 1)))
        sp = self.builder.bitcast(slots, i64.as_pointer())
        cell = cgutils.alloca_once_value(self.builder, val)
        put = self._fnptr(store, ir.VoidType(), [cell.type, i64.as_pointer()])
        self.builder.call(put, [cell, sp])
        box = self._fnptr(box_fn, self.pyobj, [self.int, i64.as_pointer()])
        return self.builder.call(box, [ir.Constant(self.int, code), sp])

    def _is_error(self):
        from . import cgutils

        return cgutils.is_not_null(self.builder, self.err_occurred())

    def __getattr__(self, name):
        raise NotImplementedError(
            f"numba-rs's c.pyapi has no {name!r} (see docs/extending.md for what it offers)"
        )


def _void():
    from llvmlite import ir

    return ir.VoidType()


class _BoxContext:
    """The ``c`` box and unbox functions receive."""

    def __init__(self, builder):
        from ._intrinsic import CodegenContext

        self.context = CodegenContext()
        self.builder = builder
        self.pyapi = PythonAPI(self.context, builder)
        self.env_manager = None

    def box(self, typ, val):
        return self.pyapi.from_native_value(typ, val)

    def unbox(self, typ, obj):
        return self.pyapi.to_native_value(typ, obj)


def _symbol_address(name):
    """The address of a C symbol of the interpreter (a function or a data object)."""
    try:
        return ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value
    except AttributeError:
        return None


def _data_address(name):
    try:
        return ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, name))
    except ValueError:
        return None


def _boxing_code(code, which):
    """``(symbol, module text, [(symbol, address)])`` of the unbox or box body of the user
    type ``code`` (numba-py compiles it on first use), or None when the type has none."""
    from llvmlite import ir

    from ._intrinsic import _ll
    from .types import _from_code

    t = _from_code(code)
    fn = _by_mro(_UNBOXERS if which == "unbox" else _BOXERS, t)
    numba_t = _numba_bridge._NUMBA_OPAQUE.get(code)
    if fn is None and numba_t is not None:
        # A Numba type whose box/unbox code is registered with Numba: it runs on
        # numba-rs's context and C-API bridge, given Numba's type object.
        from numba.core import pythonapi

        registry = pythonapi._unboxers if which == "unbox" else pythonapi._boxers
        fn = registry.lookup(type(numba_t))
        t = numba_t
    if fn is None:
        return None
    symbol = f"numba_rs_{which}_{code}_{next(_SYMBOLS)}"
    module = ir.Module(name=symbol)
    pyobj = ir.IntType(8).as_pointer()
    llty = _ll(t)
    if which == "unbox":
        fnty = ir.FunctionType(ir.VoidType(), [pyobj, llty.as_pointer(), ir.IntType(8).as_pointer()])
        f = ir.Function(module, fnty, name=symbol)
        builder = ir.IRBuilder(f.append_basic_block("entry"))
        obj, out, err = f.args
        nv = fn(t, obj, _BoxContext(builder))
        if not (hasattr(nv, "value") and hasattr(nv, "is_error")):  # ours or Numba's
            raise TypingError(f"unbox({type(t).__name__}) returned {nv!r}, not a NativeValue")
        builder.store(nv.value, out)
        if nv.is_error is not None:
            builder.store(builder.zext(nv.is_error, ir.IntType(8)), err)
        builder.ret_void()
    else:
        fnty = ir.FunctionType(pyobj, [llty.as_pointer()])
        f = ir.Function(module, fnty, name=symbol)
        builder = ir.IRBuilder(f.append_basic_block("entry"))
        val = builder.load(f.args[0])
        res = fn(t, val, _BoxContext(builder))
        if not builder.block.is_terminated:
            builder.ret(res)
    externals = []
    for g in module.global_values:
        declared = g.is_declaration if isinstance(g, ir.Function) else g.initializer is None
        if not declared or g.name.startswith("NRT_"):
            continue
        if isinstance(g, ir.Function):
            address = _symbol_address(g.name)
        else:
            address = _data_address(g.name)
        if address is None:
            raise TypingError(f"{which}({type(t).__name__}) uses {g.name}, which the "
                              "interpreter does not export")
        externals.append((g.name, address))
    return symbol, str(module), externals


# -- globals of user types and class references --------------------------------------

_CLASSREFS = {}  # type class -> the type of a reference to it


def _is_type_class(cls):
    from . import types as rt

    if issubclass(cls, rt.Type):
        return True
    nt = _numba_bridge.numba_types()
    return nt is not None and issubclass(cls, nt.Type)


def _classref(cls):
    """The data-less type of a reference to the type class ``cls`` in jitted code
    (Numba's ``TypeRef``): ``MyType.method(...)`` calls its class methods."""
    if not (isinstance(cls, type) and _is_type_class(cls)):
        return None
    ref = _CLASSREFS.get(cls)
    if ref is None:
        from .types import Opaque

        refcls = type(f"TypeRef[{cls.__name__}]", (Opaque,), {"__module__": __name__})
        refcls.instance_class = cls
        ref = _CLASSREFS[cls] = refcls(f"typeref[{cls.__name__}]")
    return ref


def _global_typecode(value):
    """The typecode a global bound to ``value`` has when it is a value of a user's
    data-less type or a reference to a type class (numba-py asks for globals it does not
    otherwise know); None when it is neither."""
    from .types import _from_code

    if isinstance(value, type):
        ref = _classref(value)
        return None if ref is None else ref.typecode
    code = _typecode_of_value(value)
    if code is None:
        return None
    if code in _FIELDS:
        raise TypingError(
            f"a global value of the type {_from_code(code)}, which has data, cannot be "
            "frozen into compiled code yet"
        )
    return code


def overload_classmethod(typ, attr, **kwargs):
    """``@overload_classmethod(MyType, "name")``: ``MyType.name(...)`` in jitted code,
    where ``MyType`` is a type class; the typing function and the implementation take
    the class reference first."""
    from .extending import overload_method

    ref = _classref(typ)
    if ref is None:
        raise TypeError(f"overload_classmethod takes a type class, not {typ!r}")
    return overload_method(type(ref), attr, **kwargs)
