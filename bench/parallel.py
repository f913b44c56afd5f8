"""parallel=True beside serial, and beside Numba's parallel=True (when importable), in one
run on this machine.

    python bench/parallel.py [scale]

For every kernel: numba-rs serial (`njit`), numba-rs `parallel=True`, Numba serial and
Numba `parallel=True`; the speed-up of each parallel build over its own serial build,
and the geometric mean of the speed-ups. Each figure is the best of 7 samples after a
warm-up call (a sample repeats a sub-millisecond call until it lasts 1 ms; the serial and
parallel builds' samples alternate). `launch` is
a tiny loop: it shows the cost of a parallel region the runtime decides to run inline
(it must stay near 1.0x).

Kernels (the loops use `prange`, which is `range` when serial):
- `psum`: a float reduction over 10^7 items;
- `reductions`: sum, min and max of one array in one loop;
- `rows`: a weighted sum of each row of a 2000 x 2000 matrix into an output array;
- `arrexpr`: the element-wise `a * b + sqrt(c)` of 10^7 items, written as a prange loop;
- `npexpr`: the same expression in NumPy form (`a * b + np.sqrt(c)`, a new array);
- `npnorm`: `d = a * b; sqrt(sum(d * d)) + d.mean()` (array expressions and reductions
  that fuse);
- `montecarlo`: pi from 4*10^6 random points (per-thread generators);
- `mandelbrot`: 300 x 400 pixels, 200 iterations;
- `pairwise`: Euclidean distances of 1500 points in 3-D;
- `scratch`: a 3-element `np.zeros` scratch array per iteration over 2*10^6 items
  (allocation hoisting);
- `twoloops`: a sqrt map and a dot product, two prange loops over one array (both
  compilers keep them apart: fused, the map would run at the pace of the dot product's
  serial additions);
- `stencil4`: a 4-point `@stencil` over a 2000 x 2000 matrix called from the jitted
  function (Numba turns it into a parfor of the caller; numba-rs calls the stencil's own
  parallel loop nest);
- `rownumpy`: NumPy code in a `prange` body, `out[i] = np.sum(a[i, :] ** 2)` over a
  20000 x 100 matrix (nested parfors: numba-rs fuses the row's expression and its sum
  into one loop without a temporary, Numba hoists the temporary's allocation);
- `fillsum`: a prange loop filling a new array, then `(c + b).sum()` (the loop and the
  NumPy code fuse; the array is never stored: get/setitem forwarding, in both compilers);
- `launch`: a 100-item reduction (measures the inline path).

    python bench/parallel.py [scale [kernel ...]]   (only the kernels named)
"""
import math
import sys
import time

import numpy as np


def psum(a):
    s = 0.0
    for i in PR(a.shape[0]):
        s += a[i] * 1.5
    return s


def reductions(a):
    s = 0.0
    lo = a[0]
    hi = a[0]
    for i in PR(a.shape[0]):
        s += a[i]
        lo = min(lo, a[i])
        hi = max(hi, a[i])
    return s, lo, hi


def rows(m, out):
    n, k = m.shape
    for i in PR(n):
        acc = 0.0
        for j in range(k):
            acc += m[i, j] * (j % 7)
        out[i] = acc
    return out


def arrexpr(a, b, c, out):
    for i in PR(a.shape[0]):
        out[i] = a[i] * b[i] + np.sqrt(c[i])
    return out


def npexpr(a, b, c):
    return a * b + np.sqrt(c)


def npnorm(a, b):
    d = a * b
    return np.sqrt(np.sum(d * d)) + d.mean()


def montecarlo(n):
    inside = 0
    for i in PR(n):
        x = np.random.random()
        y = np.random.random()
        if x * x + y * y <= 1.0:
            inside += 1
    return 4.0 * inside / n


def mandelbrot(h, w, it):
    out = np.zeros((h, w), dtype=np.int64)
    for y in PR(h):
        for x in range(w):
            cr = -2.0 + 3.0 * x / w
            ci = -1.5 + 3.0 * y / h
            zr = 0.0
            zi = 0.0
            k = 0
            while k < it and zr * zr + zi * zi <= 4.0:
                zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
                k += 1
            out[y, x] = k
    return out


def pairwise(x):
    n = x.shape[0]
    d = np.empty((n, n))
    for i in PR(n):
        for j in range(n):
            s = 0.0
            for k in range(x.shape[1]):
                t = x[i, k] - x[j, k]
                s += t * t
            d[i, j] = math.sqrt(s)
    return d


def scratch(a):
    s = 0.0
    for i in PR(a.shape[0]):
        t = np.zeros(3)
        t[0] = a[i]
        t[1] = a[i] * 2.0
        s += t[0] + t[1] + t[2]
    return s


def twoloops(a, out):
    # Two prange loops over one space, kept apart by both compilers (see the docstring).
    for i in PR(a.shape[0]):
        out[i] = math.sqrt(a[i]) + 1.0
    s = 0.0
    for i in PR(a.shape[0]):
        s += out[i] * a[i]
    return s


