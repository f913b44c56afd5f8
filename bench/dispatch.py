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


def run(label, f, args):
    f(*args)  # compile outside the timing
    stmt = "f(" + ", ".join(repr(a) for a in args) + ")"
    best = min(timeit.repeat(stmt, globals={"f": f}, number=200_000, repeat=7))
    return best / 200_000 * 1e9


def main():
    import numba_rs

    impls = [("numba_rs", numba_rs.njit)]
    try:
        import numba

        impls.append(("numba", numba.njit))
    except ImportError:
        print("Numba is not installed here: no side-by-side figure")
    cases = [("add(1, 2)", add, (1, 2)), ("add(1.5, 2.5)", add, (1.5, 2.5)),
             ("add3(1, 2.0, True)", add3, (1, 2.0, True)), ("add((1, 2), (3,))", add, ((1, 2), (3,)))]
    print(f"{'call':<22}{'plain':>10}" + "".join(f"{n:>22}" for n, _ in impls))
    for label, py, args in cases:
        plain = run(label, py, args)
        row = f"{label:<22}{plain:>8.0f}ns"
        for _, jit in impls:
            t = run(label, jit(py), args)
            row += f"{t:>12.0f}ns ({t / plain:4.1f}x)"
        print(row)


if __name__ == "__main__":
    main()
