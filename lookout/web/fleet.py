"""`lookout serve --fleet`: the dashboard's sessions from every host on the MQTT broker of
[fleet], through the same subscription as `lookout status --fleet --watch` (lookout.fleet.watch).

Sessions are keyed `<host>/<session_id>` (two hosts may share an id) and carry `host`; the
sessions of a host that is not online are `unknown`, and while the broker cannot be reached every
session is `unknown` (reason `broker_unreachable`, the error as its detail), never its last
status; it reconnects by itself every RETRY_S. A timeline stays on its host: events() has none."""

from __future__ import annotations

import threading
import time
from typing import Any

from lookout.config.fleet import FleetConfig
from lookout.errors import LookoutError
from lookout.fleet import watch
from lookout.sessions import STALE_AFTER_S, public

RETRY_S = 2.0


class FleetSource:
    def __init__(self, cfg: FleetConfig, stale_after_s: int = STALE_AFTER_S) -> None:
        self.stale_after_s = stale_after_s
        self._changed = threading.Event()
        self.fleet = watch.Fleet(cfg, on_change=self._changed.set)
        self._retry_at = 0.0
        self.problem: str | None = None

    def start(self) -> None:
        self.fleet.start()  # the first connection's errors go to the command (error + hint)

    def stop(self) -> None:
        self.fleet.stop()

    def changed(self, force: bool = False) -> set[str]:
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
