"""The dispatcher object's API as Numba's (numba/core/dispatcher.py): function attributes,
specialisations and their entry points, inspection, compile control, method binding and
pickling (by reference and by value, across processes)."""

import concurrent.futures
import functools
import io
import math
import multiprocessing
import os
import pickle
import types

import numpy as np
import pytest

import dispatcher_helpers as helpers
import numba_rs as nb
from numba_rs import njit


def documented(a, b):
    """Return a plus b."""
    return a + b


def square(x):
    return x * x


def total(a):
    s = 0.0
    for v in a:
        s += v
    return s


# -------------------------------------------------------------- function attributes


def test_function_attributes_follow_update_wrapper():
    d = njit(documented)
    assert d.py_func is documented
    assert d.__wrapped__ is documented
    assert d.__name__ == "documented"
    assert d.__qualname__ == "documented"
    assert d.__doc__ == "Return a plus b."
    assert d.__module__ == __name__
    # functools.update_wrapper copies the function's __dict__ too.
    def g(x):
        return x

    g.marker = 42
    assert njit(g).marker == 42
    assert njit(g).__qualname__.endswith("<locals>.g")


def test_isinstance_of_the_core_dispatcher():
    assert isinstance(njit(square), nb.Dispatcher)


# ------------------------------------------------------------------ specialisations


def test_signatures_and_overloads():
    d = njit(documented)
    assert d.signatures == [] and d.overloads == {}
    assert d(1, 2) == 3
    assert d(1.5, 2.0) == 3.5
    assert d.signatures == [(nb.int64, nb.int64), (nb.float64, nb.float64)]
    assert list(d.overloads) == d.signatures
    res = d.overloads[(nb.int64, nb.int64)]
    assert res.signature.args == (nb.int64, nb.int64)
    assert res.signature.return_type == nb.int64
    assert [str(s) for s in d.nopython_signatures] == [
        "(int64, int64) -> int64",
        "(float64, float64) -> float64",
    ]


def test_entry_point_runs_one_specialisation():
    d = njit(total)
    arr = np.arange(5.0)
    assert d(arr) == 10.0
    (sig,) = d.signatures
    assert d.overloads[sig].entry_point(arr) == 10.0
    # Arguments that do not convert to the specialisation's types are refused.
    s = njit(square)
    s(3)
    ep = s.overloads[(nb.int64,)].entry_point
    assert ep(7) == 49
    with pytest.raises(TypeError):
        ep(np.arange(3.0))
    with pytest.raises(TypeError):
        ep(1, 2)
    # No dispatch: the entry point never compiles another specialisation.
    assert s.signatures == [(nb.int64,)]


def test_overloads_key_error_for_unknown_signature():
    d = njit(square)
    d(2)
    with pytest.raises(KeyError):
        d.overloads[(nb.float64,)]
    with pytest.raises(KeyError):
        d.inspect_llvm((nb.float64,))


# ---------------------------------------------------------------------- inspection


def test_inspect_types_prints_the_annotation_per_signature():
    d = njit(documented)
    d(1, 2)
    d(1.0, 2.0)
    out = io.StringIO()
    d.inspect_types(file=out)
    text = out.getvalue()
    assert text.count("-" * 80) >= 2 and text.count("=" * 80) == 2
    assert "documented (int64, int64)\n" in text
    assert "documented (float64, float64)\n" in text
    assert "# --- LINE" in text
    assert "return a + b" in text
    assert "float64" in text
    one = io.StringIO()
    d.inspect_types(file=one, signature=(nb.int64, nb.int64))
    assert one.getvalue().count("=" * 80) == 1
    assert "documented (float64, float64)" not in one.getvalue()


def test_inspect_types_defaults_to_stdout(capsys):
    d = njit(square)
    d(3)
    d.inspect_types()
    assert "square (int64,)" in capsys.readouterr().out


