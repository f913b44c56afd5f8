"""The high-level extension API (`numba_rs.extending.overload`, `overload_method`,
`overload_attribute`) and the Python-visible type hierarchy (`numba_rs.types`), with
CPython/NumPy as the oracle: each overload's implementation, run by CPython on the same
arguments, gives the value the jitted caller must give."""

import operator
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import numba_rs
from numba_rs import njit, types
from numba_rs.errors import TypingError
from numba_rs.extending import overload, overload_attribute, overload_method


# -- the type hierarchy -------------------------------------------------------------------


def test_type_classes_answer_isinstance_as_numba():
    assert isinstance(types.int32, types.Integer) and isinstance(types.int32, types.Number)
    assert types.int32.bitwidth == 32 and types.int32.signed
    assert not types.uint8.signed and types.uint8.maxval == 255
    assert isinstance(types.float32, types.Float) and types.float32.bitwidth == 32
    assert types.complex128.underlying_float == types.float64
    assert isinstance(types.boolean, types.Boolean)
    assert not isinstance(types.boolean, types.Number)
    assert isinstance(types.none, types.NoneType)
    assert isinstance(types.unicode_type, types.UnicodeType)


def test_array_and_tuple_types():
    a = numba_rs.typeof(np.zeros((2, 3), dtype=np.float32, order="F"))
    assert isinstance(a, types.Array) and isinstance(a, types.Buffer)
    assert (a.dtype, a.ndim, a.layout, a.readonly) == (types.float32, 2, "F", False)
    assert a == types.Array(types.float32, 2, "F")
    assert a.copy(layout="C") == types.float32[:, ::1]
    assert hash(a) == hash(types.Array(types.float32, 2, "F"))
    t = numba_rs.typeof((1, 2.0))
    assert isinstance(t, types.Tuple) and isinstance(t, types.BaseTuple)
    assert t.types == (types.int64, types.float64) and t.count == 2 and t[1] == types.float64
    u = types.Tuple([types.int64, types.int64])
    assert isinstance(u, types.UniTuple) and u.dtype == types.int64 and len(u) == 2
    assert types.UniTuple(types.int64, 2) is u
    opt = types.Optional(types.int64)
    assert isinstance(opt, types.Optional) and opt.type == types.int64
    assert types.Optional(opt) is opt


def test_literal_types():
    lit = types.literal(7)
    assert isinstance(lit, types.IntegerLiteral) and isinstance(lit, types.Literal)
    assert isinstance(lit, types.Integer) and lit.literal_value == 7
    assert types.unliteral(lit) == types.int64
    s = types.literal("abc")
    assert isinstance(s, types.StringLiteral) and s.literal_value == "abc"
    b = types.literal(True)
    assert isinstance(b, types.BooleanLiteral) and b.literal_value is True


def test_types_reach_python_as_their_classes():
    @njit
    def f(x, y):
        return x + y

    f(1, 2.0)
    (sig,) = f.signatures
    assert [type(t) for t in sig] == [types.Integer, types.Float]
    assert f.nopython_signatures[0].return_type == types.float64


# -- overload of plain functions --------------------------------------------------------------


def scale(x, factor=2):
    """A plain Python function, implemented for jitted code by the overload below."""
    return x * factor


@overload(scale)
def _ol_scale(x, factor=2):
    if isinstance(x, types.Integer):
        def impl(x, factor=2):
            return x * factor
        return impl
    if isinstance(x, types.Array):
        def impl_arr(x, factor=2):
            out = np.empty_like(x)
            for i in range(x.size):
                out.flat[i] = x.flat[i] * factor
            return out
        return impl_arr
    return None


def test_overload_of_a_plain_function_by_argument_type():
    @njit
    def f(a, n):
        return scale(n), scale(n, 5), scale(a), scale(a, factor=3.5)

    a = np.arange(6.0).reshape(2, 3)
    got = f(a, 7)
    want = (scale(7), scale(7, 5), scale(a), scale(a, 3.5))
    assert got[:2] == want[:2]
    np.testing.assert_array_equal(got[2], want[2])
    np.testing.assert_array_equal(got[3], want[3])


def test_overload_rejecting_types_is_a_typing_error_naming_it():
    @njit
    def f(x):
        return scale(x)

    with pytest.raises(TypingError, match=r"No implementation of function.*scale"):
        f(1.5)


