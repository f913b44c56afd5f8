"""``numba_rs.cuda``: Numba's CUDA target API (``from numba_rs import cuda``).

With ``NUMBA_ENABLE_CUDASIM=1`` in the environment when this package is first imported,
kernels run under the simulator (``numba_rs.cuda.simulator``): on the CPU, as Python,
with CUDA's semantics for threads, blocks, shared memory, barriers, warps and atomics.

Without it, kernels compile to PTX for an NVIDIA GPU (LLVM's NVPTX back end;
``kernel.inspect_asm()``); ``cuda.is_available()`` says whether a CUDA driver is present.
Launching and device memory need the driver runtime, not in this version yet: they raise
``CudaSupportError`` naming what is missing.
"""

import os as _os

from .. import config as _config  # noqa: F401  (numba_rs's configuration first)

USE_SIMULATOR = _os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")

if USE_SIMULATOR:
    LIBDEVICE = None
    from . import simulator as _impl
    from .simulator import (  # noqa: F401
        CudaSupportError, DeviceNDArray, Dim3, Event, Stream, activemask, all_sync,
        any_sync, as_cuda_array, atomic, ballot_sync, brev, cbrt, close, clz, const,
        declare_device, default_stream, detect, device_array, device_array_like, eq_sync,
        event, ffs, fma, get_current_device, grid, gridsize, is_available, is_cuda_array,
        jit, lanemask_lt, legacy_default_stream, list_devices, local, managed_array,
        mapped_array, per_thread_default_stream, pinned_array, pinned_array_like, popc,
        select_device, selp, shared, shfl_down_sync, shfl_sync, shfl_up_sync,
        shfl_xor_sync, stream, synchronize, syncthreads, syncthreads_and,
        syncthreads_count, syncthreads_or, syncwarp, threadfence, threadfence_block,
        threadfence_system, to_device, warpsize,
    )

    def __getattr__(name):
        # threadIdx, blockIdx, blockDim, gridDim, laneid: the calling thread's.
        return _impl.module_getattr(name)
else:
    from .hardware import *  # noqa: F401,F403
    from .hardware import LIBDEVICE, CUDADispatcher, CudaSupportError, __getattr__  # noqa: F401
