"""Mutable structs passed by reference (Numba's ``numba.experimental.structref``).

A structref type is a subclass of ``types.StructRef`` made with its fields,
``MyStructType(fields=[("x", int64), ...])``; its values are NRT-managed records of the
fields (the record jitclass instances use, so fields release what they hold when the
last reference goes). The pieces, as Numba documents them:

- :func:`register` makes a ``types.StructRef`` subclass usable in compiled code: values
  of its types have their fields as attributes there, read and assigned (assigned
  values are cast to the field's type);
- :func:`new` (compiled code only) makes a value with every field zeroed;
- :func:`define_constructor` makes a Python class callable in compiled code, building a
  value from the field values given in order (the type follows the arguments' types);
- :func:`define_boxing` makes values returned to Python instances of a
  :class:`StructRefProxy` subclass, and such instances arguments of compiled code;
- :func:`define_proxy` does both.

Methods and attributes beyond the fields come from ``overload_method`` /
``overload_attribute`` on the ``types.StructRef`` subclass; from Python, a proxy class
defines its own properties and methods (calling jitted functions), as under Numba.
"""

from .. import types as _types
from .._numba_rs import _InstanceBase, _class_set_proxy
from ._jitclass import _new

__all__ = ["StructRefProxy", "define_attributes", "define_boxing", "define_constructor",
           "define_proxy", "new", "register"]

# Subclasses of `types.StructRef` made usable in compiled code, and the proxy class each
# boxes to.
_REGISTERED = set()
_BOXING = {}


def _check_typeclass(struct_type, what):
    if struct_type is _types.StructRef:
        raise ValueError(f"cannot register {_types.StructRef}")
    if not (isinstance(struct_type, type) and issubclass(struct_type, _types.StructRef)):
        raise TypeError(f"{what} takes a subclass of types.StructRef, not {struct_type!r}")


def register(struct_type):
    """Register a subclass of ``types.StructRef`` for use in compiled code (its values'
    fields become attributes there). Returns the class: usable as a decorator."""
    _check_typeclass(struct_type, "structref.register")
    define_attributes(struct_type)
    return struct_type


def define_attributes(struct_typeclass):
    """Fields as attributes of values of ``struct_typeclass``'s types in compiled code,
    read and assigned (``register`` calls it)."""
    _check_typeclass(struct_typeclass, "structref.define_attributes")
    # The compiler reads and writes a record type's fields itself: registering the
    # class is all there is to do.
    _REGISTERED.add(struct_typeclass)


def _proxy_for(t):
    for klass in type(t).__mro__:
        if klass in _BOXING:
            return _BOXING[klass]
    return None


def _type_made(t):
    """A new type of a structref class: it boxes to the class's proxy, if defined."""
    proxy = _proxy_for(t)
    if proxy is not None:
        _class_set_proxy(t.typecode, proxy)


def define_boxing(struct_type, obj_class):
    """Values of ``struct_type``'s types returned to Python become ``obj_class``
    instances (a :class:`StructRefProxy` subclass) holding a reference to the record,
    and such instances passed to compiled code are those values again."""
    _check_typeclass(struct_type, "structref.define_boxing")
    if not (isinstance(obj_class, type) and issubclass(obj_class, StructRefProxy)):
        raise TypeError(
            f"structref.define_boxing: {obj_class!r} is not a subclass of "
            "numba_rs.experimental.structref.StructRefProxy"
        )
    _BOXING[struct_type] = obj_class
    # Every structref type made so far (each has its fields recorded).
    for code in list(_types._STRUCTREF_FIELDS):
        t = _types._from_code(code)
        if isinstance(t, struct_type):
            _type_made(t)


def define_constructor(py_class, struct_typeclass, fields):
    """Calling ``py_class(*values)`` in compiled code makes a value of
    ``struct_typeclass`` whose type has ``fields`` (names, in order) typed as the
    arguments are."""
    from ..extending import overload

    _check_typeclass(struct_typeclass, "structref.define_constructor")
    fields = list(fields)
    for f in fields:
        if not (isinstance(f, str) and f.isidentifier()):
            raise ValueError(f"structref field names are identifiers, not {f!r}")
    params = ", ".join(fields)
    body = "\n        ".join(f"st.{k} = {k}" for k in fields) or "pass"
    source = (
        f"def ctor({params}):\n"
        f"    struct_type = struct_typeclass(list(zip({fields!r}, [{params}])))\n"
        f"    def impl({params}):\n"
        f"        st = new(struct_type)\n"
        f"        {body}\n"
        f"        return st\n"
        f"    return impl\n"
    )
    ns = {"struct_typeclass": struct_typeclass, "new": new}
    exec(source, ns)  # noqa: S102  (field names checked to be identifiers)
    overload(py_class, strict=False)(ns["ctor"])


def define_proxy(py_class, struct_typeclass, fields):
    """``py_class`` constructs values of ``struct_typeclass`` in compiled code and in
    Python, and is the class they box to (``define_constructor`` and
    ``define_boxing``)."""
    define_constructor(py_class, struct_typeclass, fields)
    define_boxing(struct_typeclass, py_class)


def new(struct_type):
    """``new(struct_type)`` (compiled code only): a value of ``struct_type`` with every
    field zeroed, to be assigned before use."""
    raise NotImplementedError("structref.new is only called from compiled code")


new._numba_rs_builtin = _new._numba_rs_builtin


class StructRefProxy(_InstanceBase):
    """The Python object standing for a structref value: it holds a reference to the
    record. Subclasses should not define ``__init__``; they may override ``__new__``,
    calling ``StructRefProxy.__new__(cls, *args)``, which builds the value through
    ``cls(*args)`` in compiled code."""

    def __new__(cls, *args):
        ctor = cls.__dict__.get("_numba_rs_ctor")
        if ctor is None:
            from .. import njit

            def ctor(*args):
                return cls(*args)

            ctor = njit(ctor)
            cls._numba_rs_ctor = ctor
        return ctor(*args)

    def __init__(self, *args, **kwargs):
        pass

    @property
    def _type(self):
        """The structref type of this value."""
        return _types._from_code(self._numba_rs_typecode())

    @property
    def _numba_type_(self):
        return self._type

    def __reduce__(self):
        raise TypeError(f"cannot pickle a structref ({type(self).__name__} object)")

    def __repr__(self):
        return f"<{type(self).__qualname__} structref object at {id(self):#x}>"
