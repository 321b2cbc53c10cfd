"""`lookout rule add|remove`: a [[rules]] table in the user's config (what is sent where),
written by commands/configure.py."""

from __future__ import annotations

import argparse

from lookout.commands import args, configure

KINDS = (
    "kinds: permission question plan elicitation input error (Claude waits for you), done, idle,"
    " subagent_done, session_start, session_end, message, resolved"
)


def declare(p: argparse.ArgumentParser) -> None:
    actions = args.config_table(p, "[[rules]]", " (what is sent where), checked like `channel`.")
    add = actions.add_parser(
        "add",
        help="add a rule",
        description="Append a [[rules]] table: send the kinds in --when to the channels in"
        " --channels.",
        epilog=KINDS,
    )
    add.add_argument(
        "--when", type=args.names, required=True, metavar="KIND,...", help="the kinds to send"
    )
    add.add_argument(
        "--channels", type=args.names, required=True, metavar="NAME,...", help="where to send them"
    )
    add.add_argument("--projects", type=args.names, metavar="GLOB,...", help="only these projects")
    add.add_argument("--agents", type=args.names, metavar="AGENT,...", help="claude, codex")
    add.add_argument(
        "--min-duration", type=args.duration, metavar="DURATION", help="skip shorter turns (30s)"
    )
    add.add_argument(
        "--cooldown", type=args.duration, metavar="DURATION", help="quiet per session after a send"
    )
    add.add_argument("--quiet-hours", metavar="HH:MM-HH:MM", help="local time, may wrap midnight")
    add.add_argument("--quiet-kinds", type=args.names, metavar="KIND,...", help="muted then")
    add.add_argument("--escalate-after", type=args.duration, metavar="DURATION")
    add.add_argument("--escalate-to", type=args.names, metavar="NAME,...")
    add.add_argument(
        "--grace-s",
        type=args.duration,
        metavar="DURATION",
        help="remote channels hold an attention alert this long; answered meanwhile: not sent",
    )
    add.add_argument(
        "--digest-s",
        type=args.duration,
        metavar="DURATION",
        help="a channel's attention alerts within this window: one message (not with --grace-s)",
    )
    add.add_argument(
        "--include-subagents", action="store_true", help="also events from inside subagents"
    )
    args.dry_run(add)
    remove = actions.add_parser(
        "remove",
        help="remove a rule",
        description="Cut rules[N] (numbered from 0 in file order) out.",
    )
    remove.add_argument("index", type=int, metavar="N")
    args.dry_run(remove)


def run(args: argparse.Namespace) -> int:
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
