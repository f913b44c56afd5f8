"""numba-rs's IR as Python objects: what ``inline=`` cost models and
``metadata['preserved_ir']`` read.

When Numba is loaded (a program written against ``numba.core.ir``), the objects are
Numba's own IR classes (``ir.Assign``, ``ir.Expr``, ``ir.Global``, ``ir.FunctionIR``,
...), so ``isinstance`` checks, ``FunctionIR.get_definition`` and Numba's
``ir_utils`` (``simplify_CFG``, ``find_callname``) work on them. Otherwise they are the
look-alikes below: the same class names, fields and helpers (``Block.find_exprs``,
``FunctionIR.get_definition``, ``dump()``).

A cost model of ``@njit(inline=...)`` is called as ``cost_model(expr, caller_ir,
callee_ir)`` before typing; one of ``@overload(..., inline=...)`` as ``cost_model(expr,
caller_info, callee_info)`` after typing, each info with ``func_ir``, ``typemap``
(variable name to type), ``calltypes`` (empty: numba-rs keeps call signatures to itself)
and ``signature``. ``rhs`` of a statement numba-rs defines itself (an array expression,
a parfor) is an :class:`Extension` of either kind.
"""

import builtins
import collections
import operator
import sys


# -- look-alikes of Numba's IR classes (used when Numba is not loaded) -------------------


class Loc:
    def __init__(self, filename, line, col=None, maybe_decorator=False):
        self.filename = filename
        self.line = line
        self.col = col

    def __repr__(self):
        return f"Loc(filename={self.filename}, line={self.line}, col={self.col})"


class Scope:
    def __init__(self, parent, loc):
        self.parent = parent
        self.loc = loc


def _vars_in(values):
    """The variables among `values`, in lists, tuples and nested nodes too."""
    found = []

    def walk(v):
        if isinstance(v, Var):
            found.append(v)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif isinstance(v, (Expr, _Node)):
            found.extend(v.list_vars())

    for v in values:
        walk(v)
    return found


class _Node:
    """Fields set from the constructor's arguments, compared by value (as Numba's)."""

    _fields = ()

    def __init__(self, *args):
        *values, loc = args
        for name, value in zip(self._fields, values):
            setattr(self, name, value)
        self.loc = loc

    def __eq__(self, other):
        return type(self) is type(other) and all(
            getattr(self, f) == getattr(other, f) for f in self._fields
        )

    def __hash__(self):
        return id(self)

    def list_vars(self):
        return _vars_in(getattr(self, f) for f in self._fields)


class Var(_Node):
    _fields = ("scope", "name")

    def __eq__(self, other):
        return isinstance(other, Var) and self.name == other.name

    def __hash__(self):
        return hash(self.name)

    def __str__(self):
        return self.name

    __repr__ = __str__

    def list_vars(self):
        return [self]


def _node(name, fields, text):
    cls = type(name, (_Node,), {"_fields": fields, "__str__": text, "__repr__": text})
    return cls


Const = _node("Const", ("value",), lambda s: f"const({type(s.value).__name__}, {s.value!r})")
Global = _node("Global", ("name", "value"), lambda s: f"global({s.name}: {s.value!r})")
FreeVar = _node("FreeVar", ("index", "name", "value"),
                lambda s: f"freevar({s.name}: {s.value!r})")
Arg = _node("Arg", ("name", "index"), lambda s: f"arg({s.index}, name={s.name})")
Yield = _node("Yield", ("value", "index"), lambda s: f"yield {s.value}")
Assign = _node("Assign", ("value", "target"), lambda s: f"{s.target} = {s.value}")
SetItem = _node("SetItem", ("target", "index", "value"),
                lambda s: f"{s.target}[{s.index}] = {s.value}")
StaticSetItem = _node("StaticSetItem", ("target", "index", "index_var", "value"),
                      lambda s: f"{s.target}[{s.index!r}] = {s.value}")
SetAttr = _node("SetAttr", ("target", "attr", "value"),
                lambda s: f"({s.target}).{s.attr} = {s.value}")
DelItem = _node("DelItem", ("target", "index"), lambda s: f"del {s.target}[{s.index}]")
DelAttr = _node("DelAttr", ("target", "attr"), lambda s: f"del ({s.target}).{s.attr}")
Del = _node("Del", ("value",), lambda s: f"del {s.value}")
Raise = _node("Raise", ("exception",), lambda s: f"raise {s.exception}")
TryRaise = _node("TryRaise", ("exception",), lambda s: f"try_raise {s.exception}")
StaticRaise = _node("StaticRaise", ("exc_class", "exc_args"),
                    lambda s: f"raise {s.exc_class}{s.exc_args or ''}")
StaticTryRaise = _node("StaticTryRaise", ("exc_class", "exc_args"),
                       lambda s: f"static_try_raise {s.exc_class}{s.exc_args or ''}")
