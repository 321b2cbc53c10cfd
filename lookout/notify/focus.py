"""A desktop alert's Focus action (issue 13) and tmux focus: whether a Focus click still makes
sense, the bounded wait for it, the jump it makes, and whether the session's pane is in view.
The only part of notify that imports jump."""

from __future__ import annotations

import os
import select
import subprocess
import time

from lookout import store, words
from lookout.words import ATTENTION, ATTENTION_KINDS, ENDED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lookout.shapes import Intent


# A desktop alert's Focus action is waited for this long at most, and only while the episode
# (or, for a finished turn, the session's idle time) lasts.
FOCUS_WAIT_S = 1800.0
FOCUS_POLL_S = 0.5
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

    if not jump.reachable(snap):
        return None
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


def wait_focus(
    proc: subprocess.Popen[bytes],
    rest: bytes,
    intent: Intent,
    state_dir: str,
    mark: object,
    wait_s: float = FOCUS_WAIT_S,
    rid: str | None = None,
) -> str | None:
    """Wait for a click on one of the alert's actions, at most `wait_s` and only while the alert
    is current (and its request `rid`, if it answers one, still pending). Returns the action
    notify-send reported ("default": a click on Focus; "allow", "deny", "option-N")."""
    assert proc.stdout is not None and proc.stderr is not None
    fd = proc.stdout.fileno()
    buf = rest
    deadline = time.monotonic() + wait_s
    try:
        while b"\n" not in buf:
            if (
                (mark is not None and resolved(state_dir, intent, mark))
                or (rid is not None and not _pending(state_dir, rid))
                or time.monotonic() > deadline
            ):
                # SIGTERM, not SIGINT: notify-send then leaves the alert (or the "handled"
                # note that replaced it) where it is instead of closing it.
                proc.terminate()
                break
            if select.select([fd], [], [], FOCUS_POLL_S)[0]:
                chunk = os.read(fd, 4096)
                if not chunk:
                    break  # closed or expired without a click
                buf += chunk
    finally:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    action = buf.partition(b"\n")[0].decode("utf-8", "replace").strip() if b"\n" in buf else None
    return action


def _pending(state_dir: str, rid: str) -> bool:
    from lookout.remote import requests

    rec = requests.load(state_dir, rid)
    return rec is not None and requests.is_open(rec, words.now_ms())


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
    try:
        proc = subprocess.run(
            ["tmux", "list-clients", "-F", "#{pane_id}"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=2,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    if proc.returncode != 0:
        return False
    return pane in proc.stdout.decode("utf-8", "replace").split()