def test_inspect_llvm_and_asm():
    d = njit(square)
    d(3)
    d(2.0)
    llvm = d.inspect_llvm()
    assert set(llvm) == {(nb.int64,), (nb.float64,)}
    one = d.inspect_llvm((nb.int64,))
    assert isinstance(one, str) and "define" in one
    asm = d.inspect_asm()
    assert set(asm) == {(nb.int64,), (nb.float64,)}
    text = d.inspect_asm((nb.float64,))
    symbol = d.get_metadata((nb.float64,))["symbol"]
    assert symbol in text
    assert "ret" in text
    # The int and float specialisations differ in their instructions.
    assert asm[(nb.int64,)] != asm[(nb.float64,)]


# -------------------------------------------------------------------- compile control


def test_disable_compile_raises_type_error_for_new_types():
    d = njit(square)
    assert d(3) == 9
    d.disable_compile()
    assert d(4) == 16
    with pytest.raises(TypeError, match="No matching definition"):
        d(np.arange(3))
    assert d.signatures == [(nb.int64,)]
    d.disable_compile(False)
    assert d(1.5) == 2.25
    assert len(d.signatures) == 2


def test_compile_explicit_signature():
    d = njit(square)
    ep = d.compile("f8(f8)")
    assert d.signatures == [(nb.float64,)]
    assert ep(3.0) == 9.0
    d.compile((nb.int32,))
    assert (nb.int32,) in d.signatures
    # compile() leaves compiling on demand enabled.
    assert d(5) == 25
    assert (nb.int64,) in d.signatures
    d.compile(nb.float32(nb.float32))
    assert d.overloads[(nb.float32,)].signature.return_type == nb.float32


G = 1


def add_g(x):
    return x + G


def test_recompile_reads_globals_again():
    global G
    G = 1
    d = njit(add_g)
    assert d(1) == 2
    assert d(1.0) == 2.0
    G = 10
    try:
        assert d(1) == 2  # globals are frozen at compile time
        d.recompile()
        assert d(1) == 11
        assert d(1.0) == 11.0
        assert d.signatures == [(nb.int64,), (nb.float64,)]
    finally:
        G = 1


# ------------------------------------------------------------- as method, as argument


class Point(__import__("collections").namedtuple("Point", "x y")):
    def norm2_py(self):
        return self.x * self.x + self.y * self.y

    norm2 = njit(norm2_py)

    def scaled_py(self, k):
        return (self.x + self.y) * k

    scaled = njit(scaled_py)


def test_bound_as_method():
    p = Point(3, 4)
    assert Point.norm2 is Point.__dict__["norm2"]
    bound = p.norm2
    assert isinstance(bound, types.MethodType)
    assert bound.__self__ is p and bound.__func__ is Point.__dict__["norm2"]
    assert p.norm2() == 25
    assert p.scaled(2.5) == 17.5
    assert Point.norm2(p) == 25


def test_dispatcher_as_argument():
    def apply(fn, x):
        return fn(x) + 1

    sq = njit(square)
    assert njit(apply)(sq, 4) == 17


# ------------------------------------------------------------------------- pickling


def _unpickle_elsewhere(data):
    """Unpickle as another process would: with this process's memo of dispatchers by
    uuid out of the way."""
    from numba_rs import dispatcher

    saved = dict(dispatcher._MEMO)
    dispatcher._MEMO.clear()
    try:
        return pickle.loads(data)
    finally:
        dispatcher._MEMO.clear()
        dispatcher._MEMO.update(saved)


def test_pickle_module_level_by_reference():
    data = pickle.dumps(helpers.add_mul)
    assert b"dispatcher_helpers" in data and b"add_mul" in data
    assert b"marshal" not in data and len(data) < 200
    assert pickle.loads(data) is helpers.add_mul
    assert pickle.loads(pickle.dumps(helpers.fib)) is helpers.fib
    # Found under its name but as another object: pickled by value instead.
    again = _unpickle_elsewhere(pickle.dumps(helpers.add_mul_again))
    assert again is not helpers.add_mul_again and again is not helpers.add_mul
    assert again(2, 3) == 15


