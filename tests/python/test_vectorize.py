"""vectorize, guvectorize and cfunc against NumPy's own ufunc machinery (np.frompyfunc,
np.vectorize), Python loops and C callers (ctypes, libc's qsort, a compiled C program)."""

import ctypes
import platform
import math
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import numba_rs
from numba_rs import cfunc, guvectorize, njit, vectorize
from numba_rs.errors import NumbaWarning

RNG = np.random.default_rng(17)


def add(x, y):
    return x + y


def sinc(x):
    if x == 0.0:
        return 1.0
    return math.sin(x * math.pi) / (math.pi * x)


def clipped(x, lo):
    if x < lo:
        return lo
    return x * 2


def reference(fn, *args, dtype):
    """The Python function applied element-wise by NumPy (broadcasting included)."""
    return np.frompyfunc(fn, len(args), 1)(*args).astype(dtype)


# ------------------------------------------------------------------------ vectorize

@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32", "float32", "float64", "complex128"])
def test_vectorize_matches_numpy_on_every_dtype(dtype):
    f = vectorize([f"{dtype}({dtype}, {dtype})"])(add)
    for shape_a, shape_b in [((7,), (7,)), ((3, 4), (4,)), ((2, 1, 5), (3, 1)), ((), (6,))]:
        a = (RNG.random(shape_a) * 100).astype(dtype)
        b = (RNG.random(shape_b) * 100).astype(dtype)
        got = f(a, b)
        want = reference(add, a, b, dtype=dtype)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, want)


def test_vectorize_is_a_dufunc_with_numpy_attributes():
    f = vectorize(["float64(float64, float64)", "int64(int64, int64)"])(add)
    assert isinstance(f, numba_rs.DUFunc)
    assert isinstance(f.ufunc, np.ufunc)
    assert (f.nin, f.nout, f.nargs, f.ntypes) == (2, 1, 3, 2)
    assert f.types == ["dd->d", "ll->l"]
    assert f.__name__ == "add" and f.identity is None
    # NumPy tries the loops in signature order: int64 inputs cast safely to the first.
    assert f(np.arange(3), np.arange(3)).dtype == np.float64


def test_vectorize_branches_and_scalar_arguments():
    f = vectorize(["float64(float64, float64)"])(clipped)
    a = RNG.normal(size=(5, 6))
    np.testing.assert_array_equal(f(a, 0.25), reference(clipped, a, 0.25, dtype="float64"))
    assert f(3.0, 1.0) == 6.0
    g = vectorize(["float64(float64)", "float32(float32)"])(sinc)
    x = np.linspace(-3, 3, 101)
    with warnings.catch_warnings():
        # No warning: the kernel never divides 0 by 0 (the branch is kept per element).
        warnings.simplefilter("error")
        np.testing.assert_allclose(g(x), np.vectorize(sinc)(x), rtol=1e-15)
    # NumPy tries the loops in order: float32 casts safely to the first (float64).
    assert g(x.astype(np.float32)).dtype == np.float64
    g32 = vectorize(["float32(float32)", "float64(float64)"])(sinc)
    assert g32(x.astype(np.float32)).dtype == np.float32


def test_out_where_and_methods_are_numpys():
    f = vectorize(["float64(float64, float64)"], identity=0)(add)
    a = RNG.random((4, 5))
    out = np.full((4, 5), -1.0)
    r = f(a, a, out=out)
    assert r is out
    np.testing.assert_array_equal(out, a + a)
    mask = a > 0.5
    out2 = np.zeros((4, 5))
    f(a, 1.0, out=out2, where=mask)
    np.testing.assert_array_equal(out2, np.where(mask, a + 1.0, 0.0))
    np.testing.assert_allclose(f.reduce(a, axis=0), a.sum(axis=0))
    np.testing.assert_allclose(f.reduce(a, axis=None), a.sum())
    assert f.reduce(np.zeros(0)) == 0.0
    np.testing.assert_allclose(f.accumulate(a[0]), np.cumsum(a[0]))
    np.testing.assert_allclose(f.outer(a[0], a[1]), np.add.outer(a[0], a[1]))
    np.testing.assert_allclose(f.reduceat(a[0], [0, 2]), np.add.reduceat(a[0], [0, 2]))
    b = np.zeros(4)
    f.at(b, [0, 0, 3], 1.0)
    np.testing.assert_array_equal(b, [2.0, 0.0, 0.0, 1.0])


