"""Numba's documented low-level extension example ("Interval"), end to end with
numba_rs's imports: `typeof_impl`, a `types.Type` subclass, `StructModel`,
`make_attribute_wrapper`, `overload_attribute`, `type_callable` + `lower_builtin`,
`unbox` and `box` written with llvmlite against `c.pyapi`. CPython running the same
functions on the Python class is the oracle."""

import math
import random

import pytest

from numba_rs import cgutils, njit, types
from numba_rs.errors import TypingError
from numba_rs.extending import (
    NativeValue,
    as_numba_type,
    box,
    lower_builtin,
    make_attribute_wrapper,
    models,
    overload_attribute,
    register_model,
    type_callable,
    typeof_impl,
    unbox,
)

pytest.importorskip("llvmlite")


class Interval:
    """A half-open interval [lo, hi)."""

    def __init__(self, lo, hi):
        self.lo = lo
        self.hi = hi

    def __repr__(self):
        return f"Interval({self.lo:f}, {self.hi:f})"

    @property
    def width(self):
        return self.hi - self.lo


class IntervalType(types.Type):
    def __init__(self):
        super().__init__(name="Interval")


interval_type = IntervalType()


@typeof_impl.register(Interval)
def _typeof_interval(val, c):
    return interval_type


as_numba_type.register(Interval, interval_type)


@type_callable(Interval)
def _type_interval(context):
    def typer(lo, hi):
        if isinstance(lo, types.Float) and isinstance(hi, types.Float):
            return interval_type

    return typer


@register_model(IntervalType)
class IntervalModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        members = [("lo", types.float64), ("hi", types.float64)]
        models.StructModel.__init__(self, dmm, fe_type, members)


make_attribute_wrapper(IntervalType, "lo", "lo")
make_attribute_wrapper(IntervalType, "hi", "hi")


@overload_attribute(IntervalType, "width")
def _get_width(interval):
    def getter(interval):
        return interval.hi - interval.lo

    return getter


@lower_builtin(Interval, types.Float, types.Float)
def _impl_interval(context, builder, sig, args):
    typ = sig.return_type
    lo, hi = args
    interval = cgutils.create_struct_proxy(typ)(context, builder)
    interval.lo = lo
    interval.hi = hi
    return interval._getvalue()


@unbox(IntervalType)
def _unbox_interval(typ, obj, c):
    lo_obj = c.pyapi.object_getattr_string(obj, "lo")
    hi_obj = c.pyapi.object_getattr_string(obj, "hi")
    interval = cgutils.create_struct_proxy(typ)(c.context, c.builder)
    interval.lo = c.pyapi.float_as_double(lo_obj)
    interval.hi = c.pyapi.float_as_double(hi_obj)
    c.pyapi.decref(lo_obj)
    c.pyapi.decref(hi_obj)
    is_error = cgutils.is_not_null(c.builder, c.pyapi.err_occurred())
    return NativeValue(interval._getvalue(), is_error=is_error)


@box(IntervalType)
def _box_interval(typ, val, c):
    interval = cgutils.create_struct_proxy(typ)(c.context, c.builder, value=val)
    lo_obj = c.pyapi.float_from_double(interval.lo)
    hi_obj = c.pyapi.float_from_double(interval.hi)
    class_obj = c.pyapi.unserialize(c.pyapi.serialize_object(Interval))
    res = c.pyapi.call_function_objargs(class_obj, (lo_obj, hi_obj))
    c.pyapi.decref(lo_obj)
    c.pyapi.decref(hi_obj)
    c.pyapi.decref(class_obj)
    return res


def inside_interval(interval, x):
    return interval.lo <= x < interval.hi


def interval_width(interval):
    return interval.width


def sum_intervals(i, j):
    return Interval(i.lo + j.lo, i.hi + j.hi)


def widest(intervals_tuple):
    best = intervals_tuple[0]
    for iv in intervals_tuple:
        if iv.width > best.width:
            best = iv
    return best, best.width


def clipped(lo, hi, x):
    iv = Interval(lo, hi)
    return min(max(x, iv.lo), iv.hi - 1e-9), iv


def same(iv, pair):
    return pair, iv


def test_type_object_and_typeof():
    import numba_rs

    assert numba_rs.typeof(Interval(1.0, 2.0)) is interval_type
    assert IntervalType() is interval_type and str(interval_type) == "Interval"
    assert isinstance(interval_type, types.Type) and as_numba_type(Interval) is interval_type


