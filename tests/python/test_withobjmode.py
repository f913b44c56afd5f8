"""`with objmode(...)` inside nopython functions (and the other context managers the
compiler rewrites): the same function run by CPython and compiled gives the same values,
exceptions and side effects; arrays cross in both directions without leaking (the NRT
balance fixture) and reference counts of the objects touched stay unchanged."""

import sys

import numpy as np
import pytest

import numba_rs
from numba_rs import njit, objmode, parallel_chunksize, prange, types
from numba_rs.errors import TypingError, UnsupportedError


def run_both(pyfunc, *args, capsys=None, **jitopts):
    """The result (and printed text) of CPython and of the compiled function."""
    expect = pyfunc(*args)
    out_py = capsys.readouterr().out if capsys else None
    got = njit(**jitopts)(pyfunc)(*args)
    out_jit = capsys.readouterr().out if capsys else None
    return expect, got, out_py, out_jit


def double(x):
    return x * 2


def scalars_in_out(a, n):
    s = 0
    for i in range(n):
        s += i
    with objmode(y="int64", z="float64"):
        y = double(s) + 1  # any Python: a global function
        z = float(a) / 3
    return y + s, z


def test_scalars_in_and_out():
    for args in [(1.5, 4), (-2.0, 0), (7.0, 10)]:
        expect, got, _, _ = run_both(scalars_in_out, *args)
        assert got == expect


def array_in_out(a):
    b = a + 1.0
    with objmode(c="float64[:]", k="intp"):
        c = np.asarray([v * 2 for v in b.tolist()])  # a list comprehension in object mode
        k = len(c)
    return c.sum() + k, c


def test_arrays_cross_both_ways():
    a = np.arange(6.0)
    expect, got, _, _ = run_both(array_in_out, a)
    assert got[0] == expect[0]
    np.testing.assert_array_equal(got[1], expect[1])


def mutate_in_place(a, z):
    a[0] = z
    with objmode():
        a[1] = a[0] * 10  # the nopython side sees the change: same memory
    return a


def test_input_array_shared_with_object_mode():
    a = np.arange(4)
    expect = mutate_in_place(a.copy(), 5)
    got = njit(mutate_in_place)(a, 5)
    np.testing.assert_array_equal(got, expect)
    np.testing.assert_array_equal(a, expect)


def made_in_objmode(n):
    with objmode(y="int64[:]"):
        y = np.arange(n, dtype=np.int64) * 3
    t = 0
    for i in range(y.shape[0]):  # the array outlives the block
        t += y[i]
    return t, y


def test_array_made_in_object_mode_outlives_the_block():
    for n in (0, 1, 7):
        expect, got, _, _ = run_both(made_in_objmode, n)
        assert got[0] == expect[0]
        np.testing.assert_array_equal(got[1], expect[1])


