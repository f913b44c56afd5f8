"""Numba's high-level extension API (``numba.extending``): ``overload``,
``overload_method``, ``overload_attribute`` and ``register_jitable``.

A typing function receives the argument types (``numba_rs.types`` objects, or Numba's own
type objects when it was written against an installed Numba) and returns an
implementation, a plain Python function that numba-rs compiles for those types through
its ordinary pipeline, or None when it does not apply. Each overloaded function, method
or attribute is one dispatcher whose code is chosen per argument-type tuple
(``_generate``) and compiled once per tuple; calls from jitted code link its compiled
code into the caller, where LLVM inlines it. An implementation whose template says
``inline='always'`` (or a cost model that says yes for a call site) is spliced into the
caller's typed IR instead, as Numba's ``InlineOverloads`` pass does.

What numba-rs types itself (``len``, ``np.where``, array methods) keeps its own typing
first; an overload is reached for the argument types numba-rs rejects, as Numba tries the
templates registered before a library's. Anything else overloaded (a plain Python
function, a NumPy function numba-rs lacks) is typed through its overloads alone.

``intrinsic`` bodies are written with llvmlite's IR builder (``numba_rs._intrinsic``).
User types (``numba_rs._usertypes``): ``typeof_impl``, ``register_model`` with
``models.StructModel`` or ``models.OpaqueModel``, ``make_attribute_wrapper``,
``type_callable`` with ``lower_builtin``, ``unbox``/``box`` with ``NativeValue`` and
``as_numba_type``, ``lower_cast`` with the type's ``can_convert_to`` (implicit
conversions), ``lower_builtin("print_item", MyType)`` (``print``). Not here: the rest of
the low-level API (``infer_getattr``, ``lower_getattr`` ...); reading one of those names raises AttributeError
saying so (so ``hasattr`` answers False).
"""

import inspect
import types as _pytypes

from . import _numba_bridge, models
from ._usertypes import (
    NativeValue,
    overload_classmethod,
    as_numba_type,
    box,
    lower_builtin,
    lower_cast,
    make_attribute_wrapper,
    register_model,
    type_callable,
    typeof_impl,
    unbox,
)
from ._numba_rs import _declare_member, _register_overload
from .decorators import njit
from .errors import TypingError

__all__ = [
    "overload",
    "overload_method",
    "overload_attribute",
    "intrinsic",
    "register_jitable",
    "is_jitted",
    "SentryLiteralArgs",
    "BoundLiteralArgs",
    "sentry_literal_args",
    "typeof_impl",
    "register_model",
    "models",
    "unbox",
    "box",
    "NativeValue",
    "type_callable",
    "lower_builtin",
    "lower_cast",
    "make_attribute_wrapper",
    "as_numba_type",
    "get_cython_function_address",
    "overload_classmethod",
]


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


def is_jitted(function):
    """Whether ``function`` is a jitted function (a dispatcher ``njit``/``jit`` made)."""
    from ._numba_rs import Dispatcher

    return isinstance(function, Dispatcher)


# -- templates ---------------------------------------------------------------------------

_JIT_DEFAULTS = {"no_cpython_wrapper": True}


def _check_inline(inline):
    if inline in ("never", "always") or callable(inline):
        return
    raise ValueError(
        "kwarg 'inline' must be one of the strings 'always' or 'never', or it can be a "
        f"callable that returns True/False. Found value {inline!r}"
    )


def _jit_kwargs(jit_options):
    from .decorators import _check_options, _dispatcher_kwargs

    options = dict(jit_options or {})
    options.pop("nopython", None)
    _check_options(options)
    return _dispatcher_kwargs(options)


