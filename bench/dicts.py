"""Dicts and typed containers beside Numba 0.68.1 (where installed) and CPython, one run:
the cases of issue 45. Each case's source is compiled by numba_rs and by Numba with
that package's own `typed` containers; CPython runs the plain function. Prints best
times and the ratios (numba_rs's time over the other's; below 1 is faster)."""

import time

import numba_rs

try:
    import numba
except ImportError:  # the CPython column still prints
    numba = None

SOURCE = '''
def int_keys(n):
    d = {}
    for i in range(n):
        d[(i * 2654435761) % 1000003] = i
    s = 0
    for i in range(n):
        s += d.get((i * 2654435761) % 1000003, 0)
    return s

def str_keys(words):
    d = {}
    for i in range(len(words)):
        d[words[i]] = i
    s = 0
    for w in words:
        s += d[w]
    return s

def word_count(text):
    c = Dict.empty(types.unicode_type, types.int64)
    for w in text.split():
        c[w] = c.get(w, 0) + 1
    return len(c)

def bfs(n):
    g = Dict.empty(types.int64, INT_LIST)
    for i in range(n):
        nb = List.empty_list(types.int64)
        nb.append((i * 7 + 1) % n)
        nb.append((i * 3 + 2) % n)
        nb.append((i * 11 + 5) % n)
        g[i] = nb
    seen = Dict.empty(types.int64, types.int64)
    seen[0] = 0
    frontier = List.empty_list(types.int64)
    frontier.append(0)
    head = 0
    while head < len(frontier):
        u = frontier[head]
        head += 1
        for v in g[u]:
            if v not in seen:
                seen[v] = seen[u] + 1
                frontier.append(v)
    return len(seen)
'''

N = 1_000_000
WORDS = [f"w{(i * 7919) % 200_003}" for i in range(200_000)]
TEXT = " ".join(f"word{(i * 31) % 5000}" for i in range(170_000))[:1_000_000]


def compiled(pkg):
    """The cases compiled by `pkg` (numba_rs or numba) with its own typed containers."""
    ns = {
        "Dict": pkg.typed.Dict,
        "List": pkg.typed.List,
        "types": pkg.types,
        "INT_LIST": pkg.types.ListType(pkg.types.int64),
    }
    exec(SOURCE, ns)  # noqa: S102  (the benchmark's own source)
    return {k: pkg.njit(ns[k]) for k in ("int_keys", "str_keys", "word_count", "bfs")}


def plain():
    ns = {"Dict": _PyDict, "List": _PyList, "types": _PyTypes, "INT_LIST": None}
    exec(SOURCE, ns)  # noqa: S102
    return ns


class _PyDict(dict):
    @staticmethod
    def empty(*_a, **_k):
        return {}


class _PyList(list):
    @staticmethod
    def empty_list(*_a, **_k):
        return []


class _PyTypes:
    unicode_type = int64 = None

    @staticmethod
    def ListType(_t):
        return None


def timed(f, args, repeat=1):
    f(*args)
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(repeat):
            f(*args)
        best = min(best, (time.perf_counter() - t) / repeat)
    return best


def python_side(pkg):
    """10^5 `append`, `__setitem__`, `__getitem__` from Python on `pkg`'s containers."""
    n = 100_000
    lst = pkg.typed.List.empty_list(pkg.types.int64)
    d = pkg.typed.Dict.empty(pkg.types.int64, pkg.types.int64)

    def append():
        lst.clear()
        for i in range(n):
            lst.append(i)

    def setitem():
        for i in range(n):
            d[i] = i

    def getitem():
        s = 0
        for i in range(n):
            s += d[i]
        return s

    return {"append": append, "setitem": setitem, "getitem": getitem}


def main():
    print(f"{'case':34} {'numba_rs':>10} {'numba':>10} {'CPython':>10}  vs numba  vs CPython")
    ours = compiled(numba_rs)
    theirs = compiled(numba) if numba else {}
    py = plain()
    cases = [
        ("10^6 int-key inserts + lookups", "int_keys", (N,)),
        ("2*10^5 str-key inserts + lookups", "str_keys", (WORDS,)),
        ("word count over 1 MB", "word_count", (TEXT,)),
        ("BFS over a dict of lists, 10^5", "bfs", (100_000,)),
    ]
    jit_ratios = []
    for name, key, args in cases:
        a = timed(ours[key], args)
        b = timed(theirs[key], args) if numba else float("nan")
        c = timed(py[key], args)
        jit_ratios.append(a / b)
        print(f"{name:34} {a * 1e3:>8.2f}ms {b * 1e3:>8.2f}ms {c * 1e3:>8.2f}ms  {a / b:>7.2f}x  {a / c:>8.2f}x")
    ours_py = python_side(numba_rs)
    theirs_py = python_side(numba) if numba else {}
    ref = {"append": list.append, "setitem": None, "getitem": None}
    del ref
    pl, pd = [], {}

    def p_append():
        pl.clear()
        for i in range(100_000):
            pl.append(i)

    def p_setitem():
        for i in range(100_000):
            pd[i] = i

    def p_getitem():
        s = 0
        for i in range(100_000):
            s += pd[i]
        return s

    cp = {"append": p_append, "setitem": p_setitem, "getitem": p_getitem}
    for key in ("append", "setitem", "getitem"):
        a = timed(ours_py[key], ())
        b = timed(theirs_py[key], ()) if numba else float("nan")
        c = timed(cp[key], ())
        print(f"{'Python-side 10^5 ' + key:34} {a * 1e3:>8.2f}ms {b * 1e3:>8.2f}ms {c * 1e3:>8.2f}ms  {a / b:>7.3f}x  {a / c:>8.2f}x")
    if numba:
        g = 1.0
        for r in jit_ratios:
            g *= r
        print(f"jitted cases geomean time vs Numba: {g ** (1 / len(jit_ratios)):.2f}x")


if __name__ == "__main__":
    main()
