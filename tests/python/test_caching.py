"""``cache=True``: compiled code saved beside the source and loaded by a later process.

Each test writes a module to a temporary directory and runs it in fresh interpreters:
the first run compiles and saves, the next loads. The oracle for every result is the
plain Python function (``py_func``) run in the same child; each child also checks that
its NRT allocations balance, and reports its cache hits and misses.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

MODULE = '''
import numpy as np
import numba_rs as nb

@nb.njit(cache=True)
def helper(x):
    return np.sqrt(x) + 1.0

@nb.njit(cache=True)
def dot_sqrt(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        s += helper(a[i] * b[i]) + np.sin(a[i])
    return s

@nb.njit(cache=True)
def scaled(n, k):
    return np.arange(n) * k

@nb.njit(cache=True)
def checked(x):
    if x < 0:
        raise ValueError("negative:", x)
    return x * 2

@nb.njit(cache=True, parallel=True)
def psum(a):
    s = 0.0
    for i in nb.prange(a.shape[0]):
        s += a[i] * 2.0
    return s

@nb.njit(cache=True)
def pair(x):
    return (x, x + 0.5), True
'''

DRIVER = '''
import json, sys, warnings
import numpy as np
sys.path.insert(0, {path!r})
from numba_rs.runtime import rtsys
warnings.simplefilter("always")
import {module} as m

def run(f, *args):
    try:
        return repr(f(*args))
    except Exception as e:
        return type(e).__name__ + repr(e.args)

before = rtsys.get_allocation_stats()
out = {{}}
caught = []
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
{calls}
    caught = [str(x.message) for x in w]
after = rtsys.get_allocation_stats()
out["_balanced"] = (after.alloc - before.alloc == after.free - before.free
                    and after.mi_alloc - before.mi_alloc == after.mi_free - before.mi_free)
out["_warnings"] = caught
out["_stats"] = {{name: [sum(f.stats.cache_hits.values()), sum(f.stats.cache_misses.values())]
                 for name, f in vars(m).items() if hasattr(f, "stats")}}
print(json.dumps(out))
'''

CALLS = '''
    a = np.linspace(0.0, 1.0, 257); b = a[::-1].copy()
    for name, args in [("dot_sqrt", (a, b)), ("scaled", (5, 2.5)), ("scaled", (4, 3)),
                       ("checked", (21,)), ("checked", (-3,)), ("psum", (a,)),
                       ("pair", (1.5,))]:
        f = getattr(m, name)
        key = name + repr([type(x).__name__ for x in args])
        out[key] = [run(f, *args), run(f.py_func, *args)]
'''


def run_child(tmp_path, module, calls, env=None):
    driver = DRIVER.format(path=str(tmp_path), module=module, calls=textwrap.indent(
        textwrap.dedent(calls).strip("\n"), "    "))
    full_env = dict(os.environ, **(env or {}))
    proc = subprocess.run([sys.executable, "-X", "faulthandler", "-c", driver], capture_output=True, text=True,
                          env=full_env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def check_results(out):
    assert out.pop("_balanced") is True
    out.pop("_warnings")
    out.pop("_stats")
    for key, (jitted, python) in out.items():
        if key.startswith("dot_sqrt") or key.startswith("psum"):
            py = python.removeprefix("np.float64(").removesuffix(")")
            assert float(jitted) == pytest.approx(float(py), rel=1e-12), key
        else:
            assert jitted.replace("array(", "").replace(")", "") == python.replace(
                "array(", "").replace(")", ""), key


def write(tmp_path, name, text):
    (tmp_path / f"{name}.py").write_text(text)


def test_second_process_loads_what_the_first_saved(tmp_path):
    write(tmp_path, "cmod", MODULE)
    first = run_child(tmp_path, "cmod", CALLS)
    assert first["_warnings"] == []
    stats = first["_stats"]
    # Every function compiled once per signature and was saved.
    assert stats["dot_sqrt"] == [0, 1] and stats["scaled"] == [0, 2]
    assert stats["checked"] == [0, 1] and stats["psum"] == [0, 1] and stats["pair"] == [0, 1]
    files = sorted(os.listdir(tmp_path / "__pycache__"))
    assert "cmod.scaled-16.py311.nbri" in files
    assert "cmod.scaled-16.py311.0.nbrc" in files and "cmod.scaled-16.py311.1.nbrc" in files
    second = run_child(tmp_path, "cmod", CALLS)
    stats = second["_stats"]
    assert stats["dot_sqrt"] == [1, 0] and stats["scaled"] == [2, 0]
    assert stats["checked"] == [1, 0] and stats["psum"] == [1, 0] and stats["pair"] == [1, 0]
    # (helper is loaded too: the plain-Python oracle calls it.)
    # Loaded code gives what compiled code gave.
    assert {k: v for k, v in first.items() if k != "_stats"} == {
        k: v for k, v in second.items() if k != "_stats"}
    check_results(second)


def test_editing_the_source_invalidates(tmp_path):
    write(tmp_path, "emod", MODULE)
    run_child(tmp_path, "emod", CALLS)
    # Same functions, another file stamp: everything compiles again.
    write(tmp_path, "emod", MODULE + "\n# edited\n")
    again = run_child(tmp_path, "emod", CALLS)
    assert again["_stats"]["dot_sqrt"] == [0, 1]
    check_results(again)


def test_editing_a_callee_in_another_file_invalidates_the_caller(tmp_path):
    write(tmp_path, "callee_mod", textwrap.dedent('''
        import numba_rs as nb
        @nb.njit(cache=True)
        def g(x):
            return x + 1
    '''))
    write(tmp_path, "caller_mod", textwrap.dedent('''
        import numba_rs as nb
        from callee_mod import g
        @nb.njit(cache=True)
        def f(x):
            return g(x) * 10
    '''))
    calls = 'out["f"] = [run(m.f, 4), run(m.f.py_func, 4)]'
    first = run_child(tmp_path, "caller_mod", calls)
    assert first["f"] == ["50", "50"]
    assert run_child(tmp_path, "caller_mod", calls)["_stats"]["f"] == [1, 0]
    write(tmp_path, "callee_mod", textwrap.dedent('''
        import numba_rs as nb
        @nb.njit(cache=True)
        def g(x):
            return x + 2
    '''))
    third = run_child(tmp_path, "caller_mod", calls)
    # Numba would load the stale caller (it does not track callees); numba-rs notices.
    assert third["f"] == ["60", "60"]
    assert third["_stats"]["f"] == [0, 1]


def test_closure_values_are_part_of_the_key(tmp_path):
    write(tmp_path, "clmod", textwrap.dedent('''
        import numba_rs as nb
        def make(k):
            @nb.njit(cache=True)
            def f(x):
                return x * k
            return f
        f2 = make(2)
        f3 = make(3)
    '''))
    calls = 'out["r"] = [run(m.f2, 5), run(m.f3, 5)]'
    assert run_child(tmp_path, "clmod", calls)["r"] == ["10", "15"]
    again = run_child(tmp_path, "clmod", calls)
    assert again["r"] == ["10", "15"]
    assert again["_stats"]["f2"] == [1, 0] and again["_stats"]["f3"] == [1, 0]


def test_numba_cache_dir_and_damaged_files(tmp_path):
    write(tmp_path, "dmod", MODULE)
    cache_dir = tmp_path / "elsewhere"
    env = {"NUMBA_CACHE_DIR": str(cache_dir)}
    run_child(tmp_path, "dmod", CALLS, env)
    assert not (tmp_path / "__pycache__").exists()
    found = [f for _, _, fs in os.walk(cache_dir) for f in fs if f.endswith(".nbrc")]
    assert len(found) == 7
    # Truncated data files and an index from another build are ignored, not trusted.
    for root, _, fs in os.walk(cache_dir):
        for f in fs:
            p = os.path.join(root, f)
            if f.endswith(".nbrc"):
                with open(p, "r+b") as fh:
                    fh.truncate(os.path.getsize(p) // 2)
    out = run_child(tmp_path, "dmod", CALLS, env)
    assert out["_stats"]["dot_sqrt"] == [0, 1]
    check_results(out)
    for root, _, fs in os.walk(cache_dir):
        for f in fs:
            if f.endswith(".nbri"):
                p = os.path.join(root, f)
                text = open(p).read().replace("compiler numba-rs", "compiler other-build")
                open(p, "w").write(text)
    out = run_child(tmp_path, "dmod", CALLS, env)
    assert out["_stats"]["scaled"] == [0, 2]
    check_results(out)


def test_what_cannot_be_cached_says_why(tmp_path):
    write(tmp_path, "umod", textwrap.dedent('''
        import numpy as np
        import numba_rs as nb
        BIG = np.arange(200_000, dtype=np.float64)   # 1.6 MB: read in place
        @nb.njit(cache=True)
        def big(i):
            return BIG[i]
        @nb.jit(cache=True, forceobj=True)
        def obj(x):
            return [x, x]
    '''))
    calls = 'out["big"] = [run(m.big, 7), run(m.big.py_func, 7)]\n' \
            'out["obj"] = [run(m.obj, 2), run(m.obj.py_func, 2)]'
    out = run_child(tmp_path, "umod", calls)
    assert out["big"] == ["7.0", "np.float64(7.0)"] and out["obj"] == ["[2, 2]", "[2, 2]"]
    assert 'Cannot cache compiled function "big" as it uses dynamic globals' in out["_warnings"]
    assert 'Cannot cache compiled function "obj" as it uses object mode' in out["_warnings"]


def test_no_source_file_is_numba_runtime_error():
    import numba_rs as nb

    ns = {}
    exec("def f(x):\n    return x\n", ns)
    with pytest.raises(RuntimeError, match="cannot cache function 'f': no locator available"):
        nb.njit(cache=True)(ns["f"])


def test_ufuncs_and_cfuncs_load_from_the_cache(tmp_path):
    write(tmp_path, "vmod", textwrap.dedent('''
        import numpy as np
        import numba_rs as nb
        @nb.vectorize(["float64(float64, float64)", "int64(int64, int64)"], cache=True)
        def hyp(x, y):
            return x * x + y * y
        @nb.guvectorize(["void(float64[:], float64[:])"], "(n)->()", cache=True)
        def total(a, out):
            s = 0.0
            for v in a:
                s += v
            out[0] = s
        @nb.cfunc("float64(float64, float64)", cache=True)
        def cf(x, y):
            return x - 2 * y
    '''))
    calls = '''
    x = np.arange(6.0).reshape(2, 3)
    out["hyp"] = [repr(m.hyp(x, 2.0).tolist()), repr((x * x + 4.0).tolist())]
    out["hypi"] = [repr(m.hyp(np.arange(4), 3).tolist()), repr((np.arange(4) ** 2 + 9.0).tolist())]
    out["total"] = [repr(m.total(x).tolist()), repr(x.sum(axis=1).tolist())]
    out["cf"] = [repr(m.cf.ctypes(5.0, 1.5)), repr(m.cf(5.0, 1.5))]
    out["cf_hits"] = [m.cf.cache_hits, 0]
    '''
    first = run_child(tmp_path, "vmod", calls)
    second = run_child(tmp_path, "vmod", calls)
    for out in (first, second):
        for k in ("hyp", "hypi", "total", "cf"):
            assert out[k][0] == out[k][1], k
    assert first["cf_hits"][0] == 0 and second["cf_hits"][0] == 1
    assert second["_warnings"] == []


def test_namedtuple_results_are_cached_as_their_class(tmp_path):
    write(tmp_path, "nmod", textwrap.dedent('''
        from collections import namedtuple
        import numba_rs as nb
        Point = namedtuple("Point", "x y")
        Pair = namedtuple("Pair", "a b")
        @nb.njit(cache=True)
        def make(x):
            return Pair(Point(x, x * 0.5), Point(x + 1, 2.0))
    '''))
    calls = 'out["r"] = [run(m.make, 3), run(m.make.py_func, 3)]\n' \
            'out["cls"] = [type(m.make(3).a).__name__, "Point"]'
    first = run_child(tmp_path, "nmod", calls)
    second = run_child(tmp_path, "nmod", calls)
    assert first["_warnings"] == [] and second["_stats"]["make"] == [1, 0]
    for out in (first, second):
        assert out["r"][0] == out["r"][1] and out["cls"][0] == out["cls"][1]


def test_jitclass_results_are_cached_by_class(tmp_path):
    """A function returning a jitclass instance loads from the cache in a fresh process
    (its type named by class and fields), also when another class registered first
    there; the loaded code's instances behave as the compiled ones."""
    write(tmp_path, "jmod", textwrap.dedent('''
        import os
        import numpy as np
        import numba_rs as nb
        from numba_rs import types
        from numba_rs.experimental import jitclass
        if os.environ.get("SHIFT"):
            @jitclass([("q", types.int32)])
            class Other:
                def __init__(self):
                    self.q = 1
            Other()
        @jitclass([("x", types.float64[:]), ("n", types.int64)])
        class Acc:
            def __init__(self, n):
                self.x = np.zeros(n)
                self.n = n
            def add(self, v):
                self.x += v
                return self.x.sum()
        @nb.njit(cache=True)
        def make(n):
            a = Acc(n)
            a.add(1.5)
            return a
    '''))
    calls = ('a = m.make(4)\n'
             'out["r"] = [repr((a.add(2.0), a.x.tolist(), a.n)), repr((14.0, [3.5] * 4, 4))]\n'
             'out["cls"] = [type(a).__name__, "Acc"]\n'
             'del a')
    first = run_child(tmp_path, "jmod", calls)
    second = run_child(tmp_path, "jmod", calls, env={"SHIFT": "1"})
    assert first["_warnings"] == [] and first["_stats"]["make"] == [0, 1]
    assert second["_stats"]["make"] == [1, 0]
    for out in (first, second):
        assert out["_balanced"] is True
        assert out["r"][0] == out["r"][1] and out["cls"][0] == out["cls"][1]


