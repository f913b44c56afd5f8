"""The program categories: each registers its leaves, statements and a setup function.

A category's setup adds parameters (with their argument values) and helpers to the
program and names the statement tags it favours; the statements themselves are drawn
for every program, wherever the scope has variables they apply to. The constraints that
keep programs inside the language where CPython and Numba agree are commented where
they are not obvious (gen.py's docstring has the general rules).
"""

import numpy as np

from gen import (
    INT_DTYPES, INT_MOD, Arr, DictT, FnT, ListT, NpScalar, SetT, TupT, block, category,
    composite, expr, float_const, indent, int_param, is_, leaf, small_int, statement,
    stored, STR_CONSTS, Scope, return_stmt,
)


def is_arr(pred=lambda t: True):
    return lambda t: isinstance(t, Arr) and pred(t)


def kind(dtype):
    return np.dtype(dtype).kind


def param(b, sc, prefix, ty, src):
    name = b.fresh(prefix)
    b.params.append((name, src))
    sc.add(name, ty, readonly=True)
    return name


def ranged(sc, name):
    """An index expression always in range for the non-empty container `name`."""
    return f"{expr(sc, 'int', 1)} % len({name})"


# --- scalars ----------------------------------------------------------------------------


@category("int", 1.0)
def _int(b, sc):
    for _ in range(b.rng.randint(0, 2)):
        int_param(b, sc)


@category("float", 1.0)
def _float(b, sc):
    for _ in range(b.rng.randint(1, 2)):
        param(b, sc, "q", "float", float_const(b.rng))


@category("bool", 0.5)
def _bool(b, sc):
    for _ in range(b.rng.randint(1, 2)):
        param(b, sc, "c", "bool", b.rng.choice(["True", "False"]))


@category("complex", 0.6)
def _complex(b, sc):
    b.features.add("complex")
    param(b, sc, "z", "complex", f"complex({float_const(b.rng)}, {float_const(b.rng)})")


@category("npscalar", 0.8)
def _npscalar(b, sc):
    for _ in range(b.rng.randint(1, 3)):
        dt = b.rng.choice(INT_DTYPES + ("float32", "float64", "bool_"))
        if dt == "bool_":
            val = b.rng.choice(["True", "False"])
        elif kind(dt) == "f":
            val = float_const(b.rng)
        else:
            val = b.rng.randint(0 if kind(dt) == "u" else -50, 50)
        param(b, sc, "g", NpScalar(dt), f"np.{dt}({val})")


def npscalars(sc, kinds):
    return sc.names(lambda t: isinstance(t, NpScalar) and kind(t.dtype) in kinds)


# Values of NumPy scalars are at most 50 in magnitude (array elements 100 for unsigned
# and `x + x` is only formed from arguments), so these forms never wrap in NumPy.
@leaf("int")
def _np_int(sc):
    names = npscalars(sc, "iub")
    if not names:
        return None
    x = sc.rng.choice(names)
    return sc.rng.choice([f"int({x})", f"int({x})", f"int({x} + {x})"]
                         if x.startswith("g") and kind(sc.vars[x].dtype) != "b"
                         else [f"int({x})"])


@leaf("float")
def _np_float(sc):
    names = npscalars(sc, "fiu")
    if not names:
        return None
    x = sc.rng.choice(names)
    return sc.rng.choice([f"float({x})", f"(float({x}) * 1.5)"])


@leaf("bool")
def _np_compare(sc):
    names = npscalars(sc, "iuf")
    if not names:
        return None
    x = sc.rng.choice(names)
    return f"({x} {sc.rng.choice(['<', '>', '==', '>='])} {sc.rng.randint(0, 30)})"


@leaf("str")
def _str_of_int(sc):
    v = sc.pick(is_("int"))
    return f"str({v})" if v else None


# --- strings ------------------------------------------------------------------------------


@category("str", 1.0)
def _str(b, sc):
    b.features.add("str")
    for _ in range(b.rng.randint(1, 2)):
        n = b.rng.randint(0, 9)
        param(b, sc, "t", "str", repr("".join(b.rng.choice("ab,cxyz- Q1") for _ in range(n))))


@composite("str")
def _str_rule(sc, d):
    rng = sc.rng
    s, t = expr(sc, "str", d), expr(sc, "str", d)
    lo, hi = rng.randint(-4, 3), rng.randint(-2, 6)
    return rng.choice([
        f"({s} + {t})", f"{s}[{lo}:{hi}]", f"{s}[::{rng.choice([-1, 2, -2])}]", f"{s}.upper()",
        f"{s}.lower()", f"{s}.strip()", f"{s}.replace('a', 'xy')", f"({s} * {rng.randint(0, 3)})",
        f"({s} if {expr(sc, 'bool', d)} else {t})", f"{s}.split(',')[{rng.choice([0, -1])}]",
        f"'-'.join({s}.split(','))", f"{s}.title()", f"{s}.zfill({rng.randint(0, 6)})",
    ])


@composite("int")
def _int_of_str(sc, d):
    if "str" not in sc.b.features:
        return None
    s = expr(sc, "str", d)
    return sc.rng.choice([f"len({s})", f"{s}.find('a')", f"{s}.count(',')",
                          f"ord(({s} + 'a')[0])"])


@composite("bool")
def _bool_of_str(sc, d):
    if "str" not in sc.b.features:
        return None
    s, t = expr(sc, "str", d), expr(sc, "str", d)
    return sc.rng.choice([f"('a' in {s})", f"{s}.startswith('a')", f"({s} == {t})",
                          f"({s} < {t})", f"{s}.isalpha()", f"({t} in {s})"])


