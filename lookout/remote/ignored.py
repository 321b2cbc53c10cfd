"""Ignored presses (and Telegram's messages), said at most once a second per reason, with a count
(issue 31: 10,000 bogus presses on the bridge were 10,056 log lines). The first of a reason is
said at once; the ones that follow within the second are counted, and said as one line with the
count when the second has passed (on the next one of that reason, or on the caller's next
flush()). Each is counted as what it is: "3 presses", "6 messages"."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

INTERVAL_S = 1.0


@dataclass
class _Reason:
    said_at: float
    what: str = "press"
    held: int = 0
    last: str = ""


def plural(what: str, n: int) -> str:
    """`1 press`, `2 presses`, `6 messages`."""
    if n == 1:
        return f"1 {what}"
    return f"{n} {what}es" if what.endswith(("s", "sh", "ch", "x")) else f"{n} {what}s"


class Ignored:
    """`say` gets each line; thread-safe (the bridge's presses arrive on paho's network thread,
    its flush runs on the main loop). `clock` is for tests."""

    def __init__(
        self,
        say: Callable[[str], None],
        interval_s: float = INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.say = say
        self.interval_s = interval_s
        self.clock = clock
        self._lock = threading.Lock()
        self._reasons: dict[str, _Reason] = {}

    def __call__(self, reason: str, text: str, what: str = "press") -> None:
        """One ignored press (or `what` else: a message): `reason` is a fixed word (never the
        press's own text: a flood of distinct payloads is one reason), `text` says what it
        was."""
        lines = []
        key = f"{what}/{reason}"
        with self._lock:
            now = self.clock()
            r = self._reasons.get(key)
            if r is None or (not r.held and now - r.said_at >= self.interval_s):
                self._reasons[key] = _Reason(said_at=now, what=what)
                lines.append(text)
            else:
                r.held += 1
                r.last = text
                lines += self._due(now)
        for line in lines:
            self.say(line)

    def flush(self, force: bool = False) -> None:
        """Say the counts whose second has passed (all of them with `force`, before exiting)."""
        with self._lock:
            lines = self._due(self.clock(), force)
        for line in lines:
            self.say(line)

    def _due(self, now: float, force: bool = False) -> list[str]:
        lines = []
        for r in self._reasons.values():
            if r.held and (force or now - r.said_at >= self.interval_s):
                n = plural(r.what, r.held)
                lines.append(f"{n} ignored in {now - r.said_at:.1f} s, the last: {r.last}")
                r.said_at, r.held = now, 0
        return lines