def test_errors_raised_by_the_typing_function_appear_in_the_typing_error():
    def pair(x, y):
        pass

    @overload(pair)
    def _ol(x, y):
        if x != y:
            raise TypingError("x and y should have the same type")
        return lambda x, y: (x, y)

    @njit
    def f(x, y):
        return pair(x, y)

    assert f(1, 2) == (1, 2)
    with pytest.raises(TypingError, match="x and y should have the same type"):
        f(1, 2.0)


def test_typing_and_implementation_signatures_must_agree():
    def g(a, kw=None):
        pass

    @overload(g)
    def _ol(a, kw=None):
        def impl(a, kw=12):
            return a
        return impl

    with pytest.raises(TypingError, match="keyword argument default values"):
        njit(lambda a: g(a))(1)


def test_closure_over_the_typing_functions_locals():
    def offset(x):
        pass

    @overload(offset)
    def _ol(x):
        # Values computed while typing are frozen into the implementation.
        shift = 10 if isinstance(x, types.Integer) else 0.5

        def impl(x):
            return x + shift
        return impl

    f = njit(lambda a, b: (offset(a), offset(b)))
    assert f(1, 1.0) == (11, 1.5)


def test_overload_of_a_numpy_function_numba_rs_lacks():
    # np.sinc is not implemented by numba-rs: the overload is its only implementation,
    # reached through the module (np.sinc) and as a bare global.
    sinc = np.sinc

    @overload(np.sinc)
    def _ol_sinc(x):
        if isinstance(x, types.Float):
            def impl(x):
                if x == 0.0:
                    return 1.0
                y = np.pi * x
                return np.sin(y) / y
            return impl

    @njit
    def f(x):
        return np.sinc(x), sinc(x / 2)

    for x in (0.0, 0.25, 1.5, -3.2):
        got = f(x)
        assert got[0] == pytest.approx(np.sinc(x), rel=1e-15, abs=1e-15)
        assert got[1] == pytest.approx(np.sinc(x / 2), rel=1e-15, abs=1e-15)


class Meters(float):
    pass


def test_overload_of_a_builtin_keeps_the_builtin_first():
    # len() of a float means nothing to numba-rs: the overload gives it a meaning, while
    # len() of arrays and tuples stays numba-rs's own.
    @overload(len)
    def _ol_len(x):
        if isinstance(x, types.Float):
            return lambda x: int(x)

    @njit
    def f(a, t, x):
        return len(a), len(t), len(x)

    assert f(np.zeros(4), (1, 2, 3), 9.75) == (4, 3, 9)


def test_overloads_calling_overloads_and_recursion():
    def fact(n):
        pass

    def twice_fact(n):
        pass

    @overload(fact)
    def _ol_fact(n):
        if isinstance(n, types.Integer):
            def impl(n):
                return 1 if n <= 1 else n * fact(n - 1)
            return impl

    @overload(twice_fact)
    def _ol_twice(n):
        return lambda n: 2 * fact(n)

    @njit
    def f(n):
        return twice_fact(n)

    import math

    assert f(10) == 2 * math.factorial(10)


def test_literal_dispatch_prefer_literal_and_fallback():
    def lit_prefer(x):
        pass

    def lit_fallback(x):
        pass

    def typing(x):
        if isinstance(x, types.IntegerLiteral):
            v = x.literal_value
            return lambda x: v * 100
        if isinstance(x, types.Integer):
            return lambda x: -x
        return None

    overload(lit_prefer, prefer_literal=True)(typing)
    overload(lit_fallback)(typing)

    @njit
    def f(n):
        return lit_prefer(3), lit_prefer(n), lit_fallback(3), lit_fallback(n)

    # prefer_literal: the literal 3 gets the literal implementation; otherwise the
    # non-literal types are tried first (Numba's order).
    assert f(5) == (300, -5, -3, -5)


def test_literal_only_typing_function_gets_the_literal_on_fallback():
    def needs_const(x):
        pass

    @overload(needs_const)
    def _ol(x):
        if isinstance(x, types.IntegerLiteral):
            v = x.literal_value + 1
            return lambda x: v

    assert njit(lambda: needs_const(41))() == 42


def test_inline_options():
    def h(x):
        pass

    @overload(h, inline="always")
    def _ol(x):
        return lambda x: x + 1

    assert njit(lambda x: h(x) * 2)(4) == 10
    # A cost model is accepted (test_inlining.py runs them).
    overload(h, inline=lambda *a: True)
    with pytest.raises(ValueError, match="inline"):
        overload(h, inline="sometimes")


def test_jit_options_are_checked():
    def h(x):
        pass

    with pytest.raises(KeyError, match="Unrecognized options"):
        overload(h, jit_options={"no_such_option": True})(lambda x: None)


# -- methods and attributes ---------------------------------------------------------------


