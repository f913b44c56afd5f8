"""Fused array expressions: numba-rs beside Numba (when importable) and plain NumPy in one
run, with ratios.

    python bench/array_exprs.py [n]

Kernels: `a*x+y`, `sqrt(x)*y+exp(z)`, a 6-operation chain, the same chain written over
three statements, an in-place `out[:] = a*x+y`, and Black-Scholes (Numba's
`test_blackscholes` formulation: whole-array expressions plus a ufunc-style CND). Each
figure is the best of 15 calls after a warm-up call, on `n` float64 elements (default
1,000,000).
"""
import sys
import time

import numpy as np


def axpy(a, x, y):
    return a * x + y


def sqrt_exp(x, y, z):
    return np.sqrt(x) * y + np.exp(z)


def chain6(x, y, z):
    return ((x + y) * z - x / y) * 0.5 + z


def chain_split(x, y, z):
    t = (x + y) * z
    u = t - x / y
    return u * 0.5 + z


def inplace(out, a, x, y):
    out[:] = a * x + y


RISKFREE = 0.02
VOLATILITY = 0.30
A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
RSQRT2PI = 0.39894228040143267794


def black_scholes(stock, strike, t):
    sqrt_t = np.sqrt(t)
    d1 = (np.log(stock / strike) + (RISKFREE + 0.5 * VOLATILITY * VOLATILITY) * t) / (
        VOLATILITY * sqrt_t
    )
    d2 = d1 - VOLATILITY * sqrt_t
    k1 = 1.0 / (1.0 + 0.2316419 * np.abs(d1))
    k2 = 1.0 / (1.0 + 0.2316419 * np.abs(d2))
    p1 = RSQRT2PI * np.exp(-0.5 * d1 * d1) * (k1 * (A1 + k1 * (A2 + k1 * (A3 + k1 * (A4 + k1 * A5)))))
    p2 = RSQRT2PI * np.exp(-0.5 * d2 * d2) * (k2 * (A1 + k2 * (A2 + k2 * (A3 + k2 * (A4 + k2 * A5)))))
    exp_rt = np.exp(-RISKFREE * t)
    call = stock * p1 - strike * exp_rt * p2
    return call


def best(f, args, repeat=15):
    f(*args)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f(*args)
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    rng = np.random.default_rng(0)
    x, y, z = rng.random(n) + 0.5, rng.random(n) + 0.5, rng.random(n)
    out = np.empty(n)
    stock = rng.uniform(5.0, 30.0, n)
    strike = rng.uniform(1.0, 100.0, n)
    t = rng.uniform(0.25, 10.0, n)
    cases = [
        ("a*x+y", axpy, (2.0, x, y)),
        ("sqrt(x)*y+exp(z)", sqrt_exp, (x, y, z)),
        ("6-op chain", chain6, (x, y, z)),
        ("chain over 3 statements", chain_split, (x, y, z)),
        ("out[:] = a*x+y", inplace, (out, 2.0, x, y)),
        ("black-scholes", black_scholes, (stock, strike, t)),
    ]
    import numba_rs

    impls = [("numba-rs", numba_rs.njit)]
    try:
        import numba

        impls.append(("Numba", numba.njit))
    except ImportError:
        pass
    header = ["kernel", "NumPy ms"] + [f"{name} ms" for name, _ in impls]
    header += [f"NumPy/{impls[0][0]}"] + [f"{name}/{impls[0][0]}" for name, _ in impls[1:]]
    print(" | ".join(header))
    for label, f, args in cases:
        base = best(f, args)
        row = [label, f"{base * 1e3:.2f}"]
        ours = None
        figures = []
        for _, jit in impls:
            g = jit(f)
            r = best(g, args)
            expected = f(*args)
            got = g(*args)
            if expected is not None:
                np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
            figures.append(r)
            ours = ours or r
            row.append(f"{r * 1e3:.2f}")
        row.append(f"{base / ours:.2f}x")
        row += [f"{r / ours:.2f}x" for r in figures[1:]]
        print(" | ".join(row))


if __name__ == "__main__":
    main()