def test_identity_option():
    assert vectorize(["f8(f8,f8)"], identity=1)(add).identity == 1
    r = vectorize(["f8(f8,f8)"], identity="reorderable")(add)
    assert r.identity is None
    with pytest.raises(ValueError):
        r.reduce(np.zeros(0))
    with pytest.raises(ValueError, match="Invalid identity value 2"):
        vectorize(["f8(f8,f8)"], identity=2)(add)


def test_unknown_option_is_numbas_keyerror():
    with pytest.raises(KeyError, match="Unrecognized options"):
        vectorize(["f8(f8,f8)"], nonexistent=2)(add)
    with pytest.raises(KeyError, match="Unrecognized options"):
        vectorize(target="parallel", nonexistent=2)(add)


def test_dynamic_vectorize_compiles_per_input_types():
    f = vectorize(add)
    assert f.types == []
    assert f(1, 2) == 3
    assert f.types == ["ll->l"]
    # A float and an int: no loop takes them safely, so one is compiled for them.
    assert f(1.5, 2) == 3.5
    assert f.types == ["ll->l", "dl->d"]
    # int32 arrays cast safely to the int64 loop: nothing new.
    np.testing.assert_array_equal(f(np.arange(3, dtype=np.int32), 1), [1, 2, 3])
    assert f.types == ["ll->l", "dl->d"]
    np.testing.assert_allclose(f.reduce(np.arange(4.0)), 6.0)


def test_numpy_error_model_in_kernels():
    inv = vectorize(["float64(float64)"])(lambda x: 1.0 / x)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = inv(np.array([0.0, 2.0]))
    np.testing.assert_array_equal(r, [np.inf, 0.5])
    assert any(issubclass(x.category, RuntimeWarning) for x in w)
    idiv = vectorize(["int64(int64)"])(lambda x: 7 // x)
    np.testing.assert_array_equal(idiv(np.array([0, 2])), [0, 3])


def raising(x):
    if x < 0:
        raise ValueError("negative input")
    return x + 1.0


def test_kernel_exception_propagates():
    f = vectorize(["float64(float64)"])(raising)
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [2.0, 3.0])
    with pytest.raises(ValueError, match="negative input"):
        f(np.array([1.0, -1.0, 2.0]))
    with pytest.raises(ValueError, match="negative input"):
        f(RNG.normal(size=10_000))


def hypot(x, y):
    return math.sqrt(x * x + y * y)


def test_parallel_target_matches_cpu(nthreads):
    par = vectorize(["float64(float64, float64)"], target="parallel")(hypot)
    cpu = vectorize(["float64(float64, float64)"])(hypot)
    for n in (0, 5, 100_001):
        a, b = RNG.random(n), RNG.random(n)
        np.testing.assert_array_equal(par(a, b), cpu(a, b))
    m = RNG.random((300, 400))
    np.testing.assert_array_equal(par(m, m.T[:400, :300].T), cpu(m, m))
    with pytest.raises(ValueError, match="negative input"):
        vectorize(["float64(float64)"], target="parallel")(raising)(-np.ones(50_000))


def test_vectorize_of_a_jitted_function_and_from_jitted_code():
    f = vectorize(["float64(float64, float64)"])(njit(add))
    np.testing.assert_array_equal(f(np.arange(3.0), 1.0), [1.0, 2.0, 3.0])

    @njit
    def use(x):
        return f(x, 2.0) * 2

    assert use(1.5) == 7.0


