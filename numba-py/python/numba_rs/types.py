"""Numba types as objects that print as Numba prints them (``int64``, ``float64``)."""

from ._numba_rs import Type, type_from_name


class Signature:
    """A function signature, as ``int64(int64, float64)`` builds it (Numba's
    ``typing.Signature``): ``return_type`` and ``args``; prints as Numba prints one."""

    def __init__(self, return_type, args):
        self.return_type = return_type
        self.args = tuple(args)

    def __str__(self):
        args = ", ".join(str(a) for a in self.args)
        comma = "," if len(self.args) == 1 else ""
        return f"({args}{comma}) -> {self.return_type}"

    __repr__ = __str__

    def __eq__(self, other):
        return (
            isinstance(other, Signature)
            and self.return_type == other.return_type
            and self.args == other.args
        )

    def __hash__(self):
        return hash((self.return_type, self.args))

boolean = bool_ = type_from_name("bool")
int8 = type_from_name("int8")
int16 = type_from_name("int16")
int32 = type_from_name("int32")
int64 = intp = type_from_name("int64")
uint8 = type_from_name("uint8")
uint16 = type_from_name("uint16")
uint32 = type_from_name("uint32")
uint64 = uintp = type_from_name("uint64")
float32 = type_from_name("float32")
float64 = double = type_from_name("float64")
complex64 = type_from_name("complex64")
complex128 = type_from_name("complex128")
none = void = type_from_name("none")
pyobject = type_from_name("pyobject")

# Numba's short aliases.
b1 = boolean
i1, i2, i4, i8 = int8, int16, int32, int64
u1, u2, u4, u8 = uint8, uint16, uint32, uint64
f4, f8 = float32, float64
c8, c16 = complex64, complex128

__all__ = [n for n in dir() if not n.startswith("_") and n not in ("Type", "type_from_name", "Signature")]