def start_child(tmp_path, module, calls):
    driver = DRIVER.format(path=str(tmp_path), module=module, calls=textwrap.indent(
        textwrap.dedent(calls).strip("\n"), "    "))
    return subprocess.Popen([sys.executable, "-X", "faulthandler", "-c", driver],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_four_processes_compile_and_save_the_same_functions_at_once(tmp_path):
    write(tmp_path, "conc", MODULE)
    children = [start_child(tmp_path, "conc", CALLS) for _ in range(4)]
    outs = []
    for child in children:
        stdout, stderr = child.communicate(timeout=300)
        assert child.returncode == 0, stderr
        outs.append(json.loads(stdout.strip().splitlines()[-1]))
    for out in outs:
        stats = out["_stats"]
        # Each process either compiled a signature or loaded what another saved.
        assert sum(stats["scaled"]) == 2 and sum(stats["dot_sqrt"]) == 1
        check_results(out)
    # What they left loads, whole, in a fifth process.
    after = run_child(tmp_path, "conc", CALLS)
    stats = after["_stats"]
    assert stats["dot_sqrt"] == [1, 0] and stats["scaled"] == [2, 0]
    assert stats["checked"] == [1, 0] and stats["psum"] == [1, 0] and stats["pair"] == [1, 0]
    check_results(after)


def test_loading_runs_no_llvm_and_loaded_code_links_into_new_callers(tmp_path):
    write(tmp_path, "lmod", MODULE)
    run_child(tmp_path, "lmod", CALLS)
    calls = '''
    a = np.linspace(0.0, 1.0, 33); b = a + 1.0
    out["dot"] = [run(m.dot_sqrt, a, b), run(m.dot_sqrt.py_func, a, b)]
    sig = m.dot_sqrt.signatures[0]
    out["phases"] = sorted(m.dot_sqrt.get_metadata(sig)["pipeline_times"])
    # The text of loaded code is made on demand, from the stored module.
    out["ir_has_symbol"] = "sqrt" in m.dot_sqrt.inspect_llvm(sig)
    # A function compiled now calls one loaded from the cache (its module linked in).
    import numba_rs as nb
    @nb.njit
    def twice(x):
        return m.helper(x) * 2.0
    out["twice"] = [run(twice, 4.0), run(twice.py_func, 4.0)]
    # The same cached code loaded again (a second dispatcher of the same function).
    import importlib
    m2 = importlib.reload(m)
    out["again"] = [run(m2.dot_sqrt, a, b), run(m.dot_sqrt.py_func, a, b)]
    '''
    out = run_child(tmp_path, "lmod", calls)
    assert out.pop("phases") == ["load_from_cache"]
    assert out.pop("ir_has_symbol") is True
    assert out["twice"] == ["6.0", "6.0"]
    dot, again = out.pop("dot"), out.pop("again")
    assert float(dot[0]) == pytest.approx(float(dot[1].removeprefix("np.float64(").rstrip(")")))
    assert again[0] == dot[0]
    assert out["_balanced"] is True


def test_damaged_data_files_are_compiled_again(tmp_path):
    write(tmp_path, "dmod", MODULE)
    run_child(tmp_path, "dmod", CALLS)
    cache_dir = tmp_path / "__pycache__"
    for name in os.listdir(cache_dir):
        if name.endswith(".nbrc"):
            data = (cache_dir / name).read_bytes()
            (cache_dir / name).write_bytes(data[: len(data) // 2])
    again = run_child(tmp_path, "dmod", CALLS)
    assert again["_stats"]["dot_sqrt"] == [0, 1] and again["_stats"]["scaled"] == [0, 2]
    check_results(again)
