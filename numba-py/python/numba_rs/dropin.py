"""The drop-in switch: ``numba_rs.install_as_numba()`` (and ``python -m numba_rs
script.py``) makes ``import numba`` and Numba's public submodules that extension code
imports resolve to numba-rs, so an unmodified program or library runs on numba-rs.

``numba``, ``numba.core.types``, ``numba.types``, ``numba.core.errors``,
``numba.core.typing.cffi_utils`` (``register_module``),
``numba.extending``, ``numba.core.extending``, ``numba.core.config``, ``numba.config``
and ``numba.np.numpy_support`` map to numba-rs's modules. Any other ``numba.*`` module
raises ImportError naming it, and a name numba-rs's module lacks raises AttributeError
(its modules' own messages name what is not supported).
"""

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types as _pytypes


def _numpy_support():
    """``numba.np.numpy_support`` as far as extension code uses it: ``from_dtype`` and
    ``as_dtype``."""
    m = _pytypes.ModuleType("numba.np.numpy_support")
    m.__doc__ = "numba-rs's stand-in for numba.np.numpy_support (from_dtype, as_dtype)."

    def from_dtype(dtype):
        import numpy as np

        from . import types

        dtype = np.dtype(dtype)
        if dtype.names is not None:
            return types.Record.from_dtype(dtype)
        return types._from_name(dtype.name)

    def as_dtype(nbtype):
        import numpy as np

        from . import types

        if isinstance(nbtype, types.Literal):
            nbtype = types.unliteral(nbtype)
        if isinstance(nbtype, types.Record):
            return nbtype.dtype
        if isinstance(nbtype, (types.Number, types.Boolean)):
            return np.dtype(str(nbtype).replace("bool", "bool_").replace("bool__", "bool_"))
        raise NotImplementedError(f"{nbtype!r} cannot be represented as a NumPy dtype")

    m.from_dtype = from_dtype
    m.as_dtype = as_dtype
    _missing(m)
    return m


def _missing(module):
    def __getattr__(name):
        raise AttributeError(
            f"module {module.__name__!r} has no attribute {name!r} (numba-rs standing in "
            "for numba)"
        )

    module.__getattr__ = __getattr__


def _package(name, **attrs):
    m = _pytypes.ModuleType(name)
    m.__path__ = []
    m.__doc__ = f"numba-rs standing in for {name}."
    for k, v in attrs.items():
        setattr(m, k, v)
    _missing(m)
    return m


def _modules():
    import numba_rs
    from . import config, errors, extending, types

    core = _package("numba.core", types=types, errors=errors, extending=extending,
                    config=config)
    np_pkg = _package("numba.np")
    support = _numpy_support()
    np_pkg.numpy_support = support
    from . import cffi_support

    typing_pkg = _package("numba.core.typing", cffi_utils=cffi_support)
    core.typing = typing_pkg
    from . import cuda, experimental, typed
    from .experimental import _jitclass, structref

    return {
        "numba.cuda": cuda,
        "numba.experimental": experimental,
        "numba.experimental.jitclass": _jitclass,
        "numba.experimental.structref": structref,
        "numba.typed": typed,
        "numba": numba_rs,
        "numba.core.typing": typing_pkg,
        "numba.core.typing.cffi_utils": cffi_support,
        "numba.core": core,
        "numba.core.types": types,
        "numba.types": types,
        "numba.core.errors": errors,
        "numba.errors": errors,
        "numba.extending": extending,
        "numba.core.extending": extending,
        "numba.core.config": config,
        "numba.config": config,
        "numba.np": np_pkg,
        "numba.np.numpy_support": support,
    }


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, table):
        self.table = table

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "numba" and not fullname.startswith("numba."):
            return None
        if fullname not in self.table:
            raise ImportError(
                f"numba-rs, standing in for numba, has no module {fullname!r}",
                name=fullname,
            )
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        return self.table[spec.name]

    def exec_module(self, module):
        pass


_installed = None


def install_as_numba():
    """Make ``import numba`` (and the submodules extension code imports) give numba-rs.
    Call it before anything imports Numba; RuntimeError if the real Numba is imported
    already. Idempotent."""
    global _installed
    if _installed is not None:
        return
    existing = sys.modules.get("numba")
    import numba_rs

    if existing is not None and existing is not numba_rs:
        raise RuntimeError(
            "numba is imported already: call numba_rs.install_as_numba() (or run the "
            "program with python -m numba_rs) before anything imports numba"
        )
    table = _modules()
    _installed = _Finder(table)
    sys.meta_path.insert(0, _installed)
    for name, module in table.items():
        sys.modules[name] = module
    # `import numba.core.types` binds `numba.core` on the package: the parents know
    # their children as attributes.
    numba_rs.core = table["numba.core"]
    numba_rs.np = table["numba.np"]
