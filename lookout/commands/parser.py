"""What `lookout` accepts: every command, option and argument type, declared in one place (like
httpie's cli/definition.py). Nothing here runs a command: commands/main.py gives each one its
function. `lookout uninstall` shares its options with install.py (install/cli.py)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from lookout import paths, version
from lookout.errors import LookoutError
from lookout.install import cli as install_cli
from lookout.words import STEER_AGENTS

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


def _count_arg(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return int(text)


def _project_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--project", metavar="DIR", default=None, help=f"{what} (default: the current directory)"
    )


_width: int | None = None


def help_width() -> int:
    """What argparse's help formatter would ask shutil.get_terminal_size for, asked once."""
    global _width
    if _width is None:
        try:
            columns = int(os.environ.get("COLUMNS", ""))
        except ValueError:
            columns = 0
        if columns <= 0:
            try:
                columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
            except (AttributeError, ValueError, OSError):
                columns = 0
        _width = (columns or 80) - 2
    return _width


class Parser(argparse.ArgumentParser):
    """An ArgumentParser that tells its help formatter the width. argparse makes a formatter on
    every add_argument, each asking the terminal (through shutil, which loads bz2 and lzma):
    ~10 ms of every `lookout status --line` a status bar runs."""

    def _get_formatter(self) -> argparse.HelpFormatter:
        return self.formatter_class(prog=self.prog, width=help_width())  # type: ignore[call-arg]


