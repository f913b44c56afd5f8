"""`with objmode` overhead: a nopython loop entering an object-mode block per iteration
(scalar in, scalar out) and once per call with an array out, numba-rs against Numba in
one run. Prints microseconds per call and the ratio Numba/numba-rs."""

import time

import numpy as np


def make(mod):
    objmode = mod.objmode

    def per_iteration(n):
        s = 0.0
        for i in range(n):
            with objmode(t="float64"):
                t = float(i) * 0.5
            s += t
        return s

    def array_out(n):
        with objmode(a="float64[:]"):
            a = np.arange(n, dtype=np.float64)
        return a.sum()

    return mod.njit(per_iteration), mod.njit(array_out)


def best(f, *args, reps=5):
    f(*args)
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f(*args)
        times.append(time.perf_counter() - t)
    return min(times) * 1e6


def main():
    import numba_rs

    impls = {"numba-rs": make(numba_rs)}
    try:
        import numba

        impls["Numba"] = make(numba)
    except ImportError:
        pass
    cases = [("block per iteration, 10^4 iterations", 0, (10_000,)), ("array out, n=1000", 1, (1000,))]
    for label, k, args in cases:
        us = {name: best(fs[k], *args) for name, fs in impls.items()}
        ratio = f"{us['Numba'] / us['numba-rs']:.2f}x" if "Numba" in us else "n/a"
        print(f"{label}: " + ", ".join(f"{n} {v:.1f} us" for n, v in us.items()) + f", Numba/ours {ratio}")


if __name__ == "__main__":
    main()