class _Template:
    """One typing function: ``typing(*arg_types)`` gives an implementation or None."""

    def __init__(self, typing, strict, prefer_literal, what, inline="never"):
        if not callable(typing):
            raise TypeError(f"{what} decorates a typing function, not {typing!r}")
        self.typing = typing
        # 'never', 'always' or a cost model ``(expr, caller_info, callee_info) -> bool``.
        self.inline = inline
        self.strict = strict
        self.prefer_literal = prefer_literal
        self.numba_world = _numba_bridge.wants_numba_types(typing)
        self.what = what

    def _spread_star(self, types):
        """The call's types as Numba gives them to a typing function with ``*args``:
        the items of the packed star tuple, one parameter each."""
        if not hasattr(self, "_star"):
            self._star = _star_position(self.typing)
        k = self._star
        if k is None or len(types) != k + 1:
            return types
        from . import types as rt

        packed = types[k]
        if not isinstance(packed, rt.BaseTuple):
            return types
        return list(types[:k]) + list(packed.types)

    def implementation(self, types, errors):
        """The implementation for these numba-rs types, or None (the reason appended
        to ``errors``)."""
        types = self._spread_star(types)
        args = [_numba_bridge.to_numba(t) for t in types] if self.numba_world else list(types)
        try:
            impl = self.typing(*args)
        except Exception as e:
            if getattr(e, "requested_args", None):
                raise  # a request for literal arguments, answered by the caller
            if not isinstance(e, TypingError):  # a bug in the typing function
                errors.append(
                    f"Rejected as the implementation raised a specific error:\n"
                    f"  {type(e).__name__}: {e}"
                )
                return None
            errors.append(f"Rejected as the implementation raised a specific error:\n  {e}")
            return None
        if impl is None:
            errors.append(f"No match for {self.what} {_describe(self.typing)}.")
            return None
        impl = getattr(impl, "py_func", impl)
        if not inspect.isfunction(impl):
            raise TypingError(
                f"{self.what} {_describe(self.typing)} returned {impl!r}: an implementation "
                "must be a Python function"
            )
        if self.strict:
            _check_signatures(self.typing, impl)
        return impl


def _star_position(func):
    """The number of positional parameters before ``func``'s ``*args``, or None."""
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return None
    for i, p in enumerate(params):
        if p.kind == p.VAR_POSITIONAL:
            return i
    return None


def _describe(func):
    code = getattr(func, "__code__", None)
    where = f" ({code.co_filename}:{code.co_firstlineno})" if code else ""
    return f"'{getattr(func, '__qualname__', func)}'{where}"


def _check_signatures(typing, impl):
    """The check ``strict=True`` makes (Numba's rules): the implementation takes the
    typing function's positional parameters by name, its keyword parameters by name and
    default, and a ``*args`` where the typing function has one (or one that takes the
    typing function's trailing parameters); ``**kwargs`` in neither."""
    ts = inspect.signature(typing)
    js = inspect.signature(impl)
    sigs = f"Typing signature:         {ts}\nImplementation signature: {js}"
    prefix = "Typing and implementation arguments differ in "

    def split(sig):
        args, kws, star = [], [], None
        for p in sig.parameters.values():
            if p.kind == p.VAR_KEYWORD:
                raise TypingError(
                    "The use of VAR_KEYWORD (e.g. **kwargs) is unsupported. (offending "
                    f"argument name is '{p}')"
                )
            if p.default is p.empty:
                args.append(p)
                if p.kind == p.VAR_POSITIONAL:
                    star = p
            else:
                kws.append(p)
        return args, kws, star

    t_args, t_kws, t_star = split(ts)
    i_args, i_kws, i_star = split(js)
    a, b = t_args, i_args
    if t_star is not None and i_star is None:
        raise TypingError(
            "VAR_POSITIONAL (e.g. *args) argument kind (offending argument name is "
            f"'{t_star}') found in the typing function signature, but is not in the "
            f"implementing function signature.\n{sigs}"
        )
    if t_star is None and i_star is not None:
        # The implementation's *args takes the typing function's trailing parameters.
        b = i_args[: i_args.index(i_star)]
        names = [p.name for p in t_args]
        if not b or b[-1].name not in names:
            first = b[-1] if b else i_star
            raise TypingError(f"{prefix}argument names.\n{sigs}\nFirst difference: '{first}'")
        a = t_args[: names.index(b[-1].name) + 1]

    def diff(x, y):
        return "Difference: %s" % (set(x) ^ set(y))

    if a != b:
        raise TypingError(f"{prefix}argument names.\n{sigs}\n{diff(a, b)}")
    if [p.name for p in t_kws] != [p.name for p in i_kws]:
        raise TypingError(f"{prefix}keyword argument names.\n{sigs}\n{diff(t_kws, i_kws)}")
    if [p.default for p in t_kws] != [p.default for p in i_kws]:
        raise TypingError(
            f"{prefix}keyword argument default values.\n{sigs}\n{diff(t_kws, i_kws)}"
        )


