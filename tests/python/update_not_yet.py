"""Rewrite not_yet.txt from a fresh run: every test that fails today, with its error.

Run from the repository root with the project's venv: ``.venv/bin/python
tests/python/update_not_yet.py``. Review the diff: a line that disappears is a feature
that now works; a line that appears is a regression unless the test is new.
"""

import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).parent
TABLE = HERE / "not_yet.txt"
HEADER = TABLE.read_text().splitlines()[:3]

TABLE.write_text("\n".join(HEADER) + "\n")
run = subprocess.run(
    [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", str(HERE)],
    capture_output=True,
    text=True,
    env={"COLUMNS": "1000", **__import__("os").environ},
)
lines = list(HEADER)
for line in run.stdout.splitlines():
    if line.startswith("FAILED "):
        nodeid, _, why = line[len("FAILED ") :].partition(" - ")
        lines.append(f"{nodeid.split('/')[-1]}\t{why.strip() or 'fails'}")
TABLE.write_text("\n".join(lines) + "\n")
print(f"{len(lines) - len(HEADER)} tests listed as not implemented yet")
