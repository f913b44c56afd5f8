"""What an ``inline=`` cost model receives (``@njit(inline=cost_model)``).

Numba calls a jitted function's cost model as ``cost_model(expr, caller_ir, callee_ir)``
with its own IR objects, before typing, for each call site of the function; a true
result inlines the call. numba-rs passes the same three arguments as plain objects that
carry the parts of Numba's a cost model reads:

- ``expr``: the call (``op == 'call'``, ``func``, ``args`` and ``kws`` as variable names,
  ``target``, ``loc.line``);
- ``caller_ir`` / ``callee_ir``: the functions' untyped IR (``blocks``: label to
  ``Block`` with ``body``, a list of statements as Numba prints them; ``arg_names``,
  ``arg_count``, ``func_id.func_name`` / ``func_qualname`` / ``filename``,
  ``loc.line``, ``dump()``).
"""


class Loc:
    def __init__(self, filename, line):
        self.filename = filename
        self.line = line

    def __repr__(self):
        return f"Loc(filename={self.filename}, line={self.line})"


class CallExpr:
    """A call site: ``target = call func(*args, **kws)``."""

    op = "call"

    def __init__(self, func, args, kws, target, line):
        self.func = func
        self.args = list(args)
        self.kws = list(kws)
        self.target = target
        self.loc = Loc(None, line)

    def __repr__(self):
        items = [*self.args, *(f"{k}={v}" for k, v in self.kws)]
        return f"call {self.func}({', '.join(items)})"


class Block:
    def __init__(self, body):
        self.body = list(body)

    def __repr__(self):
        return f"<Block of {len(self.body)} statements>"


class FuncId:
    def __init__(self, name, qualname, filename, line):
        self.func_name = name
        self.func_qualname = qualname
        self.filename = filename
        self.firstlineno = line


class FunctionIR:
    """A function's untyped IR as a cost model sees it."""

    def __init__(self, blocks, arg_names, name, qualname, filename, line, text):
        self.blocks = {label: Block(body) for label, body in blocks.items()}
        self.arg_names = tuple(arg_names)
        self.arg_count = len(self.arg_names)
        self.func_id = FuncId(name, qualname, filename, line)
        self.loc = Loc(filename, line)
        self._text = text

    def dump(self, file=None):
        print(self._text, end="", file=file)

    def __repr__(self):
        return f"<FunctionIR of {self.func_id.func_qualname}: {len(self.blocks)} blocks>"
