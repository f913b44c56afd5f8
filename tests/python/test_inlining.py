"""Jitted callees and their callers.

- Every compiled callee's module is linked into its caller's, so LLVM inlines small
  helpers (Numba links its callees' libraries the same way): ``NUMBA_DUMP_OPTIMIZED`` of
  the caller shows no call left. Recursion and mutual recursion keep calling.
- ``@njit(inline='always')`` (and a cost-model function) splices the callee's untyped IR
  into the caller before typing (Numba's ``InlineInlinables``): the body is typed per call
  site, ``NUMBA_DUMP_IR`` shows it, and the callee itself is never compiled.

The oracle for every result is the same code run by CPython.
"""

import operator
import os
import re
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

import numba_rs
from numba_rs import njit
from numba_rs.extending import overload, overload_attribute, overload_method


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
    # variables renamed into the caller's as Numba names them (`<qualname>$<uid>.<var>`
    # with `.` and `$` made name-safe), and the omitted argument's default.
    assert re.search(r"\bscale_v\d+_w\b", out), out
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
        # The callee's statements as IR objects (Numba's classes or their look-alikes):
        # `x * y` is a binop expression of operator.mul, and the last statement returns.
        body = [s for b in callee_ir.blocks.values() for s in b.body]
        binops = [
            s.value
            for s in body
            if type(s).__name__ == "Assign" and getattr(s.value, "op", None) == "binop"
        ]
        assert [b.fn for b in binops] == [operator.mul]
        assert type(body[-1]).__name__ == "Return"
        # The call is an expression of the caller's IR, found by its result variable.
        assert caller_ir.get_definition(expr.func).name == "mul"
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


# ----------------------------------------------- overloads inlined after typing


def test_overload_inline_always_is_spliced_into_the_typed_ir():
    """Numba's `InlineOverloads`: the implementation chosen for each call's types is
    spliced in after typing (`NUMBA_DEBUG_PRINT_AFTER=inline_overloads`), per call site,
    with keywords and defaults bound; no call of the overloaded function is left."""
    out = run_child(
        """
        import numba_rs
        from numba_rs import types
        from numba_rs.extending import overload
        def scale(x, k=2):
            pass
        @overload(scale, inline="always")
        def _scale(x, k=2):
            if isinstance(x, types.Integer):
                def impl(x, k=2):
                    twice = x * k
                    return twice + 1
                return impl
            def impl(x, k=2):
                half = x / k
                return half
            return impl
        @numba_rs.njit
        def use(a, b):
            return scale(a), scale(b, k=4), scale(a, 3)
        assert use(3, 5.0) == (7, 1.25, 10)
        """,
        NUMBA_DEBUG_PRINT_AFTER="inline_overloads",
    )
    # Each site got the implementation for its own types, its variables renamed as
    # Numba renames them (`<qualname>$<uid>.<var>` made name-safe).
    assert len(re.findall(r"_scale__locals__impl_v\d+_twice = ", out)) == 2, out
    assert len(re.findall(r"_scale__locals__impl_v\d+_half = ", out)) == 1, out
    # No call of `scale` is left (its global may stay, unused).
    names = re.findall(r"(\S+) = global\(scale: ", out)
    assert names and not any(f"call {n}(" in out for n in names), out


def test_overload_cost_model_sees_the_typed_call_site():
    seen = []

    def pick(x):
        pass

    def model(expr, caller_info, callee_info):
        # Typed: the call's argument types, the caller's variable types, the
        # implementation's IR after its untyped passes.
        seen.append((expr.op, str(caller_info.signature.args[0])))
        assert caller_info.typemap and callee_info.func_ir.arg_names == ("x",)
        assert any(
            getattr(s.value, "op", None) == "binop"
            for b in callee_info.func_ir.blocks.values()
            for s in b.body
            if type(s).__name__ == "Assign"
        )
        return str(caller_info.signature.args[0]) == "int64"

    @overload(pick, inline=model)
    def _pick(x):
        return lambda x: x + 1

    @njit
    def use(a, b):
        return pick(a) + pick(b)

    assert use(1, 2.5) == (1 + 1) + (2.5 + 1)
    assert sorted(seen) == [("call", "float64"), ("call", "int64")]


