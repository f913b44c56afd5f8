"""Random, well-typed Python functions over the language numba_rs compiles.

A program is the source of a function `f` (plus top-level helpers it calls) and the
source of its argument tuple. It is valid by construction: every expression is built for
a type from variables of known type, and every value is kept inside ranges where CPython
and Numba agree by design:

- Python ints stay far from int64 overflow: stored ints are reduced `% INT_MOD`,
  products are reduced `% 10007`, divisors are made non-zero;
- stored floats are reduced `% FLOAT_MOD` so that no chain of products reaches inf;
- stored complex numbers are normalised to modulus below 1, strings cut to 40 chars;
- NumPy scalars are read through `int()`/`float()` (NumPy's narrow types wrap where
  Numba's promote to int64), array bounds are tracked so narrow dtypes never overflow.

The generator is a registry: `LEAVES[type]` and `COMPOSITES[type]` build expressions,
`STATEMENTS` build statements, `CATEGORIES` set up a program's parameters and say which
statements it favours. `categories.py` registers everything beyond scalars and control
flow; a new feature is a new function there.
"""

import random
from dataclasses import dataclass

INT_MOD = 1000003
FLOAT_MOD = 1000.0
MAX_LINES = 40
MIN_LINES = 5


@dataclass
class Program:
    """One generated test case; `args` is the source of a tuple of argument values."""

    seed: int
    index: int
    category: str
    source: str
    args: str
    parallel: bool = False
    generator: bool = False  # f returns a generator: results are compared as lists

    @property
    def name(self):
        return f"{self.seed}:{self.index}"

    def to_json(self):
        return dict(self.__dict__)


# --- types -------------------------------------------------------------------------
# Scalars are the strings 'int', 'float', 'bool', 'complex', 'str'; the rest are below.


@dataclass(frozen=True)
class ListT:
    elt: str
    nonempty: bool = True


@dataclass(frozen=True)
class SetT:
    elt: str


@dataclass(frozen=True)
class DictT:
    key: str
    val: str


@dataclass(frozen=True)
class TupT:
    elts: tuple


@dataclass(frozen=True)
class NpScalar:
    """A NumPy scalar (argument or array element): only read through int()/float()."""

    dtype: str


@dataclass(frozen=True)
class FnT:
    """An inner function, lambda or helper taking `args` and returning `ret`."""

    args: tuple
    ret: str


@dataclass(frozen=True)
class Arr:
    """An array of a known dtype and shape; `bound` bounds |element| (numeric dtypes)."""

    dtype: str
    shape: tuple
    bound: float = 100


INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


# --- scope and program under construction --------------------------------------------


class Builder:
    """State shared by every scope of one program: names, parameters, helpers, flags."""

    def __init__(self, rng, category):
        self.rng = rng
        self.category = category
        self.counter = 0
        self.params = []  # (name, arg source)
        self.helpers = []  # source blocks placed before f
        self.parallel = False
        self.generator = False
        self.features = {"int", "float", "bool"}  # scalar types new variables may take
        self.focus = set()  # statement tags this category favours

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"


class Scope:
    """The variables visible at one point of the body, and what may be done there."""

    def __init__(self, b):
        self.b = b
        self.rng = b.rng
        self.vars = {}
        self.readonly = set()  # parameters, loop variables, captured names
        self.frozen = set()  # containers being iterated: no size change
        self.loop = None  # None, 'for' or 'while': where break/continue may go
        self.depth = 0  # statement nesting
        self.loops = 0  # loop nesting
        self.in_prange = False  # only private assignments and reductions allowed
        self.reductions = {}  # prange reduction variables: name -> type

    def child(self, loop=None):
        c = Scope.__new__(Scope)
        c.__dict__.update(self.__dict__)
        c.vars = dict(self.vars)
        c.readonly = set(self.readonly)
        c.frozen = set(self.frozen)
        c.depth = self.depth + 1
        if loop:
            c.loop = loop
            c.loops = self.loops + 1
        return c

    def add(self, name, ty, readonly=False):
        self.vars[name] = ty
        if readonly:
            self.readonly.add(name)

    def names(self, pred, writable=False):
        return [n for n, t in self.vars.items()
                if pred(t) and not (writable and n in self.readonly)]

    def pick(self, pred, writable=False):
        names = self.names(pred, writable)
        return self.rng.choice(names) if names else None

    def mutable(self, name):
        """May the container `name` change size here?"""
        return name not in self.frozen and not (self.in_prange and name in self.readonly)


