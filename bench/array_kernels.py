"""Steady-state speed of array kernels (arrays passed in, loops over them, whole-array
expressions), numba-rs beside Numba in one run when Numba is importable.

    python bench/array_kernels.py

Each figure is the mean of 20 calls after a warm-up call, on 1,000,000 float64 elements
(1000 x 1000 for the 2-d kernels, 300 x 300 for the matrix products).
"""
import time

import numpy as np


def total(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i]
    return s


def axpy(a, x, y):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


def weighted_2d(m):
    s = 0.0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            s += m[i, j] * i
    return s


def expression(x, y):
    return (x * 2.0 + y).sum()


def column_sums(m):
    return m.sum(axis=0)


def row_sums(m):
    return np.sum(m, axis=1)


def sorted_copy(x):
    return np.sort(x)


def argsorted(x):
    return np.argsort(x)


def histogram(x):
    return np.histogram(x, bins=50)


def stencil(m):
    out = np.zeros_like(m)
    for i in range(1, m.shape[0] - 1):
        for j in range(1, m.shape[1] - 1):
            out[i, j] = 0.25 * (m[i - 1, j] + m[i + 1, j] + m[i, j - 1] + m[i, j + 1]) - m[i, j]
    return out


def dot(p, q):
    return np.dot(p, q)


def matmul_loop(p, q):
    out = np.zeros((p.shape[0], q.shape[1]))
    for i in range(p.shape[0]):
        for k in range(p.shape[1]):
            s = p[i, k]
            for j in range(q.shape[1]):
                out[i, j] += s * q[k, j]
    return out


def timed(f, args, repeat=20):
    """The best of 5 means of `repeat` calls, after a warm-up call (steady state; the
    best run is the least disturbed by other work on the machine)."""
    f(*args)
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(repeat):
            f(*args)
        best = min(best, (time.perf_counter() - t) / repeat * 1e3)
    return best


def main():
    import numba_rs

    impls = [("numba_rs", numba_rs.njit)]
    try:
        import numba

        impls.append(("numba", numba.njit))
    except ImportError:
        print("Numba is not installed here: no side-by-side figure")
    rng = np.random.default_rng(0)
    x, y = rng.random(1_000_000), rng.random(1_000_000)
    m = rng.random((1000, 1000))
    p, q = rng.random((300, 300)), rng.random((300, 300))
    # The kernels issue 12 names, then whole-array expressions (issue 14's fused loops).
    cases = [(total, (x,)), (axpy, (2.0, x, y)), (histogram, (x,)), (stencil, (m,)),
             (matmul_loop, (p, q)), (dot, (p, q)), (sorted_copy, (x,)), (argsorted, (x,)),
             (column_sums, (m,)), (row_sums, (m,)), (weighted_2d, (m,)), (expression, (x, y))]
    ratios = {}
    print(f"{'kernel':<12}" + "".join(f"{n:>14}" for n, _ in impls) + "   ratio")
    for f, args in cases:
        times = []
        for _, jit in impls:
            try:
                times.append(timed(jit(f), args))
            except ImportError as e:  # Numba's np.dot needs SciPy's BLAS
                print(f"{f.__name__}: {e}")
                break
        row = f"{f.__name__:<12}" + "".join(f"{t:>11.3f} ms" for t in times)
        if len(times) == 2:
            ratios[f.__name__] = times[1] / times[0]
            row += f"   {times[0] / times[1]:5.2f}x numba's time"
        print(row)
    if ratios:
        def geomean(vals):
            vals = list(vals)
            return float(np.exp(np.mean(np.log(vals)))) if vals else float("nan")

        core = {k: v for k, v in ratios.items() if k != "expression"}
        print(f"speed relative to Numba (>1 is faster): geomean {geomean(core.values()):.2f}x "
              f"over issue 12's kernels, slowest {min(core, key=core.get)} "
              f"{min(core.values()):.2f}x; with the expression: "
              f"{geomean(ratios.values()):.2f}x")


if __name__ == "__main__":
    main()
