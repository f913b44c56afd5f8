"""Jitted callees and their callers.

- Every compiled callee's module is linked into its caller's, so LLVM inlines small
  helpers (Numba links its callees' libraries the same way): ``NUMBA_DUMP_OPTIMIZED`` of
  the caller shows no call left. Recursion and mutual recursion keep calling.
- ``@njit(inline='always')`` (and a cost-model function) splices the callee's untyped IR
  into the caller before typing (Numba's ``InlineInlinables``): the body is typed per call
  site, ``NUMBA_DUMP_IR`` shows it, and the callee itself is never compiled.

The oracle for every result is the same code run by CPython.
"""

import os
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

import numba_rs
from numba_rs import njit


def run_child(code, **env):
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=dict(os.environ, **env),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# ----------------------------------------------------------- linked callees


def test_optimized_caller_has_the_callee_inlined():
    out = run_child(
        """
        import numba_rs
        @numba_rs.njit
        def wrap(k, n):
            return k % n
        @numba_rs.njit
        def loop(n):
            s = 0
            for i in range(n):
                s += wrap(i + 3, 7)
            return s
        assert loop(100) == loop.py_func(100)
        """,
        NUMBA_DUMP_OPTIMIZED="1",
    )
    dumps = out.split("OPTIMIZED DUMP ")
    (caller,) = [d for d in dumps if d.startswith("loop")]
    assert "define" in caller
    # No call of wrap's code (by symbol or by address) is left in the caller.
    assert "wrap" not in caller.split("\n", 1)[1]
    assert "numba_rs.callee" not in caller


@njit
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


@njit
def is_even(n):
    return True if n == 0 else is_odd(n - 1)


@njit
def is_odd(n):
    return False if n == 0 else is_even(n - 1)


@njit
def uses_recursion(n):
    return fib(n) + (1 if is_even(n) else 0)


@pytest.mark.parametrize("n", [0, 1, 2, 9, 20])
def test_recursive_callees_still_work(n):
    assert uses_recursion(n) == uses_recursion.py_func(n)
    assert is_odd(n) == (n % 2 == 1)


@njit
def raises_on_negative(x):
    if x < 0:
        raise ValueError("negative", x)
    return np.sqrt(x)


@njit
def sums_roots(a):
    s = 0.0
    for v in a:
        s += raises_on_negative(v)
    return s


def test_exceptions_from_a_linked_callee():
    a = np.array([1.0, 4.0, 9.0])
    assert sums_roots(a) == 6.0
    with pytest.raises(ValueError) as info:
        sums_roots(np.array([1.0, -2.0]))
    assert info.value.args == ("negative", -2.0)


@njit
def new_array(n):
    return np.arange(n) * 2


@njit
def uses_new_array(n):
    t = 0
    for i in range(n):
        t += new_array(i).sum()
    return t


def test_linked_callees_returning_arrays_release_them():
    assert uses_new_array(30) == uses_new_array.py_func(30)


# ----------------------------------------------------------- inline='always'


@njit(inline="always")
def twice(x):
    return x + x


@njit(inline="always")
def power(x, y=2):
    return x**y


@njit
def generic_sites(i, f):
    # One callee typed three ways, and defaults and keywords bound as Python does.
    return twice(i), twice(f), twice((i, f)), power(f), power(i, 3), power(y=1, x=f)


@pytest.mark.parametrize("i, f", [(3, 1.5), (-2, 0.25), (0, -7.0)])
def test_inline_always_is_typed_per_site(i, f):
    # (The oracle is written out: calling py_func would compile the callees.)
    assert generic_sites(i, f) == (i + i, f + f, (i, f, i, f), f**2, i**3, f)
    # The callee was spliced in, never compiled on its own.
    assert twice.signatures == []
    assert power.signatures == []


def test_inlined_body_appears_in_the_callers_ir():
    """The IR after Numba's `InlineInlinables` pass (``NUMBA_DEBUG_PRINT_AFTER``)."""
    out = run_child(
        """
        import numba_rs
        @numba_rs.njit(inline="always")
        def scale(v, k=3):
            w = v * k
            return w - 1
        @numba_rs.njit
        def caller(a):
            return scale(a) + scale(a, 2)
        assert caller(5) == (5 * 3 - 1) + (5 * 2 - 1)
        assert scale.signatures == []
        """,
        NUMBA_DEBUG_PRINT_AFTER="inline_inlinables",
    )
    # Numba's pass `inline_inlinables` spliced the callee's statements in, their
    # variables renamed into the caller's, and the omitted argument's default.
    assert "scale.w" in out
    assert "$default_k" in out


