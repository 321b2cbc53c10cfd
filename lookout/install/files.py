"""Reading and writing files someone else owns (Claude Code's settings.json, the other agents'
files): strict parse or refuse, backup, atomic write through symlinks, read-back.

Never writes a file it could not parse; never replaces a symlink, only its target."""

from __future__ import annotations

import difflib
import json
import os
import re
import stat
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lookout import atomic
from lookout.atomic import atomic_write, make_dirs
from lookout.errors import LookoutError
from lookout.install import registry, settings
from lookout.paths import tilde

__all__ = ["atomic_write", "make_dirs"]  # the writes every installer module uses, from here

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


def load_settings_text(
    text: str, config_keys: Collection[str] = (), check: Callable[[object], object] | None = None
) -> object:
    """Settings text parsed as strictly as load_settings does (ValueError if it is not)."""
    if not text.strip():
        return {}
    data = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    return settings.check_shape(data, config_keys) if check is None else check(data)


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
            mode = 0o644 & ~atomic.umask()
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


def without_writing(
    loaded: Loaded, new_text: str, dry_run: bool, already: str, out: Out
) -> bool | None:
    """An install that writes nothing: False when the file holds `new_text` already (saying
    `already`), True for a dry run (its diff shown). None: the caller writes."""
    if loaded.text is not None and new_text == loaded.text:
        out(already)
        return False
    if dry_run:
        out(unified_diff(loaded, new_text).rstrip("\n"))
        return True
    return None


def written_note(details: list[str], backup: Path | None, loaded: Loaded) -> str:
    """` (…; backup: …)` / ` (new file)` after a line that says what was written."""
    if backup:
        details = [*details, f"backup: {tilde(backup)}"]
    elif loaded.text is None:
        details = [*details, "new file"]
    return f" ({'; '.join(details)})" if details else ""


def suffix(backup: Path | None) -> str:
    return f" (backup: {tilde(backup)})" if backup else ""


# Before backups moved into the runtime, install wrote them next to the file it changed.
_LEGACY_BACKUP = re.compile(r"\.bak-\d{8}T\d{6}(?:-\d+)?")


def remove_legacy_backups(targets: list[Path], dry_run: bool, out: Out) -> None:
    """Purge: the `<file>.bak-YYYYmmddTHHMMSS` copies an older lookout left next to the files
    it changed (they hold settings, perhaps secrets, and lookout's old hook commands)."""
    for target in targets:
        real = Path(os.path.realpath(target))
        try:
            names = os.listdir(real.parent)
        except OSError:
            continue
        for name in sorted(names):
            if name.startswith(real.name) and _LEGACY_BACKUP.fullmatch(name[len(real.name) :]):
                old = real.parent / name
                if old.is_file() and not old.is_symlink():
                    out(f"{'would remove' if dry_run else 'removing'} old backup {tilde(old)}")
                    if not dry_run:
                        old.unlink()


def load_all(targets: list[Path]) -> None:
    """Parse every file first: one that cannot be read stops the uninstall before any change,
    and the error lists them all (a purge that left hooks behind would break those sessions)."""
    broken: list[LookoutError] = []
    for f in targets:
        try:
            load_settings(f)
        except LookoutError as exc:
            broken.append(exc)
    if len(broken) == 1:
        raise broken[0]
    if broken:
        raise LookoutError(
            f"{len(broken)} settings files with lookout's hooks cannot be read:\n  "
            + "\n  ".join(str(e) for e in broken),
            hint=f"fix or move them, then run the command again; {NOTHING_CHANGED}",
        )
