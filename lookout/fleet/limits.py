"""What a fleet viewer keeps from the broker (N6 in security-2.md): per-message, per-host and
total limits, so that one host (even one a broker ACL confines to its own prefix) can neither
stall nor bloat `status --fleet`, `--watch` or the dashboard. What is over a limit is dropped and
counted per host, and the viewers say so. Pure; stdlib only."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

# A real bridge's session message is 360-440 bytes (docs/fleet.md); 50 subagents take it to a
# few KB. Anything near these limits is not a bridge.
MAX_MESSAGE = 16 * 1024
HOST_SESSIONS = 500
HOST_BYTES = 1024 * 1024
MAX_HOSTS = 500
TOTAL_SESSIONS = 20_000
TOTAL_BYTES = 16 * 1024 * 1024

REASONS = {
    "too_big": f"messages over {MAX_MESSAGE // 1024} KB",
    "host_sessions": f"sessions over {HOST_SESSIONS} per host",
    "host_bytes": f"over {HOST_BYTES // (1024 * 1024)} MB per host",
    "hosts": f"hosts over {MAX_HOSTS}",
    "total": "over the viewer's total limit",
    "malformed": "malformed messages",
}


@dataclass
class Budget:
    """The sessions a viewer holds, by (host, session) key, with their sizes; and what it
    dropped, by host and reason. Thread-safe on its own."""

    sizes: dict[tuple[str, str], int] = field(default_factory=dict)
    host_sessions: dict[str, int] = field(default_factory=dict)
    host_bytes: dict[str, int] = field(default_factory=dict)
    total_bytes: int = 0
    dropped: dict[str, dict[str, int]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def drop(self, host: str, reason: str) -> None:
        with self._lock:
            by = self.dropped.get(host)
            if by is None:
                if len(self.dropped) >= MAX_HOSTS:
                    host = "(other hosts)"  # the counts themselves stay bounded
                by = self.dropped.setdefault(host, {})
            by[reason] = by.get(reason, 0) + 1

    def admit(self, host: str, key: tuple[str, str], size: int) -> str | None:
        """Take (or replace) one session of `size` bytes: None, or why it was dropped (and
        counted). A replacement is judged by what it adds."""
        reason = self._check(host, key, size)
        if reason is not None:
            self.drop(host, reason)
        return reason

    def _check(self, host: str, key: tuple[str, str], size: int) -> str | None:
        if size > MAX_MESSAGE:
            return "too_big"
        with self._lock:
            old = self.sizes.get(key)
            grow = size - (old or 0)
            if old is None:
                if host not in self.host_sessions and len(self.host_sessions) >= MAX_HOSTS:
                    return "hosts"
                if self.host_sessions.get(host, 0) >= HOST_SESSIONS:
                    return "host_sessions"
                if len(self.sizes) >= TOTAL_SESSIONS:
                    return "total"
            if self.host_bytes.get(host, 0) + grow > HOST_BYTES:
                return "host_bytes"
            if self.total_bytes + grow > TOTAL_BYTES:
                return "total"
            if old is None:
                self.host_sessions[host] = self.host_sessions.get(host, 0) + 1
            self.sizes[key] = size
            self.host_bytes[host] = self.host_bytes.get(host, 0) + grow
            self.total_bytes += grow
            return None

    def forget(self, key: tuple[str, str]) -> None:
        with self._lock:
            size = self.sizes.pop(key, None)
            if size is None:
                return
            host = key[0]
            self.total_bytes -= size
            self.host_bytes[host] -= size
            self.host_sessions[host] -= 1
            if not self.host_sessions[host]:
                del self.host_sessions[host], self.host_bytes[host]

    def clear(self) -> None:
        with self._lock:
            self.sizes.clear()
            self.host_sessions.clear()
            self.host_bytes.clear()
            self.total_bytes = 0
            self.dropped.clear()

    def report(self) -> dict[str, dict[str, int]]:
        with self._lock:
            return {h: dict(by) for h, by in self.dropped.items()}


def describe(dropped: dict[str, dict[str, int]]) -> list[str]:
    """One line per host: `floodhost: 2500 dropped (sessions over 500 per host)`."""
    lines = []
    for host, by in sorted(dropped.items()):
        n = sum(by.values())
        why = ", ".join(f"{REASONS.get(r, r)}: {c}" for r, c in sorted(by.items()))
        lines.append(f"{host}: {n} message{'' if n == 1 else 's'} dropped ({why})")
    return lines
