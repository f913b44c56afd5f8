"""Reductions over a masked array under parallel=True: numba-rs beside Numba (when
importable), serial and parallel builds of each, in one run on this machine.

    python bench/masked_reduce.py [n]

Kernels over `n` (default 10^7) uniform floats, half of them selected at random:
- `reduce`: `reduce(lambda x, y: x + y, a[a > 0.5], 0.0)` (Numba's
  `_find_mask` reads `a` where the mask is set, as numba-rs does);
- `sum`: `np.sum(a[a > 0.5])` (Numba makes the filtered copy first; numba-rs reads `a`
  in place);
- `mean`: `a[a > 0.5].mean()`.

Each figure is the best of 7 samples after a warm-up call.
"""

import sys
import time
import warnings

import numpy as np
from functools import reduce

import numba_rs

try:
    import numba
except ImportError:  # pragma: no cover
    numba = None


def k_reduce(a):
    # `from functools import reduce`: Numba's serial build lowers only that form.
    return reduce(lambda x, y: x + y, a[a > 0.5], 0.0)


def k_sum(a):
    return np.sum(a[a > 0.5])


def k_mean(a):
    return a[a > 0.5].mean()


def best(f, *args):
    f(*args)
    times = []
    for _ in range(7):
        t = time.perf_counter()
        f(*args)
        times.append(time.perf_counter() - t)
    return min(times) * 1e3


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10**7
    a = np.random.default_rng(0).random(n)
    libs = [("numba-rs", numba_rs)] + ([("numba", numba)] if numba else [])
    modes = ("serial", "parallel")
    print("kernel  " + "".join(f"{n + ' ' + m:>22}" for n, _ in libs for m in modes))
    warnings.simplefilter("ignore")
    for name, f in [("reduce", k_reduce), ("sum", k_sum), ("mean", k_mean)]:
        row = f"{name:<8}"
        for _, lib in libs:
            for par in (False, True):
                row += f"{best(lib.njit(parallel=par)(f), a):>19.2f} ms"
        print(row)


if __name__ == "__main__":
    main()
