"""Exceptions and warnings raised by numba-rs, named as Numba names them.

When Numba itself was imported first (code written against Numba, moving over), each
class also derives from Numba's class of the same name, so ``except
numba.core.errors.TypingError`` and ``assertWarns(NumbaPerformanceWarning)`` written for
Numba catch numba-rs's too. numba-rs never imports Numba for this.
"""

import sys

_numba_errors = sys.modules.get("numba.core.errors")
if getattr(_numba_errors, "_NUMBA_RS", False):
    _numba_errors = None
# Marks this module as numba-rs's when the drop-in switch installs it as
# ``numba.core.errors``.
_NUMBA_RS = True


def _bases(name, *ours):
    theirs = getattr(_numba_errors, name, None)
    if isinstance(theirs, type) and not any(issubclass(o, theirs) for o in ours):
        # Before the builtin bases (Exception, ValueError), which Numba's derive from.
        mine = tuple(o for o in ours if o.__module__ != "builtins")
        builtin = tuple(o for o in ours if o.__module__ == "builtins")
        return mine + (theirs,) + builtin
    return ours


class NumbaError(*_bases("NumbaError", Exception)):
    """Base class of numba-rs compile errors."""


class TypingError(*_bases("TypingError", NumbaError)):
    """A function cannot be typed: the message names the operation, types and line."""


class LiteralTypingError(*_bases("LiteralTypingError", TypingError)):
    """``literally`` of a value that has no literal type (an array, say)."""


class LoweringError(*_bases("LoweringError", NumbaError)):
    """Code a library supplied failed while generating its body (an intrinsic's or a
    lowering's `codegen` raising)."""


class UnsupportedError(*_bases("UnsupportedError", NumbaError)):
    """A construct numba-rs does not support (yet): the message names it and the line."""


class UnsupportedBytecodeError(*_bases("UnsupportedBytecodeError", UnsupportedError)):
    """A construct the bytecode analysis rejects (a bare ``raise`` inside ``try``, an
    exception bound with ``except ... as e``), as Numba raises it; an
    ``UnsupportedError`` too."""


class UnsupportedRewriteError(*_bases("UnsupportedRewriteError", UnsupportedError)):
    """A rewrite (``parallel=True``'s loop conversion) rejects the code: a parallel
    loop's index overwritten, conflicting reduction operators."""


class NumbaWarning(*_bases("NumbaWarning", Warning)):
    """Base class of numba-rs warnings (an option not implemented yet, say)."""


NumbaTypeError = TypingError


class NumbaValueError(*_bases("NumbaValueError", TypingError, ValueError)):
    """Code Numba rejects with a ValueError at compile time (an accumulator of a parallel
    loop used other than by a supported reduction, say); catchable as either."""


class NumbaPerformanceWarning(*_bases("NumbaPerformanceWarning", NumbaWarning)):
    """Code that compiles but will not run as fast as asked (Numba's category)."""


class NumbaParallelSafetyWarning(*_bases("NumbaParallelSafetyWarning", NumbaWarning)):
    """A parallel loop whose result may depend on the order threads run in."""


class NumbaPendingDeprecationWarning(
    *_bases("NumbaPendingDeprecationWarning", NumbaWarning, PendingDeprecationWarning)
):
    """A feature Numba will deprecate (reflected list and set arguments)."""


class NumbaDeprecationWarning(*_bases("NumbaDeprecationWarning", NumbaWarning, DeprecationWarning)):
    """A feature or option Numba deprecated (``nopython=False`` since 0.59)."""
