"""The autouse NRT-balance fixture in conftest.py must catch a real leak: run it, in a
child pytest, over one test that keeps an NRT-allocated array alive past its end and one
that does not."""

import pathlib
import shutil
import subprocess
import sys

LEAKY = '''
import numpy as np
from numba_rs import njit

KEPT = []

def test_leaks():
    KEPT.append(njit(lambda n: np.zeros(n))(4))

def test_balanced():
    assert njit(lambda n: np.zeros(n).sum())(4) == 0.0
'''


def test_fixture_fails_a_test_that_leaks(tmp_path):
    here = pathlib.Path(__file__).parent
    shutil.copy(here / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "not_yet.txt").write_text("")
    (tmp_path / "test_leaky.py").write_text(LEAKY)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(tmp_path)], capture_output=True, text=True, cwd=tmp_path,
                         timeout=300)
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "2 passed, 1 error" in out, out
    assert "NRT leak: 1 allocations, 0 frees" in out, out
    assert "ERROR at teardown of test_leaks" in out and "test_balanced" not in out, out
