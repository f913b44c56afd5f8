"""``numba_rs.cuda`` without the simulator: kernels compile to PTX through LLVM's NVPTX
back end (the cuda `TargetContext` of numba-lower).

The corpus is the issue's: saxpy, a shared-memory reduction with an atomic add, a 2-d
stencil, a warp-shuffle sum, a kernel calling a device function, and atomics and votes.
Each kernel's PTX is checked for what it must contain (the special registers read, the
barrier, shared memory, atomics, shuffles) and, where `ptxas` is installed (the
`nvidia-cuda-nvcc` wheel), assembled for sm_80 and sm_90. No GPU is needed; what the
kernels compute is tested under the simulator (`test_cuda_simulator.py`).

Runs in a child interpreter: the package chooses the simulator or the GPU when first
imported, and the simulator's tests import it with ``NUMBA_ENABLE_CUDASIM=1``.
"""

import glob
import json
import os
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent('''
    import json, math, sys
    import numpy as np
    from numba_rs import cuda
    assert not cuda.USE_SIMULATOR

    @cuda.jit("void(float32, float32[:], float32[:], float32[:])")
    def saxpy(a, x, y, out):
        i = cuda.grid(1)
        if i < x.shape[0]:
            out[i] = a * x[i] + y[i]

    @cuda.jit("void(float64[:], float64[:])")
    def block_sum(a, out):
        s = cuda.shared.array(128, dtype=np.float64)
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        s[t] = a[i] if i < a.shape[0] else 0.0
        cuda.syncthreads()
        step = 64
        while step > 0:
            if t < step:
                s[t] += s[t + step]
            cuda.syncthreads()
            step //= 2
        if t == 0:
            cuda.atomic.add(out, 0, s[0])

    @cuda.jit("void(float64[:, :], float64[:, :])")
    def stencil(u, out):
        i, j = cuda.grid(2)
        n, m = u.shape
        if 0 < i < n - 1 and 0 < j < m - 1:
            out[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])

    @cuda.jit("void(float64[:], float64[:])")
    def warp_sum(a, out):
        i = cuda.grid(1)
        v = a[i]
        offset = 16
        while offset > 0:
            v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
            offset //= 2
        if cuda.laneid == 0:
            out[i // 32] = v

    @cuda.jit(device=True)
    def smoothstep(x):
        t = min(max(x, 0.0), 1.0)
        return t * t * (3.0 - 2.0 * t)

    @cuda.jit("void(float64[:], float64[:])")
    def apply(x, out):
        for i in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
            out[i] = smoothstep(x[i])

    @cuda.jit("void(int32[:], int32[:], uint32[:])")
    def votes(a, out, ballots):
        i = cuda.grid(1)
        if i < a.shape[0]:
            cuda.atomic.max(out, 0, a[i])
            cuda.atomic.min(out, 1, a[i])
            tmp = cuda.local.array(2, dtype=np.int32)
            tmp[0] = a[i]
            cuda.atomic.add(out, 2, tmp[0])
        ballots[i // 32] = cuda.ballot_sync(0xFFFFFFFF, i % 3 == 0)
        cuda.syncwarp()

    @cuda.jit("void(int32[:], uint32[:], float64[:])")
    def more(a, counters, f):
        i = cuda.grid(1)
        n = cuda.syncthreads_count(a[i] > 0)
        every = cuda.syncthreads_and(a[i] > -5)
        some = cuda.syncthreads_or(a[i] > 5)
        old = cuda.atomic.cas(a, 0, 0, i)
        cuda.atomic.compare_and_swap(a, 1, i)
        cuda.atomic.inc(counters, 0, np.uint32(7))
        cuda.atomic.dec(counters, 1, np.uint32(7))
        bits = cuda.popc(a[i]) + cuda.clz(a[i]) + cuda.ffs(a[i]) + cuda.brev(a[i])
        mask = cuda.activemask() & cuda.lanemask_lt()
        f[i] = cuda.fma(f[i], 2.0, 1.0) + cuda.selp(n > 3, 1.0, 0.0) + bits + old + mask
        f[i] += every + some
        if cuda.eq_sync(0xFFFFFFFF, a[i] > 0):
            f[i] += 1.0
        dyn = cuda.shared.array(0, dtype=np.float64)
        dyn[cuda.threadIdx.x] = f[i]
        cuda.syncthreads()
        f[i] = dyn[dyn.shape[0] - 1 - cuda.threadIdx.x]

    @cuda.jit("void(float64[:], float32[:], int64[:])")
    def float_extrema(a, b, c):
        i = cuda.grid(1)
        cuda.atomic.max(a, 0, a[i])
        cuda.atomic.nanmin(a, 1, a[i])
        cuda.atomic.nanmax(b, 0, b[i])
        cuda.atomic.nanmax(c, 0, c[i])

    kernels = [saxpy, block_sum, stencil, warp_sum, apply, votes, more, float_extrema]
    if cuda.LIBDEVICE is not None:
        @cuda.jit("void(float64[:], float32[:])")
        def math_kernel(x, y):
            i = cuda.grid(1)
            if i < x.shape[0]:
                x[i] = math.sin(x[i]) * math.exp(-x[i]) + math.atan2(x[i], 2.0)
                y[i] = math.cos(y[i]) + math.sqrt(y[i]) + cuda.cbrt(y[i])
        kernels.append(math_kernel)
    out = {}
    for k in kernels:
        ptx = list(k.inspect_asm().values())
        out[k.__name__] = ptx[0] if len(ptx) == 1 else None
    errors = {}
    for name, body in [
        ("sin", "a[0] = math.sin(a[0])"),
        ("alloc", "b = np.zeros(3)\\n    a[0] = b[0]"),
        ("ret", "return a[0]"),
    ]:
        src = f"@cuda.jit('void(float64[:])')\\ndef bad_{name}(a):\\n    {body}\\n"
        try:
            exec(src, {"cuda": cuda, "np": np, "math": math})
            errors[name] = "compiled"
        except Exception as e:
            errors[name] = type(e).__name__ + ": " + str(e).splitlines()[0]
    print(json.dumps({"ptx": out, "errors": errors, "libdevice": cuda.LIBDEVICE}))
''')


