"""``numpy.random.Generator``'s methods in compiled code, over the primitive draws of
``_npgen`` (NumPy's own distribution functions on the Generator's bit generator): the
same parameters, defaults, checks and ValueError messages as NumPy's ``Generator``, and
the same values in the same order, so the Python object's state afterwards is the one
NumPy would leave. Parameters are scalars (NumPy also broadcasts arrays of them);
``size`` is None, an int or a tuple of ints."""

import numpy as np

from . import types
from ._npcommon import _gen, _int_tuple, _is_int, _is_none
from ._npgen import bounded, bounded_fill, cont, cont_f, disc, interval, new
from .errors import TypingError
from .extending import overload, overload_method, register_jitable

_G = types.NumPyRandomGeneratorType

# NumPy's POISSON_LAM_MAX (LONG_MAX - 10 * sqrt(LONG_MAX)), as a float.
_POISSON_LAM_MAX = 9.223372006484771e18

# NumPy's `check_constraint` kinds: (the test a bad value passes, its message).
_CHECKS = {
    None: None,
    "nonneg": ("not np.isnan({v}) and np.signbit({v})", "{n} < 0"),
    "pos": ("{v} <= 0", "{n} <= 0"),
    "pos_not_nan": ("np.isnan({v}) or {v} <= 0", "{n} <= 0"),
    "0_1": ("not ({v} >= 0) or not ({v} <= 1)", "{n} < 0, {n} > 1 or {n} is NaN"),
    "gt_0_1": ("not ({v} > 0) or not ({v} <= 1)", "{n} <= 0, {n} > 1 or {n} contains NaNs"),
    "lt_0_1": ("not ({v} >= 0) or not ({v} < 1)", "{n} < 0, {n} >= 1 or {n} is NaN"),
    "gt_1": ("not ({v} > 1)", "{n} <= 1 or {n} is NaN"),
    "poisson": None,  # two checks, below
}


def _real(t):
    return isinstance(t, (types.Integer, types.Float, types.Boolean))


def _size_ok(size):
    return _is_none(size) or _is_int(size) or _int_tuple(size) is not None


def _checks(params):
    lines = []
    for name, _, cons in params:
        v = f"float({name})"
        if cons == "poisson":
            lines.append(f"    if not ({v} >= 0): raise ValueError('{name} < 0 or {name} is NaN')")
            lines.append(
                f"    if not ({v} <= {_POISSON_LAM_MAX!r}): raise ValueError('{name} value too large')"
            )
        elif _CHECKS[cons] is not None:
            test, msg = _CHECKS[cons]
            lines.append(
                f"    if {test.format(v=v)}: raise ValueError({msg.format(n=name)!r})"
            )
    return lines


_EXPECTED = {
    "real": "[<class 'numba.core.types.scalars.Float'>, "
    "<class 'numba.core.types.scalars.Integer'>, <class 'int'>, <class 'float'>]",
    "size": "[<class 'numba.core.types.misc.NoneType'>, <class 'numba.core.types.misc.Omitted'>, "
    "<class 'numba.core.types.scalars.Integer'>, <class 'numba.core.types.containers.UniTuple'>]",
    "dtype": "[<class 'numba.core.types.functions.NumberClass'>, <class 'numba.core.types.npytypes.DType'>]",
    "str": "[<class 'numba.core.types.misc.UnicodeType'>]",
}


def _bad(name, kind):
    """Numba's words for an argument of a type the method does not take."""
    raise TypingError(f"Argument {name} is not one of the expected type(s): {_EXPECTED[kind]}")


def _float_dtype(dtype):
    """'float64' / 'float32' for a `dtype=` argument (None: float64), else None."""
    if _is_none(dtype):
        return "float64"
    inner = getattr(dtype, "instance_type", None) or getattr(dtype, "dtype", None)
    if isinstance(dtype, (types.NumberClass, types.DType)) and str(inner) in ("float64", "float32"):
        return str(inner)
    return None


