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

import functools
import inspect
import itertools

from . import _numba_bridge, models
from ._pyapi import NativeValue, _BoxContext, _data_address, _symbol_address
from .errors import TypingError

_SYMBOLS = itertools.count()


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
    for key, fnty in _numba_globals(templates.builtin_registry.globals).get(id(func), ()):
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


# Numba's registered globals by id, rebuilt when the registry grows: every function or
# class global a function refers to is looked up here while Numba is loaded.
_NUMBA_GLOBALS = (-1, {})


def _numba_globals(registered):
    global _NUMBA_GLOBALS
    if len(registered) != _NUMBA_GLOBALS[0]:
        table = {}
        for key, fnty in list(registered):
            table.setdefault(id(key), []).append((key, fnty))
        _NUMBA_GLOBALS = (len(registered), table)
    return _NUMBA_GLOBALS[1]


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


# -- implicit conversions and printing ---------------------------------------------------

_CASTS = []  # [(from spec, to spec, impl)]


def lower_cast(fromty, toty):
    """``@lower_cast(MyType, types.Number)`` on ``impl(context, builder, fromty, toty,
    val)``: the code of an implicit conversion the type's ``can_convert_to`` allows
    (a type class or a type on either side)."""

    def decorate(impl):
        _CASTS.append((fromty, toty, impl))
        return impl

    return decorate


def _numba_counterpart(code):
    """The type a user's code sees for typecode ``code``: Numba's own object for a type
    made with Numba's classes, else numba-rs's."""
    from .types import _from_code

    x = _numba_bridge._NUMBA_OPAQUE.get(code)
    return (x, True) if x is not None else (_from_code(code), False)


def _can_convert(from_code, to_code):
    """Numba's ``Conversion`` (1 exact .. 4 unsafe) of the user type ``from_code`` to
    ``to_code`` as the type's ``can_convert_to`` answers, or None."""
    from .types import _from_code

    t, numba_world = _numba_counterpart(from_code)
    fn = getattr(t, "can_convert_to", None)
    if fn is None:
        return None
    to = _from_code(to_code)
    if numba_world:
        try:
            to = _numba_bridge.to_numba(to)
        except Exception:
            return None
    try:
        from ._intrinsic import CodegenContext

        r = fn(CodegenContext.typing_context, to)
    except Exception:
        return None
    if r is None:
        return None
    r = int(r)
    return r if 1 <= r <= 4 else None


def _cast_impl(t, to, numba_world):
    for fromspec, tospec, impl in reversed(_CASTS):
        if _spec_matches(fromspec, t) and _spec_matches(tospec, to):
            return impl
    if numba_world:
        from numba.core import imputils

        for impl, (fromspec, tospec) in reversed(list(imputils.builtin_registry.casts)):
            if _spec_matches(fromspec, t) and _spec_matches(tospec, to):
                return impl
    return None


def _print_impl(t, numba_world):
    impl = _lowering_for("print_item", [t])
    if impl is None and numba_world:
        from numba.core import imputils

        for fn, key, argtys in reversed(list(imputils.builtin_registry.functions)):
            if key == "print_item" and len(argtys) == 1 and _spec_matches(argtys[0], t):
                return fn
    return impl


def _prints(code):
    """Whether a ``print_item`` lowering prints values of the user type ``code``."""
    from .types import _from_code

    _, numba_world = _numba_counterpart(code)
    return _print_impl(_from_code(code), numba_world) is not None


def _one_value_function(symbol, arg_code, ret_code):
    from llvmlite import ir

    from . import types as rt
    from ._intrinsic import _ll, _rs

    module = ir.Module(name=symbol)
    none = rt.unliteral(_rs(ret_code)) == rt.none
    fnty = ir.FunctionType(ir.VoidType() if none else _ll(ret_code), [_ll(arg_code)])
    fn = ir.Function(module, fnty, name=symbol)
    return module, fn, ir.IRBuilder(fn.append_basic_block("entry"))


class _CastCodegen:
    """The code of ``extension::CAST_KEY``: one implicit conversion, by ``lower_cast``."""

    def codegen_for(self, codes, ret):
        from .types import _from_code

        (code,) = codes
        t, numba_world = _numba_counterpart(code)
        to = _from_code(ret)
        to_arg = _numba_bridge.to_numba(to) if numba_world else to
        impl = _cast_impl(_from_code(code), to, numba_world)
        if impl is None:
            from .errors import LoweringError

            raise LoweringError(f"No definition for lowering cast({t}, {to})")
        symbol = f"numba_rs_cast_{code}_{ret}_{next(_SYMBOLS)}"
        module, fn, builder = _one_value_function(symbol, code, ret)
        from ._intrinsic import CodegenContext

        value = impl(CodegenContext(), builder, t, to_arg, fn.args[0])
        builder.ret(value)
        return symbol, str(module)


class _PrintItemCodegen:
    """The code of ``extension::PRINT_ITEM_KEY``: one value printed by the type's
    ``print_item`` lowering, with the GIL held (compiled code may run without it)."""

    def codegen_for(self, codes, ret):
        from llvmlite import ir

        from . import types as rt
        from .types import _code, _from_code

        (code,) = codes
        t, numba_world = _numba_counterpart(code)
        impl = _print_impl(_from_code(code), numba_world)
        if impl is None:
            from .errors import LoweringError

            raise LoweringError(f"No definition for lowering print_item({t})")
        symbol = f"numba_rs_print_item_{code}_{next(_SYMBOLS)}"
        module, fn, builder = _one_value_function(symbol, code, _code(rt.none))
        i32 = ir.IntType(32)
        ensure = ir.Function(module, ir.FunctionType(i32, []), name="PyGILState_Ensure")
        release = ir.Function(module, ir.FunctionType(ir.VoidType(), [i32]), name="PyGILState_Release")
        state = builder.call(ensure, [])
        from ._intrinsic import CodegenContext
        from .types import Signature

        none = _numba_bridge.to_numba(rt.none) if numba_world else rt.none
        impl(CodegenContext(), builder, Signature(none, (t,)), [fn.args[0]])
        builder.call(release, [state])
        builder.ret_void()
        return symbol, str(module)


def _register_codegens():
    from ._intrinsic import _BY_KEY

    _BY_KEY["intrinsic.ext.cast"] = _CastCodegen()
    _BY_KEY["intrinsic.ext.print_item"] = _PrintItemCodegen()


_register_codegens()
