"""A user type's implicit conversions, `print` support and jitted code called from its
box/unbox code (the rest of Numba's low-level extension API that test_extending uses):
`can_convert_to` with `lower_cast`, `lower_builtin("print_item", T)`, and
`c.pyapi.call_jit_code`. Oracles: CPython running the same functions on a Python class
that behaves as the conversion says (its `__index__`/`__float__`/`__str__`), and hand-
checked values."""

import operator

import pytest

from numba_rs import njit, types
from numba_rs.extending import (
    NativeValue,
    box,
    intrinsic,
    lower_builtin,
    lower_cast,
    models,
    overload,
    register_model,
    typeof_impl,
    unbox,
)
from numba_rs.typeconv import Conversion
from numba_rs.types import Signature


class Meter:
    """Converts to any number as 42 (the CPython oracle: `int(m)`, `float(m)`); prints as
    'meter!'."""

    def __index__(self):
        return 42

    def __int__(self):
        return 42

    def __float__(self):
        return 42.0

    def __add__(self, other):
        return 42 + (other if isinstance(other, (int, float)) else int(other))

    __radd__ = __add__

    def __mul__(self, other):
        return 42 * (other if isinstance(other, (int, float)) else int(other))

    __rmul__ = __mul__

    def __str__(self):
        return "meter!"


class MeterType(types.Opaque):
    def can_convert_to(self, typingctx, other):
        if isinstance(other, types.Number):
            return Conversion.safe
        return None


meter_type = MeterType("meter")
register_model(MeterType)(models.OpaqueModel)


@typeof_impl.register(Meter)
def _typeof_meter(val, c):
    return meter_type


@unbox(MeterType)
def _unbox_meter(typ, obj, c):
    return NativeValue(c.context.get_dummy_value())


@lower_cast(MeterType, types.Number)
def _meter_to_number(context, builder, fromty, toty, val):
    return context.get_constant(toty, 42)


@lower_builtin("print_item", MeterType)
def _print_meter(context, builder, sig, args):
    pyapi = context.get_python_api(builder)
    text = pyapi.unserialize(pyapi.serialize_object("meter!"))
    pyapi.print_object(text)
    pyapi.decref(text)
    return context.get_dummy_value()


THE_METER = Meter()


def as_float():
    return THE_METER


def add(a, b):
    return a + b


def add_fn(a, b):
    return operator.add(a, b)


def iadd(a, b):
    a += b
    return a


def mul(a, b):
    return a * b


def test_declared_return_type_converts_through_lower_cast():
    f = njit(types.float64())(as_float)
    assert f() == float(as_float()) == 42.0
    assert isinstance(f(), float)
    g = njit(types.int32())(as_float)
    assert g() == int(as_float())


@pytest.mark.parametrize("fn", [add, add_fn, iadd, mul])
@pytest.mark.parametrize("args", [(Meter(), Meter()), (Meter(), 3), (1.5, Meter()), (Meter(), 2.25)])
def test_operators_convert_a_user_type_to_the_number_operator(fn, args):
    # Numba types the number operator first: the user type converts (as CPython's
    # dunder methods compute here).
    got = njit(fn)(*args)
    want = fn(*args)
    assert got == want
    assert type(got) is type(want)


def test_an_overload_for_the_type_itself_is_not_used_when_a_conversion_applies():
    class Plain:
        pass

    class PlainType(types.Opaque):
        pass  # no conversion

    plain_type = PlainType("plain")
    register_model(PlainType)(models.OpaqueModel)
    typeof_impl.register(Plain)(lambda val, c: plain_type)
    unbox(PlainType)(lambda typ, obj, c: NativeValue(c.context.get_dummy_value()))

    def sub(a, b):
        return a - b

    @overload(operator.sub)
    def _sub(a, b):
        if isinstance(a, (PlainType, MeterType)) and isinstance(b, (PlainType, MeterType)):
            return lambda a, b: -1

    f = njit(sub)
    assert f(Plain(), Plain()) == -1  # only the overload applies
    assert f(Meter(), Meter()) == 0  # 42 - 42: the number operator comes first


def test_a_conversion_without_lower_cast_is_a_lowering_error():
    class Gauge:
        pass

    class GaugeType(types.Opaque):
        def can_convert_to(self, typingctx, other):
            return Conversion.safe if isinstance(other, types.Float) else None

    gauge_type = GaugeType("gauge")
    register_model(GaugeType)(models.OpaqueModel)
    typeof_impl.register(Gauge)(lambda val, c: gauge_type)
    unbox(GaugeType)(lambda typ, obj, c: NativeValue(c.context.get_dummy_value()))
    the_gauge = Gauge()

    def get():
        return the_gauge

    with pytest.raises(Exception, match=r"lowering cast\(gauge, float64\)"):
        njit(types.float64())(get)
    # A conversion the type refuses is a typing error naming both types.
    with pytest.raises(Exception, match="gauge.*int64"):
        njit(types.int64())(get)


def show(a, b, c):
    print("x", a, b, c)


def show_first(a):
    print(a, "tail")


def show_alone(a):
    print(a)


def test_print_item_prints_between_the_other_values(capsys):
    # The oracle: CPython printing the same values (Meter's __str__ says what the
    # print_item lowering writes).
    for fn, args in [(show, (1, Meter(), 2.5)), (show, (Meter(), Meter(), "s")),
                     (show_first, (Meter(),)), (show_alone, (Meter(),))]:
        fn(*args)
        want = capsys.readouterr().out
        njit(fn)(*args)
        assert capsys.readouterr().out == want


