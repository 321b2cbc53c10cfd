"""`lookout test [CHANNEL...]`: the user's way to prove a channel works (every enabled one, or the
ones named, through the sender's own delivery). Never run by a hook."""

from __future__ import annotations

import argparse
import os
import sys

from lookout import deliveries, paths, store, templates, words
from lookout.boundary import visible
from lookout.channels import registry
from lookout.commands import args, view
from lookout.config import files
from lookout.errors import LookoutError
from lookout.machine import make_intent

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from lookout.shapes import Channel, Intent


def declare(p: argparse.ArgumentParser) -> None:
    """Send a test notification through every enabled channel, or the ones named, and say how each
    went. Exits 1 when one failed."""
    p.add_argument(
        "channels", nargs="*", metavar="CHANNEL", help="channel names (default: every enabled one)"
    )
    args.project(p, "project directory whose .claude/lookout.toml applies")


def run(args: argparse.Namespace) -> int:
    return test_channels(os.path.abspath(args.project or os.getcwd()), args.channels)


def test_intent(project: str) -> Intent:
    now_ms = words.now_ms()
    intent = make_intent(
        "message",
        "lookout-test",
        now_ms,
        project=os.path.basename(project.rstrip("/")) or "lookout",
        cwd=project,
        summary="test notification",
        message="Test notification from lookout.",
    )
    intent["ts"] = store.rfc3339(now_ms)
    return intent


def test_channels(project: str, names: list[str]) -> int:
    cfg, pf = files.resolve(project)
    if pf is not None and pf.ignored is not None:
        print(view.project_file_line(pf), file=sys.stderr)
    available = cfg["channels"]
    chosen = _chosen(available, names)
    intent = test_intent(project)
    tasks = [(name, available[name], _message(name, available[name], intent)) for name in chosen]
    state_dir = paths.state_dir()
    failed = 0
    for (name, _ch, _msg), (result, detail, _ref) in zip(
        tasks, deliveries.run_parallel(tasks), strict=True
    ):
        print(f"{name}: {result} ({visible(detail)})")
        failed += result != "sent"
        try:
            deliveries.record(state_dir, intent, name, result, f"lookout test: {detail}")
        except OSError:
            pass  # the terminal already shows the result
    return 1 if failed else 0


def _chosen(available: dict[str, Channel], names: list[str]) -> list[str]:
    """The channels to test: those named (disabled or not), else every enabled one (saying
    which are left out)."""
    unknown = [n for n in names if n not in available]
    if unknown:
        raise LookoutError(
            f"unknown channel {', '.join(repr(n) for n in unknown)} "
            f"(configured: {', '.join(available) or 'none'})",
            hint="lookout check-config shows the config lookout reads",
        )
    chosen = names or [n for n, ch in available.items() if ch["enabled"]]
    disabled = [n for n, ch in available.items() if not ch["enabled"] and n not in chosen]
    if not available:
        raise LookoutError(
            "no channel to test: the config defines none",
            hint=f"add one: lookout channel add NAME --type {'|'.join(registry.NAMES)}",
        )
    if not chosen:
        first = disabled[0]
        raise LookoutError(
            f"every channel is disabled ({', '.join(disabled)})",
            hint=f"set enabled = true in [channels.{first}], or test it anyway: lookout test"
            f" {first}",
        )
    if disabled and not names:
        print(
            f"skipped {', '.join(disabled)} (disabled; `lookout test {disabled[0]}` tests it"
            " anyway)"
        )
    return chosen


def _message(name: str, ch: Channel, intent: Intent) -> dict[str, Any]:
    values = templates.values(intent, ch["content"])
    return {
        "title": f"{values['project']} · lookout test",
        "body": f"Notifications from lookout reach you through '{name}'.",
        "kind": "message",
        "intent": intent,
        "values": values,
        "update": False,
        "test": True,  # `lookout test`: a type may say so (a sound plays, never debounced)
    }