# --- tuples --------------------------------------------------------------------------------


@category("tuple", 1.0)
def _tuple(b, sc):
    rng = b.rng
    if rng.random() < 0.4:
        n = rng.randint(1, 4)
        param(b, sc, "u", TupT(("int",) * n), repr(tuple(small_int(rng) for _ in range(n))))
    else:
        elts = tuple(rng.choice(["int", "float", "bool", "str"]) for _ in range(rng.randint(2, 4)))
        vals = {"int": lambda: str(small_int(rng)), "float": lambda: float_const(rng),
                "bool": lambda: rng.choice(["True", "False"]),
                "str": lambda: rng.choice(STR_CONSTS)}
        param(b, sc, "u", TupT(elts), "(" + "".join(vals[e]() + ", " for e in elts) + ")")
        if "str" in elts:
            b.features.add("str")
    b.focus.add("tuple")


def tuple_items(sc, ty):
    """(tuple name, index) pairs whose item has type `ty`."""
    return [(n, i) for n, t in sc.vars.items() if isinstance(t, TupT)
            for i, e in enumerate(t.elts) if e == ty]


for _ty in ("int", "float", "bool", "str"):
    @leaf(_ty)
    def _tuple_item(sc, ty=_ty):
        items = tuple_items(sc, ty)
        if not items:
            return None
        n, i = sc.rng.choice(items)
        return f"{n}[{i - len(sc.vars[n].elts) if sc.rng.random() < 0.3 else i}]"


@leaf("int")
def _tuple_len(sc):
    n = sc.pick(lambda t: isinstance(t, TupT))
    return f"len({n})" if n else None


@statement(1.5, "tuple")
def unpack_tuple(sc):
    n = sc.pick(lambda t: isinstance(t, TupT))
    if n is None:
        return None
    names = [sc.b.fresh("e") for _ in sc.vars[n].elts]
    for name, ty in zip(names, sc.vars[n].elts):
        sc.add(name, ty)
    return [f"{', '.join(names)}{',' if len(names) == 1 else ''} = {n}"]


@statement(1, "tuple")
def make_tuple(sc):
    if "tuple" not in sc.b.focus:
        return None
    elts = tuple(sc.rng.choice(["int", "float", "bool"]) for _ in range(sc.rng.randint(1, 3)))
    name = sc.b.fresh("u")
    src = "(" + "".join(stored(t, expr(sc, t)) + ", " for t in elts) + ")"
    sc.add(name, TupT(elts))
    return [f"{name} = {src}"]


@statement(1, "tuple")
def for_tuple(sc):
    n = sc.pick(lambda t: isinstance(t, TupT) and len(set(t.elts)) == 1)
    if n is None or sc.depth >= 3 or sc.loops >= 2:
        return None
    x = sc.b.fresh("v")
    c = sc.child("for")
    c.add(x, sc.vars[n].elts[0], readonly=True)
    return [f"for {x} in {n}:"] + indent(block(c, sc.rng.randint(1, 3)))


# --- arrays --------------------------------------------------------------------------------

ARRAY_DTYPES = INT_DTYPES + ("float32", "float64", "float64", "bool", "complex128")


def element_values(rng, dtype, n):
    k = kind(dtype)
    if k == "b":
        return [rng.random() < 0.5 for _ in range(n)]
    if k == "u":
        return [rng.randint(0, 100) for _ in range(n)]
    if k == "i":
        return [rng.randint(-50, 50) for _ in range(n)]
    if k == "f":  # quarters: exact in float32, so sums do not depend on their order
        return [rng.randint(-200, 200) / 4 for _ in range(n)]
    return [complex(rng.randint(-40, 40) / 4, rng.randint(-40, 40) / 4) for _ in range(n)]


def array_source(rng, dtype, ndim):
    """Source of an array argument: C or Fortran order, strided, reversed or transposed."""
    if ndim == 1:
        n = rng.randint(1, 10)
        layout = rng.choice(["", "", "[::2]", "[::-1]", "[1:]"])
        m = {"": n, "[::2]": 2 * n, "[::-1]": n, "[1:]": n + 1}[layout]
        return f"np.array({element_values(rng, dtype, m)}, dtype=np.{dtype}){layout}"
    r, c = rng.randint(1, 4), rng.randint(1, 4)
    layout = rng.choice(["C", "F", "T", "S"])
    rows, cols = (c, r) if layout == "T" else (r, 2 * c if layout == "S" else c)
    vals = [element_values(rng, dtype, cols) for _ in range(rows)]
    src = f"np.array({vals}, dtype=np.{dtype})"
    return {"C": src, "F": f"np.asfortranarray({src})", "T": src + ".T",
            "S": src + "[:, ::2]"}[layout]


@category("array", 2.5)
def _array(b, sc):
    for _ in range(b.rng.randint(1, 2)):
        dtype = b.rng.choice(ARRAY_DTYPES)
        src = array_source(b.rng, dtype, b.rng.choice([1, 1, 2]))
        shape = eval(src, {"np": np}).shape
        param(b, sc, "a", Arr(dtype, shape, 100), src)
        if dtype == "complex128":
            b.features.add("complex")
    b.focus.add("array")