@pytest.fixture(scope="module")
def compiled():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def entry(ptx):
    assert ".visible .entry _ZN6cudapy" in ptx
    assert ".target sm_80" in ptx and ".address_size 64" in ptx


def test_saxpy(compiled):
    ptx = compiled["ptx"]["saxpy"]
    entry(ptx)
    for reg in ("%tid.x", "%ctaid.x", "%ntid.x"):
        assert reg in ptx
    assert "ld.global.f32" in ptx and "st.global.f32" in ptx
    # Numba's CUDA ABI: the float and three arrays of 7 leaves each (1-d).
    assert ptx.count(".param .u64") == 21 and ptx.count(".param .f32") == 1


def test_shared_memory_reduction(compiled):
    ptx = compiled["ptx"]["block_sum"]
    entry(ptx)
    assert ".shared .align 16 .b8" in ptx and "[1024]" in ptx  # 128 float64
    assert "bar.sync" in ptx
    assert "atom.global.add.f64" in ptx
    # Kernels carry no runtime: no reference counting, no calls out.
    assert "NRT_" not in ptx and "call.uni" not in ptx


def test_two_dimensional_grid(compiled):
    ptx = compiled["ptx"]["stencil"]
    entry(ptx)
    assert "%tid.y" in ptx and "%ctaid.y" in ptx and "%ntid.y" in ptx


def test_warp_shuffle(compiled):
    ptx = compiled["ptx"]["warp_sum"]
    entry(ptx)
    # A float64 moves as two 32-bit words.
    assert ptx.count("shfl.sync.down.b32") >= 2
    assert "%laneid" in ptx


def test_device_function_inlined(compiled):
    ptx = compiled["ptx"]["apply"]
    entry(ptx)
    assert "%nctaid.x" in ptx  # gridsize(1)
    assert "call" not in ptx.split(".entry", 1)[1]


def test_atomics_votes_local_arrays(compiled):
    ptx = compiled["ptx"]["votes"]
    entry(ptx)
    assert "atom.global.max.s32" in ptx and "atom.global.min.s32" in ptx
    assert "atom.global.add.u32" in ptx
    assert "vote.sync.ballot.b32" in ptx and "bar.warp.sync" in ptx


def test_math_through_libdevice(compiled):
    if compiled["libdevice"] is None:
        # Without libdevice a math function is refused by name.
        err = compiled["errors"]["sin"]
        assert err.startswith("UnsupportedError") and "libdevice" in err
        assert "llvm.sin.f64" in err
        return
    assert compiled["errors"]["sin"] == "compiled"
    ptx = compiled["ptx"]["math_kernel"]
    entry(ptx)
    # libdevice linked and internalised: no external math function is left.
    assert ".extern" not in ptx and "__nvvm_reflect" not in ptx


def test_barrier_reductions_cas_inc_dec_bits(compiled):
    ptx = compiled["ptx"]["more"]
    entry(ptx)
    for needle in ("bar.red.popc", "bar.red.and", "bar.red.or", "atom.global.cas.b32",
                   "popc.b32", "clz.b32", "brev.b32", "activemask.b32", "%lanemask_lt",
                   "fma.rn.f64", "vote.sync.uni.pred", "%dynamic_smem_size",
                   ".extern .shared .align 16 .b8 cuda_dynamic_shared[]"):
        assert needle in ptx, needle
    # atomicInc/atomicDec: `atom.inc/dec`, or the compare-and-swap loops LLVM 19's
    # NVPTX back end expands `atomicrmw uinc_wrap/udec_wrap` into.
    assert ("atom.global.inc.u32" in ptx and "atom.global.dec.u32" in ptx) or \
        ptx.count("atom.global.cas.b32") >= 4


def test_errors_name_the_construct(compiled):
    errors = compiled["errors"]
    assert "allocates memory" in errors["alloc"] and "NRT_MemInfo_alloc" in errors["alloc"]
    assert errors["ret"] != "compiled"


def _ptxas():
    found = glob.glob(os.path.join(sys.prefix, "lib", "python3*", "site-packages", "nvidia",
                                   "cuda_nvcc", "bin", "ptxas"))
    return found[0] if found else None


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_ptxas_assembles_every_kernel(compiled, tmp_path, arch):
    ptxas = _ptxas()
    if ptxas is None:
        pytest.skip("ptxas is not installed (pip install nvidia-cuda-nvcc-cu12)")
    for name, ptx in compiled["ptx"].items():
        src = tmp_path / f"{name}.ptx"
        src.write_text(ptx)
        proc = subprocess.run([ptxas, f"-arch={arch}", str(src), "-o",
                               str(tmp_path / f"{name}.{arch}.cubin")],
                              capture_output=True, text=True)
        assert proc.returncode == 0, f"{name} for {arch}: {proc.stderr}"


def test_float_atomic_min_max_are_compare_and_swap_loops(compiled):
    ptx = compiled["ptx"]["float_extrema"]
    entry(ptx)
    # PTX has no float max: numba-cuda's loop on the bits (64- and 32-bit).
    assert "atom.global.cas.b64" in ptx and "atom.global.cas.b32" in ptx
    assert "atom.global.max.s64" in ptx  # nanmax of integers is max