def test_vectorize_called_from_jitted_code_with_arrays():
    """From jitted code a vectorize object broadcasts over arrays (a new C array), writes a
    positional output argument and returns it, and picks loops as Numba does: a frozen
    ufunc casts to its first loop the inputs reach safely, a dynamic one compiles the
    inputs' own types (and the Python-visible ufunc gains the loop)."""
    frozen = vectorize(["float64(float64, float64)", "int64(int64, int64)"])(add)
    dynamic = vectorize(lambda x, y: x * y + 1)

    @njit
    def call(f_x, y):
        return frozen(f_x, y), dynamic(f_x, y)

    @njit
    def into(x, y, out):
        return dynamic(x, y, out)

    a = RNG.random((4, 3))
    b = RNG.random(3)
    got_f, got_d = call(a, b)
    np.testing.assert_array_equal(got_f, reference(add, a, b, dtype="float64"))
    np.testing.assert_array_equal(got_d, a * b + 1)
    assert got_f.flags.c_contiguous and got_f.shape == (4, 3)
    # Integer inputs to the frozen ufunc take its float loop (listed first), as in NumPy.
    ai = RNG.integers(-50, 50, (5,))
    got_f, got_d = call(ai, 3)
    assert got_f.dtype == np.float64 and got_d.dtype == np.int64
    np.testing.assert_array_equal(got_f, ai + 3.0)
    np.testing.assert_array_equal(got_d, ai * 3 + 1)
    assert "ll->l" in dynamic.types
    # Scalars give a scalar.
    assert call(2, 5) == (7.0, 11)
    # A strided view and a 0-stride broadcast input.
    s = RNG.random((6, 8))[::2, ::3]
    np.testing.assert_array_equal(call(s, 2.0)[1], s * 2.0 + 1)
    out = np.zeros((4, 3))
    r = into(a, b, out)
    assert r is out
    np.testing.assert_array_equal(out, a * b + 1)
    with pytest.raises(ValueError, match="non-broadcastable output"):
        into(a, b, np.zeros((1, 3)))
    with pytest.raises(ValueError, match="could not be broadcast"):
        call(a, np.ones(4))


def test_frozen_vectorize_rejects_types_it_has_no_loop_for_in_jitted_code():
    f = vectorize(["float64(float64)"])(lambda x: x + 1)

    @njit
    def use(x):
        return f(x)

    with pytest.raises(numba_rs.errors.TypingError, match="cannot call"):
        use(1j)


def test_kernel_exceptions_are_dropped_in_jitted_code():
    """Numba runs the kernel without checking its status from jitted code: the element
    keeps the zero result."""
    @vectorize
    def bad(x):
        if x > 1:
            raise ValueError("too big")
        return x * 10

    @njit
    def use(a):
        return bad(a)

    np.testing.assert_array_equal(use(np.array([0.5, 2.0, 0.25])), [5.0, 0.0, 2.5])
    assert use(3.0) == 0.0


def test_vectorize_pickles_by_value_and_honours_nep13():
    import pickle

    @vectorize(["f8(f8)"])
    def double(x):
        return x * 2

    @vectorize
    def triple(x):
        return x * 3

    triple(np.arange(3))
    for f in (double, triple):
        g = pickle.loads(pickle.dumps(f))
        assert g._frozen == f._frozen and g.types == f.types
        np.testing.assert_array_equal(g(np.arange(4.0)), f(np.arange(4.0)))

    class Wrapped:
        def __init__(self, a):
            self.a = a

        def __array_ufunc__(self, ufunc, method, *args, **kws):
            seen.append(ufunc)
            args = [x.a if isinstance(x, Wrapped) else x for x in args]
            return getattr(ufunc, method)(*args, **kws)

    seen = []
    np.testing.assert_array_equal(double(Wrapped(np.arange(3.0))), [0.0, 2.0, 4.0])
    assert seen == [double]


# ------------------------------------------------------------------------ guvectorize

