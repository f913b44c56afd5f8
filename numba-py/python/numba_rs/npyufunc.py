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
import weakref

import numpy as np

from . import _numba_rs
from ._numba_rs import Dispatcher as _Dispatcher
from ._numba_rs import _Type
from ._numba_rs import type_from_name as _type_from_name
from . import errors as _errors
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


def _py_func(func):
    """The Python function behind ``func`` (a jitted function's ``py_func``)."""
    if isinstance(func, _Dispatcher):
        return func.py_func
    if not inspect.isfunction(func):
        raise TypeError(f"The decorated object is not a function (got type {type(func)}).")
    return func


def _kernel(func, kws, wrappers, core_dims=None):
    from .decorators import _cache_site, _fastmath_bits

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
        cache=_cache_site(_py_func(func), kws.get("cache")),
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


def _array_ufunc_override(args, kws):
    """The first operand whose type overrides ``__array_ufunc__`` (NEP 13), which a call
    is handed to with this object as the ufunc (so a wrapper such as dask's can pickle
    it), as Numba's DUFunc does."""
    operands = list(args)
    for v in kws.values():
        operands.extend(v if isinstance(v, tuple) else (v,))
    for a in operands:
        m = getattr(type(a), "__array_ufunc__", None)
        if m is not None and m is not np.ndarray.__array_ufunc__:
            return a
    return None