def _method(meth, cname, params, discrete=False, extra=(), call_args=None, dtyped=False,
            method=False):
    """Register ``Generator.<meth>`` drawing NumPy's ``random_<cname>`` with `params`
    ``(name, default or None, constraint)``; `extra` are more check lines; `call_args`
    the C arguments (default: the parameters as floats). `dtyped`: a ``dtype=`` of
    float64 or float32 (``random_<cname>_f``); `method`: ``standard_exponential``'s
    ``method='zig'|'inv'``."""
    sig = ", ".join(n if d is None else f"{n}={d!r}" for n, d, _ in params)
    sig = f"{sig}, " if sig else ""
    tail = "size=None" + (", dtype=None" if dtyped else "") + (", method='zig'" if method else "")
    call = call_args or ", ".join(f"float({n})" for n, _, _ in params)
    checks = "\n".join(_checks(params) + ["    " + e for e in extra]) or "    pass"
    names = [n for n, _, _ in params]
    variants = {}
    for fl in ("float64", "float32") if dtyped else ("float64",):
        if discrete:
            draw, dtype = f"disc(gen, {cname!r}{', ' + call if call else ''})", "np.int64"
        elif fl == "float32":
            call32 = ", ".join(f"np.float32({n})" for n in names)
            draw = f"cont_f(gen, {cname + '_f'!r}{', ' + call32 if call32 else ''})"
            dtype = "np.float32"
        else:
            draw, dtype = f"cont(gen, {cname!r}{', ' + call if call else ''})", "np.float64"
        if method:
            # `inv`: NumPy's `-log1p(-U)` of a uniform draw of the width.
            u = "cont_f(gen, 'standard_uniform_f')" if fl == "float32" else (
                "cont(gen, 'standard_uniform')")
            draw = f"(-np.log1p(-{u}) if method == 'inv' else {draw})"
            checks_m = checks + (
                "\n    if method != 'zig' and method != 'inv': "
                "raise ValueError(\"'method' argument must be either 'zig' or 'inv'\")"
            )
        else:
            checks_m = checks
        src = f"""
def scalar(gen, {sig}{tail}):
{checks_m}
    return {draw}

def sized(gen, {sig}{tail}):
{checks_m}
    out = np.empty(size, {dtype})
    flat = out.reshape(out.size)
    for i in range(out.size):
        flat[i] = {draw}
    return out
"""
        ns = {"np": np, "cont": cont, "cont_f": cont_f, "disc": disc}
        exec(compile(src, f"<numba_rs.Generator.{meth}>", "exec"), ns)
        variants[fl] = ns
    extras = ["size"] + (["dtype"] if dtyped else []) + (["method"] if method else [])

    def choose(gen, *args):
        bound = dict(zip(names + extras, args))
        for n in names:
            if not (_real(bound[n]) or _is_none(bound[n])):
                _bad(n, "real")
        if not _size_ok(bound["size"]):
            _bad("size", "size")
        fl = "float64"
        if dtyped:
            fl = _float_dtype(bound["dtype"])
            if fl is None:
                _bad("dtype", "dtype")
        if method:
            m = bound["method"]
            if not (isinstance(m, (types.UnicodeType, types.StringLiteral, types.Omitted))):
                _bad("method", "str")
        ns = variants[fl]
        return ns["scalar"] if _is_none(bound["size"]) else ns["sized"]

    # The overload's own signature: NumPy's parameter names and defaults.
    typing = _gen(
        "typing",
        f"def typing(gen, {sig}{tail}):\n    return _pick(gen, {', '.join(names + extras)})\n",
        _pick=choose,
    )
    overload_method(_G, meth)(typing)


