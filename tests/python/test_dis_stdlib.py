"""The Rust front end's `dis` listing against CPython's own `dis.dis`, on standard-library
code nobody here wrote: every code object of each module below, nested ones included.

Two differences are normalised away because CPython's own output varies between runs:
code-object addresses (`at 0x7f...`) and the element order inside `frozenset({...})`
(string hashes are randomised per process; we print marshal's order).
"""

import dis
import importlib.util
import io
import marshal
import re
import types

import pytest

from numba_rs import _numba_rs

MODULES = [
    "textwrap", "difflib", "json.decoder", "heapq", "bisect", "fractions", "statistics",
    "random", "shlex", "base64", "calendar", "datetime", "ipaddress", "csv", "copy",
    "functools", "argparse", "tokenize", "pprint", "dataclasses", "enum", "inspect",
    "typing", "pathlib", "zipfile", "asyncio.tasks", "email.message", "http.client",
    "unittest.case", "logging",
]

ADDRESS = re.compile(r" at 0x[0-9a-f]+")
FROZENSET = re.compile(r"frozenset\(\{(.*?)\}\)")


def normalise(text):
    text = ADDRESS.sub(" at 0x?", text)
    return FROZENSET.sub(lambda m: "frozenset({%s})" % ", ".join(sorted(m.group(1).split(", "))), text)


def code_objects(module_name):
    spec = importlib.util.find_spec(module_name)
    with open(spec.origin, encoding="utf-8") as f:
        top = compile(f.read(), spec.origin, "exec")
    yield top
    stack = [top]
    while stack:
        code = stack.pop()
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                yield const
                stack.append(const)


@pytest.mark.parametrize("module_name", MODULES)
def test_listing_matches_dis(module_name):
    count = 0
    for code in code_objects(module_name):
        expected = io.StringIO()
        dis.disassemble(code, file=expected)
        # dis_text recurses into nested code like dis.dis; compare the first code object only
        # (nested ones are checked on their own iteration).
        ours = _numba_rs.dis_text(marshal.dumps(code))
        head = ours.split("\nDisassembly of ", 1)[0]
        assert normalise(head) == normalise(expected.getvalue()), code.co_qualname
        count += 1
    assert count >= 2


def test_bad_marshal_data_is_a_value_error():
    with pytest.raises(ValueError):
        _numba_rs.dis_text(b"\xe3\x00\x00")
    with pytest.raises(ValueError):
        _numba_rs.dis_text(marshal.dumps(1))
