"""The `lookout` command: parse (commands/parser.py), then run the command's function under the
one error boundary (lookout/boundary.py). Each `_cmd_<name>` turns the parsed options into a call
of its command module, imported only when it runs, so `lookout status` never loads the
notification senders or the dashboard."""

from __future__ import annotations

import os
import sys

from lookout.boundary import guarded
from lookout.errors import LookoutError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from types import SimpleNamespace

    Command = Callable[[argparse.Namespace, argparse.ArgumentParser], int]

# `lookout status --line`, which a status bar runs every few seconds: what argparse makes of it,
# known without loading argparse (~5 ms with the re, enum and gettext it imports).
# tests/commands/test_main.py checks that argparse says the same.
STATUS_LINE = ["status", "--line"]
STATUS_LINE_ARGS: dict[str, object] = {
    "command": "status",
    "json": False,
    "line": True,
    "watch": False,
    "all": False,
    "fleet": False,
    "attention": False,
    "quiet": False,
    "project": None,
    "interval": None,
    "stale_after": 8 * 3600,
    "evidence": False,
}


def _cmd_status(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    return _status(args)


def _status(args: argparse.Namespace | SimpleNamespace) -> int:
    fmt = "json" if args.json else "line" if args.line else "watch" if args.watch else "table"
    if args.interval is not None and not args.watch:
        raise LookoutError(
            "--interval only goes with --watch", hint="lookout status --watch --interval 5"
        )
    if args.fleet:
        from lookout.commands.fleet import fleet_status

        return fleet_status(
            fmt=fmt,
            show_all=args.all,
            stale_after_s=args.stale_after,
            attention=args.attention,
            quiet=args.quiet,
            project=args.project,
        )
    from lookout.commands.status import status

    return status(
        fmt=fmt,
        show_all=args.all,
        interval=1.0 if args.interval is None else args.interval,
        stale_after_s=args.stale_after,
        attention=args.attention,
        quiet=args.quiet,
        project=args.project,
        evidence=args.evidence,
    )


def _cmd_tail(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.commands.tail import tail

    return tail(
        lines=args.lines,
        follow=args.follow,
        as_json=args.json,
        session=args.session,
        deliveries=args.deliveries,
    )


def _cmd_prune(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.commands.prune import prune

    return prune(older_than_s=args.older_than, dry_run=args.dry_run)


def _cmd_ack(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.commands.ack import ack

    return ack(args.session)


def _cmd_bridge(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.commands.bridge import bridge

    return bridge(once=args.once)


def _cmd_fleet(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.commands.fleet import forget

    return forget(args.host, force=args.force, dry_run=args.dry_run)


def _cmd_doctor(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.commands.doctor.report import doctor

    return doctor(project=args.project, as_json=args.json)


def _cmd_test(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.commands import channels

    return channels.test_channels(os.path.abspath(args.project or os.getcwd()), args.channels)


def _cmd_check_config(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.commands import channels

    return channels.check_config(os.path.abspath(args.project or os.getcwd()))


def _cmd_answer(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.commands.answer import answer

    return answer(
        session=args.session, decision=args.decision, options=args.option, as_json=args.json
    )


def _cmd_serve(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.commands.serve import serve

    return serve(
        bind=args.bind,
        port=args.port,
        fleet=args.fleet,
        url=args.url,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        token_only=args.token,
        rotate=args.rotate,
    )


def _cmd_jump(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.commands.jump import jump

    if args.json and not args.print:
        parser.error("--json goes with --print")
    return jump(args.session, client=args.client, print_only=args.print, as_json=args.json)


def _cmd_pick(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.commands.pick import pick

    return pick(client=args.client, print_only=args.print)


def _cmd_tmux_setup(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.commands.tmux_setup import tmux_setup

    return tmux_setup(
        apply=args.apply,
        remove=args.remove,
        file=args.file,
        jump_key=args.jump_key,
        pick_key=args.pick_key,
    )


def _cmd_explain(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.commands.explain import explain

    return explain(session=args.session, last=args.last, as_json=args.json)


def _cmd_report(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.commands.report import report

    return report(since_s=args.since, project=args.project, as_json=args.json)


def _cmd_suggest(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.commands.suggest import suggest

    return suggest(
        since_s=args.since,
        as_json=args.json,
        apply=args.apply,
        revert=args.revert,
        scope=args.scope,
    )


def _cmd_channel(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.channels import registry
    from lookout.commands import configure

    if args.action == "remove":
        return configure.channel_remove(args.name, dry_run=args.dry_run)
    dests = {registry.dest(o) for kind in registry.CHANNELS.values() for o in kind.OPTIONS}
    return configure.channel_add(
        args.name,
        kind=args.type,
        options={dest: getattr(args, dest) for dest in dests},
        content=args.content,
        enabled=not args.disabled,
        dry_run=args.dry_run,
    )


def _cmd_rule(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.commands import configure

    if args.action == "remove":
        return configure.rule_remove(args.index, dry_run=args.dry_run)
    return configure.rule_add(
        when=args.when,
        channels=args.channels,
        projects=args.projects,
        agents=args.agents,
        min_duration_s=args.min_duration,
        cooldown_s=args.cooldown,
        quiet_hours=args.quiet_hours,
        quiet_kinds=args.quiet_kinds,
        escalate_after_s=args.escalate_after,
        escalate_to=args.escalate_to,
        grace_s=args.grace_s,
        digest_s=args.digest_s,
        include_subagents=args.include_subagents,
        dry_run=args.dry_run,
    )


def _cmd_trust(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.commands import trust

    if args.list:
        return trust.list_trusted()
    directory = os.path.abspath(args.dir or os.getcwd())
    if args.remove:
        return trust.untrust(directory)
    return trust.trust(directory, yes=args.yes)


def _cmd_say(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.commands.say import say

    return say(args.session, args.text, via=args.via, as_json=args.json)


def _cmd_interrupt(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.commands.interrupt import interrupt

    return interrupt(args.session, as_json=args.json)


def _cmd_start(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.commands.start import start

    return start(
        args.project, agent=args.agent, prompt=args.prompt, wait_s=args.wait, as_json=args.json
    )


def _cmd_uninstall(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from lookout.install import cli as install_cli
    from lookout.install import plan as install

    return install.do_uninstall(install_cli.request(parser, args), install_cli.out)


COMMANDS: dict[str, Command] = {
    "status": _cmd_status,
    "tail": _cmd_tail,
    "prune": _cmd_prune,
    "ack": _cmd_ack,
    "bridge": _cmd_bridge,
    "fleet": _cmd_fleet,
    "doctor": _cmd_doctor,
    "test": _cmd_test,
    "check-config": _cmd_check_config,
    "answer": _cmd_answer,
    "jump": _cmd_jump,
    "pick": _cmd_pick,
    "tmux-setup": _cmd_tmux_setup,
    "explain": _cmd_explain,
    "report": _cmd_report,
    "suggest": _cmd_suggest,
    "channel": _cmd_channel,
    "rule": _cmd_rule,
    "serve": _cmd_serve,
    "trust": _cmd_trust,
    "say": _cmd_say,
    "interrupt": _cmd_interrupt,
    "start": _cmd_start,
    "uninstall": _cmd_uninstall,
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The declared parser, each command with its function as the `func` default (only
    `command`'s, when given)."""
    from lookout.commands import parser as declared

    parser = declared.build_parser(command)
    for name, sub in declared.subparsers(parser).items():
        sub.set_defaults(func=COMMANDS[name])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv == STATUS_LINE:
        # types.SimpleNamespace without importing `types` (~0.2 ms of every status line).
        namespace: type[SimpleNamespace] = type(sys.implementation)  # type: ignore[assignment]
        line = namespace(**STATUS_LINE_ARGS)
        return guarded(lambda: _status(line))
    # A command line that names its command parses the same with only that command declared.
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["status"])
    command: Command = args.func
    if args.command not in NO_POLLER:
        _poller()
    return guarded(lambda: command(args, parser))


# The commands that never start the Telegram poller: `uninstall` removes what it runs.
NO_POLLER = ("uninstall",)


def _poller() -> None:
    """Make sure the Telegram poller runs while it is wanted ([steer] on and a Telegram channel,
    as the hooks' config cache says: it is read again only after the config file changed), in
    a state directory that exists (a command never makes one for it). Never fails a command."""
    try:
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