def _generated_dispatcher(typing, name, qualname, module, generate, jit_options,
                          literal_args):
    """A dispatcher whose code ``generate(types)`` chooses per argument types, binding
    arguments by the typing function's parameters (a copy of it named ``name``)."""
    from .dispatcher import CPUDispatcher

    shape = _pytypes.FunctionType(
        typing.__code__, typing.__globals__, name, typing.__defaults__, typing.__closure__
    )
    shape.__qualname__ = qualname
    shape.__kwdefaults__ = typing.__kwdefaults__
    shape.__module__ = module
    return CPUDispatcher(
        shape, None, _generate=generate, _literal_args=literal_args, **jit_options
    )


class _Overloaded:
    """Every template of one function, behind one dispatcher: the first template that
    gives an implementation for the argument types wins."""

    def __init__(self, func, name, typing, jit_options, literal_args):
        self.func = func
        self.templates = []
        module = getattr(func, "__module__", None) or typing.__module__
        # The template that gave the implementation, by argument types.
        self.chosen = {}
        self.dispatcher = _generated_dispatcher(
            typing, name, name, module, self, jit_options, literal_args
        )

    def __call__(self, types):
        return self.generate(types)

    def inline_for(self, types):
        """The ``inline=`` option of the implementation for these types."""
        tmpl = self.chosen.get(tuple(types))
        return tmpl.inline if tmpl is not None else None

    def generate(self, types):
        errors = []
        for tmpl in self.templates:
            impl = tmpl.implementation(types, errors)
            if impl is not None:
                self.chosen[tuple(types)] = tmpl
                return impl
        shown = ", ".join(str(t) for t in types)
        detail = "\n".join(f" - {e}" for e in errors)
        raise TypingError(
            f"No implementation of function {_function_text(self.func)} found for "
            f"signature:\n \n >>> {self.dispatcher.__name__}({shown})\n \n"
            f"There are {len(self.templates)} candidate implementations:\n{detail}"
        )


def _function_text(func):
    if isinstance(func, _pytypes.BuiltinFunctionType):
        return f"Function(<built-in function {func.__name__}>)"
    return f"Function({func!r})"


# Overloaded functions by id (the function kept alive by its entry).
_FUNCTIONS = {}


def overload(func, jit_options=None, strict=True, inline="never", prefer_literal=False,
             **kwargs):
    """``@overload(func)``: the decorated typing function implements ``func`` (a Python
    function, a builtin, a NumPy function) for the argument types it accepts."""
    if kwargs:
        raise TypeError(f"overload() got unexpected keyword arguments {sorted(kwargs)}")
    _check_inline(inline)
    opts = {**_JIT_DEFAULTS, **(jit_options or {})}

    def decorate(typing):
        tmpl = _Template(typing, strict, prefer_literal, "overload", inline)
        entry = _FUNCTIONS.get(id(func))
        if entry is None:
            name = getattr(func, "__name__", None) or typing.__name__
            entry = _Overloaded(
                func, name, typing, _jit_kwargs(opts),
                "prefer" if prefer_literal else "fallback",
            )
            _FUNCTIONS[id(func)] = entry
            _register_overload(func, entry.dispatcher)
        entry.templates.append(tmpl)
        return typing

    return decorate


