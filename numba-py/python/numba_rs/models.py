"""Data models for user-defined types (Numba's ``numba.core.datamodel.models``).

Two are supported: :class:`OpaqueModel`, whose values carry no data in compiled code,
and :class:`StructModel`, which lays a type out as an LLVM struct of its members (in
numba-rs's data models, so a member of any type the compiler knows works). Numba's other
models describe numba-rs's own types, whose layout the compiler owns: reading one raises
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


class StructModel(DataModel):
    """A struct of named members: ``members`` is a list of ``(name, type)``."""

    def __init__(self, dmm, fe_type, members):
        super().__init__(dmm, fe_type)
        members = list(members)
        self._fields = tuple(name for name, _ in members)
        self._members = tuple(t for _, t in members)

    @property
    def fields(self):
        return self._fields

    def get_field_position(self, field):
        try:
            return self._fields.index(field)
        except ValueError:
            raise KeyError(f"{type(self).__name__} does not have a field named {field!r}") from None

    def get_member_fe_type(self, name):
        return self._members[self.get_field_position(name)]

    def get_value_type(self):
        from ._intrinsic import _ll

        return _ll(self.fe_type)

    get_data_type = get_value_type


_NUMBA_MODELS = (
    "PrimitiveModel",
    "ProxyModel",
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
            f"numba_rs.models has no attribute {name!r}: Numba's {name} describes one of "
            "the compiler's own types, whose layout numba-rs owns (OpaqueModel and "
            "StructModel are supported)"
        )
    raise AttributeError(f"module 'numba_rs.models' has no attribute {name!r}")