# -- box and unbox code calling jitted code (`c.pyapi.call_jit_code`) -------------------

MAGIC, OFFSET = 0xCAFE, 123


@intrinsic
def _plus_offset(typingctx, val):
    def impl(context, builder, sig, args):
        return builder.add(args[0], args[0].type(OFFSET))

    return Signature(val, (val,)), impl


def _make_handle_type(name, unboxer_raises=False, boxer_raises=False):
    class Handle:
        pass

    class HandleType(types.Opaque):
        pass

    handle_type = HandleType(name)
    register_model(HandleType)(models.OpaqueModel)
    typeof_impl.register(Handle)(lambda val, c: handle_type)

    @unbox(HandleType)
    def _unbox(typ, obj, c):
        def bridge(x):
            if unboxer_raises and x > 0:
                raise ValueError("unbox bridge: x > 0")
            return _plus_offset(x)

        args = [c.context.get_constant(types.intp, MAGIC)]
        is_error, res = c.pyapi.call_jit_code(bridge, Signature(types.voidptr, (types.intp,)), args)
        return NativeValue(res, is_error=is_error)

    @box(HandleType)
    def _box(typ, val, c):
        def bridge(x):
            if boxer_raises and x > 0:
                raise ValueError("box bridge: x > 0")
            return x

        addr = c.builder.ptrtoint(val, c.context.get_value_type(types.intp))
        is_error, res = c.pyapi.call_jit_code(bridge, Signature(types.intp, (types.intp,)), [addr])
        with c.builder.if_else(is_error) as (then, otherwise):
            with then:
                err_block = c.builder.block
            with otherwise:
                ok = c.pyapi.long_from_ssize_t(res)
                ok_block = c.builder.block
        phi = c.builder.phi(ok.type)
        phi.add_incoming(c.pyapi.get_null_object(), err_block)
        phi.add_incoming(ok, ok_block)
        return phi

    return Handle


def test_unbox_and_box_call_jitted_code():
    Handle = _make_handle_type("handle_a")
    passthru = njit(lambda h: h)
    # unbox: the bridge's result (MAGIC + OFFSET) is the pointer; box: its address.
    assert passthru(Handle()) == MAGIC + OFFSET


def test_an_exception_in_jitted_unbox_code_reaches_the_caller():
    Handle = _make_handle_type("handle_b", unboxer_raises=True)
    with pytest.raises(ValueError, match="unbox bridge: x > 0"):
        njit(lambda h: 1)(Handle())


def test_an_exception_in_jitted_box_code_reaches_the_caller():
    Handle = _make_handle_type("handle_c", boxer_raises=True)
    with pytest.raises(ValueError, match="box bridge: x > 0"):
        njit(lambda h: h)(Handle())


def test_item_stores_and_deletes_on_a_user_type_use_its_overloads(capsys):
    from numba_rs.extending import overload

    def store(m, i, v):
        m[i] = v
        del m[i + 1]

    @overload(operator.setitem)
    def _setitem(m, i, v):
        if isinstance(m, MeterType):
            def impl(m, i, v):
                print("set", i, v)
            return impl

    @overload(operator.delitem)
    def _delitem(m, i):
        if isinstance(m, MeterType):
            def impl(m, i):
                print("del", i)
            return impl

    njit(store)(Meter(), 3, 4.5)
    assert capsys.readouterr().out == "set 3 4.5\ndel 4\n"


def test_explicit_signatures_name_user_and_jitclass_types():
    from numba_rs.experimental import jitclass

    @jitclass([("x", types.float64)])
    class Pt:
        def __init__(self, x):
            self.x = x

    twice = njit(types.float64(Pt.class_type.instance_type))(lambda p: p.x * 2)
    assert twice(Pt(1.5)) == 3.0
    # A user's opaque type in a signature: converted by its lower_cast on return.
    ident = njit(types.float64(meter_type))(lambda m: m)
    assert ident(Meter()) == float(Meter())


def test_box_code_may_name_c_api_functions_compiled_code_already_resolved():
    # In a fresh process: a print_item lowering (linked into the caller, so the JIT
    # resolves `Py_DecRef` from the process) first, then box code naming `Py_DecRef` as
    # an external: it was defined a second time ("Duplicate definition of symbol").
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        """
        import io, contextlib
        from numba_rs import njit, types
        from numba_rs.extending import (NativeValue, box, lower_builtin, models,
                                        register_model, typeof_impl, unbox)

        class Tag:
            pass

        class TagType(types.Opaque):
            pass

        tag_type = TagType("tag")
        register_model(TagType)(models.OpaqueModel)
        typeof_impl.register(Tag)(lambda val, c: tag_type)
        unbox(TagType)(lambda typ, obj, c: NativeValue(c.context.get_dummy_value()))

        @lower_builtin("print_item", TagType)
        def _print(context, builder, sig, args):
            pyapi = context.get_python_api(builder)
            s = pyapi.unserialize(pyapi.serialize_object("tag!"))
            pyapi.print_object(s)
            pyapi.decref(s)
            return context.get_dummy_value()

        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            njit(lambda t: print(t))(Tag())
        assert out.getvalue() == "tag!\\n", out.getvalue()

        @box(TagType)
        def _box(typ, val, c):
            cls = c.pyapi.unserialize(c.pyapi.serialize_object(Tag))
            res = c.pyapi.call_function_objargs(cls, ())
            c.pyapi.decref(cls)
            return res

        assert isinstance(njit(lambda t: t)(Tag()), Tag)
        print("ok")
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]
