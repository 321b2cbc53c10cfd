"""`lookout serve --fleet`: the dashboard's sessions from every host on the MQTT broker of
[fleet], through the same subscription as `lookout status --fleet --watch` (lookout.fleet.watch).

Sessions are keyed `<host>/<session_id>` (two hosts may share an id) and carry `host`; the
sessions of a host that is not online are `unknown`, and while the broker cannot be reached every
session is `unknown` (reason `broker_unreachable`, the error as its detail), never its last
status; it reconnects by itself every RETRY_S. A timeline stays on its host: events() has none.

On the fleet's hub (`[fleet] hub` names this host) it also keeps the other hosts' open requests
(Waiting), which the page answers through lookout.web.fleethub."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from lookout.config.fleet import FleetConfig
from lookout.errors import LookoutError
from lookout.fleet import hub, mqtt, topics, watch
from lookout.sessions import STALE_AFTER_S, public

RETRY_S = 2.0


def is_hub(cfg: FleetConfig | None) -> bool:
    """Does this host serve the fleet's hub dashboard ([fleet] hub names this host)? Only then
    may its page answer and steer other hosts' sessions (through lookout.fleet.hub)."""
    return cfg is not None and bool(cfg.hub) and cfg.hub == cfg.host


class FleetSource:
    def __init__(self, cfg: FleetConfig, stale_after_s: int = STALE_AFTER_S) -> None:
        self.stale_after_s = stale_after_s
        self._changed = threading.Event()
        self.fleet = watch.Fleet(cfg, on_change=self._changed.set)
        self._retry_at = 0.0
        self.problem: str | None = None
        # On the fleet's hub only: the other hosts' open requests, to answer from the page.
        self.waiting = Waiting(cfg, self._changed.set) if is_hub(cfg) else None

    def start(self) -> None:
        self.fleet.start()  # the first connection's errors go to the command (error + hint)
        if self.waiting is not None:
            self.waiting.start()

    def stop(self) -> None:
        self.fleet.stop()
        if self.waiting is not None:
            self.waiting.stop()

    def changed(self, force: bool = False) -> set[str]:
        if self.waiting is not None:
            self.waiting.retry()
        if self.fleet.lost.is_set() and time.monotonic() >= self._retry_at:
            self.fleet.stop()
            try:
                self.fleet.start()
                self.problem = None
            except LookoutError as exc:
                self.problem = str(exc)
                self._retry_at = time.monotonic() + RETRY_S
            self._changed.set()
        if force or self._changed.is_set():
            self._changed.clear()
            return {"*"}  # the hub compares every session and sends what differs
        return set()

    def sessions(self) -> dict[str, dict[str, Any]]:
        snap = self.fleet.snapshot(True, self.stale_after_s)
        out = {}
        for s in snap["sessions"]:
            shown = public(s)
            if self.fleet.lost.is_set():
                why = self.problem or f"lost the connection to the broker at {self.fleet.cfg.url}"
                shown.update(
                    status="unknown", reason="broker_unreachable", detail=f"{why}; retrying"
                )
            out[f"{s['host']}/{s['session_id']}"] = shown
        return out

    def events(
        self, session_id: str, before: int | None, limit: int
    ) -> tuple[list[dict[str, Any]], int | None]:
        return [], None


class Waiting:
    """The fleet's open permission requests on the hub (issue 42): one live subscription to
    `<prefix>/+/requests/+` (only the hub's user may read it), kept for as long as the dashboard
    runs, so a page's read costs no connection. A retained message is a host's open request, an
    empty one its end; each is read by the hub's parser (lookout.fleet.hub.parse_request), which
    checks it. While the broker is away nothing is offered (`lost`): a press could not reach its
    host anyway, and what was held may have ended meanwhile."""

    def __init__(self, cfg: FleetConfig, on_change: Callable[[], None]) -> None:
        self.cfg = cfg
        self.on_change = on_change
        self.lost = threading.Event()
        self.lost.set()
        self.version = 0  # moves at every change: the dashboard's hub tells the pages
        self._lock = threading.Lock()
        self._open: dict[str, hub.FleetRequest] = {}  # by topic
        self._client: Any = None
        self._retry_at = 0.0
        self.problem: str | None = None

    def topic(self, host: str, token: str) -> str:
        return f"{self.cfg.topic_prefix}/{host}/{topics.REQUESTS}/{token}"

    def start(self) -> None:
        client = mqtt.new_client(self.cfg, "hubweb")
        client.on_message = self._on_message
        mqtt.connect(client, self.cfg)
        with self._lock:
            self._open.clear()
            self.version += 1
        client.on_disconnect = self._on_disconnect
        self._client = client
        client.subscribe(self.topic("+", "+"), qos=1)
        self.lost.clear()
        self.problem = None
        self.on_change()

    def stop(self) -> None:
        if self._client is not None:
            mqtt.close(self._client)
            self._client = None

    def retry(self) -> None:
        """Connect again when the connection was lost, at most every RETRY_S."""
        if not self.lost.is_set() or time.monotonic() < self._retry_at:
            return
        self.stop()
        try:
            self.start()
        except LookoutError as exc:
            self.problem = str(exc)
            self._retry_at = time.monotonic() + RETRY_S

    def _on_disconnect(self, *_args: Any) -> None:
        self.lost.set()
        with self._lock:
            self.version += 1
        self.on_change()

    def _on_message(self, _c: Any, _u: Any, msg: Any) -> None:
        self.take(msg.topic, bytes(msg.payload))

    def take(self, topic: str, body: bytes) -> None:
        """One message of `<prefix>/+/requests/+`: an open request, or (empty, or not one the
        hub can answer) the end of whatever that topic held."""
        request = hub.parse_request(self.cfg.topic_prefix, topic, body)
        with self._lock:
            if request is not None:
                self._open[topic] = request
            elif self._open.pop(topic, None) is None:
                return
            self.version += 1
        self.on_change()

    def requests(self) -> list[hub.FleetRequest]:
        """The open requests now, the one that expires first on top (none while the broker is
        away)."""
        if self.lost.is_set():
            return []
        with self._lock:
            found = list(self._open.values())
        return sorted(found, key=lambda r: (r["expires_ms"], r["host"], r["token"]))

    def get(self, host: str, token: str) -> hub.FleetRequest | None:
        if self.lost.is_set():
            return None
        with self._lock:
            return self._open.get(self.topic(host, token))
