"""``vectorize`` and ``guvectorize``: NumPy ufuncs whose inner loops numba-rs compiles.

The kernel is compiled by an ordinary dispatcher asked for a NumPy inner loop beside
each specialisation (``numba_lower::wrappers``); the loops become a real ``numpy.ufunc``
(``_numba_rs.make_ufunc``), so broadcasting, ``out=``, ``where=``, casting, ``reduce``,
``accumulate``, ``outer``, ``at`` and ``reduceat`` are NumPy's own.

As in Numba 0.68 both forms return a :class:`DUFunc` (or :class:`GUFunc`): with
signatures its loops are fixed and NumPy picks one by its casting rules; without, a call
whose input types have no loop compiles one for exactly those types first. Kernels run
under NumPy's error model (``x / 0`` is ``inf`` with NumPy's warning); an exception the
kernel raises stops the loop and propagates.
"""

import inspect
import re
import warnings

import numpy as np

from . import _numba_rs
from ._numba_rs import Dispatcher as _Dispatcher
from ._numba_rs import Type as _Type
from ._numba_rs import type_from_name as _type_from_name
from .errors import NumbaWarning

# NumPy's identity codes (PyUFunc_Zero, _One, _None, _ReorderableNone).
_IDENTITY = {0: 0, 1: 1, None: -1, "reorderable": -2}

# Numba's accepted target options (anything else is its KeyError), plus the decorator's own.
_TARGET_OPTIONS = {"boundscheck", "fastmath", "forceobj", "nopython", "writable_args"}
_VECTORIZE_OPTIONS = _TARGET_OPTIONS | {"identity", "cache", "target"}


def _identity_code(identity):
    if isinstance(identity, str):
        if identity == "reorderable":
            return -2
    elif identity is None:
        return -1
    elif identity == 0:
        return 0
    elif identity == 1:
        return 1
    raise ValueError(f"Invalid identity value {identity!r}")


def _check_options(kws, allowed):
    unknown = set(kws) - allowed
    if unknown:
        raise KeyError(
            f"Unrecognized options: {unknown}. Known options are {sorted(_TARGET_OPTIONS)}"
        )
    target = kws.get("target", "cpu")
    if target not in ("cpu", "parallel"):
        raise ValueError(f"Unsupported target: {target}")
    if kws.get("forceobj") or kws.get("nopython") is False:
        raise NotImplementedError("object mode is not supported by numba-rs yet")
    if kws.get("cache"):
        warnings.warn(
            "numba-rs does not implement the option cache=True (caching compiled code to "
            "disk) yet; compiling without it",
            NumbaWarning,
            stacklevel=3,
        )


def _py_func(func):
    """The Python function behind ``func`` (a jitted function's ``py_func``)."""
    if isinstance(func, _Dispatcher):
        return func.py_func
    if not inspect.isfunction(func):
        raise TypeError(f"The decorated object is not a function (got type {type(func)}).")
    return func


def _kernel(func, kws, wrappers, core_dims=None):
    from .decorators import _fastmath_bits

    return _Dispatcher(
        func,
        None,
        fastmath=_fastmath_bits(kws.get("fastmath", False)),
        # Ufunc kernels follow NumPy's error model, as Numba compiles them.
        error_model="numpy",
        nogil=False,
        boundscheck=kws.get("boundscheck"),
        wrappers=wrappers,
        core_dims=core_dims,
    )


def _dtype(t):
    """The NumPy dtype of a scalar Numba type."""
    name = str(t)
    if name == "boolean":
        name = "bool"
    try:
        return np.dtype(name)
    except TypeError:
        raise TypeError(f"{t} is not a NumPy scalar type a ufunc can carry") from None


def _numba_type(value):
    """The Numba type a ufunc operand's elements have (arrays and array-likes by dtype)."""
    if isinstance(value, np.ndarray):
        return _type_from_name(str(value.dtype))
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return _numba_rs.typeof(value)
    return _type_from_name(str(np.asarray(value).dtype))


# NumPy type number -> dtype, for the scalar dtypes a loop can carry.
_NUM_DTYPE = {
    np.dtype(n).num: np.dtype(n)
    for n in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
              "uint64", "float32", "float64", "complex64", "complex128")
}