def test_pickle_closure_by_value():
    scale = helpers.make_scaler(3.0)
    assert scale(4.0) == 6.0
    # In this process the pickle names the dispatcher it came from (Numba's uuid memo).
    assert pickle.loads(pickle.dumps(scale)) is scale
    clone = _unpickle_elsewhere(pickle.dumps(scale))
    assert clone is not scale
    assert clone.signatures == []  # compiles on first call
    assert clone(16.0) == 12.0
    assert clone(4.0) == helpers.scale_py(3.0, 4.0)
    assert clone.__qualname__ == scale.__qualname__
    assert clone._options == scale._options and clone._options["fastmath"]


MAIN_SOURCE = '''
import math
OFFSET = 2.5

def hyp(a, b):
    """doc of hyp"""
    return math.sqrt(a * a + b * b) + OFFSET

def rfib(n):
    if n < 2:
        return n
    return rfib(n - 1) + rfib(n - 2)
'''


def test_pickle_main_function_by_value():
    ns = {"__name__": "__main__"}
    exec(MAIN_SOURCE, ns)
    hyp = njit(ns["hyp"])
    ns["rfib"] = rfib = njit(ns["rfib"])
    assert hyp(3.0, 4.0) == 7.5
    clone = _unpickle_elsewhere(pickle.dumps(hyp))
    assert clone is not hyp and clone(3.0, 4.0) == 7.5
    assert clone.__doc__ == "doc of hyp"
    assert clone.py_func(6.0, 8.0) == 12.5
    rclone = _unpickle_elsewhere(pickle.dumps(rfib))
    assert rclone(15) == 610
    assert rclone.py_func.__globals__["rfib"] is rclone


def test_pickle_keeps_explicit_signatures():
    def f(x):
        return x * 2

    d = njit("f8(f8)")(f)
    clone = _unpickle_elsewhere(pickle.dumps(d))
    assert clone.signatures == [(nb.float64,)]
    assert clone(2) == 4.0
    assert not clone._can_compile
    # Compiled lazily, then disabled: the signatures travel too (as Numba's do).
    lazy = njit(f)
    lazy(1.5)
    lazy(2)
    lazy.disable_compile()
    clone = _unpickle_elsewhere(pickle.dumps(lazy))
    assert clone.signatures == [(nb.float64,), (nb.int64,)]
    assert not clone._can_compile
    with pytest.raises(TypeError, match="No matching definition"):
        clone(np.arange(2))
    # Still compiling on demand: nothing compiled travels.
    fresh = njit(f)
    fresh(1)
    assert _unpickle_elsewhere(pickle.dumps(fresh)).signatures == []


def test_disable_compile_needs_a_signature():
    with pytest.raises(AssertionError):
        njit(square).disable_compile()


def test_process_pool_map():
    xs = list(range(8))
    ys = [0.5 * i for i in range(8)]
    scale = helpers.make_scaler(2.0)
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=2, mp_context=ctx) as ex:
        got = list(ex.map(helpers.add_mul, xs, ys))
        scaled = list(ex.map(scale, ys))
        fibs = list(ex.map(helpers.fib, xs))
        assert ex.submit(os.getpid).result() != os.getpid()
    assert got == [helpers.add_mul_py(x, y) for x, y in zip(xs, ys)]
    assert scaled == [helpers.scale_py(2.0, y) for y in ys]
    assert fibs == [helpers.fib.py_func(x) for x in xs]


def test_dask_distributed_map():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        assert os.getpid() not in client.run(os.getpid).values()
        xs = [1.0, 2.0, 9.0]
        futs = client.map(helpers.add_mul, xs, [2.0] * 3)
        assert client.gather(futs) == [helpers.add_mul_py(x, 2.0) for x in xs]
        scale = helpers.make_scaler(4.0)
        futs = client.map(scale, xs)
        assert client.gather(futs) == [helpers.scale_py(4.0, x) for x in xs]


def test_functools_partial_over_dispatcher():
    d = njit(documented)
    assert functools.partial(d, 2)(3) == 5
    assert math.isclose(d(0.1, 0.2), 0.1 + 0.2)
