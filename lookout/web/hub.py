"""The dashboard's live view: one thread watches the source and fans each change out to every
open stream (Server-Sent Events), so ten open pages cost one watcher, not ten."""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from lookout import away, words
from lookout.sessions import ORDER

POLL_S = 0.05  # how often the source is asked for changes: a change reaches a page within ~this
REFRESH_S = 1.0  # every session presented again: its process's liveness, stale
CONFIG_S = 5.0  # how often the config is validated again (for the page's banner)
QUEUE_MAX = 512

Message = tuple[str, dict[str, Any]]  # (SSE event name, data)


class Source(Protocol):
    """Where sessions come from: the state directory (LocalSource) or, later, the fleet."""

    def changed(self, force: bool = False) -> set[str]: ...

    def sessions(self) -> dict[str, dict[str, Any]]: ...

    def events(
        self, session_id: str, before: int | None, limit: int
    ) -> tuple[list[dict[str, Any]], int | None]: ...


class Subscription:
    """One open stream's inbox."""

    def __init__(self) -> None:
        self.queue: queue.Queue[Message] = queue.Queue(QUEUE_MAX)
        self.resync = False  # the reader fell behind (or the config changed): send a snapshot

    def put(self, message: Message) -> None:
        try:
            self.queue.put_nowait(message)
        except queue.Full:
            self.resync = True

    def drain(self) -> None:
        while True:
            try:
                self.queue.get_nowait()
            except queue.Empty:
                return


def ordered(sessions: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """As `lookout status` orders them (order, on the public fields): attention first, the
    one waiting longest on top; then by status, the most recent first."""
    by_recent = sorted(sessions.values(), key=lambda s: s["updated_at"] or "", reverse=True)

    def key(s: dict[str, Any]) -> tuple[int, str]:
        if s["status"] == "attention":  # RFC 3339 UTC strings sort as the times they name
            return 0, s.get("waiting_since") or s["updated_at"] or ""
        return ORDER.get(s["status"], 9), ""

    return sorted(by_recent, key=key)


class Hub:
    def __init__(
        self,
        source: Source,
        config_error: Callable[[], str | None],
        requests_dir: str | None = None,
        state_dir: str | None = None,
    ) -> None:
        self.source = source
        self._config_error = config_error
        # The away switch (this host's): an `away` message when it is turned or runs out.
        self._switch = away.Switch(state_dir) if state_dir is not None else None
        self._away = self._away_now()
        # [remote]'s requests: a `requests` message when one comes or changes, so a page shows a
        # new request as fast as the session's status (not at its next 2 s poll).
        self.requests_dir = requests_dir
        self._requests_seen = self._requests_stamp()
        self._lock = threading.Lock()
        self._reading = threading.Lock()  # the source is read by one thread at a time
        self._sessions: dict[str, dict[str, Any]] = {}
        self._config: str | None = None
        self._subscribers: set[Subscription] = set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the watcher ---------------------------------------------------------------------------

    def start(self) -> None:
        self._config = self._config_error()
        self.refresh(force=True)
        self._thread = threading.Thread(target=self._run, name="lookout-hub", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def _run(self) -> None:
        last_full = last_config = time.monotonic()
        while not self._stop.wait(POLL_S):
            now = time.monotonic()
            if now - last_config >= CONFIG_S:
                last_config = now
                self._check_config()
            full = now - last_full >= REFRESH_S
            if full:
                last_full = now
            try:
                self.refresh(force=full)
            except Exception:  # noqa: S112 - a bad read now is retried in 50 ms
                continue

    def refresh(self, force: bool = False) -> None:
        """Look for changes; send one message per changed session to every stream, and one
        `requests` message when a remote request came, was answered or ended."""
        with self._reading:
            stamp = self._requests_stamp()
            if stamp != self._requests_seen:
                self._requests_seen = stamp
                self.publish(("requests", {}))
            switch = self._away_now()
            if switch != self._away:
                self._away = switch
                self.publish(("away", {"away": switch}))
            if not self.source.changed(force) and not force:
                return
            fresh = self.source.sessions()
            with self._lock:
                old = self._sessions
                self._sessions = fresh
            # Still under _reading: two refreshes never publish in the wrong order.
            for session_id, session in fresh.items():
                if old.get(session_id) != session:
                    self.publish(("session", {"session": session}))
            for session_id in old.keys() - fresh.keys():
                self.publish(("removed", {"session_id": session_id}))

    def _away_now(self) -> away.State | None:
        return self._switch.state(words.now_ms()) if self._switch is not None else None

    def _requests_stamp(self) -> tuple[int, frozenset[tuple[str, int]] | None]:
        """The request records by name and inode: a record is created or replaced by a rename
        into the directory (a new inode), which a coarse mtime could miss. On the fleet's hub,
        with the version of the other hosts' requests (lookout.web.fleet.Waiting)."""
        waiting = getattr(self.source, "waiting", None)
        return (waiting.version if waiting is not None else 0), self._local_stamp()

    def _local_stamp(self) -> frozenset[tuple[str, int]] | None:
        if self.requests_dir is None:
            return None
        try:
            with os.scandir(self.requests_dir) as entries:
                return frozenset((e.name, e.inode()) for e in entries if e.name.endswith(".json"))
        except OSError:
            return None

    def _check_config(self) -> None:
        error = self._config_error()
        with self._lock:
            if error == self._config:
                return
            self._config = error
        for sub in self.subscribers():
            sub.resync = True  # rare: a whole snapshot carries the banner's new text

    def publish(self, message: Message) -> None:
        """Send a message to every open stream (each message carries the server's clock)."""
        message[1]["now_ms"] = words.now_ms()
        for sub in self.subscribers():
            sub.put(message)

    # -- readers -------------------------------------------------------------------------------

    def snapshot(self, include_ended: bool = True) -> dict[str, Any]:
        """The `lookout status --json` object (ended sessions too, unless asked otherwise), as
        of now: a change the watcher has not seen yet is looked for (and published) first."""
        self.refresh()
        with self._lock:
            sessions = [dict(s) for s in ordered(self._sessions)]  # the caller may add keys
            config = self._config
        if not include_ended:
            sessions = [s for s in sessions if s["status"] != "ended"]
        body: dict[str, Any] = {
            "sessions": sessions,
            "config_error": config,
            "now_ms": words.now_ms(),
        }
        if self._switch is not None:
            body["away"] = self._away  # this host's switch (None: a source of no host's own)
        return body

    def subscribe(self) -> Subscription:
        sub = Subscription()
        with self._lock:
            self._subscribers.add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            self._subscribers.discard(sub)

    def subscribers(self) -> list[Subscription]:
        with self._lock:
            return list(self._subscribers)
