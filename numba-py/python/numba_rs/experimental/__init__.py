"""Numba's experimental features (``numba.experimental``): :func:`jitclass` and
:mod:`structref`."""

from . import structref
from ._jitclass import jitclass

__all__ = ["jitclass", "structref"]
