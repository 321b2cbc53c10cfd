"""Replace a file someone else owns only if it still holds what lookout read (L8): on Linux the
new file and the old one trade places atomically (renameat2 RENAME_EXCHANGE), so the old one
can be checked *after* the switch and put back if another program wrote it meanwhile. Nothing
another writer renamed into place is lost. Stdlib only (ctypes); elsewhere the caller falls back
to check-then-replace."""

from __future__ import annotations

import ctypes
import errno
import os
import sys

RENAME_EXCHANGE = 2
_AT_FDCWD = -100
# What says "this system or file system cannot exchange" rather than "this exchange failed".
_UNSUPPORTED = {errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV}


def _renameat2() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # a libc without it (glibc < 2.28, some musl)
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


def exchange(a: str, b: str) -> bool:
    """Atomically swap the files at paths `a` and `b` (both must exist). False when the system
    or file system cannot; OSError for any other failure."""
    fn = _renameat2()
    if fn is None:
        return False
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in _UNSUPPORTED:
        return False
    raise OSError(err, os.strerror(err), b)
