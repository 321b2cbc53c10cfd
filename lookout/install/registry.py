"""What the installer wrote into other programs' files, kept in the runtime directory: which
settings files hold lookout's hooks (so `--purge` finds every one of them, in any project), whether
install created each file, and a private, bounded set of backups of their earlier contents.

Backups live under `<runtime>/backups/` (0700), never next to the user's file (a `.bak` in a
repository is litter), each no more readable than the file it copies; purge removes them all."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from lookout import paths, store, words
from lookout.atomic import write_json
from lookout.errors import LookoutError

REGISTRY = "installed.json"
FORMAT = words.FORMATS[REGISTRY]
BACKUPS = "backups"
# Per file: this many recent backups, plus the pinned copy of what was there before lookout.
KEEP = 3


@dataclass
class Entry:
    """One file lookout merged entries into. `written` is the sha256 of the text lookout last
    wrote there; while the file still has exactly that text, `original` (a backup) is what it
    held before lookout, byte for byte. `created`: install made the file, and `created_dirs`
    (innermost first) the directories for it."""

    path: str
    agent: str = "claude"
    written: str = ""
    original: str | None = None
    created: bool = False
    created_dirs: list[str] = field(default_factory=list)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def registry_path() -> Path:
    return paths.runtime_home() / REGISTRY


def backups_root() -> Path:
    return paths.runtime_home() / BACKUPS


def _key(path: Path) -> str:
    return os.path.realpath(path)


def _read() -> object:
    try:
        return json.loads(registry_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def check_format() -> None:
    """The install's records (this one, and what Codex's notify setting was before lookout)
    written by a newer lookout are never rewritten (they may hold what this version cannot
    keep): install and uninstall stop before changing anything."""
    for path in (registry_path(), paths.runtime_home() / "codex-notify.json"):
        version = store.file_version(str(path))
        known = words.FORMATS[path.name]
        if version is not None and version > known:
            raise LookoutError(
                f"{paths.tilde(path)} was written by a newer lookout (format {version};"
                f" this one reads {known})",
                hint="run install.py from a checkout of that version or newer; nothing changed",
            )


def load() -> dict[str, Entry]:
    """Every registered file by its real path; an unreadable registry is an empty one (the
    installer still finds the scopes it is pointed at)."""
    raw = _read()
    files = raw.get("files") if isinstance(raw, dict) else None
    out: dict[str, Entry] = {}
    for item in files if isinstance(files, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            continue
        original = item.get("original")
        dirs = item.get("created_dirs")
        out[item["path"]] = Entry(
            path=item["path"],
            agent=str(item.get("agent") or "claude"),
            written=str(item.get("written") or ""),
            original=original if isinstance(original, str) else None,
            created=item.get("created") is True,
            created_dirs=[d for d in dirs if isinstance(d, str)] if isinstance(dirs, list) else [],
        )
    return out


def _save(entries: dict[str, Entry]) -> None:
    if entries:
        check_format()
    doc = {"v": FORMAT, "files": [asdict(e) for e in entries.values()]}
    write_json(registry_path(), doc if entries else None)


def get(path: Path) -> Entry | None:
    return load().get(_key(path))


def remember(
    path: Path,
    agent: str,
    before: str | None,
    written: str,
    backup: Path | None,
    created_dirs: list[Path],
) -> None:
    """Register a write of `written` over `before` (None: the file did not exist). The first
    install's record knows what the file was before lookout; it stays exact only while every
    later write started from lookout's own last text."""
    entries = load()
    key = _key(path)
    entry = entries.get(key)
    if entry is None:
        entry = Entry(
            path=key,
            agent=agent,
            original=str(backup) if backup is not None else None,
            created=before is None,
            created_dirs=[str(d) for d in created_dirs],
        )
    elif before is None or digest(before) != entry.written:
        entry.original = None  # someone else changed it since: only unmerging can be exact now
    entry.written = digest(written)
    entries[key] = entry
    _save(entries)


def forget(path: Path) -> None:
    entries = load()
    entry = entries.pop(_key(path), None)
    if entry is None:
        return
    _save(entries)
    if entry.original:
        # No longer pinned: it goes with the next pruning, or now if it is beyond the last few.
        prune_backups(path)


def missing_dirs(path: Path) -> list[Path]:
    """The directories a write of `path` would have to create, innermost first."""
    out: list[Path] = []
    parent = Path(os.path.realpath(path)).parent
    while not parent.exists() and parent != parent.parent:
        out.append(parent)
        parent = parent.parent
    return out


# --- backups -----------------------------------------------------------------------------------


def backup_dir(path: Path) -> Path:
    real = os.path.realpath(path)
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return backups_root() / f"{os.path.basename(real)}-{digest}"


def backups_of(path: Path) -> list[Path]:
    """The private backups of one file, oldest first."""
    try:
        return sorted(p for p in backup_dir(path).iterdir() if not p.name.startswith("."))
    except FileNotFoundError:
        return []


def backup(path: Path, data: bytes, mode: int, now: float | None = None) -> Path:
    """Keep a private copy of `data` (the file's bytes before a write) and return where."""
    root = backups_root()
    directory = backup_dir(path)
    for d in (root, directory):
        d.mkdir(parents=True, exist_ok=True)
        os.chmod(d, 0o700)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(now))
    # Names sort in the order they were made: a second one within the same second gets -01...
    same = [p.name[len(stamp) + 1 :] for p in backups_of(path) if p.name.startswith(stamp)]
    n = max((int(x) if x.isdigit() else 0 for x in same), default=-1) + 1
    candidate = directory / (f"{stamp}-{n:02d}" if n else stamp)
    # Never more readable than the original: its owner bits at most, and never group/other.
    fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode & 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.chmod(candidate, mode & 0o600)  # the umask may have taken bits away; never added
    prune_backups(path)
    return candidate


def prune_backups(path: Path, keep: int = KEEP) -> None:
    entry = get(path)
    pinned = {entry.original} if entry and entry.original else set()
    recent = [p for p in backups_of(path) if str(p) not in pinned]
    for old in recent[: max(0, len(recent) - keep)]:
        old.unlink()
    directory = backup_dir(path)
    if directory.is_dir() and not any(directory.iterdir()):
        directory.rmdir()


def remove_all() -> None:
    """Purge: the registry and every backup (they hold copies of settings, maybe secrets)."""
    shutil.rmtree(backups_root(), ignore_errors=True)
    try:
        registry_path().unlink()
    except FileNotFoundError:
        pass
