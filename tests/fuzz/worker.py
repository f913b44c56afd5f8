"""Child process of the fuzzer: runs programs under CPython, numba_rs and Numba.

It reads one JSON program per line on stdin and answers on its original stdout: a
{"stage": ...} line before each stage (so that the parent can tell what a crash or hang
interrupted) and a {"result": ...} line per program. Everything else written to fd 1
(by compilers or programs) goes to stderr. One process runs many programs because
starting Python with NumPy and numba_rs costs far more than most programs.
"""

import cmath
import gc
import json
import linecache
import math
import os
import sys
import types
import warnings

import numpy as np

import numba_rs
from numba_rs.runtime import rtsys

from compare import agree, drift, outcome
from typed_names import jit_names, python_names

# Exceptions generated programs raise on purpose; any other from CPython is a generator bug.
INTENDED = {"ValueError", "ZeroDivisionError", "IndexError", "KeyError"}


def load(prog, prange, names, jit=None):
    """The program's namespace; with `jit`, its helper functions are compiled by it.
    `names` are the typed-container names (typed_names.py) of the run."""
    filename = f"<fuzz {prog['seed']}:{prog['index']}>"
    src = prog["source"]
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"np": np, "math": math, "cmath": cmath, "prange": prange, "__name__": "fuzzprog",
          **names}
    exec(compile(src, filename, "exec"), ns)
    if jit is not None:
        for name, v in list(ns.items()):
            if isinstance(v, types.FunctionType) and name != "f":
                ns[name] = jit(v)
    return ns


def args_of(prog, names):
    return eval(prog["args"], {"np": np, **names})


def run_jit(prog, module, errors):
    """Outcome of the program compiled by numba_rs or Numba (`module`); a compile error
    (an instance of `errors`) becomes ('refused', type name, message)."""
    names = jit_names(module)
    ns = load(prog, module.prange, names, module.njit)
    jf = module.njit(parallel=prog["parallel"])(ns["f"])
    try:
        res = outcome(jf, args_of(prog, names), prog["generator"], errors)
    finally:
        del jf, ns
    return res


def nrt_in_use():
    s = rtsys.get_allocation_stats()
    return s.alloc - s.free, s.mi_alloc - s.mi_free


class Oracle:
    """Numba 0.68.1, imported on first use (only differences need it)."""

    def __init__(self, enabled):
        self.enabled = enabled
        self.module = None

    def run(self, prog):
        if self.module is None:
            import numba
            self.module = numba
        errors = self.module.core.errors
        # UnsupportedBytecodeError (f-string format specs) is no NumbaError subclass.
        return run_jit(prog, self.module, (errors.NumbaError, errors.UnsupportedBytecodeError))


def run_program(prog, oracle, stage):
    """The verdict on one program (see README.md for the verdicts)."""
    stage("python")
    names = python_names()
    py = outcome(load(prog, range, names)["f"], args_of(prog, names), prog["generator"])
    res = {"py": py}
    if py[0] == "raise" and py[1] not in INTENDED:
        return dict(res, verdict="invalid")
    stage("numba_rs")
    gc.collect()
    before = nrt_in_use()
    rs = run_jit(prog, numba_rs, numba_rs.errors.NumbaError)
    gc.collect()
    after = nrt_in_use()
    res["rs"] = rs
    if after != before:
        return dict(res, verdict="leak", leak=[a - b for a, b in zip(after, before)])
    if agree(py, rs):
        return dict(res, verdict="ok")
    if not oracle.enabled:
        return dict(res, verdict="refused_no_oracle" if rs[0] == "refused" else "differs")
    stage("numba")
    nb = oracle.run(prog)
    res["numba"] = nb
    if rs[0] == "refused":
        return dict(res, verdict="refused_both" if nb[0] == "refused" else "refused")
    if agree(nb, rs):
        return dict(res, verdict="numba_compatible")
    return dict(res, verdict="float_drift" if drift(py, rs, nb) else "differs")


def main():
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    warnings.simplefilter("ignore")
    oracle = Oracle(enabled="--numba" in sys.argv)

    def send(msg):
        proto.write(json.dumps(msg, default=repr) + "\n")

    for line in sys.stdin:
        prog = json.loads(line)
        res = run_program(prog, oracle, lambda s: send({"stage": s}))
        # Outcomes travel as their repr: JSON would make tuples and lists look alike.
        send({"result": {k: repr(v)[:1500] if k in ("py", "rs", "numba") else v
                         for k, v in res.items()}})


if __name__ == "__main__":
    main()
