"""C functions jitted code calls: ctypes function pointers and cffi functions, as the
compiler sees them, their address and their C signature as numba-rs signature text
(``float64(float64, void*, int32*)``).

Numba's rules: a ctypes function must declare ``argtypes`` (``restype`` defaults to
``c_int``); a cffi function is one ``ffi.typeof`` calls a function, from ``ffi.dlopen``
(in line) or from an out-of-line module registered with :func:`register_module` (or
with Numba's own ``cffi_utils.register_module`` when Numba is imported).
"""

import ctypes
import sys


def _ints():
    table = {}
    for cls in (ctypes.c_byte, ctypes.c_short, ctypes.c_int, ctypes.c_long, ctypes.c_longlong,
                ctypes.c_int8, ctypes.c_int16, ctypes.c_int32, ctypes.c_int64, ctypes.c_ssize_t):
        table[cls] = "int%d" % (8 * ctypes.sizeof(cls))
    for cls in (ctypes.c_ubyte, ctypes.c_ushort, ctypes.c_uint, ctypes.c_ulong,
                ctypes.c_ulonglong, ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32,
                ctypes.c_uint64, ctypes.c_size_t):
        table[cls] = "uint%d" % (8 * ctypes.sizeof(cls))
    return table


_CTYPES = {
    **_ints(),
    ctypes.c_bool: "bool",
    ctypes.c_float: "float32",
    ctypes.c_double: "float64",
    ctypes.c_void_p: "void*",
}


def ctype_text(t):
    """numba-rs's type text for a ctypes type (``None`` is ``none``, a C ``void``)."""
    if t is None:
        return "none"
    if t in _CTYPES:
        return _CTYPES[t]
    if isinstance(t, type) and issubclass(t, ctypes._Pointer):
        return ctype_text(t._type_) + "*"
    raise TypeError(f"Unsupported ctypes type: {t}")


def ctypes_function(obj):
    """``(name, address, signature text)`` of a ctypes function pointer, None for any
    other object; TypeError (Numba's message) when it declares no argument types."""
    if not isinstance(obj, ctypes._CFuncPtr):
        return None
    name = getattr(obj, "__name__", None) or type(obj).__name__
    if obj.argtypes is None:
        raise TypeError(
            f"ctypes function '{name}' doesn't define its argument types; can't "
            "determine its signature"
        )
    args = ", ".join(ctype_text(a) for a in obj.argtypes)
    address = ctypes.cast(obj, ctypes.c_void_p).value or 0
    return name, address, f"{ctype_text(obj.restype)}({args})"


# -- cffi -----------------------------------------------------------------------------------

_ffi = None
# Out-of-line modules' functions: function object -> (name, address, cffi type).
_ool = {}


def _global_ffi():
    global _ffi
    if _ffi is None:
        import cffi

        _ffi = cffi.FFI()
    return _ffi


_CFFI_PRIMITIVES = {
    "_Bool": "bool",
    "bool": "bool",
    "float": "float32",
    "double": "float64",
    "char": "int8",
    "signed char": "int8",
    "unsigned char": "uint8",
    "short": "int16",
    "unsigned short": "uint16",
    "int": "int32",
    "unsigned int": "uint32",
    "long": "int%d" % (8 * ctypes.sizeof(ctypes.c_long)),
    "unsigned long": "uint%d" % (8 * ctypes.sizeof(ctypes.c_ulong)),
    "long long": "int64",
    "unsigned long long": "uint64",
    "size_t": "uint%d" % (8 * ctypes.sizeof(ctypes.c_size_t)),
    "ssize_t": "int%d" % (8 * ctypes.sizeof(ctypes.c_ssize_t)),
    "intptr_t": "int64",
    "uintptr_t": "uint64",
    **{f"int{n}_t": f"int{n}" for n in (8, 16, 32, 64)},
    **{f"uint{n}_t": f"uint{n}" for n in (8, 16, 32, 64)},
}


def cffi_type_text(t):
    """numba-rs's type text for a cffi ctype."""
    if t.kind == "void":
        return "none"
    if t.kind == "primitive" and t.cname in _CFFI_PRIMITIVES:
        return _CFFI_PRIMITIVES[t.cname]
    if t.kind == "pointer":
        if t.item.kind == "void":
            return "void*"
        return cffi_type_text(t.item) + "*"
    if t.kind == "function":
        return "void*"
    raise TypeError(f"Unsupported cffi type: {t.cname}")


def _cffi_signature(t):
    args = ", ".join(cffi_type_text(a) for a in t.args)
    return f"{cffi_type_text(t.result)}({args})"


def register_module(mod):
    """Make the functions of an out-of-line cffi module (``mod.ffi``, ``mod.lib``)
    callable from jitted code."""
    ffi, lib = mod.ffi, mod.lib
    for name in dir(lib):
        f = getattr(lib, name)
        try:
            t = ffi.typeof(f)
        except TypeError:
            continue
        if t.kind != "function":
            continue
        address = int(ffi.cast("uintptr_t", ffi.addressof(lib, name)))
        _ool[f] = (name, address, t)


def _numba_ool(obj):
    """An out-of-line function Numba's own ``cffi_utils.register_module`` registered."""
    utils = sys.modules.get("numba.core.typing.cffi_utils")
    if utils is None:
        return None
    try:
        t = utils._ool_func_types.get(obj)
        ptr = utils._ool_func_ptr.get(obj)
    except (AttributeError, TypeError):
        return None
    if t is None or ptr is None:
        return None
    # Numba keeps the cffi function type and the address.
    return getattr(obj, "__name__", "cffi_func"), int(ptr), _cffi_signature(t)


def cffi_function(obj):
    """``(name, address, signature text)`` of a cffi function, None for any other
    object."""
    if "_cffi_backend" not in sys.modules:
        return None
    try:
        hash(obj)
        hit = _ool.get(obj)
    except TypeError:
        hit = None
    if hit is not None:
        name, address, t = hit
        return name, address, _cffi_signature(t)
    found = _numba_ool(obj)
    if found is not None:
        return found
    ffi = _global_ffi()
    try:
        t = ffi.typeof(obj)
    except Exception:  # not a cffi object
        return None
    if t.kind != "function":
        return None
    address = int(ffi.cast("uintptr_t", obj))
    return getattr(obj, "__name__", "cffi_func"), address, _cffi_signature(t)


def c_function(obj):
    """A ctypes or cffi function's ``(name, address, signature text)``, or None."""
    found = ctypes_function(obj)
    if found is None:
        found = cffi_function(obj)
    return found


def address(obj):
    """The address a pointer argument given as a ctypes or cffi object stands for: a C
    function's entry, a cffi pointer's value, a ctypes pointer's value."""
    if hasattr(obj, "_numba_rs_kernel") and hasattr(obj, "address"):
        return obj.address  # a cfunc object
    found = c_function(obj)
    if found is not None:
        return found[1]
    if type(obj).__module__ == "_cffi_backend":
        return int(_global_ffi().cast("uintptr_t", obj))
    return ctypes.cast(obj, ctypes.c_void_p).value or 0
