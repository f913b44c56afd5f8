"""Patterns from real Numba programs that were slower than Numba (issue 41): loops calling
small jitted helpers, stencil updates whose operands overlap the destination, and four
cases measured slow beside Numba. numba-rs beside Numba 0.68.1 in one run when Numba is
importable.

    python bench/real_programs.py

Each figure is the best of 5 means of `repeat` calls after a warm-up call; the ratio is
numba-rs's time over Numba's (below 1.0 is faster).
"""
import random
import time

import numpy as np


def make_cases(jit):
    """The kernels compiled with `jit` (numba_rs.njit or numba.njit), each with its
    arguments and repeat count."""

    @jit
    def wrap(k, n):
        return k % n

    @jit
    def increment_neighbors(i, j, a):
        n, m = a.shape
        for di in (-1, 0, 1):
            for dj in (-1, 0, 1):
                if di != 0 or dj != 0:
                    a[wrap(i + di, n), wrap(j + dj, m)] += 1

    @jit
    def neighbours(board, counts):
        n, m = board.shape
        counts[:, :] = 0
        for i in range(n):
            for j in range(m):
                if board[i, j]:
                    increment_neighbors(i, j, counts)
        return counts

    @jit
    def wrapped_sum(a):
        n, m = a.shape
        s = 0.0
        for i in range(n):
            for j in range(m):
                s += a[wrap(i + 1, n), wrap(j - 1, m)]
        return s

    @jit(inline="always")
    def clamp(x, lo, hi):
        return min(max(x, lo), hi)

    @jit
    def clamped_total(a):
        s = 0.0
        for i in range(a.shape[0]):
            s += clamp(a[i], 0.25, 0.75)
        return s

    @jit
    def laplace(u, c):
        u[1:-1, 1:-1] = (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]) * c
        return u

    @jit
    def randbits(n):
        s = 0
        for _ in range(n):
            s ^= random.getrandbits(32)
        return s

    @jit
    def median(a):
        return np.median(a)

    @jit
    def reversed_sum(a):
        s = 0.0
        for i in range(a.shape[0]):
            for j in range(a.shape[1]):
                s += a[i, j] * j
        return s

    @jit
    def first(a):
        return a[0, 0, 0]

    rng = np.random.default_rng(0)
    board = rng.random((300, 300)) < 0.3
    counts = np.zeros((300, 300), np.int64)
    m = rng.random((1000, 1000))
    u = rng.random((1000, 1000))
    x = rng.random(1_000_000)
    s = np.sort(rng.random(1_000_001))
    cube = rng.random((4, 4, 4))
    return [
        ("neighbours", neighbours, (board, counts), 20),
        ("wrapped_sum", wrapped_sum, (m,), 20),
        ("clamp_inline", clamped_total, (x,), 20),
        ("laplace", laplace, (u, 0.25), 20),
        ("getrandbits", randbits, (1_000_000,), 20),
        ("median_sorted", median, (s,), 20),
        ("reversed_2d", reversed_sum, (m[::-1, ::-1],), 20),
        ("call_3d_arg", first, (cube,), 100_000),
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


def fmt(t):
    return f"{t * 1e3:>10.3f} ms" if t >= 1e-4 else f"{t * 1e9:>10.0f} ns"


def main():
    import numba_rs

    impls = [("numba_rs", numba_rs.njit)]
    try:
        import numba

        impls.append(("numba", numba.njit))
    except ImportError:
        print("Numba is not installed here: no side-by-side figure")
    columns = [make_cases(jit) for _, jit in impls]
    print(f"{'case':<15}" + "".join(f"{n:>13}" for n, _ in impls) + "   ratio")
    ratios = []
    for row in zip(*columns):
        name = row[0][0]
        results = [f(*args) for _, f, args, _ in row]
        if len(results) == 2 and name != "getrandbits":
            a, b = (np.asarray(r) for r in results)
            assert np.allclose(a, b), (name, a, b)
        times = [timed(f, args, rep) for _, f, args, rep in row]
        line = f"{name:<15}" + "".join(f"{fmt(t):>13}" for t in times)
        if len(times) == 2:
            ratios.append(times[0] / times[1])
            line += f"   {ratios[-1]:5.2f}x Numba's time"
        print(line)
    if ratios:
        g = float(np.exp(np.mean(np.log(ratios))))
        print(f"geomean {g:.2f}x Numba's time, worst {max(ratios):.2f}x")


if __name__ == "__main__":
    main()
