"""``@intrinsic``: a typing function returns ``(signature, codegen)``; ``codegen(context,
builder, signature, args)`` writes the body with llvmlite's pure-Python IR builder
(``llvmlite.ir``, an optional dependency) into a fresh function, whose module text
numba-rs parses into the caller's module and calls (numba-lower's ``external``).

The ``context`` offers what intrinsics commonly use: ``get_value_type`` /
``get_data_type``, ``get_constant`` / ``get_constant_generic``, ``get_dummy_value``,
``cast`` (numbers), ``make_tuple``, ``typing_context``. Numba's ``compile_internal``,
``get_function`` and the NRT/C-API helpers have no counterpart (they raise
NotImplementedError naming themselves).
"""

import itertools

from . import _numba_bridge
from ._numba_rs import _llvm_type_desc
from .errors import TypingError

_BY_KEY = {}
# Functions `compile_internal` compiled: (function, argument codes, return code) -> cfunc.
_INTERNAL = {}
_COUNTER = itertools.count()


def _ll(t):
    """llvmlite's type for a numba-rs type (its data model's LLVM value type)."""
    from llvmlite import ir

    def build(d):
        kind = d[0]
        if kind == "int":
            return ir.IntType(d[1])
        if kind == "float":
            return ir.FloatType()
        if kind == "double":
            return ir.DoubleType()
        if kind == "ptr":
            return ir.IntType(8).as_pointer()
        if kind == "struct":
            return ir.LiteralStructType([build(m) for m in d[1]])
        if kind == "array":
            return ir.ArrayType(build(d[2]), d[1])
        raise TypeError(f"no llvmlite type for {d!r}")

    code = _code(t)
    from ._usertypes import _MEMBERS

    members = _MEMBERS.get(code)
    if members is not None:
        # A user's struct: its members spelled as `_ll` spells them (consistently with
        # the values code builds for them).
        return ir.LiteralStructType([_ll(m) for m in members])
    ours = build(_llvm_type_desc(code))
    # Code written against Numba compares LLVM types with its data models' (typed
    # pointers: `i32*` for an int32 array's data): where Numba lays the type out the same
    # way but for pointer types, give Numba's spelling. LLVM's opaque pointers make the
    # two the same once parsed.
    if _numba_bridge.numba_types() is not None:
        try:
            from numba.core.datamodel import default_manager

            theirs = default_manager[_numba_bridge.to_numba(_rs(t))].get_value_type()
        except Exception:
            return ours
        if _erased(theirs) == _erased(ours):
            return theirs
    return ours


def _erased(ty):
    """An LLVM type's structure with pointer types made one."""
    from llvmlite import ir

    if isinstance(ty, ir.PointerType):
        return "ptr"
    if isinstance(ty, ir.BaseStructType):
        return ("struct", tuple(_erased(e) for e in ty.elements))
    if isinstance(ty, ir.ArrayType):
        return ("array", ty.count, _erased(ty.element))
    return str(ty)


def _code(t):
    """A typecode from a typecode or any type object numba-rs reads."""
    if isinstance(t, int) and not isinstance(t, bool):
        return t
    from .types import _code as code

    return code(t)


def _rs(t):
    from .types import _from_code

    return _from_code(_code(t))


class _TypingContext:
    """What an intrinsic's typing function receives first (Numba's typing context): only
    what typing functions commonly use."""

    def unify_types(self, *tys):
        from .types import unliteral

        first = unliteral(_rs(tys[0]))
        return first if all(unliteral(_rs(t)) == first for t in tys) else None

    def __getattr__(self, name):
        raise NotImplementedError(
            f"numba-rs's typing context for intrinsics has no {name!r} (Numba's "
            "typing context internals are not bridged)"
        )


