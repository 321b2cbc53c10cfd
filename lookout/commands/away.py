"""`lookout away [on|off] [--for DURATION] [--json]`: say you are away from the screen, or back.
While away, Codex's permission requests wait for an answer from afar (the dashboard, Telegram,
`lookout answer`, ...) before Codex shows its own prompt; while present they go to its prompt at
once. Claude Code is the same either way (the first answer wins). Alone: what it is now."""

from __future__ import annotations

import json

from lookout import away, paths, words
from lookout.commands import args
from lookout.errors import LookoutError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def declare(p: argparse.ArgumentParser) -> None:
    """Say you are away from the screen (on) or back (off); alone, what it is now and until when.
    While away, Codex's permission requests wait up to [remote] wait_s for an answer from afar
    (the dashboard, Telegram, `lookout answer`...) before Codex shows its own prompt, and alerts
    are sent even to a focused pane (skip_when_focused). Turning it off hands every waiting
    request back to Codex's prompt at once. Claude Code is the same either way: its dialog and a
    remote answer race, the first one wins."""
    p.add_argument(
        "switch", nargs="?", choices=("on", "off"), help="on: you are away; off: you are back"
    )
    p.add_argument(
        "--for",
        dest="for_s",
        type=args.duration,
        metavar="DURATION",
        help="with on: off again by itself after this long (30m, 1h, 2h30m)",
    )
    args.json_flag(p, 'machine-readable: {"away", "since_ms", "until_ms", "source"}')


def run(ns: argparse.Namespace) -> int:
    if ns.for_s is not None and ns.switch != "on":
        raise args.UsageError("--for goes with on: lookout away on --for 1h")
    if ns.for_s is not None and ns.for_s <= 0:
        raise args.UsageError("--for needs a duration above zero: lookout away on --for 1h")
    state_dir = paths.state_dir()
    if ns.switch is None:
        state = away.read(state_dir)
        changed = True
    else:
        state, changed = turn(state_dir, ns.switch == "on", ns.for_s)
    if ns.json:
        print(json.dumps(state))
    else:
        print(describe(state, changed and ns.switch is not None))
    return 0


def turn(state_dir: str, on: bool, for_s: int | None) -> tuple[away.State, bool]:
    from lookout import store

    unsafe = store.unsafe_reason(state_dir)
    if unsafe is not None:
        raise LookoutError(
            f"refusing the state directory: {unsafe}",
            hint="point LOOKOUT_STATE_DIR at a directory of your own (or unset it)",
        )
    try:
        return away.turn(state_dir, on, source="terminal", for_s=for_s)
    except OSError as exc:
        raise LookoutError(
            f"cannot write {paths.tilde(away.path(state_dir))}: {exc}",
            hint="nothing changed; lookout doctor checks the state directory",
        ) from None


def describe(state: away.State, changed: bool) -> str:
    """What the switch is and does, in a line or two."""
    waits = " and ".join(titles())
    if state["away"]:
        return (
            f"away: {away.said(state)}\n{waits}: a permission request waits for an answer from"
            " afar (lookout answer, the dashboard, your alerts) before its own prompt;"
            " `lookout away off` when you are back"
        )
    if not changed:
        return f"away: {away.said(state)} already: {waits} asks at its own prompt at once"
    return (
        f"away: {away.said(state)}\n{waits}: a permission request goes to its own prompt at"
        " once; `lookout away on` when you leave the screen"
    )


def titles() -> list[str]:
    """The agents the switch makes wait, as their users know them."""
    from lookout.agents.registry import AGENTS

    return [AGENTS[name].TITLE for name in words.ANSWERED_WHEN_AWAY]
