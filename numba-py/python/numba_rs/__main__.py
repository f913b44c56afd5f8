"""``python -m numba_rs script.py [args...]``: run a program written for Numba on
numba-rs (``import numba`` gives numba-rs; see ``numba_rs.dropin``)."""

import runpy
import sys


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print("usage: python -m numba_rs script.py [args...]\n\nRuns script.py with "
              "'import numba' resolved to numba-rs.", file=sys.stderr)
        return 2
    from .dropin import install_as_numba

    install_as_numba()
    sys.argv = argv[1:]
    runpy.run_path(argv[1], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