class _Member:
    """One ``overload_method`` / ``overload_attribute`` template with its dispatcher."""

    def __init__(self, cls, name, tmpl, jit_options, literal_args):
        self.cls = cls
        self.name = name
        self.tmpl = tmpl
        # Numba's classes (``numba.core.types.Array``) test Numba's type objects.
        self.numba_class = _numba_bridge._from_numba(cls)
        typing = tmpl.typing
        qualname = f"{getattr(cls, '__name__', cls)}.{name}"
        self.dispatcher = _generated_dispatcher(
            typing, name, qualname, typing.__module__, self, jit_options, literal_args
        )

    def __call__(self, types):
        return self.generate(types)

    def inline_for(self, types):
        """The ``inline=`` option of this member's implementation."""
        return self.tmpl.inline

    def applies(self, t):
        if self.numba_class:
            t = _numba_bridge.to_numba(t)
        try:
            return isinstance(t, self.cls)
        except TypeError:
            return False

    def generate(self, types):
        errors = []
        impl = self.tmpl.implementation(types, errors)
        if impl is None:
            shown = ", ".join(str(t) for t in types[1:])
            raise TypingError(
                f"No implementation of {self.tmpl.what} '{self.name}' of {types[0]} found "
                f"for arguments ({shown}):\n" + "\n".join(f" - {e}" for e in errors)
            )
        return impl


_METHODS = {}
_ATTRIBUTES = {}


def _member(table, attribute, what, cls, attr, jit_options, strict, inline,
            prefer_literal):
    if not isinstance(cls, type):
        raise TypeError(f"{what} takes a type class (types.Array, ...), not {cls!r}")
    _check_inline(inline)
    opts = {**_JIT_DEFAULTS, **(jit_options or {})}

    def decorate(typing):
        tmpl = _Template(typing, strict, prefer_literal, what, inline)
        member = _Member(cls, attr, tmpl, _jit_kwargs(opts),
                         "prefer" if prefer_literal else "fallback")
        table.setdefault(attr, []).append(member)
        _declare_member(attr, attribute)
        return typing

    return decorate


def overload_method(typ, attr, jit_options=None, strict=True, inline="never",
                    prefer_literal=False, **kwargs):
    """``@overload_method(types.Array, "name")``: ``value.name(...)`` on values whose type
    is an instance of ``typ``; the typing function takes the receiver's type first."""
    if kwargs:
        raise TypeError(f"overload_method() got unexpected keyword arguments {sorted(kwargs)}")
    return _member(_METHODS, False, "overload_method", typ, attr, jit_options, strict,
                   inline, prefer_literal)


def overload_attribute(typ, attr, jit_options=None, strict=True, inline="never",
                       prefer_literal=False, **kwargs):
    """``@overload_attribute(types.Array, "name")``: ``value.name`` computed by the
    implementation the typing function gives for the receiver's type."""
    if kwargs:
        raise TypeError(
            f"overload_attribute() got unexpected keyword arguments {sorted(kwargs)}"
        )
    return _member(_ATTRIBUTES, True, "overload_attribute", typ, attr, jit_options, strict,
                   inline, prefer_literal)


def _find(table, t, name):
    for member in reversed(table.get(name, ())):
        if member.applies(t):
            return member.dispatcher._id
    return None


def _find_method(t, name):
    """The dispatcher of method ``name`` for receiver type ``t`` (called while typing)."""
    return _find(_METHODS, t, name)


def _find_attribute(t, name):
    """The dispatcher of attribute ``name`` for receiver type ``t``: an overload, or an
    attribute Numba's own registries give a user's Numba type (``make_attribute_wrapper``
    imported from Numba), adopted on first use."""
    found = _find(_ATTRIBUTES, t, name)
    if found is None:
        from ._usertypes import _adopt_numba_attribute

        if _adopt_numba_attribute(t, name):
            found = _find(_ATTRIBUTES, t, name)
    return found


class ForceLiteralArg(TypingError):
    """Raised by a typing function to ask for some arguments as literal types (Numba's
    ``ForceLiteralArg``): the caller is typed again with those arguments' literal types,
    or asks for its own arguments as literals."""

    def __init__(self, arg_indices, loc=None):
        self.requested_args = frozenset(arg_indices)
        super().__init__(f"Pseudo-exception to force literal arguments in the dispatcher: "
                         f"{sorted(self.requested_args)}")


def _is_literal(t):
    from . import types as rt

    if isinstance(t, rt.Literal):
        return True
    nt = _numba_bridge.numba_types()
    return nt is not None and isinstance(t, nt.Literal)


