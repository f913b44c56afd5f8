"""The dispatcher object ``@njit`` returns, with Numba's ``Dispatcher`` API.

The compiling and calling core is the Rust ``_numba_rs.Dispatcher``; this subclass adds
what is simplest in Python: the function attributes (``functools.update_wrapper``),
binding as a method (``__get__``), ``overloads`` and their ``entry_point``s,
``inspect_types`` and pickling (``__reduce__``: by reference when the function is
importable by its qualified name, else by value).
"""

import builtins
import collections
import functools
import importlib
import marshal
import sys
import types as pytypes
import uuid
import weakref

from ._numba_rs import Dispatcher as _Dispatcher


class CompileResult:
    """One specialisation (Numba's ``CompileResult``): ``signature``, ``entry_point`` (a
    callable running this specialisation directly, without dispatch), ``argtypes`` and
    ``return_type``."""

    def __init__(self, dispatcher, argtypes):
        from .types import Signature

        self.argtypes = tuple(argtypes)
        self.return_type = dispatcher._return_type(self.argtypes)
        self.signature = Signature(self.return_type, self.argtypes)
        # Object mode returns a Python object, which nopython code never does.
        self.objectmode = str(self.return_type) == "pyobject"
        # The loops lifted out of an object-mode function (their dispatchers).
        self.lifted = tuple(dispatcher._lifted(self.argtypes)) if self.objectmode else ()
        self.py_func = dispatcher.py_func
        run, argtypes = dispatcher._run_overload, self.argtypes

        def entry_point(*args):
            return run(argtypes, *args)

        # Named and placed like the Python function (Numba's entry points are).
        for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
            setattr(entry_point, attr, getattr(self.py_func, attr, None))
        self.entry_point = entry_point
        self._dispatcher = dispatcher

    @property
    def library(self):
        """The compiled code of this specialisation (:class:`CodeLibrary`)."""
        return CodeLibrary(self._dispatcher, self.argtypes)

    @property
    def type_annotation(self):
        """The annotated typed IR (:class:`TypeAnnotation`)."""
        return TypeAnnotation(self._dispatcher, self.argtypes)

    @property
    def metadata(self):
        """Numba's ``metadata`` dict: ``parfor_diagnostics`` (a
        :class:`ParforDiagnostics`) for a ``parallel=True`` specialisation, and
        ``preserved_ir`` (the final IR, :mod:`numba_rs.inlining`'s objects) when the
        function's ``pipeline_class`` preserves it."""
        meta = {}
        if getattr(self._dispatcher, "_preserve_ir", False):
            meta["preserved_ir"] = self._dispatcher._preserved_ir(self.argtypes)
        if getattr(self._dispatcher, "_options", {}).get("parallel"):
            meta["parfor_diagnostics"] = ParforDiagnostics(self._dispatcher, self.argtypes)
        return meta

    def __repr__(self):
        return f"CompileResult({self.py_func.__qualname__}, {self.signature})"


FusionReport = collections.namedtuple("FusionReport", ["first", "second", "message"])


class ParforDiagnostics:
    """What ``parallel=True`` did to one specialisation, as Numba's
    ``ParforDiagnostics`` holds it: ``fusion_info`` (loop id -> the ids fused into it),
    ``nested_fusion_info`` (loop id -> the NumPy loops of its body, which run serially
    inside it; a ``prange`` inside a parallel loop stays a serial loop of the body and
    is not listed), ``replaced_fns``
    (NumPy functions replaced by parallel versions: key -> ``(name, module)`` and the
    line), ``fusion_reports`` (each fusion tried: ``first``, ``second`` and Numba's
    ``message``),
    ``count_parfors()``, ``hoisted_allocations()`` and ``dump(level)``."""

    def __init__(self, dispatcher, argtypes):
        import re

        report = dispatcher._parfor_report(tuple(argtypes))
        self._report = report
        self.initial_parfors = [lid for lid, _l, _p, _t in report.loops]
        self.fusion_info = report.fusion_info
        self.nested_fusion_info = report.nested_fusion_info
        self.fusion_reports = [FusionReport(a, b, msg) for a, b, msg in report.fusion_reports]
        self.replaced_fns = {}
        for lid, line, pattern, _into in report.loops:
            m = re.search(r"\('prange', 'internal', \(\('(\w+)', '(\w+)'\)", pattern)
            if m:
                self.replaced_fns[lid] = ((m.group(1), m.group(2)), line)

    def count_parfors(self):
        """The parallel loops left after fusion (with those nested in them)."""
        return len(self._report.all_final())

    def hoisted_allocations(self):
        """``(loop id, line, function)`` of each allocation a loop makes once per thread."""
        return self._report.hoisted

    def dump(self, level=1):
        """The ``parallel_diagnostics`` report of this specialisation."""
        self._report.dump(level)