def _signature_list(sigs):
    from .decorators import _signature_text

    if isinstance(sigs, (str, _Type)) or not isinstance(sigs, (list, tuple)):
        sigs = [sigs]
    return [_signature_text(s) for s in sigs]


def _arg_text(types):
    names = [str(t) for t in types]
    return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"


class _UFuncBase:
    """What DUFunc and GUFunc share: the kernel, its loops and the current ufunc."""

    def __init__(self, func, kws, nin, nout, wrappers, core_dims=None, layout=None):
        self.py_func = func
        self._kws = dict(kws)
        self._kernel = _kernel(func, kws, wrappers, core_dims)
        self._nin, self._nout = nin, nout
        self._identity = _identity_code(kws.get("identity"))
        self._parallel = kws.get("target", "cpu") == "parallel"
        self._layout = layout
        self._ncore = 0
        # (argument types, loop address, NumPy type numbers), in the order NumPy tries them.
        self._loops = []
        self._frozen = False
        self._ufunc = None
        self.__name__ = func.__name__
        self.__qualname__ = getattr(func, "__qualname__", func.__name__)
        self.__doc__ = func.__doc__
        self.__module__ = func.__module__

    # -- loops ------------------------------------------------------------------------

    def _add_compiled(self, argtypes):
        """Record the loop of the specialisation for ``argtypes`` (just compiled)."""
        loop, _, ret = self._kernel._wrapper_addresses(argtypes)
        if not loop:
            raise TypeError(f"{self.__name__}: no inner loop was built for {argtypes}")
        nums = self._type_nums(argtypes, ret)
        if any(tuple(n) == tuple(nums) for _, _, n in self._loops):
            return
        self._loops.append((tuple(argtypes), loop, nums))
        self._ufunc = None

    def _type_nums(self, argtypes, ret):
        """The NumPy type numbers of a loop's operands: the arguments and the result."""
        return [_dtype(t).num for t in (*argtypes, ret)]

    def add(self, sig):
        """Compile one more loop (a signature string or type object)."""
        if self._frozen:
            raise RuntimeError("compilation disabled for %s" % (self.__name__,))
        for text in _signature_list(sig):
            self._add_compiled(self._kernel._compile_text(text))

    def disable_compile(self):
        """Fix the loops: later calls choose among them by NumPy's casting rules."""
        self._frozen = True

    @property
    def ufunc(self):
        """The ``numpy.ufunc`` over the loops compiled so far."""
        if self._ufunc is None:
            self._ufunc = _numba_rs.make_ufunc(
                self.__name__,
                self.__doc__ or "",
                self._nin,
                self._nout,
                [(addr, nums) for _, addr, nums in self._loops],
                self._identity,
                self._layout,
                self._parallel,
                self._ncore,
                20,
                getattr(self, "_writable", []),
            )
        return self._ufunc

    # -- NumPy's attributes -------------------------------------------------------------

    nin = property(lambda self: self._nin)
    nout = property(lambda self: self._nout)
    nargs = property(lambda self: self._nin + self._nout)
    ntypes = property(lambda self: len(self._loops))
    identity = property(lambda self: self.ufunc.identity)
    signature = property(lambda self: self._layout)

    @property
    def _numba_rs_kernel(self):
        """The dispatcher jitted code calls (scalar arguments)."""
        return self._kernel

    @property
    def types(self):
        return list(self.ufunc.types) if self._loops else []

    def __repr__(self):
        return f"<numba_rs.{type(self).__name__} '{self.__name__}'>"