def is_(ty):
    return lambda t: t == ty


# --- registries ---------------------------------------------------------------------

LEAVES = {t: [] for t in ("int", "float", "bool", "complex", "str")}
COMPOSITES = {t: [] for t in LEAVES}
STATEMENTS = []  # (weight, tag, fn)
CATEGORIES = {}  # name -> (weight, setup)


def leaf(ty):
    """Register fn(scope) -> expression of type `ty` or None (not applicable here)."""
    def deco(fn):
        LEAVES[ty].append(fn)
        return fn
    return deco


def composite(ty):
    """Register fn(scope, depth) -> expression of type `ty` built from sub-expressions."""
    def deco(fn):
        COMPOSITES[ty].append(fn)
        return fn
    return deco


def statement(weight, tag="core"):
    """Register fn(scope) -> list of source lines, or None when not applicable."""
    def deco(fn):
        STATEMENTS.append((weight, tag, fn))
        return fn
    return deco


def category(name, weight=1.0):
    """Register setup(builder, scope): adds parameters, helpers and focus tags."""
    def deco(fn):
        CATEGORIES[name] = (weight, fn)
        return fn
    return deco


# --- expressions ----------------------------------------------------------------------


def expr(sc, ty, depth=2):
    """An expression of scalar type `ty` over the variables in scope."""
    if depth > 0 and sc.rng.random() < 0.55:
        rules = COMPOSITES[ty]
        for _ in range(4):
            e = sc.rng.choice(rules)(sc, depth - 1)
            if e is not None:
                return e
    return leaf_expr(sc, ty)


def leaf_expr(sc, ty):
    fns = LEAVES[ty][:]
    sc.rng.shuffle(fns)
    # Variables first half the time, so that programs use what they compute.
    names = sc.names(is_(ty))
    if names and sc.rng.random() < 0.5:
        return sc.rng.choice(names)
    for fn in fns:
        e = fn(sc)
        if e is not None:
            return e
    raise AssertionError(f"no leaf for {ty}")


def stored(ty, e):
    """`e` reduced so that a stored value stays in the ranges the module docstring names."""
    if e.isidentifier() or _is_number(e):
        return e
    if ty == "int":
        return f"({e}) % {INT_MOD}"
    if ty == "float":
        return f"({e}) % {FLOAT_MOD}"
    if ty == "complex":
        return f"({e}) / (1.0 + abs({e}))"
    if ty == "str":
        return f"({e})[:40]"
    return e


def _is_number(e):
    try:
        float(e)
        return True
    except ValueError:
        return False


def small_int(rng):
    return rng.choice([rng.randint(-9, 20), rng.randint(0, 5), rng.randint(-1000, 1000)])


def float_const(rng):
    return repr(rng.randint(-80, 80) / 8)


STR_CONSTS = ("'a'", "'b'", "'ab,c'", "'xyz'", "''", "'a,b,a'", "'Hello'", "' q '", "'42'")


@leaf("int")
def _int_const(sc):
    return str(small_int(sc.rng))


@leaf("float")
def _float_const(sc):
    return float_const(sc.rng)


@leaf("float")
def _float_of_int(sc):
    v = sc.pick(is_("int"))
    return f"float({v})" if v else None


@leaf("bool")
def _bool_const(sc):
    return sc.rng.choice(["True", "False"])


@leaf("complex")
def _complex_const(sc):
    return f"complex({float_const(sc.rng)}, {float_const(sc.rng)})"


@leaf("str")
def _str_const(sc):
    return sc.rng.choice(STR_CONSTS)


def _binop(ty, fmt, *tys):
    """Register a composite rule: `fmt` filled with sub-expressions of types `tys`."""
    @composite(ty)
    def rule(sc, d):
        return fmt.format(*(expr(sc, t, d) for t in tys), k=sc.rng.randint(0, 4))
    return rule


for _fmt in ("({} + {})", "({} - {})", "(({} * {}) % 10007)", "({} // ({} % 97 + 1))",
             "({} % ({} % 97 + 1))", "min({}, {})", "max({}, {})", "({} & {})", "({} | {})",
             "({} ^ {})"):
    _binop("int", _fmt, "int", "int")
for _fmt in ("abs({})", "(-{})", "({} >> {k})", "({} << {k})", "((({}) ** 2) % 10007)",
             "len(str({}))"):
    _binop("int", _fmt, "int")
for _fmt in ("int(({}) % 1000.0)", "round(({}) % 1000.0)", "math.floor(({}) % 1000.0)"):
    _binop("int", _fmt, "float")
