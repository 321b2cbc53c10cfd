"""`lookout channel add|remove`: a [channels.NAME] table in the user's config, written by
commands/configure.py. Each channel type declares its own flags (lookout/channels/)."""

from __future__ import annotations

import argparse

from lookout.channels import registry
from lookout.commands import args, configure


def declare(p: argparse.ArgumentParser) -> None:
    actions = args.config_table(
        p,
        "[channels.NAME]",
        " without editing TOML: the rest of the file (comments, order) stays as it is, the result"
        " is checked before it replaces the file, and an invalid change changes nothing.",
    )
    add = actions.add_parser(
        "add",
        help="add a channel",
        description="Append a [channels.NAME] table. Secrets stay out of the file and your"
        " shell history with --token-env / --url-env (the variable's name is stored).",
        epilog="examples:\n"
        + "\n".join(f"  {kind.EXAMPLE}" for kind in registry.CHANNELS.values()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add.add_argument("name", metavar="NAME", help="the channel's name (letters, digits, - and _)")
    add.add_argument("--type", required=True, choices=registry.NAMES, help="the kind of channel")
    registry.add_options(add)
    add.add_argument("--content", choices=("full", "summary", "none"), help="how much text to send")
    add.add_argument("--disabled", action="store_true", help="add it switched off")
    args.dry_run(add)
    remove = actions.add_parser(
        "remove", help="remove a channel", description="Cut the [channels.NAME] table out."
    )
    remove.add_argument("name", metavar="NAME")
    args.dry_run(remove)


def run(args: argparse.Namespace) -> int:
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
