"""What a call did, as plain data, and when two of them agree.

`outcome()` turns a call's result (or exception) and its arguments afterwards into
plain Python data: typed containers become dicts and lists, NumPy scalars become
('np', value) so that their width does not count (NumPy's scalar typing is not Numba's),
arrays become ('array', shape, values, is_float32). `same()` compares two of them:
floats with math.isclose(rel_tol=1e-9, abs_tol=1e-12) (1e-5 where float32 is involved),
NaN equal to NaN, sets as sets, dicts in their order.
"""

import cmath
import math

import numpy as np

REL, ABS, REL32 = 1e-9, 1e-12, 1e-5


def plain(v):
    """`v` as plain data (see the module docstring)."""
    if isinstance(v, np.ndarray):
        vals = [plain(x) for x in v.ravel().tolist()]
        return ("array", v.shape, vals, v.dtype == np.float32)
    if isinstance(v, np.generic):
        return ("np", v.item(), isinstance(v, np.float32))
    if isinstance(v, (bool, int, float, complex, str)) or v is None:
        return v
    if isinstance(v, tuple):
        return tuple(plain(x) for x in v)
    if isinstance(v, (set, frozenset)):
        return ("set", sorted(plain(x) for x in v))
    if hasattr(v, "items"):  # dict, numba_rs.typed.Dict
        return ("dict", [(plain(k), plain(x)) for k, x in v.items()])
    if isinstance(v, list) or hasattr(v, "__len__") and hasattr(v, "append"):
        return [plain(x) for x in v]
    return ("object", type(v).__name__, repr(v)[:200])


def outcome(call, args, generator=False, refusals=()):
    """Run call(*args): ('ok', result, args after), ('raise', type name, message, args
    after), or ('refused', type name, message) for a compile error (one of `refusals`)."""
    try:
        r = call(*args)
        if generator:
            r = list(r)
        return ("ok", plain(r), plain(tuple(args)))
    except refusals as e:
        return ("refused", type(e).__name__, str(e)[:2000])
    except Exception as e:  # noqa: BLE001 (every exception is part of the outcome)
        return ("raise", type(e).__name__, str(e), plain(tuple(args)))


def same(a, b, loose32=False):
    """Do plain values `a` and `b` agree (see the module docstring)?"""
    if isinstance(a, tuple) and a[:1] == ("np",) and len(a) == 3:
        return _num(a[1], _scalar(b), loose32 or a[2])
    if isinstance(b, tuple) and b[:1] == ("np",) and len(b) == 3:
        return _num(_scalar(a), b[1], loose32 or b[2])
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float, complex)) and isinstance(b, (int, float, complex)):
        return type(a) is type(b) and _num(a, b, loose32)
    if isinstance(a, tuple) and isinstance(b, tuple):
        if a[:1] == ("array",) and b[:1] == ("array",):
            return a[1] == b[1] and same(a[2], b[2], loose32 or a[3] or b[3])
        return len(a) == len(b) and all(same(x, y, loose32) for x, y in zip(a, b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y, loose32) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _scalar(v):
    """A plain value standing for a NumPy scalar (an array of one element does not)."""
    if isinstance(v, tuple) and v[:1] == ("np",):
        return v[1]
    return v


def _num(x, y, loose32):
    if not all(isinstance(v, (bool, int, float, complex)) for v in (x, y)):
        return False
    if isinstance(x, int) and isinstance(y, int):
        return x == y
    x, y = complex(x), complex(y)
    if cmath.isnan(x) or cmath.isnan(y):
        return cmath.isnan(x) and cmath.isnan(y)
    rel = REL32 if loose32 else REL
    return (math.isclose(x.real, y.real, rel_tol=rel, abs_tol=ABS)
            and math.isclose(x.imag, y.imag, rel_tol=rel, abs_tol=ABS))


def float_only(a, b):
    """Do plain values `a` and `b` differ in floating-point numbers only?"""
    if isinstance(a, (float, complex)) and isinstance(b, (float, complex)):
        return True
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return (type(a) is type(b) and len(a) == len(b)
                and all(same(x, y) or float_only(x, y) for x, y in zip(a, b)))
    return same(a, b)


def agree(a, b):
    """Do two outcomes agree: same result and arguments, or same exception and message?"""
    return a[0] == b[0] and same(list(a[1:]), list(b[1:]))


def drift(py, rs, nb):
    """Do CPython, numba_rs and Numba all disagree, in floats only? Chaotic float
    computations (a loop feeding a result back) amplify last-bit differences between
    NumPy's and a compiled loop's summation order; a real bug makes Numba agree with
    CPython."""
    return (py[0] == rs[0] == nb[0] and not agree(py, nb)
            and float_only(list(py[1:]), list(rs[1:])) and float_only(list(py[1:]), list(nb[1:])))
