"""Records and np.random.Generator beside Numba 0.68.1 (where installed), one run: the
issue-47 cases. Field reads and writes over an array of 10^6 packed records; 10^6
normal and integer draws from a Generator in a loop and as one `size=` call; a call
taking a record scalar from Python. Prints best times and numba-rs's time over Numba's
(below 1 is faster)."""

import time

import numpy as np

import numba_rs

try:
    import numba
except ImportError:  # the numba-rs column still prints
    numba = None

DT = np.dtype([("x", "f8"), ("n", "i2"), ("w", "f4"), ("v", "f8", (3,))])


def fields(a):
    s = 0.0
    for i in range(a.shape[0]):
        r = a[i]
        r.w = r.x * 0.5
        s += r.x * r.n + r.v[1]
    return s


def draws(g, n):
    s = 0.0
    for _ in range(n):
        s += g.normal(1.0, 2.0) + g.integers(0, 100)
    return s


def sized(g, n):
    return g.standard_normal(n).sum() + g.integers(0, 1000, n).sum()


def read(r):
    return r.x + r.n


def best(f, repeat=5):
    f()
    b = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        b = min(b, time.perf_counter() - t)
    return b


def cases(njit):
    a = np.zeros(1_000_000, DT)
    a["x"] = np.arange(a.size) / 7.0
    a["n"] = np.arange(a.size) % 100
    a["v"] = 1.0
    f, d, s, r = njit(fields), njit(draws), njit(sized), njit(read)
    rec = a[3]
    return [
        ("fields of 10^6 records (read, write)", lambda: f(a)),
        ("10^6 normal + integers draws, loop", lambda: d(np.random.default_rng(1), 1_000_000)),
        ("10^6 standard_normal + integers, size=", lambda: s(np.random.default_rng(1), 1_000_000)),
        ("10^4 calls f(record) from Python", lambda: [r(rec) for _ in range(10_000)]),
    ]


def main():
    ours = cases(numba_rs.njit)
    theirs = cases(numba.njit) if numba else None
    print(f"{'case':42} {'numba_rs':>10} {'numba':>10}  vs numba")
    for i, (name, f) in enumerate(ours):
        a = best(f)
        b = best(theirs[i][1]) if theirs else float("nan")
        print(f"{name:42} {a * 1e3:8.2f}ms {b * 1e3:8.2f}ms  {a / b:6.2f}x")


if __name__ == "__main__":
    main()
