"""The primitive ``np.frombuffer`` of a ``bytes`` value is written with: ``view(b)``, the
bytes' own memory as a read-only ``uint8`` array (numba-typeinfer's ``numpy_misc``,
numba-lower's ``impls/bytes``). It exists only in compiled code."""


def view(b):
    raise TypeError("numba_rs._npbuffer.view can only be called from compiled code")


view._numba_rs_builtin = "numba_rs._npbuffer:view"