class CodeLibrary:
    """The code of one specialisation (Numba's ``CodeLibrary``, the part a user reads):
    ``get_llvm_str()`` the final LLVM module, ``get_asm_str()`` its host assembly."""

    def __init__(self, dispatcher, argtypes):
        self._dispatcher = dispatcher
        self._argtypes = argtypes

    def get_llvm_str(self):
        return self._dispatcher.inspect_llvm(self._argtypes)

    def get_asm_str(self):
        return self._dispatcher.inspect_asm(self._argtypes)


class Overloads(dict):
    """``dispatcher.overloads``: argument-type tuple -> :class:`CompileResult`. A tuple of
    Numba's own type objects (``numba.typeof(x)``) finds the same entry, as numba-rs types
    compare equal to the Numba types that print the same."""

    def __missing__(self, key):
        if isinstance(key, tuple):
            for sig, res in self.items():
                if len(sig) == len(key) and all(a == b for a, b in zip(sig, key)):
                    return res
        raise KeyError(key)

    def __contains__(self, key):
        try:
            self[key]
        except KeyError:
            return False
        return True

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default


class TypeAnnotation:
    """The typed IR of one specialisation annotated by source line (Numba's
    ``TypeAnnotation``): ``str()`` is the text ``inspect_types`` prints for it,
    ``annotate_raw()`` the same per source line."""

    def __init__(self, dispatcher, argtypes):
        self._text = dispatcher._type_annotation(argtypes)
        lifted = dispatcher._lifted(argtypes)  # empty unless an object-mode overload
        if lifted:
            # Numba's annotation of an object-mode function ends with its lifted loops.
            parts = ["# The function contains lifted loops"]
            for loop in lifted:
                parts.append(f"# Loop at line {loop.get_source_location()}")
                parts.append(f"# Has {len(loop.overloads)} overloads")
                parts.extend(str(cres.type_annotation) for cres in loop.overloads.values())
            self._text += "\n".join(parts) + "\n"
        self.signature = argtypes
        code = dispatcher.py_func.__code__
        self.filename = code.co_filename
        self.firstlineno = code.co_firstlineno
        self.funcname = dispatcher.py_func.__qualname__

    def __str__(self):
        return self._text

    def annotate_raw(self):
        """``{(file:line, signature): {...}}`` as Numba's: the function's source lines
        with, per line, the typed IR lines printed under it."""
        # The text is Numba's layout: `# --- LINE n --- ` heads a line's block, its IR
        # lines are comments under it, then the source line itself.
        python_lines, ir_lines, current = [], {}, None
        for line in self._text.splitlines():
            text = line.strip()
            if text.startswith("# --- LINE "):
                current = int(text.split()[3])
                ir_lines[current] = []
            elif current is None or not text or text.startswith("# File:"):
                continue
            elif text.startswith("#"):
                ir_lines[current].append(text[1:].strip())
            else:
                python_lines.append((current, line))
        data = {
            "filename": self.filename,
            "funcname": self.funcname,
            "python_lines": python_lines,
            "ir_lines": ir_lines,
        }
        return {(f"{self.filename}:{self.firstlineno + 1}", self.signature): data}


_CompileStats = collections.namedtuple(
    "_CompileStats", ("cache_path", "cache_hits", "cache_misses")
)


# Dispatchers by id, for `types.Dispatcher(...).dispatcher`.
_BY_ID = {}


def _dispatcher_by_id(id):
    ref = _BY_ID.get(id)
    d = ref() if ref is not None else None
    if d is None:
        raise LookupError(f"no live dispatcher has the id {id}")
    return d


