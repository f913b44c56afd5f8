"""``heapq`` in jitted code: ``heapify heappush heappop heapreplace heappushpop
nsmallest nlargest`` on lists, as overloads of the standard module's functions (loaded
the first time compiled code refers to one of them). The sift loops are the binary-heap
algorithm CPython's ``heapq`` documents (a bottom-up sift after a pop), so equal items end
up where CPython puts them; the errors are Numba's."""

import heapq

from . import types
from .errors import TypingError
from .extending import overload, register_jitable


@register_jitable
def _sift_down(heap, start, pos):
    # Move the item at `pos` up towards `start` while it is smaller than its parent.
    item = heap[pos]
    while pos > start:
        parent_pos = (pos - 1) >> 1
        parent = heap[parent_pos]
        if item < parent:
            heap[pos] = parent
            pos = parent_pos
            continue
        break
    heap[pos] = item


@register_jitable
def _sift_up(heap, pos):
    # Walk the smaller child up to a leaf, then place the item with _sift_down.
    end = len(heap)
    start = pos
    item = heap[pos]
    child = 2 * pos + 1
    while child < end:
        right = child + 1
        if right < end and not heap[child] < heap[right]:
            child = right
        heap[pos] = heap[child]
        pos = child
        child = 2 * pos + 1
    heap[pos] = item
    _sift_down(heap, start, pos)


def _check_heap(heap):
    if not isinstance(heap, types.List):
        raise TypingError("heap argument must be a list")
    if isinstance(heap.dtype, types.Complex):
        raise TypingError("'<' not supported between instances of 'complex' and 'complex'")


def _check_item(heap, item):
    _check_heap(heap)
    if heap.dtype != types.unliteral(item):
        raise TypingError("heap type must be the same as item type")


@overload(heapq.heapify)
def _heapify(x):
    _check_heap(x)

    def impl(x):
        for i in range(len(x) // 2 - 1, -1, -1):
            _sift_up(x, i)

    return impl


@overload(heapq.heappush)
def _heappush(heap, item):
    _check_item(heap, item)

    def impl(heap, item):
        heap.append(item)
        _sift_down(heap, 0, len(heap) - 1)

    return impl


@overload(heapq.heappop)
def _heappop(heap):
    _check_heap(heap)

    def impl(heap):
        last = heap.pop()
        if heap:
            top = heap[0]
            heap[0] = last
            _sift_up(heap, 0)
            return top
        return last

    return impl


@overload(heapq.heapreplace)
def _heapreplace(heap, item):
    _check_item(heap, item)

    def impl(heap, item):
        if not heap:
            raise IndexError("index out of range")
        top = heap[0]
        heap[0] = item
        _sift_up(heap, 0)
        return top

    return impl


@overload(heapq.heappushpop)
def _heappushpop(heap, item):
    _check_item(heap, item)

    def impl(heap, item):
        if heap and heap[0] < item:
            top = heap[0]
            heap[0] = item
            _sift_up(heap, 0)
            return top
        return item

    return impl


def _check_nbest(n, iterable):
    if not isinstance(types.unliteral(n), (types.Integer, types.Boolean)):
        raise TypingError("First argument 'n' must be an integer")
    iterables = (types.IterableType, types.Array, types.BaseTuple, types.List, types.Set)
    if not isinstance(iterable, iterables):
        raise TypingError("Second argument 'iterable' must be iterable")


@overload(heapq.nsmallest)
def _nsmallest(n, iterable):
    _check_nbest(n, iterable)

    def impl(n, iterable):
        ordered = sorted(iterable)
        k = int(n)
        if k <= 0:
            return ordered[:0]
        return ordered[:k]

    return impl


@overload(heapq.nlargest)
def _nlargest(n, iterable):
    _check_nbest(n, iterable)

    def impl(n, iterable):
        ordered = sorted(iterable, reverse=True)
        k = int(n)
        if k <= 0:
            return ordered[:0]
        return ordered[:k]

    return impl
