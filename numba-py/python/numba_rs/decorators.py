"""``njit`` and ``jit``: wrap a Python function in a compiling dispatcher.

Options are checked as Numba checks them: an unknown option is a ``KeyError``; options
that numba-rs accepts but does not implement yet warn with ``NumbaWarning`` naming them
and the function is compiled without them. Nothing is silently ignored.
"""

import warnings

import inspect

from ._numba_rs import Dispatcher as _BaseDispatcher
from ._numba_rs import _Type
from .dispatcher import CPUDispatcher as Dispatcher
from .errors import NumbaDeprecationWarning, NumbaWarning

_FASTMATH_FLAGS = {
    "reassoc": 0x01,
    "nnan": 0x02,
    "ninf": 0x04,
    "nsz": 0x08,
    "arcp": 0x10,
    "contract": 0x20,
    "afn": 0x40,
    "fast": 0x7F,
}

# Options that change nothing observable for the code numba-rs compiles today.
_ACCEPTED = {"nopython", "no_cpython_wrapper", "no_cfunc_wrapper", "_nrt"}
# Options understood but not implemented yet: a NumbaWarning names them.
_NOT_YET = {
    "debug": "debug info",
    "target_backend": "other targets",
    "signature_or_function": None,
}
_KNOWN = _ACCEPTED | set(_NOT_YET) | {
    "inline",
    "cache",
    "forceobj",
    "looplift",
    "fastmath",
    "error_model",
    "nogil",
    "boundscheck",
    "parallel",
    "locals",
    "pipeline_class",
    "no_rewrites",
}
_PARALLEL_NAMES = (
    "comprehension",
    "reduction",
    "inplace_binop",
    "setitem",
    "numpy",
    "stencil",
    "fusion",
    "prange",
)


def _parallel_pairs(value):
    """``parallel=`` as Numba's ``ParallelOptions`` reads it: a bool, or a dict of the
    known names (missing ones on). None when off."""
    if isinstance(value, bool):
        return [(k, True) for k in _PARALLEL_NAMES] if value else None
    if isinstance(value, dict):
        unknown = set(value) - set(_PARALLEL_NAMES)
        if unknown:
            raise NameError(f"Unrecognized parallel options: {unknown}")
        return [(k, bool(value.get(k, True))) for k in _PARALLEL_NAMES]
    raise ValueError("Expect parallel option to be either a bool or a dict")


def _fastmath_bits(value):
    if value is True:
        return _FASTMATH_FLAGS["fast"]
    if not value:
        return 0
    bits = 0
    for name in value:
        if name not in _FASTMATH_FLAGS:
            raise ValueError(f"Unrecognized fastmath flag: {name!r}")
        bits |= _FASTMATH_FLAGS[name]
    return bits


def _type_text(t, portable=False):
    """A type object as signature text: ``typecode(N)`` (any type numba-rs knows, ours
    or Numba's; valid in this process only), else, or when ``portable``, its printed
    name (a string stays as it is)."""
    if isinstance(t, str) or portable:
        return str(t)
    try:
        from .types import _code

        return f"typecode({_code(t)})"
    except Exception:
        return str(t)


def _signature_text(sig, portable=False):
    """One signature as text: ``"f8(f8)"``, a type-object call or a real Numba
    ``Signature`` (which prints as ``(float64,) -> float64``), or a tuple of argument
    types (no return type). ``portable``: names only, for another process (pickles)."""
    if isinstance(sig, tuple):
        items = ", ".join(_type_text(t, portable) for t in sig)
        return f"({items},)" if len(sig) == 1 else f"({items})"
    if hasattr(sig, "args") and hasattr(sig, "return_type") and not isinstance(sig, str):
        # A ``Signature`` object (numba-rs's or Numba's): its types by typecode, so that
        # types with no parsable name (a jitclass instance, a user's type) work too.
        items = ", ".join(_type_text(t, portable) for t in sig.args)
        ret = sig.return_type
        return f"{'' if ret is None else _type_text(ret, portable)}({items})"
    text = str(sig)
    if "->" in text:
        args, ret = text.rsplit("->", 1)
        return f"{ret.strip()}{args.strip()}"
    return text


def _signatures(sig):
    """The signatures a decorator argument gives: a list of them, or one."""
    if sig is None:
        return None
    if isinstance(sig, list):
        return [_signature_text(s) for s in sig]
    return [_signature_text(sig)]


