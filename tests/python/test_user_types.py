"""Types a user defines for their own classes (the opaque part of Numba's low-level
extension API): `types.Opaque` subclasses, `typeof_impl`, `register_model(...)(
models.OpaqueModel)`, `unbox`. Values of such a class carry no data in compiled code;
overloads written for the type give them meaning. The oracle is CPython: the class's
own Python methods compute what the jitted code must."""

import operator

import numpy as np
import pytest

import numba_rs
from numba_rs import njit, types
from numba_rs.extending import (
    NativeValue,
    box,
    models,
    overload,
    overload_attribute,
    overload_method,
    register_model,
    typeof_impl,
    unbox,
)


class Token:
    """A Python class whose instances jitted code only hands to overloads."""

    def __getitem__(self, i):
        return i * 10

    def scaled(self, x, k=2):
        return x * k

    @property
    def answer(self):
        return 42


class TokenType(types.Opaque):
    pass


token_type = TokenType("token")
register_model(TokenType)(models.OpaqueModel)


@typeof_impl.register(Token)
def _typeof_token(val, c):
    return token_type


@unbox(TokenType)
def _unbox_token(typ, obj, c):
    return NativeValue(c.context.get_dummy_value())


def describe(t):
    pass


@overload(describe)
def _describe(t):
    if isinstance(t, TokenType):
        return lambda t: 7


@overload(operator.getitem)
def _getitem(t, i):
    if isinstance(t, TokenType) and isinstance(i, types.Integer):
        return lambda t, i: i * 10


@overload_method(TokenType, "scaled")
def _scaled(t, x, k=2):
    return lambda t, x, k=2: x * k


@overload_attribute(TokenType, "answer", inline="always")
def _answer(t):
    return lambda t: 42


def test_the_type_object_is_the_users_class():
    assert isinstance(token_type, TokenType) and isinstance(token_type, types.Opaque)
    assert str(token_type) == "token" and token_type.name == "token"
    assert numba_rs.typeof(Token()) is token_type
    # One type per class and name: a second class of the same name is another type.
    other = type("TokenType", (types.Opaque,), {})("token")
    assert other != token_type and TokenType("token") is token_type


def test_opaque_values_reach_their_overloads():
    def use(t, i, x):
        return describe(t), t[i], t[3], t.scaled(x), t.scaled(x, k=5), t.answer

    t = Token()
    expected = (7, t[4], t[3], t.scaled(1.5), t.scaled(1.5, k=5), t.answer)
    assert njit(use)(t, 4, 1.5) == expected
    assert use(t, 4, 1.5)[1:] == expected[1:]


def test_opaque_values_pass_between_jitted_functions():
    @njit
    def inner(t, a):
        return t[a.size] + a.sum()

    @njit
    def outer(t, a):
        return inner(t, a) * 2

    a = np.arange(4.0)
    assert outer(Token(), a) == (Token()[4] + a.sum()) * 2


def test_returning_an_opaque_value_without_box_is_refused():
    # As Numba: a TypeError when the call's result has to be boxed.
    with pytest.raises(TypeError, match="cannot convert native token to Python object"):
        njit(lambda t: t)(Token())


def test_unsupported_models_are_refused_by_name():
    class Other(types.Opaque):
        pass

    with pytest.raises(NotImplementedError, match="StructModel and models.OpaqueModel"):
        register_model(Other)(models.DataModel)
    with pytest.raises(AttributeError, match="ArrayModel"):
        models.ArrayModel


