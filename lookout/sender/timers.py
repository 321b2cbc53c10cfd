"""The sender's timers: what time passing alone can prove, recorded with no reader running. A
working session could turn `stuck` once `[sessions] stuck_after_s` passes with no sign of life,
and a usage limit lifts at its time (`limit_lifted`): at those moments the sender reconciles
those sessions through escalate.watch (lookout.silence judges, lookout.reconcile records and
notifies, as for a reader),
and the alert a transition asks for goes out from here.

A hook starts the sender when a session begins a turn (or fails on a limit), no sender runs and
some rule sends what the timers may find (config.sessions.timed_kinds); the sender keeps looking
while a session could still need it, then exits."""

from __future__ import annotations

import os

from lookout import store, words
from lookout.config.sessions import stuck_after_s, timed_kinds

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

# A session past its time but shown not stuck (a tool runs, the transcript grew) is looked at
# again after this long, not at every round.
RECHECK_MS = 2000


class Timers:
    """What the sender remembers between rounds: each session's next look."""

    def __init__(self, state_dir: str) -> None:
        self.state_dir = state_dir
        self.next: dict[str, int] = {}
        self.failed = ""  # the last failure logged (each one once, not every round)

    def look(self, now_ms: int | None = None) -> int | None:
        """Reconcile the sessions whose time has come; the earliest time one will need a look
        again, or None when time passing can prove nothing more about any session. A failure
        (an unreadable state directory, a snapshot nothing expected) never ends the sender,
        which has alerts to send: it is logged once and looked at again later."""
        now_ms = words.now_ms() if now_ms is None else now_ms
        try:
            soonest = self._look(now_ms)
        except (OSError, TimeoutError):
            return now_ms + RECHECK_MS  # an unreadable state directory for now: try again
        except Exception:
            import traceback

            failed = traceback.format_exc()
            if failed != self.failed:
                store.log_error(self.state_dir, f"sender timers: {failed}")
            self.failed = failed
            return now_ms + RECHECK_MS
        self.failed = ""
        return soonest

    def pending(self, now_ms: int | None = None) -> bool:
        """Whether some session may need a look (its time is known, or due now), from the
        snapshots alone, reconciling nothing: what a sender that let go of its lock asks, for
        a hook that found the lock still held (its ring may have come too late)."""
        try:
            return bool(self._times(words.now_ms() if now_ms is None else now_ms))
        except Exception:
            return False  # the round that fails logs it (Timers.look); never spin on it

    def _look(self, now_ms: int) -> int | None:
        from lookout.sender import escalate  # the sender's one way to reconcile

        due: list[str] = []
        soonest: int | None = None
        for sid, at in self._times(now_ms):
            at = max(at, self.next.get(sid, 0))
            if at <= now_ms:
                due.append(sid)
                self.next[sid] = now_ms + RECHECK_MS
                at = now_ms + RECHECK_MS
            soonest = at if soonest is None else min(soonest, at)
        if due:
            escalate.watch(self.state_dir, due)
        return soonest

    def _times(self, now_ms: int) -> list[tuple[str, int]]:
        """(session, when it next needs a look) of each session some rule may alert for; the
        remembered next looks of sessions gone are forgotten (bounded)."""
        from lookout import silence
        from lookout.config import cache

        cfg = cache.load_cached(self.state_dir, None)
        watch = silence.watch(self.state_dir, now_ms, stuck_after_s(cfg))
        found: list[tuple[str, int]] = []
        kinds_in: dict[object, frozenset[str]] = {}  # by session directory: asked once a look
        snapshots = _snapshots(self.state_dir)
        for snapshot in snapshots:
            at = silence.due_ms(snapshot, watch)
            cwd = snapshot.get("cwd")
            if cwd not in kinds_in:
                where = cwd if isinstance(cwd, str) else None
                kinds_in[cwd] = timed_kinds(cache.load_cached(self.state_dir, where))
            if at is not None and _counts(snapshot, kinds_in[cwd]):
                found.append((snapshot["session_id"], at))
        seen = {snapshot["session_id"] for snapshot in snapshots}
        self.next = {sid: at for sid, at in self.next.items() if sid in seen}
        return found


def _counts(snapshot: Mapping[str, Any], kinds: frozenset[str]) -> bool:
    """Whether the alert this session may come to is one some rule sends."""
    if snapshot.get("status") == words.WORKING:
        return "stuck" in kinds
    return "limit_lifted" in kinds


def _snapshots(state_dir: str) -> list[dict[str, Any]]:
    """The snapshots of sessions time may change: working, or waiting on an error."""
    directory = os.path.join(state_dir, store.SESSIONS)
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    found = []
    for name in names:
        if not name.endswith(".json") or name.startswith("."):
            continue
        snapshot = store.read_json(os.path.join(directory, name))
        if (
            isinstance(snapshot, dict)
            and isinstance(snapshot.get("session_id"), str)
            and snapshot.get("status") in (words.WORKING, words.ATTENTION)
        ):
            found.append(snapshot)
    return found