def test_guvectorize_dot_against_python_loops():
    @guvectorize(["void(float64[:], float64[:], float64[:])", "void(int64[:], int64[:], int64[:])"],
                 "(n),(n)->()")
    def dot(x, y, out):
        s = 0
        for i in range(x.shape[0]):
            s += x[i] * y[i]
        out[0] = s

    assert isinstance(dot, numba_rs.GUFunc)
    assert dot.signature == "(n),(n)->()" and dot.types == ["dd->d", "ll->l"]
    a = RNG.random((6, 5))
    b = RNG.random(5)
    want = np.array([sum(a[i, k] * b[k] for k in range(5)) for i in range(6)])
    np.testing.assert_allclose(dot(a, b), want, rtol=1e-14)
    ai = RNG.integers(-9, 9, (3, 4))
    np.testing.assert_array_equal(dot(ai, ai), (ai * ai).sum(axis=1))
    out = np.zeros(6)
    dot(a, b, out)
    np.testing.assert_allclose(out, want, rtol=1e-14)
    assert np.isscalar(dot(b, b)) or dot(b, b).shape == ()


def test_guvectorize_matrix_vector_and_scalar_inputs():
    @guvectorize(["void(float64[:,:], float64[:], float64, float64[:])"], "(m,n),(n),()->(m)")
    def matvec_plus(m, v, c, out):
        for i in range(m.shape[0]):
            s = c
            for j in range(m.shape[1]):
                s += m[i, j] * v[j]
            out[i] = s

    m = RNG.random((2, 3, 4))
    v = RNG.random(4)
    got = matvec_plus(m, v, 0.5)
    want = np.einsum("kij,j->ki", m, v) + 0.5
    np.testing.assert_allclose(got, want, rtol=1e-13)
    # Strided (non-contiguous) operands.
    mt = np.ascontiguousarray(m.transpose(0, 2, 1)).transpose(0, 2, 1)
    np.testing.assert_allclose(matvec_plus(mt, v[::1], 0.5), want, rtol=1e-13)


def test_dynamic_guvectorize_and_layout_errors():
    @guvectorize("(n)->()")
    def total(x, out):
        s = 0.0
        for v in x:
            s += v
        out[0] = s

    a = RNG.random((3, 4))
    out = np.zeros(3)
    total(a, out)
    np.testing.assert_allclose(out, a.sum(axis=1))
    assert total.types == ["d->d"]
    with pytest.raises(TypeError, match="Too few arguments"):
        total(a)
    with pytest.raises(NameError, match="undefined output symbols: n"):
        guvectorize(["void(float64, float64[:])"], "()->(n)")(lambda x, o: None)


def test_parallel_gufunc(nthreads):
    @guvectorize(["void(float64[:], float64[:])"], "(n)->()", target="parallel")
    def norm(x, out):
        s = 0.0
        for v in x:
            s += v * v
        out[0] = math.sqrt(s)

    a = RNG.random((20_000, 8))
    np.testing.assert_allclose(norm(a), np.sqrt((a * a).sum(axis=1)), rtol=1e-14)


def test_guvectorize_called_from_jitted_code():
    """From jitted code every output is passed and the call returns None; the loop runs
    over the leading axes (inputs broadcast), `()` inputs may be scalars, and Numba's
    errors name operands without their core dimensions and mismatched core sizes."""
    @guvectorize(["void(float64[:], float64, float64[:])"], "(n),()->(n)")
    def axpy(x, a, out):
        for i in range(x.shape[0]):
            out[i] = a * x[i] + 1

    @guvectorize("(m,n),(n)->(m)")
    def matvec(m, v, out):
        for i in range(m.shape[0]):
            s = 0.0
            for j in range(m.shape[1]):
                s += m[i, j] * v[j]
            out[i] = s

    @njit
    def run(x, a, out, m, v, mv):
        r = axpy(x, a, out)
        matvec(m, v, mv)
        return r

    x = RNG.random((3, 5))
    out = np.zeros((3, 5))
    m = RNG.random((2, 4, 3))
    v = RNG.random(3)
    mv = np.zeros((2, 4))
    assert run(x, 2.5, out, m, v, mv) is None
    np.testing.assert_array_equal(out, 2.5 * x + 1)
    want = np.array([[sum(m[k, i, j] * v[j] for j in range(3)) for i in range(4)] for k in range(2)])
    np.testing.assert_allclose(mv, want, rtol=1e-14)
    assert "dd->d" in matvec.types

    @njit
    def only_matvec(m, v, mv):
        matvec(m, v, mv)

    with pytest.raises(ValueError, match="mismatch in one of its core dimensions"):
        only_matvec(m, np.ones(4), mv)
    with pytest.raises(ValueError, match="Loop and array shapes are incompatible"):
        only_matvec(m, v, np.zeros((3, 4)))
    with pytest.raises(numba_rs.errors.TypingError,
                       match=r"Input operand 0 does not have enough dimensions \(has 1"):
        only_matvec(np.ones(3), v, mv)