class CPUDispatcher(_Dispatcher):
    """A jitted function: compiles one specialisation per argument-type tuple."""

    def __init__(self, py_func, signatures=None, **options):
        functools.update_wrapper(self, py_func)
        # Calls from Python go through the vectorcall protocol (CPython 3.11 does not let
        # a Python subclass inherit it by itself).
        self._enable_vectorcall()
        # The decorator's options, to rebuild after pickling.
        self._options = dict(options)
        # Identifies this dispatcher across pickling: unpickling it twice in one process
        # gives one dispatcher (Numba's `_uuid` memo).
        self._uuid = None
        _BY_ID[self._id] = weakref.ref(self)

    # -- the function-like protocol -------------------------------------------------

    def __get__(self, obj, objtype=None):
        """Bind as a method: ``A().f`` passes the instance first (as Numba does, a
        ``types.MethodType`` over the dispatcher)."""
        if obj is None:
            return self
        return pytypes.MethodType(self, obj)

    def disable_compile(self, val=True):
        """Disable the compilation of new signatures at call time (Numba asserts that
        something was compiled first)."""
        assert (not val) or len(self.signatures) > 0
        super().disable_compile(val)

    @property
    def stats(self):
        """Numba's compile statistics: ``cache_path`` (the on-disk cache's directory,
        None without ``cache=True``) and Counters of ``cache_hits`` / ``cache_misses``
        by argument-type tuple."""
        hits, misses = self._cache_stats()
        site = self._options.get("cache")
        return _CompileStats(
            cache_path=site[0] if site else None,
            cache_hits=collections.Counter({tuple(k): n for k, n in hits}),
            cache_misses=collections.Counter({tuple(k): n for k, n in misses}),
        )

    # -- specialisations ------------------------------------------------------------

    @property
    def overloads(self):
        """Argument-type tuple -> :class:`CompileResult`, in compilation order."""
        return Overloads((sig, CompileResult(self, sig)) for sig in self.signatures)

    @property
    def nopython_signatures(self):
        """The signatures (``return_type(args)``) of every nopython specialisation
        (object-mode ones are left out, as in Numba)."""
        return [res.signature for res in self.overloads.values() if not res.objectmode]

    def compile(self, sig):
        """Compile one signature now (``"f8(f8)"``, ``float64(float64)``, or a tuple of
        argument types); later calls may still compile others. Returns the entry point."""
        from .decorators import _signature_text

        if not self._can_compile:
            raise RuntimeError("compilation disabled")
        argtypes = self._compile_text(_signature_text(sig))
        return self.overloads[argtypes].entry_point

    def get_annotation_info(self, signature=None):
        """Per source line, the typed IR of every specialisation (or of the one
        ``signature`` names), as Numba's ``get_annotation_info``."""
        sigs = [tuple(signature)] if signature is not None else self.signatures
        info = {}
        for sig in sigs:
            info.update(TypeAnnotation(self, sig).annotate_raw())
        return info

    def inspect_types(self, file=None, signature=None, pretty=False, style="default", **kwargs):
        """Print the typed IR annotated by source line for each specialisation (or the one
        ``signature`` names), as Numba prints it: a ``name signature`` header, a rule, the
        annotation, a closing rule."""
        if pretty:
            raise NotImplementedError("inspect_types(pretty=True) is not supported by numba-rs")
        if file is None:
            file = sys.stdout
        sigs = [tuple(signature)] if signature is not None else self.signatures
        for sig in sigs:
            text = str(TypeAnnotation(self, sig))
            print(f"{self.py_func.__name__} {_sig_str(sig)}", file=file)
            print("-" * 80, file=file)
            print(text, file=file)
            print("=" * 80, file=file)

    # -- pickling ---------------------------------------------------------------------

    def parallel_diagnostics(self, signature=None, level=1):
        """Print what ``parallel=True`` did to each specialisation (or the one
        ``signature`` names), in the layout of Numba's report (see
        :mod:`numba_rs.diagnostics`)."""
        if level not in (1, 2, 3, 4):
            raise ValueError("Report level unknown, should be one of 1, 2, 3, 4")
        if not self.signatures:
            raise ValueError("No compiled signatures to report on")
        sigs = [tuple(signature)] if signature is not None else self.signatures
        for sig in sigs:
            self._parfor_report(sig).dump(level)

    def _parfor_report(self, sig):
        from .diagnostics import Report

        if not self._options.get("parallel"):
            raise ValueError("No parfors diagnostic available, is 'parallel=True' set?")
        parallel = self._options.get("parallel")
        fusion = not (isinstance(parallel, dict) and parallel.get("fusion") is False)
        return Report(
            self.py_func,
            self._parallel_loops(sig),
            self._fusion_reports(sig),
            dict(self._nested_parfors(sig)),
            self._hoisted_allocations(sig),
            fusion_enabled=fusion,
        )

    def __reduce__(self):
        ref = _importable(self)
        if ref is not None:
            return (_rebuild_by_reference, ref)
        from .decorators import _signature_text

        state = _reduce_function(self.py_func, self)
        can_compile = self._can_compile
        # As Numba: the signatures travel only when they are all the function accepts.
        sigs = [] if can_compile else [_signature_text(s, portable=True)
                                       for s in self.nopython_signatures]
        return (_rebuild_by_value, (self._get_uuid(), state, self._options, sigs, can_compile))

    def _get_uuid(self):
        if self._uuid is None:
            self._uuid = str(uuid.uuid4())
            _MEMO[self._uuid] = self
        return self._uuid


