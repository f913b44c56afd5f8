"""Generators in nopython mode against CPython's generators (the same function run by the
interpreter is the oracle). The autouse fixture checks NRT balance after each test,
including the partially consumed and dropped ones."""

import gc

import numpy as np
import pytest

from numba_rs import njit
from numba_rs.errors import TypingError

RNG = np.random.default_rng(1234)


def py(f):
    """The undecorated function of a jitted one."""
    return f.py_func


@njit
def count(n):
    for i in range(n):
        yield i * 2


@njit
def pairs(n):
    for i in range(n):
        yield i, i * 0.5


@njit
def rows(a):
    for row in a:
        yield row


@njit
def scaled(a):
    for i in range(a.shape[0]):
        yield a[i:] * 2.0


@njit
def two_phase(a):
    for i in range(a.shape[0]):
        b = a * i
        yield b.sum()
        c = b + 1.0
        yield c[0]


@njit
def early(n, stop):
    for i in range(n):
        if i == stop:
            return
        yield i


@njit
def raiser(n, at):
    for i in range(n):
        if i == at:
            raise ValueError("boom", i)
        yield i


@njit
def mixed():
    yield 1
    yield 2.5


@njit
def accumulate():
    total = 0.0
    while True:
        v = yield total
        if v is not None:
            total += v


@njit
def ignores_sent(n):
    for i in range(n):
        yield i


@njit
def chained(g):
    for x in g:
        yield x + 1


@njit
def nested(n):
    for x in count(n):
        for y in count(x // 2):
            yield x * 100 + y


@pytest.mark.parametrize("n", [0, 1, 2, 7, 31])
def test_full_consumption_from_python(n):
    assert list(count(n)) == list(py(count)(n))
    assert list(pairs(n)) == list(py(pairs)(n))
    assert list(nested(n)) == list(py(nested)(n))


def test_iterator_protocol():
    g = count(3)
    assert iter(g) is g
    assert next(g) == 0
    assert [x for x in g] == [2, 4]
    with pytest.raises(StopIteration):
        next(g)
    with pytest.raises(StopIteration):
        next(g)
    assert "generator object count" in repr(count(1))


@pytest.mark.parametrize("take", [0, 1, 2])
def test_partial_consumption_then_drop(take):
    a = RNG.standard_normal((4, 3))
    for gen, arg in ((rows, a), (scaled, a), (two_phase, a[0])):
        g, ref = gen(arg), py(gen)(arg)
        for _ in range(take):
            np.testing.assert_allclose(next(g), next(ref))
        del g
        gc.collect()


@pytest.mark.parametrize("shape", [(1,), (5,), (3, 4)])
def test_arrays_and_views(shape):
    a = RNG.standard_normal(shape)
    gens = (rows, scaled, two_phase) if len(shape) == 1 else (rows, scaled)
    for gen in gens:
        got = list(gen(a))
        want = list(py(gen)(a))
        assert len(got) == len(want)
        for x, y in zip(got, want):
            np.testing.assert_allclose(x, y)


def test_generator_keeps_python_array_alive():
    g = rows(np.arange(6.0).reshape(3, 2))
    gc.collect()
    assert [r.tolist() for r in g] == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]


@pytest.mark.parametrize("stop", [0, 3, 10])
def test_return_ends_iteration(stop):
    assert list(early(8, stop)) == list(py(early)(8, stop))


def test_exception_reaches_python_consumer():
    def consume(gen):
        out = []
        g = gen(5, 2)
        with pytest.raises(ValueError) as e:
            for x in g:
                out.append(x)
        out.append(e.value.args)
        # A generator that raised is finished.
        out.append(list(g))
        return out

    assert consume(raiser) == consume(py(raiser))
    # The traceback pytest kept refers to the frame holding `g`: a cycle.
    gc.collect()


def test_exception_reaches_jitted_consumer():
    @njit
    def total(n, at):
        s = 0
        for x in raiser(n, at):
            s += x
        return s

    assert total(5, 9) == py(total)(5, 9)
    with pytest.raises(ValueError, match="boom"):
        total(5, 2)


def test_yield_types_unify():
    assert list(mixed()) == [1.0, 2.5]
    assert all(isinstance(x, float) for x in mixed())


def test_yield_optional_is_a_typing_error():
    @njit
    def opt():
        yield 1
        yield None

    with pytest.raises(TypingError, match="Can't unify yield type"):
        list(opt())


def test_no_yield_reached_types_as_generator():
    @njit
    def never(n):
        if n > 100:
            yield n

    assert list(never(3)) == []
    assert list(never(300)) == [300]