def test_inline_never_and_always_mix():
    @njit(inline="never")
    def cube(x):
        return x * x * x

    @njit
    def both(x):
        return twice(x) + cube(x)

    assert both(4) == 8 + 64
    assert cube.signatures  # compiled and called


def test_cost_model_decides_per_call_site():
    seen = []

    def model(expr, caller_ir, callee_ir):
        seen.append((expr.op, len(expr.args), callee_ir.arg_names, caller_ir.func_id.func_name))
        assert callee_ir.blocks and all(isinstance(s, str) for b in callee_ir.blocks.values() for s in b.body)
        return len(expr.args) == 1

    @njit(inline=model)
    def mul(x, y=10):
        return x * y

    @njit
    def use(a):
        return mul(a) + mul(a, 3)

    assert use(2) == 20 + 6
    # Asked once per call site; the declined site calls the compiled function.
    assert sorted(seen) == [("call", 1, ("x", "y"), "use"), ("call", 2, ("x", "y"), "use")]
    assert mul.signatures == [(numba_rs.int64, numba_rs.int64)]


def test_inline_closure_with_free_variables():
    k = 7

    @njit(inline="always")
    def addk(x):
        return x + k

    @njit
    def use(x):
        return addk(x) * 2

    assert use(5) == 24
    assert addk.signatures == []


def test_inline_from_a_module_attribute():
    mod = types.ModuleType("numba_rs_test_inline_mod")

    @njit(inline="always")
    def helper(x):
        return x - 1

    mod.helper = helper
    sys.modules[mod.__name__] = mod
    try:
        ns = {"m": mod}
        exec("def use(x):\n    return m.helper(x) * 3\n", ns)
        use = njit(ns["use"])
        assert use(10) == 27
        assert helper.signatures == []
    finally:
        del sys.modules[mod.__name__]


def test_inline_always_generator_stays_a_call():
    @njit(inline="always")
    def gen(n):
        for i in range(n):
            yield i * i

    @njit
    def use(n):
        s = 0
        for v in gen(n):
            s += v
        return s

    assert use(5) == 30


def test_recursive_inline_always_is_an_error_not_a_hang():
    @njit(inline="always")
    def down(n):
        if n <= 0:
            return 0
        return down(n - 1) + 1

    @njit
    def use(n):
        return down(n)

    with pytest.raises(numba_rs.errors.UnsupportedError, match="inline"):
        use(3)


@pytest.mark.parametrize("bad", ["sometimes", 3, "ALWAYS"])
def test_bad_inline_values_are_value_errors(bad):
    with pytest.raises(ValueError, match="inline"):
        njit(inline=bad)(lambda x: x)


def test_always_raising_inline_callee():
    # The code after the spliced call is dead (Numba's test_issue5476).
    @njit(inline="always")
    def fail():
        msg = "Something happened"
        raise ValueError(msg)

    @njit
    def use():
        return fail()

    with pytest.raises(ValueError, match="Something happened"):
        use()


def test_explicit_signature_callee_called_with_converted_arguments():
    # `inner` accepts int32 only; `inner(inner(a))` passes its int64 result back,
    # converted as Numba converts it (numba.tests.inlining_usecases).
    @numba_rs.jit((numba_rs.int32,), nopython=True)
    def inner(a):
        return a + 1

    @numba_rs.jit((numba_rs.int32,), nopython=True)
    def more(a):
        return inner(inner(a))

    assert more(3) == 5
    assert inner.signatures == [(numba_rs.int32,)]


def test_numba_pipeline_classes_are_refused_by_name():
    with pytest.raises(NotImplementedError, match="pipeline_class"):
        njit(pipeline_class=object)(lambda x: x)


def test_register_jitable_inline_always():
    from numba_rs.extending import register_jitable

    @register_jitable(inline="always")
    def offset(x):
        return x + 41

    @njit
    def use(x):
        return offset(x) * 2

    assert use(1) == 84
    # Spliced in: the kernel behind the plain function was never compiled.
    assert offset._numba_rs_kernel.signatures == []
    # The function itself stays a Python function.
    assert offset(1) == 42
