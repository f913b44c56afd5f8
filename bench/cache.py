"""`cache=True`: the time a fresh process takes to get its first results when the cache
is empty (compile and save) and when it is full (load), for numba-rs and, when
importable, Numba, in one run on this machine.

    python bench/cache.py [repeats]

A module of six kernels (scalar loops, array expressions, a callee, a parallel loop, a
raise) is written to a temporary directory; each sample runs a fresh interpreter that
imports it and calls every kernel once, timing from just before the import to the last
result (the interpreter's and the compiler package's own start-up are excluded). "cold"
deletes the cache first; "warm" reuses what the previous run saved. Figures are the
median of `repeats` samples (default 5); "speed-up" is cold over warm.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap

MODULE = textwrap.dedent('''
    import numpy as np
    from {pkg} import njit, prange

    @njit(cache=True)
    def helper(x):
        return np.sqrt(x) + 1.0

    @njit(cache=True)
    def loop(a, b):
        s = 0.0
        for i in range(a.shape[0]):
            s += helper(a[i] * b[i]) + np.sin(a[i])
        return s

    @njit(cache=True)
    def expr(a, b):
        return (np.exp(-a) * b + a * a).sum()

    @njit(cache=True)
    def matmul_rows(m):
        out = np.empty(m.shape[0])
        for i in range(m.shape[0]):
            out[i] = np.dot(m[i], m[i])
        return out

    @njit(cache=True, parallel=True)
    def psum(a):
        s = 0.0
        for i in prange(a.shape[0]):
            s += a[i] * 2.0
        return s

    @njit(cache=True)
    def checked(x):
        if x < 0:
            raise ValueError("negative", x)
        return x * 2
''')

DRIVER = textwrap.dedent('''
    import sys, time
    import numpy as np
    import {pkg}
    sys.path.insert(0, {path!r})
    t = time.perf_counter()
    import kernels as k
    a = np.linspace(0.0, 1.0, 1000); b = a[::-1].copy()
    k.loop(a, b); k.expr(a, b); k.matmul_rows(np.ones((4, 4))); k.psum(a); k.checked(3)
    print(time.perf_counter() - t)
''')


def sample(pkg, path, cold):
    if cold:
        shutil.rmtree(os.path.join(path, "__pycache__"), ignore_errors=True)
    out = subprocess.run([sys.executable, "-c", DRIVER.format(pkg=pkg, path=path)],
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def measure(pkg, repeats):
    path = tempfile.mkdtemp(prefix=f"cache-bench-{pkg}-")
    with open(os.path.join(path, "kernels.py"), "w") as f:
        f.write(MODULE.format(pkg=pkg))
    cold = statistics.median(sample(pkg, path, True) for _ in range(repeats))
    sample(pkg, path, True)  # fill the cache
    warm = statistics.median(sample(pkg, path, False) for _ in range(repeats))
    shutil.rmtree(path, ignore_errors=True)
    return cold, warm


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    pkgs = ["numba_rs"]
    try:
        import numba  # noqa: F401

        pkgs.append("numba")
    except ImportError:
        pass
    rows = {pkg: measure(pkg, repeats) for pkg in pkgs}
    print(f"{'compiler':10} {'cold (ms)':>10} {'warm (ms)':>10} {'speed-up':>9}")
    for pkg, (cold, warm) in rows.items():
        print(f"{pkg:10} {cold * 1e3:10.1f} {warm * 1e3:10.1f} {cold / warm:8.2f}x")
    if "numba" in rows:
        (rc, rw), (nc, nw) = rows["numba_rs"], rows["numba"]
        print(f"numba / numba-rs: cold {nc / rc:.2f}x, warm {nw / rw:.2f}x")


if __name__ == "__main__":
    main()
