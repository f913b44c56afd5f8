"""Object mode (`@jit(forceobj=True)`): the same functions run by CPython and compiled in
object mode give the same values, exceptions and side effects, and leave the reference
counts of the objects they touch unchanged."""

import math
import sys
import warnings

import pytest

from numba_rs import jit, njit
from numba_rs.errors import NumbaDeprecationWarning, NumbaWarning, TypingError


class Box:
    def __init__(self, v):
        self.v = v

    def __repr__(self):
        return f"Box({self.v!r})"

    def __eq__(self, other):
        return isinstance(other, Box) and other.v == self.v


def outcome(f, *args):
    """What calling `f` gives: ('ok', value) or ('raise', class, args)."""
    try:
        return ("ok", f(*args))
    except Exception as e:  # noqa: BLE001 - the oracle is whatever CPython raises
        return ("raise", type(e), e.args)


def check_same(pyfunc, *argsets):
    """Run `pyfunc` in CPython and in object mode on each argument tuple."""
    cf = jit(forceobj=True)(pyfunc)
    for args in argsets:
        assert outcome(cf, *args) == outcome(pyfunc, *args), args
    return cf


def arith(a, b):
    s = a + b
    d = a - b
    p = a * b
    q = a / b if b else None
    f = a // b if b else None
    m = a % b if b else None
    w = a**2
    return s, d, p, q, f, m, w, -a, +b, a < b, a <= b, a == b, a != b, a > b, a >= b


def test_arithmetic_and_comparisons():
    check_same(arith, (1, 2), (7, -3), (2.5, 0.5), (3, 0), ("x", "y"), (1, "s"), ([1], [2]))


def bits(a, b):
    return a & b, a | b, a ^ b, a << 2, a >> 1, ~a


def test_bitwise():
    check_same(bits, (12, 10), (-5, 3), (1.0, 2))


def inplace(x, y):
    x += y
    x *= 2
    x -= y
    return x


def test_inplace_ops_mutate_like_python():
    check_same(inplace, (1, 2), (1.5, 2), ("a", "b"))
    def extend(x, y):
        x += y
        x *= 2
        return x

    cf = jit(forceobj=True)(extend)
    lst = [1]
    out = cf(lst, [2])
    # `x += y` on a list extends it in place, as in CPython.
    assert out is lst and lst == [1, 2, 1, 2]


def logic(a, b, c):
    r = []
    if a and not b:
        r.append("a")
    elif b or c:
        r.append("bc")
    else:
        r.append("none")
    r.append(a is b)
    r.append(a is not None)
    r.append(c in (1, 2, 3))
    r.append(c not in [4, 5])
    r.append(1 < c < 3)
    return r


def test_branches_identity_membership():
    check_same(logic, (1, 0, 2), (0, 0, 0), (None, None, 5), ("", [1], 4))


