"""`numba_rs.typed.List` (`ListType[T]`) from Python and in compiled code, against a
Python list driven the same way (the oracle). NRT counts balance after every test."""

import pickle
import random

import numpy as np
import pytest

import numba_rs
from numba_rs import njit, types
from numba_rs.errors import TypingError
from numba_rs.typed import Dict, List


def test_python_api_matches_list():
    r = random.Random(3)
    tl = List.empty_list(types.int64)
    ref = []
    for i in range(400):
        op = r.random()
        if op < 0.4:
            tl.append(i)
            ref.append(i)
        elif op < 0.5 and ref:
            j = r.randrange(-len(ref), len(ref))
            assert tl.pop(j) == ref.pop(j)
        elif op < 0.6:
            j = r.randrange(-5, len(ref) + 5)
            tl.insert(j, -i)
            ref.insert(j, -i)
        elif op < 0.7 and ref:
            j = r.randrange(len(ref))
            tl[j] = i * 3
            ref[j] = i * 3
        elif op < 0.8:
            a, b = sorted(r.randrange(len(ref) + 1) for _ in range(2))
            assert list(tl[a:b]) == ref[a:b]
        else:
            x = r.randrange(50)
            assert (x in tl) == (x in ref)
            assert tl.count(x) == ref.count(x)
    assert list(tl) == ref
    assert len(tl) == len(ref)
    assert tl == ref
    tl.sort()
    ref.sort()
    assert list(tl) == ref
    tl.reverse()
    ref.reverse()
    assert list(tl) == ref
    del tl[2:10]
    del ref[2:10]
    assert list(tl) == ref
    with pytest.raises(IndexError):
        tl[len(ref)]
    with pytest.raises(IndexError):
        List.empty_list(types.int64).pop()


def test_repr_str_type_and_pickle():
    tl = List([1.5, 2.5])
    assert repr(tl) == "ListType[float64]([1.5, 2.5])"
    assert str(tl) == "[1.5, 2.5]"
    assert numba_rs.typeof(tl) == types.ListType(types.float64)
    assert tl._typed and not List()._typed
    back = pickle.loads(pickle.dumps(tl))
    assert back == tl and back._list_type == tl._list_type
    with pytest.raises(TypingError):
        tl.append("x")


def test_shared_by_reference_with_compiled_code():
    tl = List.empty_list(types.unicode_type)
    tl.append("a")

    @njit
    def grow(lst, n):
        for i in range(n):
            lst.append(str(i))
        return len(lst)

    assert grow(tl, 3) == 4
    assert list(tl) == ["a", "0", "1", "2"]
    tl[0] = "z"

    @njit
    def first(lst):
        return lst[0]

    assert first(tl) == "z"


def test_made_in_compiled_code_returned_as_typed_list():
    @njit
    def make(n):
        a = List()
        for i in range(n):
            a.append(i * i)
        b = List.empty_list(types.float64)
        b.append(0.5)
        return a, b

    a, b = make(5)
    assert isinstance(a, List) and isinstance(b, List)
    assert list(a) == [i * i for i in range(5)] and list(b) == [0.5]
    assert a._refcount() == 1


def test_typed_list_of_arrays_and_in_dicts():
    tl = List.empty_list(types.float64[:])
    tl.append(np.arange(3.0))
    d = Dict.empty(types.unicode_type, types.ListType(types.float64[:]))
    d["k"] = tl

    @njit
    def total(d):
        s = 0.0
        for a in d["k"]:
            s += a.sum()
        d["k"].append(np.ones(2))
        return s

    assert total(d) == 3.0
    assert len(tl) == 2 and tl[1].sum() == 2.0


def test_typed_lists_local_to_prange_iterations():
    @njit(parallel=True)
    def f(n):
        out = np.zeros(n)
        for i in numba_rs.prange(n):
            lst = List.empty_list(types.float64)
            for j in range(i + 1):
                lst.append(float(j))
            out[i] = len(lst) + lst[-1]
        return out

    assert np.array_equal(f(8), np.array([2.0 * i + 1 for i in range(8)]))


def test_numbas_listobject_new_list_and_negative_allocation():
    @njit
    def f(n):
        lst = List.empty_list(types.int64, n)
        lst.append(1)
        return len(lst)

    assert f(10) == 1
    with pytest.raises(ValueError, match="expecting \\*allocated\\* to be >= 0"):
        f(-1)


def test_typed_list_mutated_while_compiled_code_iterates_it():
    @njit
    def f(lst):
        for x in lst:
            lst.append(x)

    lst = List([1.0, 2.0])
    with pytest.raises(RuntimeError, match="list was mutated during iteration"):
        f(lst)


def test_lists_of_none():
    @njit
    def f():
        lst = List()
        lst.append(None)
        lst.append(None)
        lst[0] = None
        return lst, len(lst), lst[1] is None

    lst, n, is_none = f()
    assert list(lst) == [None, None] and n == 2 and is_none

    @njit
    def g():
        return [None, None]

    assert g() == [None, None]


def test_immutable_typed_list_refuses_changes():
    @njit
    def f():
        lst = List.empty_list(types.int64)
        lst.append(1)
        lst._make_immutable()
        return lst, lst._is_mutable(), lst[0], len(lst)

    lst, mutable, first, n = f()
    assert (mutable, first, n) == (False, 1, 1)

    @njit
    def push(lst):
        lst.append(2)

    for change in (lambda: push(lst), lambda: lst.append(3), lambda: lst.pop()):
        with pytest.raises(ValueError, match="list is immutable"):
            change()
    assert list(lst) == [1]


def test_typed_list_sort_with_key_in_compiled_code():
    @njit
    def f(lst):
        lst.sort(key=lambda x: -x)
        return lst

    lst = List([3, 1, 2, 5])
    assert list(f(lst)) == [5, 3, 2, 1] and list(lst) == [5, 3, 2, 1]


def test_typed_list_index_with_numbas_keywords():
    @njit
    def f(lst):
        return lst.index(2, start=2), lst.index(2, 0, 3), lst.index(2, end=3)

    lst = List([1, 2, 3, 2])
    ref = [1, 2, 3, 2]
    assert f(lst) == (ref.index(2, 2), ref.index(2, 0, 3), ref.index(2, 0, 3))


def test_appending_a_string_to_an_int_list_is_numbas_error():
    # Numba's `_sentry_safe_cast`: into a number, "cannot safely cast ..." whatever the
    # source type.
    from numba_rs import njit as _njit
    from numba_rs import typed as _typed
    from numba_rs.errors import TypingError as _TypingError

    @_njit
    def f():
        lst = _typed.List()
        lst.append(0)
        lst.append("fda")
        return lst

    with pytest.raises(_TypingError, match="cannot safely cast unicode_type to int64"):
        f()


def test_numbas_typed_module_in_compiled_code_makes_numba_rs_containers():
    nb_typed = pytest.importorskip("numba.typed")

    @njit
    def f():
        lst = nb_typed.List()
        lst.append(2)
        d = nb_typed.Dict()
        d[1] = 2.5
        return lst[0] + d[1]

    assert f() == 4.5
