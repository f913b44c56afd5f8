"""Generators: numba-rs beside Numba (when importable) and CPython in one run, with ratios.

    python bench/generators.py [n]

- `gen_sum`: a generator of `a[i] * a[i] + 1.0` over an array consumed by a `for` loop in
  a jitted function, against the same loop written without a generator (`loop_sum`);
- `gen_filter`: a generator that yields only the positive items (a loop with a branch);
- `next()` from Python: one `next(g)` on a jitted generator against one on a CPython
  generator (per call, after the generator is made).

Each figure is the best of 15 calls after a warm-up call, on `n` float64 elements
(default 1,000,000).
"""
import sys
import time

import numpy as np


def squares(a):
    for i in range(a.shape[0]):
        yield a[i] * a[i] + 1.0


def gen_sum(a):
    s = 0.0
    for x in squares(a):
        s += x
    return s


def loop_sum(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * a[i] + 1.0
    return s


def positives(a):
    for x in a:
        if x > 0.0:
            yield x


def gen_filter(a):
    s = 0.0
    for x in positives(a):
        s += x
    return s


def loop_filter(a):
    s = 0.0
    for x in a:
        if x > 0.0:
            s += x
    return s


def counter(n):
    i = 0
    while i < n:
        yield i
        i += 1


def best(f, *args, reps=15):
    f(*args)
    t = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        f(*args)
        t = min(t, time.perf_counter() - t0)
    return t


def per_next(g, k=200_000):
    t0 = time.perf_counter()
    for _ in range(k):
        next(g)
    return (time.perf_counter() - t0) / k


def jitted(jit):
    """The kernels compiled by one implementation's `njit`, with the generators they
    call looked up as globals (so each implementation gets its own)."""
    g = {"np": np}
    out = {}
    for f in (squares, positives, counter):
        g[f.__name__] = out[f.__name__] = jit(type(f)(f.__code__, g, f.__name__))
    for f in (gen_sum, loop_sum, gen_filter, loop_filter):
        out[f.__name__] = jit(type(f)(f.__code__, g, f.__name__))
    return out


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    a = np.random.default_rng(0).standard_normal(n)
    import numba_rs

    impls = {"numba-rs": jitted(numba_rs.njit)}
    try:
        import numba

        impls["Numba"] = jitted(numba.njit)
    except ImportError:
        pass
    for name, fs in impls.items():
        assert np.isclose(fs["gen_sum"](a), fs["loop_sum"](a))
        assert np.isclose(fs["gen_filter"](a), fs["loop_filter"](a))
    rows = []
    for kernel, plain in (("gen_sum", "loop_sum"), ("gen_filter", "loop_filter")):
        row = [kernel]
        for name, fs in impls.items():
            tg = best(fs[kernel], a)
            tl = best(fs[plain], a)
            row.append((name, tg, tl))
        rows.append(row)
    print(f"n = {n}")
    print(f"{'kernel':12} {'impl':9} {'generator':>11} {'plain loop':>11} {'gen/loop':>9}")
    for row in rows:
        for name, tg, tl in row[1:]:
            print(f"{row[0]:12} {name:9} {tg * 1e3:9.3f}ms {tl * 1e3:9.3f}ms {tg / tl:8.2f}x")
        if len(row) == 3:
            print(f"{'':12} numba-rs / Numba (generator): {row[1][1] / row[2][1]:.2f}x the time")
    t_py = per_next(counter(10**9))
    line = f"next() from Python: CPython generator {t_py * 1e9:.0f} ns"
    for name, fs in impls.items():
        t = per_next(fs["counter"](10**9))
        line += f", {name} {t * 1e9:.0f} ns ({t / t_py:.2f}x CPython's)"
    print(line)


if __name__ == "__main__":
    main()
