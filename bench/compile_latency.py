"""Compile latency: how long the first call of a freshly defined `@njit` function takes,
for numba-rs and for Numba, over a corpus of kernels in four groups: scalar (ints,
floats, complex, tuples; loops, branches, recursion, math), array (element-wise loops,
2-d loops, array expressions, reductions, sorting), parallel (`parallel=True` with
`prange` and array expressions) and generator (generators consumed in compiled code).

Two measures, each per implementation:

- fresh process: each kernel runs in its own subprocess, which imports the
  implementation (timed), defines the kernel from its source text and times its first
  call (compile plus a run of microseconds). Medians per group and over all kernels.
- one process: every kernel defined and first-called one after another in a single
  process (the import not counted): the whole corpus's compile time, as a library's
  import or a long program pays it.

A kernel that fails is shown as FAILED with the first line of its error and left out
of the medians; results that differ between the two implementations are listed. Where
the dispatcher offers `get_metadata(sig)["pipeline_times"]`, the mean time of each pass
is printed (numba-rs's LLVM phases are the `llvm.*` entries, inside `llvm_optimise`
and `llvm_jit`).

    python bench/compile_latency.py [--impl numba_rs|numba|both] [--python PATH_FOR_NUMBA]

numba-rs runs under the project's .venv/bin/python; Numba under --python (default: the
same interpreter when it has numba, else /tmp/nvenv/bin/python). A missing or
non-importing implementation is skipped with a note.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RS_PYTHON = os.path.join(ROOT, ".venv", "bin", "python")
NUMBA_PYTHON = "/tmp/nvenv/bin/python"
TIMEOUT_S = 300

# (name, arguments as a Python expression, source defining `name` with @njit).
# The child evaluates the source and the arguments with `njit`, `prange`, `math` and
# `np` in scope. The scalar group first; ARRAY_KERNELS etc. follow.
KERNELS = [
    ("fib", "(20,)", """
        @njit
        def fib(n):
            if n < 2:
                return n
            return fib(n - 1) + fib(n - 2)
    """),
    ("gcd", "(1071, 462)", """
        @njit
        def gcd(a, b):
            while b != 0:
                a, b = b, a % b
            return a
    """),
    ("collatz_steps", "(27,)", """
        @njit
        def collatz_steps(n):
            steps = 0
            while n != 1:
                if n % 2 == 0:
                    n = n // 2
                else:
                    n = 3 * n + 1
                steps += 1
            return steps
    """),
    ("newton_sqrt", "(2.0,)", """
        @njit
        def newton_sqrt(x):
            guess = x / 2.0 if x > 1.0 else 1.0
            for _ in range(100):
                nxt = 0.5 * (guess + x / guess)
                if abs(nxt - guess) < 1e-15 * nxt:
                    return nxt
                guess = nxt
            return guess
    """),
    ("horner", "((2.0, -6.0, 2.0, -1.0), 3.5)", """
        @njit
        def horner(coeffs, x):
            acc = 0.0
            for c in coeffs:
                acc = acc * x + c
            return acc
    """),
    ("is_prime", "(1000003,)", """
        @njit
        def is_prime(n):
            if n < 2:
                return False
            if n % 2 == 0:
                return n == 2
            i = 3
            while i * i <= n:
                if n % i == 0:
                    return False
                i += 2
            return True
    """),
    ("mandel_complex", "(complex(-0.743, 0.131), 500)", """
        @njit
        def mandel_complex(c, max_iter):
            z = 0j
            for i in range(max_iter):
                z = z * z + c
                if z.real * z.real + z.imag * z.imag > 4.0:
                    return i
            return max_iter
    """),
    ("mandel_floats", "(-0.743, 0.131, 500)", """
        @njit
        def mandel_floats(cx, cy, max_iter):
            x = 0.0
            y = 0.0
            i = 0
            while i < max_iter and x * x + y * y <= 4.0:
                x, y = x * x - y * y + cx, 2.0 * x * y + cy
                i += 1
            return i
    """),
    ("trapezoid_sin", "(0.0, math.pi, 1000)", """
        @njit
        def trapezoid_sin(a, b, n):
            h = (b - a) / n
            total = 0.5 * (math.sin(a) + math.sin(b))
            for k in range(1, n):
                total += math.sin(a + k * h)
            return total * h
    """),
    ("pow_mod", "(7, 560, 561)", """
        @njit
        def pow_mod(base, exp, mod):
            result = 1
            base %= mod
            while exp > 0:
                if exp & 1:
                    result = result * base % mod
                base = base * base % mod
                exp >>= 1
            return result
    """),
    ("binomial", "(30, 12)", """
        @njit
        def binomial(n, k):
            if k < 0 or k > n:
                return 0
            k = min(k, n - k)
            c = 1
            for i in range(k):
                c = c * (n - i) // (i + 1)
            return c
    """),
    ("leap_years", "(1900, 2100)", """
        @njit
        def leap_years(start, stop):
            count = 0
            for y in range(start, stop):
                leap = (y % 4 == 0 and y % 100 != 0) or y % 400 == 0
                if leap:
                    count += 1
            return count
    """),
    ("happy_number", "(19,)", """
        @njit
        def happy_number(n):
            seen = 0
            while n != 1 and seen < 100:
                s = 0
                while n > 0:
                    d = n % 10
                    s += d * d
                    n //= 10
                n = s
                seen += 1
            return n == 1
    """),
    ("leibniz_pi", "(10000,)", """
        @njit
        def leibniz_pi(n):
            total = 0.0
            sign = 1.0
            for k in range(n):
                total += sign / (2 * k + 1)
                sign = -sign
            return 4.0 * total
    """),
    ("logistic_map", "(3.7, 0.2, 1000)", """
        @njit
        def logistic_map(r, x, n):
            for _ in range(n):
                x = r * x * (1.0 - x)
            return x
    """),
    ("bisect_cubic", "(1.0, 2.0, 1e-12)", """
        @njit
        def bisect_cubic(lo, hi, tol):
            flo = lo ** 3 - lo - 2.0
            while hi - lo > tol:
                mid = 0.5 * (lo + hi)
                fmid = mid ** 3 - mid - 2.0
                if (fmid < 0.0) == (flo < 0.0):
                    lo, flo = mid, fmid
                else:
                    hi = mid
            return 0.5 * (lo + hi)
    """),
    ("to_polar", "(3.0, -4.0)", """
        @njit
        def to_polar(x, y):
            return math.hypot(x, y), math.atan2(y, x)
    """),
    ("quadratic_roots", "(1.0, -3.0, 2.0)", """
        @njit
        def quadratic_roots(a, b, c):
            disc = b * b - 4.0 * a * c
            if disc < 0.0:
                return math.nan, math.nan
            root = math.sqrt(disc)
            q = -0.5 * (b + math.copysign(root, b))
            return q / a, c / q
    """),
    ("dot3", "((1.0, 2.0, 3.0), (4.0, -5.0, 6.0))", """
        @njit
        def dot3(u, v):
            return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]
    """),
    ("euler_decay", "(0.5, 1.0, 10.0, 10000)", """
        @njit
        def euler_decay(k, y0, t_end, steps):
            dt = t_end / steps
            y = y0
            for _ in range(steps):
                y -= k * y * dt
            return y, abs(y - y0 * math.exp(-k * t_end))
    """),
    ("kahan_basel", "(100000,)", """
        @njit
        def kahan_basel(n):
            total = 0.0
            comp = 0.0
            for k in range(1, n + 1):
                term = 1.0 / (k * k) - comp
                t = total + term
                comp = (t - total) - term
                total = t
            return total
    """),
]

ARRAY_KERNELS = [
    ("axpy", "(2.0, np.arange(1000.0), np.ones(1000))", """
        @njit
        def axpy(a, x, y):
            return (a * x + y).sum()
    """),
    ("row_sums", "(np.arange(12.0).reshape(3, 4),)", """
        @njit
        def row_sums(m):
            out = np.zeros(m.shape[0])
            for i in range(m.shape[0]):
                for j in range(m.shape[1]):
                    out[i] += m[i, j]
            return out
    """),
    ("standardize", "(np.arange(10.0),)", """
        @njit
        def standardize(a):
            return ((a - a.mean()) / a.std()).max()
    """),
    ("smooth3", "(np.arange(100.0) ** 2,)", """
        @njit
        def smooth3(a):
            out = np.empty_like(a)
            out[0] = a[0]
            out[-1] = a[-1]
            for i in range(1, a.shape[0] - 1):
                out[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0
            return out.sum()
    """),
    ("histogram", "(np.linspace(0.0, 1.0, 1000), 10)", """
        @njit
        def histogram(a, nbins):
            counts = np.zeros(nbins, dtype=np.int64)
            for x in a:
                k = min(int(x * nbins), nbins - 1)
                counts[k] += 1
            return counts.max()
    """),
    ("sorted_median", "(np.arange(101.0)[::-1].copy(),)", """
        @njit
        def sorted_median(a):
            s = np.sort(a)
            return s[s.shape[0] // 2]
    """),
    ("matvec", "(np.ones((8, 8)), np.arange(8.0))", """
        @njit
        def matvec(m, v):
            out = np.zeros(m.shape[0])
            for i in range(m.shape[0]):
                acc = 0.0
                for j in range(m.shape[1]):
                    acc += m[i, j] * v[j]
                out[i] = acc
            return out.sum()
    """),
    ("cumulative", "(np.arange(50.0),)", """
        @njit
        def cumulative(a):
            c = np.cumsum(a)
            return c[-1] + np.argmax(a)
    """),
]

PARALLEL_KERNELS = [
    ("psum", "(np.arange(10000.0),)", """
        @njit(parallel=True)
        def psum(a):
            s = 0.0
            for i in prange(a.shape[0]):
                s += a[i]
            return s
    """),
    ("pscale", "(np.arange(10000.0),)", """
        @njit(parallel=True)
        def pscale(a):
            out = np.empty_like(a)
            for i in prange(a.shape[0]):
                out[i] = 2.0 * a[i] + 1.0
            return out[-1]
    """),
    ("pexpr", "(np.arange(1000.0), np.ones(1000))", """
        @njit(parallel=True)
        def pexpr(a, b):
            return np.sqrt(a * a + b * b).sum()
    """),
    ("pmandel", "(32, 24, 50)", """
        @njit(parallel=True)
        def pmandel(w, h, max_iter):
            out = np.zeros((h, w), dtype=np.int64)
            for y in prange(h):
                for x in range(w):
                    c = complex(-2.0 + 3.0 * x / w, -1.0 + 2.0 * y / h)
                    z = 0j
                    n = 0
                    while n < max_iter and abs(z) <= 2.0:
                        z = z * z + c
                        n += 1
                    out[y, x] = n
            return out.sum()
    """),
]

GENERATOR_KERNELS = [
    ("sum_squares_gen", "(1000,)", """
        @njit
        def squares(n):
            for i in range(n):
                yield i * i

        @njit
        def sum_squares_gen(n):
            s = 0
            for v in squares(n):
                s += v
            return s
    """),
    ("fib_gen", "(30,)", """
        @njit
        def fibs(n):
            a, b = 0, 1
            for _ in range(n):
                yield a
                a, b = b, a + b

        @njit
        def fib_gen(n):
            last = 0
            for v in fibs(n):
                last = v
            return last
    """),
    ("positive_gen", "(np.arange(-50.0, 50.0),)", """
        @njit
        def positives(a):
            for x in a:
                if x > 0.0:
                    yield x

        @njit
        def positive_gen(a):
            s = 0.0
            for x in positives(a):
                s += x
            return s
    """),
]

GROUPS = [
    ("scalar", KERNELS),
    ("array", ARRAY_KERNELS),
    ("parallel", PARALLEL_KERNELS),
    ("generator", GENERATOR_KERNELS),
]
ALL_KERNELS = [(group, k) for group, ks in GROUPS for k in ks]

# Runs in the fresh process: argv = implementation, kernel name, source, arguments.
# Prints one JSON object on stdout.
CHILD = r"""
import importlib, json, math, sys, time

impl, name, source, args_text = sys.argv[1:]
t0 = time.perf_counter()
mod = importlib.import_module(impl)
import_s = time.perf_counter() - t0
import numpy as np


def flatten(times):
    # numba-rs: pass -> seconds; Numba: pipeline -> pass -> (init, run, finalize).
    out = {}
    for key, val in times.items():
        if isinstance(val, dict):
            out.update(flatten(val))
        else:
            out[key] = sum(val) if isinstance(val, tuple) else val
    return out


try:
    ns = {"njit": mod.njit, "prange": mod.prange, "math": math, "np": np}
    exec(compile(source, "<" + name + ">", "exec"), ns)
    args = eval(args_text, {"math": math, "np": np})
    disp = ns[name]
    t0 = time.perf_counter()
    result = disp(*args)
    first_s = time.perf_counter() - t0
except Exception as e:
    lines = str(e).strip().splitlines()
    print(json.dumps({"error": type(e).__name__ + (": " + lines[0] if lines else "")}))
    sys.exit(0)
try:
    times = disp.get_metadata(disp.signatures[0]).get("pipeline_times")
except AttributeError:
    times = None
print(json.dumps({"import_s": import_s, "first_s": first_s, "result": repr(result),
                  "passes": flatten(times) if times else None}))
"""


def probe(python, impl):
    """The implementation's version, or the reason it cannot be used."""
    if not os.path.exists(python):
        return None, f"no interpreter at {python}"
    proc = subprocess.run([python, "-I", "-c", f"import {impl}; print({impl}.__version__)"],
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        return None, f"`import {impl}` fails under {python}: {lines[-1] if lines else '?'}"
    return proc.stdout.strip(), None


def run_kernel(python, impl, name, args_text, source):
    """One fresh process: a dict with first_s, import_s, result, passes; or with error."""
    cmd = [python, "-I", "-c", CHILD, impl, name, textwrap.dedent(source), args_text]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S,
                              cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {TIMEOUT_S} s"}
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        return {"error": f"process exited with {proc.returncode}: {lines[-1] if lines else ''}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# Runs every kernel in one fresh process: stdin = JSON list of [name, source, args];
# prints one JSON object {name: first-call seconds or "error"} plus "total_s".
CORPUS_CHILD = r"""
import importlib, json, math, sys, time
impl = sys.argv[1]
mod = importlib.import_module(impl)
import numpy as np
kernels = json.load(sys.stdin)
out = {}
total = 0.0
for name, source, args_text in kernels:
    try:
        ns = {"njit": mod.njit, "prange": mod.prange, "math": math, "np": np}
        exec(compile(source, "<" + name + ">", "exec"), ns)
        args = eval(args_text, {"math": math, "np": np})
        t0 = time.perf_counter()
        ns[name](*args)
        took = time.perf_counter() - t0
        out[name] = took
        total += took
    except Exception as e:
        out[name] = "error: " + type(e).__name__
out["total_s"] = total
print(json.dumps(out))
"""


def run_corpus(python, impl):
    """All kernels in one process: {name: seconds or error text, "total_s": sum}."""
    payload = json.dumps([[name, textwrap.dedent(src), args]
                          for _, (name, args, src) in ALL_KERNELS])
    try:
        proc = subprocess.run([python, "-I", "-c", CORPUS_CHILD, impl], input=payload,
                              capture_output=True, text=True, timeout=TIMEOUT_S, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {TIMEOUT_S} s"}
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        return {"error": f"process exited with {proc.returncode}: {lines[-1] if lines else ''}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def compiled(results):
    return [r for r in results.values() if "error" not in r]


def report(impl, version, python, results):
    ok = compiled(results)
    print(f"\n{impl} {version} ({python}): {len(ok)}/{len(results)} kernels compiled")
    for name, r in results.items():
        if "error" in r:
            print(f"  FAILED {name}: {r['error']}")
    if ok:
        print(f"  median first call {statistics.median(r['first_s'] for r in ok) * 1e3:.1f} ms, "
              f"median import {statistics.median(r['import_s'] for r in ok) * 1e3:.1f} ms")
    timed = [r["passes"] for r in ok if r["passes"]]
    if not timed:
        print("  no per-pass timings (dispatcher.get_metadata(sig)['pipeline_times'])")
        return
    names = list(dict.fromkeys(p for passes in timed for p in passes))
    print(f"  mean per-pass time over {len(timed)} kernels:")
    for p in names:
        print(f"    {p:<44} {statistics.mean(t.get(p, 0.0) for t in timed) * 1e3:9.3f} ms")
    # The `llvm.*` phases lie inside llvm_optimise and llvm_jit: not summed again.
    print(f"    {'(sum of passes)':<44} "
          f"{statistics.mean(sum(v for k, v in t.items() if not k.startswith('llvm.')) for t in timed) * 1e3:9.3f} ms")


def cell(r):
    return "FAILED" if "error" in r else f"{r['first_s'] * 1e3:.1f}"


def table(runs):
    """First-call ms per kernel side by side, with Numba / numba-rs when both ran."""
    impls = list(runs)
    both = impls == ["numba_rs", "numba"]
    header = f"{'kernel':<18}" + "".join(f"{i + ' ms':>14}" for i in impls)
    print("\n" + header + (f"{'numba/numba_rs':>16}" if both else ""))
    common = {}
    for group, (name, _, _) in ALL_KERNELS:
        rs = [runs[i][name] for i in impls]
        line = f"{name:<18}" + "".join(f"{cell(r):>14}" for r in rs)
        if both and not any("error" in r for r in rs):
            line += f"{rs[1]['first_s'] / rs[0]['first_s']:>15.2f}x"
            common.setdefault(group, []).append(name)
        print(line)
    if not common:
        return
    print()
    everything = [n for names in common.values() for n in names]
    for label, names in [*common.items(), ("all", everything)]:
        medians = [statistics.median(runs[i][n]["first_s"] for n in names) for i in impls]
        print(f"{'median ' + label:<18}" + "".join(f"{m * 1e3:>14.1f}" for m in medians)
              + f"{medians[1] / medians[0]:>15.2f}x  ({len(names)} kernels)")
    for name in everything:
        if runs["numba_rs"][name]["result"] != runs["numba"][name]["result"]:
            print(f"  result differs for {name}: numba_rs {runs['numba_rs'][name]['result']}, "
                  f"numba {runs['numba'][name]['result']}")


def corpus_table(corpora):
    """The whole corpus compiled in one process, per implementation."""
    print("\nwhole corpus in one process (first calls one after another, import excluded):")
    for impl, r in corpora.items():
        if "error" in r:
            print(f"  {impl}: FAILED {r['error']}")
            continue
        failed = [n for n, v in r.items() if isinstance(v, str)]
        print(f"  {impl}: {r['total_s'] * 1e3:.1f} ms for {len(r) - 1 - len(failed)} kernels"
              + (f" ({len(failed)} failed: {', '.join(failed)})" if failed else ""))
    if set(corpora) == {"numba_rs", "numba"} and all("error" not in r for r in corpora.values()):
        rs, nb = corpora["numba_rs"], corpora["numba"]
        both = [n for n in rs if n != "total_s" and isinstance(rs[n], float)
                and isinstance(nb.get(n), float)]
        t_rs, t_nb = sum(rs[n] for n in both), sum(nb[n] for n in both)
        print(f"  over the {len(both)} kernels both compile: numba_rs {t_rs * 1e3:.1f} ms, "
              f"numba {t_nb * 1e3:.1f} ms: {t_nb / t_rs:.2f}x")


def default_numba_python():
    probe_rs = subprocess.run([RS_PYTHON, "-c", "import numba"], capture_output=True)
    return RS_PYTHON if probe_rs.returncode == 0 else NUMBA_PYTHON


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--impl", choices=["numba_rs", "numba", "both"], default="both")
    parser.add_argument("--python", default=None,
                        help="interpreter with numba installed (default: see above)")
    opts = parser.parse_args()
    pythons = {"numba_rs": RS_PYTHON, "numba": opts.python or default_numba_python()}
    impls = ["numba_rs", "numba"] if opts.impl == "both" else [opts.impl]
    runs = {}
    corpora = {}
    for impl in impls:
        version, why_not = probe(pythons[impl], impl)
        if why_not:
            print(f"skipping {impl}: {why_not}")
            continue
        results = {}
        for _, (name, args_text, source) in ALL_KERNELS:
            results[name] = run_kernel(pythons[impl], impl, name, args_text, source)
            print(f"  {impl} {name}: {cell(results[name])}", file=sys.stderr, flush=True)
        report(impl, version, pythons[impl], results)
        runs[impl] = results
        corpora[impl] = run_corpus(pythons[impl], impl)
    if runs:
        table(runs)
        corpus_table(corpora)
    return 0 if runs else 1


if __name__ == "__main__":
    sys.exit(main())
