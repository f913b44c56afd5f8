"""Numba's type inference time per function on the NumPy fixtures, to set beside
`cargo bench -p numba-typeinfer --bench infer` (which times only `infer` on prebuilt IR).

Numba records each compiler pass's time in the compile result's metadata; this sums the
`nopython_type_inference` pass over the fixtures (median of 5 fresh compilations each).

Run with a Python that has Numba 0.68.1 and SciPy:  python bench/typeinfer_vs_numba.py
"""
import importlib.util
import os
import statistics

import numba
from numba.core import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    spec = importlib.util.spec_from_file_location(
        "arrays", os.path.join(ROOT, "tests/fixtures/arrays.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    per_function = []
    for name, sig_text in mod.ARG_TYPES.items():
        argtys = eval("(" + sig_text + ",)", dict(vars(types)))
        samples = []
        for _ in range(5):
            disp = numba.njit(argtys)(getattr(mod, name))
            cres = disp.overloads[disp.nopython_signatures[0].args]
            times = cres.metadata["pipeline_times"]["nopython"]
            key = next(k for k in times if k.endswith("_nopython_type_inference"))
            samples.append(times[key].run)
        per_function.append(statistics.median(samples))
    total = sum(per_function)
    print(f"numba type inference: {len(per_function)} functions, {total * 1e3:.2f} ms in all, "
          f"{total / len(per_function) * 1e6:.0f} us per function")


if __name__ == "__main__":
    main()
