"""doctor: the config, the state directory and the sender's deliveries."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from lookout import paths, store, words
from lookout.errors import LookoutError
from lookout.install.checks import FAIL, INFO, OK, WARN, Report
from lookout.sessions import parse_line

if TYPE_CHECKING:
    from lookout.shapes import Config


def check_config(report: Report, project: str) -> Config | None:
    path = paths.config_path()
    where = paths.tilde(path)
    from lookout.config.files import resolve

    try:
        loaded, pf = resolve(cwd=project)
    except LookoutError as exc:
        report.add("config", FAIL, f"invalid: {exc}", exc.hint)
        return None
    source = where if os.path.exists(path) else f"built-in defaults ({where} does not exist)"
    channels = loaded.get("channels", {})
    rules = loaded.get("rules", [])
    report.add("config", OK, f"{source}: {_n(len(channels), 'channel')}, {_n(len(rules), 'rule')}")
    if pf is not None and pf.ignored is not None:
        directory = paths.tilde(os.path.dirname(os.path.dirname(pf.path)))
        report.add(
            "config",
            WARN,
            f"{paths.tilde(pf.path)}: ignored: {pf.ignored}",
            f"lookout trust {directory} shows what it adds and asks"
            if pf.adds
            else "a project file must be yours and writable only by you",
        )
    return loaded


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def check_state(report: Report) -> None:
    state = Path(paths.state_dir())
    where = paths.tilde(state)
    if not state.exists():
        parent = next((p for p in state.parents if p.exists()), Path("/"))
        if os.access(parent, os.W_OK):
            report.add("state", INFO, f"{where} does not exist yet (the first hook creates it)")
        else:
            report.add("state", FAIL, f"{where} cannot be created: {parent} is not writable")
        return
    unsafe = store.unsafe_reason(str(state))
    if unsafe is not None:
        report.add(
            "state",
            FAIL,
            f"refused: {unsafe}: hooks record nothing there",
            "point LOOKOUT_STATE_DIR at a directory of your own (or unset it)",
        )
        return
    if not state.is_dir():
        report.add("state", FAIL, f"{where} is not a directory")
        return
    mode = stat.S_IMODE(state.stat().st_mode)
    if not os.access(state, os.W_OK | os.X_OK):
        report.add("state", FAIL, f"{where} is not writable by this user")
    elif mode & 0o077:
        report.add(
            "state",
            WARN,
            f"{where} has mode {mode:04o}: others can read your prompts",
            f"chmod 700 {where}",
        )
    else:
        report.add("state", OK, f"{where} (mode {mode:04o})")
    loose = [
        p.name
        for p in state.rglob("*")
        if p.is_file() and not p.is_symlink() and stat.S_IMODE(p.stat().st_mode) & 0o077
    ]
    if loose:
        report.add(
            "state",
            WARN,
            f"{len(loose)} files readable by others ({', '.join(sorted(loose)[:3])})",
            f"chmod -R go= {where}",
        )
    _check_spool(report, str(state))
    errors = state / store.ERRORS
    if errors.is_file() and errors.stat().st_size:
        with open(errors, encoding="utf-8", errors="replace") as fh:
            lines = [ln.rstrip() for ln in fh if ln.strip()]
        last = next((ln for ln in reversed(lines) if not ln.startswith((" ", "\t"))), "")
        report.add(
            "state",
            WARN,
            f"errors.log has {len(lines)} lines; last: {last[:160]}",
            f"read {paths.tilde(errors)}; delete it once the cause is fixed",
        )
    _check_ignored(report, state)


def _check_ignored(report: Report, state: Path) -> None:
    """ignored.log: what others sent and lookout did not act on (a stranger messaging your bot)
    is no failure of lookout's: said, never a warning."""
    ignored = state / store.IGNORED
    if ignored.is_file() and ignored.stat().st_size:
        with open(ignored, encoding="utf-8", errors="replace") as fh:
            count = sum(1 for ln in fh if ln.strip())
        report.add(
            "state",
            INFO,
            f"{store.IGNORED}: {_n(count, 'line')} on what lookout did not act on (Telegram"
            " messages and presses not from the owner, too old, or for nothing it knows)",
        )


