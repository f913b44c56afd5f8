"""More categories and features, in the style of categories.py: typed containers
(`List`, `Dict`: the names typed_names.py injects), string methods and f-string specs,
tuples of arrays, 2-d loops over `shape`, NumPy functions that change shape (argsort,
linspace, concatenate, reshape/ravel/transpose copies, astype, matrix products),
boolean masks, `while`/`for` with `else`, inner functions returning tuples,
`enumerate(zip(...))`, three-argument min/max, getattr/hasattr with constant names,
math predicates and rounding, floor division and modulo by negative numbers, divmod,
`round(x, n)` and `and`/`or` of ints.
"""

from dataclasses import dataclass

import numpy as np

from gen import (
    INT_MOD, Arr, DictT, FnT, ListT, TupT, block, category, composite, expr, float_const,
    indent, leaf, small_int, statement, stored, STR_CONSTS,
)
from categories import (
    DICT_STR_KEYS, _dtype_of, array_source, dict_key, dicts, element_value, is_arr, kind,
    lists, param,
)


@dataclass(frozen=True)
class TListT(ListT):
    """A numba typed List (`List(...)`): every list statement applies to it."""


@dataclass(frozen=True)
class TDictT(DictT):
    """A numba typed Dict (`Dict()`, `Dict.empty(...)`, `typed_dict(...)` arguments)."""


@dataclass(frozen=True)
class GroupT:
    """A typed Dict from int keys to typed Lists of `elt` (only returned)."""

    elt: str


TYPES = {"int": "types.int64", "float": "types.float64", "str": "types.unicode_type"}


def scalar_src(rng, ty):
    return {"int": lambda: str(small_int(rng)), "float": lambda: float_const(rng),
            "str": lambda: rng.choice(STR_CONSTS)}[ty]()


# --- typed containers -------------------------------------------------------------------


@category("typed", 1.2)
def _typed(b, sc):
    rng = b.rng
    if rng.random() < 0.7:
        elt = rng.choice(["int", "int", "float"])
        vals = ", ".join(scalar_src(rng, elt) for _ in range(rng.randint(1, 6)))
        param(b, sc, "l", TListT(elt), f"List([{vals}])")
    if rng.random() < 0.6:
        key, val = rng.choice(["int", "str"]), rng.choice(["int", "int", "float"])
        keys = ([str(k) for k in rng.sample(range(10), rng.randint(1, 4))] if key == "int"
                else rng.sample(DICT_STR_KEYS, rng.randint(1, 4)))
        items = ", ".join(f"({k}, {scalar_src(rng, val)})" for k in keys)
        param(b, sc, "d", TDictT(key, val), f"typed_dict([{items}])")
        if key == "str":
            b.features.add("str")
    b.focus |= {"typed", "list", "dict"}


def typed_lists(sc, elt=None, nonempty=False):
    return [n for n in lists(sc, elt, nonempty) if isinstance(sc.vars[n], TListT)]


@statement(2, "typed")
def new_typed_list(sc):
    if sc.in_prange or "typed" not in sc.b.focus:
        return None
    rng = sc.rng
    name = sc.b.fresh("m")
    elt = rng.choice(["int", "float"])
    src = typed_lists(sc)
    r = rng.randint(0, 5)
    if r == 0:
        lines = [f"{name} = List()", f"{name}.append({stored(elt, expr(sc, elt, 1))})"]
    elif r == 1:
        lines = [f"{name} = List.empty_list({TYPES[elt]})",
                 f"{name}.append({stored(elt, expr(sc, elt, 1))})"]
    elif r == 2:
        vals = ", ".join(stored(elt, expr(sc, elt, 1)) for _ in range(rng.randint(1, 4)))
        lines = [f"{name} = List([{vals}])"]
    elif r == 3:
        elt = "int"
        lines = [f"{name} = List(range({rng.randint(1, 6)}))"]
    elif src:
        lst = rng.choice(src)
        t = sc.vars[lst]
        form = rng.choice([f"List({lst})", f"{lst}.copy()", f"{lst}[::-1]",
                           f"{lst}[{rng.randint(-3, 3)}:]"])
        sc.add(name, TListT(t.elt, t.nonempty and ":]" not in form))
        return [f"{name} = {form}"]
    else:
        return None
    sc.add(name, TListT(elt))
    return lines