def index(sc, a):
    """An index tuple that is always in range for array `a`."""
    parts = []
    for k, d in enumerate(sc.vars[a].shape):
        if sc.rng.random() < 0.4:
            parts.append(str(sc.rng.randint(-d, d - 1)))
        else:
            parts.append(f"{expr(sc, 'int', 1)} % {a}.shape[{k}]")
    return ", ".join(parts)


def element_leaf(ty, kinds, conv):
    @leaf(ty)
    def rule(sc):
        a = sc.pick(is_arr(lambda t: kind(t.dtype) in kinds))
        return f"{conv}({a}[{index(sc, a)}])" if a else None
    return rule


element_leaf("int", "iub", "int")
element_leaf("float", "f", "float")
element_leaf("complex", "c", "complex")
element_leaf("bool", "b", "bool")


@leaf("int")
def _array_int_reduction(sc):
    a = sc.pick(is_arr(lambda t: kind(t.dtype) in "iub"))
    if a is None:
        return None
    forms = [f"int({a}.sum())", f"int(np.sum({a}))", f"{a}.size", f"len({a})",
             f"int(np.count_nonzero({a}))", f"{a}.shape[{len(sc.vars[a].shape) - 1}]"]
    if kind(sc.vars[a].dtype) != "b":
        forms += [f"int({a}.max())", f"int(np.min({a}))", f"int(np.argmax({a}))",
                  f"int(({a} > {sc.rng.randint(-5, 20)}).sum())"]
    return sc.rng.choice(forms)


@leaf("float")
def _array_float_reduction(sc):
    a = sc.pick(is_arr(lambda t: kind(t.dtype) in "iuf"))
    if a is None:
        return None
    t = sc.vars[a]
    forms = [f"float({a}.sum())", f"float(np.max({a}))", f"float({a}.min())"]
    if t.dtype != "float32":  # NumPy keeps float32 for these, Numba computes in float64
        forms += [f"float({a}.mean())", f"float(np.mean({a}))"]
    if t.dtype == "float64":
        forms += [f"float({a}.std())", f"float(np.prod({a} / 64.0 + 1.0))"]
        others = [n for n, u in sc.vars.items() if isinstance(u, Arr) and len(t.shape) == 1
                  and (u.dtype, u.shape) == (t.dtype, t.shape)]
        if others:
            forms.append(f"float(np.dot({a}, {sc.rng.choice(others)}))")
    return sc.rng.choice(forms)


@leaf("complex")
def _array_complex_reduction(sc):
    a = sc.pick(is_arr(lambda t: kind(t.dtype) == "c"))
    return f"complex({a}.sum())" if a else None


@leaf("bool")
def _array_bool_reduction(sc):
    a = sc.pick(is_arr(lambda t: kind(t.dtype) != "c"))
    if a is None:
        return None
    k = sc.rng.randint(-5, 20)
    return sc.rng.choice([f"bool({a}.any())", f"bool(np.all({a}))", f"bool(np.any({a} > {k}))",
                          f"bool(({a} <= {k}).all())"])


def _dtype_of(text, sc):
    """NumPy's dtype and shape of array expression `text` (None when NumPy refuses it)."""
    ns = {"np": np}
    for n, t in sc.vars.items():
        if isinstance(t, Arr):
            ns[n] = np.ones(t.shape, dtype=t.dtype)
    try:
        with np.errstate(all="ignore"):
            v = eval(text, ns)
    except Exception:
        return None
    return v.dtype.name, v.shape


# float32 arrays only take operations whose results are exact in float32 (sums and
# differences of quarters, abs, max/min): Numba computes float32 mixed with Python scalars
# in float64, NumPy in float32, and order-dependent sums of inexact values differ.
EXACT32 = {"add", "neg", "abs", "minmax", "where", "leaf", "compare"}
# Float ufuncs of narrow ints differ by design (NumPy: float16, Numba: float32).
FLOAT_UFUNC_DTYPES = ("float64", "int32", "int64", "uint32", "uint64")


def compatible(t, u):
    """May arrays of types t and u meet in one binary operation?"""
    if t.dtype == u.dtype:
        return kind(t.dtype) != "b"
    kinds = {kind(t.dtype), kind(u.dtype)}
    return "float64" in (t.dtype, u.dtype) and "b" not in kinds and "float32" not in (t.dtype, u.dtype)


def arr_leaf(sc, shape):
    rng = sc.rng
    same = sc.names(is_arr(lambda t: t.shape == shape))
    rev = sc.names(is_arr(lambda t: len(shape) == 2 and t.shape == shape[::-1]))
    forms = [(f"{n}", sc.vars[n].bound) for n in same]
    forms += [(f"{n}.copy()", sc.vars[n].bound) for n in same]
    forms += [(f"{n}.T", sc.vars[n].bound) for n in rev]
    if len(shape) == 1:
        forms += [(f"{n}[::-1]", sc.vars[n].bound) for n in same]
        forms.append((f"np.arange({shape[0]})", shape[0]))
    forms.append((f"np.ones({shape})", 1))
    forms.append((f"np.full({shape}, {rng.randint(0, 9)})", 9))
    return rng.choice(forms)