def _sig_str(sig):
    items = ", ".join(str(t) for t in sig)
    return f"({items},)" if len(sig) == 1 else f"({items})"


def _importable(disp):
    """``(module, qualname)`` when importing the module and following the qualified name
    finds this very dispatcher, else None."""
    module = getattr(disp, "__module__", None)
    qualname = getattr(disp, "__qualname__", "")
    if not module or module == "__main__" or "<locals>" in qualname:
        return None
    try:
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except Exception:
        return None
    return (module, qualname) if obj is disp else None


def _rebuild_by_reference(module, qualname):
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


class _ModuleRef:
    """A module captured by a pickled function: re-imported on rebuild."""

    def __init__(self, name):
        self.name = name

    def __reduce__(self):
        return (importlib.import_module, (self.name,))


def _portable(value):
    """A global or cell value as it pickles: modules by name, the rest as they are."""
    if isinstance(value, pytypes.ModuleType):
        return _ModuleRef(value.__name__)
    return value


def _names(code):
    """Every global name a code object and its nested code objects read."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, pytypes.CodeType):
            names |= _names(c)
    return names


def _reduce_function(func, disp):
    """A function by value: its marshalled code, the globals it reads, its closure cells'
    contents, defaults and names. A global naming the dispatcher itself (a recursive
    function) is recorded by name and bound to the rebuilt dispatcher."""
    globs = {}
    self_names = []
    for name in _names(func.__code__):
        if name in func.__globals__:
            value = func.__globals__[name]
            if value is disp:
                self_names.append(name)
            else:
                globs[name] = _portable(value)
    cells = None
    if func.__closure__ is not None:
        cells = []
        for cell in func.__closure__:
            try:
                cells.append((True, _portable(cell.cell_contents)))
            except ValueError:  # an empty cell
                cells.append((False, None))
    return {
        "code": marshal.dumps(func.__code__),
        "globals": globs,
        "module": func.__module__,
        "name": func.__name__,
        "qualname": func.__qualname__,
        "doc": func.__doc__,
        "defaults": func.__defaults__,
        "kwdefaults": func.__kwdefaults__,
        "cells": cells,
        "self_names": self_names,
    }


def _make_cell(full, value):
    if not full:
        return pytypes.CellType()
    return pytypes.CellType(value)


def _rebuild_function(state):
    code = marshal.loads(state["code"])
    globs = dict(state["globals"])
    globs["__builtins__"] = builtins
    globs.setdefault("__name__", state["module"])
    closure = None
    if state["cells"] is not None:
        closure = tuple(_make_cell(full, v) for full, v in state["cells"])
    func = pytypes.FunctionType(code, globs, state["name"], state["defaults"], closure)
    func.__qualname__ = state["qualname"]
    func.__module__ = state["module"]
    func.__doc__ = state["doc"]
    func.__kwdefaults__ = state["kwdefaults"]
    return func


_MEMO = weakref.WeakValueDictionary()


def _rebuild_by_value(uid, state, options, sigs, can_compile):
    """The dispatcher this process already rebuilt (or pickled) under ``uid``, else a new
    dispatcher over the rebuilt function, compiling on first call; when compiling was
    disabled, its signatures are compiled now and compiling disabled again."""
    disp = _MEMO.get(uid)
    if disp is not None:
        return disp
    func = _rebuild_function(state)
    disp = CPUDispatcher(func, None, **options)
    disp._uuid = uid
    _MEMO[uid] = disp
    for name in state["self_names"]:
        func.__globals__[name] = disp
    for sig in sigs:
        disp.compile(sig)
    if not can_compile:
        disp.disable_compile()
    return disp


class LiftedLoop(CPUDispatcher):
    """A loop lifted out of an object-mode function (Numba's ``LiftedLoop``): compiled in
    nopython mode when its body types, with a dispatcher's API (``overloads``,
    ``signatures``, ``inspect_types``...)."""

    def get_source_location(self):
        """The line the loop starts at."""
        return self._first_line()

    def __repr__(self):
        return f"LiftedLoop({self.py_func!r})"