@statement(1.5, "typed")
def new_typed_dict(sc):
    if sc.in_prange or "typed" not in sc.b.focus:
        return None
    rng = sc.rng
    name = sc.b.fresh("d")
    key, val = rng.choice(["int", "str"]), rng.choice(["int", "float"])
    first = f"{name}[{dict_key(sc, key)}] = {stored(val, expr(sc, val, 1))}"
    if rng.random() < 0.5:
        lines = [f"{name} = Dict()", first]
    else:
        lines = [f"{name} = Dict.empty(key_type={TYPES[key]}, value_type={TYPES[val]})", first]
    if key == "str":
        sc.b.features.add("str")
    sc.add(name, TDictT(key, val))
    return lines


@statement(1.5, "typed")
def mutate_typed(sc):
    """Typed-container methods beyond those of lists and dicts in categories.py."""
    if sc.in_prange:
        return None
    rng = sc.rng
    ls = [n for n in typed_lists(sc) if sc.mutable(n) and sc.vars[n].elt != "str"]
    ds = [n for n in dicts(sc, mutable=True) if isinstance(sc.vars[n], TDictT)]
    forms = []
    for lst in ls:
        t = sc.vars[lst]
        v = stored(t.elt, expr(sc, t.elt, 1))
        forms.append([f"{lst}.extend([{v}, {v}])"])
        forms.append([f"{lst}.extend(List([{v}]))"])
        forms.append([f"{lst}.sort(reverse=True)"])
    for d in ds:
        t = sc.vars[d]
        k, v = dict_key(sc, t.key), stored(t.val, expr(sc, t.val, 1))
        forms.append([f"{d}.setdefault({k}, {v})"])
        forms.append([f"{d}[{k}] = {v}"])
        if t.val == "float":
            forms.append([f"{d}[{k}] = ({d}.get({k}, 0.0) + {expr(sc, 'float', 1)}) % 1000.0"])
    return rng.choice(forms) if forms else None


def const_key(sc, key):
    """A constant key: leaves must not recurse into expr() (it would never end)."""
    return sc.rng.choice(DICT_STR_KEYS) if key == "str" else str(sc.rng.randint(0, 9))


@leaf("int")
def _typed_int(sc):
    rng = sc.rng
    forms = []
    for lst in typed_lists(sc, nonempty=True):
        forms.append(f"{lst}.index({lst}[{rng.choice([0, -1])}])")
    for d in dicts(sc):
        t = sc.vars[d]
        forms.append(f"len({d}.keys())")
        if t.val == "int":
            forms.append(f"{d}.setdefault({const_key(sc, t.key)}, 0)" if sc.mutable(d)
                         else f"len({d})")
        if t.key == "int":
            forms.append(f"sum(list({d}.keys()))")
    return rng.choice(forms) if forms else None


@leaf("float")
def _typed_float(sc):
    ds = [d for d in dicts(sc) if sc.vars[d].val == "float"]
    if not ds:
        return None
    d = sc.rng.choice(ds)
    k = const_key(sc, sc.vars[d].key)
    return sc.rng.choice([f"{d}.get({k}, 0.5)", f"sum(list({d}.values()))",
                          f"({d}[{k}] if {k} in {d} else -1.0)"])


@statement(1, "typed")
def group_by(sc):
    """The grouping idiom: a Dict of Lists filled in a loop, then summarised."""
    ints = lists(sc, "int")
    if sc.in_prange or not ints or sc.depth >= 2 or sc.loops >= 1:
        return None
    rng = sc.rng
    lst = rng.choice(ints)
    g, y, k, v, n = (sc.b.fresh(p) for p in ("g", "y", "k", "v", "n"))
    m = rng.randint(2, 4)
    sc.add(n, "int")
    lines = [f"{g} = Dict()", f"for {y} in {lst}:", f"    {k} = {y} % {m}",
             f"    if {k} in {g}:", f"        {g}[{k}].append({y})", "    else:",
             f"        {g}[{k}] = List([{y}])", f"{n} = 0",
             f"for {k}, {v} in {g}.items():",
             f"    {n} = ({n} + {k} * len({v}) + {rng.choice(['sum', 'max', 'min'])}({v})) % {INT_MOD}"]
    sc.add(g, GroupT("int"))
    return lines


