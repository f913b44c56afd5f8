"""vectorize and guvectorize beside Numba's (when importable) and beside the NumPy
expression, in one run on this machine.

    python bench/vectorize.py [scale]

Part 1, `target='cpu'`: each kernel as a numba-rs ufunc, a Numba ufunc and the same
computation written with NumPy operators; the ratio column is Numba's time over
numba-rs's (above 1.0 means numba-rs is faster) and the NumPy column the NumPy
expression's time over numba-rs's.

Part 2, `target='parallel'` against `target='cpu'` on large arrays: the speed-up of each
compiler's parallel ufunc over its own cpu ufunc.

Each figure is the best of 7 samples after a warm-up call (a sample repeats a short call
until it lasts 1 ms).

Kernels:
- `poly`: `3x^3 - 2x^2 + x - 5` over 10^6 float64 (memory bound);
- `logistic`: `1 / (1 + exp(-x)) * y` over 10^6 float64 pairs;
- `branchy`: `sin(x)/x` with the `x == 0` case, over 10^6 float64 (a kernel with
  branches, called per element);
- `int_mix`: `(a * 7 + b) % 13` over 10^6 int64;
- `broadcast`: `hypot(x, y)` of a (1000, 1) and a (1000,) array (NumPy broadcasting);
- `gu_dot`: a guvectorize `(n),(n)->()` row dot product of 10^5 x 16;
- parallel part: `heavy` = `sqrt(sin(x)^2 + cos(y)^2) * exp(-x)` over 4 * 10^6 items,
  and `gu_norm`, a `(n)->()` norm of 4 * 10^5 rows of 32.
"""
import math
import sys
import time

import numpy as np


def poly(x):
    return 3.0 * x * x * x - 2.0 * x * x + x - 5.0


def logistic(x, y):
    return 1.0 / (1.0 + math.exp(-x)) * y


def branchy(x):
    if x == 0.0:
        return 1.0
    return math.sin(x) / x


def int_mix(a, b):
    return (a * 7 + b) % 13


def hypot(x, y):
    return math.sqrt(x * x + y * y)


def heavy(x, y):
    return math.sqrt(math.sin(x) ** 2 + math.cos(y) ** 2) * math.exp(-x)


def gu_dot(a, b, out):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    out[0] = s


def gu_norm(a, out):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * a[i]
    out[0] = math.sqrt(s)


def np_poly(x):
    return 3.0 * x * x * x - 2.0 * x * x + x - 5.0


def np_logistic(x, y):
    return 1.0 / (1.0 + np.exp(-x)) * y


def np_branchy(x):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(x == 0.0, 1.0, np.sin(x) / x)


def np_int_mix(a, b):
    return (a * 7 + b) % 13


def np_hypot(x, y):
    return np.sqrt(x * x + y * y)


def np_gu_dot(a, b):
    return np.einsum("ij,ij->i", a, b)


# name, kernel, signatures (vectorize) or (signatures, layout) (guvectorize), NumPy form
CPU = [
    ("poly", poly, ["f8(f8)"], np_poly),
    ("logistic", logistic, ["f8(f8, f8)"], np_logistic),
    ("branchy", branchy, ["f8(f8)"], np_branchy),
    ("int_mix", int_mix, ["i8(i8, i8)"], np_int_mix),
    ("broadcast", hypot, ["f8(f8, f8)"], np_hypot),
    ("gu_dot", gu_dot, (["void(f8[:], f8[:], f8[:])"], "(n),(n)->()"), np_gu_dot),
]
PARALLEL = [
    ("heavy", heavy, ["f8(f8, f8)"]),
    ("gu_norm", gu_norm, (["void(f8[:], f8[:])"], "(n)->()")),
]


def inputs(scale):
    rng = np.random.default_rng(0)
    n = int(1_000_000 * scale)
    x = rng.standard_normal(n)
    y = rng.standard_normal(n)
    x[::97] = 0.0
    ints = rng.integers(-1000, 1000, n), rng.integers(-1000, 1000, n)
    big = int(4_000_000 * scale)
    return {
        "poly": (x,),
        "logistic": (x, y),
        "branchy": (x,),
        "int_mix": ints,
        "broadcast": (rng.random((1000, 1)), rng.random(1000)),
        "gu_dot": (rng.random((int(100_000 * scale), 16)), rng.random((int(100_000 * scale), 16))),
        "heavy": (rng.random(big), rng.random(big)),
        "gu_norm": (rng.random((int(400_000 * scale), 32)),),
    }


def best(f, args, reps=7):
    """The best per-call time of `reps` samples; a sample repeats the call until it
    lasts a millisecond."""
    f(*args)
    t0 = time.perf_counter()
    f(*args)
    once = time.perf_counter() - t0
    calls = max(1, int(1e-3 / max(once, 1e-9)))
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            f(*args)
        ts.append((time.perf_counter() - t0) / calls)
    return min(ts)


def make(module, kernel, spec, target="cpu"):
    if isinstance(spec, tuple):
        sigs, layout = spec
        return module.guvectorize(sigs, layout, target=target)(kernel)
    return module.vectorize(spec, target=target)(kernel)


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main():
    scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    import numba_rs

    try:
        import numba
    except ImportError:
        numba = None
    data = inputs(scale)
    print("target='cpu' (ms per call; ratios are the other's time over numba-rs's)")
    head = f"{'kernel':<11}{'numba-rs':>11}"
    if numba:
        head += f"{'Numba':>11}{'Numba/rs':>10}"
    head += f"{'NumPy':>11}{'NumPy/rs':>10}"
    print(head)
    vs_numba, vs_numpy = [], []
    for name, kernel, spec, np_form in CPU:
        args = data[name]
        t_rs = best(make(numba_rs, kernel, spec), args)
        line = f"{name:<11}{t_rs * 1e3:>11.3f}"
        if numba:
            t_nb = best(make(numba, kernel, spec), args)
            vs_numba.append(t_nb / t_rs)
            line += f"{t_nb * 1e3:>11.3f}{t_nb / t_rs:>9.2f}x"
        t_np = best(np_form, args)
        vs_numpy.append(t_np / t_rs)
        line += f"{t_np * 1e3:>11.3f}{t_np / t_rs:>9.2f}x"
        print(line)
    if vs_numba:
        print(f"geomean Numba/numba-rs: {geomean(vs_numba):.2f}x")
    print(f"geomean NumPy/numba-rs: {geomean(vs_numpy):.2f}x")
    print()
    print(f"target='parallel' vs 'cpu' (threads: numba-rs {numba_rs.get_num_threads()}"
          + (f", Numba {numba.get_num_threads()})" if numba else ")"))
    impls = [("numba-rs", numba_rs)] + ([("Numba", numba)] if numba else [])
    print(f"{'kernel':<11}" + "".join(f"{n + ' cpu':>16}{n + ' par':>16}{'speed-up':>10}"
                                      for n, _ in impls))
    for name, kernel, spec in PARALLEL:
        args = data[name]
        line = f"{name:<11}"
        for _, mod in impls:
            tc = best(make(mod, kernel, spec), args)
            tp = best(make(mod, kernel, spec, "parallel"), args)
            line += f"{tc * 1e3:>13.3f} ms{tp * 1e3:>13.3f} ms{tc / tp:>9.2f}x"
        print(line)


if __name__ == "__main__":
    main()