@overload_method(types.Array, "scaled_sum")
def _ol_scaled_sum(arr, k=1.0):
    def impl(arr, k=1.0):
        return arr.sum() * k
    return impl


@overload_attribute(types.Array, "span")
def _ol_span(arr):
    return lambda arr: arr.max() - arr.min()


@overload_method(types.Integer, "clamped")
def _ol_clamped(x, lo, hi):
    return lambda x, lo, hi: min(max(x, lo), hi)


def test_methods_and_attributes_on_arrays():
    @njit
    def f(a):
        return a.scaled_sum(), a.scaled_sum(2.0), a.scaled_sum(k=0.5), a.span

    a = np.array([3.0, -1.0, 4.0, 1.5])
    s = a.sum()
    assert f(a) == (s, s * 2.0, s * 0.5, a.max() - a.min())
    # Another array type compiles another implementation.
    b = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert f(b) == (b.sum(), b.sum() * 2.0, b.sum() * 0.5, 11)


def test_method_on_numbers():
    @njit
    def f(x):
        return x.clamped(0, 10)

    assert [f(v) for v in (-5, 5, 50)] == [0, 5, 10]


def test_unknown_member_is_still_a_typing_error():
    with pytest.raises(TypingError, match="Unknown attribute 'no_such_member'"):
        njit(lambda a: a.no_such_member)(np.zeros(2))
    # A declared method of another class does not apply to floats.
    with pytest.raises(TypingError, match="clamped"):
        njit(lambda x: x.clamped(0, 1))(1.5)


def test_operator_functions_can_be_overloaded_for_types_numba_rs_rejects():
    # operator.getitem on a float is meaningless to numba-rs; the overload gives it one
    # when called as a function.
    @overload(operator.getitem)
    def _ol(x, i):
        if isinstance(x, types.Float) and isinstance(i, types.Integer):
            return lambda x, i: x * i

    assert njit(lambda x, i: operator.getitem(x, i))(1.5, 4) == 6.0


# -- the drop-in switch --------------------------------------------------------------------


def test_drop_in_switch_runs_a_numba_script(tmp_path):
    script = tmp_path / "uses_numba.py"
    script.write_text(textwrap.dedent("""
        import sys
        import numpy as np
        import numba
        from numba import njit
        from numba.core import types
        from numba.extending import overload
        from numba.core.errors import TypingError

        def total(x):
            pass

        @overload(total)
        def ol_total(x):
            if isinstance(x, types.Array):
                return lambda x: x.sum()

        @njit
        def f(a):
            return total(a)

        try:
            import numba.roc  # Numba's removed ROCm target: not stood in for
            print("roc imported")
        except ImportError as e:
            print("no", e.name)
        import numba.cuda
        import numba_rs.cuda
        assert numba.cuda is numba_rs.cuda
        print(numba.__name__, f(np.arange(10.0)), sys.argv[1:],
              TypingError is numba.core.errors.TypingError)
    """))
    out = subprocess.run(
        [sys.executable, "-m", "numba_rs", str(script), "x"],
        capture_output=True, text=True, check=True, env=dict(os.environ),
    ).stdout.split("\n")
    assert out[0] == "no numba.roc"
    assert out[1] == f"numba_rs {np.arange(10.0).sum()} ['x'] True"


def test_operators_reach_operator_overloads_for_types_numba_rs_rejects():
    # `tuple * float`, `tuple += float` and `-tuple` mean nothing to numba-rs; these
    # overloads make them element-wise. `tuple + tuple` keeps numba-rs's concatenation.
    def is_float_pair(t):
        return isinstance(t, types.UniTuple) and isinstance(t.dtype, types.Float)

    @overload(operator.mul)
    def _ol_mul(a, b):
        if is_float_pair(a) and isinstance(b, types.Float):
            return lambda a, b: (a[0] * b, a[1] * b)

    @overload(operator.iadd)
    def _ol_iadd(a, b):
        if is_float_pair(a) and isinstance(b, types.Float):
            return lambda a, b: (a[0] + b, a[1] + b)

    @overload(operator.neg)
    def _ol_neg(a):
        if is_float_pair(a):
            return lambda a: (-a[1], -a[0])

    @njit
    def f(p, s):
        q = p * s
        q += s
        return q, -p, p + p

    p, s = (1.5, -2.0), 4.0
    want = ((p[0] * s + s, p[1] * s + s), (-p[1], -p[0]), p + p)
    assert f(p, s) == want
    with pytest.raises(TypingError):
        njit(lambda p: p * "x")(p)
