"""How one type converts to another (Numba's ``numba.core.typeconv.Conversion``), for a
user type's ``can_convert_to(typingctx, other)``: exact, promote, safe, unsafe, or nil
(none). numba-rs's own rules live in numba-typeinfer's ``conv`` module."""

import enum


class Conversion(enum.IntEnum):
    exact = 1
    promote = 2
    safe = 3
    unsafe = 4
    nil = 99