def test_opaque_values_box_and_unbox_through_the_users_code():
    class Ticket:
        def __init__(self, ok=True):
            self.ok = ok

    class TicketType(types.Opaque):
        pass

    ticket_type = TicketType("ticket")
    register_model(TicketType)(models.OpaqueModel)

    @typeof_impl.register(Ticket)
    def _typeof_ticket(val, c):
        return ticket_type

    @unbox(TicketType)
    def _unbox_ticket(typ, obj, c):
        # Refuses a ticket whose `ok` is false, with the error the code sets.
        ok = c.pyapi.object_getattr_string(obj, "ok")
        truth = c.pyapi.object_istrue(ok)
        c.pyapi.decref(ok)
        from llvmlite import ir

        bad = c.builder.icmp_signed("==", truth, ir.Constant(truth.type, 0))
        with c.builder.if_then(bad):
            c.pyapi.err_set_string("PyExc_ValueError", "bad ticket")
        return NativeValue(c.context.get_dummy_value(), is_error=bad)

    made = []

    @box(TicketType)
    def _box_ticket(typ, val, c):
        # Every boxed ticket is a new `Ticket()`, made by calling the class.
        cls = c.pyapi.unserialize(c.pyapi.serialize_object(Ticket))
        res = c.pyapi.call_function_objargs(cls, ())
        c.pyapi.decref(cls)
        made.append(1)
        return res

    same = njit(lambda t: t)
    out = same(Ticket())
    assert isinstance(out, Ticket) and out.ok
    with pytest.raises(ValueError, match="bad ticket"):
        same(Ticket(ok=False))


def test_numbas_own_opaque_types_are_accepted():
    pytest.importorskip("numba")
    from numba.core import types as nt
    from numba.extending import models as nmodels
    from numba.extending import register_model as n_register_model
    from numba.extending import typeof_impl as n_typeof_impl

    # Made as Numba's test support makes them: a class named after its metaclass's
    # module, registered in Numba's own registries.
    DummyType = type("DummyTypeForUserTypes", (nt.Opaque,), {})
    dummy_type = DummyType("my_dummy")
    n_register_model(DummyType)(nmodels.OpaqueModel)

    class Dummy:
        pass

    @n_typeof_impl.register(Dummy)
    def _typeof_dummy(val, c):
        return dummy_type

    def probe(x):
        pass

    @overload(probe)
    def _probe(x):
        # Written against Numba: it receives Numba's own type object.
        if isinstance(x, DummyType):
            return lambda x: 99

    # As in Numba, an opaque value (a pointer) crosses in only through unbox code.
    from numba.core.extending import NativeValue as NNativeValue
    from numba.extending import unbox as n_unbox

    Bare = type("BareTypeForUserTypes", (nt.Opaque,), {})
    bare_type = Bare("my_bare")
    n_register_model(Bare)(nmodels.OpaqueModel)

    class BareValue:
        pass

    @n_typeof_impl.register(BareValue)
    def _typeof_bare(val, c):
        return bare_type

    with pytest.raises(TypeError, match="can't unbox my_bare type"):
        njit(lambda d: 1)(BareValue())

    @n_unbox(DummyType)
    def _unbox_dummy(typ, obj, c):
        return NNativeValue(c.context.get_dummy_value())

    assert njit(lambda d: probe(d) + 1)(Dummy()) == 100


THE_TOKEN = Token()


def test_global_values_of_opaque_types():
    # A module-level value of a data-less user type is typed like an argument.
    @njit
    def use_global(i):
        return describe(THE_TOKEN) + THE_TOKEN[i]

    assert use_global(3) == 7 + Token()[3]


def test_overload_classmethod_on_a_type_class():
    from numba_rs.errors import TypingError
    from numba_rs.extending import overload_classmethod

    class Grid(types.Opaque):
        pass

    @overload_classmethod(Grid, "zeros")
    def _zeros(cls, n):
        def impl(cls, n):
            return np.zeros(n)

        return impl

    @njit
    def make(n):
        return Grid.zeros(n)

    np.testing.assert_array_equal(make(4), np.zeros(4))

    class Other(types.Opaque):
        pass

    @njit
    def missing(n):
        return Other.zeros(n)

    with pytest.raises(TypingError, match="Unknown attribute 'zeros'"):
        missing(2)
