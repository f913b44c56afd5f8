"""Python lists in nopython code (Numba's `List(T, reflected=...)`): building them
(literals, `[]` typed by later appends, comprehensions, `list()`), indexing and slicing,
the methods, operators and builtins, lists of arrays / strings / tuples / lists, reflected
list arguments written back into the caller's list, and `np.array` of (nested) lists.
CPython's result for the same function is the oracle; NRT counts are balanced after every
test (the conftest fixture)."""

import copy
import operator
import random

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.errors import TypingError

# Generated inputs: empty, one item, many, duplicates, negatives.
INT_LISTS = [[], [5], [3, 1, 2], [2, 2, 2, 1], [-4, 7, 0, -4, 9, 7, 1]] + [
    [random.Random(s).randint(-5, 5) for _ in range(random.Random(s).randint(0, 12))]
    for s in range(8)
]
INDICES = [-12, -3, -1, 0, 1, 2, 5, 11]
SLICES = [slice(None), slice(1, None), slice(None, -1), slice(1, 4), slice(None, None, -1),
          slice(None, None, 2), slice(5, 1, -2), slice(-3, None), slice(10, 20), slice(-20, 2)]


def same(f, *args):
    """Run `f` under CPython and numba_rs on copies of `args`: results, raised
    exception types and the arguments' final contents must agree."""
    if any(isinstance(a, list) and not a for a in args):
        # An empty list cannot be typed at the boundary (Numba's error, tested below);
        # build it inside instead.
        return same_from_inside(f, *args)
    ja = copy.deepcopy(args)
    try:
        want = f(*args)
    except Exception as e:  # noqa: BLE001 - any exception is part of the behaviour
        with pytest.raises(type(e)):
            njit(f)(*ja)
        return
    got = njit(f)(*ja)
    assert got == want, (args, got, want)
    assert list(ja) == list(args), "reflected arguments differ"


def same_from_inside(f, *args):
    """`f` called from a jitted wrapper that passes a new empty int list for each empty
    list argument (and returns it, to compare its final contents)."""
    names = [f"a{i}" for i in range(len(args))]
    setup = "".join(
        f"    {n} = [0]\n    {n}.pop()\n" for n, a in zip(names, args) if a == []
    )
    src = (f"def outer({', '.join(names)}):\n{setup}"
           f"    r = f({', '.join(names)})\n    return r, ({', '.join(names)},)\n")
    ns = {"f": f}
    exec(src, ns)
    py_outer = ns["outer"]
    ns_j = {"f": njit(f)}
    exec(src, ns_j)
    j_outer = njit(ns_j["outer"])
    passed = [a for a in args if a != []]
    call_args = [None if a == [] else a for a in args]
    try:
        want = py_outer(*copy.deepcopy(call_args))
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            j_outer(*copy.deepcopy(call_args))
        return
    assert j_outer(*copy.deepcopy(call_args)) == want, (args, passed)


def test_append_then_iterate_and_return():
    def f(n):
        out = []
        for i in range(n):
            out.append(i * 2)
        s = 0
        for x in out:
            s += x
        return s, len(out), out

    for n in (0, 1, 10, 1000):
        assert njit(f)(n) == f(n)


def test_comprehensions_with_filters_and_nesting():
    def flt(n):
        return [i * i for i in range(n) if i % 3 != 1]

    def nested(n):
        return [[j * i for j in range(i)] for i in range(n)]

    def pairs(n):
        return [(i, j) for i in range(n) for j in range(i) if (i + j) % 2 == 0]

    for f in (flt, nested, pairs):
        for n in (0, 1, 7):
            assert njit(f)(n) == f(n)


@pytest.mark.parametrize("data", INT_LISTS)
def test_indexing_and_errors(data):
    def get(l, i):
        return l[i]

    def put(l, i):
        l[i] = 99
        return l

    for i in INDICES:
        if data:
            same(get, data, i)
            same(put, data, i)
    if data:
        # Numba's messages for indexes out of range.
        with pytest.raises(IndexError, match="getitem out of range"):
            njit(get)(list(data), len(data))


@pytest.mark.parametrize("data", INT_LISTS)
def test_slices_read_assign_delete(data):
    def read(l, a, b, c):
        return l[a:b:c]

    def assign(l, a, b):
        l[a:b] = [7, 8, 9]
        return len(l)

    def assign_ext(l):
        l[::2] = [0] * len(l[::2])

    def delete(l, a, b, c):
        del l[a:b:c]

    for s in SLICES:
        same(read, data, s.start, s.stop, s.step)
        same(delete, data, s.start, s.stop, s.step)
        if s.step is None:
            same(assign, data, s.start, s.stop)
    same(assign_ext, data)


