"""Generated programs for the extension features, run by CPython and by numba_rs:
`literal_unroll` loops over random mixed tuples with random bodies (breaks, continues,
mixed arithmetic), and overloads whose implementations are chosen by argument type,
the overloaded Python function itself being the oracle."""

import math
import random

import numpy as np
import pytest

from numba_rs import literal_unroll, njit, types
from numba_rs.extending import overload

_VALUES = [
    lambda r: r.randint(-5, 9),
    lambda r: round(r.uniform(-4.0, 4.0), 3),
    lambda r: r.random() < 0.5,
    lambda r: np.float32(round(r.uniform(-2.0, 2.0), 2)),
    lambda r: np.int32(r.randint(-3, 3)),
]
_UPDATES = ["acc = acc + x", "acc = acc * 0.5 + x", "acc = acc - x * 2", "acc += x * k"]
_GUARDS = ["", "if k == {j}:\n            continue", "if acc > {t}:\n            break",
           "if k == {j} and acc < {t}:\n            break"]


def unroll_program(seed):
    r = random.Random(seed)
    n = r.randint(0, 6)
    items = tuple(r.choice(_VALUES)(r) for _ in range(n))
    guard = r.choice(_GUARDS).format(j=r.randint(1, 4), t=r.randint(-3, 8))
    update = r.choice(_UPDATES)
    src = f"""
def f(t, start):
    acc = start
    k = 0
    for x in literal_unroll(t):
        k += 1
        {guard}
        {update}
    return acc, k
"""
    ns = {"literal_unroll": literal_unroll}
    exec(src, ns)
    return ns["f"], items, src


@pytest.mark.parametrize("seed", range(40))
def test_generated_literal_unroll(seed):
    f, items, src = unroll_program(seed)
    want = f(items, 0.5)
    got = njit(f)(items, 0.5)
    assert got[1] == want[1], src
    assert math.isclose(got[0], float(want[0]), rel_tol=1e-6, abs_tol=1e-9), (src, items)


_EXPRS = {
    "Integer": ["x * 3 + 1", "x // 2 - 7", "abs(x) % 5"],
    "Float": ["x * 0.5 - 1.0", "x * x", "-x + 2.25"],
    "Boolean": ["1 if x else -1", "2 if not x else 5"],
}


def overload_program(seed):
    r = random.Random(1000 + seed)
    exprs = {k: r.choice(v) for k, v in _EXPRS.items()}
    # The Python function is the oracle: same expression per type of argument.
    src = f"""
def g(x):
    if isinstance(x, (bool, np.bool_)):
        return {exprs['Boolean']}
    if isinstance(x, (int, np.integer)):
        return {exprs['Integer']}
    return {exprs['Float']}
"""
    ns = {"np": np}
    exec(src, ns)
    g = ns["g"]

    @overload(g)
    def _ol(x):
        for cls in ("Boolean", "Integer", "Float"):
            if isinstance(x, getattr(types, cls)):
                impl_ns = {}
                exec(f"def impl(x):\n    return {exprs[cls]}\n", impl_ns)
                return impl_ns["impl"]

    caller_ns = {"g": g}
    exec("def h(a, b, c):\n    return g(a) + g(b) + g(c)\n", caller_ns)
    return caller_ns["h"], src


@pytest.mark.parametrize("seed", range(15))
def test_generated_overloads(seed):
    h, src = overload_program(seed)
    r = random.Random(seed)
    for _ in range(3):
        args = (r.randint(-20, 20), round(r.uniform(-5, 5), 3), r.random() < 0.5)
        want = h(*args)
        got = njit(h)(*args)
        assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-12), (src, args)