def _lap(a):
    return 0.25 * (a[0, 1] + a[1, 0] + a[0, -1] + a[-1, 0]) - a[0, 0]


def stencil4(m):
    return STK(m)


def rownumpy(a):
    out = np.empty(a.shape[0])
    for i in PR(a.shape[0]):
        out[i] = np.sum(a[i, :] ** 2)
    return out


def fillsum(a, b):
    n = a.shape[0]
    c = np.empty(n)
    for i in PR(n):
        c[i] = math.sqrt(a[i]) * 2.0
    return (c + b).sum()


def launch(a):
    s = 0.0
    for i in PR(a.shape[0]):
        s += a[i]
    return s


KERNELS = [psum, reductions, rows, arrexpr, npexpr, npnorm, montecarlo, mandelbrot, pairwise,
           scratch, twoloops, stencil4, rownumpy, fillsum, launch]


def inputs(scale):
    rng = np.random.default_rng(0)
    n = int(10_000_000 * scale)
    a, b, c = rng.random(n), rng.random(n), rng.random(n)
    m = rng.random((int(2000 * scale**0.5), 2000))
    return {
        "psum": (a,),
        "reductions": (a,),
        "rows": (m, np.zeros(m.shape[0])),
        "arrexpr": (a, b, c, np.empty(n)),
        "npexpr": (a, b, c),
        "npnorm": (a, b),
        "montecarlo": (int(4_000_000 * scale),),
        "mandelbrot": (300, 400, 200),
        "pairwise": (rng.random((int(1500 * scale**0.5), 3)),),
        "scratch": (a[: n // 5],),
        "twoloops": (a, np.empty(n)),
        "stencil4": (m,),
        "rownumpy": (rng.random((int(20000 * scale), 100)),),
        "fillsum": (a, b),
        "launch": (a[:100],),
    }


def best(fs, args, reps=7):
    """The best per-call time of each function in `fs` over `reps` samples (three times
    as many for kernels whose batch needs over a hundred calls: their minimum is the
    noisiest); a sample repeats the call until it lasts a millisecond, so
    sub-microsecond kernels are not timer noise. The functions' samples alternate
    (serial, parallel, serial, ...), so a drift of this VM's speed during the run weighs
    on both alike."""
    plan = []
    for f in fs:
        f(*args)
        # The batch size by doubling until a batch lasts a millisecond (one timed call
        # of a sub-microsecond kernel is mostly the timer's own cost, and gave batches
        # far shorter than a millisecond).
        calls = 1
        while True:
            t0 = time.perf_counter()
            for _ in range(calls):
                f(*args)
            if time.perf_counter() - t0 >= 1e-3:
                break
            calls *= 2
        plan.append((f, calls))
    if any(calls > 100 for _, calls in plan):
        reps *= 3
    ts = [[] for _ in fs]
    for _ in range(reps):
        for k, (f, calls) in enumerate(plan):
            t0 = time.perf_counter()
            for _ in range(calls):
                f(*args)
            ts[k].append((time.perf_counter() - t0) / calls)
    return [min(t) for t in ts]


def ms(t):
    """A time in milliseconds, or microseconds below 10 us (the launch loop's)."""
    return f"{t * 1e3:.3f} ms" if t >= 1e-5 else f"{t * 1e6:.3f} us"


def build(module, kernel):
    """The kernel compiled by `module` (numba_rs or numba), serial and parallel, with
    `PR` bound to that module's prange."""
    import types

    g = dict(kernel.__globals__)
    g["PR"] = module.prange
    g["STK"] = module.stencil(_lap)
    fn = types.FunctionType(kernel.__code__, g, kernel.__name__)
    return module.njit(fn), module.njit(parallel=True)(fn)


def main():
    scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    import numba_rs

    impls = [("numba-rs", numba_rs)]
    try:
        import numba

        impls.append((f"Numba {numba.__version__}", numba))
    except ImportError:
        pass
    data = inputs(scale)
    print(f"threads: numba-rs {numba_rs.get_num_threads()}", end="")
    if len(impls) > 1:
        print(f", Numba {impls[1][1].get_num_threads()}", end="")
    print()
    speedups = {name: [] for name, _ in impls}
    header = f"{'kernel':<12}" + "".join(
        f"{name + ' serial':>22}{name + ' parallel':>24}{'speed-up':>10}" for name, _ in impls
    )
    print(header)
    wanted = set(sys.argv[2:])
    for k in KERNELS:
        if wanted and k.__name__ not in wanted:
            continue
        line = f"{k.__name__:<12}"
        for name, mod in impls:
            ser, par = build(mod, k)
            ts, tp = best([ser, par], data[k.__name__])
            speedups[name].append(ts / tp)
            line += f"{ms(ts):>22}{ms(tp):>24}{ts / tp:>9.2f}x"
        print(line)
    for name, s in speedups.items():
        g = math.exp(sum(math.log(x) for x in s) / len(s))
        print(f"geomean speed-up {name}: {g:.2f}x (min {min(s):.2f}x)")


if __name__ == "__main__":
    main()
