"""Typed containers shared with compiled code (Numba's ``numba.typed``).

``Dict`` holds keys of one type and values of one type in a native hash table that
compiled code uses in place: passing a ``Dict`` to a jitted function passes the table
itself (changes made on either side are seen on the other), and a dict a jitted function
returns comes back as a ``Dict``. Its methods run the table's native operations directly.
"""

from collections.abc import ItemsView, Iterable, KeysView, Mapping, MutableMapping, ValuesView

from . import types as _types
from ._numba_rs import _DictBase
from .errors import TypingError

__all__ = ["Dict"]


class Dict(_DictBase):
    """A typed dict: ``Dict()`` (typed by its first item), ``Dict(mapping_or_pairs,
    **kwargs)``, or ``Dict.empty(key_type, value_type)``."""

    __hash__ = None

    def __init__(self, *args, **kwargs):
        if len(args) > 1:
            raise TypingError(f"Dict expect at most 1 argument, got {len(args)}")
        if args:
            src = args[0]
            if not isinstance(src, (Mapping, Iterable)):
                raise TypingError(f"'{type(src).__name__}' object is not iterable")
            if isinstance(src, Mapping):
                self.update(src)
            else:
                for i, pair in enumerate(src):
                    pair = tuple(pair)
                    if len(pair) != 2:
                        raise ValueError(
                            f"dictionary update sequence element #{i} has length "
                            f"{len(pair)}; 2 is required"
                        )
                    self[pair[0]] = pair[1]
        if kwargs:
            self.update(kwargs)

    @classmethod
    def empty(cls, key_type, value_type, n_keys=0):
        """An empty dict of these key and value types, with room for ``n_keys``."""
        d = cls()
        d._init_type(_types._code(key_type), _types._code(value_type), int(n_keys))
        return d

    @property
    def _dict_type(self):
        code = self._typecode
        return None if code is None else _types._from_code(code)

    @property
    def _numba_type_(self):
        t = self._dict_type
        if t is None:
            raise TypeError("an empty typed.Dict has no type yet")
        return t

    @property
    def _typed(self):
        """Whether the dict has its key and value types yet."""
        return self._typecode is not None

    def __iter__(self):
        n = len(self)
        pos = 0
        while True:
            nxt = self._next_key(pos)
            if nxt is None:
                return
            if len(self) != n:
                raise RuntimeError("dictionary changed size during iteration")
            pos, key = nxt
            yield key

    def keys(self):
        return KeysView(self)

    def values(self):
        return ValuesView(self)

    def items(self):
        return ItemsView(self)

    def update(self, other=(), /, **kwargs):
        if isinstance(other, Mapping):
            for k in list(other.keys()):
                self[k] = other[k]
        elif hasattr(other, "keys"):
            for k in other.keys():
                self[k] = other[k]
        else:
            for pair in other:
                k, v = pair
                self[k] = v
        for k, v in kwargs.items():
            self[k] = v

    def copy(self):
        new = type(self)()
        self._copy_into(new)
        return new

    def __eq__(self, other):
        if not isinstance(other, Mapping):
            return NotImplemented
        if len(self) != len(other):
            return False
        for k, v in self.items_list():
            try:
                if other[k] != v:
                    return False
            except KeyError:
                return False
        return True

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __str__(self):
        return "{" + ", ".join(f"{k}: {v}" for k, v in self.items_list()) + "}"

    def __repr__(self):
        t = self._dict_type
        return f"{t if t is not None else 'DictType[undefined,undefined]<iv=None>'}({self})"

    def __reduce__(self):
        t = self._dict_type
        if t is None:
            return (type(self), ())
        return (_rebuild, (type(self), t.key_type, t.value_type, self.items_list()))


def _rebuild(cls, key_type, value_type, items):
    d = cls.empty(key_type, value_type, len(items))
    for k, v in items:
        d[k] = v
    return d


MutableMapping.register(Dict)
