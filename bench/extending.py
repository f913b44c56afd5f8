"""The extension API beside Numba 0.68.1 in one run (when Numba is importable): loops
calling an `@overload`ed function, an `@overload_method` and an `@overload_attribute`,
a `literal_unroll` loop over a mixed tuple, a ctypes C function called per element,
and the first-call compile time of a function using an overload (fresh functions and
overload registrations for each measurement).

    python bench/extending.py

Run figures are the best of 5 means of `repeat` calls after a warm-up call; the ratio
is numba-rs's time over Numba's (below 1.0 is faster).
"""
import ctypes
import ctypes.util
import time

import numpy as np

libm = ctypes.CDLL(ctypes.util.find_library("m"))
c_cos = libm.cos
c_cos.argtypes = [ctypes.c_double]
c_cos.restype = ctypes.c_double


def make_cases(mod, tag):
    """Kernels built with `mod` (numba_rs or numba); `tag` keeps overload targets
    distinct per implementation."""
    jit = mod.njit
    types = mod.types
    ext = mod.extending
    literal_unroll = mod.literal_unroll

    def smooth(x):
        pass

    smooth.__name__ = f"smooth_{tag}"

    @ext.overload(smooth)
    def _ol_smooth(x):
        if isinstance(x, types.Float):
            return lambda x: x * x * (3.0 - 2.0 * x)

    @ext.overload_method(types.Array, f"weighted_{tag}")
    def _ol_weighted(a, w):
        def impl(a, w):
            s = 0.0
            for i in range(a.size):
                s += a[i] * w
            return s
        return impl

    @ext.overload_attribute(types.Array, f"span_{tag}")
    def _ol_span(a):
        return lambda a: a.max() - a.min()

    weighted = f"weighted_{tag}"
    span = f"span_{tag}"
    ns = {"smooth": smooth, "literal_unroll": literal_unroll, "c_cos": c_cos}
    src = f"""
def overload_loop(a):
    s = 0.0
    for i in range(a.size):
        s += smooth(a[i])
    return s

def method_attr(a):
    return a.{weighted}(0.5) + a.{span}

def unroll(a, b, c):
    acc = 0.0
    for _ in range(1000):
        for x in literal_unroll((a, b, c, 2.5)):
            acc += x
    return acc

def c_calls(a):
    s = 0.0
    for i in range(a.size):
        s += c_cos(a[i])
    return s
"""
    exec(src, ns)
    x = np.random.default_rng(0).random(1_000_000)
    return [
        ("overload_loop", jit(ns["overload_loop"]), (x,), 20),
        ("method_attr", jit(ns["method_attr"]), (x,), 20),
        ("literal_unroll", jit(ns["unroll"]), (1, 2.5, True), 2000),
        ("ctypes_calls", jit(ns["c_calls"]), (x,), 10),
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


def compile_time(mod, n=5):
    """Median first-call time of a function calling a fresh overload."""
    times = []
    for k in range(n):
        def target(x):
            pass

        @mod.extending.overload(target)
        def _ol(x):
            return lambda x: x * 2 + 1

        ns = {"target": target}
        exec(f"def user_{k}(a):\n    return target(a) + 1\n", ns)
        f = mod.njit(ns[f"user_{k}"])
        t = time.perf_counter()
        f(3)
        times.append(time.perf_counter() - t)
    return sorted(times)[n // 2]


def fmt(t):
    return f"{t * 1e3:>10.3f} ms" if t >= 1e-4 else f"{t * 1e9:>10.0f} ns"


def main():
    import numba_rs

    impls = [("numba_rs", numba_rs)]
    try:
        import numba
        import numba.extending  # noqa: F401

        impls.append(("numba", numba))
    except ImportError:
        print("Numba is not installed here: no side-by-side figure")
    columns = [make_cases(mod, name) for name, mod in impls]
    print(f"{'case':<16}" + "".join(f"{n:>13}" for n, _ in impls) + "   ratio")
    for row in zip(*columns):
        name = row[0][0]
        results = [f(*args) for _, f, args, _ in row]
        if len(results) == 2:
            assert np.allclose(results[0], results[1]), (name, results)
        times = [timed(f, args, rep) for _, f, args, rep in row]
        line = f"{name:<16}" + "".join(f"{fmt(t):>13}" for t in times)
        if len(times) == 2:
            line += f"   {times[0] / times[1]:5.2f}x Numba's time"
        print(line)
    comp = [compile_time(mod) for _, mod in impls]
    line = f"{'compile+call':<16}" + "".join(f"{fmt(t):>13}" for t in comp)
    if len(comp) == 2:
        line += f"   {comp[0] / comp[1]:5.2f}x Numba's time"
    print(line)


if __name__ == "__main__":
    main()
