"""`lookout prune`: forget ended sessions (their snapshots), under the lock the hooks take.
events.jsonl is left as it is; rotation bounds it."""

from __future__ import annotations

import os
import time

from lookout import paths, store
from lookout.commands import view


def prune(*, older_than_s: int, dry_run: bool) -> int:
    state_dir = paths.state_dir()
    now = int(time.time() * 1000)
    cutoff = now - older_than_s * 1000
    removed = kept = 0
    if not os.path.isdir(state_dir):
        print("nothing to prune (no state yet)")
        return 0
    with store.Locked(state_dir):
        for s in view.load_sessions(state_dir, now):
            if s["status"] == "ended" and s["updated_ms"] <= cutoff:
                label = f"{s['project'] or '?'} {s['session_id']}"
                if dry_run:
                    print(f"would forget {label} ({s['reason'] or 'ended'})")
                else:
                    store.remove_session(state_dir, s["session_id"])
                removed += 1
            elif s["status"] == "ended":
                kept += 1
    verb = "would forget" if dry_run else "forgot"
    text = f"{verb} {removed} ended session{'' if removed == 1 else 's'}"
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