# --- strings ------------------------------------------------------------------------------


@composite("str")
def _str_methods(sc, d):
    if "str" not in sc.b.features:
        return None
    rng = sc.rng
    s = expr(sc, "str", d)
    c = rng.choice(["'a'", "','", "' '", "'-'", "'ab'"])
    forms = [f"{s}.strip({c})", f"{s}.lstrip()", f"{s}.rstrip({c})",
             f"{s}.replace({c}, {rng.choice(STR_CONSTS)})", f"{c}.join({s}.split())",
             f"''.join({s}.split({c}))", f"{s}.center({rng.randint(0, 9)}, '*')",
             f"{s}.ljust({rng.randint(0, 7)})", f"{s}.rjust({rng.randint(0, 7)}, '.')",
             f"{s}.split({c}, 1)[0]", f"{s}.capitalize()", f"{s}.swapcase()"]
    return rng.choice(forms)


@composite("str")
def _fstring(sc, d):
    rng = sc.rng
    n, x = expr(sc, "int", d), expr(sc, "float", d)
    # Simple format specs only (Numba refuses any spec; numba_rs formats them).
    parts = rng.sample([f"{{{n}}}", f"{{{n}:5d}}", f"{{{n}:03d}}", f"{{{x}:.3f}}",
                        f"{{{x}:.2f}}", f"{{{x}:8.2f}}", f"{{{n}:>4}}"], rng.randint(1, 2))
    if "str" in sc.b.features and rng.random() < 0.4:
        parts.append(f"{{{expr(sc, 'str', d)}}}")
    sep = rng.choice(["", "-", ":", " "])
    body = sep.join(parts)
    # Python 3.11: no backslash, nor the f-string's own quotes, inside its braces.
    if '"' in body or "\\" in body:
        return None
    return f'f"{body}"' if "'" in body else f"f'{body}'"


@composite("int")
def _int_of_str_methods(sc, d):
    if "str" not in sc.b.features:
        return None
    s, t = expr(sc, "str", d), expr(sc, "str", d)
    return sc.rng.choice([f"{s}.rfind('a')", f"{s}.find({t})", f"len({s}.split())",
                          f"{s}.count({t})", f"{s}.find(',', {sc.rng.randint(0, 3)})"])


@composite("bool")
def _bool_of_str_methods(sc, d):
    if "str" not in sc.b.features:
        return None
    s, t = expr(sc, "str", d), expr(sc, "str", d)
    return sc.rng.choice([f"{s}.endswith({t})", f"{s}.isdigit()", f"{s}.isspace()",
                          f"{s}.islower()", f"{s}.isupper()", f"{s}.startswith({t})"])


# --- tuples of arrays -----------------------------------------------------------------------


@category("tuplearr", 0.7)
def _tuplearr(b, sc):
    rng = b.rng
    ndim = rng.choice([1, 1, 2])
    dtype = rng.choice(["float64", "float64", "int64", "int32", "uint8"])
    first = array_source(rng, dtype, ndim)
    ta = Arr(dtype, eval(first, {"np": np}).shape, 100)
    if rng.random() < 0.5:  # homogeneous: `for v in u` applies
        n = ta.shape[0] if ndim == 1 else None
        srcs = [first]
        for _ in range(rng.randint(1, 2)):
            for _ in range(20):
                s = array_source(rng, dtype, ndim)
                if eval(s, {"np": np}).shape == ta.shape:
                    srcs.append(s)
                    break
        del n
        # One layout for all (Numba's tuple of C, F and strided arrays is not uniform).
        srcs = [f"np.ascontiguousarray({s})" for s in srcs]
        elts = (ta,) * len(srcs)
    else:
        d2 = rng.choice(["float64", "int64", "bool"])
        second = array_source(rng, d2, rng.choice([1, 2]))
        srcs = [first, second]
        elts = (ta, Arr(d2, eval(second, {"np": np}).shape, 100))
    param(b, sc, "u", TupT(elts), "(" + "".join(s + ", " for s in srcs) + ")")
    b.focus |= {"array", "tuple", "tuplearr"}