def test_gufunc_with_scalar_cores_has_ufunc_methods_and_pickles():
    import pickle

    @guvectorize("(),()->()")
    def add3(x, y, res):
        res[0] = x + y

    a = np.array([1, 2, 3, 4])
    res = np.zeros_like(a)
    add3(a, a[::-1], res)
    np.testing.assert_array_equal(res, [5, 5, 5, 5])
    # NumPy reads a layout of scalar cores as no layout: the ufunc methods work.
    assert add3.signature is None
    assert add3.reduce(a) == 10
    np.testing.assert_array_equal(add3.accumulate(a), [1, 3, 6, 10])
    g = pickle.loads(pickle.dumps(add3))
    assert g.is_dynamic and g.types == add3.types
    out = np.zeros(4, dtype=np.int64)
    g(a, a, out)
    np.testing.assert_array_equal(out, 2 * a)
    # A float loop exists; int64 operands with an int64 output compile their own loop
    # (the exact loop wins, as in Numba's GUFunc).
    f = np.zeros(1)
    add3(0.5, 0.25, f)
    assert f[0] == 0.75


def test_gufunc_signature_checks_are_numbas():
    with pytest.raises(TypeError, match="scalar type int32 given for non scalar argument #2"):
        guvectorize(["int32[:], int32, int32[:]"], "(n),(n)->(n)")(lambda a, b, c: None)
    with pytest.raises(TypeError, match="type and shape signature mismatch for arg #1"):
        guvectorize(["int32[:], int32[:]"], "(m,n)->(n)")(lambda a, b: None)
    with pytest.raises(ValueError, match="bad token"):
        guvectorize(["void(int32[:], int32[:])"], "(n),(n)->")(lambda a, b: None)
    with pytest.raises(ValueError, match="Invalid identity"):
        guvectorize(["void(int32[:], int32[:])"], "(n)->(n)", identity=2)(lambda a, b, c: None)


# ------------------------------------------------------------------------ cfunc

def test_cfunc_through_ctypes_and_attributes():
    @cfunc("float64(float64, int32)")
    def scale(x, k):
        return x * k

    assert isinstance(scale.address, int) and scale.address != 0
    assert scale.ctypes(1.5, 4) == 6.0
    proto = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, ctypes.c_int32)
    assert proto(scale.address)(2.5, -2) == -5.0
    assert scale.native_name.endswith(".cfunc")
    assert "define" in scale.inspect_llvm()
    # Calling the object from Python runs the Python function, as in Numba.
    assert scale(2, 3) == 6


def test_cfunc_exception_is_unraisable_and_returns_zero():
    @cfunc("float64(float64)")
    def checked(x):
        if x < 0:
            raise ValueError("negative")
        return x + 1.0

    seen = []
    old = sys.unraisablehook
    sys.unraisablehook = lambda u: seen.append(u.exc_value)
    try:
        assert checked.ctypes(-1.0) == 0.0
        assert checked.ctypes(1.0) == 2.0
    finally:
        sys.unraisablehook = old
    assert len(seen) == 1 and isinstance(seen[0], ValueError)