DynamicRaise = _node("DynamicRaise", ("exc_class", "exc_args"),
                     lambda s: f"raise {s.exc_class}{s.exc_args}")
DynamicTryRaise = _node("DynamicTryRaise", ("exc_class", "exc_args"),
                        lambda s: f"dynamic_try_raise {s.exc_class}{s.exc_args}")
Print = _node("Print", ("args", "vararg"), lambda s: f"print({', '.join(map(str, s.args))})")
StoreMap = _node("StoreMap", ("dct", "key", "value"),
                 lambda s: f"{s.dct}[{s.key}] = {s.value}")
EnterWith = _node("EnterWith", ("contextmanager", "begin", "end"),
                  lambda s: f"enter_with({s.contextmanager})")
PopBlock = _node("PopBlock", (), lambda s: "pop_block")
Return = _node("Return", ("value",), lambda s: f"return {s.value}")
Jump = _node("Jump", ("target",), lambda s: f"jump {s.target}")
Branch = _node("Branch", ("cond", "truebr", "falsebr"),
               lambda s: f"branch {s.cond}, {s.truebr}, {s.falsebr}")

for _cls in (Return, Jump, Branch, Raise, StaticRaise, DynamicRaise):
    _cls.is_terminator = True
Jump.get_targets = lambda s: [s.target]
Branch.get_targets = lambda s: [s.truebr, s.falsebr]
for _cls in (Return, Raise, StaticRaise, DynamicRaise):
    _cls.get_targets = lambda s: []


class Expr:
    """An expression: ``op`` and its fields as attributes (Numba's ``ir.Expr``)."""

    is_terminator = False

    def __init__(self, op, loc, **kws):
        self.op = op
        self.loc = loc
        self._kws = kws

    def __getattr__(self, name):
        kws = self.__dict__.get("_kws", {})
        if name in kws:
            return kws[name]
        raise AttributeError(name)

    def list_vars(self):
        return _vars_in(self._kws.values())

    def __str__(self):
        fields = ", ".join(f"{k}={v}" for k, v in self._kws.items())
        return f"{self.op}({fields})"

    __repr__ = __str__


class Extension:
    """A statement or expression numba-rs defines itself (an array expression, a
    parfor): its ``kind`` and the variables it reads."""

    is_terminator = False

    def __init__(self, kind, operands, loc):
        self.kind = kind
        self.op = kind
        self.operands = list(operands)
        self.loc = loc

    def list_vars(self):
        return list(self.operands)

    def __repr__(self):
        return f"{self.kind}({', '.join(map(str, self.operands))})"


class Block:
    def __init__(self, scope, loc):
        self.scope = scope
        self.loc = loc
        self.body = []

    def append(self, inst):
        self.body.append(inst)

    @property
    def terminator(self):
        return self.body[-1]

    @property
    def is_terminated(self):
        return bool(self.body) and getattr(self.body[-1], "is_terminator", False)

    def find_exprs(self, op=None):
        for inst in self.find_insts(Assign):
            if isinstance(inst.value, Expr) and (op is None or inst.value.op == op):
                yield inst.value

    def find_insts(self, cls=None):
        for inst in self.body:
            if cls is None or isinstance(inst, cls):
                yield inst

    def __repr__(self):
        return f"<Block of {len(self.body)} statements>"


class FuncId:
    def __init__(self, func, name, qualname, filename, line):
        self.func = func
        self.func_name = name
        self.func_qualname = qualname
        self.filename = filename
        self.firstlineno = line


class FunctionIR:
    """A function's IR: ``blocks`` (label to :class:`Block`), ``arg_names``,
    ``arg_count``, ``func_id``, ``get_definition`` and ``dump()``."""

    def __init__(self, blocks, is_generator, func_id, loc, definitions, arg_count,
                 arg_names):
        self.blocks = blocks
        self.is_generator = is_generator
        self.func_id = func_id
        self.loc = loc
        self._definitions = definitions
        self.arg_count = arg_count
        self.arg_names = arg_names

    def get_definition(self, value, lhs_only=False):
        lhs = value
        while True:
            if isinstance(value, (Var, str)):
                lhs = value
                name = value if isinstance(value, str) else value.name
            else:
                return lhs if lhs_only else value
            defs = self._definitions[name]
            if len(defs) != 1:
                raise KeyError(f"{len(defs)} definitions for {name!r}")
            value = defs[0]

    def dump(self, file=None):
        print(self._text, end="", file=file or sys.stdout)

    def __repr__(self):
        return f"<FunctionIR of {self.func_id.func_qualname}: {len(self.blocks)} blocks>"


class _LookAlikes:
    """This module as the class namespace the builder uses without Numba."""

    def __getattr__(self, name):
        return globals()[name]


