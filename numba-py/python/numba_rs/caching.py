"""Where ``cache=True`` keeps compiled code, found as Numba's cache locators find it.

In order: ``NUMBA_CACHE_DIR`` (the source file's directory mirrored under it), the
``__pycache__`` directory beside the source file when it is writable, then a user-wide
directory (``$XDG_CACHE_HOME/numba_rs`` or ``~/.cache/numba_rs``, the source directory
mirrored under it). A function without a source file (typed at the prompt, made by
``exec``) cannot be cached: Numba's RuntimeError says so when it is decorated.

The files themselves are written and read by the compiler (``numba_dispatch::cache``);
this module only chooses the directory and names the function, and gives the
fingerprint that tells two versions of a function apart (its bytecode and the values of
its closure variables, as Numba's index key holds them).
"""

import hashlib
import marshal
import os
import pickle
import sys
import tempfile


def _writable(path):
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


def _mirrored(root, source):
    """``root`` followed by the source file's directory (Numba's user-wide layout)."""
    directory = os.path.dirname(os.path.abspath(source))
    drive, tail = os.path.splitdrive(directory)
    parts = [drive.rstrip(":")] if drive else []
    return os.path.join(root, *parts, tail.lstrip(os.sep))


def _user_wide_root():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "numba_rs")


def cache_dir(source):
    """The directory cache files for ``source`` go to, or None when no locator applies."""
    if not os.path.isfile(source):
        return None
    user_dir = os.environ.get("NUMBA_CACHE_DIR")
    if user_dir:
        path = _mirrored(user_dir, source)
        return path if _writable(path) else None
    in_tree = os.path.join(os.path.dirname(os.path.abspath(source)), "__pycache__")
    if _writable(in_tree):
        return in_tree
    path = _mirrored(_user_wide_root(), source)
    return path if _writable(path) else None


def site(func):
    """``(directory, stem, source)`` for ``func``: the stem is Numba's file-name base,
    ``<module>.<qualname>-<first line>.py<major><minor>``."""
    code = func.__code__
    source = code.co_filename
    directory = cache_dir(source)
    qualname = f"{func.__module__}.{func.__qualname__}"
    if directory is None:
        raise RuntimeError(
            f"cannot cache function {func.__qualname__!r}: no locator available for file "
            f"{source!r}"
        )
    fixed = qualname.replace("<", "").replace(">", "")
    stem = f"{fixed}-{code.co_firstlineno}.py{sys.version_info[0]}{sys.version_info[1]}"
    return (directory, stem, source)


def _cell_bytes(value):
    try:
        return pickle.dumps(value, protocol=4)
    except Exception:
        # A value pickle cannot take (a jitted function defined in a closure, say): its
        # type and identity, so the entry is at least not shared with another.
        return f"{type(value).__module__}.{type(value).__qualname__}:{value!r}".encode()


def fingerprint(func):
    """What distinguishes two versions of ``func`` at one place in one file: the hash
    of its marshalled code object and of its closure variables' values."""
    h = hashlib.sha256(marshal.dumps(func.__code__))
    for cell in func.__closure__ or ():
        try:
            value = cell.cell_contents
        except ValueError:
            value = None
        h.update(hashlib.sha256(_cell_bytes(value)).digest())
    return h.hexdigest()