def test_cfunc_called_from_a_c_program(tmp_path):
    # `cc` is required: the workspace itself links through it, so no skip.
    @cfunc("float64(float64, float64)")
    def weighted(x, w):
        return x * w + 1.0

    # A C library that takes a callback and calls it in a loop, as C code would.
    src = tmp_path / "call.c"
    so = tmp_path / "libcall.so"
    src.write_text(textwrap.dedent("""
        typedef double (*fn)(double, double);
        double run(fn f) {
            double acc = 0.0;
            for (int i = 0; i < 10; i++) acc += f((double)i, 0.5);
            return acc;
        }
    """))
    subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    lib = ctypes.CDLL(str(so))
    lib.run.restype = ctypes.c_double
    lib.run.argtypes = [ctypes.c_void_p]
    assert lib.run(weighted.address) == sum(i * 0.5 + 1.0 for i in range(10))


def test_cfunc_with_complex_arguments_called_from_c(tmp_path):
    """`double complex` and `float complex` arguments and results follow the C ABI: a
    C program passes them to the compiled callbacks and checks C's own arithmetic; the
    arguments mix complex and real registers. Only x86-64's ABI is implemented: other
    machines get a compile error that says so."""
    if platform.machine() not in ("x86_64", "AMD64"):
        with pytest.raises(numba_rs.errors.UnsupportedError, match="on this architecture"):
            cfunc("complex128(complex128)")(lambda z: z)
        return

    @cfunc("complex128(complex128, float64, complex128)")
    def axpy(z, x, w):
        return z * x + w

    @cfunc("complex64(complex64, float32)")
    def scale(z, x):
        return z * x

    src = tmp_path / "cplx.c"
    so = tmp_path / "libcplx.so"
    src.write_text(textwrap.dedent("""
        #include <complex.h>
        typedef double complex (*f128)(double complex, double, double complex);
        typedef float complex (*f64)(float complex, float);
        int check(f128 f, f64 g) {
            int bad = 0;
            for (int i = 0; i < 20; i++) {
                double complex z = i + 0.5 * I * (i - 3);
                double complex w = -1.25 + 2.0 * I;
                if (f(z, i * 0.25, w) != z * (i * 0.25) + w) bad++;
                float complex u = (float)i - 1.5f * I;
                if (g(u, 0.5f * i) != u * (0.5f * i)) bad++;
            }
            return bad;
        }
    """))
    subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    lib = ctypes.CDLL(str(so))
    lib.check.restype = ctypes.c_int
    lib.check.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    assert lib.check(axpy.address, scale.address) == 0
    # ctypes has no complex type: Numba's error for `.ctypes`.
    with pytest.raises(TypeError, match="Cannot convert Numba type 'complex128' to ctypes type"):
        axpy.ctypes


def test_cfunc_from_jitted_code():
    @cfunc("int64(int64)")
    def twice(x):
        return 2 * x

    @njit
    def use(n):
        s = 0
        for i in range(n):
            s += twice(i)
        return s

    assert use(10) == 90


def test_cfunc_with_pointers_and_carray():
    """A C callback over buffers: `T*` and `void*` arguments viewed as arrays with
    carray/farray (C and Fortran order, explicit or implied dtype), checked against NumPy
    on the same memory; the flags report the contiguity NumPy reports."""
    @cfunc("void(float32*, float64*, intp, intp)")
    def summarize(src, out, m, n):
        a = numba_rs.carray(src, (m, n))
        f = numba_rs.farray(src, (n, m))
        res = numba_rs.carray(out, 6)
        res[0] = a.sum()
        res[1] = a[m - 1, 0] - a[0, n - 1]
        res[2] = f[0, m - 1]
        res[3] = a.flags.c_contiguous
        res[4] = f.flags.f_contiguous and not f.flags.c_contiguous
        res[5:6] = (a.shape[1],)

    src = RNG.random((3, 4)).astype(np.float32)
    out = np.zeros(6)
    f32p = ctypes.POINTER(ctypes.c_float)
    f64p = ctypes.POINTER(ctypes.c_double)
    summarize.ctypes(src.ctypes.data_as(f32p), out.ctypes.data_as(f64p), 3, 4)
    fview = src.ravel().reshape((4, 3), order="F")
    want = [src.sum(dtype=np.float32), src[2, 0] - src[0, 3], fview[0, 2], 1, 1, 4]
    np.testing.assert_allclose(out, want, rtol=1e-6)

    @cfunc("float64(voidptr, intp)")
    def total(p, n):
        return numba_rs.carray(p, n, np.int32).sum()

    ints = RNG.integers(-100, 100, 17).astype(np.int32)
    assert total.ctypes(ints.ctypes.data_as(ctypes.c_void_p), 17) == ints.sum()
    assert total.ctypes.argtypes == (ctypes.c_void_p, ctypes.c_int64)


