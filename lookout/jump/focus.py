"""A desktop alert's Focus action (issue 13) and tmux focus: whether a Focus click still makes
sense, the jump it makes, and whether the session's pane is in view. The one module of jump the
sender and the desktop surface (which waits for the click: lookout.surfaces.desktop) use."""

from __future__ import annotations

from lookout import store
from lookout.platform.base import probe
from lookout.words import ATTENTION, ATTENTION_KINDS, ENDED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lookout.shapes import Intent


# The alerts that offer Focus: attention, and a finished turn.
FOCUS_KINDS = (*ATTENTION_KINDS, "done")


def focus_mark(state_dir: str, intent: Intent) -> object | None:
    """What must stay the same while a Focus click still makes sense: the episode of an
    attention alert, the turn of a finished one. None: no Focus for this alert (another kind, or
    the session lives nowhere lookout can switch to)."""
    if intent.get("kind") not in FOCUS_KINDS or intent.get("agent_id"):
        return None
    snap = store.read_session(state_dir, str(intent.get("session_id")))
    if snap is None:
        return None
    from lookout.jump import locate as jump

    if not jump.reachable(snap) or jump.shared(state_dir, snap) is not None:
        return None  # no Focus where it would land on another session's window
    if intent["kind"] == "done":
        return ("turn", (snap.get("turn") or {}).get("started_ms"))
    return ("episode", intent.get("episode"))


def resolved(state_dir: str, intent: Intent, mark: object) -> bool:
    snap = store.read_session(state_dir, str(intent.get("session_id")))
    if snap is None or snap.get("status") == ENDED:
        return True
    if intent.get("kind") == "done":
        return mark != ("turn", (snap.get("turn") or {}).get("started_ms"))
    return snap.get("status") != ATTENTION or mark != ("episode", snap.get("episode"))


def jump_to(intent: Intent, state_dir: str) -> str:
    """Switch to the alert's session (a click on Focus); what happened, for deliveries.jsonl."""
    from lookout.errors import LookoutError
    from lookout.jump import locate as jump

    try:
        landed = jump.jump_to(str(intent["session_id"]), state_dir=state_dir)
    except LookoutError as exc:
        return f"Focus: {exc}"
    on = f" on client {landed.client}" if landed.client else ""
    return f"Focus: {landed.via} {landed.target}{on}"


def pane_focused(pane: object) -> bool:
    """True only when tmux says `pane` is the active pane of the active window of an attached
    client. Anything unknown (no tmux, no pane, an error) means not focused: notify."""
    if not isinstance(pane, str) or not pane.startswith("%"):
        return False
    shown = probe(["tmux", "list-clients", "-F", "#{pane_id}"], 2)
    return shown is not None and pane in shown.split()