class _Unused:
    """Where build_parser(command) declares the other commands: accepts every declaration,
    keeps none (argparse's objects cost ~0.3 ms per option, `lookout status --line` runs
    every few seconds)."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: self


class _Only:
    """add_subparsers' action, registering only `command`'s parser (all when None)."""

    def __init__(self, action: Any, command: str | None) -> None:
        self._action = action
        self._command = command

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if self._command is None or name == self._command:
            return self._action.add_parser(name, **kwargs)
        return _Unused()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Every command's parser; with `command`, only that one's (for a command line naming it:
    neither its parsing nor its --help needs the others)."""
    parser = Parser(
        prog="lookout",
        description="Which of your coding-agent sessions needs you: working, attention, idle, "
        "ended. Without a command: lookout status.",
        epilog=f"State: {paths.tilde(paths.state_dir())} (set LOOKOUT_STATE_DIR to change). "
        f"Config: {paths.tilde(paths.config_path())} (LOOKOUT_CONFIG).",
    )
    parser.add_argument("--version", action=version.Action)
    sub = _Only(parser.add_subparsers(dest="command", metavar="COMMAND"), command)

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
        "--evidence",
        action="store_true",
        help="add an EVIDENCE column: what proved each status (hook, client, transcript,"
        " process, user) and `no hooks` for a session known from Claude Code's registry alone",
    )
    status.add_argument(
        "--fleet",
        action="store_true",
        help="every host's sessions, from the MQTT broker in [fleet] (see `lookout bridge`)",
    )
    status.add_argument(
        "--attention",
        action="store_true",
        help="only the sessions that need you; exit 0 if there is one, 1 if none (like grep)",
    )
    status.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print nothing (with --attention: exit code only)",
    )
    status.add_argument(
        "--project",
        metavar="GLOB",
        help="only these projects: a glob on the project name (api-*), or on its path when it"
        " has a / or starts with ~ (~/work/*)",
    )
    status.add_argument(
        "--interval",
        type=float,
        default=None,
        metavar="SECONDS",
        help="refresh period of --watch (1)",
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
    tail.add_argument(
        "-n", "--lines", type=_count_arg, default=20, metavar="N", help="how many (20)"
    )
    tail.add_argument("--json", action="store_true", help="print the stored JSON lines as they are")
    tail.add_argument(
        "session_arg",
        nargs="?",
        metavar="SESSION",
        help="only this session (an id or its start, a project or a title); -n counts its records",
    )
    tail.add_argument("--session", metavar="SESSION", help="the same as SESSION")
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

    ack = sub.add_parser(
        "ack",
        help="clear an attention by hand (the dialog is gone but lookout cannot see it)",
        description="Clear a session's attention by hand, for a dialog you answered in a way"
        " no signal shows. Recorded as an `Ack` event. Without SESSION: the one session that"
        " waits on you.",
    )
    ack.add_argument(
        "session",
        nargs="?",
        metavar="SESSION",
        help="a session id or its start, a project or a title",
    )

    bridge = sub.add_parser(
        "bridge",
        help="keep this host's sessions on the MQTT broker in [fleet]",
        description="Follow the state directory and publish each session's state to the MQTT"
        " broker named in [fleet] (retained, one topic per session; `online` with a Last Will),"
        " so `lookout status --fleet` on any host shows them. Runs until stopped; one bridge per"
        " state directory. Needs paho-mqtt (python3 install.py --bridge installs it).",
    )
    bridge.add_argument(
        "--once", action="store_true", help="publish the current state and exit (cron, CI)"
    )

    fleet = sub.add_parser(
        "fleet",
        help="manage the MQTT fleet (forget a retired host)",
        description="Manage what the MQTT broker in [fleet] holds for the fleet.",
    )
    fleet_actions = fleet.add_subparsers(dest="action", metavar="ACTION", required=True)
    forget = fleet_actions.add_parser(
        "forget",
        help="clear a retired host's retained topics, Home Assistant's included",
        description="Clear every retained topic of HOST on the broker (online, summary,"
        " sessions, Home Assistant discovery), so no viewer shows it any more. Needs a broker"
        " user that may write that host's topics (docs/fleet.md: the broker ACL).",
    )
    forget.add_argument("host", metavar="HOST", help="the host name, as `status --fleet` shows it")
    forget.add_argument(
        "--force", action="store_true", help="even while it says it is online (`bridge --once`)"
    )
    forget.add_argument("--dry-run", action="store_true", help="list the topics, clear nothing")

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

    answer = sub.add_parser(
        "answer",
        help="allow or deny a waiting permission request (needs [remote] enabled)",
        description="Answer a permission request that waits for a remote answer, as the"
        " dashboard's buttons do. Without arguments: list the requests still waiting, each with"
        " its id and everything that would run.",
    )
    answer.add_argument(
        "session",
        nargs="?",
        metavar="REQUEST_ID",
        help="the request's id as listed; on a terminal also a SESSION (an id or its start, a"
        " project or a title), after showing the request and asking",
    )
    answer.add_argument(
        "decision",
        nargs="?",
        choices=("allow", "deny", "always"),
        help="allow, deny, or always (allow and don't ask again; needs [remote] allow_always)",
    )
    answer.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="LABEL",
        help="a question's answer: one option label per question, in order",
    )
    answer.add_argument(
        "--json", action="store_true", help="machine-readable: a list with each full tool input"
    )

    jump = sub.add_parser(
        "jump",
        help="switch your tmux client to a session's pane (default: the one waiting longest)",
        description="Switch a tmux client to the pane a session runs in, across tmux sessions and"
        " windows, on the tmux server it was started in (kitty and WezTerm windows through their"
        " own CLIs). Without SESSION: the session that has waited longest for you, then the most"
        " recently idle; run again to go on to the next one.",
    )
    jump.add_argument(
        "session",
        nargs="?",
        metavar="SESSION",
        help="a session id or its start, a project or a title",
    )
    _client_option(jump)
    jump.add_argument(
        "--print",
        action="store_true",
        help="print the target (session:window.%%pane), switch nothing",
    )
    jump.add_argument("--json", action="store_true", help="with --print: the target as JSON")

    pick = sub.add_parser(
        "pick",
        help="a tmux menu of the sessions, the ones waiting on you first",
        description="Show a tmux menu (display-menu) of the sessions, the ones waiting on you"
        " first, with number keys; choosing one switches the menu's client to that session's"
        " pane. Sessions on another tmux server or outside tmux are listed but greyed out.",
    )
    _client_option(pick)
    pick.add_argument("--print", action="store_true", help="print the menu instead of showing it")

    setup = sub.add_parser(
        "tmux-setup",
        help="tmux bindings: prefix a jumps, prefix A picks; the status-right snippet",
        description="Print the tmux bindings (prefix a: jump to the session waiting longest,"
        " prefix A: pick one from a menu) and the status-right snippet for `status --line`;"
        " --apply keeps them in one marked block of ~/.tmux.conf (a backup first), --remove"
        " takes that block out again.",
    )
    action = setup.add_mutually_exclusive_group()
    action.add_argument("--apply", action="store_true", help="add or update the block in the file")
    action.add_argument("--remove", action="store_true", help="take the block out of the file")
    setup.add_argument(
        "--file", metavar="PATH", help="the tmux config file (default: ~/.tmux.conf)"
    )
    setup.add_argument("--jump-key", default="a", metavar="KEY", help="after the prefix (a)")
    setup.add_argument("--pick-key", default="A", metavar="KEY", help="after the prefix (A)")

    explain = sub.add_parser(
        "explain",
        help="say what a session's last notifications did, and why one was not sent",
        description="For a session's last notifications (a permission, a finished turn...):"
        " which channels got them, which failed, and which rule withheld one and why (quiet"
        " hours, min_duration_s, cooldown_s, ...). SESSION is an id or its start (lookout status"
        " shows it), a project or a title; without it, the latest session of the current"
        " directory, else the latest.",
    )
    explain.add_argument(
        "session",
        nargs="?",
        metavar="SESSION",
        help="a session id or its start, a project or a title",
    )
    explain.add_argument(
        "-n", "--last", type=_count_arg, default=5, metavar="N", help="how many notifications (5)"
    )
    explain.add_argument("--json", action="store_true", help="machine-readable output")

    _configure_commands(sub)
    _steer_commands(sub)

    # issue 26: the waiting ledger and the allow rules it suggests (commands/report, suggest)
    report = sub.add_parser(
        "report",
        help="how long sessions waited on you: episodes, total, median, p95, by project...",
        description="The waiting ledger: every dialog that waited on you (permission, question,"
        " plan, error...) and how long until it was answered, by project, reason, tool and agent;"
        " and how long sessions sat idle after finishing. Reads the rotated history too.",
    )
    report.add_argument(
        "--since", type=_duration_arg, default=7 * 86400, metavar="AGE", help="how far back (7d)"
    )
    report.add_argument("--project", metavar="GLOB", help="only projects matching GLOB")
    report.add_argument("--json", action="store_true", help="machine-readable output")
    suggest = sub.add_parser(
        "suggest",
        help="allow rules for the permission requests you approve again and again",
        description="Each Claude Code permission rule that would have spared you dialogs you"
        " approved (never wider than what you approved, never for destructive commands), with"
        " the asks and the waiting it would have removed. --apply ID adds one to this project's"
        " settings (backup, atomic); --revert ID takes it out again.",
    )
    suggest.add_argument(
        "--since", type=_duration_arg, default=30 * 86400, metavar="AGE", help="how far back (30d)"
    )
    suggest.add_argument("--json", action="store_true", help="machine-readable output")
    suggest_do = suggest.add_mutually_exclusive_group()
    suggest_do.add_argument("--apply", metavar="ID", help="add suggestion ID to permissions.allow")
    suggest_do.add_argument("--revert", metavar="ID", help="remove the rule --apply ID added")
    suggest.add_argument(
        "--scope",
        choices=("local", "project", "user"),
        default="local",
        help="with --apply: ./.claude/settings.local.json (local, default),"
        " ./.claude/settings.json (project) or ~/.claude/settings.json (user: never for a rule"
        " that runs code from the repository)",
    )

    serve = sub.add_parser(
        "serve",
        help="the live dashboard for a browser (phone, tablet, second screen)",
        description="Serve a live page of every session (and a small JSON API and event stream)"
        " from the state directory. Every request needs a sign-in: open a link it prints (or"
        " `lookout serve --url`) in each browser; a link works once, within 5 minutes.",
    )
    serve.add_argument(
        "--bind",
        metavar="ADDRESS",
        help="address to listen on (default 127.0.0.1; 0.0.0.0 for the network: add TLS)",
    )
    serve.add_argument("--port", type=int, help="TCP port (default 8787; 0: any free port)")
    serve.add_argument(
        "--fleet", action="store_true", help="serve every host of the MQTT fleet (lookout[fleet])"
    )
    serve.add_argument(
        "--url",
        action="store_true",
        help="print a one-time sign-in link (5 minutes) to the running dashboard and exit",
    )
    serve.add_argument(
        "--token", action="store_true", help="print the API token for scripts' Bearer header"
    )
    serve.add_argument(
        "--rotate", action="store_true", help="new token: sign out every browser, void every link"
    )
    serve.add_argument("--tls-cert", metavar="FILE", help="serve HTTPS with this PEM certificate")
    serve.add_argument("--tls-key", metavar="FILE", help="... and this PEM private key")

    trust = sub.add_parser(
        "trust",
        help="let a project's .claude/lookout.toml add channels (shows what it adds, asks)",
        description="A project's .claude/lookout.toml may only narrow or quiet your config"
        " until you trust it: this shows exactly what the file adds beyond that, asks, and"
        " records the file's path and the hash of its bytes in your state directory. A changed"
        " file is untrusted again.",
    )
    trust.add_argument(
        "dir", nargs="?", metavar="DIR", help="the project directory (default: the current one)"
    )
    trust.add_argument("--yes", action="store_true", help="trust without asking (for scripts)")
    what = trust.add_mutually_exclusive_group()
    what.add_argument("--list", action="store_true", help="list the trusted files")
    what.add_argument("--remove", action="store_true", help="stop trusting DIR's file")

    uninstall = sub.add_parser(
        "uninstall",
        help="remove lookout's hooks (--purge: also its runtime, state and config)",
        description="Remove lookout's hook entries from Claude Code's settings (and another"
        " agent's files with --agent), keeping everything else in them. The same as"
        " `python3 install.py --uninstall`.",
    )
    install_cli.add_options(uninstall, uninstall=True)
    return parser