def test_carray_typing_errors_are_numbas():
    with pytest.raises(numba_rs.errors.TypingError,
                       match="mismatching dtype 'float32' for pointer type 'float64\\*'"):
        cfunc("float64(float64*)")(lambda p: numba_rs.carray(p, 3, np.float32)[0])
    with pytest.raises(numba_rs.errors.TypingError, match="explicit dtype required"):
        cfunc("float64(voidptr)")(lambda p: numba_rs.carray(p, 3)[0])
    with pytest.raises(numba_rs.errors.TypingError, match="pointer argument expected"):
        cfunc("float64(int64)")(lambda p: numba_rs.carray(p, 3)[0])


def test_python_carray_and_farray_match_numpy():
    base = np.arange(6, dtype=np.float32).reshape(2, 3)
    p = base.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
    a = numba_rs.carray(p, base.shape)
    np.testing.assert_array_equal(a, base)
    assert a.ctypes.data == base.ctypes.data
    np.testing.assert_array_equal(numba_rs.carray(p, 6), base.ravel())
    fbase = np.asfortranarray(base)
    fa = numba_rs.farray(fbase.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), fbase.shape)
    np.testing.assert_array_equal(fa, fbase)
    assert fa.flags.f_contiguous
    vp = base.ctypes.data_as(ctypes.c_void_p)
    np.testing.assert_array_equal(numba_rs.carray(vp, 6, np.int32), base.view(np.int32).ravel())
    with pytest.raises(TypeError, match="explicit dtype required"):
        numba_rs.carray(vp, 6)
    with pytest.raises(TypeError, match="mismatching dtype 'int32'"):
        numba_rs.carray(p, 6, np.int32)
    with pytest.raises(TypeError, match="expected a ctypes pointer"):
        numba_rs.carray(base.ctypes.data, 6)


def test_cfunc_as_a_qsort_comparator():
    """libc's qsort calling a compiled comparator through its address."""
    @cfunc("int32(voidptr, voidptr)")
    def compare(a, b):
        x = numba_rs.carray(a, 1, np.float64)[0]
        y = numba_rs.carray(b, 1, np.float64)[0]
        return (x > y) - (x < y)

    libc = ctypes.CDLL(None)
    cmp_t = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
    libc.qsort.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, cmp_t]
    libc.qsort.restype = None
    data = RNG.standard_normal(257)
    want = np.sort(data)
    libc.qsort(data.ctypes.data, data.size, data.itemsize, cmp_t(compare.address))
    np.testing.assert_array_equal(data, want)


def test_array_flags_in_jitted_code_match_numpy():
    @njit
    def flags(a):
        return a.flags.c_contiguous, a.flags.f_contiguous, a.flags.contiguous

    base = RNG.random((4, 6))
    for a in [base, base.T, base[:, ::2], base[::2], base[:1], np.zeros((0, 3)), base[1]]:
        want = (a.flags.c_contiguous, a.flags.f_contiguous, a.flags.c_contiguous)
        assert flags(a) == want, a.strides


