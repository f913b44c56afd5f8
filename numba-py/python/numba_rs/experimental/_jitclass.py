"""``@jitclass``: a class whose instances are records of typed fields, shared by reference
between Python and compiled code (Numba's ``numba.experimental.jitclass``).

The decorator registers the class's fields with the compiler (an instance type of its
own, ``ClassInstanceType``); its methods become extension methods of that type, compiled
with ``self`` first through the ordinary pipeline, and the class object is overloaded so
that calling it in compiled code makes an instance (fields zeroed, then ``__init__``).
From Python the decorator returns a proxy class: calling it runs the compiled
constructor, fields read and write the record directly, and methods call their compiled
versions.
"""

import inspect
import operator

from .. import types as _types
from .._numba_rs import (
    _Field,
    _InstanceBase,
    _jitclass_register,
    _jitclass_set_constructor,
    _jitclass_set_fields,
)
from ..errors import TypingError, UnsupportedError


def _new(instance_type):
    """An instance with every field zeroed (compiled code only)."""
    raise NotImplementedError("_new is only called from compiled code")


_new._numba_rs_builtin = "numba_rs.experimental.jitclass:_new"


# Dunder methods and the operation compiled code reaches them by (Numba's jitclass
# overloads): `a.__add__(b)` for `a + b`, `b.__radd__(a)` when `a` has no `__add__`
# for it, `a.__iadd__(b)` for `a += b`.
_BINARY = {
    "__add__": operator.add, "__sub__": operator.sub, "__mul__": operator.mul,
    "__truediv__": operator.truediv, "__floordiv__": operator.floordiv,
    "__mod__": operator.mod, "__pow__": operator.pow, "__matmul__": operator.matmul,
    "__lshift__": operator.lshift, "__rshift__": operator.rshift,
    "__and__": operator.and_, "__or__": operator.or_, "__xor__": operator.xor,
    "__getitem__": operator.getitem, "__contains__": operator.contains,
    "__delitem__": operator.delitem,
}
# Comparisons and the method Python tries on the right operand when the left has none.
_COMPARISONS = {
    "__eq__": (operator.eq, "__eq__"), "__lt__": (operator.lt, "__gt__"),
    "__le__": (operator.le, "__ge__"), "__gt__": (operator.gt, "__lt__"),
    "__ge__": (operator.ge, "__le__"),
}
_REFLECTED = {
    "__radd__": operator.add, "__rsub__": operator.sub, "__rmul__": operator.mul,
    "__rtruediv__": operator.truediv, "__rfloordiv__": operator.floordiv,
    "__rmod__": operator.mod, "__rpow__": operator.pow, "__rmatmul__": operator.matmul,
    "__rlshift__": operator.lshift, "__rrshift__": operator.rshift,
    "__rand__": operator.and_, "__ror__": operator.or_, "__rxor__": operator.xor,
}
_INPLACE = {
    "__iadd__": operator.iadd, "__isub__": operator.isub, "__imul__": operator.imul,
    "__itruediv__": operator.itruediv, "__ifloordiv__": operator.ifloordiv,
    "__imod__": operator.imod, "__ipow__": operator.ipow, "__imatmul__": operator.imatmul,
    "__ilshift__": operator.ilshift, "__irshift__": operator.irshift,
    "__iand__": operator.iand, "__ior__": operator.ior, "__ixor__": operator.ixor,
}
_UNARY = {
    "__neg__": operator.neg, "__pos__": operator.pos, "__invert__": operator.invert,
    "__abs__": abs, "__len__": len, "__hash__": hash, "__index__": operator.index,
}
_TERNARY = {"__setitem__": operator.setitem}
# Conversions and what each falls back to, in order (Python's data model, as Numba's
# jitclass overloads follow it): an expression over `a` when the method is missing.
_CONVERSIONS = {
    float: [("__float__", "a.__float__()"), ("__index__", "float(a.__index__())")],
    int: [("__int__", "a.__int__()"), ("__index__", "a.__index__()")],
    complex: [("__complex__", "a.__complex__()"), ("__float__", "complex(a.__float__())"),
              ("__index__", "complex(float(a.__index__()))")],
    str: [("__str__", "a.__str__()")],
}
# Numba's jitclass refuses these (its words: "Method '__X__' is not supported.").
_UNSUPPORTED = {"__del__", "__enter__", "__exit__", "__iter__", "__next__", "__call__",
                "__getattr__", "__setattr__", "__delattr__", "__format__", "__repr__"}


