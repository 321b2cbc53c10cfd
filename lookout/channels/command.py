"""A command: a program of yours, run without a shell, each argv item rendered from the alert on
its own ({title}, {project}, ...) and the texts also in LOOKOUT_TITLE, LOOKOUT_BODY and
LOOKOUT_KIND. Local: it may show a dialog nobody can answer (print mode), a phone may not."""

from __future__ import annotations

import os

from lookout import templates
from lookout.channels import base

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from lookout.channels.base import Doctor, Finding, Message, Option, Outcome
    from lookout.config.check import Checker, KeyPath
    from lookout.shapes import Channel

    class Command(Channel):
        argv: list[str]  # the program and its arguments, each a template


def argv_arg(text: str) -> list[str]:
    """`--command 'PROGRAM ARGS'`: split as a shell would, run by none."""
    import argparse
    import shlex

    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"cannot split {text!r}: {exc}") from None
    if not words:
        raise argparse.ArgumentTypeError("expected a program and its arguments")
    return words


NAME = "command"
KEYS = ("argv",)
SECRETS = ("argv",)
TIMEOUT_MS = 10000
REMOTE = False
UPDATABLE = False
LOUD = False
ANSWERS = None
STEERS = False
FOCUS = False
OPTIONS: tuple[Option, ...] = (
    {"flag": "--command", "key": "argv", "dest": "argv", "type": argv_arg,
     "metavar": "'PROGRAM ARGS'",
     "help": "what to run, split like a shell would (no shell runs it)"},
)  # fmt: skip
EXAMPLE = "lookout channel add log --type command --command 'logger -t lookout {title}'"

replace = base.cannot_replace
withdraw = base.cannot_withdraw
add_buttons = base.cannot_add_buttons
inspect = base.nothing_to_inspect
warnings = base.env_warnings


def check(c: Checker, path: KeyPath, raw: dict[str, Any], ch: Command) -> None:
    argv = base.required_strings(c, path, raw, "argv", "the program and its arguments, no shell")
    for i, arg in enumerate(argv):
        try:
            templates.parse(arg, templates.ARGV_PLACEHOLDERS)
        except ValueError as exc:
            c.error((*path, "argv", i), str(exc))
    ch["argv"] = argv


def send(ch: Command, msg: Message, timeout_s: float) -> Outcome:
    from lookout.platform.base import run

    values = {**msg["values"], "title": msg["title"], "body": msg["body"]}
    # Each argv item is rendered on its own and passed as one argument: no shell ever sees it.
    argv = [templates.render(arg, values, templates.ARGV_PLACEHOLDERS) for arg in ch["argv"]]
    env = {
        **os.environ,
        "LOOKOUT_TITLE": msg["title"],
        "LOOKOUT_BODY": msg["body"],
        "LOOKOUT_KIND": msg["kind"],
    }
    run(argv, timeout_s, env=env)
    return "sent", f"{os.path.basename(argv[0])} exited 0", None


def doctor(used: dict[str, Any], ctx: Doctor) -> list[Finding]:
    """Each command's program found (doctor runs none)."""
    import shutil

    out: list[Finding] = []
    for name, ch in used.items():
        exe = (ch.get("argv") or [""])[0]
        found = exe if os.path.isabs(exe) and os.access(exe, os.X_OK) else shutil.which(exe)
        if found:
            out.append((name, base.OK, f"command {found}", None))
        else:
            out.append((name, base.WARN, f"command {exe!r} not found on PATH", None))
    return out
