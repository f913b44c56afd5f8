"""``numba_rs.cuda`` under the simulator (``NUMBA_ENABLE_CUDASIM=1``): CUDA kernels run
on the CPU with CUDA's thread, block, shared-memory, barrier, warp and atomic semantics.

Each kernel's result is checked against NumPy computing the same thing; the launch
errors against Numba's messages. Without the simulator (a fresh interpreter, no GPU on
CI), kernels can be defined and ``is_available()`` is False, and a launch raises
``CudaSupportError``.
"""

import math
import os
import subprocess
import sys
import textwrap

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from numba_rs import cuda  # noqa: E402

if not cuda.USE_SIMULATOR:  # imported earlier without the variable
    pytest.skip("numba_rs.cuda was imported before NUMBA_ENABLE_CUDASIM was set",
                allow_module_level=True)


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = a * x[i] + y[i]


@cuda.jit
def block_sum(a, out):
    # Tree reduction in shared memory, one atomic add per block.
    s = cuda.shared.array(64, dtype=np.float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = a[i] if i < a.shape[0] else 0.0
    cuda.syncthreads()
    step = cuda.blockDim.x // 2
    while step > 0:
        if t < step:
            s[t] += s[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        cuda.atomic.add(out, 0, s[0])


@cuda.jit
def stencil(u, out):
    i, j = cuda.grid(2)
    n, m = u.shape
    if 0 < i < n - 1 and 0 < j < m - 1:
        out[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])


@cuda.jit
def warp_sum(a, out):
    i = cuda.grid(1)
    v = a[i]
    offset = cuda.warpsize // 2
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        out[i // cuda.warpsize] = v


@cuda.jit(device=True)
def smoothstep(x):
    t = min(max(x, 0.0), 1.0)
    return t * t * (3.0 - 2.0 * t)


@cuda.jit
def apply_smoothstep(x, out):
    for i in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
        out[i] = smoothstep(x[i])


@cuda.jit
def math_kernel(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = math.sin(x[i]) * math.exp(-x[i]) + math.sqrt(x[i])


def test_saxpy_against_numpy():
    n = 1000
    x = np.linspace(0, 1, n, dtype=np.float32)
    y = np.arange(n, dtype=np.float32)
    out = np.zeros_like(x)
    saxpy[(n + 127) // 128, 128](np.float32(2.5), x, y, out)
    np.testing.assert_allclose(out, np.float32(2.5) * x + y, rtol=1e-6)


def test_shared_memory_reduction_with_atomics():
    a = np.random.default_rng(0).random(1000)
    out = np.zeros(1)
    block_sum[(1000 + 63) // 64, 64](a, out)
    assert out[0] == pytest.approx(a.sum(), rel=1e-12)


def test_two_dimensional_stencil():
    u = np.random.default_rng(1).random((20, 17))
    out = np.zeros_like(u)
    stencil[(3, 3), (8, 8)](u, out)
    expect = np.zeros_like(u)
    expect[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    np.testing.assert_allclose(out, expect, rtol=1e-14)


def test_warp_shuffle_sum():
    a = np.arange(128, dtype=np.int64) ** 2
    out = np.zeros(4, dtype=np.int64)
    warp_sum[2, 64](a, out)
    np.testing.assert_array_equal(out, a.reshape(4, 32).sum(axis=1))


def test_kernel_calling_a_device_function_grid_stride():
    x = np.linspace(-0.5, 1.5, 300)
    out = np.zeros_like(x)
    apply_smoothstep[2, 32](x, out)
    t = np.clip(x, 0.0, 1.0)
    np.testing.assert_allclose(out, t * t * (3 - 2 * t))


def test_math_functions():
    x = np.linspace(0.0, 4.0, 100)
    out = np.zeros_like(x)
    math_kernel[4, 32](x, out)
    np.testing.assert_allclose(out, np.sin(x) * np.exp(-x) + np.sqrt(x), rtol=1e-14)


def test_device_arrays_and_streams():
    x = np.arange(256, dtype=np.float32)
    s = cuda.stream()
    d_x = cuda.to_device(x, stream=s)
    d_out = cuda.device_array_like(x)
    saxpy[2, 128, s](np.float32(3.0), d_x, d_x, d_out)
    s.synchronize()
    host = d_out.copy_to_host()
    np.testing.assert_allclose(host, 4.0 * x)
    # The device copy is a copy: changing the host array later does not reach it.
    x[:] = 0
    assert d_x.copy_to_host()[5] == 5.0
    iface = d_out.__cuda_array_interface__
    assert iface["shape"] == (256,) and iface["typestr"] == "<f4" and iface["version"] == 3
    assert cuda.is_cuda_array(d_out) and not cuda.is_cuda_array(x)
    buf = np.zeros(256, dtype=np.float32)
    d_out.copy_to_host(buf)
    np.testing.assert_array_equal(buf, host)


@cuda.jit
def count_positive(a, out):
    i = cuda.grid(1)
    n = cuda.syncthreads_count(a[i] > 0)
    every = cuda.syncthreads_and(a[i] > -100)
    some = cuda.syncthreads_or(a[i] > 5)
    if cuda.threadIdx.x == 0:
        out[cuda.blockIdx.x, 0] = n
        out[cuda.blockIdx.x, 1] = every
        out[cuda.blockIdx.x, 2] = some


def test_block_predicate_reductions():
    a = np.array([1, -2, 3, 4, -5, 6, 0, 7] * 4, dtype=np.int64)
    out = np.zeros((4, 3), dtype=np.int64)
    count_positive[4, 8](a, out)
    blocks = a.reshape(4, 8)
    np.testing.assert_array_equal(out[:, 0], (blocks > 0).sum(axis=1))
    np.testing.assert_array_equal(out[:, 1], (blocks > -100).all(axis=1))
    np.testing.assert_array_equal(out[:, 2], (blocks > 5).any(axis=1))


@cuda.jit
def atomics(vals, out):
    i = cuda.grid(1)
    v = vals[i]
    cuda.atomic.max(out, 0, v)
    cuda.atomic.min(out, 1, v)
    cuda.atomic.add(out, 2, 1)
    cuda.atomic.sub(out, 3, 1)
    cuda.atomic.inc(out, 4, 4)  # counts 0..4 then wraps
    cuda.atomic.or_(out, 5, 1 << (i % 8))
    cuda.atomic.xor(out, 6, 1)


def test_atomics():
    vals = np.array([5, -3, 12, 7, 0, 9, -8, 1, 4, 2, 11, 3], dtype=np.int64)
    out = np.array([-(10 ** 9), 10 ** 9, 0, 0, 0, 0, 0], dtype=np.int64)
    atomics[3, 4](vals, out)
    assert out[0] == vals.max() and out[1] == vals.min()
    assert out[2] == 12 and out[3] == -12
    assert out[4] == 12 % 5  # inc wraps to 0 after reaching the limit
    assert out[5] == 0xFF and out[6] == 0


@cuda.jit
def float_extrema(vals, out):
    i = cuda.grid(1)
    cuda.atomic.max(out, 0, vals[i])
    cuda.atomic.min(out, 1, vals[i])
    cuda.atomic.nanmax(out, 2, vals[i])
    cuda.atomic.nanmin(out, 3, vals[i])


def test_float_atomics_follow_numba_cudas_nan_rules():
    nan = float("nan")
    vals = np.array([1.5, nan, -2.0, 4.0], dtype=np.float64)
    out = np.array([0.0, 0.0, 0.0, 0.0])
    float_extrema[1, 4](vals, out)
    # max/min ignore a NaN value; nanmax/nanmin too.
    assert out.tolist() == [4.0, -2.0, 4.0, -2.0]
    # A NaN element stays for max/min and is replaced by nanmax/nanmin.
    out = np.full(4, nan)
    float_extrema[1, 4](vals, out)
    assert np.isnan(out[0]) and np.isnan(out[1])
    assert out[2] == 4.0 and out[3] == -2.0


@cuda.jit
def cas_lock(counter, out):
    # One thread per block wins the flag; every thread counts.
    if cuda.atomic.cas(counter, 0, 0, 1) == 0:
        out[0] = cuda.blockIdx.x + 1
    cuda.atomic.add(counter, 1, 1)
    old = cuda.atomic.exch(counter, 2, cuda.grid(1))
    cuda.atomic.max(out, 1, old)


def test_compare_and_swap_and_exchange():
    counter = np.zeros(3, dtype=np.int64)
    out = np.zeros(2, dtype=np.int64)
    cas_lock[2, 16](counter, out)
    assert counter[0] == 1 and counter[1] == 32 and out[0] == 1
    assert 0 <= counter[2] < 32


@cuda.jit
def ballots(a, out):
    i = cuda.grid(1)
    b = cuda.ballot_sync(0xFFFFFFFF, a[i] % 3 == 0)
    al = cuda.all_sync(0xFFFFFFFF, a[i] >= 0)
    an = cuda.any_sync(0xFFFFFFFF, a[i] > 30)
    x = cuda.shfl_xor_sync(0xFFFFFFFF, a[i], 1)
    up = cuda.shfl_up_sync(0xFFFFFFFF, a[i], 2)
    bcast = cuda.shfl_sync(0xFFFFFFFF, a[i], 7)
    if cuda.laneid == 0:
        out[0] = b
        out[1] = al
        out[2] = an
    out[3 + i] = x * 1000000 + up * 1000 + bcast


def test_warp_votes_and_shuffles():
    a = np.arange(32, dtype=np.int64)
    out = np.zeros(3 + 32, dtype=np.int64)
    ballots[1, 32](a, out)
    assert out[0] == sum(1 << i for i in range(32) if i % 3 == 0)
    assert out[1] == 1 and out[2] == 1
    lanes = np.arange(32)
    expect = (lanes ^ 1) * 1000000 + np.where(lanes >= 2, lanes - 2, lanes) * 1000 + 7
    np.testing.assert_array_equal(out[3:], expect)


@cuda.jit
def dynamic_shared(a, out):
    buf = cuda.shared.array(0, dtype=np.float32)
    t = cuda.threadIdx.x
    buf[t] = a[t]
    cuda.syncthreads()
    out[t] = buf[cuda.blockDim.x - 1 - t]


def test_dynamic_shared_memory_and_local_arrays():
    a = np.arange(16, dtype=np.float32)
    out = np.zeros_like(a)
    dynamic_shared[1, 16, 0, 16 * 4](a, out)
    np.testing.assert_array_equal(out, a[::-1])


@cuda.jit
def forall_square(x):
    i = cuda.grid(1)
    if i < x.size:
        tmp = cuda.local.array(2, dtype=np.int64)
        tmp[0] = x[i]
        tmp[1] = x[i]
        x[i] = tmp[0] * tmp[1]


def test_forall():
    x = np.arange(10, dtype=np.int64)
    forall_square.forall(x.size)(x)
    np.testing.assert_array_equal(x, np.arange(10) ** 2)


@cuda.jit
def raises(a):
    if cuda.grid(1) == 5:
        raise ValueError("thread 5")
    cuda.syncthreads()
    a[cuda.grid(1)] = 1


def test_errors():
    with pytest.raises(ValueError, match="launch configuration"):
        saxpy(1.0, np.zeros(1), np.zeros(1), np.zeros(1))
    with pytest.raises(ValueError, match="launch configuration"):
        saxpy[1](1.0)
    with pytest.raises(ValueError, match="too many threads"):
        saxpy[1, 2048](1.0, np.zeros(1), np.zeros(1), np.zeros(1))
    with pytest.raises(ValueError, match="positive"):
        saxpy[0, 32](1.0, np.zeros(1), np.zeros(1), np.zeros(1))
    # A thread's exception is the launch's, and the block's barrier does not hang.
    with pytest.raises(ValueError, match="thread 5"):
        raises[1, 8](np.zeros(8))
    with pytest.raises(cuda.CudaSupportError, match="inside a kernel"):
        cuda.syncthreads()
    with pytest.raises(cuda.CudaSupportError, match="inside a kernel"):
        cuda.threadIdx  # noqa: B018


def test_device_queries():
    assert cuda.is_available()
    assert cuda.get_current_device().compute_capability == (5, 2)
    cuda.synchronize()


def test_without_the_simulator_kernels_define_but_do_not_launch():
    code = textwrap.dedent('''
        import os
        os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
        import numpy as np
        from numba_rs import cuda
        assert not cuda.USE_SIMULATOR

        @cuda.jit
        def k(x):
            x[cuda.grid(1)] = 1

        @cuda.jit("void(float32[:])", fastmath=True)
        def k2(x):
            pass

        try:
            cuda.jit(no_such_option=1)
        except TypeError as e:
            print("refused:", e)
        print("available:", cuda.is_available())
        try:
            k[1, 1](np.zeros(1))
        except cuda.CudaSupportError as e:
            print("launch:", str(e).split(":")[0])
    ''')
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "refused: cuda.jit: unknown option(s) ['no_such_option']" in out
    available = "available: True" in out
    # No GPU on CI: no driver, and the launch says so; with one, PTX is not there yet.
    assert ("launch: CUDA is not available" in out) or (
        available and "launch: numba_rs.cuda" in out)