_F = None
for _m, _c, _p in [
    ("standard_cauchy", "standard_cauchy", []),
    ("normal", "normal", [("loc", 0.0, None), ("scale", 1.0, "nonneg")]),
    ("exponential", "exponential", [("scale", 1.0, "nonneg")]),
    ("gamma", "gamma", [("shape", _F, "nonneg"), ("scale", 1.0, "nonneg")]),
    ("beta", "beta", [("a", _F, "pos"), ("b", _F, "pos")]),
    ("chisquare", "chisquare", [("df", _F, "pos")]),
    ("f", "f", [("dfnum", _F, "pos"), ("dfden", _F, "pos")]),
    ("pareto", "pareto", [("a", _F, "pos")]),
    ("weibull", "weibull", [("a", _F, "nonneg")]),
    ("power", "power", [("a", _F, "pos")]),
    ("laplace", "laplace", [("loc", 0.0, None), ("scale", 1.0, "nonneg")]),
    ("gumbel", "gumbel", [("loc", 0.0, None), ("scale", 1.0, "nonneg")]),
    ("logistic", "logistic", [("loc", 0.0, None), ("scale", 1.0, "nonneg")]),
    ("lognormal", "lognormal", [("mean", 0.0, None), ("sigma", 1.0, "nonneg")]),
    ("rayleigh", "rayleigh", [("scale", 1.0, "nonneg")]),
    ("standard_t", "standard_t", [("df", _F, "pos")]),
    ("noncentral_chisquare", "noncentral_chisquare", [("df", _F, "pos"), ("nonc", _F, "nonneg")]),
    (
        "noncentral_f",
        "noncentral_f",
        [("dfnum", _F, "pos"), ("dfden", _F, "pos"), ("nonc", _F, "nonneg")],
    ),
    ("wald", "wald", [("mean", _F, "pos"), ("scale", _F, "pos")]),
    ("vonmises", "vonmises", [("mu", _F, None), ("kappa", _F, "nonneg")]),
]:
    _method(_m, _c, _p)

_method("random", "standard_uniform", [], dtyped=True)
_method("standard_normal", "standard_normal", [], dtyped=True)
_method("standard_exponential", "standard_exponential", [], dtyped=True, method=True)
_method("standard_gamma", "standard_gamma", [("shape", _F, "nonneg")], dtyped=True)
# `uniform(low, high)` draws `low + (high - low) * U` (NumPy passes the range).
_method(
    "uniform",
    "uniform",
    [("low", 0.0, None), ("high", 1.0, None)],
    extra=[
        "if not np.isfinite(float(high) - float(low)): "
        "raise OverflowError('high - low range exceeds valid bounds')"
    ],
    call_args="float(low), float(high) - float(low)",
)
_method(
    "triangular",
    "triangular",
    [("left", _F, None), ("mode", _F, None), ("right", _F, None)],
    extra=[
        "if float(left) > float(mode): raise ValueError('left > mode')",
        "if float(mode) > float(right): raise ValueError('mode > right')",
        "if float(left) == float(right): raise ValueError('left == right')",
    ],
)
_method("poisson", "poisson", [("lam", 1.0, "poisson")], discrete=True)
_method(
    "negative_binomial",
    "negative_binomial",
    [("n", _F, "pos_not_nan"), ("p", _F, "gt_0_1")],
    discrete=True,
)
_method("geometric", "geometric", [("p", _F, "gt_0_1")], discrete=True)
_method("zipf", "zipf", [("a", _F, "gt_1")], discrete=True)
_method("logseries", "logseries", [("p", _F, "lt_0_1")], discrete=True)
_method(
    "binomial",
    "binomial",
    [("n", _F, None), ("p", _F, "0_1")],
    discrete=True,
    extra=["if int(n) < 0: raise ValueError('n < 0')"],
    call_args="float(p), int(n)",
)
_method(
    "hypergeometric",
    "hypergeometric",
    [("ngood", _F, None), ("nbad", _F, None), ("nsample", _F, None)],
    discrete=True,
    extra=[
        "if int(ngood) < 0: raise ValueError('ngood < 0')",
        "if int(nbad) < 0: raise ValueError('nbad < 0')",
        "if int(nsample) < 0: raise ValueError('nsample < 0')",
        "if int(ngood) + int(nbad) < int(nsample): "
        "raise ValueError('ngood + nbad < nsample')",
    ],
    call_args="int(ngood), int(nbad), int(nsample)",
)


@register_jitable
def _bounds(low, high, endpoint, one=1):
    # `one` of the bounds' type keeps uint64 arithmetic out of float64.
    if not endpoint:
        if low >= high:
            raise ValueError("low >= high")
        high = high - one
    elif low > high:
        raise ValueError("low > high")
    return low, high - low