def test_overload_methods_attributes_and_operators_inline():
    def clip_sum(a, lo):
        return np.clip(a, lo, None).sum()

    @overload_method(numba_rs.types.Array, "clipped_sum", inline="always")
    def _clipped_sum(a, lo):
        return lambda a, lo: np.clip(a, lo, None).sum()

    @overload_attribute(numba_rs.types.Array, "span", inline="always")
    def _span(a):
        return lambda a: a.max() - a.min()

    # `~x` on a float: numba-rs rejects it, the overload gives it a meaning.
    @overload(operator.invert, inline="always")
    def _invert(x):
        if isinstance(x, numba_rs.types.Float):
            return lambda x: -x

    @njit
    def use(a):
        return a.clipped_sum(2.0), a.span, ~a[0]

    a = np.array([1.0, 5.0, 3.0])
    assert use(a) == (clip_sum(a, 2.0), a.max() - a.min(), -a[0])


def test_overload_recursive_inline_is_an_error_not_a_hang():
    def down(n):
        pass

    @overload(down, inline="always")
    def _down(n):
        return lambda n: down(n - 1) if n > 0 else 0

    with pytest.raises(numba_rs.errors.NumbaError, match="too many nested overloads"):
        njit(lambda n: down(n))(3)


def test_overload_with_star_args_is_not_inlined():
    def total(a, *b):
        pass

    @overload(total, inline="always")
    def _total(a, *b):
        return lambda a, *b: a + b[0]

    with pytest.raises(NotImplementedError, match=r"Stararg not supported in inliner for arg 1 \*b"):
        njit(lambda: total(3, 3, 5))()


def test_preserved_ir_with_numbas_pipeline_class():
    support = pytest.importorskip("numba.tests.support")
    from numba.core import ir, ir_utils

    def add1(x):
        pass

    @overload(add1, inline="always")
    def _add1(x):
        return lambda x: x + 1

    def keep(x):
        pass

    @overload(keep, inline="never")
    def _keep(x):
        return lambda x: x * 2

    @njit(pipeline_class=support.IRPreservingTestPipeline)
    def use(x):
        return add1(x) + keep(x)

    assert use(3) == 4 + 6
    fir = use.overloads[use.signatures[0]].metadata["preserved_ir"]
    assert isinstance(fir, ir.FunctionIR)
    # The splice's straight-line blocks are merged, as Numba's simplify_CFG leaves them.
    (block,) = fir.blocks.values()
    assert len(ir_utils.simplify_CFG(dict(fir.blocks))) == 1
    called = [fir.get_definition(e.func).name for e in block.find_exprs(op="call")]
    assert called == ["keep"]
    consts = [s.value.value for s in block.find_insts(ir.Assign) if isinstance(s.value, ir.Const)]
    assert 1 in consts  # add1's body, spliced in


def test_pipeline_classes_adding_passes_are_refused():
    compiler = pytest.importorskip("numba.core.compiler")
    from numba.core.untyped_passes import IRProcessing

    class Mine(compiler.CompilerBase):
        def define_pipelines(self):
            pm = compiler.DefaultPassBuilder.define_nopython_pipeline(self.state)
            pm.add_pass_after(IRProcessing, IRProcessing)
            pm.finalize()
            return [pm]

    class Fewer(compiler.CompilerBase):
        def define_pipelines(self):
            pm = compiler.DefaultPassBuilder.define_nopython_pipeline(self.state)
            pm.passes = [p for p in pm.passes if p[0].__name__ != "InlineInlinables"]
            return [pm]

    # A default pass repeated is a no-op: numba-rs runs each to a fixed point.
    assert njit(pipeline_class=Mine)(lambda x: x + 1)(1) == 2
    with pytest.raises(NotImplementedError, match="leaves out the pass\\(es\\) InlineInlinables"):
        njit(pipeline_class=Fewer)(lambda x: x)


def test_attributes_of_user_modules_and_submodules():
    pkg = types.ModuleType("numba_rs_test_pkg")
    sub = types.ModuleType("numba_rs_test_pkg.sub")
    pkg.sub = sub
    sub.K = 5
    sub.SCALE = 0.5
    sub.np = np

    @njit
    def f(x):
        return x + sub.K

    sub.f = f
    sys.modules[pkg.__name__] = pkg
    sys.modules[sub.__name__] = sub
    try:
        ns = {"pkg": pkg}
        exec(
            "def use(x):\n"
            "    return pkg.sub.f(x) * pkg.sub.SCALE + pkg.sub.np.sqrt(pkg.sub.K)\n",
            ns,
        )
        use = njit(ns["use"])
        assert use(3) == ns["use"](3)
    finally:
        del sys.modules[pkg.__name__], sys.modules[sub.__name__]