class CodegenContext:
    """The ``context`` an intrinsic's ``codegen`` receives."""

    typing_context = _TypingContext()

    def get_value_type(self, ty):
        return _ll(ty)

    # Code written against Numba takes references the way Numba's context does.
    enable_nrt = True

    @property
    def nrt(self):
        return _Refs()

    def get_model(self, ty):
        """Numba's data model of a type (``context.get_model``)."""
        return self.data_model_manager[ty]

    @property
    def data_model_manager(self):
        """Numba's data models (code written against Numba builds struct proxies with
        ``numba.core.cgutils``, which reads them); numba-rs's types are looked up as their
        Numba counterparts."""
        return _NumbaModels()

    def compile_internal(self, builder, impl, sig, args, locals=None):
        """Call the Python function ``impl`` compiled for ``sig`` (Numba's
        ``compile_internal``): it is compiled once per signature as a C-callable function
        (numbers in and out; an exception it raises is not propagated)."""
        from llvmlite import ir

        from . import types as rt

        arg_codes = tuple(_code(a) for a in sig.args)
        ret_code = _code(sig.return_type)
        key = (impl, arg_codes, ret_code)
        cf = _INTERNAL.get(key)
        if cf is None:
            from .cfunc import cfunc

            for c in (*arg_codes, ret_code):
                t = rt.unliteral(_rs(c))
                if not isinstance(t, (rt.Integer, rt.Float)) and t != rt.none:
                    raise NotImplementedError(
                        f"numba-rs's compile_internal takes integers and floats, not {t}"
                    )
            text = f"{rt.unliteral(_rs(ret_code))}({', '.join(str(rt.unliteral(_rs(c))) for c in arg_codes)})"
            cf = _INTERNAL[key] = cfunc(text, locals=locals or {})(impl)
        none = rt.unliteral(_rs(ret_code)) == rt.none
        fnty = ir.FunctionType(ir.VoidType() if none else _ll(ret_code), [_ll(c) for c in arg_codes])
        fptr = builder.inttoptr(ir.Constant(ir.IntType(64), cf.address), fnty.as_pointer())
        out = builder.call(fptr, list(args))
        return self.get_dummy_value() if none else out

    def get_python_api(self, builder):
        """CPython's C API for code run with the GIL held (Numba's ``get_python_api``)."""
        from ._pyapi import PythonAPI

        return PythonAPI(self, builder)

    def make_helper(self, builder, typ, value=None, ref=None):
        """A struct proxy over a ``StructModel`` value (Numba's ``make_helper``)."""
        nt = _numba_bridge.numba_types()
        if nt is not None and isinstance(typ, nt.Type) and not isinstance(typ, _numba_bridge.rt_type()):
            from numba.core import cgutils as ncg

            return ncg.create_struct_proxy(typ)(self, builder, value=value, ref=ref)
        from . import cgutils

        return cgutils.create_struct_proxy(typ)(self, builder, value=value, ref=ref)

    get_data_type = get_value_type

    def get_constant(self, ty, val):
        from llvmlite import ir

        return ir.Constant(_ll(ty), val)

    def get_constant_generic(self, builder, ty, val):
        return self.get_constant(ty, val)

    def get_dummy_value(self):
        """A null ``i8*``, as Numba's: the value of an opaque type's instance."""
        from llvmlite import ir

        return ir.Constant(ir.IntType(8).as_pointer(), None)

    def get_constant_null(self, ty):
        from llvmlite import ir

        return ir.Constant(_ll(ty), None)

    def make_tuple(self, builder, typ, values):
        from llvmlite import ir

        agg = ir.Constant(_ll(typ), ir.Undefined)
        for i, v in enumerate(values):
            agg = builder.insert_value(agg, v, i)
        return agg

    def cast(self, builder, val, fromty, toty):
        """Numbers between numba-rs's numeric types (ints, floats, bool)."""
        from llvmlite import ir

        from . import types as rt

        src, dst = rt.unliteral(_rs(fromty)), rt.unliteral(_rs(toty))
        if src == dst:
            return val
        target = _ll(dst)
        if isinstance(dst, rt.Boolean):
            zero = ir.Constant(val.type, 0)
            if isinstance(src, rt.Float):
                return builder.fcmp_unordered("!=", val, zero)
            return builder.icmp_unsigned("!=", val, zero)
        if isinstance(src, (rt.Integer, rt.Boolean)) and isinstance(dst, rt.Integer):
            sb, db = val.type.width, target.width
            if db < sb:
                return builder.trunc(val, target)
            if db == sb:
                return val
            signed = isinstance(src, rt.Integer) and src.signed
            return builder.sext(val, target) if signed else builder.zext(val, target)
        if isinstance(src, (rt.Integer, rt.Boolean)) and isinstance(dst, rt.Float):
            signed = isinstance(src, rt.Integer) and src.signed
            return builder.sitofp(val, target) if signed else builder.uitofp(val, target)
        if isinstance(src, rt.Float) and isinstance(dst, rt.Integer):
            return builder.fptosi(val, target) if dst.signed else builder.fptoui(val, target)
        if isinstance(src, rt.Float) and isinstance(dst, rt.Float):
            if src.bitwidth < dst.bitwidth:
                return builder.fpext(val, target)
            return builder.fptrunc(val, target)
        raise NotImplementedError(f"numba-rs's intrinsic context cannot cast {src} to {dst}")

    def __getattr__(self, name):
        raise NotImplementedError(
            f"numba-rs's intrinsic context has no {name!r}: Numba's lowering context "
            "internals (compile_internal, get_function, NRT and C-API helpers) are not "
            "bridged"
        )