def test_cfunc_locals():
    """Numba's test_locals: the intermediate forced to an integer truncates the result."""
    @cfunc("float64(int64, int64)", locals={"c": numba_rs.types.int64})
    def div(a, b):
        c = a / b
        return c

    assert div.ctypes(8, 3) == 2.0
    assert div.ctypes(-9, 2) == -4.0


# ------------------------------------------------------------ object-mode kernels


class _Opaque:
    """Something nopython code cannot type: the kernels below need object mode."""

    def __init__(self, k):
        self.k = k


def obj_scale(x, y):
    return _Opaque(y).k * x + 0.5


def obj_rows(a, b, out):
    w = _Opaque(b)
    for i in range(a.shape[0]):
        out[i] = a[i] * w.k


class ObjError(Exception):
    pass


def obj_fails(x):
    if x > 6:
        raise ObjError(int(x))
    return x * 2


def test_vectorize_object_mode_kernel_matches_python():
    """`forceobj=True` kernels run as Python per element (Numba's object-mode loop):
    NumPy's ufunc machinery (broadcasting, out=, types, reduce) around them."""
    u = vectorize(["float32(float32, int32)", "float64(float64, int64)"], forceobj=True)(obj_scale)
    x = RNG.random((4, 5))
    y = np.arange(5)
    want = np.array([[obj_scale(a, b) for a, b in zip(r, y)] for r in x])
    np.testing.assert_allclose(u(x, y), want)
    assert u.types == ["fi->f", "dl->d"]
    got32 = u(x.astype(np.float32), y.astype(np.int32))
    assert got32.dtype == np.float32
    out = np.empty((4, 5))
    assert u(x, y, out=out) is out
    np.testing.assert_allclose(out, want)
    # Without signatures there is no result type to give the loop (Numba's error).
    d = vectorize(forceobj=True)(obj_scale)
    with pytest.raises(TypeError, match="return type must be specified for object mode"):
        d(x, y)


def test_object_mode_kernel_exception_propagates_and_results_truncate():
    u = vectorize(["int32(float64)"], forceobj=True)(obj_fails)
    with pytest.raises(ObjError) as e:
        u(np.arange(10.0))
    assert e.value.args == (7,)
    # Results unbox as Numba's do: int() of the float, wrapped to the width.
    np.testing.assert_array_equal(u(np.array([1.75, -2.5, 3.0])), [3, -5, 6])


def test_guvectorize_object_mode_kernel_gets_views_and_scalars():
    g = guvectorize(["void(float64[:], int64, float64[:])"], "(n),()->(n)", forceobj=True)(obj_rows)
    a = RNG.random((3, 6))
    b = np.array([1, 2, 3])
    want = a * b[:, None]
    np.testing.assert_allclose(g(a, b), want)
    with pytest.raises(numba_rs.errors.TypingError, match="object-mode kernel cannot be called"):
        njit(lambda a, b, o: g(a, b, o))(a, b, np.empty_like(a))


def test_nopython_false_falls_back_to_object_mode():
    with pytest.warns(NumbaWarning, match="falls back to object mode"):
        u = vectorize(["float64(float64, int64)"], nopython=False)(obj_scale)
    np.testing.assert_allclose(u(np.ones(3), 2), [2.5, 2.5, 2.5])


def test_cfunc_refuses_object_mode():
    # A C callback cannot run in object mode (Numba's NotImplementedError).
    with pytest.raises(NotImplementedError):
        cfunc("float64(float64)", forceobj=True)(lambda x: x)


def test_parallel_kernel_error_on_a_worker_thread_reaches_the_caller(nthreads):
    # An error set on a pool worker's own interpreter state was lost (the call returned
    # the partly filled output): the worker stashes it for the calling thread.
    f = vectorize(["float64(float64)"], target="parallel")(raising)
    for bad in (0, 499_999, 999_999):
        x = np.ones(1_000_000)
        x[bad] = -1.0
        with pytest.raises(ValueError, match="negative input"):
            f(x)
    np.testing.assert_array_equal(f(np.ones(10)), np.full(10, 2.0))
