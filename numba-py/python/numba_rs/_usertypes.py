"""Types a user defines for their own classes (part of Numba's low-level extension API):
``typeof_impl``, ``register_model``, ``unbox``, ``box`` and ``NativeValue``.

What numba-rs supports so far is the opaque type: a ``types.Opaque`` subclass with
``models.OpaqueModel``, whose values carry no data in compiled code; jitted code passes
them around and hands them to the overloads written for the type. An argument of such a
class is typed through ``typeof_impl``; when Numba is loaded, a class registered with
Numba's own ``typeof_impl`` whose type is an opaque type with Numba's ``OpaqueModel`` is
accepted too. Anything that needs code generated from llvmlite (a ``StructModel``, an
``unbox`` that builds a value, a ``box``) raises NotImplementedError saying so.
"""

import functools

from . import _numba_bridge, models
from .types import Opaque


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


# Opaque type classes whose values cannot be unboxed by numba-rs (an unbox building a
# value), with the reason.
_UNBOX_REFUSED = {}


def _typecode_of_value(value):
    """The typecode of a value of a user's class, or None (called by numba-py when its
    own typeof does not know the value)."""
    impl = typeof_impl.dispatch(type(value))
    if impl is not _NO_TYPEOF:
        t = impl(value, _TypeofContext())
        if t is None:
            return None
        t = _numba_bridge.from_foreign(t)
        why = _UNBOX_REFUSED.get(type(t))
        if why:
            raise NotImplementedError(why)
        return t.typecode
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


def _check_opaque(cls, what):
    if not (isinstance(cls, type) and issubclass(cls, Opaque)):
        raise NotImplementedError(
            f"{what}: numba-rs supports user types that subclass types.Opaque (with "
            f"models.OpaqueModel) only, not {cls!r}"
        )


def register_model(fe_type_class):
    """``@register_model(MyType)`` on a model class: ``models.OpaqueModel`` for a
    ``types.Opaque`` subclass."""

    def decorate(model):
        _check_opaque(fe_type_class, "register_model")
        if not (isinstance(model, type) and issubclass(model, models.OpaqueModel)):
            raise NotImplementedError(
                f"register_model({fe_type_class.__name__}): numba-rs supports "
                f"models.OpaqueModel only, not {getattr(model, '__name__', model)}"
            )
        return model

    return decorate


class NativeValue:
    """What an unbox function returns (Numba's ``NativeValue``)."""

    def __init__(self, value, is_error=None, cleanup=None):
        self.value = value
        self.is_error = is_error
        self.cleanup = cleanup


class _Dummy:
    """The dummy value an opaque type's unbox returns (``c.context.get_dummy_value()``)."""


class _UnboxContext:
    """The ``c`` an unbox function receives, enough for an opaque type's unbox:
    ``c.context.get_dummy_value()``."""

    def __init__(self):
        self.context = self
        self.dummy = _Dummy()

    def get_dummy_value(self):
        return self.dummy

    def __getattr__(self, name):
        raise NotImplementedError(
            f"the unbox function reads c.{name}: numba-rs runs an opaque type's unbox "
            "only when it returns NativeValue(c.context.get_dummy_value())"
        )


def unbox(typeclass):
    """``@unbox(MyType)``: for an opaque type the unbox returns
    ``NativeValue(c.context.get_dummy_value())`` (nothing crosses); numba-rs checks it
    does, and refuses arguments of the type otherwise."""

    def decorate(fn):
        _check_opaque(typeclass, "unbox")
        c = _UnboxContext()
        try:
            out = fn(None, None, c)
            ok = isinstance(out, NativeValue) and out.value is c.dummy
            why = "" if ok else "it returns something else"
        except NotImplementedError as e:
            ok, why = False, str(e)
        except Exception as e:  # the function does codegen numba-rs cannot stand in for
            ok, why = False, f"it failed on numba-rs's stand-in context ({e!r})"
        if ok:
            _UNBOX_REFUSED.pop(typeclass, None)
        else:
            _UNBOX_REFUSED[typeclass] = (
                f"unbox({typeclass.__name__}) builds a value with llvmlite, which numba-rs "
                f"does not run: {why}"
            )
        return fn

    return decorate


def box(typeclass):
    """``@box(MyType)``: boxing runs llvmlite code, which numba-rs does not run yet."""

    def decorate(fn):
        raise NotImplementedError(
            f"box({getattr(typeclass, '__name__', typeclass)}): numba-rs does not run "
            "llvmlite boxing code yet (a jitted function cannot return an opaque value)"
        )

    return decorate
