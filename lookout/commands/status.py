"""`lookout status`: every session, the ones that need you first, as a table, one line, JSON, or a
table refreshed in place. Reads the snapshots the hooks wrote; its only writes are what
reconcile proves (through the store), so what it shows is true even where no hook fired."""

from __future__ import annotations

import os
import sys
import time

from lookout import paths, store, words
from lookout.commands import view
from lookout.errors import LookoutError
from lookout.sessions import Row, handle, load_sessions, public

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

    from lookout import away
    from lookout.config.files import ProjectFile

STALE_AFTER_S = 8 * 3600
# What argparse makes of `lookout status --line`, which main.py runs without argparse (a status
# bar runs it every few seconds). tests/commands/test_main.py checks that argparse says the same.
LINE: dict[str, object] = {
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
    "stale_after": STALE_AFTER_S,
    "evidence": False,
}


def declare(p: argparse.ArgumentParser) -> None:
    """Show every recorded session, the ones waiting on you first. Ended sessions are hidden unless
    --all; a session whose agent process is gone is shown as ended."""
    from lookout.commands import args  # argparse: never for the status line

    shape = p.add_mutually_exclusive_group()
    args.json_flag(shape)
    shape.add_argument("--line", action="store_true", help="one short line for a status bar")
    shape.add_argument("--watch", action="store_true", help="refresh in place until Ctrl-C")
    p.add_argument("--all", action="store_true", help="include ended sessions")
    p.add_argument(
        "--evidence",
        action="store_true",
        help="add an EVIDENCE column: what proved each status (hook, client, transcript,"
        " process, user) and `no hooks` for a session known from Claude Code's registry alone",
    )
    p.add_argument(
        "--fleet",
        action="store_true",
        help="every host's sessions, from the MQTT broker in [fleet] (see `lookout bridge`)",
    )
    p.add_argument(
        "--attention",
        action="store_true",
        help="only the sessions that need you; exit 0 if there is one, 1 if none (like grep)",
    )
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print nothing (with --attention: exit code only)",
    )
    p.add_argument(
        "--project",
        metavar="GLOB",
        help="only these projects: a glob on the project name (api-*), or on its path when it"
        " has a / or starts with ~ (~/work/*)",
    )
    p.add_argument(
        "--interval",
        type=float,
        default=None,
        metavar="SECONDS",
        help="refresh period of --watch (1)",
    )
    p.add_argument(
        "--stale-after",
        type=args.duration,
        default=STALE_AFTER_S,
        metavar="DURATION",
        help="dim sessions with no event for this long (default 8h)",
    )


def line() -> SimpleNamespace:
    """`lookout status --line`'s arguments, without argparse."""
    # types.SimpleNamespace without importing `types` (~0.2 ms of every status line).
    namespace: type[SimpleNamespace] = type(sys.implementation)  # type: ignore[assignment]
    return namespace(**LINE)


def run(args: argparse.Namespace | SimpleNamespace) -> int:
    fmt = "json" if args.json else "line" if args.line else "watch" if args.watch else "table"
    if args.interval is not None and not args.watch:
        raise LookoutError(
            "--interval only goes with --watch", hint="lookout status --watch --interval 5"
        )
    pick = view.Filter(args.all, args.attention, args.project)
    if args.fleet:
        from lookout.commands.fleet import fleet_status

        return fleet_status(fmt, pick, args.stale_after, quiet=args.quiet)
    interval = 1.0 if args.interval is None else args.interval
    return status(fmt, pick, args.stale_after, interval, quiet=args.quiet, evidence=args.evidence)