def arr_expr(sc, shape, depth=2):
    """(text, Arr) of an array expression of shape `shape` that NumPy computes exactly as
    Numba does (no overflow of its dtype, no float32 rounding that depends on typing)."""
    for _ in range(10):
        if depth > 0 and sc.rng.random() < 0.7:
            op, text, bound = _arr_rule(sc, shape, depth - 1)
        else:
            op, (text, bound) = "leaf", arr_leaf(sc, shape)
        if text is None:
            continue
        got = _dtype_of(text, sc)
        if got is None or got[1] != shape:
            continue
        dtype = got[0]
        if kind(dtype) in "iu" and bound > min(np.iinfo(dtype).max, 10**6):
            continue
        if bound > 10**6 or (dtype == "float32" and op not in EXACT32):
            continue
        return text, Arr(dtype, shape, max(bound, 100))
    return f"np.zeros({shape})", Arr("float64", shape, 100)


def _arr_rule(sc, shape, d):
    """One operation over sub-expressions: (operation class, text, bound) or a None text."""
    rng = sc.rng
    a, ta = arr_expr(sc, shape, d)
    ka = kind(ta.dtype)
    unsigned = ka in "ub"
    rule = rng.randint(0, 9)
    if rule == 0 and ka != "b":
        k = rng.randint(0 if unsigned else -9, 9)
        op = rng.choice(["+", "*"] if unsigned else ["+", "-", "*"])
        # uint64 with a Python int is float64 in Numba (its documented rule), uint64 in
        # NumPy: a uint64 scalar keeps both at uint64.
        ks = f"np.uint64({k})" if ta.dtype == "uint64" else k
        return "scalar", f"({a} {op} {ks})", ta.bound * abs(k) if op == "*" else ta.bound + abs(k)
    if rule == 1:
        b, tb = arr_expr(sc, shape, d)
        if not compatible(ta, tb):
            return None, None, 0
        op = rng.choice(["+", "*"] if unsigned else ["+", "-", "*"])
        if op == "*":
            return "mul", f"({a} * {b})", ta.bound * tb.bound
        return "add", f"({a} {op} {b})", ta.bound + tb.bound
    if rule == 2 and ka in "ifc":
        return "neg", rng.choice([f"(-{a})", f"np.abs({a})", f"np.negative({a})"]), ta.bound
    if rule == 3 and ta.dtype in FLOAT_UFUNC_DTYPES:
        f = rng.choice(["np.sqrt(np.abs({}))", "np.sin({})", "np.exp(np.sin({}))",
                        "np.log1p(np.abs({}))", "np.floor({} / 3.0)", "np.cos({})"])
        return "ufunc", f.format(a), ta.bound
    if rule == 4:
        b, tb = arr_expr(sc, shape, d)
        if not compatible(ta, tb):
            return None, None, 0
        f = rng.choice(["np.maximum", "np.minimum", "np.add"])
        return ("add" if f == "np.add" else "minmax"), f"{f}({a}, {b})", ta.bound + tb.bound
    if rule == 5 and ka != "c":
        b, tb = arr_expr(sc, shape, d)
        if not compatible(ta, tb):
            return None, None, 0
        k = rng.randint(0, 9)
        return "where", f"np.where({a} > {k}, {a}, {b})", max(ta.bound, tb.bound)
    if rule == 6 and ka != "c":
        k = rng.randint(0, 9)
        return "compare", rng.choice([f"({a} > {k})", f"({a} <= {k})", f"({a} == {a})"]), 1
    if rule == 7 and ka in "iuf" and ta.dtype != "float32":
        b, tb = arr_expr(sc, shape, d)
        if kind(tb.dtype) not in "iuf" or tb.dtype == "float32":
            return None, None, 0
        return "div", f"({a} / (np.abs({b}) + 1))", ta.bound
    if rule == 8 and ka in "iub":
        return "cast", rng.choice([f"{a}.astype(np.float64)", f"{a}.astype(np.int64)"]), ta.bound
    if rule == 9 and len(shape) == 1 and ka in "iuf" and ta.dtype != "float32":
        return "scan", rng.choice([f"np.cumsum({a})", f"np.sort({a})"]), ta.bound * shape[0]
    return None, None, 0


@statement(2.5, "array")
def new_array(sc):
    a = sc.pick(is_arr())
    if a is None or sc.in_prange:
        return None
    name = sc.b.fresh("b")
    t = sc.vars[a]
    rng = sc.rng
    if rng.random() < 0.35:  # a view: shares memory (and its bound) with `a`
        views = [f"{a}.T", f"{a}[::-1]", f"{a}[{rng.randint(0, t.shape[0] - 1)}:]"]
        if len(t.shape) == 2:
            views += [f"{a}[{rng.randint(0, t.shape[0] - 1)}]",
                      f"{a}[:, {rng.randint(0, t.shape[1] - 1)}]", f"{a}[::2, ::-1]"]
        else:
            views += [f"{a}[::2]", f"{a}[{rng.randint(-t.shape[0], -1)}:]"]
        text = rng.choice(views)
        dtype, shape = _dtype_of(text, sc)
        if 0 in shape:
            return None
        sc.add(name, Arr(dtype, shape, t.bound))
    else:
        text, ty = arr_expr(sc, t.shape)
        sc.add(name, ty)
    return [f"{name} = {text}"]


def element_value(sc, dtype):
    """A value to store into an array of `dtype`: in range for it, and for floats a
    multiple of 1/4, so that sums of the array are exact in any order (NumPy sums
    pairwise, Numba in a loop) and loops feeding reductions back into the array do not
    amplify last-bit differences."""
    k = kind(dtype)
    if k in "iu":
        return f"({expr(sc, 'int')}) % 100"
    if k == "f":
        return f"round(({expr(sc, 'float')}) % 50.0 * 4) / 4"
    if k == "b":
        return expr(sc, "bool")
    return f"complex(({expr(sc, 'float', 1)}) % 5.0, {float_const(sc.rng)})"


