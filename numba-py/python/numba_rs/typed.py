"""Typed containers shared with compiled code (Numba's ``numba.typed``).

``List`` is the same, for a list of one item type.

``Dict`` holds keys of one type and values of one type in a native hash table that
compiled code uses in place: passing a ``Dict`` to a jitted function passes the table
itself (changes made on either side are seen on the other), and a dict a jitted function
returns comes back as a ``Dict``. Its methods run the table's native operations directly.
"""

from collections.abc import (
    ItemsView,
    Iterable,
    KeysView,
    Mapping,
    MutableMapping,
    MutableSequence,
    ValuesView,
)

from . import types as _types
from ._numba_rs import _DictBase, _ListBase
from .errors import TypingError

__all__ = ["Dict", "List"]


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


class List(_ListBase):
    """A typed list: ``List()`` (typed by its first item), ``List(iterable)`` or
    ``List.empty_list(item_type)``."""

    __hash__ = None

    def __init__(self, *args):
        if len(args) > 1:
            raise TypingError(f"List() expected at most 1 argument, got {len(args)}")
        if args:
            src = args[0]
            if not isinstance(src, Iterable):
                raise TypingError(f"List() argument must be iterable, got {type(src).__name__}")
            for x in src:
                self.append(x)

    @classmethod
    def empty_list(cls, item_type, allocated=0):
        """An empty list of ``item_type`` with room for ``allocated`` items."""
        lst = cls()
        lst._init_type(_types._code(item_type), int(allocated))
        return lst

    @property
    def _typed(self):
        """Whether the list has its item type yet."""
        return self._typecode is not None

    @property
    def _list_type(self):
        code = self._typecode
        return None if code is None else _types._from_code(code)

    @property
    def _numba_type_(self):
        t = self._list_type
        if t is None:
            raise TypeError("an empty typed.List has no type yet")
        return t

    @property
    def _dtype(self):
        t = self._list_type
        if t is None:
            raise RuntimeError("invalid operation on untyped list")
        return t.item_type

    def _like(self, items):
        new = type(self)()
        if self._typed:
            new._init_type(self._typecode_item(), len(items))
        for x in items:
            new.append(x)
        return new

    def _typecode_item(self):
        return self._list_type.item_type.typecode

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self._like([self._getitem(j) for j in range(*i.indices(len(self)))])
        return self._getitem(i.__index__())

    def __setitem__(self, i, value):
        if isinstance(i, slice):
            items = list(self)
            items[i] = list(value)
            self._replace(items)
            return
        self._setitem(i.__index__(), value)

    def __delitem__(self, i):
        if isinstance(i, slice):
            items = list(self)
            del items[i]
            self._replace(items)
            return
        self._pop(i.__index__())

    def _replace(self, items):
        self.clear()
        for x in items:
            self.append(x)

    def __iter__(self):
        n = len(self)
        for i in range(n):
            if len(self) != n:
                raise RuntimeError("list was mutated during iteration")
            yield self._getitem(i)

    def __reversed__(self):
        for i in range(len(self) - 1, -1, -1):
            yield self._getitem(i)

    def __contains__(self, x):
        return any(y == x for y in self)

    def extend(self, iterable):
        if iterable is self:
            iterable = list(iterable)
        for x in iterable:
            self.append(x)

    def insert(self, i, x):
        self._insert(i.__index__(), x)

    def pop(self, i=-1):
        return self._pop(i.__index__())

    def remove(self, x):
        del self[self.index(x)]

    def index(self, x, start=0, stop=None):
        items = list(self)
        return items.index(x, start, len(items) if stop is None else stop)

    def count(self, x):
        return sum(1 for y in self if y == x)

    def reverse(self):
        self._replace(list(self)[::-1])

    def sort(self, key=None, reverse=False):
        self._replace(sorted(self, key=key, reverse=reverse))

    def copy(self):
        return self._like(list(self))

    def __add__(self, other):
        new = self.copy()
        new.extend(other)
        return new

    def __iadd__(self, other):
        self.extend(other)
        return self

    def __mul__(self, n):
        return self._like(list(self) * n)

    def _cmp_items(self, other):
        if isinstance(other, (List, list, tuple)) or isinstance(other, MutableSequence):
            return list(self), list(other)
        return None

    def __eq__(self, other):
        pair = self._cmp_items(other)
        return NotImplemented if pair is None else pair[0] == pair[1]

    def __ne__(self, other):
        pair = self._cmp_items(other)
        return NotImplemented if pair is None else pair[0] != pair[1]

    def __lt__(self, other):
        pair = self._cmp_items(other)
        return NotImplemented if pair is None else pair[0] < pair[1]

    def __le__(self, other):
        pair = self._cmp_items(other)
        return NotImplemented if pair is None else pair[0] <= pair[1]

    def __gt__(self, other):
        pair = self._cmp_items(other)
        return NotImplemented if pair is None else pair[0] > pair[1]

    def __ge__(self, other):
        pair = self._cmp_items(other)
        return NotImplemented if pair is None else pair[0] >= pair[1]

    def __str__(self):
        return "[" + ", ".join(f"{x}" for x in self) + "]"

    def __repr__(self):
        t = self._list_type
        return f"{t if t is not None else 'ListType[Undefined]'}({self})"

    def __reduce__(self):
        t = self._list_type
        if t is None:
            return (type(self), ())
        return (_rebuild_list, (type(self), t.item_type, list(self)))


def _rebuild_list(cls, item_type, items):
    lst = cls.empty_list(item_type, len(items))
    for x in items:
        lst.append(x)
    return lst


MutableSequence.register(List)
