"""Numba's experimental features (``numba.experimental``): :func:`jitclass`."""

from ._jitclass import jitclass

__all__ = ["jitclass"]