@statement(2, "array")
def store_element(sc):
    a = sc.pick(is_arr())
    if a is None or sc.in_prange:
        return None
    return [f"{a}[{index(sc, a)}] = {element_value(sc, sc.vars[a].dtype)}"]


@statement(1, "array")
def store_slice(sc):
    a = sc.pick(is_arr())
    if a is None or sc.in_prange:
        return None
    t = sc.vars[a]
    rng = sc.rng
    if rng.random() < 0.5:
        target = f"{a}[{rng.randint(0, t.shape[0] - 1)}:{rng.randint(0, t.shape[0])}]"
        return [f"{target} = {element_value(sc, t.dtype)}"]
    text, u = arr_expr(sc, t.shape, 1)
    if u.dtype != t.dtype or u.bound > 100:
        return None
    return [f"{a}[:] = {text}"]


@statement(1, "array")
def for_array(sc):
    a = sc.pick(is_arr(lambda t: len(t.shape) == 1))
    if a is None or sc.depth >= 3 or sc.loops >= 2:
        return None
    x = sc.b.fresh("v")
    c = sc.child("for")
    c.add(x, NpScalar(sc.vars[a].dtype), readonly=True)
    return [f"for {x} in {a}:"] + indent(block(c, sc.rng.randint(1, 3)))


# --- lists ---------------------------------------------------------------------------------


@category("list", 1.5)
def _list(b, sc):
    rng = b.rng
    elt = rng.choice(["int", "int", "float"])
    vals = [small_int(rng) if elt == "int" else rng.randint(-80, 80) / 8
            for _ in range(rng.randint(1, 6))]
    param(b, sc, "l", ListT(elt), repr(vals))
    b.focus.add("list")


def lists(sc, elt=None, nonempty=False, mutable=False):
    return [n for n, t in sc.vars.items() if isinstance(t, ListT)
            and (elt is None or t.elt == elt) and (t.nonempty or not nonempty)
            and (not mutable or sc.mutable(n))]


for _ty in ("int", "float", "str"):
    @leaf(_ty)
    def _list_item(sc, ty=_ty):
        names = lists(sc, ty, nonempty=True)
        if not names:
            return None
        lst = sc.rng.choice(names)
        return f"{lst}[{ranged(sc, lst)}]"


@leaf("int")
def _list_int(sc):
    names = lists(sc)
    if not names:
        return None
    lst = sc.rng.choice(names)
    t = sc.vars[lst]
    forms = [f"len({lst})"]
    if t.elt == "int":
        forms += [f"sum({lst}) % {INT_MOD}", f"{lst}.count({sc.rng.randint(-3, 9)})"]
        if t.nonempty:
            forms += [f"max({lst})", f"min({lst})"]
    return sc.rng.choice(forms)


@leaf("float")
def _list_float(sc):
    names = lists(sc, "float")
    return f"sum({sc.rng.choice(names)})" if names else None


@leaf("bool")
def _list_in(sc):
    names = lists(sc, "int")
    if not names:
        return None
    return f"({expr(sc, 'int', 1)} in {sc.rng.choice(names)})"


@leaf("str")
def _list_join(sc):
    names = lists(sc, "str")
    return f"'+'.join({sc.rng.choice(names)})" if names else None


@statement(1.5, "list")
def new_list(sc):
    if sc.in_prange:
        return None
    rng = sc.rng
    name = sc.b.fresh("m")
    src = lists(sc)
    elt = rng.choice(["int", "float"])
    r = rng.randint(0, 5)
    if r == 0 or not src:
        n = rng.randint(1, 4)
        text = "[" + ", ".join(stored(elt, expr(sc, elt, 1)) for _ in range(n)) + "]"
    elif r == 1:
        i = sc.b.fresh("k")
        c = sc.child()
        c.add(i, "int")
        text = f"[{stored(elt, expr(c, elt, 1))} for {i} in range({rng.randint(1, 8)})]"
    elif r == 2:
        lst = rng.choice(src)
        elt = sc.vars[lst].elt
        x = sc.b.fresh("y")
        c = sc.child()
        c.add(x, elt)
        # A filter on the item: a constant one can leave Numba nothing to type the list by.
        cond = f" if {x} > {rng.randint(-5, 30)}" if rng.random() < 0.4 else ""
        text = f"[{stored(elt, expr(c, elt, 1))} for {x} in {lst}{cond}]"
        sc.add(name, ListT(elt, nonempty=not cond and sc.vars[lst].nonempty))
        return [f"{name} = {text}"]
    elif r == 3 and "str" in sc.b.features:
        text = f"{expr(sc, 'str')}.split(',')"
        sc.add(name, ListT("str"))
        return [f"{name} = {text}"]
    else:
        lst = rng.choice(src)
        elt = sc.vars[lst].elt
        forms = [f"sorted({lst})", f"list({lst})", f"{lst}[:]", f"sorted({lst}, reverse=True)"]
        if type(sc.vars[lst]) is ListT:  # Numba has no `+` of typed Lists
            forms.append(f"{lst} + {lst}")
        text = rng.choice(forms)
        sc.add(name, ListT(elt, sc.vars[lst].nonempty))
        return [f"{name} = {text}"]
    sc.add(name, ListT(elt))
    return [f"{name} = {text}"]


