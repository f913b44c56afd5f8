"""The CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``): kernels run on the CPU as Python.

A launch ``kernel[griddim, blockdim](*args)`` runs the blocks one after another; the
threads of a block run concurrently as Python threads, so that ``syncthreads`` is a real
barrier, ``cuda.shared.array`` is one array per block, warp functions exchange values
between the 32 lanes of a warp and atomics are atomic. ``cuda.threadIdx`` and the other
indices read the calling thread's state. NumPy arrays passed to a kernel are used in
place (what CUDA's copy in and back gives); device arrays wrap a NumPy array.

As in Numba's simulator, code-generation options (``fastmath``, ``lineinfo``, ``opt``,
``debug``, ``max_registers``, ...) have no effect here: a warning says so once.
"""

import math
import threading
import warnings
from collections import namedtuple

import numpy as np

from .errors import CudaSupportError

WARP_SIZE = 32
warpsize = WARP_SIZE

# The simulator's device, as Numba's simulator reports it.
_SIMULATOR_CC = (5, 2)


class Dim3(namedtuple("Dim3", "x y z")):
    """A launch dimension or index: ``x``, ``y``, ``z``."""


def _dim3(d, what):
    if isinstance(d, (int, np.integer)):
        t = (int(d),)
    else:
        try:
            t = tuple(int(v) for v in d)
        except TypeError:
            raise TypeError(f"{what} must be an int or a tuple of ints, not {d!r}") from None
    if not 1 <= len(t) <= 3:
        raise ValueError(f"{what} must have 1 to 3 dimensions, not {len(t)}")
    if any(v < 1 for v in t):
        raise ValueError(f"{what} must be positive, got {d!r}")
    return Dim3(*(t + (1,) * (3 - len(t))))


_local = threading.local()


def _thread():
    st = getattr(_local, "thread", None)
    if st is None:
        raise CudaSupportError(
            "CUDA intrinsics can only be used inside a kernel or a device function "
            "launched through the simulator")
    return st


class _Warp:
    """One warp's exchange area: a barrier per participating mask, a slot per lane."""

    def __init__(self, lanes):
        self.lanes = lanes
        self.present = (1 << lanes) - 1
        self.lock = threading.Lock()
        self.barriers = {}
        self.values = [None] * WARP_SIZE

    def barrier(self, mask):
        mask &= self.present
        with self.lock:
            b = self.barriers.get(mask)
            if b is None:
                b = self.barriers[mask] = threading.Barrier(max(1, bin(mask).count("1")))
            return b