def arr_tuples(sc):
    return [n for n, t in sc.vars.items()
            if isinstance(t, TupT) and any(isinstance(e, Arr) for e in t.elts)]


@statement(2, "tuplearr")
def bind_tuple_array(sc):
    """`b = u[k]`: a name for an array in a tuple (a view of the same memory)."""
    ts = arr_tuples(sc)
    if not ts:
        return None
    u = sc.rng.choice(ts)
    ks = [k for k, e in enumerate(sc.vars[u].elts) if isinstance(e, Arr)]
    k = sc.rng.choice(ks)
    name = sc.b.fresh("b")
    sc.add(name, sc.vars[u].elts[k])
    return [f"{name} = {u}[{k - len(sc.vars[u].elts) if sc.rng.random() < 0.3 else k}]"]


@statement(1, "tuplearr")
def make_tuple_array(sc):
    arrs = sc.names(is_arr())
    if len(arrs) < 1 or sc.in_prange:
        return None
    rng = sc.rng
    picked = [rng.choice(arrs) for _ in range(rng.randint(2, 3))]
    name = sc.b.fresh("u")
    elts = [sc.vars[a] for a in picked]
    if rng.random() < 0.5:  # an int alongside
        picked.append(stored("int", expr(sc, "int", 1)))
        elts.append("int")
    sc.add(name, TupT(tuple(elts)))
    return [f"{name} = ({', '.join(picked)})"]


# --- 2-d loops ------------------------------------------------------------------------------


@category("array2d", 0.9)
def _array2d(b, sc):
    for _ in range(b.rng.randint(1, 2)):
        dtype = b.rng.choice(["float64", "float64", "int64", "int32", "uint8", "bool"])
        src = array_source(b.rng, dtype, 2)
        param(b, sc, "a", Arr(dtype, eval(src, {"np": np}).shape, 100), src)
    b.focus |= {"array", "array2d"}


def as_number(a, dtype, idx):
    k = kind(dtype)
    return f"{'float' if k == 'f' else 'int'}({a}[{idx}])"


@statement(2, "array2d")
def loop_2d(sc):
    """Nested loops over a 2-d array's shape: an accumulation or an output array."""
    arrs = sc.names(is_arr(lambda t: len(t.shape) == 2 and kind(t.dtype) != "c"))
    if not arrs or sc.depth >= 2 or sc.loops >= 1 or sc.in_prange:
        return None
    rng = sc.rng
    a = rng.choice(arrs)
    t = sc.vars[a]
    i, j = sc.b.fresh("i"), sc.b.fresh("j")
    lines = []
    r = rng.randint(0, 2)
    if r == 0:
        rows, cols = sc.b.fresh("r"), sc.b.fresh("c")
        lines.append(f"{rows}, {cols} = {a}.shape")
        # Read-only: the inner loop indexes up to `cols`, so reassigning it would index
        # out of bounds (undefined behaviour in Numba, which does not bounds-check).
        sc.add(rows, "int", readonly=True)
        sc.add(cols, "int", readonly=True)
    elif r == 1:
        rows, cols = f"{a}.shape[0]", f"{a}.shape[1]"
    else:
        rows, cols = f"getattr({a}, 'shape')[0]", f"len({a}[0])"
    c = sc.child("for")
    c.add(i, "int", readonly=True)
    c2 = c.child("for")
    c2.add(j, "int", readonly=True)
    x = as_number(a, t.dtype, f"{i}, {j}")
    inner = block(c2, rng.randint(0, 2)) if rng.random() < 0.5 else []
    if rng.random() < 0.5:
        acc = sc.b.fresh("x")
        lines.append(f"{acc} = 0.0")
        inner.append(f"{acc} = ({acc} + {x} * ({i} - {j} + {expr(c2, 'float', 1)})) % 1000.0")
        sc.add(acc, "float")
    else:
        out = sc.b.fresh("b")
        transpose = rng.random() < 0.5
        lines.append(f"{out} = np.zeros(({cols}, {rows}))" if transpose
                     else f"{out} = np.zeros_like({a}, dtype=np.float64)")
        tgt = f"{out}[{j}, {i}]" if transpose else f"{out}[{i}, {j}]"
        inner.append(f"{tgt} = round(({x} + {expr(c2, 'float', 1)}) % 50.0 * 4) / 4")
        sc.add(out, Arr("float64", t.shape[::-1] if transpose else t.shape, 100))
    lines += [f"for {i} in range({rows}):", f"    for {j} in range({cols}):"]
    return lines + indent(indent(inner))


