"""numba-rs demo: a few jitted functions, their results next to CPython's, and timings."""

import math
import subprocess
import sys
import time

import numba_rs
from numba_rs import njit


def add(a, b):
    return a + b


def doloops(n):
    acc = 0
    for i in range(n):
        acc += 1
        if n == 10:
            break
    return acc


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


@njit
def jfib(n):
    if n < 2:
        return n
    return jfib(n - 1) + jfib(n - 2)


def hypot_sum(n):
    s = 0.0
    for i in range(n):
        s += math.sqrt(i * i + 1.0)
    return s


def main():
    jitted = {"add": njit(add), "doloops": njit(doloops), "hypot_sum": njit(hypot_sum)}
    cases = [("add", (1, 2)), ("add", (1.5, 2.25)), ("doloops", (5,)), ("doloops", (10,)), ("hypot_sum", (1000,))]
    print(f"{'call':<22} {'numba_rs':>20} {'CPython':>20}")
    for name, args in cases:
        py = globals()[name](*args)
        jr = jitted[name](*args)
        print(f"{name + str(args):<22} {jr!r:>20} {py!r:>20}")
    print(f"{'fib(25)':<22} {jfib(25)!r:>20} {fib(25)!r:>20}")
    print("signatures of add:", [tuple(str(t) for t in s) for s in jitted["add"].signatures])

    # First-call latency of doloops in a fresh process (compile + run), median of 5.
    code = (
        "import time, numba_rs\n"
        "def doloops(n):\n    acc = 0\n    for i in range(n):\n        acc += 1\n        if n == 10:\n            break\n    return acc\n"
        "f = numba_rs.njit(doloops)\nt = time.perf_counter(); f(5); print(time.perf_counter() - t)\n"
    )
    firsts = sorted(float(subprocess.check_output([sys.executable, "-c", code]).decode()) for _ in range(5))
    print(f"first call of doloops (fresh process, median of 5): {firsts[2] * 1e3:.2f} ms")
    try:
        import numba  # noqa: F401

        ncode = code.replace("numba_rs", "numba")
        nfirsts = sorted(float(subprocess.check_output([sys.executable, "-c", ncode]).decode()) for _ in range(5))
        print(f"first call of doloops with Numba: {nfirsts[2] * 1e3:.2f} ms (ratio {nfirsts[2] / firsts[2]:.1f}x)")
    except ImportError:
        print("Numba is not installed here: no side-by-side figure")

    for name, func, args, reps in [("fib(20)", jfib, (20,), 20), ("hypot_sum(10**5)", jitted["hypot_sum"], (10**5,), 20)]:
        pyf = fib if name.startswith("fib") else hypot_sum
        t = time.perf_counter()
        for _ in range(reps):
            func(*args)
        jt = (time.perf_counter() - t) / reps
        t = time.perf_counter()
        for _ in range(3):
            pyf(*args)
        pt = (time.perf_counter() - t) / 3
        print(f"steady state {name:<18} numba_rs {jt * 1e6:10.1f} us   CPython {pt * 1e6:10.1f} us   speed-up {pt / jt:6.1f}x")
    print("numba_rs", numba_rs.__version__)


if __name__ == "__main__":
    main()
