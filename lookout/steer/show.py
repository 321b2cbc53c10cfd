"""An Outcome as the few exact lines every text surface shows (the terminal, Telegram): which
session, which way, what came of it, and what was delivered, every text visible-escaped."""

from __future__ import annotations

from lookout import paths
from lookout.boundary import visible
from lookout.steer.shapes import Outcome


def lines(outcome: Outcome) -> list[str]:
    who = visible(outcome["session"])
    status = f" ({outcome['status']})" if outcome["status"] else ""
    out = []
    if outcome["action"] == "start":
        out.append(f"started {outcome['agent']}: tmux {visible(outcome['target'])}")
        out.append(f"session: {who}{status}")
    else:
        if outcome["via"] == "socket":
            how = f"sent to its inbox socket {paths.tilde(outcome['target'])}"
        elif outcome["text"]:
            keys = "".join(f", then {k}" for k in outcome["keys"])
            how = f"typed into tmux pane {visible(outcome['target'])}{keys}"
        else:
            keys = ", ".join(outcome["keys"])
            how = f"{keys} pressed in tmux pane {visible(outcome['target'])}"
        out.append(f"{who}: {how}: {outcome['result']}{status}")
    if outcome["text"]:
        out.append(f"text: {visible(outcome['text'])}")
    if outcome["via"] == "socket":
        out.append(f"note: {outcome['framing']}")
    if outcome["note"]:
        out.append(f"note: {visible(outcome['note'])}")
    return out