class BoundLiteralArgs:
    """``SentryLiteralArgs(...).for_function(f)``: :meth:`bind` checks a call's types."""

    def __init__(self, pysig, literal_args):
        self.pysig = pysig
        self.literal_args = tuple(literal_args)

    def bind(self, *args, **kwargs):
        """Raise :class:`ForceLiteralArg` for the named arguments not yet literal."""
        sentry_literal_args(self.pysig, self.literal_args, args, kwargs)


class SentryLiteralArgs:
    """Numba's ``SentryLiteralArgs(['x'])``: a typing function asks for the named
    arguments as literal types (``.for_function(typing_fn).bind(*args)``)."""

    def __init__(self, literal_args):
        self.literal_args = tuple(literal_args)

    def for_function(self, fn):
        return self.for_pysig(inspect.signature(fn))

    def for_pysig(self, pysig):
        return BoundLiteralArgs(pysig, self.literal_args)


def sentry_literal_args(pysig, literal_args, args, kwargs):
    """Numba's ``sentry_literal_args``: ForceLiteralArg for the arguments named in
    ``literal_args`` whose types are not literal."""
    bound = pysig.bind(*args, **kwargs)
    wanted = [
        i
        for i, (name, t) in enumerate(bound.arguments.items())
        if name in literal_args and not _is_literal(t)
    ]
    if wanted:
        raise ForceLiteralArg(wanted)


def intrinsic(*args, **kwargs):
    """``@intrinsic`` / ``@intrinsic(prefer_literal=True)``: the decorated typing
    function ``(typingctx, *arg_types) -> (signature, codegen)`` implements a function
    jitted code calls; ``codegen(context, builder, signature, args)`` writes its body with
    llvmlite's IR builder (see ``numba_rs._intrinsic``)."""
    from ._intrinsic import Intrinsic

    prefer_literal = kwargs.pop("prefer_literal", False)
    if kwargs:
        raise TypeError(f"intrinsic() got unexpected keyword arguments {sorted(kwargs)}")
    if len(args) == 1 and callable(args[0]):
        return Intrinsic(args[0], prefer_literal)
    if args:
        raise TypeError("intrinsic takes a function or keyword options")
    return lambda fn: Intrinsic(fn, prefer_literal)


def _type_intrinsic(key, codes):
    from ._intrinsic import type_intrinsic

    return type_intrinsic(key, codes)


def _intrinsic_parameters(key):
    from ._intrinsic import intrinsic_parameters

    return intrinsic_parameters(key)


def _can_convert(from_code, to_code):
    from ._usertypes import _can_convert

    return _can_convert(from_code, to_code)


def _prints(code):
    from ._usertypes import _prints

    return _prints(code)


def _codegen_intrinsic(key, codes, ret):
    from ._intrinsic import codegen_intrinsic

    return codegen_intrinsic(key, codes, ret)


def get_cython_function_address(module_name, function_name):
    """The address of a C function a Cython module exports in its ``__pyx_capi__`` (as
    SciPy's ``scipy.special.cython_special`` does), to wrap in a ctypes function type
    that jitted code calls."""
    import ctypes
    import importlib

    module = importlib.import_module(module_name)
    capi = module.__pyx_capi__
    try:
        capsule = capi[function_name]
    except (KeyError, TypeError):
        raise ValueError(
            f"No function '{function_name}' found in __pyx_capi__ of '{module_name}'"
        ) from None
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    name = api.PyCapsule_GetName(capsule)
    return api.PyCapsule_GetPointer(capsule, name) or 0


# Names of Numba's ``numba.extending`` that numba-rs does not have: reading one raises
# AttributeError naming it (so ``hasattr`` and ``getattr(m, n, default)`` work).
_NUMBA_EXTENDING = (
    "generated_jit",
    "infer",
    "infer_getattr",
    "infer_global",
    "lower_getattr",
    "lower_getattr_generic",
    "lower_setattr",
    "lower_setattr_generic",
    "reflect",
    "include_path",
)


def __getattr__(name):
    if name in _NUMBA_EXTENDING:
        raise AttributeError(
            f"numba_rs.extending has no attribute {name!r}: numba.extending.{name} (part "
            "of Numba's low-level extension API) is not supported by numba-rs yet"
        )
    raise AttributeError(f"module 'numba_rs.extending' has no attribute {name!r}")