class _Block:
    def __init__(self, nthreads, sharedmem):
        self.barrier = threading.Barrier(nthreads)
        self.lock = threading.Lock()
        self.shared = []
        self.dynamic = np.zeros(int(sharedmem), dtype=np.uint8)
        self.reductions = {}
        self.warps = [
            _Warp(min(WARP_SIZE, nthreads - w * WARP_SIZE))
            for w in range((nthreads + WARP_SIZE - 1) // WARP_SIZE)
        ]

    def abort(self):
        self.barrier.abort()
        for w in self.warps:
            with w.lock:
                for b in w.barriers.values():
                    b.abort()


class _ThreadState:
    __slots__ = ("threadIdx", "blockIdx", "blockDim", "gridDim", "block", "linear",
                 "shared_calls", "reductions")

    def __init__(self, tid, bid, bdim, gdim, block):
        self.threadIdx = tid
        self.blockIdx = bid
        self.blockDim = bdim
        self.gridDim = gdim
        self.block = block
        self.linear = tid.x + bdim.x * (tid.y + bdim.y * tid.z)
        self.shared_calls = 0
        self.reductions = 0

    @property
    def lane(self):
        return self.linear % WARP_SIZE

    @property
    def warp(self):
        return self.block.warps[self.linear // WARP_SIZE]


# --- indices -------------------------------------------------------------------------

_INDEX_NAMES = ("threadIdx", "blockIdx", "blockDim", "gridDim")


def module_getattr(name):
    """The package's ``__getattr__``: the calling thread's indices."""
    if name in _INDEX_NAMES:
        return getattr(_thread(), name)
    if name == "laneid":
        return _thread().lane
    raise AttributeError(f"module 'numba_rs.cuda' has no attribute {name!r}")


def grid(ndim):
    """The thread's absolute position in the grid: an int for 1, a tuple for 2 or 3."""
    st = _thread()
    t, b, d = st.threadIdx, st.blockIdx, st.blockDim
    pos = (t.x + b.x * d.x, t.y + b.y * d.y, t.z + b.z * d.z)
    if ndim == 1:
        return pos[0]
    if ndim in (2, 3):
        return pos[:ndim]
    raise ValueError(f"grid() takes 1, 2 or 3 dimensions, not {ndim}")


def gridsize(ndim):
    """The number of threads in the grid along each dimension."""
    st = _thread()
    d, g = st.blockDim, st.gridDim
    size = (d.x * g.x, d.y * g.y, d.z * g.z)
    if ndim == 1:
        return size[0]
    if ndim in (2, 3):
        return size[:ndim]
    raise ValueError(f"gridsize() takes 1, 2 or 3 dimensions, not {ndim}")


# --- memory --------------------------------------------------------------------------


def _np_dtype(dtype):
    try:
        return np.dtype(dtype)
    except TypeError:
        return np.dtype(str(dtype))


def _shape(shape):
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)


class _Shared:
    @staticmethod
    def array(shape, dtype):
        """A block's shared array: every thread's n-th call returns the same array. A
        size of 0 is the dynamic shared memory given at launch (all such arrays alias)."""
        st = _thread()
        dt = _np_dtype(dtype)
        shp = _shape(shape)
        if shp == (0,):
            dyn = st.block.dynamic
            return dyn[: dyn.size - dyn.size % dt.itemsize].view(dt)
        k = st.shared_calls
        st.shared_calls += 1
        with st.block.lock:
            if len(st.block.shared) <= k:
                st.block.shared.append(np.zeros(shp, dtype=dt))
            return st.block.shared[k]


class _Local:
    @staticmethod
    def array(shape, dtype):
        """A thread's own array."""
        return np.zeros(_shape(shape), dtype=_np_dtype(dtype))


class _Const:
    @staticmethod
    def array_like(ary):
        """Constant memory holding a copy of ``ary``."""
        out = np.array(_host(ary), copy=True)
        out.flags.writeable = False
        return out


shared = _Shared()
local = _Local()
const = _Const()


# --- synchronisation -----------------------------------------------------------------


def syncthreads():
    """Wait until every thread of the block arrives."""
    _thread().block.barrier.wait()


def _block_reduce(predicate, combine):
    st = _thread()
    key = st.reductions
    st.reductions += 1
    blk = st.block
    with blk.lock:
        blk.reductions.setdefault(key, []).append(1 if predicate else 0)
    blk.barrier.wait()
    return combine(blk.reductions[key])


def syncthreads_count(predicate):
    """Barrier; the number of threads whose predicate is true."""
    return _block_reduce(predicate, sum)


def syncthreads_and(predicate):
    """Barrier; 1 if every thread's predicate is true."""
    return _block_reduce(predicate, lambda v: int(all(v)))


def syncthreads_or(predicate):
    """Barrier; 1 if any thread's predicate is true."""
    return _block_reduce(predicate, lambda v: int(any(v)))


def threadfence():
    """Memory fence (Python threads see each other's writes already)."""


threadfence_block = threadfence
threadfence_system = threadfence


# --- warp functions ------------------------------------------------------------------


def _exchange(mask, value, source):
    """Every participating lane's ``value``; this lane gets lane ``source(lane)``'s, or
    its own when that lane does not take part."""
    got = dict(_warp_gather(mask, value))
    return got.get(source(_thread().lane), value)


def shfl_sync(mask, value, src_lane):
    """``value`` from lane ``src_lane`` (modulo the warp size)."""
    return _exchange(mask, value, lambda lane: int(src_lane) % WARP_SIZE)


def shfl_up_sync(mask, value, delta):
    """``value`` from lane ``lane - delta``; a lane below ``delta`` keeps its own."""
    return _exchange(mask, value, lambda lane: lane - int(delta) if lane >= delta else lane)


def shfl_down_sync(mask, value, delta):
    """``value`` from lane ``lane + delta``; past the warp, a lane keeps its own."""
    return _exchange(mask, value,
                     lambda lane: lane + int(delta) if lane + delta < WARP_SIZE else lane)


def shfl_xor_sync(mask, value, lane_mask):
    """``value`` from lane ``lane ^ lane_mask``."""
    return _exchange(mask, value, lambda lane: lane ^ int(lane_mask))


def _warp_gather(mask, value):
    st = _thread()
    w, lane = st.warp, st.lane
    w.values[lane] = value
    b = w.barrier(mask)
    b.wait()
    got = [(i, w.values[i]) for i in range(w.lanes) if (mask >> i) & 1]
    b.wait()
    return got


def ballot_sync(mask, predicate):
    """A bit per participating lane whose predicate is true."""
    return sum(1 << i for i, p in _warp_gather(mask, bool(predicate)) if p)


def all_sync(mask, predicate):
    return int(all(p for _, p in _warp_gather(mask, bool(predicate))))


def any_sync(mask, predicate):
    return int(any(p for _, p in _warp_gather(mask, bool(predicate))))


def eq_sync(mask, value):
    vals = [v for _, v in _warp_gather(mask, value)]
    return int(all(v == vals[0] for v in vals))


def syncwarp(mask=0xFFFFFFFF):
    """Wait for the lanes of ``mask``."""
    st = _thread()
    st.warp.barrier(mask).wait()


def activemask():
    return _thread().warp.present


def lanemask_lt():
    return (1 << _thread().lane) - 1


# --- atomics -------------------------------------------------------------------------

_atomic_lock = threading.RLock()


def _atomic(update):
    def op(ary, idx, val):
        ary = _host(ary)
        with _atomic_lock:
            old = ary[idx]
            ary[idx] = update(old, val, ary.dtype.type)
            return old
    return op


class _Atomic:
    add = staticmethod(_atomic(lambda old, val, t: old + t(val)))
    sub = staticmethod(_atomic(lambda old, val, t: old - t(val)))
    # numba-cuda's NaN rules: max/min leave the element when it or the value is NaN
    # (Python's max/min of the two, element first); nanmax/nanmin ignore a NaN value
    # and replace a NaN element (NumPy's fmax/fmin).
    max = staticmethod(_atomic(lambda old, val, t: max(old, t(val))))
    min = staticmethod(_atomic(lambda old, val, t: min(old, t(val))))
    nanmax = staticmethod(_atomic(lambda old, val, t: np.fmax(old, t(val))))
    nanmin = staticmethod(_atomic(lambda old, val, t: np.fmin(old, t(val))))
    exch = staticmethod(_atomic(lambda old, val, t: t(val)))
    inc = staticmethod(_atomic(lambda old, val, t: t(0) if old >= val else old + t(1)))
    dec = staticmethod(_atomic(
        lambda old, val, t: t(val) if (old == 0 or old > val) else old - t(1)))
    and_ = staticmethod(_atomic(lambda old, val, t: old & t(val)))
    or_ = staticmethod(_atomic(lambda old, val, t: old | t(val)))
    xor = staticmethod(_atomic(lambda old, val, t: old ^ t(val)))

    @staticmethod
    def cas(ary, idx, old, val):
        """Store ``val`` where ``ary[idx] == old``; the value found."""
        ary = _host(ary)
        with _atomic_lock:
            found = ary[idx]
            if found == old:
                ary[idx] = val
            return found

    @staticmethod
    def compare_and_swap(ary, old, val):
        return _Atomic.cas(ary, 0, old, val)


atomic = _Atomic()


# --- integer and float intrinsics ----------------------------------------------------


def popc(x):
    return bin(int(x) & ((1 << _bits(x)) - 1)).count("1")


def _bits(x):
    return np.asarray(x).dtype.itemsize * 8 if isinstance(x, np.generic) else 64


def brev(x):
    n = _bits(x)
    v = int(x) & ((1 << n) - 1)
    return int(format(v, f"0{n}b")[::-1], 2)


def clz(x):
    n = _bits(x)
    v = int(x) & ((1 << n) - 1)
    return n - v.bit_length()


def ffs(x):
    v = int(x) & ((1 << _bits(x)) - 1)
    return (v & -v).bit_length()


def fma(a, b, c):
    return a * b + c


def cbrt(x):
    return math.copysign(abs(x) ** (1.0 / 3.0), x)


def selp(cond, a, b):
    return a if cond else b


# --- arrays and streams --------------------------------------------------------------


class DeviceNDArray:
    """A simulated device array: a NumPy array the simulator's kernels use in place."""

    def __init__(self, ary, stream=0):
        self._ary = ary
        self.stream = stream

    shape = property(lambda self: self._ary.shape)
    dtype = property(lambda self: self._ary.dtype)
    strides = property(lambda self: self._ary.strides)
    ndim = property(lambda self: self._ary.ndim)
    size = property(lambda self: self._ary.size)
    nbytes = property(lambda self: self._ary.nbytes)
    T = property(lambda self: DeviceNDArray(self._ary.T))

    @property
    def __cuda_array_interface__(self):
        a = self._ary
        return {
            "shape": a.shape,
            "typestr": a.dtype.str,
            "data": (a.ctypes.data, not a.flags.writeable),
            "strides": None if a.flags.c_contiguous else a.strides,
            "version": 3,
            "stream": None,
        }

    def __array__(self, dtype=None, copy=None):
        return self._ary if dtype is None else self._ary.astype(dtype)

    def __len__(self):
        return len(self._ary)

    def __getitem__(self, idx):
        v = self._ary[idx]
        return DeviceNDArray(v) if isinstance(v, np.ndarray) else v

    def __setitem__(self, idx, value):
        self._ary[idx] = _host(value)

    def __repr__(self):
        return f"<simulated DeviceNDArray shape={self.shape} dtype={self.dtype}>"

    def copy_to_host(self, ary=None, stream=0):
        if ary is None:
            return self._ary.copy()
        np.copyto(ary, self._ary)
        return ary

    def copy_to_device(self, ary, stream=0):
        np.copyto(self._ary, _host(ary))

    def is_c_contiguous(self):
        return self._ary.flags.c_contiguous

    def is_f_contiguous(self):
        return self._ary.flags.f_contiguous

    def reshape(self, *shape, order="C"):
        return DeviceNDArray(self._ary.reshape(*shape, order=order))

    def ravel(self, order="C"):
        return DeviceNDArray(self._ary.ravel(order=order))

    def split(self, section, stream=0):
        return [DeviceNDArray(self._ary[i:i + section])
                for i in range(0, len(self._ary), section)]

    def get_ipc_handle(self):
        raise CudaSupportError("IPC handles are not available under the simulator")


def _host(x):
    return x._ary if isinstance(x, DeviceNDArray) else x


def is_cuda_array(obj):
    return hasattr(obj, "__cuda_array_interface__")


def as_cuda_array(obj, sync=True):
    if isinstance(obj, DeviceNDArray):
        return obj
    if not is_cuda_array(obj):
        raise TypeError("as_cuda_array: the object does not expose __cuda_array_interface__")
    return DeviceNDArray(np.asarray(obj))


def to_device(obj, stream=0, copy=True, to=None):
    """A device copy of ``obj`` (or a copy into ``to``)."""
    data = np.array(_host(obj), copy=True)
    if to is not None:
        to.copy_to_device(data)
        return to
    return DeviceNDArray(data, stream)


def device_array(shape, dtype=np.float64, strides=None, order="C", stream=0):
    return DeviceNDArray(np.zeros(_shape(shape), dtype=_np_dtype(dtype), order=order), stream)


def device_array_like(ary, stream=0):
    ary = _host(ary)
    order = "F" if ary.flags.f_contiguous and not ary.flags.c_contiguous else "C"
    return device_array(ary.shape, ary.dtype, order=order, stream=stream)


def pinned_array(shape, dtype=np.float64, strides=None, order="C"):
    return np.zeros(_shape(shape), dtype=_np_dtype(dtype), order=order)


def pinned_array_like(ary):
    return np.zeros_like(_host(ary))


mapped_array = pinned_array
managed_array = pinned_array


class Stream:
    """A simulated stream: work runs at launch, so there is nothing to wait for."""

    def synchronize(self):
        pass

    class _Auto:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    def auto_synchronize(self):
        return Stream._Auto()


def stream():
    return Stream()


def default_stream():
    return Stream()


per_thread_default_stream = default_stream
legacy_default_stream = default_stream


class Event:
    def __init__(self, timing=True):
        self._t = None

    def record(self, stream=0):
        import time
        self._t = time.perf_counter()

    def synchronize(self):
        pass

    def wait(self, stream=0):
        pass

    def query(self):
        return True

    def elapsed_time(self, evtend):
        return (evtend._t - self._t) * 1e3


def event(timing=True):
    return Event(timing)


def synchronize():
    """Wait for all work (none is ever pending under the simulator)."""


class _Device:
    id = 0
    name = b"SIMULATOR"
    compute_capability = _SIMULATOR_CC

    def reset(self):
        pass


_DEVICE = _Device()


def is_available():
    return True


def detect():
    print("Found 1 CUDA devices")
    print("id %d    %20s %40s" % (0, "SIMULATOR", "[SUPPORTED]"))
    print("%40s: 5.2" % "compute capability")
    print("Summary:")
    print("\t1/1 devices are supported")
    return True


def select_device(device_id):
    if device_id != 0:
        raise CudaSupportError(f"the simulator has one device (0), not {device_id}")
    return _DEVICE


def get_current_device():
    return _DEVICE


def list_devices():
    return [_DEVICE]


def close():
    pass


# --- kernels -------------------------------------------------------------------------

_IGNORED_OPTIONS = ("fastmath", "lineinfo", "opt", "debug", "max_registers", "link",
                    "inline", "cache", "boundscheck", "lto", "extensions")
_warned_options = set()


class SimKernel:
    """A kernel (or, with ``device=True``, a device function) run by the simulator."""

    def __init__(self, py_func, device=False, signatures=(), options=None):
        self.py_func = py_func
        self.device = device
        self.signatures = list(signatures)
        self.__name__ = getattr(py_func, "__name__", "kernel")
        self.__doc__ = getattr(py_func, "__doc__", None)
        for name in sorted(set(options or ()) - _warned_options):
            if name in _IGNORED_OPTIONS:
                _warned_options.add(name)
                warnings.warn(f"the CUDA simulator ignores the option {name!r}", stacklevel=3)

    def __call__(self, *args, **kwargs):
        if self.device:
            return self.py_func(*args, **kwargs)
        raise ValueError(
            f"kernel {self.__name__!r} needs a launch configuration: "
            f"{self.__name__}[griddim, blockdim](...)")

    def __getitem__(self, config):
        if self.device:
            raise TypeError("a device function is called, not launched")
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise ValueError("launch configuration must be [griddim, blockdim] or "
                             "[griddim, blockdim, stream] or "
                             "[griddim, blockdim, stream, sharedmem]")
        griddim = _dim3(config[0], "griddim")
        blockdim = _dim3(config[1], "blockdim")
        sharedmem = config[3] if len(config) > 3 else 0
        if blockdim.x * blockdim.y * blockdim.z > 1024:
            raise ValueError(f"too many threads per block: {blockdim} (at most 1024)")
        return lambda *args: _launch(self, griddim, blockdim, sharedmem, args)

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        if ntasks < 0:
            raise ValueError(f"Can't create ForAll with negative task count: {ntasks}")
        return self[max(int(ntasks), 1), 1, stream, sharedmem]

    def specialize(self, *args):
        return self

    def inspect_asm(self, signature=None):
        raise CudaSupportError("the CUDA simulator generates no PTX")

    inspect_llvm = inspect_asm


def _launch(kernel, griddim, blockdim, sharedmem, args):
    if getattr(_local, "thread", None) is not None:
        raise CudaSupportError("launching a kernel from a kernel is not supported")
    args = tuple(_host(a) for a in args)
    nthreads = blockdim.x * blockdim.y * blockdim.z
    for bz in range(griddim.z):
        for by in range(griddim.y):
            for bx in range(griddim.x):
                _run_block(kernel, Dim3(bx, by, bz), griddim, blockdim, nthreads,
                           sharedmem, args)


def _run_block(kernel, bid, griddim, blockdim, nthreads, sharedmem, args):
    block = _Block(nthreads, sharedmem)
    errors = []

    def body(tid):
        _local.thread = _ThreadState(tid, bid, blockdim, griddim, block)
        try:
            kernel.py_func(*args)
        except threading.BrokenBarrierError:
            pass
        except BaseException as e:  # re-raised in the launching thread
            errors.append((tid, e))
            block.abort()
        finally:
            _local.thread = None

    tids = [Dim3(x, y, z) for z in range(blockdim.z) for y in range(blockdim.y)
            for x in range(blockdim.x)]
    if nthreads == 1:
        body(tids[0])
    else:
        threads = [threading.Thread(target=body, args=(t,)) for t in tids]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    if errors:
        # The first thread's exception, as the launch's (Numba's simulator does the same).
        raise errors[0][1]


def jit(func_or_sig=None, device=False, **options):
    """``@cuda.jit``, ``@cuda.jit(device=True)``, ``@cuda.jit("void(float32[:])")``."""
    def wrap(signatures):
        return lambda f: SimKernel(f, device=device, signatures=signatures, options=options)

    if callable(func_or_sig) and not isinstance(func_or_sig, (str, list, tuple)):
        return SimKernel(func_or_sig, device=device, options=options)
    if func_or_sig is None:
        return wrap(())
    sigs = func_or_sig if isinstance(func_or_sig, (list, tuple)) else [func_or_sig]
    return wrap(sigs)


def declare_device(name, sig, link=None):
    raise CudaSupportError("declare_device: external device functions cannot run under the "
                           "simulator")
