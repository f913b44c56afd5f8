"""`numpy.random` draws in jitted code: numba-rs beside Numba (when importable) and NumPy
itself, in one run on this machine.

    python bench/np_random.py [n]

Each kernel fills an array of `n` (default 2*10^6) draws with `size=`; each figure is the
best of 7 samples after a warm-up call, and the ratios are NumPy's time over each
compiler's (above 1.0: faster than NumPy). numba-rs draws NumPy's legacy algorithms, so
its values equal NumPy's after the same seed; Numba's `gamma` uses CPython's algorithm.
"""

import sys
import time

import numpy as np

import numba_rs

try:
    import numba
except ImportError:  # pragma: no cover
    numba = None

KERNELS = {
    "uniform": lambda n: np.random.uniform(0.0, 1.0, n),
    "normal": lambda n: np.random.normal(0.0, 1.0, n),
    "gamma": lambda n: np.random.gamma(2.0, 1.0, n),
    "beta": lambda n: np.random.beta(2.0, 3.0, n),
    "poisson": lambda n: np.random.poisson(3.0, n),
    "binomial": lambda n: np.random.binomial(100, 0.4, n),
}


def best(f, n):
    f(10)
    times = []
    for _ in range(7):
        t = time.perf_counter()
        f(n)
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000
    print(f"{'kernel':10} {'numpy ms':>9} {'numba-rs ms':>12} {'ratio':>6} {'numba ms':>9} {'ratio':>6}")
    for name, f in KERNELS.items():
        t_np = best(f, n)
        t_rs = best(numba_rs.njit(f), n)
        line = f"{name:10} {t_np * 1e3:9.2f} {t_rs * 1e3:12.2f} {t_np / t_rs:6.2f}"
        if numba is not None:
            t_nb = best(numba.njit(f), n)
            line += f" {t_nb * 1e3:9.2f} {t_np / t_nb:6.2f}"
        print(line)


if __name__ == "__main__":
    main()