def _client_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-c",
        "--client",
        metavar="CLIENT",
        help="the tmux client to switch (a name from `tmux list-clients`, e.g. /dev/pts/3;"
        " default: the one of this terminal, else the most recently active)",
    )


def _names(text: str) -> list[str]:
    """`permission,question` -> ["permission", "question"] (spaces allowed, empties dropped)."""
    return [part.strip() for part in text.split(",") if part.strip()]


def _channel_examples(channel: Any) -> str | None:
    """`channel add`'s epilog: a line per channel type (each type says its own)."""
    if isinstance(channel, _Unused):
        return None  # another command's parser: the channel types need not load
    from lookout.channels import registry

    return "examples:\n" + "\n".join(f"  {kind.EXAMPLE}" for kind in registry.CHANNELS.values())


def _channel_types(add: Any) -> None:
    """`--type` and the flags each channel type takes (lookout/channels/, loaded only for
    `channel` itself)."""
    if isinstance(add, _Unused):
        return
    from lookout.channels import registry

    add.add_argument("--type", required=True, choices=registry.NAMES, help="the kind of channel")
    registry.add_options(add)


def _configure_commands(sub: Any) -> None:
    config_file = paths.tilde(paths.config_path())
    channel = sub.add_parser(
        "channel",
        help="add or remove a notification channel in the config",
        description=f"Add or remove a [channels.NAME] table in {config_file} without editing"
        " TOML: the rest of the file (comments, order) stays as it is, the result is checked"
        " before it replaces the file, and an invalid change changes nothing.",
    )
    actions = channel.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser(
        "add",
        help="add a channel",
        description="Append a [channels.NAME] table. Secrets stay out of the file and your"
        " shell history with --token-env / --url-env (the variable's name is stored).",
        epilog=_channel_examples(channel),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add.add_argument("name", metavar="NAME", help="the channel's name (letters, digits, - and _)")
    _channel_types(add)
    add.add_argument("--content", choices=("full", "summary", "none"), help="how much text to send")
    add.add_argument("--disabled", action="store_true", help="add it switched off")
    add.add_argument("--dry-run", action="store_true", help="print the diff, change nothing")
    remove = actions.add_parser(
        "remove", help="remove a channel", description="Cut the [channels.NAME] table out."
    )
    remove.add_argument("name", metavar="NAME")
    remove.add_argument("--dry-run", action="store_true", help="print the diff, change nothing")

    rule = sub.add_parser(
        "rule",
        help="add or remove a notification rule in the config",
        description=f"Add or remove a [[rules]] table in {config_file} (what is sent where),"
        " checked like `channel`.",
    )
    actions = rule.add_subparsers(dest="action", metavar="ACTION", required=True)
    radd = actions.add_parser(
        "add",
        help="add a rule",
        description="Append a [[rules]] table: send the kinds in --when to the channels in"
        " --channels.",
        epilog="kinds: permission question plan elicitation input error (Claude waits for you),"
        " done, idle, subagent_done, session_start, session_end, message, resolved",
    )
    radd.add_argument(
        "--when", type=_names, required=True, metavar="KIND,...", help="the kinds to send"
    )
    radd.add_argument(
        "--channels", type=_names, required=True, metavar="NAME,...", help="where to send them"
    )
    radd.add_argument("--projects", type=_names, metavar="GLOB,...", help="only these projects")
    radd.add_argument("--agents", type=_names, metavar="AGENT,...", help="claude, codex")
    radd.add_argument(
        "--min-duration", type=_duration_arg, metavar="DURATION", help="skip shorter turns (30s)"
    )
    radd.add_argument(
        "--cooldown", type=_duration_arg, metavar="DURATION", help="quiet per session after a send"
    )
    radd.add_argument("--quiet-hours", metavar="HH:MM-HH:MM", help="local time, may wrap midnight")
    radd.add_argument("--quiet-kinds", type=_names, metavar="KIND,...", help="muted then")
    radd.add_argument("--escalate-after", type=_duration_arg, metavar="DURATION")
    radd.add_argument("--escalate-to", type=_names, metavar="NAME,...")
    radd.add_argument(
        "--grace-s",
        type=_duration_arg,
        metavar="DURATION",
        help="remote channels hold an attention alert this long; answered meanwhile: not sent",
    )
    radd.add_argument(
        "--digest-s",
        type=_duration_arg,
        metavar="DURATION",
        help="a channel's attention alerts within this window: one message (not with --grace-s)",
    )
    radd.add_argument(
        "--include-subagents", action="store_true", help="also events from inside subagents"
    )
    radd.add_argument("--dry-run", action="store_true", help="print the diff, change nothing")
    rremove = actions.add_parser(
        "remove",
        help="remove a rule",
        description="Cut rules[N] (numbered from 0 in file order) out.",
    )
    rremove.add_argument("index", type=int, metavar="N")
    rremove.add_argument("--dry-run", action="store_true", help="print the diff, change nothing")


# issue 33: steering sessions (lookout.steer): say, interrupt, start.
_STEER_NOTE = " Needs [steer] enabled = true in your own config (docs/steer.md)."


def _steer_commands(sub: Any) -> None:
    say = sub.add_parser(
        "say",
        help="send a message to a session as your next prompt ([steer])",
        description="Send TEXT to SESSION as your next message: typed into its tmux pane (then"
        " Enter), else, for Claude Code, written to its inbox socket (shown to the model as a"
        " message from another Claude session). Never into an open dialog; to a working"
        " session only where the agent queues it. Says which way it went and what was"
        " delivered." + _STEER_NOTE,
    )
    say.add_argument(
        "session", metavar="SESSION", help="a session id or its start, a project or a title"
    )
    say.add_argument(
        "text", metavar="TEXT", help="the message (newlines allowed where the agent keeps them)"
    )
    say.add_argument(
        "--via",
        choices=("pane", "socket"),
        help="pane: type into its tmux pane; socket: Claude Code's inbox (default: the pane when"
        " lookout knows it, else the socket)",
    )
    say.add_argument("--json", action="store_true", help="the outcome as JSON")

    interrupt = sub.add_parser(
        "interrupt",
        help="stop a session's current turn, as Esc does ([steer])",
        description="Press the agent's interrupt key (Esc) in SESSION's tmux pane to stop its"
        " current turn, and say whether it stopped. Claude Code's inbox socket has no way to"
        " interrupt: this needs the pane." + _STEER_NOTE,
    )
    interrupt.add_argument(
        "session", metavar="SESSION", help="a session id or its start, a project or a title"
    )
    interrupt.add_argument("--json", action="store_true", help="the outcome as JSON")

    start = sub.add_parser(
        "start",
        help="start a new session in a new tmux window in an allowed project ([steer])",
        description="Start the agent's own program in a new tmux window whose working directory"
        " is PROJECT (one of [steer] projects), in the tmux session lookout runs in, else in a"
        " session named `lookout` on the default tmux server; print its SESSION once its first"
        " hook arrives." + _STEER_NOTE,
    )
    start.add_argument("project", metavar="PROJECT", help="the project's directory")
    start.add_argument(
        "--agent", choices=STEER_AGENTS, help="which agent (default: the first of [steer] agents)"
    )
    start.add_argument("--prompt", metavar="TEXT", help="its first message")
    start.add_argument(
        "--wait",
        type=_duration_arg,
        default=30,
        metavar="DURATION",
        help="how long to wait for its first hook (30s)",
    )
    start.add_argument("--json", action="store_true", help="the outcome as JSON")


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Each command's own parser, by name."""
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)