def test_against_cpython_on_random_intervals():
    rng = random.Random(7)
    jit = {f.__name__: njit(f) for f in (inside_interval, interval_width, sum_intervals, widest, clipped, same)}
    for _ in range(200):
        lo = rng.uniform(-10, 10)
        hi = lo + rng.uniform(0, 5)
        a = Interval(lo, hi)
        b = Interval(rng.uniform(-3, 3), rng.uniform(3, 6))
        x = rng.uniform(-12, 12)
        assert jit["inside_interval"](a, x) == inside_interval(a, x)
        assert jit["interval_width"](a) == interval_width(a)
        got, want = jit["sum_intervals"](a, b), sum_intervals(a, b)
        assert isinstance(got, Interval) and (got.lo, got.hi) == (want.lo, want.hi)
        (gw, gwidth), (ww, wwidth) = jit["widest"]((a, b)), widest((a, b))
        assert (gw.lo, gw.hi, gwidth) == (ww.lo, ww.hi, wwidth)
        (gx, giv), (wx, wiv) = jit["clipped"](lo, hi, x), clipped(lo, hi, x)
        assert gx == wx and (giv.lo, giv.hi) == (wiv.lo, wiv.hi)
        (gp, gi), _ = jit["same"](a, (1, 2.5)), None
        assert gp == (1, 2.5) and (gi.lo, gi.hi) == (a.lo, a.hi)


def test_values_pass_between_jitted_functions():
    @njit
    def shift(iv, d):
        return Interval(iv.lo + d, iv.hi + d)

    @njit
    def twice(iv):
        return shift(shift(iv, 1.0), 1.0).width, shift(iv, 2.0)

    w, iv = twice(Interval(0.5, 1.5))
    assert w == 1.0 and (iv.lo, iv.hi) == (2.5, 3.5)


def test_unbox_errors_are_the_codes_errors():
    with pytest.raises(TypeError, match="must be real number, not str"):
        njit(inside_interval)(Interval("a", 2.0), 1.0)
    # The example's unbox reads `hi` without checking: PyFloat_AsDouble(NULL) then
    # replaces the AttributeError with its own TypeError, as it would under Numba.
    with pytest.raises(TypeError, match="bad argument type"):
        njit(inside_interval)(_NoHi(), 1.0)


class _NoHi(Interval):
    def __init__(self):
        self.lo = 1.0


def test_constructor_typing_failures_are_typing_errors():
    @njit
    def from_ints(a, b):
        return Interval(a, b)

    with pytest.raises(TypingError):
        from_ints(1, 2)


def test_struct_members_of_other_types():
    class Counter:
        def __init__(self, n, flag, scale):
            self.n, self.flag, self.scale = n, flag, scale

    class CounterType(types.Type):
        def __init__(self):
            super().__init__(name="Counter")

    counter_type = CounterType()

    @typeof_impl.register(Counter)
    def _typeof(val, c):
        return counter_type

    @register_model(CounterType)
    class CounterModel(models.StructModel):
        def __init__(self, dmm, fe_type):
            members = [("n", types.int32), ("flag", types.boolean), ("scale", types.float32)]
            super().__init__(dmm, fe_type, members)

    for name in ("n", "flag", "scale"):
        make_attribute_wrapper(CounterType, name, name)

    @unbox(CounterType)
    def _unbox(typ, obj, c):
        proxy = cgutils.create_struct_proxy(typ)(c.context, c.builder)
        for name, t in (("n", types.int32), ("flag", types.boolean), ("scale", types.float32)):
            o = c.pyapi.object_getattr_string(obj, name)
            setattr(proxy, name, c.unbox(t, o).value)
            c.pyapi.decref(o)
        return NativeValue(proxy._getvalue(), is_error=cgutils.is_not_null(c.builder, c.pyapi.err_occurred()))

    @njit
    def use(ct):
        return (ct.n * 3 if ct.flag else -ct.n), ct.scale * 2

    assert use(Counter(7, True, 0.25)) == (21, 0.5)
    assert use(Counter(-5, False, 1.5)) == (5, 3.0)


def _hypot_impl(a, b):
    return (a * a + b * b) ** 0.5


class Vec2:
    def __init__(self, x, y):
        self.x, self.y = x, y


class Vec2Type(types.Type):
    def __init__(self):
        super().__init__(name="Vec2")


vec2_type = Vec2Type()


@register_model(Vec2Type)
class _Vec2Model(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("x", types.float64), ("y", types.float64)])


