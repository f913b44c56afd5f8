"""The classes ``np.finfo``/``np.iinfo`` return from jitted code: namedtuples of the
fields Numba supports (``numba.np.arraymath.finfo``/``iinfo``)."""

from collections import namedtuple

finfo = namedtuple(
    "finfo",
    (
        "eps",
        "epsneg",
        "iexp",
        "machep",
        "max",
        "maxexp",
        "min",
        "minexp",
        "negep",
        "nexp",
        "nmant",
        "precision",
        "resolution",
        "tiny",
        "bits",
    ),
)

iinfo = namedtuple("iinfo", ("min", "max", "bits"))
