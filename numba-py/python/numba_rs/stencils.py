"""``@stencil`` (Numba's ``numba.stencil``): a kernel written with relative indices
(``a[-1, 0] + a[1, 0]``) applied at every position of its input arrays where the whole
neighbourhood lies inside them; the border, where it does not, holds ``cval`` (0 unless
given).

As Numba does, the stencil becomes a generated function per argument types: the loop
nest over the interior (the outer loop a ``prange``, so it is a parallel loop when the
caller is compiled with ``parallel=True`` and a serial loop otherwise), the kernel's
body with each relative index shifted by the loop indices, the output allocated with
the kernel's result type (found by compiling the shifted kernel first). Calls from
jitted code compile that function like any callee; a call from Python runs it serially.

Options, as Numba's: ``neighborhood=((lo, hi), ...)`` (needed when an index is not a
constant), ``cval=`` (the border value; with ``out=`` the border is left alone unless
it is given), ``standard_indexing=('b',)`` (arguments indexed as written), the mode
``'constant'`` only. Call-time keywords: ``out=`` (an array to write into) and
``neighborhood=``.
"""

import ast
import copy
import inspect
import itertools
import math
import textwrap

import numpy as np

from .errors import NumbaValueError

_OPTIONS = ("cval", "standard_indexing", "neighborhood")


def stencil(func_or_mode="constant", **options):
    """``@stencil`` or ``@stencil(neighborhood=..., cval=..., standard_indexing=...)``."""
    if not isinstance(func_or_mode, str):
        mode, func = "constant", func_or_mode
    else:
        mode, func = func_or_mode, None
    for option in options:
        if option not in _OPTIONS:
            raise NumbaValueError("Unknown stencil option " + option)
    if mode != "constant":
        raise NumbaValueError("Unsupported mode style " + mode)

    def decorated(kernel):
        return StencilFunc(kernel, mode, options)

    return decorated(func) if func is not None else decorated


def _absent(t):
    """An argument left out (its default None) or given as None."""
    if t is None:
        return True
    text = str(t)
    return text == "none" or text.startswith("omitted")


