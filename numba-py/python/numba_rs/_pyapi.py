"""``c.pyapi`` and the ``c`` that ``@box`` / ``@unbox`` functions receive: CPython's C
API declared by name in llvmlite code (numba-rs maps each name to the interpreter's own
symbol when it compiles the function), and conversions of numba-rs's own types through
their boundary slot codec (numba-py's ``_slot_codec``)."""

import ctypes
import itertools


class NativeValue:
    """What an unbox function returns (Numba's ``NativeValue``): the value, and an
    ``i1`` that is true when unboxing failed (the Python error set)."""

    def __init__(self, value, is_error=None, cleanup=None):
        self.value = value
        self.is_error = is_error
        self.cleanup = cleanup


# Objects boxing code embeds (`c.pyapi.serialize_object`): kept alive for the process.
_KEPT = []
_SYMBOLS = itertools.count()


class PythonAPI:
    """``c.pyapi``: CPython's C API called by name from llvmlite code. numba-rs maps each
    function the code declares to its address in the running interpreter."""

    def __init__(self, context, builder):
        from llvmlite import ir

        self.context = context
        self.builder = builder
        self.module = builder.module
        self.pyobj = ir.IntType(8).as_pointer()
        self.voidptr = self.pyobj
        self.cstring = self.pyobj
        self.long = ir.IntType(ctypes.sizeof(ctypes.c_long) * 8)
        self.ulong = self.long
        self.longlong = ir.IntType(64)
        self.ulonglong = self.longlong
        self.double = ir.DoubleType()
        self.py_ssize_t = ir.IntType(64)
        self.int = ir.IntType(32)

    def _fn(self, name, ret, args, var_arg=False):
        from llvmlite import ir

        fnty = ir.FunctionType(ret, args, var_arg=var_arg)
        existing = self.module.globals.get(name)
        if existing is not None:
            return existing
        return ir.Function(self.module, fnty, name=name)

    def _call(self, name, ret, args, values, var_arg=False):
        return self.builder.call(self._fn(name, ret, args, var_arg), values)

    def _cstring(self, text):
        from llvmlite import ir

        data = bytearray(text.encode("utf-8") + b"\0")
        name = f"numba_rs.cstr.{next(_SYMBOLS)}"
        g = ir.GlobalVariable(self.module, ir.ArrayType(ir.IntType(8), len(data)), name=name)
        g.global_constant = True
        g.linkage = "internal"
        g.initializer = ir.Constant(g.value_type, data)
        return self.builder.bitcast(g, self.cstring)

    def _data(self, name):
        """The address of a C-API data symbol (``_Py_NoneStruct``, ``PyExc_TypeError``)."""
        from llvmlite import ir

        g = self.module.globals.get(name)
        if g is None:
            g = ir.GlobalVariable(self.module, self.pyobj, name=name)
        return g

    # references
    def incref(self, obj):
        self._call("Py_IncRef", _void(), [self.pyobj], [obj])

    def decref(self, obj):
        self._call("Py_DecRef", _void(), [self.pyobj], [obj])

    def get_null_object(self):
        from llvmlite import ir

        return ir.Constant(self.pyobj, None)

    def borrow_none(self):
        return self.builder.bitcast(self._data("_Py_NoneStruct"), self.pyobj)

    def make_none(self):
        none = self.borrow_none()
        self.incref(none)
        return none

    # errors
    def err_occurred(self):
        return self._call("PyErr_Occurred", self.pyobj, [], [])

    def err_clear(self):
        self._call("PyErr_Clear", _void(), [], [])

    def err_set_string(self, exctype, msg):
        if isinstance(exctype, str):
            exctype = self.builder.load(self._data(exctype))
        if isinstance(msg, str):
            msg = self._cstring(msg)
        self._call("PyErr_SetString", _void(), [self.pyobj, self.cstring], [exctype, msg])

    def raise_object(self, exc):
        self._call("PyErr_SetObject", _void(), [self.pyobj, self.pyobj], [exc, self.make_none()])

    # attributes and calls
    def object_getattr_string(self, obj, attr):
        return self._call("PyObject_GetAttrString", self.pyobj, [self.pyobj, self.cstring],
                          [obj, self._cstring(attr)])

    def object_getattr(self, obj, attr):
        return self._call("PyObject_GetAttr", self.pyobj, [self.pyobj, self.pyobj], [obj, attr])

    def object_setattr_string(self, obj, attr, val):
        return self._call("PyObject_SetAttrString", self.int,
                          [self.pyobj, self.cstring, self.pyobj],
                          [obj, self._cstring(attr), val])

    def object_str(self, obj):
        return self._call("PyObject_Str", self.pyobj, [self.pyobj], [obj])

    def string_as_string(self, strobj):
        return self._call("PyUnicode_AsUTF8", self.cstring, [self.pyobj], [strobj])

    def sys_write_stdout(self, fmt, *args):
        """``PySys_FormatStdout(fmt, ...)``: text to ``sys.stdout`` (Numba's)."""
        if isinstance(fmt, str):
            fmt = self._cstring(fmt)
        self._call("PySys_FormatStdout", _void(), [self.cstring], [fmt, *args], var_arg=True)

    def print_object(self, obj):
        """``str(obj)`` written to ``sys.stdout``, as Numba's ``print_object``."""
        strobj = self.object_str(obj)
        cstr = self.string_as_string(strobj)
        self.sys_write_stdout("%s", cstr)
        self.decref(strobj)

    def print_string(self, text):
        self.sys_write_stdout("%s", self._cstring(text))

    def object_istrue(self, obj):
        return self._call("PyObject_IsTrue", self.int, [self.pyobj], [obj])

    def object_getitem(self, obj, key):
        return self._call("PyObject_GetItem", self.pyobj, [self.pyobj, self.pyobj], [obj, key])

    def call_function_objargs(self, callee, objargs):
        from llvmlite import ir

        return self._call("PyObject_CallFunctionObjArgs", self.pyobj, [self.pyobj],
                          [callee, *objargs, ir.Constant(self.pyobj, None)], var_arg=True)

    def call(self, callee, args=None, kws=None):
        from llvmlite import ir

        null = ir.Constant(self.pyobj, None)
        return self._call("PyObject_Call", self.pyobj, [self.pyobj] * 3,
                          [callee, args if args is not None else self.tuple_pack([]),
                           kws if kws is not None else null])

    def tuple_pack(self, items):
        from llvmlite import ir

        return self._call("PyTuple_Pack", self.pyobj, [self.py_ssize_t],
                          [ir.Constant(self.py_ssize_t, len(items)), *items], var_arg=True)

    def tuple_getitem(self, tup, idx):
        from llvmlite import ir

        return self._call("PyTuple_GetItem", self.pyobj, [self.pyobj, self.py_ssize_t],
                          [tup, ir.Constant(self.py_ssize_t, idx)])

    def tuple_size(self, tup):
        return self._call("PyTuple_Size", self.py_ssize_t, [self.pyobj], [tup])

    # objects the code refers to
    def serialize_object(self, obj):
        _KEPT.append(obj)
        return obj

    def unserialize(self, obj):
        """A new reference to an object ``serialize_object`` kept."""
        from llvmlite import ir

        p = ir.Constant(ir.IntType(64), id(obj)).inttoptr(self.pyobj)
        self.incref(p)
        return p

    # numbers
    def float_as_double(self, obj):
        return self._call("PyFloat_AsDouble", self.double, [self.pyobj], [obj])

    def float_from_double(self, val):
        return self._call("PyFloat_FromDouble", self.pyobj, [self.double], [val])

    def long_as_longlong(self, obj):
        return self._call("PyLong_AsLongLong", self.longlong, [self.pyobj], [obj])

    def long_as_ulonglong(self, obj):
        return self._call("PyLong_AsUnsignedLongLong", self.ulonglong, [self.pyobj], [obj])

    def long_as_ssize_t(self, obj):
        return self._call("PyLong_AsSsize_t", self.py_ssize_t, [self.pyobj], [obj])

    def long_from_longlong(self, val):
        return self._call("PyLong_FromLongLong", self.pyobj, [self.longlong], [val])

    def long_from_ulonglong(self, val):
        return self._call("PyLong_FromUnsignedLongLong", self.pyobj, [self.ulonglong], [val])

    def long_from_ssize_t(self, val):
        return self._call("PyLong_FromSsize_t", self.pyobj, [self.py_ssize_t], [val])

    def long_from_long(self, val):
        return self._call("PyLong_FromLong", self.pyobj, [self.long], [val])

    def number_as_ssize_t(self, obj):
        from llvmlite import ir

        return self._call("PyNumber_AsSsize_t", self.py_ssize_t, [self.pyobj, self.pyobj],
                          [obj, ir.Constant(self.pyobj, None)])

    def number_float(self, obj):
        return self._call("PyNumber_Float", self.pyobj, [self.pyobj], [obj])

    def number_long(self, obj):
        return self._call("PyNumber_Long", self.pyobj, [self.pyobj], [obj])

    def bool_from_bool(self, bval):
        return self._call("PyBool_FromLong", self.pyobj, [self.long],
                          [self.builder.zext(bval, self.long)])

    def bool_from_long(self, ival):
        return self._call("PyBool_FromLong", self.pyobj, [self.long], [ival])

    def string_from_string(self, text):
        return self._call("PyUnicode_FromString", self.pyobj, [self.cstring],
                          [self._cstring(text) if isinstance(text, str) else text])

    # values of numba-rs's own scalar types
    def to_native_value(self, typ, obj):
        from . import types as rt

        c = self.context
        typ = rt.unliteral(typ)
        if isinstance(typ, rt.Boolean):
            r = self.object_istrue(obj)
            from llvmlite import ir

            return NativeValue(self.builder.icmp_signed("!=", r, ir.Constant(self.int, 0)),
                               is_error=self._is_error())
        if isinstance(typ, rt.Integer):
            v = self.long_as_longlong(obj) if typ.signed else self.long_as_ulonglong(obj)
            return NativeValue(c.cast(self.builder, v, rt.int64 if typ.signed else rt.uint64, typ),
                               is_error=self._is_error())
        if isinstance(typ, rt.Float):
            v = self.float_as_double(obj)
            return NativeValue(c.cast(self.builder, v, rt.float64, typ), is_error=self._is_error())
        return self._through_codec_in(typ, obj)

    def from_native_value(self, typ, val, env_manager=None):
        from . import types as rt

        c = self.context
        typ = rt.unliteral(typ)
        if isinstance(typ, rt.Boolean):
            return self.bool_from_bool(val)
        if isinstance(typ, rt.Integer):
            if typ.signed:
                return self.long_from_longlong(c.cast(self.builder, val, typ, rt.int64))
            return self.long_from_ulonglong(c.cast(self.builder, val, typ, rt.uint64))
        if isinstance(typ, rt.Float):
            return self.float_from_double(c.cast(self.builder, val, typ, rt.float64))
        if typ == rt.none:
            return self.make_none()
        return self._through_codec_out(typ, val)

    def _codec(self, typ):
        from ._numba_rs import _slot_codec
        from .types import _code

        code = _code(typ)
        return code, _slot_codec(code)

    def _fnptr(self, address, ret, args):
        from llvmlite import ir

        fnty = ir.FunctionType(ret, args)
        return self.builder.inttoptr(ir.Constant(ir.IntType(64), address), fnty.as_pointer())

    def _through_codec_in(self, typ, obj):
        """Any other type through numba-rs's own argument codec (an array borrows the
        object's data, as arguments do)."""
        from llvmlite import ir

        from . import cgutils
        from ._intrinsic import _ll

        code, (n, load, _store, unbox_fn, _box_fn) = self._codec(typ)
        i64 = ir.IntType(64)
        slots = cgutils.alloca_once(self.builder, ir.ArrayType(i64, max(n, 1)))
        sp = self.builder.bitcast(slots, i64.as_pointer())
        unbox = self._fnptr(unbox_fn, self.int, [self.int, self.pyobj, i64.as_pointer()])
        err = self.builder.call(unbox, [ir.Constant(self.int, code), obj, sp])
        llty = _ll(typ)
        out = cgutils.alloca_once(self.builder, llty, zfill=True)
        is_error = self.builder.icmp_signed("!=", err, ir.Constant(self.int, 0))
        with self.builder.if_then(self.builder.not_(is_error)):
            fill = self._fnptr(load, ir.VoidType(), [i64.as_pointer(), llty.as_pointer()])
            self.builder.call(fill, [sp, out])
        return NativeValue(self.builder.load(out), is_error=is_error)

    def _through_codec_out(self, typ, val):
        """Any other type through numba-rs's own result codec: a new reference."""
        from llvmlite import ir

        from . import cgutils

        code, (n, _load, store, _unbox_fn, box_fn) = self._codec(typ)
        # The codec takes the references the slots hold; boxing borrows the value.
        self.context.nrt.incref(self.builder, typ, val)
        i64 = ir.IntType(64)
        slots = cgutils.alloca_once(self.builder, ir.ArrayType(i64, max(n, 1)))
        sp = self.builder.bitcast(slots, i64.as_pointer())
        cell = cgutils.alloca_once_value(self.builder, val)
        put = self._fnptr(store, ir.VoidType(), [cell.type, i64.as_pointer()])
        self.builder.call(put, [cell, sp])
        box = self._fnptr(box_fn, self.pyobj, [self.int, i64.as_pointer()])
        return self.builder.call(box, [ir.Constant(self.int, code), sp])

    def call_jit_code(self, func, sig, args):
        """Call the Python function ``func`` compiled for ``sig`` with the values
        ``args`` (Numba's ``call_jit_code``): ``(is_error, result)``; an exception it
        raises is left pending in Python (the caller holds the GIL, as box and unbox code
        does). Compiled once per call site, as a C-ABI function."""
        from llvmlite import ir

        from ._intrinsic import _ll
        from ._numba_rs import Dispatcher
        from .decorators import _signature_text

        kernel = Dispatcher(func, None, wrappers="cfunc_raises")
        argtypes = kernel._compile_text(_signature_text(sig))
        _, address, ret = kernel._wrapper_addresses(argtypes)
        _KEPT.append(kernel)
        from . import types as rt

        none = rt.unliteral(ret) == rt.none
        fnty = ir.FunctionType(_void() if none else _ll(ret), [_ll(t) for t in argtypes])
        fptr = self.builder.inttoptr(ir.Constant(ir.IntType(64), address), fnty.as_pointer())
        res = self.builder.call(fptr, list(args))
        if none:
            res = self.context.get_dummy_value()
        return self._is_error(), res

    def _is_error(self):
        from . import cgutils

        return cgutils.is_not_null(self.builder, self.err_occurred())

    def __getattr__(self, name):
        raise NotImplementedError(
            f"numba-rs's c.pyapi has no {name!r} (see docs/extending.md for what it offers)"
        )


def _void():
    from llvmlite import ir

    return ir.VoidType()


class _BoxContext:
    """The ``c`` box and unbox functions receive."""

    def __init__(self, builder):
        from ._intrinsic import CodegenContext

        self.context = CodegenContext()
        self.builder = builder
        self.pyapi = PythonAPI(self.context, builder)
        self.env_manager = None

    def box(self, typ, val):
        return self.pyapi.from_native_value(typ, val)

    def unbox(self, typ, obj):
        return self.pyapi.to_native_value(typ, obj)


def _symbol_address(name):
    """The address of a C symbol of the interpreter (a function or a data object)."""
    try:
        return ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value
    except AttributeError:
        return None


def _data_address(name):
    try:
        return ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, name))
    except ValueError:
        return None
