"""Differential fuzzer CLI: generate programs, run them in worker processes, report.

    .venv/bin/python tests/fuzz/run.py [--seed S] [--count K] [--minutes M] [--jobs J]
                                        [--out DIR] [--numba | --no-numba] [--only I,...]

Exits 1 when a program differs, crashes, hangs, leaks or is refused where Numba compiles
it (a finding); each finding is minimised and written to DIR as a standalone script.
`cargo xtask fuzz` calls this script. README.md describes the verdicts.
"""

import argparse
import collections
import importlib.util
import itertools
import os
import random
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gen  # noqa: E402
from minimise import minimise, reproducer  # noqa: E402
from pool import Worker  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FINDINGS = ("differs", "refused", "crash", "hang", "leak")


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, help="run seed (default: random, printed)")
    p.add_argument("--count", type=int, help="programs to run (default 300 without --minutes)")
    p.add_argument("--minutes", type=float, help="stop starting programs after this long")
    p.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--out", type=Path, default=ROOT / "target" / "fuzz",
                   help="where reproducers go (default target/fuzz)")
    p.add_argument("--numba", action=argparse.BooleanOptionalAction,
                   help="judge differences with Numba (default: when importable)")
    p.add_argument("--timeout", type=float, default=20.0, help="seconds per stage of a program")
    p.add_argument("--only", help="comma-separated program indices to run (and print)")
    p.add_argument("--minimise-seconds", type=float, default=120.0,
                   help="time to shrink each finding (0: write it unshrunk)")
    a = p.parse_args(argv)
    if a.seed is None:
        a.seed = random.randrange(1, 2**31)
    if a.numba is None:
        a.numba = importlib.util.find_spec("numba") is not None
    if a.count is None and a.minutes is None:
        a.count = 300
    return a


def run_all(a, indices):
    """Run programs `indices` (an iterator) on `a.jobs` workers; [(program, result)]."""
    results, lock = [], threading.Lock()
    stop = time.monotonic() + a.minutes * 60 if a.minutes else None
    started = time.monotonic()

    def work():
        w = Worker(a.numba, a.timeout)
        try:
            while stop is None or time.monotonic() < stop:
                with lock:
                    i = next(indices, None)
                if i is None:
                    return
                prog = gen.generate(a.seed, i)
                res = w.run(prog.to_json())
                with lock:
                    results.append((prog, res))
                    n = len(results)
                    if n % 100 == 0:
                        bad = sum(r["verdict"] in FINDINGS for _, r in results)
                        print(f"  {n} programs, {bad} findings, "
                              f"{time.monotonic() - started:.0f} s", flush=True)
        finally:
            w.close()

    threads = [threading.Thread(target=work) for _ in range(a.jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(results, key=lambda pr: pr[0].index)


def brief(res):
    """One line per outcome: what CPython, numba_rs and Numba did."""
    parts = []
    for key, who in (("py", "cpython"), ("rs", "numba_rs"), ("numba", "numba")):
        if key in res:
            parts.append(f"{who}: {res[key][:400]}")
    if "detail" in res:
        parts.append(res["detail"][-600:])
    if "leak" in res:
        parts.append(f"NRT allocations not freed (alloc, mi_alloc): {res['leak']}")
    return "\n    ".join(parts)


def write_findings(a, findings):
    """Minimise each finding (in parallel) and write its reproducer; [(prog, res, path)]."""
    a.out.mkdir(parents=True, exist_ok=True)
    todo, out, lock = list(findings), [], threading.Lock()

    def work():
        w = Worker(a.numba, a.timeout)
        try:
            while True:
                with lock:
                    if not todo:
                        return
                    prog, res = todo.pop(0)
                p = prog.to_json()
                if a.minimise_seconds > 0:
                    p["source"] = minimise(p, res["verdict"], lambda q: w.run(q)["verdict"],
                                           a.minimise_seconds)
                path = a.out / f"{prog.seed}-{prog.index}-{res['verdict']}.py"
                note = "Unminimised outcome:\n    " + brief(res).replace('"""', "'''")
                path.write_text(reproducer(p, res["verdict"], path, note))
                with lock:
                    out.append((prog, res, path))
        finally:
            w.close()

    threads = [threading.Thread(target=work) for _ in range(a.jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(out, key=lambda x: x[0].index)


def _first_line(outcome_repr):
    """The start of a refusal's message, for counting refusals by reason."""
    return outcome_repr.split("\\n")[0][:120]


def report(a, results, written, seconds):
    by_cat = collections.defaultdict(collections.Counter)
    for prog, res in results:
        by_cat[prog.category][res["verdict"]] += 1
    total = collections.Counter()
    for c in by_cat.values():
        total.update(c)
    print(f"\nseed {a.seed}: {len(results)} programs in {seconds:.0f} s "
          f"({len(results) / max(seconds, 1e-9):.1f}/s, {a.jobs} jobs, "
          f"Numba oracle {'on' if a.numba else 'off'})")
    for cat in sorted(by_cat):
        print(f"  {cat:<10} {sum(by_cat[cat].values()):>5}  " +
              ", ".join(f"{v} {n}" for v, n in sorted(by_cat[cat].items())))
    print("  total      " + ", ".join(f"{v} {n}" for v, n in sorted(total.items())))
    reasons = collections.Counter(_first_line(r["rs"]) for _, r in results
                                  if r["verdict"] in ("refused_both", "refused_no_oracle"))
    for reason, n in reasons.most_common(8):
        print(f"  refused {n:>4}: {reason}")
    invalid = [(p, r) for p, r in results if r["verdict"] == "invalid"]
    for prog, res in invalid[:5]:
        print(f"\ninvalid program (a generator bug) {prog.name}:\n{prog.source}    {brief(res)}")
    print(f"\n{len(written)} findings")
    for prog, res, path in written:
        print(f"- {res['verdict']} {prog.name} ({prog.category}): {path}\n    {brief(res)}")


def main(argv=None):
    a = parse(argv)
    print(f"fuzz seed {a.seed}", flush=True)
    if a.only:
        indices = iter(int(i) for i in a.only.split(","))
    else:
        indices = itertools.count() if a.count is None else iter(range(a.count))
    t0 = time.monotonic()
    results = run_all(a, indices)
    seconds = time.monotonic() - t0
    if a.only:
        for prog, res in results:
            print(f"\n# program {prog.name} ({prog.category}): {res['verdict']}\n"
                  f"# args: {prog.args}\n{prog.source}    {brief(res)}")
    findings = [(p, r) for p, r in results if r["verdict"] in FINDINGS]
    written = write_findings(a, findings)
    report(a, results, written, seconds)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
