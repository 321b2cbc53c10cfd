"""The `lookout` command: a table of the commands' names, each the name of the module that
declares and runs it (pip's commands_dict). A module is imported only when its command runs:
`lookout --help` lists the table, and `lookout status` never loads the notification senders or
the dashboard. Every command runs under the one error boundary (lookout/boundary.py).

A command module has `declare(parser)`, whose docstring is the command's description in its
--help (as a pip command's docstring is) and which adds its arguments (commands/args.py holds
what several commands share), and `run(args) -> int`."""

from __future__ import annotations

import sys

from lookout.boundary import guarded

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

# name -> its line in `lookout --help`, in that order. Its module is lookout.commands.<name>
# (a dash an underscore), or the one MODULES names.
COMMANDS: dict[str, str] = {
    "status": "show every session, the ones that need you first",
    "tail": "show recorded events as readable lines",
    "prune": "forget ended sessions",
    "ack": "clear an attention by hand (the dialog is gone but lookout cannot see it)",
    "bridge": "keep this host's sessions on the MQTT broker in [fleet]",
    "fleet": "manage the MQTT fleet (forget a retired host)",
    "doctor": "check the installation, config, state directory and channels",
    "test": "send a test notification through each channel (or the ones named)",
    "check-config": "validate the config file and say what is wrong",
    "answer": "allow or deny a waiting permission request (needs [remote] enabled)",
    "away": "say you are away from the screen (Codex then waits for an answer from afar), or back",
    "jump": "switch your tmux client to a session's pane (default: the one waiting longest)",
    "pick": "a tmux menu of the sessions, the ones waiting on you first",
    "tmux-setup": "tmux bindings: prefix a jumps, prefix A picks; the status-right snippet",
    "explain": "say what a session's last notifications did, and why one was not sent",
    "channel": "add or remove a notification channel in the config",
    "rule": "add or remove a notification rule in the config",
    "say": "send a message to a session as your next prompt ([steer])",
    "interrupt": "stop a session's current turn, as Esc does ([steer])",
    "start": "start a new session in a new tmux window in an allowed project ([steer])",
    "report": "how long sessions waited on you: episodes, total, median, p95, by project...",
    "suggest": "allow rules for the permission requests you approve again and again",
    "serve": "the live dashboard for a browser (phone, tablet, second screen)",
    "trust": "let a project's .claude/lookout.toml add channels (shows what it adds, asks)",
    "uninstall": "remove lookout's hooks (--purge: also its runtime, state and config)",
}
MODULES = {"doctor": "lookout.commands.doctor.report", "test": "lookout.commands.channels"}

# `lookout status --line`, which a status bar runs every few seconds: run without argparse
# (~5 ms with the re, enum and gettext it imports); status.LINE is what argparse makes of it.
STATUS_LINE = ["status", "--line"]


def module(name: str) -> str:
    """The module that declares and runs the command `name`."""
    return MODULES.get(name) or "lookout.commands." + name.replace("-", "_")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """`lookout`'s parser: every command by name and summary, and `command`'s own arguments
    (a command line that names `command` needs no other command's to parse or to explain)."""
    import importlib

    from lookout import paths, version
    from lookout.commands.args import Parser

    parser = Parser(
        prog="lookout",
        description="Which of your coding-agent sessions needs you: working, attention, idle, "
        "ended. Without a command: lookout status.",
        epilog=f"State: {paths.tilde(paths.state_dir())} (set LOOKOUT_STATE_DIR to change). "
        f"Config: {paths.tilde(paths.config_path())} (LOOKOUT_CONFIG).",
    )
    parser.add_argument("--version", action=version.Action)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, summary in COMMANDS.items():
        declared = sub.add_parser(name, help=summary)
        if name == command:
            declares = importlib.import_module(module(name)).declare
            declared.description = declares.__doc__  # pip's way: what --help says
            declares(declared)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line `argv`; None: this process's own (sys.argv), which a status line
    may then end at once."""
    program = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv == STATUS_LINE:
        from lookout.commands import status

        done = guarded(lambda: status.run(status.line()))
        if program:
            _end(done)
        return done
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    args = parser.parse_args(argv)
    if args.command is None:  # `lookout` alone is `lookout status`
        parser = build_parser("status")
        args = parser.parse_args(["status"])
    import importlib

    from lookout.commands.args import UsageError

    command = importlib.import_module(module(args.command))
    if args.command not in NO_POLLER:
        _poller()

    def run() -> int:
        try:
            done: int = command.run(args)
            return done
        except UsageError as exc:
            parser.error(str(exc))  # the usage, then `lookout: error: ...`; exits 2

    return guarded(run)


def _end(code: int) -> None:
    """End a status line's process without the interpreter's teardown, as runner.exit_now ends a
    hook's: freeing every module and object one by one is a fifth of the line's instructions,
    for memory the OS frees anyway. Safe: the line writes its files in `with` blocks, closed by
    now (tests/commands/test_main.py checks that none is left open), starts no thread and
    registers no atexit handler; a sender it starts runs on in its own session. Standard
    streams that cannot be flushed (the reader left) end the normal way, as before."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # ValueError: guarded closed stderr after a broken pipe
        return
    import posix

    posix._exit(code)


# The commands that never start the Telegram poller: `uninstall` removes what it runs.
NO_POLLER = ("uninstall",)


def _poller() -> None:
    """Make sure the Telegram poller runs while it is wanted ([steer] on and a Telegram channel,
    as the hooks' config cache says: it is read again only after the config file changed), in
    a state directory that exists (a command never makes one for it). Never fails a command."""
    try:
        import os

        from lookout import paths, spawn
        from lookout.config import cache

        state_dir = paths.state_dir()
        if not os.path.isdir(state_dir):
            return
        if cache.poller_wanted(state_dir):
            spawn.start_poller(state_dir)
    except Exception:  # noqa: S110 - the command runs whatever this finds
        pass


if __name__ == "__main__":
    raise SystemExit(main())
