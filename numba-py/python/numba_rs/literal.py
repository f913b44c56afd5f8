"""``literal_unroll``: iterate a tuple whose items have different types.

In Python it is the identity. In jitted code, ``for x in literal_unroll(tup)`` (and
``for i in range(len(literal_unroll(tup)))``) runs the loop body once per item, each copy
compiled for its item's own type (``numba_ir::unroll``); the tuple's length must be known
when the function is compiled (an argument, a tuple built in the function, a global).
"""


def literally(obj):
    """Ask for ``obj`` (an argument of the jitted function, or a value derived from one)
    as a literal type: the function is compiled for the argument's value, once per value.
    Identity in Python."""
    return obj


def literal_unroll(container):
    """Mark ``container`` for a loop unrolled per item (identity in Python)."""
    return container
