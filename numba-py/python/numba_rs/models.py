"""Data models for user-defined types (Numba's ``numba.core.datamodel.models``).

numba-rs has one so far: :class:`OpaqueModel`, for a ``types.Opaque`` subclass whose
values carry no data in compiled code. Numba's other models (``StructModel`` and the
rest, which lay a type out in LLVM) are not supported yet: reading one raises
AttributeError saying so.
"""


class DataModel:
    """Base of the models ``register_model`` accepts."""

    def __init__(self, dmm=None, fe_type=None):
        self._dmm = dmm
        self.fe_type = fe_type


class OpaqueModel(DataModel):
    """An opaque value: nothing crosses into compiled code but its type (Numba keeps a
    null pointer; numba-rs keeps nothing)."""


_NUMBA_MODELS = (
    "PrimitiveModel",
    "ProxyModel",
    "StructModel",
    "CompositeModel",
    "ArrayModel",
    "UniTupleModel",
    "PointerModel",
    "EnumModel",
    "IntegerModel",
    "FloatModel",
    "BooleanModel",
)


def __getattr__(name):
    if name in _NUMBA_MODELS:
        raise AttributeError(
            f"numba_rs.models has no attribute {name!r}: Numba's {name} lays a type out in "
            "LLVM, which numba-rs does not support yet (OpaqueModel is supported)"
        )
    raise AttributeError(f"module 'numba_rs.models' has no attribute {name!r}")
