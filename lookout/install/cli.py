"""install.py's command line (and the options `lookout uninstall` shares with it): the parser,
the checks between options, and the one call into the installer under the CLI's error boundary.
The installer itself is imported only when it runs."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from lookout import events, version
from lookout.boundary import guarded

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lookout.install.options import Options

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
  python3 install.py --bridge             also run `lookout bridge` (the fleet) as a service
  python3 install.py --uninstall          remove lookout's hooks (keeps the runtime)
  python3 install.py --uninstall --purge  also remove runtime, command, state and config"""


# The options between --agent and --purge, in --help's order: add_argument's keywords.
_OPTIONS: dict[str, dict[str, Any]] = {
    "--codex-notify": dict(
        action="store_true",
        help="Codex: set the legacy `notify` program in config.toml instead of hooks"
        " (automatic for Codex older than 0.124.0)",
    ),
    "--scope": dict(
        choices=("user", "project", "local"), help="which settings file to edit (default: user)"
    ),
    "--project": dict(metavar="DIR", help="project for --scope project|local (default: .)"),
    "--settings": dict(metavar="FILE", help="edit this settings file instead of a scope"),
    "--python": dict(
        metavar="PATH",
        help="run the hooks with this interpreter (it must have tomli-w)"
        " instead of creating a virtual environment",
    ),
    "--dry-run": dict(action="store_true", help="print the diff, change nothing"),
    "--bridge": dict(
        action="store_true",
        help="also install the MQTT client and run `lookout bridge` as a systemd user"
        " service (needs [fleet] in the config; without systemd --user: says how to run it)",
    ),
    "--uninstall": dict(action="store_true", help="remove lookout's hook entries"),
}
# Of those, install.py's alone (`lookout uninstall` shares the rest).
_INSTALL_ONLY = frozenset({"--codex-notify", "--python", "--bridge", "--uninstall"})


def add_options(p: argparse.ArgumentParser, *, uninstall: bool) -> None:
    p.add_argument(
        "--agent",
        choices=(*events.AGENTS, "all"),  # the hook path's copy of the registry's names
        help=f"which coding agent to {'uninstall' if uninstall else 'install'} for"
        " (default: claude)",
    )
    for flag, keywords in _OPTIONS.items():
        if not (uninstall and flag in _INSTALL_ONLY):
            p.add_argument(flag, **keywords)
    p.add_argument(
        "--purge",
        action="store_true",
        help=("with --uninstall: " if not uninstall else "")
        + "clear every scope and remove the runtime, state and config",
    )


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="install.py",
        description=INSTALL_DESCRIPTION,
        epilog=INSTALL_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_options(p, uninstall=False)
    p.add_argument("--version", action=version.Action)
    return p


def request(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Options:
    codex_notify = getattr(args, "codex_notify", False)
    if args.settings and (args.scope or args.project):
        parser.error("--settings replaces --scope/--project")
    if codex_notify and args.agent == "claude":
        parser.error("--codex-notify goes with --agent codex or all")
    agent = args.agent or ("codex" if codex_notify else "claude")
    if agent not in ("claude", "all") and (args.scope or args.project or args.settings):
        parser.error("--scope/--project/--settings are for Claude Code (--agent claude or all)")
    from lookout.install.options import Options

    return Options(
        agent=agent,
        scope=args.scope or "user",
        project=args.project,
        settings=args.settings,
        python=getattr(args, "python", None),
        codex_notify=codex_notify,
        dry_run=args.dry_run,
        purge=args.purge,
        bridge=getattr(args, "bridge", False),
    )


def out(line: str) -> None:
    print(line, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """install.py: install, or with --uninstall take lookout out again."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.purge and not args.uninstall:
        parser.error("--purge only goes with --uninstall")
    if args.bridge and args.uninstall:
        parser.error("--uninstall always removes the bridge's unit; drop --bridge")
    opts = request(parser, args)
    from lookout.install import plan as install

    if args.uninstall:
        return guarded(lambda: install.do_uninstall(opts, out))
    return guarded(lambda: install.do_install(opts, out))