def printer(x):
    x += 1
    with objmode:
        print("ival =", {"ival": x // 2})
    return x + 1


def test_side_effects_print(capsys):
    expect, got, out_py, out_jit = run_both(printer, 123, capsys=capsys)
    assert got == expect
    assert out_jit == out_py


SEEN = []


def appends(n):
    for i in range(n):
        with objmode():
            SEEN.append(i * i)
    return n


def test_side_effects_global_list_and_loop():
    SEEN.clear()
    appends(4)
    expect = list(SEEN)
    SEEN.clear()
    assert njit(appends)(4) == 4
    assert SEEN == expect


def redefined(x):
    for x in range(x):
        pass
    if x:
        x += 1
    with objmode(x="intp"):
        x -= 1
        for i in range(x):
            x += i
    return x


def test_redefined_variable_versions():
    for n in (0, 1, 5, 123):
        expect, got, _, _ = run_both(redefined, n)
        assert got == expect


def returns_from_block(x):
    with objmode(x="int64[:]"):
        x += 1
        return x


def test_return_inside_the_block():
    got = njit(returns_from_block)(np.array([1, 2, 3]))
    np.testing.assert_array_equal(got, [2, 3, 4])


D = {}


def raises_key_error(x):
    for i in range(len(x)):
        with objmode():
            D[str(i)] = x[i]
            print(D["2"])
    return x


def test_python_exception_propagates(capsys):
    D.clear()
    with pytest.raises(KeyError) as e_py:
        raises_key_error(np.array([1, 2, 3]))
    D.clear()
    with pytest.raises(KeyError) as e_jit:
        njit(raises_key_error)(np.array([1, 2, 3]))
    assert e_jit.value.args == e_py.value.args


def conversion(x):
    with objmode(v="int64"):
        v = x * 1.5  # a float converted to the declared int64, as an argument would be
    return v


def test_outputs_converted_to_declared_type():
    assert njit(conversion)(5) == int(5 * 1.5)


def wrong_array(x):
    with objmode(z="float64[:]"):
        z = x + 1j
    return z


def test_wrong_array_type_raises():
    with pytest.raises(TypeError, match="can't unbox array from PyObject into native value"):
        njit(wrong_array)(np.array([1, 2, 3]))


GV = types.float64


def type_objects(a):
    with objmode(v=GV, w=types.intp, t="UniTuple(int64, 2)", u="Tuple((int64, float64))"):
        v = a * 1.5
        w = 3
        t = (1, 2)
        u = (4, 0.5)
    return v + w + t[0] + t[1] + u[0] + u[1]


def test_annotations_as_type_objects_attributes_and_constructors():
    assert njit(type_objects)(2.0) == type_objects(2.0)


def test_numba_objects_work_too():
    numba = pytest.importorskip("numba")

    def f(a):
        with numba.objmode(y=numba.types.float64):
            y = a + 0.5
        return y

    assert njit(f)(1.0) == 1.5


def missing_annotation(x):
    with objmode():
        t = {"a": x}
        u = 3
    return x, t, u


def extra_annotation(x):
    with objmode(k="float64[:]"):
        print(x)
    return x


def raise_inside(x):
    with objmode():
        raise ValueError()
    return x


def bad_value(x):
    with objmode(bad=1 + 1):
        out = 1
    return out


def undefined_global(x):
    with objmode(val=NOT_DEFINED_ANYWHERE):  # noqa: F821
        val = 1
    return val


class NotAContextManagerWeKnow:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


CM = NotAContextManagerWeKnow()


def other_context(x):
    with CM:
        x += 1
    return x


@pytest.mark.parametrize(
    "func, exc, text",
    [
        (
            missing_annotation,
            TypingError,
            "Missing type annotation on outgoing variable(s): ['t', 'u']\n\n"
            "Example code: with objmode(t='<add_type_as_string_here>')",
        ),
        (extra_annotation, TypingError, "Invalid type annotation on non-outgoing variables: {'k'}"),
        (raise_inside, UnsupportedError, "unsupported control flow due to raise statements inside with block"),
        (
            bad_value,
            UnsupportedError,
            "Error handling objmode argument 'bad'. The value must be a compile-time constant",
        ),
        (undefined_global, UnsupportedError, "Global 'NOT_DEFINED_ANYWHERE' is not defined."),
        (other_context, UnsupportedError, "Unsupported context manager in use"),
    ],
)
def test_errors_name_the_construct_and_line(func, exc, text):
    with pytest.raises(exc) as e:
        njit(func)(np.arange(3))
    msg = str(e.value)
    assert text in msg
    assert "File" in msg and "line" in msg


def test_python_semantics_outside_jit():
    # Outside jitted code the context managers do what Python code expects.
    with objmode(x="int64"):
        x = 1
    assert x == 1
    old = numba_rs.get_parallel_chunksize()
    with parallel_chunksize(7):
        assert numba_rs.get_parallel_chunksize() == 7
    assert numba_rs.get_parallel_chunksize() == old


def chunk(n):
    acc = 0
    with parallel_chunksize(3):
        inside = numba_rs.get_parallel_chunksize()
        for i in prange(n):
            acc += i
    return acc, inside, numba_rs.get_parallel_chunksize()


def test_parallel_chunksize_in_jitted_code():
    old = numba_rs.get_parallel_chunksize()
    acc, inside, after = njit(parallel=True)(chunk)(100)
    assert (acc, inside, after) == (sum(range(100)), 3, old)


def nogil_blocks(a):
    s = 0.0
    for i in range(3):
        with objmode(t="float64"):
            t = float(np.sum(a)) + i
        s += t
    return s


def test_nogil_function_takes_the_gil_for_the_block():
    import warnings

    a = np.arange(4.0)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert njit(nogil=True)(nogil_blocks)(a) == nogil_blocks(a)
        assert njit(nogil_blocks)(a) == nogil_blocks(a)
    # Numba's warning, once, at the block's line, and only for the nogil function.
    got = [x for x in w if "despite nogil=True" in str(x.message)]
    assert len(got) == 1
    assert got[0].category is numba_rs.errors.NumbaWarning
    assert got[0].filename == __file__
    assert got[0].lineno == nogil_blocks.__code__.co_firstlineno + 3


def test_refcounts_unchanged():
    a = np.arange(5.0)
    f = njit(array_in_out)
    f(a)
    before = sys.getrefcount(a)
    for _ in range(200):
        f(a)
    assert sys.getrefcount(a) == before
    g = njit(mutate_in_place)
    g(a, 1.0)
    before = sys.getrefcount(a)
    for _ in range(200):
        g(a, 1.0)
    assert sys.getrefcount(a) == before


def test_ir_shows_the_lifted_call(capfd, monkeypatch):
    monkeypatch.setenv("NUMBA_DUMP_IR", "1")
    njit(scalars_in_out)(1.0, 2)
    out = capfd.readouterr().out
    # Numba prints the lifted body as a constant of the caller.
    assert "const(ObjModeLiftedWith, ObjModeLiftedWith(<function scalars_in_out" in out
    assert "enter_with" in out  # the dump before with-lifting


def with_as(x):
    with objmode as cm:  # noqa: F841
        x += 1
    return x


def test_with_as_is_rejected_as_numba_does():
    with pytest.raises(UnsupportedError, match=r"The 'with \(context manager\) as \(variable\):' construct is not supported"):
        njit(with_as)(1)


def objmode_in_prange(n):
    out = np.zeros(n)
    for i in prange(n):
        with objmode(y="float64"):
            y = float(i) ** 0.5
        out[i] = y
    return out


def test_objmode_block_inside_a_prange_body(nthreads):
    # Each iteration takes the GIL for its block (the pool releases it while it runs).
    np.testing.assert_allclose(
        njit(parallel=True)(objmode_in_prange)(3000), objmode_in_prange(3000)
    )


def objmode_in_generator(n):
    for i in range(n):
        with objmode(y="int64"):
            y = i * 10 + len(str(i))
        yield y


def test_objmode_block_inside_a_generator():
    assert list(njit(objmode_in_generator)(12)) == list(objmode_in_generator(12))