_INT_DTYPES = ("int64", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8", "bool")


@overload_method(_G, "integers")
def _integers(gen, low, high=None, size=None, dtype=None, endpoint=False):
    """`integers(low, high=None, size=None, dtype=np.int64, endpoint=False)`: NumPy's
    Lemire draws (`random_bounded_uint64_fill`, or the fill of the dtype's width)."""
    if not _is_int(low):
        _bad("low", "real")
    if not (_is_none(high) or _is_int(high)):
        _bad("high", "real")
    if not _size_ok(size):
        _bad("size", "size")
    if not (_is_none(endpoint) or isinstance(endpoint, types.Boolean)):
        raise TypingError(
            "Argument endpoint is not one of the expected type(s): "
            "[<class 'numba.core.types.scalars.Boolean'>, <class 'int'>]"
        )
    name = "int64"
    if not _is_none(dtype):
        inner = getattr(dtype, "instance_type", None) or getattr(dtype, "dtype", None)
        name = str(inner) if isinstance(dtype, (types.NumberClass, types.DType)) else ""
        if name not in _INT_DTYPES:
            raise TypingError(
                "Argument dtype is not one of the expected type(s): "
                "[<class 'numba.core.types.functions.NumberClass'>]"
            )
    nd = np.dtype(np.bool_ if name == "bool" else name)
    # int64 arguments cannot leave int64's range; narrower dtypes check theirs.
    wide = name in ("int64", "uint64")
    lo_min = 0 if name == "bool" else int(np.iinfo(nd).min)
    hi_max = 1 if name == "bool" else (0 if wide else int(np.iinfo(nd).max))
    no_high = _is_none(high)
    unsigned = name == "uint64"
    # An int64 draw with a uint64 upper bound (2**63 and up): checked and stepped down
    # in uint64, where it cannot wrap.
    hi_t = low if no_high else high
    big_high = name == "int64" and isinstance(hi_t, types.Integer) and not hi_t.signed \
        and hi_t.bitwidth == 64
    i64_max = np.uint64(2**63 - 1)

    @register_jitable
    def bounds(low, high, endpoint):
        lo, hi = (0, low) if no_high else (low, high)
        if lo < lo_min:
            raise ValueError("low is out of bounds for " + name)
        if big_high:
            top = hi if endpoint else hi - np.uint64(1)
            if top > i64_max:
                raise ValueError("high is out of bounds for " + name)
            return _bounds(np.int64(lo), np.int64(top), True, np.int64(1))
        if not wide:
            if endpoint:
                if hi > hi_max:
                    raise ValueError("high is out of bounds for " + name)
            elif hi > hi_max + 1:
                raise ValueError("high is out of bounds for " + name)
        # In the dtype's signedness, so uint64 bounds never mix with int64 (a float).
        if unsigned:
            return _bounds(np.uint64(lo), np.uint64(hi), endpoint, np.uint64(1))
        return _bounds(np.int64(lo), np.int64(hi), endpoint, np.int64(1))

    if _is_none(size):

        def impl(gen, low, high=None, size=None, dtype=None, endpoint=False):
            off, rng = bounds(low, high, endpoint)
            tmp = np.empty(1, nd)
            bounded_fill(gen, off, rng, tmp)
            return tmp[0]

    else:

        def impl(gen, low, high=None, size=None, dtype=None, endpoint=False):
            off, rng = bounds(low, high, endpoint)
            out = np.empty(size, nd)
            if out.size > 0:
                bounded_fill(gen, off, rng, out.reshape(out.size))
            return out

    return impl


@register_jitable
def _shuffle_rows(gen, x):
    # NumPy's `_shuffle_raw`: from the end, swap with a draw of [0, i].
    n = x.shape[0]
    for i in range(n - 1, 0, -1):
        j = interval(gen, i)
        if i != j:
            tmp = x[i].copy()
            x[i] = x[j]
            x[j] = tmp


@register_jitable
def _shuffle_1d(gen, x):
    n = x.shape[0]
    for i in range(n - 1, 0, -1):
        j = interval(gen, i)
        x[i], x[j] = x[j], x[i]


@register_jitable
def _axis_index(axis, ndim):
    if axis < -ndim or axis >= ndim:
        raise IndexError("Axis is out of bounds for the given array")
    return axis + ndim if axis < 0 else axis


def _check_x_axis(x, axis, ints_too=False):
    if not (isinstance(x, types.Array) or (ints_too and _is_int(x))):
        raise TypingError(
            "Argument x is not one of the expected type(s): "
            "[<class 'numba.core.types.npytypes.Array'>]"
        )
    if not (_is_none(axis) or _is_int(axis)):
        raise TypingError(
            "Argument axis is not one of the expected type(s): "
            "[<class 'numba.core.types.scalars.Integer'>, <class 'int'>]"
        )


@overload_method(_G, "shuffle")
def _shuffle(gen, x, axis=0):
    """`shuffle(x, axis=0)`: NumPy's `_shuffle_raw` over the sub-arrays along `axis`."""
    _check_x_axis(x, axis)
    if x.ndim == 1:

        def impl(gen, x, axis=0):
            _axis_index(axis, 1)
            _shuffle_1d(gen, x)

    else:

        def impl(gen, x, axis=0):
            ax = _axis_index(axis, x.ndim)
            if x.size > 0:
                _shuffle_rows(gen, np.swapaxes(x, 0, ax))

    return impl


@overload_method(_G, "permutation")
def _permutation(gen, x, axis=0):
    """`permutation(x, axis=0)`: a shuffled `arange(x)`, a shuffled copy of a 1-d array,
    or an n-d array taken along `axis` by a shuffled index (NumPy's)."""
    _check_x_axis(x, axis, ints_too=True)
    if _is_int(x):

        def impl(gen, x, axis=0):
            out = np.arange(x)
            _shuffle_1d(gen, out)
            return out

    elif x.ndim == 1:

        def impl(gen, x, axis=0):
            _axis_index(axis, 1)
            out = x.copy()
            _shuffle_1d(gen, out)
            return out

    else:

        def impl(gen, x, axis=0):
            ax = _axis_index(axis, x.ndim)
            idx = np.arange(x.shape[ax])
            _shuffle_1d(gen, idx)
            return np.take(x, idx, axis=ax)

    return impl


@register_jitable
def _shuffle_int(gen, n, first, data):
    # NumPy's `_shuffle_int`: from the end down to `first`, swap with a Lemire draw.
    for i in range(n - 1, first - 1, -1):
        j = bounded(gen, 0, i)
        data[i], data[j] = data[j], data[i]


@register_jitable
def _no_replace(gen, pop, size, shuffle):
    """NumPy's draw of `size` distinct indices of `range(pop)` without weights: a tail
    shuffle of `arange(pop)` for big draws from big populations, else Floyd's algorithm
    over an open-addressed set, then a shuffle of the result."""
    if size > pop:
        raise ValueError("Cannot take a larger sample than population when replace is False")
    cutoff = 50 if shuffle else 20
    if pop > 10000 and size > pop // cutoff:
        idx = np.arange(pop)
        _shuffle_int(gen, pop, max(pop - size, 1), idx)
        return idx[pop - size:].copy()
    out = np.empty(size, np.int64)
    set_size = np.uint64(int(1.2 * size))
    mask = set_size
    mask |= mask >> np.uint64(1)
    mask |= mask >> np.uint64(2)
    mask |= mask >> np.uint64(4)
    mask |= mask >> np.uint64(8)
    mask |= mask >> np.uint64(16)
    mask |= mask >> np.uint64(32)
    m = np.int64(mask)
    table = np.full(m + 1, -1, np.int64)
    for j in range(pop - size, pop):
        val = bounded(gen, 0, j)
        loc = val & m
        while table[loc] != -1 and table[loc] != val:
            loc = (loc + 1) & m
        if table[loc] == -1:
            table[loc] = val
            out[j - pop + size] = val
        else:
            loc = j & m
            while table[loc] != -1:
                loc = (loc + 1) & m
            table[loc] = j
            out[j - pop + size] = j
    if shuffle:
        _shuffle_int(gen, size, 1, out)
    return out


@register_jitable
def _weighted(gen, p, n, count):
    # NumPy's weighted draws with replacement: uniforms placed in the normalised CDF.
    if p.size != n:
        raise ValueError("a and p must have same size")
    for k in range(n):
        if not (p[k] >= 0):
            raise ValueError("Probabilities are not non-negative")
    total = p.sum()
    if abs(total - 1.0) > np.sqrt(np.finfo(np.float64).eps):
        raise ValueError(
            "Probabilities do not sum to 1. See Notes section of docstring for more information."
        )
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    u = np.empty(count)
    for k in range(count):
        u[k] = cont(gen, "standard_uniform")
    return np.searchsorted(cdf, u, side="right")


@overload_method(_G, "choice")
def _choice(gen, a, size=None, replace=True, p=None, axis=0, shuffle=True):
    """`choice(a, size=None, replace=True, p=None, axis=0, shuffle=True)` of an int
    population or a 1-d array: NumPy's `integers(0, n)` draws, its weighted CDF draws
    (`p=`), and without replacement its tail shuffle / Floyd's algorithm."""
    if not _size_ok(size):
        _bad("size", "size")
    weighted = not _is_none(p)
    if weighted and not (isinstance(p, types.Array) and p.ndim == 1
                         and isinstance(p.dtype, types.Float)):
        raise TypingError(
            "Argument p is not one of the expected type(s): "
            "[<class 'numba.core.types.npytypes.Array'>]"
        )
    if weighted and not (isinstance(replace, types.BooleanLiteral) and replace.literal_value
                         or _is_none(replace) or isinstance(replace, types.Omitted)):
        raise TypingError("numba-rs's Generator.choice takes p= with replacement only")
    is_n = _is_int(a)
    if not is_n and not (isinstance(a, types.Array) and a.ndim == 1):
        raise TypingError(
            "Argument a is not one of the expected type(s): "
            "[<class 'numba.core.types.npytypes.Array'>, <class 'numba.core.types.scalars.Integer'>]"
        )
    scalar = _is_none(size)

    @register_jitable
    def indices(gen, n, size, replace, p, shuffle):
        count = 1
        if not scalar:
            for d in np.empty(size, np.bool_).shape:
                count *= d
        if n <= 0 and count > 0:
            raise ValueError("a cannot be empty unless no samples are taken")
        if weighted:
            return _weighted(gen, p, n, count)
        if replace:
            idx = np.empty(count, np.int64)
            if count > 0:
                bounded_fill(gen, 0, n - 1, idx)
            return idx
        return _no_replace(gen, n, count, shuffle)

    if is_n and scalar:

        def impl(gen, a, size=None, replace=True, p=None, axis=0, shuffle=True):
            return indices(gen, a, size, replace, p, shuffle)[0]

    elif is_n:

        def impl(gen, a, size=None, replace=True, p=None, axis=0, shuffle=True):
            return indices(gen, a, size, replace, p, shuffle).reshape(np.empty(size, np.bool_).shape)

    elif scalar:

        def impl(gen, a, size=None, replace=True, p=None, axis=0, shuffle=True):
            return a[indices(gen, a.shape[0], size, replace, p, shuffle)[0]]

    else:

        def impl(gen, a, size=None, replace=True, p=None, axis=0, shuffle=True):
            idx = indices(gen, a.shape[0], size, replace, p, shuffle)
            return a[idx].reshape(np.empty(size, np.bool_).shape)

    return impl


@overload(np.random.default_rng)
def _default_rng(seed=None):
    # NumPy's own constructor (through the `new` primitive), so a seed gives NumPy's
    # stream; no seed draws fresh OS entropy.
    if not (_is_none(seed) or isinstance(seed, types.Integer)):
        raise TypingError("np.random.default_rng: the seed must be None or an integer "
                          f"in compiled code, not {seed}")
    if _is_none(seed):
        def impl(seed=None):
            return new(None)

        return impl

    def impl(seed=None):
        if seed < 0:
            raise ValueError("expected non-negative integer")
        return new(seed)

    return impl
