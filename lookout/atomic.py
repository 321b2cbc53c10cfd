"""Writing a file atomically (temp file beside it, fsync, keep the mode, replace; through a
symlink) and making directories no wider than asked, whatever the umask. On the ground floor:
the installer, the platform layer (launchd's agent) and the commands write through it, and it
imports only errors, paths and swap."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from lookout import swap
from lookout.errors import LookoutError
from lookout.paths import tilde


def umask() -> int:
    """The process umask (reading it means setting it: set it straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def make_dirs(path: Path, mode: int = 0o755) -> None:
    """mkdir -p where every created directory is at most `mode` (the umask can only take bits
    away): under umask 000 Path.mkdir would make them 0777, writable by every user."""
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode)
        except FileExistsError:
            continue


def atomic_write(path: Path, data: bytes, mode: int, expect: bytes | None = None) -> None:
    """Temp file in the target's directory, fsync, keep the mode, replace; through a symlink.
    With `expect`, the target must still hold exactly those bytes right before the replace."""
    real = Path(os.path.realpath(path))
    fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".lookout-tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
        changed = LookoutError(
            f"{tilde(path)}: changed while lookout was writing it",
            hint="run the command again; the file is as the other program left it",
        )
        if expect is not None and swap.exchange(tmp, str(real)):
            # L8: the switch is atomic and `tmp` now names what was there; a write that came
            # after our read is traded back into place, never lost.
            with open(tmp, "rb") as old:
                if old.read() != expect:
                    swap.exchange(tmp, str(real))
                    raise changed
        else:
            if expect is not None and real.read_bytes() != expect:
                raise changed  # written by someone else while we worked: theirs wins
            os.replace(tmp, real)
        dir_fd = os.open(real.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_json(path: Path, doc: object) -> None:
    """A record of lookout's own: `doc` as indented JSON, private (0o600), written atomically
    (its directory made first); None: there is nothing to keep, so the file goes."""
    if doc is None:
        if path.exists():
            path.unlink()
        return
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, (json.dumps(doc, indent=2) + "\n").encode("utf-8"), 0o600)