def _check_options(options):
    if options.get("pipeline_class") is not None:
        from . import pipelines

        # Read, not run: a class numba-rs cannot honour raises here.
        pipelines.preserves_ir(options["pipeline_class"])
    unknown = set(options) - _KNOWN
    if unknown:
        raise KeyError(
            f"Unrecognized options: {sorted(unknown)}. Known options are {sorted(_KNOWN)}"
        )
    if options.get("nopython") and options.get("forceobj"):
        raise ValueError("Only one of 'nopython' or 'forceobj' can be True.")
    for name, what in _NOT_YET.items():
        value = options.get(name)
        if value not in (None, False, {}) and what is not None:
            warnings.warn(
                f"numba-rs does not implement the option {name}={value!r} ({what}) yet; "
                "compiling without it",
                NumbaWarning,
                stacklevel=3,
            )
    error_model = options.get("error_model", "python")
    if error_model not in ("python", "numpy"):
        raise ValueError(f"error_model must be 'python' or 'numpy', not {error_model!r}")


def _locals_pairs(locals_):
    """``locals={'c': int64}`` as (name, type text) pairs: types as objects (ours or
    Numba's, which print alike) or strings."""
    if not isinstance(locals_, dict):
        raise TypeError(f"locals must be a dict of variable names to types, not {locals_!r}")
    return [(str(k), str(v)) for k, v in locals_.items()]


def njit(*args, **options):
    """Compile a function in nopython mode: ``@njit``, ``@njit(...)`` or ``@njit("f8(f8)")``."""
    for name in ("nopython", "forceobj"):
        if name in options:
            warnings.warn(f"{name} is set for njit and is ignored", RuntimeWarning, stacklevel=2)
            del options[name]
    return _jit(args, options)


def _dispatcher_kwargs(options):
    """The Rust dispatcher's keyword arguments for checked jit options."""
    kw = {
        "fastmath": _fastmath_bits(options.get("fastmath", False)),
        "error_model": options.get("error_model", "python"),
        "nogil": bool(options.get("nogil", False)),
        "boundscheck": options.get("boundscheck"),
        "parallel": _parallel_pairs(options.get("parallel", False)),
    }
    if options.get("inline") is not None:
        kw["inline"] = options["inline"]
    if options.get("_nrt") is False:
        # As Numba without its runtime: returning an array the function made is a
        # TypingError (the memory inside is still managed by the NRT).
        kw["nrt"] = False
    if options.get("locals"):
        kw["locals"] = _locals_pairs(options["locals"])
    if options.get("no_rewrites"):
        # Numba's flag: no array-expression fusion (numba-dispatch's `no_rewrites`).
        kw["no_rewrites"] = True
    if options.get("forceobj"):
        kw["object_mode"] = "force"
        kw["looplift"] = bool(options.get("looplift", True))
    return kw


def _jit(args, options):
    """The decorator for checked options: nopython, or object mode with ``forceobj``."""
    _check_options(options)
    kw = _dispatcher_kwargs(options)
    # A type object is callable too (it builds signatures), so it is a signature here.
    if len(args) == 1 and isinstance(args[0], _Type):
        return _jit((str(args[0]),), options)
    cache = bool(options.get("cache", False))
    if len(args) == 1 and callable(args[0]) and not isinstance(args[0], (str, list, tuple)):
        func = _decorated(args[0])
        return _preserving(Dispatcher(func, None, cache=_cache_site(func, cache), **kw), options)
    sigs = _signatures(args[0]) if args else None

    def wrapper(func):
        func = _decorated(func)
        return _preserving(Dispatcher(func, sigs, cache=_cache_site(func, cache), **kw), options)

    return wrapper


def _preserving(dispatcher, options):
    """The dispatcher, keeping each specialisation's final IR when its pipeline class
    asks (``metadata['preserved_ir']``)."""
    cls = options.get("pipeline_class")
    if cls is not None:
        from . import pipelines

        dispatcher._preserve_ir = pipelines.preserves_ir(cls)
    return dispatcher


def _cache_site(func, cache):
    """Where ``cache=True`` keeps ``func``'s compiled code (None without it); Numba's
    RuntimeError when the function has no source file to key it by."""
    if not cache:
        return None
    from . import caching

    return caching.site(func)


def _decorated(func):
    """The function a decorator compiles, or Numba's TypeError for anything else."""
    if isinstance(func, _BaseDispatcher):
        raise TypeError(
            "A jit decorator was called on an already jitted function "
            f"{func}.  If trying to access the original python "
            f"function, use the {func}.py_func attribute."
        )
    if not inspect.isfunction(func):
        raise TypeError(f"The decorated object is not a function (got type {type(func)}).")
    return func


def jit(*args, **options):
    """``@jit``: nopython mode, as Numba 0.59+ compiles by default; object mode with
    ``forceobj=True``. ``nopython=False`` changes nothing since Numba 0.59 (a deprecation
    warning says so)."""
    if options.get("nopython") is False:
        warnings.warn(
            "The keyword argument 'nopython=False' was supplied. From Numba 0.59.0 the "
            "default is True and supplying this argument has no effect.",
            NumbaDeprecationWarning,
            stacklevel=2,
        )
    if not options.get("forceobj"):
        options["nopython"] = True
    return _jit(args, options)
