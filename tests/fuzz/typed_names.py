"""The names programs use for typed containers: `List`, `Dict`, `types`, `typed_dict`.

Under numba_rs and Numba they are the compiler's own `typed.List`, `typed.Dict` and
`types`; under CPython they are the plain stand-ins below (a list, a dict), so that the
reference result does not go through numba_rs's typed containers at all. `typed_dict`
builds a typed dict argument from (key, value) pairs (Numba's `Dict` takes no mapping).
"""

PY_SOURCE = '''\
class List(list):
    """CPython's stand-in for a typed List."""

    @staticmethod
    def empty_list(item_type, allocated=0):
        return List()


class Dict(dict):
    """CPython's stand-in for a typed Dict."""

    @staticmethod
    def empty(key_type, value_type):
        return Dict()


class types:
    int64, float64, unicode_type, boolean = "int64", "float64", "unicode_type", "boolean"


def typed_dict(items):
    d = Dict()
    for k, v in items:
        d[k] = v
    return d
'''

NAMES = ("List", "Dict", "types", "typed_dict")


def python_names():
    ns = {}
    exec(PY_SOURCE, ns)
    return {n: ns[n] for n in NAMES}


def jit_names(module):
    """The names for numba_rs or numba (`module`)."""
    import importlib
    typed = importlib.import_module(module.__name__ + ".typed")
    Dict = typed.Dict

    def typed_dict(items):
        d = Dict()
        for k, v in items:
            d[k] = v
        return d

    return {"List": typed.List, "Dict": Dict, "types": module.types, "typed_dict": typed_dict}


def uses_typed(prog):
    text = prog["source"] + prog["args"]
    return any(n in text for n in ("List", "Dict", "typed_dict", "types."))
