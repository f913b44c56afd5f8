"""The CUDA target's error, one class under the simulator and without it."""


class CudaSupportError(RuntimeError):
    """CUDA is not usable here: no driver, a feature not available yet, or an intrinsic
    used outside a kernel."""