class DUFunc(_UFuncBase):
    """A vectorized function (Numba's ``DUFunc``): a NumPy ufunc whose loops are the
    kernel compiled for each input type (at call time unless compiling was disabled)."""

    def __init__(self, func, identity=None, **kws):
        func = _py_func(func)
        kws["identity"] = identity
        nin = len(inspect.signature(func).parameters)
        super().__init__(func, kws, nin, 1, "ufunc")

    def _compile_for_types(self, argtypes):
        if self._frozen:
            return
        key = tuple(argtypes)
        if any(t == key for t, _, _ in self._loops):
            return
        self._add_compiled(self._kernel._compile_text(_arg_text(argtypes)))

    def _compile_for_args(self, *args, **kws):
        if len(args) < self._nin:
            raise TypeError(
                f"{self.__name__}() takes {self._nin} arguments but {len(args)} were given"
            )
        self._compile_for_types([_numba_type(a) for a in args[: self._nin]])

    def __call__(self, *args, **kws):
        # As Numba's DUFunc: NumPy chooses among the loops (casting safely); only when
        # none fits are the inputs' own types compiled, and the call tried again.
        if self._loops:
            try:
                return self.ufunc(*args, **kws)
            except TypeError:
                if self._frozen:
                    raise
        elif self._frozen:
            raise TypeError(f"{self.__name__}: no loop compiled and compilation is disabled")
        self._compile_for_args(*args, **kws)
        return self.ufunc(*args, **kws)

    def _binary_for(self, *operands):
        """Before a ufunc method: a loop for the operands' types when none would take
        them (compiling allowed)."""
        if self._nin != 2 or self._frozen:
            return
        dts = [np.asarray(o).dtype for o in operands]
        usable = any(
            all(np.can_cast(d, _NUM_DTYPE[n], "safe")
                for d, n in zip(dts, nums))
            for _, _, nums in self._loops
        )
        if not usable:
            self._compile_for_types([_numba_type(o) for o in operands])

    def reduce(self, array, *args, **kws):
        self._binary_for(array, array)
        return self.ufunc.reduce(array, *args, **kws)

    def accumulate(self, array, *args, **kws):
        self._binary_for(array, array)
        return self.ufunc.accumulate(array, *args, **kws)

    def reduceat(self, array, indices, *args, **kws):
        self._binary_for(array, array)
        return self.ufunc.reduceat(array, indices, *args, **kws)

    def outer(self, a, b, *args, **kws):
        self._binary_for(a, b)
        return self.ufunc.outer(a, b, *args, **kws)

    def at(self, a, indices, b=None):
        if b is None:
            self._compile_for_types([_numba_type(a)])
            return self.ufunc.at(a, indices)
        self._binary_for(a, b)
        return self.ufunc.at(a, indices, b)


def vectorize(ftylist_or_function=(), **kws):
    """``@vectorize``, ``@vectorize(signatures, **options)``: a NumPy ufunc of a scalar
    kernel (Numba's ``vectorize``)."""
    if inspect.isfunction(ftylist_or_function) or isinstance(ftylist_or_function, _Dispatcher):
        return vectorize(**kws)(ftylist_or_function)
    _check_options(kws, _VECTORIZE_OPTIONS - {"writable_args"})
    sigs = _signature_list(ftylist_or_function) if ftylist_or_function else []
    identity = kws.pop("identity", None)
    _identity_code(identity)

    def wrap(func):
        u = DUFunc(func, identity=identity, **kws)
        for s in sigs:
            u.add(s)
        if sigs:
            u.disable_compile()
        return u

    return wrap


# -- guvectorize ------------------------------------------------------------------------


def parse_layout(layout):
    """``'(m,n),(n)->(m)'`` as (inputs, outputs), each a list of tuples of dimension
    names; Numba's ValueError for a malformed layout."""
    text = layout.replace(" ", "")
    # No `->`: every group is an input, written in place (Numba's nout=0).
    ins, outs = text.split("->", 1) if "->" in text else (text, "")

    def groups(part):
        if not part:
            return []
        if not re.fullmatch(r"(\([\w,]*\))(,\([\w,]*\))*", part):
            raise ValueError(f"bad token in signature {layout!r}")
        out = []
        for g in re.findall(r"\(([\w,]*)\)", part):
            out.append(tuple(d for d in g.split(",") if d))
        return out

    return groups(ins), groups(outs)


