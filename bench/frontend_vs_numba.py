"""Numba's bytecode front end (ByteCode + Flow + AdaptCFA) on the fixture corpus, in
instructions per second, to set beside `cargo bench -p numba-bytecode --bench frontend`
(`frontend/analyze` does the same work: decode, stack dataflow, CFG analyses).

Run with a Python that has Numba 0.68.1:  python bench/frontend_vs_numba.py
"""
import glob
import marshal
import os
import sys
import time
import types

from numba.core.bytecode import ByteCode, FunctionIdentity
from numba.core.byteflow import AdaptCFA, Flow

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load():
    funcs = []
    for path in sorted(glob.glob(os.path.join(ROOT, "tests/fixtures/blobs/*.marshal"))):
        with open(path, "rb") as f:
            code = marshal.loads(f.read())
        closure = tuple(types.CellType(None) for _ in code.co_freevars) or None
        fn = types.FunctionType(code, {}, code.co_name, None, closure)
        try:
            fid = FunctionIdentity.from_function(fn)
            AdaptCFA(_run(fid))
        except Exception:
            continue
        funcs.append(fn)
    return funcs


def _run(fid):
    flow = Flow(ByteCode(fid))
    flow.run()
    return flow


def main():
    funcs = load()
    fids = [FunctionIdentity.from_function(f) for f in funcs]
    ninst = sum(len(ByteCode(fid).table) for fid in fids)
    best = float("inf")
    for _ in range(7):
        t0 = time.perf_counter()
        for fid in fids:
            cfa = AdaptCFA(_run(fid))
            cfa.graph.dominators()
        best = min(best, time.perf_counter() - t0)
    print(f"numba front end: {len(fids)} functions, {ninst} instructions, "
          f"{best * 1e3:.2f} ms per pass, {ninst / best / 1e3:.0f} K instructions/s")

    # Bytecode -> IR -> post-processing (what `cargo bench -p numba-ir --bench ir`
    # measures as ir/interpret).
    from numba.core import interpreter, postproc

    def builds(fid):
        try:
            interpreter.Interpreter(fid).interpret(ByteCode(fid))
            return True
        except Exception:
            return False

    ir_fids = [fid for fid in fids if builds(fid)]
    best = float("inf")
    for _ in range(7):
        t0 = time.perf_counter()
        for fid in ir_fids:
            func_ir = interpreter.Interpreter(fid).interpret(ByteCode(fid))
            postproc.PostProcessor(func_ir).run()
        best = min(best, time.perf_counter() - t0)
    print(f"numba interpreter + post-processing: {len(ir_fids)} functions, "
          f"{best * 1e3:.2f} ms per pass, {best / len(ir_fids) * 1e6:.0f} us per function")


if __name__ == "__main__":
    sys.exit(main())
