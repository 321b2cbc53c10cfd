"""`lookout ack [SESSION]`: clear an attention by hand, for whatever no signal covers (a dialog
answered in a way lookout cannot see). Recorded as an `Ack` event, like any other transition."""

from __future__ import annotations

import argparse

from lookout import paths, reconcile
from lookout.boundary import visible
from lookout.commands import args
from lookout.errors import LookoutError
from lookout.sessions import Row, handle, label, load_sessions, resolve


def declare(p: argparse.ArgumentParser) -> None:
    """Clear a session's attention by hand, for a dialog you answered in a way no signal shows.
    Recorded as an `Ack` event. Without SESSION: the one session that waits on you."""
    args.session(p)


def run(args: argparse.Namespace) -> int:
    return ack(args.session)


def ack(session: str | None) -> int:
    state_dir = paths.state_dir()
    reconcile.quietly(state_dir)  # what a signal proves needs no ack
    recorded = load_sessions(state_dir)
    sessions = [s for s in recorded if s["status"] != "ended"]
    target = (
        resolve(recorded, session, "lookout ack")
        if session is not None
        else _pick(sessions, recorded)
    )
    name = label(target)
    if target["status"] != "attention":
        print(visible(f"{name}: nothing waits on you ({target['status']})"))
        return 0
    what = f"attention {target['reason']}"
    record = reconcile.ack(state_dir, target["session_id"])
    after = record["status"] if record else "?"
    summary = f" ({target['summary']})" if target["summary"] else ""
    # Titles and summaries are the client's and the payload's text: no control char goes out.
    print(visible(f"{name}: {what}{summary} → {after}"))
    return 0


def _pick(sessions: list[Row], recorded: list[Row]) -> Row:
    """Without SESSION: the one session waiting on you."""
    waiting = [s for s in sessions if s["status"] == "attention"]
    if len(waiting) == 1:
        return waiting[0]
    if not waiting:
        raise LookoutError("no session waits on you", hint="`lookout status` shows them all")
    names = ", ".join(handle(s, recorded) for s in waiting)
    raise LookoutError(
        f"{len(waiting)} sessions wait on you: {names}", hint="name one: lookout ack SESSION"
    )