@pytest.mark.parametrize("data", INT_LISTS)
def test_methods_match_cpython(data):
    def m1(l):
        l.append(3)
        l.extend([1, 2])
        l.insert(1, 10)
        l.insert(-100, 11)
        l.insert(100, 12)
        return l.count(2), l.index(3), len(l)

    def m2(l):
        a = l.pop()
        b = l.pop(0)
        return a, b

    def m3(l):
        l.remove(2)
        return l

    def m4(l):
        c = l.copy()
        c.reverse()
        l.clear()
        return c, l

    def m5(l):
        l.sort()
        a = sorted(l, reverse=True)
        l.sort(reverse=True)
        return a

    def idx(l, x, a, b):
        return l.index(x, a, b)

    for f in (m1, m2, m3, m4, m5):
        same(f, data)
    for x in (2, 7):
        same(idx, data, x, 1, -1)


@pytest.mark.parametrize("a", INT_LISTS[:6])
@pytest.mark.parametrize("b", INT_LISTS[:6])
def test_operators(a, b):
    def ops(x, y):
        return (x + y, x * 2, 3 * y, x * -1, 2 in x, x == y, x != y, x < y, x <= y,
                x > y, x >= y)

    def inplace(x, y):
        x += y
        x *= 2
        return x

    same(ops, a, b)
    same(inplace, a, b)


def test_builtins_over_lists():
    def f(l):
        return (len(l), sum(l), min(l), max(l), any(l), all(l), sorted(l),
                list(reversed(l)), [i * x for i, x in enumerate(l)],
                list(zip(l, l[1:])), bool(l), list(l))

    for data in INT_LISTS[1:]:
        same(f, data)
        same(f, [float(x) / 3 for x in data])


def test_unpacking_checks_the_length():
    def f(l):
        a, b, c = l
        return a + b + c

    same(f, [1, 2, 3])
    same(f, [1, 2])
    same(f, [1, 2, 3, 4])


def test_float_sort_is_stable_and_reversed_like_python():
    def f(l):
        return sorted(l), sorted(l, reverse=True)

    rng = random.Random(3)
    for n in (1, 2, 50):
        data = [rng.choice([0.0, -0.0, 1.5, -2.0, 3.25]) for _ in range(n)]
        got = njit(f)(data)
        want = f(data)
        # -0.0 == 0.0: compare the signs too (a stable sort keeps their order).
        assert [str(x) for x in got[0]] == [str(x) for x in want[0]]
        assert [str(x) for x in got[1]] == [str(x) for x in want[1]]


def test_lists_of_heap_values():
    def arrays(n):
        l = []
        for i in range(n):
            l.append(np.arange(i))
        t = 0
        for a in l:
            t += a.sum()
        l.pop()
        return t, l

    def strings():
        l = ["b", "a", "ć"]
        l.append("d" + "é")
        l.insert(0, "z" * 3)
        return l, "a" in l, l[1], l.index("d" + "é")

    def nested(n):
        l = [[j for j in range(i)] for i in range(n)]
        l[1].append(7)
        return l

    got_t, got_l = njit(arrays)(5)
    want_t, want_l = arrays(5)
    assert got_t == want_t
    assert all((x == y).all() and x.dtype == y.dtype for x, y in zip(got_l, want_l))
    assert njit(strings)() == strings()
    assert njit(nested)(4) == nested(4)


def test_list_dropped_half_way_and_exceptions_while_live():
    def dropped(n):
        l = [np.ones(3) for _ in range(n)]
        m = l[1:]
        del l
        return len(m)

    def raises(n):
        l = [np.ones(2)] * 3
        if n > 1:
            raise ValueError("boom")
        return len(l)

    assert njit(dropped)(4) == 3
    with pytest.raises(ValueError, match="boom"):
        njit(raises)(5)
    assert njit(raises)(0) == 3


def test_reflection_writes_changes_back():
    @njit
    def grow(l):
        l.append(100)
        l[0] = -1

    @njit
    def untouched(l):
        return l[0] + l[-1]

    @njit
    def inner(l):
        l[1].append(7)

    @njit
    def same_list_back(l):
        l.append(1)
        return l

    a = [1, 2, 3]
    grow(a)
    assert a == [-1, 2, 3, 100]
    b = [4, 5]
    ident = b[0]
    assert untouched(b) == 9 and b == [4, 5] and b[0] is ident
    c = [[1], [2, 3]]
    inner(c)
    assert c == [[1], [2, 3, 7]]
    d = [5]
    r = same_list_back(d)
    assert r is d and d == [5, 1]


def test_lists_of_arrays_cross_back_as_the_same_objects():
    @njit
    def swap(l):
        l[0], l[1] = l[1], l[0]
        return l[0].sum()

    x, y = np.arange(3.0), np.ones(2)
    l = [x, y]
    assert swap(l) == 2.0
    assert l[0] is y and l[1] is x


def test_boundary_errors_like_numba():
    f = njit(lambda l: len(l))
    with pytest.raises(TypingError, match="can't infer type of empty list"):
        f([])
    with pytest.raises(TypeError, match="can't unbox heterogeneous list: int64 != float64"):
        f([1, 2.0])

    @njit
    def never_typed():
        l = []
        return len(l)

    with pytest.raises(TypingError, match=r"Cannot infer the type of variable 'l', have imprecise type: list\(undefined\)<iv=None>"):
        never_typed()