# --- NumPy functions that change shape or dtype ---------------------------------------------


@statement(2.5, "array")
def reshape_array(sc):
    """A new array by a NumPy function: its dtype and shape are NumPy's (via _dtype_of)."""
    arrs = sc.names(is_arr())
    if not arrs or sc.in_prange:
        return None
    rng = sc.rng
    a = rng.choice(arrs)
    t = sc.vars[a]
    k = kind(t.dtype)
    n = int(np.prod(t.shape))
    forms = [(f"{a}.ravel()", t.bound), (f"{a}.flatten()", t.bound),
             (f"{a}.T.copy()", t.bound), (f"np.transpose({a}).copy()", t.bound),
             (f"{a}.copy().reshape({n})", t.bound), (f"np.ascontiguousarray({a}).reshape(-1)", t.bound),
             (f"np.linspace({float_const(rng)}, {float_const(rng)}, {rng.randint(2, 8)})", 10.0)]
    if len(t.shape) == 2:
        forms.append((f"{a}.copy().reshape(({t.shape[1]}, {t.shape[0]}))", t.bound))
    else:
        forms += [(f"{a}.copy().reshape(({n}, 1))", t.bound), (f"{a}.copy().reshape((1, -1))", t.bound)]
    if k in "iub":
        forms += [(f"{a}.astype(np.float64)", t.bound), (f"{a}.astype(np.int64)", t.bound)]
        if t.bound < 2 ** 20:
            forms.append((f"{a}.astype(np.float32)", t.bound))
    if k == "f":
        forms += [(f"{a}.astype(np.int64)", t.bound)]
        if t.bound < 2 ** 30:
            forms.append((f"{a}.astype(np.int32)", t.bound))
    if k in "iuf" and t.dtype != "float32" and len(t.shape) == 1:
        forms += [(f"np.argsort({a}, kind='mergesort')", n), (f"np.sort({a})[::-1]", t.bound),
                  (f"np.cumsum({a})", t.bound * n)]
    if k in "iuf" and t.dtype != "float32":
        kk = rng.randint(-5, 9)
        other = f"{rng.randint(-9, 9)}" if rng.random() < 0.5 else float_const(rng)
        forms.append((f"np.where({a} > {kk}, {a}, {other})", max(t.bound, 10)))
    same = [b for b in sc.names(is_arr(lambda u: u.dtype == t.dtype and len(u.shape) == len(t.shape)
                                       and u.shape[1:] == t.shape[1:]))]
    if same:
        b = rng.choice(same)
        forms.append((f"np.concatenate(({a}, {b}))", max(t.bound, sc.vars[b].bound)))
    if t.dtype == "float64" and len(t.shape) == 2:
        mats = sc.names(is_arr(lambda u: u.dtype == "float64" and len(u.shape) == 2
                               and u.shape[0] == t.shape[1]))
        if mats:
            b = rng.choice(mats)
            op = rng.choice([f"np.dot({a}, {b})", f"({a} @ {b})"])
            forms.append((op, t.bound * sc.vars[b].bound * t.shape[1]))
    bools = sc.names(is_arr(lambda u: u.dtype == "bool" and u.shape == t.shape))
    if bools and k in "iuf" and t.dtype != "float32":
        forms.append((f"np.where({rng.choice(bools)}, {a}, {rng.randint(0, 9)})", max(t.bound, 9)))
    text, bound = rng.choice(forms)
    got = _dtype_of(text, sc)
    if got is None or 0 in got[1] or bound > 10 ** 6:
        return None
    dtype, shape = got
    if kind(dtype) in "iu" and bound > np.iinfo(dtype).max:
        return None
    name = sc.b.fresh("b")
    sc.add(name, Arr(dtype, shape, max(bound, 100)))
    return [f"{name} = {text}"]


