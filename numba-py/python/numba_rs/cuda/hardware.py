"""``numba_rs.cuda`` for a GPU, without the simulator.

What works here: finding the CUDA driver (``is_available``, ``detect``) and defining
kernels and device functions. Generating PTX and launching are not implemented yet; they
raise ``CudaSupportError`` saying so, and the simulator (``NUMBA_ENABLE_CUDASIM=1``)
runs the same kernels on the CPU.
"""

import ctypes
import ctypes.util

WARP_SIZE = 32
warpsize = WARP_SIZE

_NOT_YET = ("numba_rs.cuda: code generation for the GPU (PTX) is not implemented in this "
            "version; set NUMBA_ENABLE_CUDASIM=1 to run kernels under the simulator")


class CudaSupportError(RuntimeError):
    """CUDA is not usable here (no driver, or a feature not available yet)."""


_driver = None


def _load_driver():
    """The CUDA driver library, or None when it cannot be loaded."""
    global _driver
    if _driver is None:
        names = ["libcuda.so.1", "libcuda.so", ctypes.util.find_library("cuda")]
        for name in filter(None, names):
            try:
                _driver = ctypes.CDLL(name)
                break
            except OSError:
                continue
        else:
            _driver = False
    return _driver or None


def _device_count():
    drv = _load_driver()
    if drv is None:
        return 0
    try:
        if drv.cuInit(0) != 0:
            return 0
        n = ctypes.c_int(0)
        if drv.cuDeviceGetCount(ctypes.byref(n)) != 0:
            return 0
        return n.value
    except AttributeError:
        return 0


def is_available():
    """Whether a CUDA driver and at least one device are present."""
    return _device_count() > 0


def detect():
    """Print the devices found; True if there is at least one."""
    n = _device_count()
    print(f"Found {n} CUDA devices")
    return n > 0


def _unavailable(*args, **kwargs):
    if not is_available():
        raise CudaSupportError("CUDA is not available: no CUDA driver or device was found "
                               "(NUMBA_ENABLE_CUDASIM=1 runs kernels under the simulator)")
    raise CudaSupportError(_NOT_YET)


to_device = device_array = device_array_like = pinned_array = _unavailable
mapped_array = managed_array = select_device = get_current_device = _unavailable
stream = default_stream = event = synchronize = _unavailable


class Kernel:
    """A kernel or device function defined for the GPU."""

    def __init__(self, py_func, device=False, signatures=()):
        self.py_func = py_func
        self.device = device
        self.signatures = list(signatures)
        self.__name__ = getattr(py_func, "__name__", "kernel")

    def __getitem__(self, config):
        return lambda *args: _unavailable()

    def __call__(self, *args, **kwargs):
        if self.device:
            raise CudaSupportError(f"device function {self.__name__!r} can only be called "
                                   "from a kernel")
        raise ValueError(f"kernel {self.__name__!r} needs a launch configuration: "
                         f"{self.__name__}[griddim, blockdim](...)")

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        return lambda *args: _unavailable()

    def inspect_asm(self, signature=None):
        raise CudaSupportError(_NOT_YET)

    inspect_llvm = inspect_asm


_OPTIONS = {"device", "debug", "fastmath", "lineinfo", "opt", "max_registers", "link",
            "inline", "cache", "boundscheck", "lto", "extensions"}


def jit(func_or_sig=None, device=False, **options):
    """``@cuda.jit`` as Numba spells it; unknown options are refused."""
    unknown = set(options) - _OPTIONS
    if unknown:
        raise TypeError(f"cuda.jit: unknown option(s) {sorted(unknown)}")
    if callable(func_or_sig) and not isinstance(func_or_sig, (str, list, tuple)):
        return Kernel(func_or_sig, device)
    sigs = () if func_or_sig is None else (
        func_or_sig if isinstance(func_or_sig, (list, tuple)) else [func_or_sig])
    return lambda f: Kernel(f, device, sigs)


def _intrinsic_outside_kernel(*args, **kwargs):
    raise CudaSupportError("CUDA intrinsics can only be used inside a kernel")


grid = gridsize = syncthreads = syncthreads_count = syncthreads_and = _intrinsic_outside_kernel
syncthreads_or = threadfence = threadfence_block = threadfence_system = _intrinsic_outside_kernel
shfl_sync = shfl_up_sync = shfl_down_sync = shfl_xor_sync = _intrinsic_outside_kernel
ballot_sync = all_sync = any_sync = eq_sync = syncwarp = _intrinsic_outside_kernel
