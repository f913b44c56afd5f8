"""`str` in jitted code beside Numba 0.68.1 (where installed) and CPython, one run: the
operations numba-rs has so far (issue 44's start). Prints each case's best time and the
ratios to Numba's and CPython's."""

import time

import numba_rs

try:
    import numba
except ImportError:  # the CPython column still prints
    numba = None


def length_of(s):
    return len(s)


def build(n, piece):
    s = ""
    for _ in range(n):
        s = s + piece
    return len(s)


def count_in(words, probe):
    hits = 0
    for i in range(len(words)):
        if probe in words[i:i + 8]:
            hits += 1
    return hits


def compare_all(a, b, n):
    c = 0
    for _ in range(n):
        c += (a < b) + (a == b)
    return c


CASES = [
    ("pass a 100-char str, return len", length_of, ("x" * 100,), 100_000),
    ("build a str of 2000 pieces by +", build, (2000, "ab"), 20),
    ("slice + `in` over 10^4 windows", count_in, ("lorem ipsum dolor " * 600, "sum"), 5),
    ("compare two 1000-char strs 10^4 times", compare_all, ("é" * 999 + "a", "é" * 999 + "b", 10_000), 5),
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
    print(f"{'case':40} {'numba_rs':>10} {'numba':>10} {'CPython':>10}  vs numba  vs CPython")
    for name, fn, args, repeat in CASES:
        ours = timed(numba_rs.njit(fn), args, repeat)
        theirs = timed(numba.njit(fn), args, repeat) if numba else float("nan")
        py = timed(fn, args, repeat)
        print(
            f"{name:40} {ours * 1e6:>8.1f}us {theirs * 1e6:>8.1f}us {py * 1e6:>8.1f}us"
            f"  {ours / theirs:>7.2f}x  {ours / py:>8.2f}x"
        )


if __name__ == "__main__":
    main()