# --- boolean masks -------------------------------------------------------------------------


def mask(sc, a):
    """A boolean mask over array `a`: a comparison or a bool array of the same shape."""
    t = sc.vars[a]
    bools = sc.names(is_arr(lambda u: u.dtype == "bool" and u.shape == t.shape))
    if bools and sc.rng.random() < 0.4:
        return sc.rng.choice(bools)
    return f"({a} {sc.rng.choice(['>', '<=', '!='])} {sc.rng.randint(0, 9)})"


def masked(kinds):
    # 1-d only: Numba refuses a mask over a 2-d array, which leaves the whole program
    # without an oracle for its other, Numba-compatible, differences from NumPy.
    return lambda t: kind(t.dtype) in kinds and t.dtype != "float32" and len(t.shape) == 1


@leaf("int")
def _masked_int(sc):
    a = sc.pick(is_arr(masked("iu")))
    if a is None:
        return None
    m = mask(sc, a)
    return sc.rng.choice([f"int({a}[{m}].sum())", f"len({a}[{m}])", f"{a}[{m}].size"])


@leaf("float")
def _masked_float(sc):
    a = sc.pick(is_arr(masked("f")))
    if a is None:
        return None
    m = mask(sc, a)
    return sc.rng.choice([f"float({a}[{m}].sum())", f"float(np.sum({a}[{m}] * 2.0))"])


@statement(1.5, "array")
def store_masked(sc):
    a = sc.pick(is_arr(masked("iuf")))
    if a is None or sc.in_prange:
        return None
    t = sc.vars[a]
    m = mask(sc, a)
    same = sc.names(is_arr(lambda u: u.dtype == t.dtype and u.shape == t.shape and u.bound <= 100))
    if same and sc.rng.random() < 0.4:
        return [f"{a}[{m}] = {sc.rng.choice(same)}[{m}]"]
    return [f"{a}[{m}] = {element_value(sc, t.dtype)}"]


# --- control flow: while/for with else --------------------------------------------------------


@statement(1)
def loop_else(sc):
    if sc.depth >= 3 or sc.loops >= 2 or sc.in_prange:
        return None
    rng = sc.rng
    c = sc.child("for")
    if rng.random() < 0.5:
        w = sc.b.fresh("w")
        c.add(w, "int", readonly=True)
        head = [f"{w} = 0", f"while {w} < {rng.randint(0, 7)}:", f"    {w} += 1"]
        c.loop = "while"
    else:
        w = sc.b.fresh("i")
        c.add(w, "int", readonly=True)
        head = [f"for {w} in range({rng.randint(0, 7)}):"]
    body = block(c, rng.randint(1, 2))
    if rng.random() < 0.6:
        body += [f"if {expr(c, 'bool', 1)}:", "    break"]
    return head + indent(body) + ["else:"] + indent(block(sc.child(), rng.randint(1, 2)))


# --- inner functions returning tuples ---------------------------------------------------------