make_attribute_wrapper(Vec2Type, "x", "x")
make_attribute_wrapper(Vec2Type, "y", "y")


def vec_norm(v):
    return math.hypot(v.x, v.y)


@type_callable(vec_norm)
def _type_norm(context):
    def typer(v):
        if isinstance(v, Vec2Type):
            return types.float64

    return typer


@lower_builtin(vec_norm, Vec2Type)
def _lower_norm(context, builder, sig, args):
    # A helper compiled from Python and called from the lowering (compile_internal).
    v = context.make_helper(builder, sig.args[0], value=args[0])
    return context.compile_internal(
        builder, _hypot_impl, types.float64(types.float64, types.float64), [v.x, v.y]
    )


@type_callable(Vec2)
def _type_vec2(context):
    def typer(x, y):
        if isinstance(x, types.Float) and isinstance(y, types.Float):
            return vec2_type

    return typer


@lower_builtin(Vec2, types.Float, types.Float)
def _lower_vec2(context, builder, sig, args):
    v = context.make_helper(builder, sig.return_type)
    v.x, v.y = args
    return v._getvalue()


def test_lowering_calls_compiled_python_through_compile_internal():
    @njit
    def norm_of(x, y):
        return vec_norm(Vec2(x, y))

    for x, y in ((3.0, 4.0), (1.5, -2.0), (0.0, 0.0)):
        assert norm_of(x, y) == pytest.approx(math.hypot(x, y), rel=1e-15)


class Signal:
    """An array with a gain: a struct type holding an NRT-managed member."""

    def __init__(self, data, gain):
        self.data, self.gain = data, gain


class SignalType(types.Type):
    def __init__(self):
        super().__init__(name="Signal")


signal_type = SignalType()
_signal_data = types.Array(types.float64, 1, "C")


@typeof_impl.register(Signal)
def _typeof_signal(val, c):
    return signal_type


@register_model(SignalType)
class _SignalModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("data", _signal_data), ("gain", types.float64)])


make_attribute_wrapper(SignalType, "data", "data")
make_attribute_wrapper(SignalType, "gain", "gain")


@type_callable(Signal)
def _type_signal(context):
    def typer(data, gain):
        if data == _signal_data and isinstance(gain, types.Float):
            return signal_type

    return typer


@lower_builtin(Signal, types.Array, types.Float)
def _lower_signal(context, builder, sig, args):
    s = context.make_helper(builder, sig.return_type)
    s.data, s.gain = args
    # The struct keeps its own reference to the array.
    context.nrt.incref(builder, sig.args[0], args[0])
    return s._getvalue()


@unbox(SignalType)
def _unbox_signal(typ, obj, c):
    s = cgutils.create_struct_proxy(typ)(c.context, c.builder)
    data = c.pyapi.object_getattr_string(obj, "data")
    gain = c.pyapi.object_getattr_string(obj, "gain")
    s.data = c.unbox(_signal_data, data).value
    s.gain = c.pyapi.float_as_double(gain)
    c.pyapi.decref(data)
    c.pyapi.decref(gain)
    return NativeValue(s._getvalue(), is_error=cgutils.is_not_null(c.builder, c.pyapi.err_occurred()))


@box(SignalType)
def _box_signal(typ, val, c):
    s = cgutils.create_struct_proxy(typ)(c.context, c.builder, value=val)
    data = c.box(_signal_data, s.data)
    gain = c.pyapi.float_from_double(s.gain)
    cls = c.pyapi.unserialize(c.pyapi.serialize_object(Signal))
    res = c.pyapi.call_function_objargs(cls, (data, gain))
    for o in (data, gain, cls):
        c.pyapi.decref(o)
    return res


def test_struct_with_an_array_member_round_trips():
    import numpy as np

    @njit
    def energy(sig):
        return (sig.data * sig.gain).sum()

    @njit
    def amplified(sig, k):
        return Signal(sig.data * k, sig.gain * k)

    @njit
    def fresh(n):
        return Signal(np.arange(n) * 1.0, 0.5)

    data = np.linspace(0.0, 1.0, 7)
    s = Signal(data, 2.0)
    assert energy(s) == (data * 2.0).sum()
    out = amplified(s, 3.0)
    assert isinstance(out, Signal) and out.gain == 6.0
    np.testing.assert_array_equal(out.data, data * 3.0)
    f = fresh(5)
    np.testing.assert_array_equal(f.data, np.arange(5) * 1.0)
    assert f.gain == 0.5 and energy(f) == (np.arange(5) * 0.5).sum()