@statement(2, "list")
def mutate_list(sc):
    names = lists(sc, mutable=True)
    names = [n for n in names if sc.vars[n].elt != "str"]
    if not names or sc.in_prange:
        return None
    lst = sc.rng.choice(names)
    t = sc.vars[lst]
    v = stored(t.elt, expr(sc, t.elt))
    forms = [f"{lst}.append({v})", f"{lst}.insert({sc.rng.randint(-2, 2)}, {v})",
             f"{lst}.sort()", f"{lst}.reverse()"]
    if t.nonempty:
        forms.append(f"{lst}[{ranged(sc, lst)}] = {v}")
    return [sc.rng.choice(forms)]


@statement(1, "list")
def for_list(sc):
    names = lists(sc)
    if not names or sc.depth >= 3 or sc.loops >= 2:
        return None
    lst = sc.rng.choice(names)
    x = sc.b.fresh("y")
    c = sc.child("for")
    c.frozen.add(lst)
    c.add(x, sc.vars[lst].elt, readonly=True)
    if sc.rng.random() < 0.4:
        i = sc.b.fresh("j")
        c.add(i, "int", readonly=True)
        head = f"for {i}, {x} in enumerate({lst}):"
    else:
        head = f"for {x} in {lst}:"
    return [head] + indent(block(c, sc.rng.randint(1, 3)))


# --- sets ----------------------------------------------------------------------------------


@category("set", 0.8)
def _set(b, sc):
    int_param(b, sc)
    b.focus.add("set")


def sets(sc, mutable=False):
    return [n for n, t in sc.vars.items() if isinstance(t, SetT)
            and (not mutable or sc.mutable(n))]


@statement(1.5, "set")
def new_set(sc):
    if sc.in_prange or "set" not in sc.b.focus and not sets(sc):
        return None
    name = sc.b.fresh("h")
    ints = lists(sc, "int")
    k = sc.b.fresh("k")
    forms = [f"{{{expr(sc, 'int', 1)} % 20, {expr(sc, 'int', 1)} % 20}}",
             f"{{{k} % 7 for {k} in range({sc.rng.randint(0, 9)})}}"]
    if ints:
        forms.append(f"set({sc.rng.choice(ints)})")
    sc.add(name, SetT("int"))
    return [f"{name} = {sc.rng.choice(forms)}"]


@statement(2, "set")
def mutate_set(sc):
    names = sets(sc, mutable=True)
    if not names or sc.in_prange:
        return None
    s = sc.rng.choice(names)
    return [f"{s}.{sc.rng.choice(['add', 'add', 'discard'])}(({expr(sc, 'int')}) % 20)"]


@leaf("int")
def _set_int(sc):
    names = sets(sc)
    if not names:
        return None
    s = sc.rng.choice(names)
    return sc.rng.choice([f"len({s})", f"sum({s})", f"len({s} | {{1, 2}})",
                          f"len({s} & {{0, 1, 2, 3}})"])


@leaf("bool")
def _set_in(sc):
    names = sets(sc)
    return f"({expr(sc, 'int', 1)} in {sc.rng.choice(names)})" if names else None


@statement(1, "set")
def for_set(sc):
    names = sets(sc)
    if not names or sc.depth >= 3 or sc.loops >= 2:
        return None
    s = sc.rng.choice(names)
    x = sc.b.fresh("y")
    c = sc.child("for")
    c.add(x, "int", readonly=True)
    # sorted(): CPython's iteration order of a set is not part of the contract.
    return [f"for {x} in sorted({s}):"] + indent(block(c, sc.rng.randint(1, 3)))


# --- dicts ---------------------------------------------------------------------------------


@category("dict", 1.0)
def _dict(b, sc):
    int_param(b, sc)
    b.focus.add("dict")


DICT_STR_KEYS = ("'a'", "'bb'", "'c'", "'dd'")


def dicts(sc, mutable=False, val=None):
    """Dicts with scalar values (`val` if given)."""
    return [n for n, t in sc.vars.items() if isinstance(t, DictT)
            and t.val in ("int", "float") and (val is None or t.val == val)
            and (not mutable or sc.mutable(n))]


def zero(ty):
    return "0.0" if ty == "float" else "0"


def dict_key(sc, key):
    if key == "str":
        return sc.rng.choice(DICT_STR_KEYS)
    return f"({expr(sc, 'int', 1)}) % 10"


@statement(1.5, "dict")
def new_dict(sc):
    if sc.in_prange or "dict" not in sc.b.focus:
        return None
    key = sc.rng.choice(["int", "str"])
    name = sc.b.fresh("d")
    n = sc.rng.randint(0, 3)
    items = ", ".join(f"{dict_key(sc, key)}: {stored('int', expr(sc, 'int', 1))}"
                      for _ in range(n))
    first = f"{name}[{dict_key(sc, key)}] = {expr(sc, 'int', 1)}"
    sc.add(name, DictT(key, "int"))
    if n == 0:  # typed by the store that follows, as Numba requires
        return [f"{name} = {{}}", first]
    return [f"{name} = {{{items}}}"]


@statement(2, "dict")
def mutate_dict(sc):
    names = dicts(sc, mutable=True)
    if not names or sc.in_prange:
        return None
    d = sc.rng.choice(names)
    t = sc.vars[d]
    k = dict_key(sc, t.key)
    v = stored(t.val, expr(sc, t.val))
    mod = INT_MOD if t.val == "int" else 1000.0
    return sc.rng.choice([
        [f"{d}[{k}] = {v}"],
        [f"{d}[{k}] = ({d}.get({k}, {zero(t.val)}) + {expr(sc, t.val, 1)}) % {mod}"],
        [f"if {k} in {d}:", f"    del {d}[{k}]"],
        [f"{d}.pop({k}, {zero(t.val)})"],
    ])


