"""Lists, sets and heapq in jitted code beside Numba 0.68.1 (where installed) and
CPython, one run: the cases of issue 43. Prints each case's best time and the ratios
to Numba's and CPython's."""

import heapq
import random
import time
import warnings

import numba_rs

try:
    import numba
except ImportError:  # the CPython column still prints
    numba = None

warnings.simplefilter("ignore")  # Numba's reflected-list deprecation warnings


def append_sum(n):
    l = []
    for i in range(n):
        l.append(i)
    s = 0
    for x in l:
        s += x
    return s


def comprehension(n):
    l = [i * 2 for i in range(n) if i % 3 != 0]
    return len(l)


def sort_floats(l):
    return sorted(l)[0]


def tuples_by_key(n, key):
    l = [((i * 7919) % 1000, i * 0.5) for i in range(n)]
    return sorted(l, key=key)[0][1]


def first_descending(t):
    return -t[0]


class Key:
    """An argument that is a key function: jitted by the compiler under test."""

    def __init__(self, fn):
        self.fn = fn


def heap_push_pop(n):
    h = [0]
    h.pop()
    for i in range(n):
        heapq.heappush(h, (i * 7919) % 1000003)
    s = 0
    while h:
        s += heapq.heappop(h)
    return s


def set_build_probe(n):
    s = set()
    for i in range(n):
        s.add((i * 7919) % 1000003)
    hits = 0
    for i in range(n):
        if i in s:
            hits += 1
    return hits


def reflect_in_out(l):
    l.append(1)
    l.pop()
    return len(l)


def read_only(l):
    s = 0
    for x in l:
        s += x
    return s


RNG = random.Random(0)
FLOATS = [RNG.random() for _ in range(10**6)]
INTS = list(range(10**4))

CASES = [
    ("append 10^6 ints, then sum", append_sum, (10**6,), 3),
    ("comprehension with filter, 10^6", comprehension, (10**6,), 3),
    ("sorted of 10^6 floats", sort_floats, (FLOATS,), 1),
    ("sorted of 10^5 tuples with a key", tuples_by_key, (10**5, Key(first_descending)), 3),
    ("heapq push/pop of 10^6 items", heap_push_pop, (10**6,), 1),
    ("set of 10^6 ints, 10^6 probes", set_build_probe, (10**6,), 1),
    ("10^4-item list in, changed, out", reflect_in_out, (INTS,), 20),
    ("10^4-item list in, read only", read_only, (INTS,), 20),
]


def timed(f, args, repeat):
    f(*args)
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(repeat):
            f(*args)
        best = min(best, (time.perf_counter() - t) / repeat)
    return best


def main():
    print(f"{'case':36} {'numba_rs':>10} {'numba':>10} {'CPython':>10}  vs numba  vs CPython")
    ratios = []
    for name, fn, args, repeat in CASES:

        def bind(jit):
            return tuple(jit(a.fn) if isinstance(a, Key) else a for a in args)

        ours = timed(numba_rs.njit(fn), bind(numba_rs.njit), repeat)
        theirs = timed(numba.njit(fn), bind(numba.njit), repeat) if numba else float("nan")
        py = timed(fn, bind(lambda f: f), repeat)
        ratios.append(theirs / ours)
        print(
            f"{name:36} {ours * 1e3:>8.2f}ms {theirs * 1e3:>8.2f}ms {py * 1e3:>8.2f}ms"
            f"  {ours / theirs:>7.2f}x  {ours / py:>8.2f}x"
        )
    if numba:
        g = 1.0
        for r in ratios:
            g *= r
        print(f"geomean speed vs Numba: {g ** (1 / len(ratios)):.2f}x")


if __name__ == "__main__":
    main()