def test_np_array_of_lists():
    def one(n):
        return np.array([float(i) for i in range(n)])

    def two(n):
        return np.array([[i + j for j in range(3)] for i in range(n)])

    def ragged():
        l = [[1, 2]]
        l.append([3])
        return np.array(l)

    for n in (0, 1, 5):
        np.testing.assert_array_equal(njit(one)(n), one(n))
        got = njit(two)(n)
        if n:
            np.testing.assert_array_equal(got, two(n))
            assert got.dtype == two(n).dtype
    with pytest.raises(ValueError, match="inhomogeneous"):
        njit(ragged)()


def test_generated_programs_against_cpython():
    """Random sequences of list operations, run by CPython and by numba_rs."""
    ops = [
        "l.append({v})", "l.insert({i}, {v})", "l.extend([{v}, {w}])",
        "if l: l.pop()", "if len(l) > {j}: l.pop({j})", "l.reverse()", "l.sort()",
        "l += [{v}]", "l[{j}:{k}] = [{v}]", "del l[{j}:{k}]",
        "if {v} in l: l.remove({v})", "t += l.count({v})", "t += len(l[::{s}])",
        "if l: l[{i} % len(l)] = {w}",
    ]
    rng = random.Random(11)
    for case in range(25):
        body = []
        for _ in range(rng.randint(3, 10)):
            op = rng.choice(ops).format(
                v=rng.randint(-3, 3), w=rng.randint(-3, 3), i=rng.randint(-4, 4),
                j=rng.randint(0, 3), k=rng.randint(0, 5), s=rng.choice([1, 2, -1, -2]))
            body.append("    " + op)
        src = "def prog(l):\n    t = 0\n" + "\n".join(body) + "\n    return t, l\n"
        ns = {}
        exec(compile(src, f"<prog{case}>", "exec"), ns)
        data = [rng.randint(-3, 3) for _ in range(rng.randint(0, 6))] or [0]
        same(ns["prog"], data)


def test_reflected_arguments_warn_as_numba_does():
    from numba_rs.errors import NumbaPendingDeprecationWarning

    def f(l, s):
        return len(l) + len(s)

    with pytest.warns(NumbaPendingDeprecationWarning) as record:
        assert njit(f)([1, 2], {3}) == 3
    texts = [str(w.message) for w in record]
    assert any("type 'reflected list' found for argument 'l' of function" in t for t in texts)
    assert any("type 'reflected set' found for argument 's' of function" in t for t in texts)
    # A list built inside is not reflected: no warning.
    g = njit(lambda n: len([i for i in range(n)]))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", NumbaPendingDeprecationWarning)
        assert g(3) == 3


def _widen_append():
    out = []
    out.append(1)
    out.append(2.5)
    return out


def _widen_in_loop(n):
    out = [0]
    for i in range(n):
        out.append(i / 2)
    return out


def _widen_insert_extend():
    out = [1, 2]
    out.append(3j)
    out.insert(0, 0.5)
    out.extend([True])
    return out


def _widen_through_branch(flag):
    out = []
    if flag:
        out.append(1)
    else:
        out.append(7)
    out.append(0.25)
    return out


@pytest.mark.parametrize(
    "f, args",
    [(_widen_append, ()), (_widen_in_loop, (5,)), (_widen_insert_extend, ()),
     (_widen_through_branch, (True,)), (_widen_through_branch, (False,))],
)
def test_items_of_wider_types_widen_a_list_built_here(f, args):
    # Numba's `list.append` unifies the item type with what the list holds and refines
    # the list: an int list given a float holds floats (it used to truncate the float).
    got = njit(f)(*args)
    want = f(*args)
    assert got == want
    # Every item has the widest type stored (CPython keeps each item's own type).
    widest = complex if any(isinstance(y, complex) for y in want) else float
    assert all(type(x) is widest for x in got)


def test_a_list_argument_keeps_its_item_type():
    # A reflected argument's type is fixed at the call: the float converts to its int
    # items (Numba's conversion into a locked argument type).
    def f(out):
        out.append(2.5)
        return len(out)

    arg = [1, 2]
    assert njit(f)(arg) == 3
    assert arg == [1, 2, 2]


def test_literal_unroll_through_the_module():
    import numba_rs

    def f():
        acc = 0.0
        for t in numba_rs.literal_unroll((1, 2.5, 3j)):
            acc += t.real
        return acc

    assert njit(f)() == f() == 3.5


def test_lists_and_sets_inside_tuple_arguments_are_released_and_written_back():
    # A list or set held in a tuple argument is made for the call like a top-level one:
    # released after it (the conftest's NRT balance fails otherwise), and its changes
    # written back as CPython shows them (Numba leaves nested reflected lists unchanged).
    def f(t):
        t[1].append(5)
        t[2][0].add(9)
        return len(t[1])

    a, s = [1, 2], {1}
    a2, s2 = [1, 2], {1}
    assert njit(f)((1, a, (s, 3))) == f((1, a2, (s2, 3)))
    assert a == a2 and s == s2