def _overload_dunders(methods, instance_type):
    """Overload the operations whose dunder methods the class defines, for its
    instances."""
    from ..extending import overload

    def gen(body, nargs=1):
        params = ", ".join("abc"[:nargs])
        ns = {}
        exec(f"def impl({params}):\n    return {body}\n", ns)  # noqa: S102  (fixed templates)
        return ns["impl"]

    def mine(t):
        return t == instance_type

    def unary(op, impl):
        overload(op, strict=False)(lambda a, impl=impl: impl if mine(a) else None)

    for name in methods:
        if name in _BINARY or name in _INPLACE:
            op = _BINARY.get(name) or _INPLACE[name]
            impl = gen(f"a.{name}(b)", 2)
            overload(op, strict=False)(lambda a, b, impl=impl: impl if mine(a) else None)
        elif name in _REFLECTED:
            op = _REFLECTED[name]
            forward = name.replace("__r", "__", 1)
            impl = gen(f"b.{name}(a)", 2)

            def typing(a, b, impl=impl, forward=forward):
                if mine(b) and not (mine(a) and forward in methods):
                    return impl
                return None

            overload(op, strict=False)(typing)
        elif name in _UNARY:
            unary(_UNARY[name], gen(f"a.{name}()"))
        elif name in _TERNARY:
            impl = gen(f"a.{name}(b, c)", 3)
            overload(_TERNARY[name], strict=False)(
                lambda a, b, c, impl=impl: impl if mine(a) else None)
    # `a += b` without `__iadd__`: `a.__add__(b)` (Python's fallback).
    for name, op in _INPLACE.items():
        forward = "__" + name[3:]
        if name not in methods and forward in methods:
            impl = gen(f"a.{forward}(b)", 2)
            overload(op, strict=False)(lambda a, b, impl=impl: impl if mine(a) else None)
    # Comparisons: the left operand's method, else the right's reflection.
    for name, (op, reflection) in _COMPARISONS.items():
        forward = gen(f"a.{name}(b)", 2) if name in methods else None
        reflected = gen(f"b.{reflection}(a)", 2) if reflection in methods else None
        if forward is None and reflected is None:
            continue

        def typing(a, b, forward=forward, reflected=reflected):
            if mine(a) and forward is not None:
                return forward
            if mine(b) and reflected is not None:
                return reflected
            return None

        overload(op, strict=False)(typing)
    # `!=`: `__ne__`, else the negation of `==`.
    if "__ne__" in methods:
        ne = gen("a.__ne__(b)", 2)
    elif "__eq__" in methods:
        ne = gen("not (a == b)", 2)
    else:
        ne = None
    if ne is not None:
        overload(operator.ne, strict=False)(
            lambda a, b, ne=ne: ne if mine(a) or (mine(b) and "__eq__" in methods) else None)
    for func, chain in _CONVERSIONS.items():
        for name, body in chain:
            if name in methods:
                unary(func, gen(body))
                break
    # Truth: `__bool__`, else `__len__() != 0`, else always true (Python's fallback).
    if "__bool__" in methods:
        truth = gen("a.__bool__()")
    elif "__len__" in methods:
        truth = gen("len(a) != 0")
    else:
        truth = gen("True")
    unary(bool, truth)


def _mangle(cls_name, field):
    """Python's private-name mangling, as the class's methods see the field."""
    if field.startswith("__") and not field.endswith("__"):
        return f"_{cls_name.lstrip('_')}{field}"
    return field


def _is_deferred(t):
    """A deferred type (numba-rs's or Numba's ``deferred_type()``)."""
    return type(t).__name__ == "DeferredType" and hasattr(t, "define") and hasattr(t, "get")


def _deferred_in(t):
    """``t`` if it is deferred, or the deferred type an ``Optional`` wraps."""
    if _is_deferred(t):
        return t
    inner = getattr(t, "type", None)
    if type(t).__name__ == "Optional" and _is_deferred(inner):
        return inner
    return None


def _as_type(name, t):
    if _deferred_in(t) is not None:
        return t  # resolved once defined (`_resolve`)
    import typing

    # `typing.List[T]` / `typing.Dict[K, V]` annotations: Numba's typed containers.
    origin, args = typing.get_origin(t), typing.get_args(t)
    if origin is list and len(args) == 1:
        return _types.ListType(_as_type(name, args[0]))
    if origin is dict and len(args) == 2:
        return _types.DictType(_as_type(name, args[0]), _as_type(name, args[1]))
    try:
        return _types._from_code(_types._code(t))
    except TypeError:
        raise TypeError(f"spec values should be Numba type instances, got {t!r}") from None


