"""Shrinking a finding to a small reproducer, and writing it as a standalone script.

Shrinking deletes one statement at a time (latest first, since later statements depend
on earlier ones) and keeps a deletion when the program still gets the same verdict; it
repeats until nothing can go, then tries returning each returned value alone. Working on
the `ast` keeps every candidate syntactically valid (an emptied block gets `pass`); a
candidate that no longer runs under CPython gets the verdict "invalid" and is dropped.
"""

import ast
import copy
import time

from typed_names import PY_SOURCE, uses_typed


def _statements(tree):
    return [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]


def _without(tree, k):
    """A copy of `tree` without its k-th statement (in ast.walk order), or None for `f`."""
    t = copy.deepcopy(tree)
    target = _statements(t)[k]
    if isinstance(target, ast.FunctionDef) and target.name == "f" and target in t.body:
        return None
    for node in ast.walk(t):
        for field, value in ast.iter_fields(node):
            if isinstance(value, list) and any(v is target for v in value):
                value[:] = [v for v in value if v is not target]
                if not value and field == "body":
                    value.append(ast.Pass())
                return t
    return None


def _single_returns(tree):
    """Copies of `tree` whose `return a, b, ...` in f returns one of the values."""
    f = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f")
    ret = f.body[-1]
    if not (isinstance(ret, ast.Return) and isinstance(ret.value, ast.Tuple)):
        return
    for k in range(len(ret.value.elts)):
        t = copy.deepcopy(tree)
        last = next(n for n in t.body if isinstance(n, ast.FunctionDef) and n.name == "f").body[-1]
        last.value = last.value.elts[k]
        yield t


def minimise(prog, verdict, evaluate, max_seconds=120):
    """The smallest source found (within `max_seconds`) for which
    evaluate(dict(prog, source=...)) still gives `verdict`."""
    stop = time.monotonic() + max_seconds
    tree = ast.parse(prog["source"])

    def keeps(t):
        return time.monotonic() < stop and evaluate(dict(prog, source=ast.unparse(t))) == verdict

    changed = True
    while changed and time.monotonic() < stop:
        changed = False
        for k in reversed(range(len(_statements(tree)))):
            if k >= len(_statements(tree)):
                continue
            t = _without(tree, k)
            if t is not None and keeps(t):
                tree, changed = t, True
    for t in _single_returns(tree):
        if keeps(t):
            tree = t
            break
    return ast.unparse(tree) + "\n"


REPRODUCER = '''"""Fuzz finding: {verdict} (program {name}, category {category}), minimised.

{note}
Run: .venv/bin/python {path}
"""

import cmath
import math

import numpy as np

import numba_rs

prange = range  # numba_rs.prange once CPython's result is in
{typed_py}
{source}

def args():
    return {args}


def run(fn):
    a = args()
    try:
        r = fn(*a)
        return "ok", {listed}, a
    except Exception as e:
        return "raise", type(e).__name__, str(e), a


print("cpython: ", run(f))
prange = numba_rs.prange
{typed_jit}{jit_helpers}print("numba_rs:", run(numba_rs.njit(parallel={parallel})(f)))
'''


def reproducer(prog, verdict, path, note):
    """The text of a standalone script printing CPython's and numba_rs's outcomes."""
    typed = uses_typed(prog)
    helpers = [n.name for n in ast.parse(prog["source"]).body
               if isinstance(n, ast.FunctionDef) and n.name != "f"]
    return REPRODUCER.format(
        verdict=verdict, name=f"{prog['seed']}:{prog['index']}", category=prog["category"],
        note=note, path=path, source=prog["source"].rstrip() + "\n", args=prog["args"],
        listed="list(r)" if prog["generator"] else "r", parallel=prog["parallel"],
        jit_helpers="".join(f"{h} = numba_rs.njit({h})\n" for h in helpers),
        typed_py="\n# CPython's stand-ins for typed containers (numba_rs's own below)\n"
        + PY_SOURCE + "\n" if typed else "",
        typed_jit="from numba_rs.typed import Dict, List  # noqa: E402,F811\n"
        "types = numba_rs.types\n" if typed else "")