def _const_int(node):
    """The integer a constant index expression is (``1``, ``-1``), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, (ast.USub, ast.UAdd))
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, int)
    ):
        return -node.operand.value if isinstance(node.op, ast.USub) else node.operand.value
    return None


class _Shift(ast.NodeTransformer):
    """Each index of a relatively indexed array shifted by the loop indices; the
    constant offsets seen, per dimension."""

    def __init__(self, relative, ndim, index_names):
        self.relative = relative
        self.ndim = ndim
        self.index_names = index_names
        self.lo = [0] * ndim
        self.hi = [0] * ndim
        self.variable = False

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if not (isinstance(node.value, ast.Name) and node.value.id in self.relative):
            return node
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(items) != self.ndim:
            raise NumbaValueError(
                "Stencil index does not match array dimensionality."
            )
        shifted = []
        for d, item in enumerate(items):
            k = _const_int(item)
            if k is None:
                self.variable = True
            else:
                self.lo[d] = min(self.lo[d], k)
                self.hi[d] = max(self.hi[d], k)
            shifted.append(
                ast.BinOp(left=ast.Name(self.index_names[d], ast.Load()), op=ast.Add(), right=item)
            )
        index = shifted[0] if self.ndim == 1 else ast.Tuple(shifted, ast.Load())
        return ast.copy_location(ast.Subscript(node.value, index, node.ctx), node)


class StencilFunc:
    """A ``@stencil`` kernel: callable from Python (``k(a)``, ``k(a, out=b)``) and from
    jitted code."""

    def __init__(self, kernel, mode, options):
        self.kernel_func = kernel
        self.mode = mode
        self.options = dict(options)
        self.neighborhood = options.get("neighborhood")
        source = textwrap.dedent(inspect.getsource(kernel))
        tree = ast.parse(source)
        fdef = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
        fdef.decorator_list = []
        self._fdef = fdef
        self._arg_names = [a.arg for a in fdef.args.args]
        std = options.get("standard_indexing", ())
        self._standard = {std} if isinstance(std, str) else set(std)
        for name in self._standard:
            if name not in self._arg_names:
                raise NumbaValueError(
                    f"Standard indexing requested for array {name} but that is not an "
                    "argument to the stencil kernel."
                )
        self._dispatchers = {}
        self.__name__ = kernel.__name__
        self.__qualname__ = kernel.__qualname__
        self.__doc__ = kernel.__doc__
        self.__module__ = kernel.__module__

    def __repr__(self):
        return f"StencilFunc(<function {self.__qualname__}>)"

    # -- calls ----------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        unknown = set(kwargs) - {"out", "neighborhood"}
        if unknown:
            raise TypeError(f"stencil got unexpected keyword argument(s) {sorted(unknown)}")
        if len(args) != len(self._arg_names):
            raise TypeError(
                f"{self.__name__}() takes {len(self._arg_names)} positional arguments "
                f"but {len(args)} were given"
            )
        return self._dispatcher(False)(*args, **kwargs)

    def _numba_rs_stencil(self, parallel):
        """The dispatcher a jitted caller compiled with ``parallel`` calls."""
        return self._dispatcher(bool(parallel))

    def _dispatcher(self, parallel):
        d = self._dispatchers.get(parallel)
        if d is None:
            from .decorators import _parallel_pairs
            from .dispatcher import CPUDispatcher

            params = ", ".join(self._arg_names + ["out=None", "neighborhood=None"])
            ns = {}
            exec(f"def {self.__name__}({params}):\n    pass\n", ns)
            shape = ns[self.__name__]
            shape.__qualname__ = self.__qualname__
            shape.__module__ = self.__module__
            d = CPUDispatcher(
                shape,
                None,
                parallel=_parallel_pairs(parallel),
                _generate=self._generate,
            )
            self._dispatchers[parallel] = d
        return d

    # -- code generation ------------------------------------------------------------

    def _generate(self, types):
        """The loop-nest function for these argument types (the kernel's, then ``out``
        and ``neighborhood``)."""
        n = len(self._arg_names)
        kernel_types = list(types[:n])
        out_t = types[n] if len(types) > n else None
        nbh_t = types[n + 1] if len(types) > n + 1 else None
        relative = [
            name
            for name, t in zip(self._arg_names, kernel_types)
            if getattr(t, "ndim", None) and name not in self._standard
        ]
        if not relative:
            raise NumbaValueError("Stencil kernel must have at least one input array.")
        first = relative[0]
        ndim = kernel_types[self._arg_names.index(first)].ndim
        taken = set(self._arg_names) | {"out", "neighborhood"}
        fresh = (f"__sten_{k}" for k in itertools.count())
        names = [next(x for x in fresh if x not in taken) for _ in range(ndim)]
        shift = _Shift(set(relative), ndim, names)
        body = [shift.visit(copy.deepcopy(s)) for s in self._fdef.body]
        given = not _absent(nbh_t)
        if given:
            ranges = [(f"neighborhood[{d}][0]", f"neighborhood[{d}][1]") for d in range(ndim)]
        elif self.neighborhood is not None:
            if len(self.neighborhood) != ndim:
                raise ValueError(
                    f"{len(self.neighborhood)} dimensional neighborhood specified for "
                    f"{ndim} dimensional input array"
                )
            ranges = [(int(lo), int(hi)) for lo, hi in self.neighborhood]
        elif shift.variable:
            raise NumbaValueError(
                "Stencil kernel with non-constant index requires the 'neighborhood' option."
            )
        else:
            ranges = list(zip(shift.lo, shift.hi))
        kernel_args = ", ".join(self._arg_names)
        kernel_src = ast.unparse(
            ast.fix_missing_locations(
                ast.Module(
                    body=[
                        ast.FunctionDef(
                            name="__stencil_kernel",
                            args=ast.arguments(
                                posonlyargs=[],
                                args=[ast.arg(a) for a in self._arg_names + names],
                                kwonlyargs=[],
                                kw_defaults=[],
                                defaults=[],
                            ),
                            body=body,
                            decorator_list=[],
                            returns=None,
                        )
                    ],
                    type_ignores=[],
                )
            )
        )
        glb = dict(self.kernel_func.__globals__)
        from . import prange as _prange
        from . import types as _types
        from .decorators import njit

        glb.update({"np": np, "prange": _prange})
        if len(relative) > 1:
            glb["__check_shapes"] = _shape_check()
        # The kernel shifted to a position, compiled on its own first: its result type
        # is the output's dtype.
        exec(kernel_src, glb)
        probe = njit(glb["__stencil_kernel"])
        sig = tuple(kernel_types) + (_types.int64,) * ndim
        probe.compile(sig)
        dtype = _dtype_name(probe.overloads[sig].return_type)
        # The loop nest, the kernel an inner function of it (inlined where it is called).
        lines = [f"def __stencil_nest({kernel_args}, out=None, neighborhood=None):"]
        lines.extend("    " + line for line in kernel_src.splitlines())
        lines.append(f"    __shape = {first}.shape")
        for other in relative[1:]:
            lines.append(f"    __check_shapes({first}, {other})")
        cval = self.options.get("cval")
        if _absent(out_t):
            lines.append(f"    out = np.empty(__shape, dtype=np.{dtype})")
            fill = _cval_text(0 if cval is None else cval)
            for d in range(ndim):
                lo, hi = ranges[d]
                before = [":"] * ndim
                after = [":"] * ndim
                before[d] = f":-min(0, {lo})"
                after[d] = f"__shape[{d}] - max(0, {hi}):"
                lines.append(f"    out[{', '.join(before)}] = {fill}")
                lines.append(f"    out[{', '.join(after)}] = {fill}")
        elif cval is not None:
            lines.append(f"    out[...] = {_cval_text(cval)}")
        indent = "    "
        for d in range(ndim):
            lo, hi = ranges[d]
            loop = "prange" if d == 0 else "range"
            lines.append(
                f"{indent}for {names[d]} in {loop}(-min(0, {lo}), __shape[{d}] - max(0, {hi})):"
            )
            indent += "    "
        pos = ", ".join(names)
        lines.append(f"{indent}out[{pos}] = __stencil_kernel({kernel_args}, {pos})")
        lines.append("    return out")
        src = "\n".join(lines) + "\n"
        exec(src, glb)
        nest = glb["__stencil_nest"]
        nest.__qualname__ = self.__qualname__
        return nest


def _dtype_name(t):
    text = str(t)
    return "bool_" if text == "bool" else text


def _cval_text(cval):
    if isinstance(cval, float) and not math.isfinite(cval):
        if math.isnan(cval):
            return "np.nan"
        return "np.inf" if cval > 0 else "-np.inf"
    return repr(cval)


_CHECK = []


def _shape_check():
    """Numba's ``raise_if_incompatible_array_sizes``, jitted when a stencil with several
    input arrays is first generated (not when numba_rs is imported)."""
    if not _CHECK:
        _CHECK.append(_make_check())
    return _CHECK[0]


def _make_check():
    from .decorators import njit

    @njit
    def check(a, b):
        # Numba's raise_if_incompatible_array_sizes.
        if a.ndim != b.ndim:
            raise ValueError(
                "Secondary stencil array does not have same number  of dimensions as "
                "the first stencil input."
            )
        for i in range(a.ndim):
            if a.shape[i] > b.shape[i]:
                raise ValueError(
                    "Secondary stencil array has some dimension smaller the same "
                    "dimension in the first stencil input."
                )

    return check