class GUFunc(_UFuncBase):
    """A generalized ufunc (Numba's ``GUFunc``) over a kernel that writes its outputs
    into arrays passed to it."""

    def __init__(self, func, layout, identity=None, writable_args=(), **kws):
        func = _py_func(func)
        kws["identity"] = identity
        ins, outs = parse_layout(layout)
        params = list(inspect.signature(func).parameters)
        nin, nout = len(ins), len(outs)
        if nin + nout != len(params):
            raise TypeError(
                f"guvectorize: the layout {layout!r} names {nin + nout} arguments but "
                f"{func.__name__} takes {len(params)}"
            )
        names = []
        for g in ins + outs:
            for d in g:
                if d not in names:
                    names.append(d)
        undefined = sorted({d for g in outs for d in g} - {d for g in ins for d in g})
        if undefined:
            raise NameError("undefined output symbols: " + ",".join(undefined))
        core = [[names.index(d) for d in g] for g in ins + outs]
        self._core = core
        writable = []
        for w in writable_args:
            if isinstance(w, str):
                if w not in params:
                    raise RuntimeError(
                        f"Specified writable arg {w} not found in arg list {params} for "
                        f"function {func.__qualname__}"
                    )
                w = params.index(w)
            writable.append(w)
        if len(writable) > nin:
            raise ValueError("Number of writable_args must be <= nin")
        if any(not isinstance(w, int) or not 0 <= w < nin for w in writable):
            raise ValueError("All values in writable_args must be integers between 0 and nin - 1")
        self._writable = writable
        super().__init__(func, kws, nin, nout, "gufunc", core, layout.replace(" ", ""))
        self._ncore = len(names)
        self.is_dynamic = False

    def _arg_types_for(self, dtypes):
        """Kernel argument types (as signature text): arrays for arguments with core
        dimensions (any layout), the element for a ``()`` input."""
        out = []
        for k, (dt, dims) in enumerate(zip(dtypes, self._core)):
            name = "boolean" if dt == np.bool_ else str(dt)
            if dims or k >= self._nin:
                # An output `()` is a one-element view the kernel stores into.
                out.append(name + "[" + ", ".join([":"] * max(1, len(dims))) + "]")
            else:
                out.append(name)
        return out

    def _type_nums(self, argtypes, ret):
        """The operands are the arguments (outputs included); arrays by their dtype."""
        nums = []
        for t, dims in zip(argtypes, self._core):
            if t.dtype is not None:
                # A `()` argument may be declared as a 1-d array (a one-element view).
                if t.ndim != len(dims) and not (not dims and t.ndim == 1):
                    raise TypeError(
                        f"{self.__name__}: argument type {t} does not match the layout "
                        f"{self._layout!r}"
                    )
                t = t.dtype
            nums.append(_dtype(t).num)
        return nums

    def __call__(self, *args, **kws):
        if not self._frozen:
            full = list(args)
            out = kws.get("out")
            if out is not None:
                full += list(out) if isinstance(out, tuple) else [out]
            if len(full) != self._nin + self._nout:
                raise TypeError(
                    f"Too few arguments for function '{self.__name__}'. Note that the "
                    "pattern `out = gufunc(Arg1, Arg2, ..., ArgN)` is not allowed. Use "
                    "`gufunc(Arg1, Arg2, ..., ArgN, out) instead."
                )
            dts = [np.asarray(a).dtype for a in full]
            key = [d.num for d in dts]
            if not any(list(n) == key for _, _, n in self._loops):
                try:
                    if self._loops:
                        return self.ufunc(*args, **kws)
                    raise TypeError
                except TypeError:
                    argtypes = self._kernel._compile_text(_arg_text(self._arg_types_for(dts)))
                    self._add_compiled(argtypes)
        return self.ufunc(*args, **kws)


def guvectorize(*args, **kws):
    """``@guvectorize(signatures, layout, **options)`` (or ``@guvectorize(layout)`` for
    the dynamic form): a generalized NumPy ufunc (Numba's ``guvectorize``)."""
    if len(args) == 1 and isinstance(args[0], str) and "->" in args[0]:
        sigs, layout = [], args[0]
    elif len(args) == 2:
        sigs, layout = _signature_list(args[0]), args[1]
    elif "signature" in kws and len(args) == 1:
        sigs, layout = _signature_list(args[0]), kws.pop("signature")
    else:
        raise TypeError("guvectorize() takes signatures and a layout string")
    _check_options(kws, _VECTORIZE_OPTIONS)
    identity = kws.pop("identity", None)
    writable = kws.pop("writable_args", ())

    def wrap(func):
        g = GUFunc(func, layout, identity=identity, writable_args=writable, **kws)
        for s in sigs:
            g.add(s)
        if sigs:
            g.disable_compile()
        else:
            g.is_dynamic = True
        return g

    return wrap
