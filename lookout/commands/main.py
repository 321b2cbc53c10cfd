"""The `lookout` command and install.py: one argparse parser for every command's options, and one
error boundary. A LookoutError prints `error:` + `hint:` (exit 1); Ctrl-C exits 130; anything else
goes with its traceback to errors.log and the user gets one line (exit 3).

Commands live in their own modules as functions taking typed arguments; they are imported only
when they run, so `lookout status` never loads the installer or the notification senders."""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable, Sequence

from lookout import __version__, paths, store
from lookout.errors import LookoutError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lookout.install import Options

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(text: str) -> int:
    """Seconds in `7d`, `12h`, `1h30m`, `45s` or a bare number of seconds."""
    text = text.strip().lower()
    if text.isdigit():
        return int(text)
    total, number = 0, ""
    for ch in text:
        if ch.isdigit():
            number += ch
        elif ch in _UNITS and number:
            total += int(number) * _UNITS[ch]
            number = ""
        else:
            raise LookoutError(
                f"invalid duration {text!r}", hint="use a number with a unit: 30s, 15m, 12h, 7d"
            )
    if number:
        raise LookoutError(f"invalid duration {text!r}: {number} has no unit", hint="e.g. 7d")
    return total


def _duration_arg(text: str) -> int:
    try:
        return parse_duration(text)
    except LookoutError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _project_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--project", metavar="DIR", default=None, help=f"{what} (default: the current directory)"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lookout",
        description="Which of your coding-agent sessions needs you: working, attention, idle, "
        "ended. Without a command: lookout status.",
        epilog=f"State: {paths.tilde(paths.state_dir())} (set LOOKOUT_STATE_DIR to change). "
        f"Config: {paths.tilde(paths.config_path())} (LOOKOUT_CONFIG).",
    )
    parser.add_argument("--version", action="version", version=f"lookout {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    status = sub.add_parser(
        "status",
        help="show every session, the ones that need you first",
        description="Show every recorded session, the ones waiting on you first. Ended sessions "
        "are hidden unless --all; a session whose agent process is gone is shown as ended.",
    )
    shape = status.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="machine-readable output")
    shape.add_argument("--line", action="store_true", help="one short line for a status bar")
    shape.add_argument("--watch", action="store_true", help="refresh in place until Ctrl-C")
    status.add_argument("--all", action="store_true", help="include ended sessions")
    status.add_argument(
        "--interval", type=float, default=1.0, metavar="SECONDS", help="refresh period of --watch"
    )
    status.add_argument(
        "--stale-after",
        type=_duration_arg,
        default=8 * 3600,
        metavar="DURATION",
        help="dim sessions with no event for this long (default 8h)",
    )

    tail = sub.add_parser(
        "tail",
        help="show recorded events as readable lines",
        description="Print the last events of events.jsonl, oldest first; -f keeps following "
        "across rotation.",
    )
    tail.add_argument("-f", "--follow", action="store_true", help="keep printing new events")
    tail.add_argument("-n", "--lines", type=int, default=20, metavar="N", help="how many (20)")
    tail.add_argument("--json", action="store_true", help="print the raw JSON lines")
    tail.add_argument("--session", metavar="ID", help="only this session (a prefix is enough)")
    tail.add_argument(
        "--deliveries", action="store_true", help="show notification deliveries instead"
    )

    prune = sub.add_parser(
        "prune",
        help="forget ended sessions",
        description="Remove ended sessions (and those whose process is gone) from the snapshot. "
        "events.jsonl is left as it is; it is bounded by rotation.",
    )
    prune.add_argument(
        "--older-than",
        type=_duration_arg,
        default=7 * 86400,
        metavar="DURATION",
        help="only sessions whose last event is older than this (default 7d; 0 for all)",
    )
    prune.add_argument("--dry-run", action="store_true", help="say what would go, remove nothing")

    doctor = sub.add_parser(
        "doctor",
        help="check the installation, config, state directory and channels",
        description="Check lookout's installation, config, state directory and notification"
        " channels. Changes nothing; exits 1 when something is broken.",
    )
    _project_option(doctor, "project whose .claude settings to check")
    doctor.add_argument("--json", action="store_true", help="machine-readable output")

    test = sub.add_parser(
        "test",
        help="send a test notification through each channel (or the ones named)",
        description="Send a test notification through every enabled channel, or the ones named,"
        " and say how each went. Exits 1 when one failed.",
    )
    test.add_argument(
        "channels", nargs="*", metavar="CHANNEL", help="channel names (default: every enabled one)"
    )
    _project_option(test, "project directory whose .claude/lookout.toml applies")

    check = sub.add_parser(
        "check-config",
        help="validate the config file and say what is wrong",
        description="Validate the notification config (and the project's .claude/lookout.toml)"
        " with errors that name the file, the key and what was expected.",
    )
    _project_option(check, "project directory whose .claude/lookout.toml applies")

    uninstall = sub.add_parser(
        "uninstall",
        help="remove lookout's hooks (--purge: also its runtime, state and config)",
        description="Remove lookout's hook entries from Claude Code's settings (and another"
        " agent's files with --agent), keeping everything else in them. The same as"
        " `python3 install.py --uninstall`.",
    )
    _install_options(uninstall, uninstall=True)
    return parser