def _check_spool(report: Report, state_dir: str) -> None:
    """Deliveries whose hook could not take events.lock in time wait in spool/ (never lost)."""
    waiting = store.spooled(state_dir)
    if waiting:
        report.add(
            "state",
            WARN,
            f"{waiting} {'delivery waits' if waiting == 1 else 'deliveries wait'} in"
            f" {store.SPOOL}/ (events.lock was held too long)",
            "the next hook or `lookout status` records them",
        )


def check_deliveries(report: Report, last: int = 50) -> None:
    """What the background sender recorded: the last failures are usually the whole story."""
    path = Path(paths.state_dir()) / store.DELIVERIES
    if not path.is_file():
        report.add("deliveries", INFO, "no notification sent yet")
        return
    with open(path, "rb") as fh:
        lines = fh.read().splitlines()[-last:]
    records = [r for r in (parse_line(raw) for raw in lines) if r is not None]
    failed = [r for r in records if r.get("result") == "failed"]
    sent = sum(1 for r in records if r.get("result") == "sent")
    if not failed:
        report.add("deliveries", OK, f"last {len(records)}: {sent} sent, none failed")
        return
    worst = failed[-1]
    report.add(
        "deliveries",
        WARN,
        f"last {len(records)}: {len(failed)} failed; latest: {worst.get('channel')} "
        f"({worst.get('kind')}) at {worst.get('ts')}: {worst.get('detail')}",
        "lookout tail --deliveries; lookout test CHANNEL",
    )


def newer_files(state_dir: str, runtime_home: Path) -> list[str]:
    """The files a newer lookout wrote in a format this one does not read (words.FORMATS): the
    state directory's, each record of the logs' last 64 KB, and the install record's."""
    found: list[str] = []
    candidates = [os.path.join(state_dir, name) for name in words.FORMATS if "*" not in name]
    for sub in (store.SESSIONS, store.OUTBOX, store.REQUESTS, store.SPOOL):
        try:
            names = sorted(os.listdir(os.path.join(state_dir, sub)))
        except OSError:
            continue
        candidates += [os.path.join(state_dir, sub, n) for n in names if n.endswith(".json")]
    candidates += [str(runtime_home / n) for n in ("installed.json", "codex-notify.json")]
    for path in candidates:
        version = store.file_version(path)
        known = store.known_format(path)
        if version is not None and known is not None and version > known:
            found.append(f"{paths.tilde(path)} (format {version}; this version reads {known})")
    for name in (store.EVENTS, store.DELIVERIES):
        version = _newest_record(os.path.join(state_dir, name))
        known = words.FORMATS[name]
        if version > known:
            found.append(f"records in {name} (format {version}; this version reads {known})")
    return found


def _newest_record(path: str, tail: int = 64 * 1024) -> int:
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.fstat(fh.fileno()).st_size - tail))
            lines = fh.read().split(b"\n")[1:]
    except OSError:
        return 1
    newest = 1
    for line in lines:
        if b'"v":' in line:
            try:
                newest = max(newest, store.version_of(json.loads(line)))
            except ValueError:
                continue
    return newest


def check_formats(report: Report) -> None:
    """Said only when something is newer: such a file is left as it is (never rewritten or
    removed); this version's hooks still record, in their own format."""
    found = newer_files(paths.state_dir(), paths.runtime_home())
    if found:
        shown = "; ".join(found[:4]) + (f"; {len(found) - 4} more" if len(found) > 4 else "")
        report.add(
            "formats",
            WARN,
            f"written by a newer lookout, left as they are: {shown}",
            "run install.py from a checkout of that version (or newer) again",
        )