_binop("int", "int({})", "bool")
_binop("int", "({} if {} else {})", "int", "bool", "int")

for _fmt in ("({} + {})", "({} - {})", "({} * {})", "({} / (abs({}) + 1.0))", "min({}, {})",
             "max({}, {})", "math.atan2({}, {})", "math.hypot({}, {})"):
    _binop("float", _fmt, "float", "float")
for _fmt in ("abs({})", "(-{})", "math.sin({})", "math.cos({})", "math.sqrt(abs({}))",
             "math.exp(math.sin({}))", "math.log(abs({}) + 1.0)", "({}) ** 2", "({} % 7.5)",
             "math.tanh({})"):
    _binop("float", _fmt, "float")
for _fmt in ("({} + {})", "({} * {})"):
    _binop("float", _fmt, "float", "int")
_binop("float", "({} if {} else {})", "float", "bool", "float")

for _fmt in ("({} < {})", "({} == {})", "({} >= {})", "({} % 2 == 0)"):
    _binop("bool", _fmt, *("int", "int")[:_fmt.count("{}")])
for _fmt in ("({} < {})", "({} > {})"):
    _binop("bool", _fmt, "float", "float")
for _fmt in ("({} and {})", "({} or {})", "({} != {})"):
    _binop("bool", _fmt, "bool", "bool")
_binop("bool", "(not {})", "bool")


@composite("complex")
def _complex_rule(sc, d):
    z, w = expr(sc, "complex", d), expr(sc, "complex", d)
    return sc.rng.choice([f"({z} + {w})", f"({z} - {w})", f"({z} * {w})",
                          f"({z} / (abs({w}) + 1.0))", f"(-{z})", f"{z}.conjugate()",
                          f"cmath.sqrt({z})",
                          f"({z} * {expr(sc, 'float', d)})",
                          f"complex({expr(sc, 'float', d)}, {expr(sc, 'float', d)})"])


@composite("float")
def _float_of_complex(sc, d):
    if "complex" not in sc.b.features:
        return None
    z = expr(sc, "complex", d)
    return sc.rng.choice([f"abs({z})", f"{z}.real", f"{z}.imag"])


# --- statements -------------------------------------------------------------------------


def block(sc, n):
    """`n` statements (at least one line) for the scope `sc`."""
    lines = []
    for _ in range(n):
        lines += one_statement(sc)
    return lines or ["pass"]


def one_statement(sc):
    weighted = [(w * (4 if tag in sc.b.focus else 1), fn) for w, tag, fn in STATEMENTS]
    total = sum(w for w, _ in weighted)
    for _ in range(20):
        r = sc.rng.random() * total
        for w, fn in weighted:
            r -= w
            if r <= 0:
                break
        lines = fn(sc)
        if lines:
            return lines
    return []


def indent(lines):
    return ["    " + line for line in lines]


def sub_block(sc):
    """A nested block in a child scope (its new variables do not outlive it)."""
    c = sc.child()
    return indent(block(c, sc.rng.randint(1, 3)))


def scalar_type(sc):
    return sc.rng.choice([t for t in ("int", "int", "float", "bool", "str", "complex")
                          if t in sc.b.features])


@statement(6)
def assign_new(sc):
    ty = scalar_type(sc)
    name = sc.b.fresh({"int": "n", "float": "x", "bool": "c", "str": "s",
                       "complex": "z"}[ty])
    e = stored(ty, expr(sc, ty))
    sc.add(name, ty)
    return [f"{name} = {e}"]


@statement(4)
def update(sc):
    if sc.in_prange:
        return None
    ty = scalar_type(sc)
    v = sc.pick(is_(ty), writable=True)
    if v is None:
        return None
    rng = sc.rng
    if ty == "int" and rng.random() < 0.3:
        return [f"{v} {rng.choice(['+=', '-='])} {rng.randint(1, 9)}"]
    op = {"int": ["+", "-", "*", "^"], "float": ["+", "-", "*"], "bool": ["and", "or"],
          "str": ["+"], "complex": ["+", "*"]}[ty]
    if ty == "int" and rng.random() < 0.3:
        return [f"{v} = ({v} * {expr(sc, ty)}) % 10007"]
    return [f"{v} = {stored(ty, f'{v} {rng.choice(op)} {expr(sc, ty)}')}"]


