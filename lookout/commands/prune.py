"""`lookout prune`: forget ended sessions (their snapshots), under the lock the hooks take.
events.jsonl is left as it is; rotation bounds it."""

from __future__ import annotations

import argparse
import os

from lookout import paths, store, words
from lookout.boundary import visible
from lookout.commands import args
from lookout.sessions import Row, load_sessions


def declare(p: argparse.ArgumentParser) -> None:
    """Remove ended sessions (and those whose process is gone) from the snapshot. events.jsonl is
    left as it is; it is bounded by rotation."""
    p.add_argument(
        "--older-than",
        type=args.duration,
        default=7 * 86400,
        metavar="DURATION",
        help="only sessions whose last event is older than this (default 7d; 0 for all)",
    )
    args.dry_run(p, "say what would go, remove nothing")


def run(args: argparse.Namespace) -> int:
    return prune(older_than_s=args.older_than, dry_run=args.dry_run)


def prune(*, older_than_s: int, dry_run: bool) -> int:
    state_dir = paths.state_dir()
    now = words.now_ms()
    cutoff = now - older_than_s * 1000
    if not os.path.isdir(state_dir):
        print("nothing to prune (no state yet)")
        return 0
    gone: list[Row] = []
    kept = 0
    # Every hook waits on this lock: hold it for the removals only, never across output (a
    # pager or Ctrl-Z would stall every session's hooks and drop their events).
    with store.Locked(state_dir):
        for s in load_sessions(state_dir, now):
            if s["status"] == "ended" and s["updated_ms"] <= cutoff:
                if not dry_run:
                    store.remove_session(state_dir, s["session_id"])
                gone.append(s)
            elif s["status"] == "ended":
                kept += 1
    if dry_run:
        for s in gone:
            label = visible(f"{s['project'] or '?'} {s['session_id']}")
            print(f"would forget {label} ({visible(str(s['reason'] or 'ended'))})")
    verb = "would forget" if dry_run else "forgot"
    text = f"{verb} {len(gone)} ended session{'' if len(gone) == 1 else 's'}"
    if kept:
        text += (
            f"; kept {kept} that ended within {_span(older_than_s)}"
            " (--older-than 0 forgets them too)"
        )
    print(text)
    return 0


def _span(seconds: int) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