class _UFuncBase:
    """What DUFunc and GUFunc share: the kernel, its loops and the current ufunc."""

    def __init__(self, func, kws, nin, nout, wrappers, core_dims=None, layout=None):
        self.py_func = func
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
        self._jit_id = None
        # Signature texts compiled so far, in order.
        self._sigs = []
        # `forceobj=True`: every loop runs the Python kernel (object mode); with
        # `nopython=False` a signature that does not compile in nopython mode does.
        self._objmode = bool(kws.get("forceobj"))
        self._fallback = kws.get("nopython") is False
        self._keep = []
        self.__name__ = func.__name__
        self.__qualname__ = getattr(func, "__qualname__", func.__name__)
        self.__doc__ = func.__doc__
        self.__module__ = func.__module__

    # -- loops ------------------------------------------------------------------------

    def _compile(self, text):
        """Compile the kernel for a signature and record its loop (and the text, which
        a pickle carries)."""
        if self._objmode:
            self._add_object_loop(text)
        else:
            try:
                self._add_compiled(self._kernel._compile_text(text))
            except (_errors.TypingError, _errors.UnsupportedError) as e:
                if not self._fallback:
                    raise
                warnings.warn(
                    f"Compilation of {self.__name__} for {text} falls back to object mode: {e}",
                    NumbaWarning,
                    stacklevel=3,
                )
                self._add_object_loop(text)
        self._sigs.append(text)

    def _add_object_loop(self, text):
        """A loop running the Python kernel element by element (or core slice by core
        slice) for the signature ``text``, as Numba's object-mode loops do."""
        ret, args = _numba_rs.parse_signature(text)
        if ret is None and self._layout is None:
            # Numba's message: an object-mode loop has no type to infer a result from.
            raise TypeError("return type must be specified for object mode")
        types = list(args) if self._layout is not None else [*args, ret]
        core = self._core if self._layout is not None else [[]] * len(types)
        ops = []
        for t, dims in zip(types, core):
            elem = t.dtype if t.dtype is not None else t
            dt = _dtype(elem)
            ops.append((dt.kind, dt.itemsize, dt.num, t.dtype is not None, list(dims)))
        addr, data, keep = _numba_rs.object_loop(self.py_func, self._nin, ops)
        self._keep.append(keep)
        nums = [op[2] for op in ops]
        if any(tuple(n) == tuple(nums) for _, _, n in self._loops):
            return
        self._loops.append((tuple(args), (addr, data), nums))
        self._ufunc = None

    def __reduce__(self):
        from .dispatcher import _reduce_function

        state = _reduce_function(self.py_func, self)
        return (
            _rebuild_ufunc,
            (type(self), state, self._ctor, list(self._sigs), self._frozen,
             getattr(self, "is_dynamic", None)),
        )

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
            self._compile(text)

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
                [
                    (loop, nums, 0) if isinstance(loop, int) else (loop[0], nums, loop[1])
                    for _, loop, nums in self._loops
                ],
                self._identity,
                self._layout,
                self._parallel,
                self._ncore,
                20,
                getattr(self, "_writable", []),
                # Numba builds a GUFunc's ufunc with its loops (exact dtypes win) and
                # grows a DUFunc's in place (NumPy's linear search).
                self._layout is not None,
            )
        return self._ufunc

    # -- NumPy's ufunc methods (compiling a loop first when none takes the operands) ---

    def _binary_for(self, *operands):
        """Before a ufunc method: a loop for the operands' types when none would take
        them (compiling allowed)."""
        if self._nin != 2 or self._frozen or self._layout is not None:
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
            if not self._frozen and self._layout is None:
                self._compile_for_types([_numba_type(a)])
            return self.ufunc.at(a, indices)
        self._binary_for(a, b)
        return self.ufunc.at(a, indices, b)

    # -- NumPy's attributes -------------------------------------------------------------

    nin = property(lambda self: self._nin)
    nout = property(lambda self: self._nout)
    nargs = property(lambda self: self._nin + self._nout)
    ntypes = property(lambda self: len(self._loops))
    identity = property(lambda self: self.ufunc.identity)
    # NumPy's own reading of the layout: None when every core is `()`.
    signature = property(lambda self: self.ufunc.signature)

    # -- calls from jitted code ----------------------------------------------------------

    @property
    def _numba_rs_jit_ufunc(self):
        """(id, name, is a gufunc): how jitted code refers to this object; its loops are
        chosen by ``_jit_select`` while the caller is typed."""
        if self._jit_id is None:
            # A weak reference: jitted callers keep the loops (kernel specialisations),
            # not the object.
            self._jit_id = _numba_rs.register_jit_ufunc(weakref.proxy(self))
        return (self._jit_id, self.__name__, self._layout is not None)

    def _cannot_call(self, types):
        kind = "GUFunc" if self._layout is not None else "DUFunc"
        shown = ", ".join(map(str, types))
        return TypeError(f"cannot call <numba._{kind} '{self.__name__}'> with types ({shown})")

    def _matching_loop(self, ins, outs=()):
        """The first loop the operand dtypes fit, as Numba's
        ``ufunc_find_matching_loop``: inputs cast safely (any integer to an inexact
        type when the inputs mix kinds), and the loop's outputs cast ``same_kind`` to
        the given outputs."""
        mixed = any(d.kind in "iub" for d in ins) and any(d.kind in "fc" for d in ins)

        def fits(frm, to, casting):
            if mixed and frm.kind in "iu" and to.kind in "fc":
                return True
            return np.can_cast(frm, to, casting)

        for lp in self._loops:
            loop = [_NUM_DTYPE[n] for n in lp[2]]
            if all(fits(d, t, "safe") for d, t in zip(ins, loop[: self._nin])) and all(
                fits(t, d, "same_kind") for d, t in zip(outs, loop[self._nin:])
            ):
                return lp
        return None

    @staticmethod
    def _loop_type(num):
        """The numba-rs type of a NumPy type number."""
        return _type_from_name(_NUM_DTYPE[num].name)

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
        self._ctor = ((), dict(kws, identity=identity))
        kws["identity"] = identity
        nin = len(inspect.signature(func).parameters)
        super().__init__(func, kws, nin, 1, "ufunc")

    def _compile_for_types(self, argtypes):
        if self._frozen:
            return
        key = tuple(argtypes)
        if any(t == key for t, _, _ in self._loops):
            return
        self._compile(_arg_text(argtypes))

    def _jit_select(self, types):
        """The loop a jitted call with these argument types runs, as Numba's
        ``DUFunc._type_me``: with compiling allowed, the loop for exactly the inputs'
        element types (compiled if new); frozen, the first loop they cast to safely."""
        if self._objmode:
            raise TypeError(
                f"{self.__name__}: a ufunc with an object-mode kernel cannot be called "
                "from jitted code"
            )
        if len(types) not in (self._nin, self._nin + self._nout):
            raise self._cannot_call(types)
        elems = [t.dtype if t.dtype is not None else t for t in types[: self._nin]]
        loop = self._find_jit_loop(elems)
        if loop is None:
            if self._frozen:
                raise self._cannot_call(types)
            self._compile_for_types(elems)
            loop = self._find_jit_loop(elems)
        if loop is None:
            raise self._cannot_call(types)
        argtypes, _, nums = loop
        return (self._kernel, list(argtypes), self._loop_type(nums[-1]),
                self._nin, self._nout, None)

    def _find_jit_loop(self, elems):
        if not self._frozen:
            return next((lp for lp in self._loops if tuple(lp[0]) == tuple(elems)), None)
        return self._matching_loop([_dtype(e) for e in elems])

    def _compile_for_args(self, *args, **kws):
        if len(args) < self._nin:
            raise TypeError(
                f"{self.__name__}() takes {self._nin} arguments but {len(args)} were given"
            )
        self._compile_for_types([_numba_type(a) for a in args[: self._nin]])

    def __call__(self, *args, **kws):
        other = _array_ufunc_override(args, kws)
        if other is not None:
            return other.__array_ufunc__(self, "__call__", *args, **kws)
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