@statement(1.2)
def inner_tuple_function(sc):
    if sc.depth > 0 or sc.in_prange:
        return None
    rng = sc.rng
    name = sc.b.fresh("inner")
    c = sc.child()
    c.depth = 1
    c.vars = {n: t for n, t in sc.vars.items() if n in sc.readonly and t in ("int", "float")}
    c.readonly = set(c.vars)
    c.add("arg", "int", readonly=True)
    rets = tuple(rng.choice(["int", "float", "bool"]) for _ in range(rng.randint(2, 3)))
    body = block(c, rng.randint(0, 2))
    body.append("return " + ", ".join(stored(t, expr(c, t, 1)) for t in rets))
    lines = [f"def {name}(arg):"] + indent(body)
    call = f"{name}({expr(sc, 'int', 1)})"
    if rng.random() < 0.5:
        names = [sc.b.fresh({"int": "n", "float": "x", "bool": "c"}[t]) for t in rets]
        lines.append(f"{', '.join(names)} = {call}")
        for n, t in zip(names, rets):
            sc.add(n, t)
    else:
        u = sc.b.fresh("u")
        lines.append(f"{u} = {call}")
        sc.add(u, TupT(rets))
    sc.add(name, FnT(("int",), "tuple"), readonly=True)
    return lines


# --- enumerate / zip ---------------------------------------------------------------------------


def iterables(sc):
    """(source, element type) of things a loop may zip over, without changing them."""
    out = [(n, sc.vars[n].elt) for n in lists(sc) if sc.vars[n].elt in ("int", "float")]
    out += [(a, "np") for a in sc.names(is_arr(lambda t: len(t.shape) == 1 and kind(t.dtype) in "iuf"))]
    out.append((f"range({sc.rng.randint(0, 6)})", "int"))
    return out


@statement(1.2)
def zip_loop(sc):
    if sc.depth >= 3 or sc.loops >= 2:
        return None
    rng = sc.rng
    its = iterables(sc)
    (s1, t1), (s2, t2) = rng.choice(its), rng.choice(its)
    x, y = sc.b.fresh("y"), sc.b.fresh("y")
    c = sc.child("for")
    for s in (s1, s2):
        if s in sc.vars:
            c.frozen.add(s)
    c.add(x, t1 if t1 != "np" else "float", readonly=True)
    c.add(y, t2 if t2 != "np" else "float", readonly=True)
    if t1 == "np":
        c.vars[x] = "float" if kind(sc.vars[s1].dtype) == "f" else "int"
    if t2 == "np":
        c.vars[y] = "float" if kind(sc.vars[s2].dtype) == "f" else "int"
    if rng.random() < 0.5:
        i = sc.b.fresh("j")
        c.add(i, "int", readonly=True)
        head = f"for {i}, ({x}, {y}) in enumerate(zip({s1}, {s2})):"
    else:
        head = f"for {x}, {y} in zip({s1}, {s2}):"
    # Array elements are NumPy scalars: read them through int()/float() first.
    pre = []
    for v, s, t in ((x, s1, t1), (y, s2, t2)):
        if t == "np":
            conv = sc.b.fresh("x" if c.vars[v] == "float" else "n")
            pre.append(f"{conv} = {c.vars[v]}({v})")
            c.add(conv, c.vars[v])
            del c.vars[v]
    return [head] + indent(pre + block(c, rng.randint(1, 3)))


# --- scalar builtins ---------------------------------------------------------------------------


@composite("int")
def _int_builtins(sc, d):
    rng = sc.rng
    a, b = expr(sc, "int", d), expr(sc, "int", d)
    x = expr(sc, "float", d)
    arr = sc.pick(is_arr())
    forms = [f"min({a}, {b}, {expr(sc, 'int', d)})", f"max({a}, {b}, {expr(sc, 'int', d)})",
             f"({a} // -({b} % 97 + 1))", f"({a} % -({b} % 97 + 1))",
             f"(-({a}) // ({b} % 13 + 1))", f"divmod({a}, -({b} % 9 + 1))[{rng.randint(0, 1)}]",
             f"({a} and {b})", f"({a} or {b})", f"abs(-({a}))",
             f"math.ceil(({x}) % 1000.0)", f"math.floor(-(({x}) % 1000.0))",
             f"math.trunc(({x}) % 1000.0 - 500.0)"]
    if arr:
        t = sc.vars[arr]
        forms += [f"getattr({arr}, 'shape')[{rng.randrange(len(t.shape))}]",
                  f"getattr({arr}, 'size')", f"getattr({arr}, 'ndim')"]
    return rng.choice(forms)


