"""The numba-rs runtime (NRT) as seen from Python."""

from . import rtsys

__all__ = ["rtsys"]
