"""`lookout ack [SESSION]`: clear an attention by hand, for whatever no signal covers (a dialog
answered in a way lookout cannot see). Recorded as an `Ack` event, like any other transition."""

from __future__ import annotations

from lookout import paths, reconcile
from lookout.commands.status import handle
from lookout.errors import LookoutError
from lookout.sessions import Row, load_sessions


def ack(session: str | None) -> int:
    state_dir = paths.state_dir()
    reconcile.quietly(state_dir)  # what a signal proves needs no ack
    sessions = [s for s in load_sessions(state_dir) if s["status"] != "ended"]
    target = _pick(session, sessions)
    name = handle(target, sessions)
    if target["status"] != "attention":
        print(f"{name}: nothing waits on you ({target['status']})")
        return 0
    what = f"attention {target['reason']}"
    record = reconcile.ack(state_dir, target["session_id"])
    after = record["status"] if record else "?"
    summary = f" ({target['summary']})" if target["summary"] else ""
    print(f"{name}: {what}{summary} → {after}")
    return 0


def _pick(wanted: str | None, sessions: list[Row]) -> Row:
    waiting = [s for s in sessions if s["status"] == "attention"]
    if wanted is None:
        if len(waiting) == 1:
            return waiting[0]
        if not waiting:
            raise LookoutError("no session waits on you", hint="`lookout status` shows them all")
        names = ", ".join(handle(s, sessions) for s in waiting)
        raise LookoutError(
            f"{len(waiting)} sessions wait on you: {names}", hint="name one: lookout ack SESSION"
        )
    matches = [
        s
        for s in sessions
        if s["session_id"].startswith(wanted) or wanted in (s["project"], s["title"])
    ]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise LookoutError(
            f"no session {wanted!r}",
            hint="give a project name or the start of a session id (`lookout status --json`)",
        )
    names = ", ".join(s["session_id"][:8] for s in matches)
    raise LookoutError(
        f"{wanted!r} names {len(matches)} sessions: {names}",
        hint="give the start of a session id instead",
    )