class _Refs:
    """``context.nrt``: reference counting of values code written against Numba hands
    back (``impl_ret_borrowed`` and the like), through the runtime's ``NRT_incref`` /
    ``NRT_decref``."""

    def incref(self, builder, ty, value):
        self._walk(builder, ty, value, "NRT_incref")

    def decref(self, builder, ty, value):
        self._walk(builder, ty, value, "NRT_decref")

    def _walk(self, builder, ty, value, fname):
        from llvmlite import ir

        from . import types as rt

        t = rt.unliteral(_rs(ty))
        if isinstance(t, (rt.Number, rt.Boolean, rt.NoneType)):
            return
        if isinstance(t, rt.Array):
            voidptr = ir.IntType(8).as_pointer()
            fn = builder.module.globals.get(fname)
            if fn is None:
                fn = ir.Function(builder.module, ir.FunctionType(ir.VoidType(), [voidptr]), name=fname)
            mi = builder.extract_value(value, 0)
            builder.call(fn, [builder.bitcast(mi, voidptr)])
            return
        if isinstance(t, rt.BaseTuple):
            for i, item in enumerate(t.types):
                self._walk(builder, item, builder.extract_value(value, i), fname)
            return
        from ._usertypes import _MEMBERS

        members = _MEMBERS.get(t.typecode)
        if members is not None:  # a user's StructModel type
            for i, item in enumerate(members):
                self._walk(builder, item, builder.extract_value(value, i), fname)
            return
        if isinstance(t, rt.Opaque):
            return  # an opaque type holds nothing
        raise NotImplementedError(
            f"numba-rs's context.nrt counts references of numbers, arrays and tuples of "
            f"them, not {t}"
        )


class _NumbaModels:
    def __getitem__(self, t):
        nt = _numba_bridge.numba_types()
        if nt is None:
            raise KeyError(f"no data model for {t}: Numba's data models need Numba loaded")
        from numba.core.datamodel import default_manager

        if isinstance(t, _numba_bridge.rt_type()):
            t = _numba_bridge.to_numba(t)
        return default_manager[t]

    lookup = __getitem__