@statement(3)
def if_stmt(sc):
    if sc.depth >= 3:
        return None
    lines = [f"if {expr(sc, 'bool')}:"] + sub_block(sc)
    for _ in range(sc.rng.choice([0, 0, 1, 2])):
        lines += [f"elif {expr(sc, 'bool')}:"] + sub_block(sc)
    if sc.rng.random() < 0.5:
        lines += ["else:"] + sub_block(sc)
    return lines


def range_args(sc):
    """Arguments of a short `range` (at most about 12 iterations)."""
    rng = sc.rng
    n = rng.randint(0, 10)
    arr = sc.pick(lambda t: isinstance(t, Arr))
    return rng.choice([
        f"{n}", f"{rng.randint(-3, 3)}, {n}", f"{n}, {rng.randint(-3, 2)}, -{rng.randint(1, 3)}",
        f"{rng.randint(0, 2)}, {n + 3}, {rng.randint(2, 3)}",
        f"{expr(sc, 'int', 1)} % 7",
        f"{arr}.shape[{rng.randrange(len(sc.vars[arr].shape))}]" if arr else f"{n}",
    ])


@statement(3)
def for_range(sc):
    if sc.depth >= 3 or sc.loops >= 2:
        return None
    i = sc.b.fresh("i")
    c = sc.child("for")
    c.add(i, "int", readonly=True)
    return [f"for {i} in range({range_args(sc)}):"] + indent(block(c, sc.rng.randint(1, 4)))


@statement(1.5)
def while_loop(sc):
    if sc.depth >= 3 or sc.loops >= 2 or sc.in_prange:
        return None
    w = sc.b.fresh("w")
    c = sc.child("while")
    c.add(w, "int", readonly=True)
    cond = f"{w} < {sc.rng.randint(1, 9)}"
    if sc.rng.random() < 0.4:
        cond += f" and {expr(sc, 'bool', 1)}"
    return [f"{w} = 0", f"while {cond}:", f"    {w} += 1"] + indent(block(c, sc.rng.randint(1, 3)))


@statement(1.5)
def break_continue(sc):
    if sc.loop is None or sc.in_prange:
        return None
    return [f"if {expr(sc, 'bool', 1)}:", f"    {sc.rng.choice(['break', 'continue'])}"]


# --- programs -------------------------------------------------------------------------------


def return_stmt(sc):
    """`return` of one to four values: variables computed in the body, or expressions."""
    rng = sc.rng
    names = [n for n, t in sc.vars.items() if not isinstance(t, (FnT, NpScalar))]
    body_names = [n for n in names if n not in sc.readonly]
    vals = []
    for _ in range(rng.randint(1, 4)):
        pool = body_names if body_names and rng.random() < 0.7 else names
        if pool and rng.random() < 0.8:
            vals.append(rng.choice(pool))
        else:
            vals.append(expr(sc, rng.choice(sorted(sc.b.features))))
    vals = list(dict.fromkeys(vals))
    return [f"return {vals[0]}" if len(vals) == 1 else f"return {', '.join(vals)}"]


def int_param(b, sc):
    name = b.fresh("p")
    b.params.append((name, str(b.rng.choice([small_int(b.rng), b.rng.randint(-99, 99)]))))
    sc.add(name, "int", readonly=True)


def generate(seed, index):
    """Program `index` of the run with seed `seed` (the same pair gives the same program)."""
    rng = random.Random(f"{seed}:{index}")
    names = sorted(CATEGORIES)
    weights = [CATEGORIES[n][0] for n in names]
    cat = rng.choices(names, weights)[0]
    for _ in range(50):
        prog = _attempt(rng, seed, index, cat)
        n = prog.source.count("\n")
        if MIN_LINES <= n <= MAX_LINES:
            return prog
    return prog


def _attempt(rng, seed, index, cat):
    b = Builder(rng, cat)
    sc = Scope(b)
    for _ in range(rng.randint(1, 2)):
        int_param(b, sc)
    tail = CATEGORIES[cat][1](b, sc)  # None, or makes the last lines in place of `return`
    body = block(sc, rng.randint(3, 8))
    body += tail() if tail else return_stmt(sc)
    params = ", ".join(n for n, _ in b.params)
    args = "(" + "".join(f"{a}, " for _, a in b.params) + ")"
    src = "".join(h + "\n\n" for h in b.helpers)
    src += f"def f({params}):\n" + "\n".join(indent(body)) + "\n"
    return Program(seed, index, cat, src, args, b.parallel, b.generator)


import categories  # noqa: E402,F401  (registers everything beyond scalars and control flow)
import extra  # noqa: E402,F401  (typed containers, string methods, shapes, masks, builtins)
