"""Worker processes with a time limit per stage, restarted after a crash or a hang.

A segfault or an endless loop in compiled code must cost one program, not the run: the
parent watches each worker's answers with a deadline, and what the worker was doing when
it died or stalled (its last reported stage) says whose failure it was.
"""

import json
import os
import select
import subprocess
import sys
import tempfile
import time

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker.py")

# Verdicts for a worker that died or stalled, by the stage it was in.
CRASH = {"python": "invalid", "numba_rs": "crash", "numba": "oracle_failed"}
HANG = {"python": "invalid", "numba_rs": "hang", "numba": "oracle_failed"}


class Worker:
    """One child process (worker.py) running programs one at a time."""

    def __init__(self, numba, timeout):
        self.args = [sys.executable, WORKER] + (["--numba"] if numba else [])
        self.timeout = timeout
        self.proc = None
        self.buf = b""

    def _start(self):
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(self.args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, bufsize=0)
        self.buf = b""

    def close(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.stderr.close()
            self.proc = None

    def _stderr_tail(self, start):
        self.stderr.seek(start)
        return self.stderr.read().decode(errors="replace")[-3000:]

    def _line(self, deadline):
        """The next line from the worker, or None on EOF or when the deadline passes."""
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def run(self, prog, timeout=None):
        """The worker's result dict for `prog` (a dict), always with a "verdict"."""
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        err_start = self.stderr.seek(0, os.SEEK_END)
        self.proc.stdin.write((json.dumps(prog) + "\n").encode())
        stage = "python"
        while True:
            msg = self._line(time.monotonic() + (timeout or self.timeout))
            if msg is None:
                rc = self.proc.poll()
                detail = self._stderr_tail(err_start)
                self.close()
                if rc is None:
                    return {"verdict": HANG[stage], "detail": f"no answer in {stage} stage"}
                return {"verdict": CRASH[stage], "detail": f"exit status {rc}\n{detail}"}
            if "stage" in msg:
                stage = msg["stage"]
                continue
            return msg["result"]