def _rebuild_ufunc(cls, state, ctor, sigs, frozen, dynamic):
    """Unpickle a DUFunc/GUFunc: the function rebuilt by value, its loops compiled
    again, compiling disabled again when it was."""
    from .dispatcher import _rebuild_function

    func = _rebuild_function(state)
    args, kws = ctor
    u = cls(func, *args, **kws)
    for name in state["self_names"]:
        func.__globals__[name] = u
    for text in sigs:
        u.add(text)
    if frozen:
        u.disable_compile()
    if dynamic is not None:
        u.is_dynamic = dynamic
    return u


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
    if "->" in text and not outs:
        raise ValueError(f"bad token in signature {layout!r}: an arrow but no outputs")

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
        self._ctor = ((layout,), dict(kws, identity=identity, writable_args=tuple(writable_args)))
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
        # NumPy keeps the layout's own text for its messages, as Numba passes it.
        super().__init__(func, kws, nin, nout, "gufunc", core, layout)
        self._layout_text = layout
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

    def add(self, sig):
        """Compile one more loop. A gufunc kernel returns nothing, so its signature may
        give the arguments only (``'int64[:], int64, int64[:]'``), as Numba allows."""
        texts = []
        for text in _signature_list(sig):
            t = text.strip()
            if t.startswith("(") or not t.endswith(")"):
                t = "void(" + (t[1:-1] if t.startswith("(") and t.endswith(")") else t) + ")"
            self._check_layout(t)
            texts.append(t)
        super().add(texts)

    def _check_layout(self, text):
        """Numba's TypeErrors for a signature that does not fit the layout."""
        _, args = _numba_rs.parse_signature(text)
        for k, (t, dims) in enumerate(zip(args, self._core)):
            if t.dtype is None:
                if dims:
                    raise TypeError(f"scalar type {t} given for non scalar argument #{k + 1}")
            elif t.ndim != len(dims) and not (not dims and t.ndim == 1):
                raise TypeError(f"type and shape signature mismatch for arg #{k + 1}")

    def _jit_select(self, types):
        """The loop a jitted call runs (every input and output passed), as Numba's
        ``GUFunc._type_me``: each operand needs its core rank; with compiling allowed
        the loop for exactly the operands' dtypes (compiled if new); frozen, the first
        loop whose arrays match exactly and whose scalar inputs cast safely."""
        if self._objmode:
            raise TypeError(
                f"{self.__name__}: a ufunc with an object-mode kernel cannot be called "
                "from jitted code"
            )
        if len(types) != self._nin + self._nout:
            raise self._cannot_call(types)
        for k, (t, dims) in enumerate(zip(types, self._core)):
            if t.ndim is not None and t.ndim < len(dims):
                kind, i = ("Input", k) if k < self._nin else ("Output", k - self._nin)
                raise TypeError(
                    f"{self.__name__}: {kind} operand {i} does not have enough dimensions "
                    f"(has {t.ndim}, gufunc core with signature {self._layout_text} "
                    f"requires {len(dims)})"
                )
        dts = [_dtype(t.dtype if t.dtype is not None else t) for t in types]
        loop = self._find_jit_loop(dts)
        if loop is None:
            if self._frozen:
                raise self._cannot_call(types)
            self._compile(_arg_text(self._arg_types_for(dts)))
            loop = self._find_jit_loop(dts)
        if loop is None:
            raise self._cannot_call(types)
        return (self._kernel, list(loop[0]), _type_from_name("none"),
                self._nin, self._nout, self._core)

    def _find_jit_loop(self, dts):
        nums = [d.num for d in dts]
        exact = next((lp for lp in self._loops if list(lp[2]) == nums), None)
        if exact is not None or not self._frozen:
            return exact
        for lp in self._loops:
            if all(
                np.can_cast(d, _NUM_DTYPE[n], "safe")
                if k < self._nin and lp[0][k].dtype is None
                else d.num == n
                for k, (d, n) in enumerate(zip(dts, lp[2]))
            ):
                return lp
        return None

    def __call__(self, *args, **kws):
        other = _array_ufunc_override(args, kws)
        if other is not None:
            return other.__array_ufunc__(self, "__call__", *args, **kws)
        # As Numba's dynamic GUFunc: every operand must be passed; when no loop fits
        # their dtypes (Numba's matching rules), one is compiled for exactly them.
        if not self._frozen and self.is_dynamic:
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
            if self._matching_loop(dts[: self._nin], dts[self._nin:]) is None:
                self._compile(_arg_text(self._arg_types_for(dts)))
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
    _identity_code(identity)
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
