"""`lookout interrupt SESSION`: stop a session's current turn, as its interrupt key (Esc) does in
its tmux pane (lookout.steer), and say what came of it."""

from __future__ import annotations

from lookout.commands.say import show
from lookout.steer import core


def interrupt(session: str, *, as_json: bool) -> int:
    return show(core.interrupt(session, source="terminal"), as_json)