@composite("float")
def _float_builtins(sc, d):
    rng = sc.rng
    x, y = expr(sc, "float", d), expr(sc, "float", d)
    return rng.choice([f"min({x}, {y}, {expr(sc, 'float', d)})",
                       f"max({x}, {y}, {expr(sc, 'float', d)})",
                       f"round({x}, {rng.choice([1, 2, 2, 3, 0, -1])})",
                       f"({x} // -{rng.choice(['0.75', '2.5', '1.0'])})",
                       f"({x} % -{rng.choice(['0.75', '2.5', '1.0'])})",
                       f"divmod({x}, {rng.choice(['0.75', '-2.5', '-1.0'])})[{rng.randint(0, 1)}]"])


@composite("bool")
def _bool_builtins(sc, d):
    rng = sc.rng
    n, x = expr(sc, "int", d), expr(sc, "float", d)
    forms = [f"(not {n})", f"bool({n})", f"math.isnan({x})", f"math.isinf({x})",
             f"math.isinf(({x}) * 1e308)", f"math.isnan(({x}) * 1e308 - ({x}) * 1e308)",
             f"math.isfinite({x})"]
    arr = sc.pick(is_arr())
    if arr:
        forms += [f"hasattr({arr}, 'shape')", f"hasattr({arr}, 'nope')"]
    v = sc.pick(lambda t: t in ("int", "float"))
    if v:
        forms += [f"hasattr({v}, 'shape')", f"hasattr({v}, 'real')"]
    return rng.choice(forms)


@statement(1)
def divmod_stmt(sc):
    rng = sc.rng
    q, r = sc.b.fresh("n"), sc.b.fresh("n")
    if rng.random() < 0.7:
        sc_div = f"{rng.choice(['', '-'])}({expr(sc, 'int', 1)} % {rng.randint(2, 13)} + 1)"
        line = f"{q}, {r} = divmod({stored('int', expr(sc, 'int'))}, {sc_div})"
        sc.add(q, "int")
        sc.add(r, "int")
        return [line]
    q, r = sc.b.fresh("x"), sc.b.fresh("x")
    line = f"{q}, {r} = divmod({expr(sc, 'float')}, {rng.choice(['-0.75', '2.5', '-1.0', '0.5'])})"
    sc.add(q, "float")
    sc.add(r, "float")
    return [line]


# --- containers typed by a later append ----------------------------------------------------


@statement(1.2, "list")
def fill_empty(sc):
    """An empty list or dict typed only by stores in a loop (Numba types it from them)."""
    if sc.in_prange or sc.depth >= 2 or sc.loops >= 1:
        return None
    rng = sc.rng
    i = sc.b.fresh("i")
    c = sc.child("for")
    c.add(i, "int", readonly=True)
    elt = rng.choice(["int", "float"])
    v = stored(elt, expr(c, elt, 1))
    cond = expr(c, "bool", 1)
    if rng.random() < 0.6:
        name = sc.b.fresh("m")
        make = rng.choice(["[]", "List()"] if "typed" in sc.b.focus else ["[]"])
        store = rng.choice([f"{name}.append({v})", f"{name}.insert(0, {v})"])
        sc.add(name, (TListT if make == "List()" else ListT)(elt, nonempty=False))
    else:
        name = sc.b.fresh("d")
        make = rng.choice(["{}", "Dict()"] if "typed" in sc.b.focus else ["{}"])
        store = f"{name}[{i} % {rng.randint(2, 5)}] = {v}"
        sc.add(name, (TDictT if make == "Dict()" else DictT)("int", elt))
    body = [store] if rng.random() < 0.5 else [f"if {cond}:", f"    {store}"]
    return [f"{name} = {make}", f"for {i} in range({rng.randint(1, 6)}):"] + indent(body)
