"""Differential fuzzer: random well-typed programs run by CPython, numba_rs and Numba.

The modules import each other as top-level modules (`import gen`) because `run.py` and
`worker.py` run as scripts with this directory first on `sys.path`; see README.md.
"""
