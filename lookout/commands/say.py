"""`lookout say SESSION TEXT`: send TEXT to a session as your next message (lookout.steer), and
say which way it went and what was delivered. Also how interrupt and start show an outcome."""

from __future__ import annotations

import json

from lookout import paths
from lookout.boundary import visible
from lookout.steer import core
from lookout.steer.shapes import Outcome


def say(session: str, text: str, *, via: str | None, as_json: bool) -> int:
    return show(core.say(session, text, via=via, source="terminal"), as_json)


def show(outcome: Outcome, as_json: bool) -> int:
    """The outcome: JSON as it is, or a few exact lines (every text visible-escaped)."""
    if as_json:
        print(json.dumps(outcome))
        return 0
    who = visible(outcome["session"])
    status = f" ({outcome['status']})" if outcome["status"] else ""
    if outcome["action"] == "start":
        print(f"started {outcome['agent']}: tmux {visible(outcome['target'])}")
        print(f"session: {who}{status}")
    else:
        if outcome["via"] == "socket":
            how = f"sent to its inbox socket {paths.tilde(outcome['target'])}"
        elif outcome["text"]:
            keys = "".join(f", then {k}" for k in outcome["keys"])
            how = f"typed into tmux pane {visible(outcome['target'])}{keys}"
        else:
            keys = ", ".join(outcome["keys"])
            how = f"{keys} pressed in tmux pane {visible(outcome['target'])}"
        print(f"{who}: {how}: {outcome['result']}{status}")
    if outcome["text"]:
        print(f"text: {visible(outcome['text'])}")
    if outcome["via"] == "socket":
        print(f"note: {outcome['framing']}")
    if outcome["note"]:
        print(f"note: {visible(outcome['note'])}")
    return 0