@leaf("int")
def _dict_int(sc):
    names = dicts(sc)
    if not names:
        return None
    d = sc.rng.choice(names)
    forms = [f"len({d})"]
    if sc.vars[d].val == "int":
        forms.append(f"{d}.get({dict_key(sc, sc.vars[d].key)}, -1)")
        if type(sc.vars[d]) is DictT:  # Numba has no sum() of a typed Dict's values
            forms.append(f"sum({d}.values()) % {INT_MOD}")
    return sc.rng.choice(forms)


@leaf("bool")
def _dict_in(sc):
    names = dicts(sc)
    if not names:
        return None
    d = sc.rng.choice(names)
    return f"({dict_key(sc, sc.vars[d].key)} in {d})"


@statement(1, "dict")
def for_dict(sc):
    names = dicts(sc)
    if not names or sc.depth >= 3 or sc.loops >= 2:
        return None
    d = sc.rng.choice(names)
    k, v = sc.b.fresh("k"), sc.b.fresh("y")
    c = sc.child("for")
    c.frozen.add(d)
    c.add(k, sc.vars[d].key, readonly=True)
    c.add(v, sc.vars[d].val, readonly=True)
    if sc.vars[d].key == "str":
        sc.b.features.add("str")
    return [f"for {k}, {v} in {d}.items():"] + indent(block(c, sc.rng.randint(1, 3)))


# --- exceptions ----------------------------------------------------------------------------


@category("exception", 1.2)
def _exception(b, sc):
    rng = b.rng
    if rng.random() < 0.5:
        name = b.fresh("check")
        limit = rng.randint(-20, 40)
        b.helpers.append(
            f"def {name}(x):\n    if x > {limit}:\n        raise ValueError('{name}: too big')\n"
            f"    return (x * {rng.randint(1, 9)}) % 1000")
        sc.add(name, FnT(("int",), "int"), readonly=True)
    b.focus.add("exception")


@statement(1.5, "exception")
def raise_if(sc):
    if sc.in_prange or "exception" not in sc.b.focus:
        return None
    msg = sc.rng.choice(["'bad value'", "'negative'", "''"])
    if sc.rng.random() < 0.3:
        return [f"if {expr(sc, 'bool')}:", f"    raise ValueError({msg}, {expr(sc, 'int', 1)})"]
    return [f"if {expr(sc, 'bool')}:", f"    raise ValueError({msg})"]


@statement(2, "exception")
def try_except(sc):
    if sc.in_prange or sc.depth >= 2 or "exception" not in sc.b.focus:
        return None
    rng = sc.rng
    r = sc.b.fresh("r")
    lines = [f"{r} = {expr(sc, 'int', 1)}", "try:"]
    c = sc.child()
    exc = rng.choice(["ValueError", "ValueError", "ZeroDivisionError", "IndexError", "KeyError"])
    risky = {
        "ValueError": [f"if {expr(c, 'bool')}:", f"    raise ValueError('in try')"],
        "ZeroDivisionError": [f"{r} = {expr(c, 'int', 1)} // ({expr(c, 'int', 1)} % 3)"],
        "IndexError": None, "KeyError": None,
    }[exc]
    ints = lists(sc, "int")
    if exc == "IndexError" and ints:
        risky = [f"{r} = {rng.choice(ints)}[{rng.randint(-8, 8)}]"]
    ds = [d for d in dicts(sc, val="int") if sc.vars[d].key == "int"]
    if exc == "KeyError" and ds:
        risky = [f"{r} = {rng.choice(ds)}[{rng.randint(0, 12)}]"]
    if risky is None:
        exc, risky = "ValueError", [f"if {expr(c, 'bool')}:", f"    raise ValueError('x')"]
    body = block(c, rng.randint(0, 2)) if rng.random() < 0.5 else []
    lines += indent(body + risky + [f"{r} = ({r} + {expr(c, 'int', 1)}) % {INT_MOD}"])
    lines += [f"except {exc}:"] + indent([f"{r} = {expr(sc, 'int', 1)}"])
    sc.add(r, "int")
    return lines


# --- functions: helpers, inner functions, closures -------------------------------------------


@category("closure", 1.2)
def _closure(b, sc):
    for _ in range(b.rng.randint(0, 1)):
        param(b, sc, "q", "float", float_const(b.rng))
    if b.rng.random() < 0.5:  # a separately jitted helper the body calls
        name = b.fresh("helper")
        hs = Scope(b)
        hs.add("x", "int", readonly=True)
        hs.add("y", "float", readonly=True)
        body = block(hs, b.rng.randint(1, 4)) + [f"return {stored('int', expr(hs, 'int'))}"]
        b.helpers.append(f"def {name}(x, y):\n" + "\n".join(indent(body)))
        sc.add(name, FnT(("int", "float"), "int"), readonly=True)
    b.focus.add("closure")