def _classes():
    """Numba's ``numba.core.ir`` when Numba is loaded, the look-alikes otherwise."""
    if "numba" in sys.modules:
        try:
            from numba.core import ir

            return ir, True
        except ImportError:  # pragma: no cover - a broken Numba install
            pass
    return _LookAlikes(), False


# -- the builder numba-py drives ---------------------------------------------------------

_UNDEFINED = object()


class IRBuilder:
    """Builds one function's IR from numba-py's walk over numba-rs's IR. ``func`` is
    the Python function (for globals, closure values and ``func_id``); it may be
    None."""

    def __init__(self, func, name, qualname, filename, firstline):
        self.ir, self.numba = _classes()
        self.func = func
        self.filename = filename
        self.loc0 = self.ir.Loc(filename, firstline)
        self.scope = self.ir.Scope(None, self.loc0)
        self.name, self.qualname, self.firstline = name, qualname, firstline
        self.defs = collections.defaultdict(list)
        self._locs = {}
        self._vars = {}
        self.undefined = self.ir.UNDEFINED if self.numba else _UNDEFINED

    def loc(self, line):
        loc = self._locs.get(line)
        if loc is None:
            loc = self._locs[line] = self.ir.Loc(self.filename, line)
        return loc

    def var(self, name, line):
        return self.ir.Var(self.scope, name, self.loc(line))

    # values

    def const(self, value, line):
        return self.ir.Const(value, self.loc(line))

    def glob(self, name, line, known=None):
        value = known[0] if known else self._global_value(name)
        return self.ir.Global(name, value, self.loc(line))

    def freevar(self, index, name, line, known=None):
        value = known[0] if known else self._freevar_value(index, name)
        return self.ir.FreeVar(index, name, value, self.loc(line))

    def arg(self, index, name, line):
        return self.ir.Arg(name, index, self.loc(line))

    def expr(self, op, line, kws):
        for key in ("fn", "immutable_fn"):
            if isinstance(kws.get(key), str):
                kws[key] = getattr(operator, kws[key])
        if op in ("binop", "inplace_binop"):
            kws.setdefault("static_lhs", self.undefined)
            kws.setdefault("static_rhs", self.undefined)
        if op == "phi":
            kws["incoming_values"] = [
                self.undefined if v is None else v for v in kws["incoming_values"]
            ]
        return self.ir.Expr(op, self.loc(line), **kws)

    def yield_(self, value, index, line):
        return self.ir.Yield(value, self.loc(line), index)

    def extension(self, kind, operands, line):
        return Extension(kind, operands, self.loc(line))

    # statements

    def stmt(self, kind, line, *fields):
        loc = self.loc(line)
        if kind == "Assign":
            value, target = fields
            self.defs[target.name].append(value)
        elif kind in ("StaticRaise", "StaticTryRaise", "DynamicRaise", "DynamicTryRaise"):
            fields = (self._exception_class(fields[0]), fields[1])
        elif kind == "Extension":
            return Extension(fields[0], fields[1], loc)
        return getattr(self.ir, kind)(*fields, loc)

    def block(self, stmts, line):
        block = self.ir.Block(self.scope, self.loc(line))
        block.body.extend(stmts)
        return block

    def finish(self, blocks, arg_names, is_generator, text):
        func_id = self._func_id()
        fir = self.ir.FunctionIR(
            blocks, is_generator, func_id, self.loc0, self.defs, len(arg_names),
            tuple(arg_names),
        )
        if not self.numba:
            fir._text = text
        return fir

    # values of names

    def _global_value(self, name):
        g = getattr(self.func, "__globals__", None) or {}
        if name in g:
            return g[name]
        return getattr(builtins, name, None)

    def _freevar_value(self, index, name):
        code = getattr(self.func, "__code__", None)
        closure = getattr(self.func, "__closure__", None) or ()
        names = code.co_freevars if code is not None else ()
        if name in names and names.index(name) < len(closure):
            try:
                return closure[names.index(name)].cell_contents
            except ValueError:  # an empty cell
                return None
        return None

    def _exception_class(self, text):
        # numba-rs records the class as its repr (``<class 'ValueError'>``).
        if text is None:
            return None
        name = text.split("'")[1] if "'" in text else text
        short = name.rsplit(".", 1)[-1]
        return getattr(builtins, short, None) or self._global_value(short) or name

    def _func_id(self):
        if self.numba and self.func is not None:
            try:
                from numba.core.bytecode import FunctionIdentity

                return FunctionIdentity.from_function(self.func)
            except Exception:  # not a plain Python function
                pass
        return FuncId(self.func, self.name, self.qualname, self.filename, self.firstline)


class InlineInfo:
    """What an overload's cost model gets for the caller and the callee (Numba's
    ``_inline_info``): ``func_ir``, ``typemap``, ``calltypes`` and ``signature``."""

    def __init__(self, func_ir, typemap, calltypes, signature):
        self.func_ir = func_ir
        self.typemap = typemap
        self.calltypes = calltypes
        self.signature = signature
