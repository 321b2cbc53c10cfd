"""Where the dashboard's sessions come from: the local state directory, read the way `lookout
status` reads it (snapshots the store wrote), and a session's records from events.jsonl.

Read-only: never writes a state file."""

from __future__ import annotations

import os
import time
from typing import Any

from lookout import _jsonfast, store, words
from lookout.sessions import STALE_AFTER_S, parse_line, present, public, short_ids

QUIET_S = 1.0


class LocalSource:
    """The sessions of one state directory, re-read only when their snapshot file changed.

    Not thread-safe: the dashboard's hub is its only caller."""

    def __init__(self, state_dir: str, stale_after_s: int = STALE_AFTER_S) -> None:
        self.state_dir = state_dir
        self.stale_after_s = stale_after_s
        # snapshot file name -> (identity of the file, parsed snapshot)
        self._files: dict[str, tuple[tuple[int, int, int], dict[str, Any]]] = {}
        self._dir: tuple[int, int] | None = None

    def changed(self, force: bool = False) -> set[str]:
        """Re-read the snapshots whose file changed; the ids of sessions changed or gone.

        The store replaces a snapshot with a new file each time, so the directory's mtime moves
        and so does the file's (inode, mtime, size). While the directory is quiet one stat() is
        all this costs; for a second after it changed every file is looked at, because two writes
        within one tick of the file system's clock leave the same directory mtime."""
        if force:
            # Once a second: end what was answered though no hook said so (issue 10's signals),
            # so the page is as true as `lookout status`; the store writes what it proves.
            from lookout import reconcile

            reconcile.quietly(self.state_dir)
        directory = os.path.join(self.state_dir, store.SESSIONS)
        try:
            st = os.stat(directory)
            identity_dir: tuple[int, int] | None = (st.st_ino, st.st_mtime_ns)
            quiet = time.time() - st.st_mtime > QUIET_S
        except FileNotFoundError:
            identity_dir, quiet = None, True
        if not force and quiet and identity_dir == self._dir:
            return set()
        self._dir = identity_dir
        ids: set[str] = set()
        seen: set[str] = set()
        try:
            entries = list(os.scandir(directory))
        except FileNotFoundError:
            entries = []
        for entry in entries:
            name = entry.name
            if not name.endswith(".json") or name.startswith("."):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            seen.add(name)
            identity = (st.st_ino, st.st_mtime_ns, st.st_size)
            known = self._files.get(name)
            if known is not None and known[0] == identity:
                continue
            snapshot = store.read_json(entry.path)
            if known is not None:
                ids.add(known[1]["session_id"])
            if isinstance(snapshot, dict) and isinstance(snapshot.get("session_id"), str):
                self._files[name] = (identity, snapshot)
                ids.add(snapshot["session_id"])
            else:
                self._files.pop(name, None)  # unreadable: show nothing rather than guess
        for name in set(self._files) - seen:
            ids.add(self._files.pop(name)[1]["session_id"])
        return ids

    def sessions(self) -> dict[str, dict[str, Any]]:
        """Every session (ended included) by id, in the shape of `lookout status --json`."""
        now_ms = words.now_ms()
        rows = [present(snap, now_ms, self.stale_after_s) for _, snap in self._files.values()]
        shorts = short_ids(row["session_id"] for row in rows)
        return {
            row["session_id"]: {**public(row), "short_id": shorts[row["session_id"]]}
            for row in rows
        }

    def events(
        self, session_id: str, before: int | None, limit: int
    ) -> tuple[list[dict[str, Any]], int | None]:
        return session_events(self.state_dir, session_id, before, limit)


def session_events(
    state_dir: str, session_id: str, before: int | None, limit: int
) -> tuple[list[dict[str, Any]], int | None]:
    # Records are written compactly by _jsonfast: a byte search finds the session's lines
    # before anything is parsed, which keeps paging cheap in a 20 MB file of other sessions.
    needle = ('"session_id":' + _jsonfast.dumps(session_id)).encode("ascii")
    tail = store.Tail(os.path.join(state_dir, store.EVENTS))
    tail.to_end()
    found: list[dict[str, Any]] = []
    for raw in tail.before():  # events.jsonl, then .1 .. .7: newest first
        if needle not in raw:
            continue
        record = parse_line(raw)
        if record is None or record.get("session_id") != session_id:
            continue
        seq = record.get("seq")
        if not isinstance(seq, int) or (before is not None and seq >= before):
            continue
        if len(found) == limit:
            return found, found[-1]["seq"]
        found.append(record)
        if seq <= 1:
            return found, None  # the session's first record: nothing older exists
    return found, None