def loops(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        total += i
        if total > 50:
            break
    else:
        total = -total
    k = 0
    while k < n:
        k += 2
    out = []
    for j, ch in enumerate("abc"):
        out.append((j, ch))
    for x, y in zip([1, 2], [3, 4]):
        out.append(x * y)
    return total, k, out


def test_loops():
    check_same(loops, (0,), (5,), (20,), (3,))


def containers(n):
    t = (n, n + 1)
    lst = [n, "x", t]
    st = {n, n, 2}
    d = {"a": n, "b": lst}
    d["c"] = len(lst)
    lst[1] = "y"
    del d["a"]
    sq = [i * i for i in range(n)]
    ev = {i: i % 2 == 0 for i in range(n)}
    return t, lst, sorted(st), d, sq, ev, t[0], lst[-1], lst[0:2]


def test_containers_and_comprehensions():
    check_same(containers, (0,), (3,))


def only_comprehensions(n):
    return [i * n for i in range(3)], {k: k + 1 for k in range(n)}


def test_comprehension_loops_are_not_lifted():
    # Numba lifts loops before it inlines closures: a comprehension stays a function of
    # its own, so nothing falls back and nothing warns.
    import warnings

    f = jit(forceobj=True)(only_comprehensions)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(4) == only_comprehensions(4)
    sig = f.signatures[0]
    assert f.overloads[sig].lifted == ()


def attributes(o, v):
    o.v = v
    o.w = o.v * 2
    before = hasattr(o, "w")
    del o.w
    return o.v, before, hasattr(o, "w")


def test_attributes():
    check_same(attributes, (Box(1), 5))
    cf = jit(forceobj=True)(attributes)
    b = Box(0)
    cf(b, 3)
    assert b.v == 3 and not hasattr(b, "w")


def unpack(x):
    a, b = x
    return b, a


def test_unpacking_errors_like_python():
    check_same(unpack, ((1, 2),), ([3, 4],), ((1, 2, 3),), ((1,),), (5,), ("ab",))


def calls(f, *args, **kw):
    return f(*args), f(args[0]) if args else None, len(args), sorted(kw)


def test_calls_with_star_args_and_keywords():
    check_same(calls, (max, [1, 5, 3]), (max, 1, 5, 3), (sorted, [3, 1, 2]), (min,), (len, 1))
    check_same(lambda f, x: f(x, key=len), (sorted, ["aaa", "b", "cc"]))


def raises(x):
    if x == 0:
        raise ValueError("zero", x)
    if x == 1:
        raise KeyError
    if x == 2:
        raise 5
    if x == 3:
        raise Box(1)
    return 1 / (x - 4)


def test_raise_and_propagation():
    check_same(raises, (0,), (1,), (2,), (3,), (4,), (5,))


def test_exceptions_from_python_code_propagate_unchanged():
    def boom():
        raise OSError(2, "gone")

    def call_it(g):
        return g() + 1

    cf = check_same(call_it, (boom,))
    with pytest.raises(OSError) as info:
        cf(boom)
    assert info.value.errno == 2


GLOBAL_K = 10


def reads_global(x):
    return x + GLOBAL_K + len(str(x)) + math.floor(2.5)


def test_globals_are_read_at_run_time():
    global GLOBAL_K
    cf = check_same(reads_global, (1,), (100,))
    GLOBAL_K = 20
    try:
        assert cf(1) == reads_global(1) == 24
    finally:
        GLOBAL_K = 10


def undefined_name(x):
    return x + not_defined_anywhere  # noqa: F821


def test_missing_global_is_a_name_error():
    check_same(undefined_name, (1,))


def maybe_unbound(c):
    if c:
        y = 1
    return y  # noqa: F821 - unbound on one path on purpose


def test_unbound_local_like_python():
    check_same(maybe_unbound, (1,), (0,))


def test_closure_variables():
    base = [100]

    def inner(x):
        return x + base[0]

    cf = check_same(inner, (1,), (2,))
    base[0] = 5
    assert cf(1) == inner(1) == 6


def test_untypeable_arguments_and_signatures():
    def ident(x):
        return x

    cf = jit(forceobj=True)(ident)
    o = object()
    assert cf(o) is o
    assert cf(3) == 3
    sigs = [tuple(str(t) for t in s) for s in cf.signatures]
    assert sigs == [("pyobject",), ("int64",)]
    assert cf.nopython_signatures == []
    res = cf.overloads[cf.signatures[1]]
    assert res.objectmode and str(res.signature) == "(int64,) -> pyobject"


def test_side_effects_and_print(capsys):
    def effects(log, n):
        for i in range(n):
            log.append(i)
            print("item", i, sep="=")
        return log

    cf = jit(forceobj=True)(effects)
    log = []
    assert cf(log, 3) is log and log == [0, 1, 2]
    assert capsys.readouterr().out == "item=0\nitem=1\nitem=2\n"


def test_reference_counts_unchanged():
    def work(a, b, lst):
        c = (a, b, a)
        lst.append(a)
        lst.pop()
        d = {a: b}
        try_it = [x for x in lst]
        return c[1], d[a], len(try_it)

    def fails(a, lst):
        t = (a, lst, a)
        return t[5]

    cw = jit(forceobj=True)(work)
    cfail = jit(forceobj=True)(fails)
    a, b, lst = object(), Box(2), [1, 2]
    cw(a, b, lst)
    with pytest.raises(IndexError):
        cfail(a, lst)
    before = [sys.getrefcount(x) for x in (a, b, lst)]
    for _ in range(1000):
        assert cw(a, b, lst)[0] is b
        with pytest.raises(IndexError):
            cfail(a, lst)
    after = [sys.getrefcount(x) for x in (a, b, lst)]
    assert before == after


def test_decorator_rules_as_numba():
    with pytest.raises(ValueError, match="Only one of 'nopython' or 'forceobj' can be True."):
        jit(nopython=True, forceobj=True)(arith)
    with pytest.warns(NumbaDeprecationWarning, match="nopython=False"):
        nf = jit(nopython=False)(arith)
    # nopython=False changes nothing since Numba 0.59: still nopython.
    with pytest.raises(TypingError):
        nf(object(), 1)
    with pytest.warns(RuntimeWarning, match="forceobj is set for njit and is ignored"):
        jf = njit(forceobj=True)(arith)
    with pytest.raises(TypingError):
        jf(object(), 1)


def test_nogil_warns_and_keeps_the_gil():
    def add(a, b):
        return a + b

    cf = jit(forceobj=True, nogil=True)(add)
    with pytest.warns(NumbaWarning, match="won't allow parallel execution despite nogil=True"):
        assert cf([1], [2]) == [1, 2]


def test_unsupported_constructs_name_themselves():
    def with_try(x):
        try:
            return 1 / x
        except ZeroDivisionError:
            return 0

    cf = jit(forceobj=True)(with_try)
    with pytest.raises(Exception, match="object mode") as info:
        cf(1)
    assert "with_try" in str(info.value)


def test_inspect_types_as_numba_prints_object_mode(capsys):
    def add(a, b):
        c = len([a]) + b
        return c

    cf = jit(forceobj=True)(add)
    cf(1, 2.0)
    cf.inspect_types()
    out = capsys.readouterr().out
    # Numba's object-mode annotation: untyped variables, calls of Python objects.
    assert out.startswith("add (int64, float64)\n" + "-" * 80 + "\n")
    assert "#   a = arg(0, name=a)  :: <missing>" in out
    assert ":: pyobject" in out and "call $" in out


def lifted_sum(n):
    acc = 0
    for i in range(n):
        acc += i * i
    marker = object()
    return acc, type(marker).__name__


def test_loop_lifting_runs_the_loop_in_nopython():
    cf = check_same(lifted_sum, (0,), (10,), (1000,))
    res = cf.overloads[cf.signatures[0]]
    assert res.objectmode and len(res.lifted) == 1
    loop = res.lifted[0]
    # Inputs sorted by name (acc, n); the loop returns a tuple of its outputs, typed in
    # nopython mode.
    assert [tuple(str(t) for t in s) for s in loop.signatures] == [("int64", "int64")]
    # A lifted loop is a dispatcher of its own (Numba's LiftedLoop): its nopython
    # specialisation, the line it starts at.
    assert [str(s) for s in loop.nopython_signatures] == ["(int64, int64) -> UniTuple(int64 x 1)"]
    [loopres] = loop.overloads.values()
    assert not loopres.objectmode
    assert loop.get_source_location() == lifted_sum.__code__.co_firstlineno + 2
    assert loop(0, 4) == (14,)


def test_inspect_types_shows_lifted_loops(capsys):
    cf = jit(forceobj=True)(lifted_sum)
    cf(5)
    cf.inspect_types()
    out = capsys.readouterr().out
    # Numba's layout: the lifted loop's constant and call marked, then a section per
    # lifted loop with its own annotation.
    assert ":: XXX Lifted Loop XXX" in out
    assert "const(LiftedLoop, LiftedLoop(<function lifted_sum" in out
    tail = out[out.index("# The function contains lifted loops") :]
    line = lifted_sum.__code__.co_firstlineno + 2
    assert tail.startswith(f"# The function contains lifted loops\n# Loop at line {line}\n# Has 1 overloads\n")
    assert ":: int64" in tail  # the loop's body typed in nopython mode


def test_looplift_false_keeps_the_loop_in_object_mode():
    cf = jit(forceobj=True, looplift=False)(lifted_sum)
    assert cf(10) == lifted_sum(10)
    assert cf.overloads[cf.signatures[0]].lifted == ()


def lifted_untypeable(n):
    out = []
    for i in range(n):
        out.append(Box(i))
    return out


def test_lifted_loop_that_does_not_type_falls_back_with_numba_warning():
    cf = jit(forceobj=True)(lifted_untypeable)
    with pytest.warns(NumbaWarning, match="Compilation is falling back to object mode WITHOUT looplifting"):
        assert cf(3) == lifted_untypeable(3)


def lifted_array_loop(a, scale):
    total = 0.0
    for x in a:
        total += x * scale
    label = str(total)
    return total, label


def test_lifted_loop_over_an_array():
    np = pytest.importorskip("numpy")
    a = np.arange(10.0)
    cf = check_same(lifted_array_loop, (a, 2.0))
    before = sys.getrefcount(a)
    for _ in range(100):
        cf(a, 2.0)
    assert sys.getrefcount(a) == before


def loop_with_break(n):
    acc = 0
    for i in range(n):
        if i > 5:
            break
        acc += i
    marker = object()
    return acc, type(marker).__name__


def loop_with_return(n):
    acc = 0
    for i in range(n):
        if i > 5:
            return acc, "early"
        acc += i * 2
    marker = object()
    return acc, type(marker).__name__


def test_loops_with_several_exits_are_lifted():
    # A `break` or a `return` inside the loop: the exits merge into one (Numba's `$cp`
    # switch), the loop lifts, and the outer function goes on where the loop left.
    for f in (loop_with_break, loop_with_return):
        cf = check_same(f, (0,), (3,), (10,))
        res = cf.overloads[cf.signatures[0]]
        assert len(res.lifted) == 1, f.__name__
        [loopres] = res.lifted[0].overloads.values()
        assert not loopres.objectmode