def status(
    fmt: str,
    pick: view.Filter,
    stale_after_s: int,
    interval: float = 1.0,
    *,
    quiet: bool = False,
    evidence: bool = False,
) -> int:
    """fmt: "table", "json", "line" or "watch". With `pick.attention`, only the sessions that
    need you, and the exit code says whether there is one (0) or not (1), like grep."""
    state_dir = paths.state_dir()
    unsafe = store.unsafe_reason(state_dir)
    if unsafe is not None:  # its snapshots could say anything: show none of them
        raise LookoutError(
            f"refusing the state directory: {unsafe}",
            hint="point LOOKOUT_STATE_DIR at a directory of your own (or unset it)",
        )
    if fmt == "watch":
        return _watch(state_dir, pick, interval, stale_after_s, evidence)
    now = words.now_ms()
    recorded = _recorded(state_dir, now, stale_after_s)
    shown = pick(recorded)
    rc = 1 if pick.attention and not shown else 0
    if quiet:
        return rc
    # Hooks keep recording with a broken config but send nothing: say so where people look.
    errors = config_errors(shown)
    config_error = errors[0][1] if errors else None
    switch = _away(state_dir, now)
    if fmt == "line":  # before the project files: the line does not name them
        said = view.line(shown) + (" · config error" if config_error else "")
        print(said + (" · away" if switch["away"] else ""))
        return rc
    ignored = _ignored_project_files(shown)
    if fmt == "json":
        from lookout.jump import locate

        locate.tmux_json(shown, state_dir)  # where each one is now, so other tools can jump too
        body = {
            "sessions": [public(s) for s in shown],
            "config_error": config_error,
            "ignored_project_files": [{"path": p.path, "reason": p.ignored} for p in ignored],
            "away": switch,
        }
        import json  # only here: the line and the table never need it

        print(json.dumps(body, indent=2))
        return rc
    print(view.table(shown, now, view.colour(), view.width(), evidence))
    hint = ack_hint(shown, recorded)
    if hint:
        print(_dim(hint))
    if switch["away"]:
        print(away_note(switch))
    for where, error in errors:
        print(f"warning: notifications are off{where}: {error}", file=sys.stderr)
    if errors:
        print("hint: run `lookout check-config`", file=sys.stderr)
    if ignored:
        for pf in ignored:
            print(view.project_file_line(pf), file=sys.stderr)
    note = hooks_note()
    if note:
        print(note, file=sys.stderr)
    return rc


def _away(state_dir: str, now: int) -> away.State:
    """The away switch as of `now`. A status bar runs the line every few seconds: without the
    switch's file (never turned), its module is not even loaded."""
    if not os.path.exists(paths.join(state_dir, store.AWAY)):
        return {"away": False, "since_ms": None, "until_ms": None, "source": None}
    from lookout import away

    return away.read(state_dir, now)


def away_note(switch: away.State) -> str:
    """What the away switch does while on (`lookout away`)."""
    from lookout import away
    from lookout.commands.away import titles

    return (
        f"away: {away.said(switch)}: {' and '.join(titles())} waits for an answer from afar"
        " before its own prompt; `lookout away off` when you are back"
    )


def _ignored_project_files(shown: list[Row]) -> list[ProjectFile]:
    """The project files that the shown sessions' hooks ignore (untrusted, or not yours)."""
    from lookout.config import files

    out: dict[str, ProjectFile] = {}
    for cwd in sorted({cwd for s in shown if isinstance(cwd := s["cwd"], str)}):
        pf = files.project_file(cwd)
        if pf is not None and pf.ignored is not None:
            out.setdefault(pf.path, pf)
    return list(out.values())


def _recorded(state_dir: str, now: int, stale_after_s: int) -> list[Row]:
    from lookout import reconcile

    read: dict[str, object] = {}  # each snapshot file is read (and parsed) once
    alive: dict[str, bool | None] = {}  # and each process looked at once
    reconcile.quietly(state_dir, read, alive)
    return load_sessions(state_dir, now, stale_after_s, read, alive)


def ack_hint(shown: list[Row], recorded: list[Row]) -> str | None:
    """How to clear an attention no signal ended, naming the first such session as `lookout
    ack` takes it among every recorded session (its title, else its short id). A stuck one
    waits on nothing to answer: its way out is to stop the turn."""
    waiting = [s for s in shown if s["status"] == "attention"]
    if not waiting:
        return None
    name = handle(waiting[0], recorded)
    if waiting[0]["reason"] == "stuck":
        return f"stuck? `lookout interrupt {name}` stops its turn; `lookout ack {name}` clears it"
    return f"answered already? `lookout ack {name}` clears it"


