"""`@intrinsic`: typing functions returning `(signature, codegen)`, bodies written with
llvmlite's IR builder. CPython computing the same values is the oracle."""

import numpy as np
import pytest

ir = pytest.importorskip("llvmlite.ir")

from numba_rs import njit, types  # noqa: E402
from numba_rs.errors import TypingError  # noqa: E402
from numba_rs.extending import intrinsic  # noqa: E402


@intrinsic
def add_ints(typingctx, a, b):
    if not (isinstance(a, types.Integer) and isinstance(b, types.Integer)):
        return None
    sig = types.int64(types.int64, types.int64)

    def codegen(context, builder, signature, args):
        x, y = args
        return builder.add(x, y)

    return sig, codegen


@intrinsic
def second_field(typingctx, pair):
    # Reads a struct field: item 1 of a (int64, float64) tuple's LLVM struct.
    if not (isinstance(pair, types.Tuple) and len(pair) == 2):
        return None
    sig = pair.types[1](pair)

    def codegen(context, builder, signature, args):
        return builder.extract_value(args[0], 1)

    return sig, codegen


@intrinsic
def nitems(typingctx, arr):
    # Numba's array struct: meminfo, parent, nitems, itemsize, data, shape, strides.
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, signature, args):
        return builder.extract_value(args[0], 2)

    return types.intp(arr), codegen


@intrinsic
def to_float(typingctx, x):
    def codegen(context, builder, signature, args):
        return context.cast(builder, args[0], signature.args[0], signature.return_type)

    return types.float64(x), codegen


@intrinsic
def nothing(typingctx, x):
    def codegen(context, builder, signature, args):
        return context.get_dummy_value()

    return types.void(x), codegen


@intrinsic(prefer_literal=True)
def literal_plus_one(typingctx, x):
    if isinstance(x, types.IntegerLiteral):
        v = x.literal_value + 1

        def codegen(context, builder, signature, args):
            return context.get_constant(types.int64, v)

        return types.int64(x), codegen
    return None


def test_add_two_integers():
    @njit
    def f(a, b):
        return add_ints(a, b) * 2

    assert f(3, 4) == (3 + 4) * 2
    assert f(-10, 2**40) == (-10 + 2**40) * 2


def test_struct_field_and_array_struct():
    @njit
    def f(t, a):
        return second_field(t), nitems(a)

    a = np.zeros((3, 5))
    assert f((7, 2.5), a) == (2.5, a.size)


def test_context_cast_and_void():
    @njit
    def f(i, b):
        nothing(i)
        return to_float(i) / 2, to_float(b)

    assert f(7, True) == (3.5, 1.0)
    assert f(-3, False) == (-1.5, 0.0)


def test_literal_arguments():
    @njit
    def f():
        return literal_plus_one(41)

    assert f() == 42


def test_rejected_types_and_python_calls():
    @njit
    def f(x):
        return add_ints(x, 1)

    with pytest.raises(TypingError, match="add_ints|No implementation"):
        f(1.5)
    with pytest.raises(NotImplementedError, match="only be called from jitted code"):
        add_ints(1, 2)


@intrinsic
def scaled(typingctx, x, factor):
    sig = types.float64(types.float64, types.float64)

    def codegen(context, builder, signature, args):
        return builder.fmul(args[0], args[1])

    return sig, codegen


def test_keyword_arguments_and_conversions():
    @njit
    def f(x):
        # int arguments convert to the signature's float64.
        return scaled(factor=3, x=x), scaled(x, 0.5)

    assert f(2) == (6.0, 1.0)
    assert f(1.5) == (4.5, 0.75)


def test_prefer_literal_orders_the_attempts():
    # As Numba: non-literal types first unless prefer_literal; the other kind when the
    # first attempt gives nothing or raises.
    from llvmlite import ir as llir

    from numba_rs.errors import TypingError as RsTypingError
    from numba_rs.types import Signature

    def intrin(context, x):
        sig = Signature(types.intp, (x,))
        if isinstance(x, types.IntegerLiteral):
            if x.literal_value == 1:
                return sig, lambda c, b, s, a: llir.Constant(llir.IntType(64), 0xCAFE)
            raise RsTypingError("literal value")
        return sig, lambda c, b, s, a: b.mul(a[0], llir.Constant(llir.IntType(64), 100))

    prefer = intrinsic(prefer_literal=True)(intrin)
    plain = intrinsic(prefer_literal=False)(intrin)

    @njit
    def with_prefer(x):
        return prefer(1), prefer(2), prefer(x)

    @njit
    def with_plain(x):
        return plain(1), plain(2), plain(x)

    assert with_prefer(3) == (0xCAFE, 200, 300)
    assert with_plain(3) == (100, 200, 300)


def test_codegen_failures_are_lowering_errors():
    from numba_rs.errors import LoweringError

    @intrinsic
    def void_func(typingctx, a):
        return types.none(a), lambda c, b, s, args: None

    @intrinsic
    def non_void_func(typingctx, a):
        return types.int64(a), lambda c, b, s, args: None

    @njit
    def call_void(x):
        void_func(x)
        return 0

    @njit
    def call_non_void(x):
        return non_void_func(x)

    assert call_void(1) == 0
    with pytest.raises(LoweringError, match="non-void function returns None"):
        call_non_void(1)
