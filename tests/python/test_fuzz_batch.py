"""A fixed batch of the differential fuzzer (tests/fuzz): programs generated from seed
2026 must agree between CPython and numba_rs (or Numba must agree with numba_rs), with
no crash, hang, leak or refusal of something Numba compiles. The batch runs in
subprocesses, so this process's NRT counters are untouched."""

import subprocess
import sys
from pathlib import Path

RUN = Path(__file__).resolve().parents[1] / "fuzz" / "run.py"
SEED, COUNT = 2026, 700


def test_fuzz_batch(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(RUN), "--seed", str(SEED), "--count", str(COUNT), "--jobs", "2",
         "--out", str(tmp_path), "--minimise-seconds", "0", "--no-numba"],
        capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, (
        f"fuzz findings (rerun one with `python tests/fuzz/run.py --seed {SEED} --only N`):\n"
        + proc.stdout[-20000:] + proc.stderr[-5000:])