def test_send_from_python_matches_cpython():
    for gen in (accumulate, py(accumulate)):
        g = gen()
        assert next(g) == 0.0
        assert g.send(1.5) == 1.5
        assert g.send(2) == 3.5
        assert next(g) == 3.5
        g.close()
        with pytest.raises(StopIteration):
            next(g)


def test_send_before_start_must_be_none():
    for gen in (accumulate, py(accumulate)):
        g = gen()
        with pytest.raises(TypeError, match="just-started"):
            g.send(1.0)
        assert g.send(None) == 0.0


def test_send_to_generator_that_ignores_it():
    for gen in (ignores_sent, py(ignores_sent)):
        g = gen(3)
        next(g)
        assert g.send(99) == 1


def test_close_releases_state():
    a = RNG.standard_normal(6)
    g = two_phase(a)
    next(g)
    g.close()
    with pytest.raises(StopIteration):
        next(g)
    g.close()


def test_jitted_consumers():
    @njit
    def consume(n):
        s = 0
        for x in count(n):
            s += x
        return s

    @njit
    def with_next(n):
        g = count(n)
        return next(g) + next(g)

    @njit
    def with_default(n):
        g = count(n)
        return next(g, -1), next(g, -1)

    @njit
    def builtins(n):
        return sum(count(n)), min(count(n)), max(count(n)), any(count(n)), all(count(n))

    @njit
    def wrapped(n):
        s = 0
        for i, x in enumerate(count(n)):
            s += i * x
        for a, b in zip(count(n), count(n + 2)):
            s += a * b
        return s

    for n in (0, 1, 5, 17):
        assert consume(n) == py(consume)(n)
        assert with_default(n) == py(with_default)(n)
        assert wrapped(n) == py(wrapped)(n)
        if n >= 2:
            assert with_next(n) == py(with_next)(n)
        if n >= 1:
            assert builtins(n) == py(builtins)(n)
    with pytest.raises(StopIteration):
        with_next(1)
    with pytest.raises(ValueError, match="empty"):
        builtins(0)


def test_generators_passed_and_returned():
    @njit
    def make(n):
        return count(n)

    @njit
    def take(g):
        s = 0
        for x in g:
            s += x
        return s

    @njit
    def chain_sum(n):
        return sum(chained(count(n)))

    assert list(make(4)) == list(py(count)(4))
    assert take(count(6)) == sum(py(count)(6))
    # Partly consumed in Python, finished in jitted code.
    g = count(6)
    next(g)
    assert take(g) == sum(py(count)(6)) - 0
    assert chain_sum(5) == sum(x + 1 for x in py(count)(5))
    assert list(chained(count(4))) == [x + 1 for x in py(count)(4)]


def test_jitted_send_and_close():
    @njit
    def run():
        g = accumulate()
        next(g)
        g.send(1.5)
        r = g.send(2.0)
        g.close()
        return r

    @njit
    def send_first():
        g = accumulate()
        return g.send(1.0)

    @njit
    def closed_sum():
        g = count(10)
        first = next(g)
        g.close()
        return first + sum(g)

    assert run() == 3.5
    with pytest.raises(TypeError, match="just-started"):
        send_first()
    assert closed_sum() == 0


def test_partially_consumed_in_jitted_code():
    @njit
    def first_row_sum(a):
        g = rows(a)
        r = next(g)
        return r.sum()

    a = RNG.standard_normal((4, 3))
    assert np.isclose(first_row_sum(a), a[0].sum())


def test_dumps_show_generator_info_and_three_functions(tmp_path):
    import os
    import subprocess
    import sys

    src = tmp_path / "gmod.py"
    src.write_text(
        "from numba_rs import njit\n"
        "import numpy as np\n"
        "@njit\n"
        "def g(a):\n"
        "    for i in range(a.shape[0]):\n"
        "        yield a[i] * 2.0\n"
        "print(list(g(np.arange(3.0))))\n"
    )
    env = dict(os.environ, NUMBA_DUMP_IR="1", NUMBA_DUMP_LLVM="1")
    out = subprocess.run(
        [sys.executable, str(src)], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert "GENERATOR INFO: g" in out
    assert "generator state variables: [" in out
    assert "yield point #1: live variables = [" in out
    defines = [line for line in out.splitlines() if line.startswith("define ")]
    names = " ".join(defines)
    assert "@_ZN" in names
    for part in [".next(", ".close(", "@finalize__ZN", ".next.entry("]:
        assert part in names, part
    assert out.rstrip().endswith("[0.0, 2.0, 4.0]")