def config_errors(sessions: list[Row]) -> list[tuple[str, str]]:
    """(" for <project>" or "", the first error) for the global config and for each project
    override the shown sessions use: a broken one silences that project's notifications."""
    from lookout.config.trust import project_path

    found: list[tuple[str, str]] = []
    error = _config_error(None)
    if error is not None:
        found.append(("", error.splitlines()[0]))
    seen: set[str] = set()
    cwds: set[object] = set()
    for s in sessions:
        if s.get("cwd") in cwds:
            continue  # sessions share directories: look each up once
        cwds.add(s.get("cwd"))
        override = project_path(s.get("cwd"))
        if override is None or override in seen:
            continue
        seen.add(override)
        error = _config_error(s.get("cwd"))
        if error is not None:
            first = error.splitlines()[0]
            if all(first != e for _, e in found):
                found.append((f" for {s['project'] or '?'}", first))
    return found


def _config_error(cwd: str | None) -> str | None:
    """The config's error for a session in `cwd`: what the hooks' cache found for the files as
    they are now; else parsed, and remembered there as a hook would (the next status line, run
    seconds later, reads it from there)."""
    from lookout.config import cache

    state_dir = paths.state_dir()
    known, error = cache.known_error(state_dir, cwd)
    if known:
        return error
    try:
        try:
            cache.load_cached(state_dir, cwd)
        except OSError:
            pass  # nowhere to remember it (a full disk): parsed again below
        known, error = cache.known_error(state_dir, cwd)
        if known:
            return error
        from lookout.config import files  # only for a file the cache does not know yet

        files.load(cwd)
    except LookoutError as exc:
        return str(exc)
    return None


def notifications_off() -> str | None:
    """The global config's first error when it is broken (hooks record, but send nothing)."""
    errors = config_errors([])
    return errors[0][1] if errors else None


def hooks_note() -> str | None:
    """A note when no agent lookout knows has its hooks installed (each agent's own files,
    lookout.agents.registry): the statuses shown are then what was recorded before, not what
    happens now."""
    from lookout.agents.registry import AGENTS
    from lookout.install import registry

    if registry.load():
        return None  # install.py wrote hooks somewhere (perhaps another project)
    project = os.getcwd()
    if any(agent.installer().installed(project) for agent in AGENTS.values()):
        return None
    return (
        f"note: no lookout hooks are installed (not in {paths.tilde(paths.user_settings_path())},"
        " this project's settings nor any other agent's files): these statuses may be out of"
        " date; python3 install.py installs them, lookout doctor checks"
    )


def _watch(
    state_dir: str, pick: view.Filter, interval: float, stale_after_s: int, evidence: bool = False
) -> int:
    try:
        while True:
            now = words.now_ms()
            recorded = _recorded(state_dir, now, stale_after_s)
            shown = pick(recorded)
            stamp = time.strftime("%H:%M:%S")
            # Home + clear-to-end keeps the screen from flickering on every refresh.
            sys.stdout.write("\033[H\033[J" if sys.stdout.isatty() else "\n")
            sys.stdout.write(f"lookout · {stamp} · Ctrl-C to quit\n\n")
            sys.stdout.write(view.table(shown, now, view.colour(), view.width(), evidence) + "\n")
            hint = ack_hint(shown, recorded)
            if hint:
                sys.stdout.write(_dim(hint) + "\n")
            switch = _away(state_dir, now)
            if switch["away"]:
                sys.stdout.write(away_note(switch) + "\n")
            sys.stdout.flush()
            time.sleep(max(0.1, interval))
    except KeyboardInterrupt:
        return 0


def _dim(text: str) -> str:
    return f"\033[2m{text}\033[0m" if view.colour() else text
