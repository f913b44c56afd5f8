"""``numba_rs.cuda`` for a GPU, without the simulator.

Kernels and device functions compile to PTX (LLVM's NVPTX back end, `sm_80` by default):
``kernel.inspect_asm()`` gives it, and ``cuda.jit("void(float32[:], ...)")`` compiles
eagerly. Launching and device memory need the CUDA driver runtime, which is not in this
version: they raise ``CudaSupportError`` saying so (no CUDA driver or device here: saying
that), and the simulator (``NUMBA_ENABLE_CUDASIM=1``) runs the same kernels on the CPU.
"""

import ctypes
import ctypes.util
import warnings

from .. import _numba_rs
from .._numba_rs import Dispatcher as _Dispatcher
from .errors import CudaSupportError

WARP_SIZE = 32
warpsize = WARP_SIZE

_NOT_YET = ("numba_rs.cuda: launching kernels and device memory need the CUDA driver "
            "runtime, which is not implemented in this version; set NUMBA_ENABLE_CUDASIM=1 "
            "to run kernels under the simulator")


def _find_libdevice():
    """libdevice's bitcode: under ``CUDA_HOME`` (or ``CUDA_PATH``), else in the
    ``nvidia-cuda-nvcc`` wheel; None when neither has it."""
    import importlib.util
    import os

    roots = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")]
    try:
        spec = importlib.util.find_spec("nvidia.cuda_nvcc")
    except ModuleNotFoundError:
        spec = None
    if spec is not None and spec.submodule_search_locations:
        roots.extend(spec.submodule_search_locations)
    for root in filter(None, roots):
        path = os.path.join(root, "nvvm", "libdevice", "libdevice.10.bc")
        if os.path.isfile(path):
            return path
    return None


LIBDEVICE = _find_libdevice()
if LIBDEVICE is not None:
    _numba_rs._set_libdevice(LIBDEVICE)


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

# Options of `cuda.jit`: those the PTX generation honours, and those it does not yet.
_HONOURED = {"device", "fastmath", "cache"}
_NOT_HONOURED = {"debug", "lineinfo", "opt", "max_registers", "link", "inline",
                 "boundscheck", "lto", "extensions"}


class CUDADispatcher(_Dispatcher):
    """A kernel (or, with ``device=True``, a device function) compiled to PTX."""

    def __new__(cls, py_func, device=False, fastmath=False):
        return super().__new__(cls, py_func, None, fastmath=0x7F if fastmath else 0,
                               _target="cuda")

    def __init__(self, py_func, device=False, fastmath=False):
        self.device = device
        self.__name__ = getattr(py_func, "__name__", "kernel")
        self.__doc__ = getattr(py_func, "__doc__", None)

    def compile(self, sig):
        """Compile one signature (``"void(float32[:], float32[:])"``) to PTX."""
        from ..decorators import _signature_text

        return self._compile_text(_signature_text(sig))

    def __call__(self, *args, **kwargs):
        if self.device:
            raise CudaSupportError(f"device function {self.__name__!r} can only be called "
                                   "from a kernel")
        raise ValueError(f"kernel {self.__name__!r} needs a launch configuration: "
                         f"{self.__name__}[griddim, blockdim](...)")

    def __getitem__(self, config):
        if self.device:
            raise TypeError("a device function is called, not launched")
        return lambda *args: _unavailable()

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        return lambda *args: _unavailable()


def jit(func_or_sig=None, device=False, **options):
    """``@cuda.jit`` as Numba spells it: a kernel, or with ``device=True`` a device
    function; with signatures, compiled to PTX at once. Unknown options are refused;
    options the PTX generation does not honour yet are warned about."""
    unknown = set(options) - _HONOURED - _NOT_HONOURED
    if unknown:
        raise TypeError(f"cuda.jit: unknown option(s) {sorted(unknown)}")
    ignored = sorted(k for k in set(options) & _NOT_HONOURED if options[k])
    if ignored:
        warnings.warn(f"cuda.jit: {', '.join(ignored)} not supported yet; ignored",
                      stacklevel=2)
    fastmath = bool(options.get("fastmath", False))

    def make(f, sigs):
        d = CUDADispatcher(f, device=device, fastmath=fastmath)
        for s in sigs:
            d.compile(s)
        return d

    if callable(func_or_sig) and not isinstance(func_or_sig, (str, list, tuple)):
        return make(func_or_sig, ())
    sigs = () if func_or_sig is None else (
        func_or_sig if isinstance(func_or_sig, (list, tuple)) else [func_or_sig])
    return lambda f: make(f, sigs)


def _intrinsic_outside_kernel(*args, **kwargs):
    raise CudaSupportError("CUDA intrinsics can only be used inside a kernel")


grid = gridsize = syncthreads = _intrinsic_outside_kernel


class _Namespace:
    def __init__(self, **funcs):
        self.__dict__.update(funcs)


shared = _Namespace(array=_intrinsic_outside_kernel)
local = _Namespace(array=_intrinsic_outside_kernel)
atomic = _Namespace(**{op: _intrinsic_outside_kernel for op in
                       ("add", "sub", "max", "min", "exch", "and_", "or_", "xor")})


def __getattr__(name):
    # No value outside a kernel: inside one, the compiler types them.
    if name in ("threadIdx", "blockIdx", "blockDim", "gridDim", "laneid"):
        raise AttributeError(f"cuda.{name} can only be used inside a kernel")
    raise AttributeError(f"module 'numba_rs.cuda' has no attribute {name!r}")
