"""Object mode: a loop lifted out of a `forceobj=True` function against the same loop under
`njit`, unlifted object mode against CPython, and each against Numba 0.68's where Numba is
installed (one run, ms per call, best of 5)."""

import time

import numpy as np

import numba_rs

try:
    import numba
except ImportError:  # Numba is optional: the ratios against it are left out
    numba = None


def lifted(a):
    total = 0.0
    for i in range(a.shape[0]):
        total += a[i] * a[i]
    label = object()  # forces object mode around the loop
    return total, label is not None


def plain(a):
    total = 0.0
    for i in range(a.shape[0]):
        total += a[i] * a[i]
    return total, True


def best(f, *args, repeat=5, number=20):
    f(*args)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            f(*args)
        times.append((time.perf_counter() - t0) / number)
    return min(times) * 1e3


def main():
    a = np.random.default_rng(0).random(2_000_000)
    rows = [
        ("numba-rs lifted", best(numba_rs.jit(forceobj=True)(lifted), a)),
        ("numba-rs njit", best(numba_rs.njit(plain), a)),
        ("numba-rs object mode, looplift=False",
         best(numba_rs.jit(forceobj=True, looplift=False)(lifted), a, number=1)),
    ]
    rows.append(("CPython", best(lifted, a, number=1)))
    if numba is not None:
        rows.append(("Numba lifted", best(numba.jit(forceobj=True)(lifted), a)))
        rows.append(("Numba njit", best(numba.njit(plain), a)))
        rows.append(("Numba object mode, looplift=False",
                     best(numba.jit(forceobj=True, looplift=False)(lifted), a, number=1)))
    base = rows[1][1]
    for name, ms in rows:
        print(f"{name:40s} {ms:10.3f} ms   {base / ms:6.2f}x of numba-rs njit")


if __name__ == "__main__":
    main()