def _install_options(p: argparse.ArgumentParser, *, uninstall: bool) -> None:
    p.add_argument(
        "--agent",
        choices=("claude", "codex", "gemini", "copilot", "opencode", "cursor", "all"),
        help=f"which coding agent to {'uninstall' if uninstall else 'install'} for"
        " (default: claude)",
    )
    if not uninstall:
        p.add_argument(
            "--codex-notify",
            action="store_true",
            help="Codex: set the legacy `notify` program in config.toml instead of hooks"
            " (automatic for Codex older than 0.124.0)",
        )
    p.add_argument(
        "--scope",
        choices=("user", "project", "local"),
        help="which settings file to edit (default: user)",
    )
    p.add_argument(
        "--project", metavar="DIR", help="project for --scope project|local (default: .)"
    )
    p.add_argument("--settings", metavar="FILE", help="edit this settings file instead of a scope")
    if not uninstall:
        p.add_argument(
            "--python",
            metavar="PATH",
            help="run the hooks with this interpreter (it must have tomli-w)"
            " instead of creating a virtual environment",
        )
    p.add_argument("--dry-run", action="store_true", help="print the diff, change nothing")
    if not uninstall:
        p.add_argument("--uninstall", action="store_true", help="remove lookout's hook entries")
    p.add_argument(
        "--purge",
        action="store_true",
        help=("with --uninstall: " if not uninstall else "")
        + "clear every scope and remove the runtime, state and config",
    )


def build_install_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="install.py",
        description=INSTALL_DESCRIPTION,
        epilog=INSTALL_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _install_options(p, uninstall=False)
    p.add_argument("--version", action="version", version=f"lookout {__version__}")
    return p


