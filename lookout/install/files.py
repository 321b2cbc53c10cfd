"""Reading and writing files someone else owns (Claude Code's settings.json, Codex's hooks.json
and config.toml): strict parse or refuse, backup, atomic write through symlinks, read-back.

Never writes a file it could not parse; never replaces a symlink, only its target."""

from __future__ import annotations

import difflib
import json
import os
import stat
import tempfile
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lookout.errors import LookoutError
from lookout.install import claude as settings
from lookout.install import registry, swap
from lookout.paths import tilde

NOTHING_CHANGED = "lookout changed nothing"

Out = Callable[[str], None]


@dataclass
class Loaded:
    path: Path
    text: str | None  # None: the file does not exist
    data: settings.Settings


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            # Rewriting would silently drop one of the two: refuse instead.
            raise ValueError(f"duplicate key {json.dumps(key, ensure_ascii=False)}")
        out[key] = value
    return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def read_text(path: Path) -> str | None:
    """The file's text, None if it does not exist; LookoutError if it cannot be read as UTF-8."""
    where = tilde(path)
    hint = f"fix or move the file; {NOTHING_CHANGED}"
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        if path.is_symlink():
            raise LookoutError(
                f"{where}: is a symlink to a missing file ({os.readlink(path)})", hint=hint
            ) from None
        return None
    except OSError as exc:
        raise LookoutError(f"{where}: cannot read: {exc.strerror}", hint=NOTHING_CHANGED) from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LookoutError(f"{where}: not UTF-8 text (byte {exc.start})", hint=hint) from exc


def load_settings_text(text: str) -> settings.Settings:
    """Settings text parsed as strictly as load_settings does (ValueError if it is not)."""
    if not text.strip():
        return {}
    data = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    return settings.check_shape(data)


def load_settings(
    path: Path,
    config_keys: Collection[str] = (),
    check: Callable[[object], object] | None = None,
) -> Loaded:
    """Read and strictly parse a JSON settings file; `check` (default: Claude Code's shape)
    raises ShapeError for a shape the client would not accept."""
    where = tilde(path)
    hint = f"fix or move the file; {NOTHING_CHANGED}"
    text = read_text(path)
    if text is None:
        return Loaded(path, None, {})
    if not text.strip():
        return Loaded(path, text, {})  # an empty file (`touch`) holds nothing to lose
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise LookoutError(
            f"{where}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", hint=hint
        ) from exc
    except ValueError as exc:
        raise LookoutError(f"{where}: invalid JSON: {exc}", hint=hint) from exc
    except RecursionError:
        raise LookoutError(f"{where}: nested too deeply to be a settings file", hint=hint) from None
    try:
        if check is None:
            settings.check_shape(data, config_keys)
        else:
            check(data)
    except settings.ShapeError as exc:
        raise LookoutError(f"{where}: {exc}", hint=hint) from exc
    return Loaded(path, text, data)


def _umask() -> int:
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


def write_settings(loaded: Loaded, new_text: str, now: float | None = None) -> Path | None:
    """Write new_text over the file (a backup first when it exists); return the backup path."""
    path = loaded.path
    where = tilde(path)
    real = Path(os.path.realpath(path))
    data = new_text.encode("utf-8")
    backup: Path | None = None
    try:
        if loaded.text is not None:
            if real.read_bytes() != loaded.text.encode("utf-8"):
                # Someone (a running Claude Code?) wrote it since we read it: never clobber that.
                raise LookoutError(
                    f"{where}: changed while lookout was reading it",
                    hint=f"run the command again; {where} is unchanged",
                )
            st = real.stat()
            if not st.st_mode & 0o222:
                raise LookoutError(
                    f"{where}: file is read-only (mode {stat.S_IMODE(st.st_mode):04o})",
                    hint=f"make it writable (chmod u+w {tilde(real)}) and run again;"
                    f" {where} is unchanged",
                )
            mode = stat.S_IMODE(st.st_mode)
            # The original bytes, kept privately in the runtime (the last few per file).
            backup = registry.backup(path, loaded.text.encode("utf-8"), mode, now)
        else:
            # Never writable by others, whatever the umask (000 would make it 0666): anyone who
            # can write settings.json chooses the commands every session runs.
            mode = 0o644 & ~_umask()
            make_dirs(real.parent)
        expect = None if loaded.text is None else loaded.text.encode("utf-8")
        atomic_write(path, data, mode, expect)
    except PermissionError as exc:
        # Other steps (the runtime, the command) may have run already: speak for this file.
        raise LookoutError(
            f"{where}: cannot write: {exc.strerror} ({exc.filename})",
            hint=f"check the permissions of {tilde(real.parent)}; {where} is unchanged",
        ) from exc
    except OSError as exc:
        # The original is untouched (the replace is the last step); only a backup may exist.
        raise LookoutError(
            f"{where}: cannot write: {exc.strerror or exc}",
            hint=f"the file is unchanged{f'; {tilde(backup)} is a copy of it' if backup else ''}",
        ) from exc
    if real.read_bytes() != data:
        restore = f"restore it from {tilde(backup)}" if backup else "remove it"
        raise LookoutError(f"{where}: read-back differs from what was written", hint=restore)
    return backup


def unified_diff(loaded: Loaded, new_text: str) -> str:
    name = tilde(loaded.path)
    old = (loaded.text or "").splitlines(keepends=True)
    new = new_text.splitlines(keepends=True)
    lines = difflib.unified_diff(old, new, "/dev/null" if loaded.text is None else name, name)
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def written_note(details: list[str], backup: Path | None, loaded: Loaded) -> str:
    """` (…; backup: …)` / ` (new file)` after a line that says what was written."""
    if backup:
        details = [*details, f"backup: {tilde(backup)}"]
    elif loaded.text is None:
        details = [*details, "new file"]
    return f" ({'; '.join(details)})" if details else ""


def suffix(backup: Path | None) -> str:
    return f" (backup: {tilde(backup)})" if backup else ""
