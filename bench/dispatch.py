"""Dispatch overhead: the cost of calling an already-compiled function from Python, for
numba-rs and (when importable) Numba, beside a plain Python function in the same run.

    python bench/dispatch.py

Each figure is the best of 7 timeit runs of 200,000 calls, per call. The plain call is the
baseline (it moves between runs and machines); ratios to it are what to compare.
"""
import timeit


def add(a, b):
    return a + b


def add3(a, b, c):
    return a + b + c


def first(a):
    return a[0]


def pair(t):
    return t[0] + t[1]


def run(f, call, values):
    """ns per call of `call` (source text over f and `values`), compiled beforehand."""
    g = {"f": f, **values}
    eval(call, g)  # compile outside the timing
    best = min(timeit.repeat(call, globals=g, number=200_000, repeat=7))
    return best / 200_000 * 1e9


def main():
    import numba_rs

    impls = [("numba_rs", numba_rs.njit)]
    try:
        import numba

        impls.append(("numba", numba.njit))
    except ImportError:
        print("Numba is not installed here: no side-by-side figure")
    import numpy as np

    arr = np.arange(10.0)
    # (label, function, call text, values the call text names)
    cases = [
        ("f(1, 2)", add, "f(1, 2)", {}),
        ("f(1.0, 2.0)", add, "f(1.0, 2.0)", {}),
        ("f(1, 2.0, True)", add3, "f(1, 2.0, True)", {}),
        ("f(a=1, b=2)", add, "f(a=1, b=2)", {}),
        ("f((1, 2.0))", pair, "f(t)", {"t": (1, 2.0)}),
        ("f((1, 2), (3,))", add, "f(t, u)", {"t": (1, 2), "u": (3,)}),
        ("f(arr)", first, "f(arr)", {"arr": arr}),
    ]
    print(f"{'call':<18}{'plain':>9}" + "".join(f"{n:>21}" for n, _ in impls))
    for label, py, call, values in cases:
        plain = run(py, call, values)
        row = f"{label:<18}{plain:>7.0f}ns"
        for _, jit in impls:
            t = run(jit(py), call, values)
            row += f"{t:>11.0f}ns ({t / plain:4.1f}x)"
        print(row)


if __name__ == "__main__":
    main()