@statement(2, "closure")
def inner_function(sc):
    """An inner function or lambda capturing the (never rebound) parameters."""
    if sc.depth > 0 or "closure" not in sc.b.focus:
        return None
    rng = sc.rng
    name = sc.b.fresh("inner")
    argty, ret = rng.choice(["int", "float"]), rng.choice(["int", "float"])
    c = sc.child()
    c.depth = 1
    c.vars = {n: t for n, t in sc.vars.items() if n in sc.readonly and t in ("int", "float")}
    c.readonly = set(c.vars)
    c.add("arg", argty, readonly=True)
    if rng.random() < 0.3:
        lines = [f"{name} = lambda arg: {stored(ret, expr(c, ret))}"]
    else:
        body = block(c, rng.randint(0, 3)) + [f"return {stored(ret, expr(c, ret))}"]
        lines = [f"def {name}(arg):"] + indent(body)
    # Called at once: Numba refuses a closure it cannot inline ("may escape").
    result = sc.b.fresh("n" if ret == "int" else "x")
    lines.append(f"{result} = {stored(ret, f'{name}({expr(sc, argty, 1)})')}")
    sc.add(name, FnT((argty,), ret), readonly=True)
    sc.add(result, ret)
    return lines


for _ty in ("int", "float"):
    @composite(_ty)
    def _call(sc, d, ty=_ty):
        fns = sc.names(lambda t: isinstance(t, FnT) and t.ret == ty)
        if not fns:
            return None
        fn = sc.rng.choice(fns)
        return f"{fn}({', '.join(expr(sc, t, d) for t in sc.vars[fn].args)})"


# --- generators ----------------------------------------------------------------------------


@category("generator", 1.0)
def _generator(b, sc):
    rng = b.rng
    name = b.fresh("gen")
    b.helpers.append(
        f"def {name}(n, c):\n    for i in range(n):\n"
        + (f"        if i % {rng.randint(2, 3)} == 0:\n            continue\n" if rng.random() < 0.5 else "")
        + f"        yield (i * c + {rng.randint(0, 9)}) % 1009\n"
        + (f"    yield -1\n" if rng.random() < 0.5 else ""))
    sc.add(name, FnT(("int", "int"), "gen"), readonly=True)
    b.focus.add("generator")
    if rng.random() < 0.4:  # f itself is a generator: the runner compares list(f(...))
        b.generator = True
        ty = rng.choice(["int", "float"])
        i = b.fresh("i")

        def tail():
            c = sc.child("for")
            c.add(i, "int", readonly=True)
            body = block(c, rng.randint(0, 2)) + [f"yield {stored(ty, expr(c, ty))}"]
            return [f"for {i} in range({rng.randint(0, 6)}):"] + indent(body)
        return tail
    return None


def generator_call(sc):
    fns = sc.names(lambda t: isinstance(t, FnT) and t.ret == "gen")
    if not fns:
        return None
    return f"{sc.rng.choice(fns)}({sc.rng.randint(0, 8)}, {expr(sc, 'int', 1)} % 50)"


@statement(2, "generator")
def consume_generator(sc):
    call = generator_call(sc)
    if call is None or sc.in_prange or sc.depth >= 3 or sc.loops >= 2:
        return None
    x = sc.b.fresh("y")
    c = sc.child("for")
    c.add(x, "int", readonly=True)
    return [f"for {x} in {call}:"] + indent(block(c, sc.rng.randint(1, 3)))


@composite("int")
def _sum_generator(sc, d):
    call = generator_call(sc)
    return f"sum({call})" if call else None


# --- prange --------------------------------------------------------------------------------


@category("prange", 1.2)
def _prange(b, sc):
    rng = b.rng
    b.parallel = True
    dtype = rng.choice(["float64", "float64", "int64", "int32", "float32", "uint8"])
    src = array_source(rng, dtype, 1)
    a = param(b, sc, "a", Arr(dtype, eval(src, {"np": np}).shape, 100), src)
    b.focus.add("prange")
    # Half the programs end with a prange loop over the argument, so that there is one.
    return None if rng.random() < 0.5 else lambda: prange_loop(sc, a) + return_stmt(sc)


@statement(3, "prange")
def prange_loop(sc, a=None):
    """A prange loop: a reduction (`acc += ...`) or stores to `out[i]` only."""
    if sc.depth > 0 or "prange" not in sc.b.focus:
        return None
    rng = sc.rng
    a = a or sc.pick(is_arr(lambda t: len(t.shape) == 1))
    if a is None:
        return None
    i = sc.b.fresh("i")
    c = sc.child("for")
    c.in_prange = True
    c.loop = None
    c.readonly |= set(c.vars)
    c.add(i, "int", readonly=True)
    body = block(c, rng.randint(0, 2))
    if rng.random() < 0.5:
        acc, ty = sc.b.fresh("acc"), rng.choice(["int", "float"])
        init = "0" if ty == "int" else "0.0"
        inc = f"({expr(c, ty)}) % {'1000' if ty == 'int' else '100.0'}"
        if rng.random() < 0.4:
            body += [f"if {expr(c, 'bool', 1)}:", f"    {acc} += {inc}"]
        else:
            body += [f"{acc} += {inc}"]
        lines = [f"{acc} = {init}", f"for {i} in prange({a}.shape[0]):"] + indent(body)
        sc.add(acc, ty)
        return lines
    out = sc.b.fresh("out")
    ty = rng.choice(["int", "float"])
    body += [f"{out}[{i}] = {stored(ty, expr(c, ty))}"]
    make = f"np.zeros({a}.shape[0]{', dtype=np.int64' if ty == 'int' else ''})"
    sc.add(out, Arr("int64" if ty == "int" else "float64", sc.vars[a].shape, INT_MOD))
    return [f"{out} = {make}", f"for {i} in prange({a}.shape[0]):"] + indent(body)