class Intrinsic:
    """An ``@intrinsic`` function: callable from jitted code only."""

    def __init__(self, defn, prefer_literal=False):
        self._defn = defn
        self._prefer_literal = prefer_literal
        self.__name__ = getattr(defn, "__name__", "intrinsic")
        self.__qualname__ = getattr(defn, "__qualname__", self.__name__)
        self.__doc__ = getattr(defn, "__doc__", None)
        self.__wrapped__ = defn
        self.__module__ = getattr(defn, "__module__", None)
        self._numba_rs_intrinsic = f"ext.{next(_COUNTER)}"
        self._numba_world = _numba_bridge.wants_numba_types(defn)
        # (argument typecodes) -> (return typecode, argument typecodes, codegen)
        self._typed = {}
        _BY_KEY["intrinsic." + self._numba_rs_intrinsic] = self

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(
            f"the intrinsic {self.__qualname__} can only be called from jitted code"
        )

    def __repr__(self):
        return f"<intrinsic {self.__qualname__}>"

    def __reduce__(self):
        return (_rebuild, (self._defn, self._prefer_literal))

    def parameters(self):
        """The call's parameter names (the typing function's, after the typing
        context)."""
        import inspect

        names = list(inspect.signature(self._defn).parameters)
        return names[1:]

    def type_for(self, codes):
        from .types import _from_code

        from .types import unliteral

        tys = [_from_code(c) for c in codes]
        plain = [unliteral(t) for t in tys]
        # As Numba: non-literal argument types first unless the intrinsic prefers
        # literals; the other kind when the first gives nothing.
        attempts = [tys, plain] if self._prefer_literal else [plain, tys]
        if attempts[0] == attempts[1]:
            attempts = attempts[:1]
        result, failure = None, None
        for attempt in attempts:
            args = [_numba_bridge.to_numba(t) for t in attempt] if self._numba_world else attempt
            try:
                result = self._defn(CodegenContext.typing_context, *args)
            except Exception as e:  # ours or Numba's TypingError, or the code's bug
                failure = e
                continue
            if result is not None:
                break
        if result is None:
            if failure is not None:
                raise failure
            return None
        sig, codegen = result
        ret = _code(sig.return_type)
        sig_args = [_code(a) for a in sig.args]
        if len(sig_args) != len(codes):
            raise TypingError(
                f"the intrinsic {self.__qualname__} returned a signature of "
                f"{len(sig_args)} arguments for a call with {len(codes)}"
            )
        self._typed[tuple(sig_args)] = (ret, sig_args, codegen, sig)
        return ret, sig_args

    def codegen_for(self, codes, ret):
        from llvmlite import ir

        entry = self._typed.get(tuple(codes))
        if entry is None:
            raise TypingError(f"the intrinsic {self.__qualname__} was not typed for {codes}")
        _, _, codegen, sig = entry
        from . import types as rt

        symbol = f"numba_rs_intrinsic_{self._numba_rs_intrinsic.replace('.', '_')}_" + "_".join(
            str(c) for c in [ret, *codes]
        )
        module = ir.Module(name=symbol)
        none = rt.unliteral(_rs(ret)) == rt.none
        fnty = ir.FunctionType(ir.VoidType() if none else _ll(ret), [_ll(c) for c in codes])
        fn = ir.Function(module, fnty, name=symbol)
        builder = ir.IRBuilder(fn.append_basic_block("entry"))
        value = codegen(CodegenContext(), builder, sig, list(fn.args))
        if value is None and not none and not builder.block.is_terminated:
            from .errors import LoweringError

            raise LoweringError(
                f"the intrinsic {self.__qualname__}: non-void function returns None from "
                "implementation"
            )
        if not builder.block.is_terminated:
            if none:
                builder.ret_void()
            else:
                builder.ret(value)
        return symbol, str(module)


def _rebuild(defn, prefer_literal):
    return Intrinsic(defn, prefer_literal)


def type_intrinsic(key, codes):
    return _BY_KEY[key].type_for(codes)


def intrinsic_parameters(key):
    return _BY_KEY[key].parameters()


def codegen_intrinsic(key, codes, ret):
    return _BY_KEY[key].codegen_for(codes, ret)