def _install_request(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Options:
    codex_notify = getattr(args, "codex_notify", False)
    if args.settings and (args.scope or args.project):
        parser.error("--settings replaces --scope/--project")
    if codex_notify and args.agent == "claude":
        parser.error("--codex-notify goes with --agent codex or all")
    agent = args.agent or ("codex" if codex_notify else "claude")
    if agent not in ("claude", "all") and (args.scope or args.project or args.settings):
        parser.error("--scope/--project/--settings are for Claude Code (--agent claude or all)")
    from lookout.install import Options

    return Options(
        agent=agent,
        scope=args.scope or "user",
        project=args.project,
        settings=args.settings,
        python=getattr(args, "python", None),
        codex_notify=codex_notify,
        dry_run=args.dry_run,
        purge=args.purge,
    )


def _out(line: str) -> None:
    print(line, flush=True)


def install_main(argv: Sequence[str] | None = None) -> int:
    """install.py: install, or with --uninstall take lookout out again."""
    parser = build_install_parser()
    args = parser.parse_args(argv)
    if args.purge and not args.uninstall:
        parser.error("--purge only goes with --uninstall")
    opts = _install_request(parser, args)
    from lookout import install

    if args.uninstall:
        return guarded(lambda: install.do_uninstall(opts, _out))
    return guarded(lambda: install.do_install(opts, _out))


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["status"])
    return guarded(lambda: _run(parser, args))


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    command = args.command
    if command == "status":
        from lookout.commands.status import status

        fmt = "json" if args.json else "line" if args.line else "watch" if args.watch else "table"
        return status(
            fmt=fmt, show_all=args.all, interval=args.interval, stale_after_s=args.stale_after
        )
    if command == "tail":
        from lookout.commands.tail import tail

        return tail(
            lines=args.lines,
            follow=args.follow,
            as_json=args.json,
            session=args.session,
            deliveries=args.deliveries,
        )
    if command == "prune":
        from lookout.commands.prune import prune

        return prune(older_than_s=args.older_than, dry_run=args.dry_run)
    if command == "doctor":
        from lookout.commands.doctor import doctor

        return doctor(project=args.project, as_json=args.json)
    if command in ("test", "check-config"):
        import os

        from lookout.commands import channels

        project = os.path.abspath(args.project or os.getcwd())
        if command == "test":
            return channels.test_channels(project, args.channels)
        return channels.check_config(project)
    if command == "uninstall":
        from lookout import install

        return install.do_uninstall(_install_request(parser, args), _out)
    raise AssertionError(f"unhandled command {command!r}")  # the parser knows every command


def guarded(command: Callable[[], int]) -> int:
    """The one error boundary of every command line."""
    try:
        return command()
    except LookoutError as exc:
        print(f"error: {exc}", file=sys.stderr)
        if exc.hint:
            print(f"hint: {exc.hint}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `lookout tail | head`: the reader left; not an error worth a traceback.
        sys.stderr.close()
        return 0
    except Exception as exc:
        state_dir = paths.state_dir()
        store.log_error(state_dir, f"lookout {' '.join(sys.argv[1:])}\n{traceback.format_exc()}")
        print(f"error: unexpected {type(exc).__name__}: {exc}", file=sys.stderr)
        print(
            f"hint: the details are in {paths.tilde(paths.state_dir())}/{store.ERRORS};"
            " please report it",
            file=sys.stderr,
        )
        return 3


INSTALL_DESCRIPTION = """\
Install lookout: set up its runtime (a private virtual environment under
$LOOKOUT_HOME, default ~/.local/share/lookout), put the `lookout` command in
~/.local/bin, write a default config if there is none, and merge one hook
entry per Claude Code event into a settings file (a backup first, an atomic
write, everything else in the file kept as it was). With --agent codex, the
same for OpenAI Codex: its hooks into $CODEX_HOME/hooks.json (default
~/.codex), or, for a Codex older than 0.124.0, its `notify` program in
$CODEX_HOME/config.toml (only that setting changes). With --agent gemini,
copilot, opencode or cursor, the same for that agent: ~/.gemini/settings.json,
$COPILOT_HOME/hooks/lookout.json, ~/.config/opencode/plugin/lookout.js or
~/.cursor/hooks.json (see docs/agents.md)."""

INSTALL_EPILOG = """\
scopes:
  user     ~/.claude/settings.json ($CLAUDE_CONFIG_DIR/settings.json if set)
  project  DIR/.claude/settings.json (shared with the repository)
  local    DIR/.claude/settings.local.json (this machine only)

examples:
  python3 install.py                      install for every session of this user
  python3 install.py --dry-run            show the settings diff, write nothing
  python3 install.py --scope local --project ~/src/app
  python3 install.py --agent all          Claude Code, Codex and the other agents set up here
  python3 install.py --agent gemini       Gemini CLI only
  python3 install.py --agent codex --codex-notify
                                          Codex through its legacy notify setting
  python3 install.py --uninstall          remove lookout's hooks (keeps the runtime)
  python3 install.py --uninstall --purge  also remove runtime, command, state and config"""


if __name__ == "__main__":
    raise SystemExit(main())