def _resolve(name, t):
    """A field's type with its deferred type (if any) replaced by its definition."""
    d = _deferred_in(t)
    if d is None:
        return t
    try:
        target = d.get()
    except RuntimeError:
        raise TypingError(
            f"the deferred type of field {name!r} is not defined yet: call "
            f"define(Cls.class_type.instance_type) before using the class"
        ) from None
    target = _types._from_code(_types._code(target))
    return target if d is t else _types.Optional(target)


def _fields(cls, spec):
    """The fields in order: the spec's, then annotations the spec lacks (Numba's order)."""
    if spec is None:
        spec = []
    elif isinstance(spec, dict):
        spec = list(spec.items())
    else:
        spec = list(spec)
    out = {}
    for item in spec:
        if not (isinstance(item, tuple) and len(item) == 2):
            raise TypeError(f"spec must be a list of (name, type) pairs or a dict, got {item!r}")
        name, t = item
        if not isinstance(name, str):
            raise TypeError(f"spec keys should be strings, got {name!r}")
        if isinstance(t, type) and _deferred_in(t) is None:
            # A Python class (`int`) is an annotation's type, not a spec's (Numba's).
            raise TypeError(f"spec values should be Numba type instances, got {t!r}")
        out[name] = _as_type(name, t)
    # Annotations, the base classes' first (Numba reads them through the MRO).
    for klass in reversed(cls.__mro__):
        for name, t in vars(klass).get("__annotations__", {}).items():
            if name not in out:
                out[name] = _as_type(name, t)
    return out


class _ClassType:
    """``Cls.class_type``: its ``instance_type`` is the type of the class's instances."""

    def __init__(self, name, instance_type):
        self.class_name = name
        self.instance_type = instance_type

    def __repr__(self):
        return f"jitclass.{self.class_name}#{self.instance_type.typecode}"


# Class attributes every class has (not members a jitclass would have to store).
_IGNORED = {"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__",
            "__annotations__", "__init_subclass__", "__firstlineno__", "__static_attributes__"}


def _members(cls):
    """The class's members with its base classes' (Numba copies them through the MRO:
    a plain base class's methods are the jitclass's too); ``object``'s are not."""
    members = {}
    for klass in reversed(cls.__mro__):
        if klass is not object:
            members.update(vars(klass))
    return members


def _check_class(cls):
    if not isinstance(cls, type):
        raise TypeError(f"jitclass decorates a class, not {cls!r}")
    if any(isinstance(b, _InstanceBase.__class__) and issubclass(b, _InstanceBase)
           for b in cls.__mro__[1:]):
        raise TypeError("cannot subclass from a jitclass")
    others = []
    for name, v in _members(cls).items():
        if name in _IGNORED or inspect.isfunction(v) or isinstance(
                v, (property, staticmethod)):
            continue
        if name == "__hash__" and v is None:
            continue  # Python's own, for a class that defines `__eq__`
        others.append(name)
    if others:
        raise TypeError(f"class members are not yet supported: {', '.join(others)}")
    for name, v in _members(cls).items():
        if isinstance(v, property) and v.fdel is not None:
            raise TypeError(f"deleter is not supported: {name}")


def _param_text(params, ns, positional=False):
    """Parameters as source text for a generated function; defaults go into ``ns``.
    ``positional``: keyword-only parameters become ordinary ones (a typing function is
    called with every argument in place, keyword-only ones last, as the compiled
    function takes them)."""
    parts = []
    starred = False
    defaulted = False
    for i, p in enumerate(params):
        if p.kind == p.KEYWORD_ONLY and not starred and not positional:
            parts.append("*")  # keyword-only parameters follow
            starred = True
        if (positional and p.kind == p.KEYWORD_ONLY and not starred and defaulted
                and p.default is p.empty):
            # Required, after one with a default: a default no call may bind (a
            # missing argument is an error when the call is typed).
            ns[f"_d{i}"] = _REQUIRED
            parts.append(f"{p.name}=_d{i}")
            continue
        defaulted = defaulted or p.default is not p.empty
        if p.kind == p.VAR_POSITIONAL:
            starred = True
            parts.append(f"*{p.name}")
        elif p.kind == p.VAR_KEYWORD:
            parts.append(f"**{p.name}")
        elif p.default is not p.empty:
            ns[f"_d{i}"] = p.default
            parts.append(f"{p.name}=_d{i}")
        else:
            parts.append(p.name)
    return parts


