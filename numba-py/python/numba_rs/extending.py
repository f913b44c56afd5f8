"""Numba's extension API (``numba.extending``), the part numba-rs has: ``register_jitable``.

``register_jitable`` marks a plain Python function as callable from jitted code: Python
callers keep calling the function itself, and jitted callers call its compiled version
(compiled per argument types, like any ``njit`` function). The other names of
``numba.extending`` (``overload``, ``intrinsic``, ``register_model``, ...) type and lower
code through Numba's own type objects and LLVM builder, which numba-rs does not have;
using one raises ``NotImplementedError`` naming it.
"""

from .decorators import njit

_NUMBA_EXTENDING = (
    "overload",
    "overload_method",
    "overload_attribute",
    "overload_classmethod",
    "intrinsic",
    "generated_jit",
    "typeof_impl",
    "type_callable",
    "infer",
    "infer_getattr",
    "infer_global",
    "lower_builtin",
    "lower_getattr",
    "lower_getattr_generic",
    "lower_setattr",
    "lower_setattr_generic",
    "lower_cast",
    "models",
    "register_model",
    "make_attribute_wrapper",
    "box",
    "unbox",
    "reflect",
    "NativeValue",
    "as_numba_type",
    "sentry_literal_args",
    "SentryLiteralArgs",
    "BoundLiteralArgs",
    "is_jitted",
    "get_cython_function_address",
    "include_path",
)


def register_jitable(*args, **kwargs):
    """``@register_jitable`` or ``@register_jitable(**jit_options)``: the function is
    returned unchanged, and calls to it from jitted code run it compiled with
    ``njit(**jit_options)``."""

    def wrap(fn):
        fn._numba_rs_kernel = njit(**kwargs)(fn)
        return fn

    if kwargs:
        return wrap
    if len(args) == 1 and callable(args[0]):
        return wrap(args[0])
    if not args:
        return wrap
    raise TypeError("register_jitable takes a function or keyword options")


def __getattr__(name):
    if name in _NUMBA_EXTENDING:
        raise NotImplementedError(
            f"numba.extending.{name} is not supported by numba-rs: it types and lowers "
            "code through Numba's own type objects and LLVM builder"
        )
    raise AttributeError(f"module 'numba_rs.extending' has no attribute {name!r}")
