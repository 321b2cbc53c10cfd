"""The `lookout` command: status, tail, prune, and the doors to doctor, test and check-config.

Reads what the hooks recorded; the only writes are prune's, under the same lock the hooks take."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any

from lookout import __version__, paths, store, view
from lookout.errors import LookoutError

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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lookout",
        description="Which of your Claude Code sessions needs you: working, attention, idle, "
        "ended.",
        epilog=f"State: {paths.state_dir()} (set LOOKOUT_STATE_DIR to change). "
        f"Config: {paths.config_path()} (LOOKOUT_CONFIG).",
    )
    parser.add_argument("--version", action="version", version=f"lookout {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    status = sub.add_parser(
        "status",
        help="show every session, the ones that need you first",
        description="Show every recorded session, the ones waiting on you first. Ended sessions "
        "are hidden unless --all; a session whose Claude process is gone is shown as ended.",
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
        default=view.STALE_AFTER_S,
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

    for name, text in (
        ("doctor", "check the installation, config, state directory and channels"),
        ("test", "send a test notification through each channel (or the ones named)"),
        ("check-config", "validate the config file and say what is wrong"),
    ):
        forwarded = sub.add_parser(name, help=text, add_help=False)
        forwarded.add_argument("args", nargs=argparse.REMAINDER)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "status":
            return _status(args)
        if args.command == "tail":
            return _tail(args)
        if args.command == "prune":
            return _prune(args)
        if args.command == "doctor":
            from lookout import doctor

            return doctor.main(args.args)
        if args.command in ("test", "check-config"):
            from lookout import notify_cli

            return notify_cli.main([args.command, *args.args])
        return _status(build_parser().parse_args(["status"]))
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


# -- status ------------------------------------------------------------------------------------


def _status(args: argparse.Namespace) -> int:
    state_dir = paths.state_dir()
    if args.watch:
        return _watch(state_dir, args)
    now = int(time.time() * 1000)
    sessions = view.load_sessions(state_dir, now, args.stale_after)
    shown = sessions if args.all else [s for s in sessions if s["status"] != "ended"]
    # Hooks keep recording with a broken config but send nothing: say so where people look.
    config_error = _config_error()
    if args.json:
        body = {"sessions": [view.public(s) for s in shown], "config_error": config_error}
        print(json.dumps(body, indent=2))
        return 0
    if args.line:
        print(view.line(shown) + (" · config error" if config_error else ""))
        return 0
    print(view.table(shown, now, _colour(), _width()))
    if config_error:
        print(f"warning: notifications are off: {config_error}", file=sys.stderr)
        print("hint: run `lookout check-config`", file=sys.stderr)
    return 0


def _config_error() -> str | None:
    from lookout import config

    try:
        config.load()
    except LookoutError as exc:
        return str(exc).splitlines()[0]
    return None


def _watch(state_dir: str, args: argparse.Namespace) -> int:
    try:
        while True:
            now = int(time.time() * 1000)
            sessions = view.load_sessions(state_dir, now, args.stale_after)
            shown = sessions if args.all else [s for s in sessions if s["status"] != "ended"]
            stamp = time.strftime("%H:%M:%S")
            # Home + clear-to-end keeps the screen from flickering on every refresh.
            sys.stdout.write("\033[H\033[J" if sys.stdout.isatty() else "\n")
            sys.stdout.write(f"lookout · {stamp} · Ctrl-C to quit\n\n")
            sys.stdout.write(view.table(shown, now, _colour(), _width()) + "\n")
            sys.stdout.flush()
            time.sleep(max(0.1, args.interval))
    except KeyboardInterrupt:
        return 0


def _colour() -> bool:
    return (
        sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
    )


def _width() -> int:
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 160


# -- tail --------------------------------------------------------------------------------------


def _tail(args: argparse.Namespace) -> int:
    name = "deliveries.jsonl" if args.deliveries else store.EVENTS
    path = os.path.join(paths.state_dir(), name)
    for record in _records(path, max(0, args.lines), args.follow):
        if args.session and not str(record.get("session_id", "")).startswith(args.session):
            continue
        if args.json:
            print(json.dumps(record, ensure_ascii=False), flush=args.follow)
        elif args.deliveries:
            print(_format_delivery(record), flush=args.follow)
        else:
            print(view.format_record(record), flush=args.follow)
    return 0


def _format_delivery(r: dict[str, Any]) -> str:
    ts = str(r.get("ts", ""))[11:19]
    parts = [ts, str(r.get("session_id", ""))[:8], str(r.get("kind", "")), "→"]
    parts += [str(r.get("channel", "")), str(r.get("result", ""))]
    if r.get("detail"):
        parts.append(f"({r['detail']})")
    return " ".join(parts)


def _records(path: str, last: int, follow: bool) -> Iterator[dict[str, Any]]:
    """The last `last` whole records, then (with follow) every new one, across rotation."""
    try:
        f = open(path, "rb")  # noqa: SIM115 - reopened across rotation below
    except FileNotFoundError:
        if not follow:
            return
        f = None
    if f is not None:
        for raw in _last_lines(f, last):
            record = view.parse_line(raw)
            if record is not None:
                yield record
    if not follow:
        if f is not None:
            f.close()
        return
    partial = b""
    while True:
        if f is None:
            try:
                f = open(path, "rb")  # noqa: SIM115
            except FileNotFoundError:
                time.sleep(0.25)
                continue
        chunk = f.read()
        if chunk:
            partial += chunk
            *complete, partial = partial.split(b"\n")
            for raw in complete:
                record = view.parse_line(raw)
                if record is not None:
                    yield record
            continue
        if _rotated(f, path):
            f.close()  # the old file was drained above; follow the new one
            f = None
            partial = b""
            continue
        time.sleep(0.25)


def _rotated(f: Any, path: str) -> bool:
    try:
        return os.stat(path).st_ino != os.fstat(f.fileno()).st_ino
    except FileNotFoundError:
        return True


def _last_lines(f: Any, count: int) -> list[bytes]:
    """The last `count` complete lines, read from the end (events.jsonl can be large)."""
    f.seek(0, os.SEEK_END)
    end = f.tell()
    if count == 0:
        return []
    block = 64 * 1024
    data = b""
    pos = end
    while pos > 0 and data.count(b"\n") <= count:
        step = min(block, pos)
        pos -= step
        f.seek(pos)
        data = f.read(step) + data
    f.seek(end)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    elif lines:
        lines.pop()  # a torn last line: a writer died mid-append, skip it
    if pos > 0 and lines:
        lines = lines[1:]  # the first one may be cut by the block boundary
    return lines[-count:]


# -- prune -------------------------------------------------------------------------------------


def _prune(args: argparse.Namespace) -> int:
    from filelock import FileLock

    state_dir = paths.state_dir()
    now = int(time.time() * 1000)
    cutoff = now - args.older_than * 1000
    removed = 0
    # filelock takes the same flock the hooks take on events.lock.
    lock_path = os.path.join(state_dir, store.LOCK)
    if not os.path.isdir(state_dir):
        print("nothing to prune (no state yet)")
        return 0
    with FileLock(lock_path):
        for s in view.load_sessions(state_dir, now):
            if s["status"] == "ended" and s["updated_ms"] <= cutoff:
                label = f"{s['project'] or '?'} {s['session_id']}"
                if args.dry_run:
                    print(f"would forget {label} ({s['reason'] or 'ended'})")
                else:
                    store.remove_session(state_dir, s["session_id"])
                removed += 1
    verb = "would forget" if args.dry_run else "forgot"
    print(f"{verb} {removed} ended session{'' if removed == 1 else 's'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