class _Required:
    def __repr__(self):
        return "<required keyword-only argument>"


_REQUIRED = _Required()


def _init_returned(result):
    """Checks, while the constructor is typed, that ``__init__`` returned None."""


_INIT_CHECK = []


def _check_none(result):
    if not isinstance(result, _types.NoneType):
        raise TypingError(f"__init__() should return None, not {result}")


def _overload_init_returned():
    if _INIT_CHECK:
        return
    _INIT_CHECK.append(True)
    from ..extending import overload

    def typing(result):
        # Names nothing of Numba's, so it is handed numba-rs's types.
        _check_none(result)
        return lambda result: None

    overload(_init_returned, strict=False)(typing)


def _constructor(cls, init, instance_type):
    """The compiled constructor's source: ``_new`` then ``__init__`` with its parameters."""
    sig = inspect.signature(init)
    params = list(sig.parameters.values())[1:]
    ns = {"_new": _new, "_inst": instance_type, "_returned": _init_returned}
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise UnsupportedError(f"{p.kind.name} argument type unsupported")
    parts = _param_text(params, ns)
    call = [f"{p.name}={p.name}" if p.kind == p.KEYWORD_ONLY else p.name for p in params]
    src = (
        f"def {cls.__name__}({', '.join(parts)}):\n"
        f"    self = _new(_inst)\n"
        f"    _returned(self.__init__({', '.join(call)}))\n"
        f"    return self\n"
    )
    exec(src, ns)  # noqa: S102  (generated from the signature's names only)
    return ns[cls.__name__]


def _typing_like(func, before=None):
    """A typing function with ``func``'s parameters that answers ``func`` (the
    dispatcher binds a call's arguments by the typing function's signature); ``before``
    runs first."""
    ns = {"_f": func, "_before": before or (lambda: None)}
    parts = _param_text(inspect.signature(func).parameters.values(), ns, positional=True)
    exec(f"def typing({', '.join(parts)}):\n    _before()\n    return _f\n", ns)  # noqa: S102
    return ns["typing"]


def _register_member(inst_cls, name, func, attribute=False):
    from ..extending import overload_attribute, overload_method

    deco = overload_attribute if attribute else overload_method

    deco(inst_cls, name, strict=False)(_typing_like(func))


def jitclass(cls_or_spec=None, spec=None):
    """``@jitclass(spec)`` or ``@jitclass``: compile a class's methods and store its fields
    (from ``spec``, a list of ``(name, type)`` or a dict, and the class's annotations) in
    an NRT-managed record."""
    if cls_or_spec is not None and isinstance(cls_or_spec, type):
        return _build(cls_or_spec, spec)

    def wrap(cls):
        return _build(cls, cls_or_spec if spec is None else spec)

    return wrap


def _build(cls, spec):
    from .. import njit
    from ..extending import overload

    _check_class(cls)
    _overload_init_returned()
    fields = {_mangle(cls.__name__, n): t for n, t in _fields(cls, spec).items()}
    members = _members(cls)
    for name in fields:
        v = members.get(name)
        if inspect.isfunction(v) or isinstance(v, (property, staticmethod)):
            raise NameError(f"name shadowing: {name}")
    for name in fields:
        if name in members and not isinstance(members[name], (property,)):
            # A class attribute shadowing a field (Numba refuses it the same way).
            if not inspect.isfunction(members[name]):
                raise TypeError(f"'{name}' is both a field and a class attribute")
    methods, props, statics = {}, {}, {}
    for name, v in members.items():
        if isinstance(v, staticmethod):
            statics[name] = v.__func__
        elif isinstance(v, property):
            props[name] = v
        elif inspect.isfunction(v):
            methods[name] = v
    init = methods.get("__init__")
    if init is None:
        raise TypeError(f"{cls.__name__} has no __init__")
    for name in methods:
        if name in _UNSUPPORTED:
            raise TypeError(f"Method '{name}' is not supported.")

    ns = {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
          "__doc__": cls.__doc__}
    # The proxy derives from the class itself, as Numba's does (`Cls.mro()[1]` is the
    # Python class, which may be subclassed into another jitclass).
    proxy = type(cls.__name__, (cls, _InstanceBase), ns)
    deferred = any(_deferred_in(t) is not None for t in fields.values())
    known = [] if deferred else [(n, t.typecode) for n, t in fields.items()]
    code = _jitclass_register(cls.__name__, known, proxy,
                              f"{cls.__module__}.{cls.__qualname__}")
    pending = [deferred]

    def finalize():
        """Fields whose deferred types are defined now (before the first instance)."""
        if pending[0]:
            resolved = {n: _resolve(n, t) for n, t in fields.items()}
            _jitclass_set_fields(code, [(n, t.typecode) for n, t in resolved.items()])
            fields.update(resolved)
            class_type.struct = dict(fields)
            pending[0] = False

    inst_cls = type(f"{cls.__name__}InstanceType", (_types.ClassInstanceType,), {})
    _types._INSTANCE_CLASSES[code] = inst_cls
    instance_type = _types._from_code(code)
    class_type = _ClassType(cls.__name__, instance_type)
    class_type.struct = dict(fields)
    _types._JITCLASS_TYPES[code] = class_type

    # Compiled code: methods and properties of the instance type, the class callable.
    for name, f in methods.items():
        _register_member(inst_cls, name, f)
    for name, p in props.items():
        if p.fget is not None:
            _register_member(inst_cls, name, p.fget, attribute=True)
        if p.fset is not None:
            # `obj.name = v` in compiled code (numba-typeinfer's `SETTER_PREFIX`).
            _register_member(inst_cls, f"__numba_rs_set__{name}", p.fset)
    _overload_dunders(methods, instance_type)
    for name, f in statics.items():
        # `obj.name(...)` in compiled code: the function without the receiver.
        sf = njit(f)
        params = [p.name for p in inspect.signature(f).parameters.values()]
        src = (f"def {name}(self, {', '.join(params)}):\n"
               f"    return _sf({', '.join(params)})\n")
        ns = {"_sf": sf}
        exec(src, ns)  # noqa: S102  (names from the function's own signature)
        _register_member(inst_cls, name, ns[name])
    ctor = _constructor(cls, init, instance_type)
    jit_ctor = njit(ctor)

    overload(proxy, strict=False)(_typing_like(ctor, finalize))
    from ..extending import _FUNCTIONS

    # `isinstance(x, Cls)` in compiled code: the class object is this dispatcher there.
    _jitclass_set_constructor(code, _FUNCTIONS[id(proxy)].dispatcher._id)

    # Python: fields as properties over the record, methods through their compiled
    # versions, the class call through the compiled constructor.
    for i, name in enumerate(fields):
        setattr(proxy, name, _Field(i, f"{cls.__name__}.{name}"))
    compiled = {}

    def method_proxy(name, f):
        def call(self, *args, **kwargs):
            d = compiled.get(name)
            if d is None:
                d = compiled[name] = njit(f)
            return d(self, *args, **kwargs)

        call.__name__ = name
        call.__qualname__ = f"{cls.__qualname__}.{name}"
        call.__doc__ = f.__doc__
        return call

    for name, f in methods.items():
        if name != "__init__":
            setattr(proxy, name, method_proxy(name, f))
    for name, p in props.items():
        getter = method_proxy(name, p.fget) if p.fget is not None else None
        setter = method_proxy(f"{name}.setter", p.fset) if p.fset is not None else None
        setattr(proxy, name, property(getter, setter, doc=p.__doc__))
    for name, f in statics.items():
        setattr(proxy, name, staticmethod(njit(f)))

    def __new__(klass, *args, **kwargs):
        finalize()
        return jit_ctor(*args, **kwargs)

    def __init__(self, *args, **kwargs):
        pass

    __init__.__doc__ = init.__doc__

    def __init_subclass__(klass, **kwargs):
        raise TypeError("cannot subclass from a jitclass")

    def __reduce__(self):
        raise TypeError(f"cannot pickle a jitclass instance ({cls.__name__})")

    def __repr__(self):
        return f"<numba_rs jitclass {cls.__name__} object at {id(self):#x}>"

    proxy.__new__ = __new__
    proxy.__init__ = __init__
    proxy.__init_subclass__ = classmethod(__init_subclass__)
    proxy.__reduce__ = __reduce__
    if "__repr__" not in methods:
        proxy.__repr__ = __repr__
    proxy.class_type = class_type
    proxy._numba_rs_fields = dict(fields)
    proxy.__wrapped__ = cls
    return proxy
