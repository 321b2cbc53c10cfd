"""The background sender: one per state directory. It takes jobs from outbox/ (notify/outbox.py)
in order, hands each delivery to `deliver` (channel lanes, records, updates in place), keeps the
jobs due later (escalations, grace, digests) waiting until due, re-checking them so an episode
answered early frees them at once, and exits when nothing is left.

Started by lookout.spawn.spawn (only when no sender holds sender.lock), never by a hook directly;
re-reads the config itself for secrets."""

from __future__ import annotations

import os
import time

from lookout import spawn, store, words
from lookout.config import check, files
from lookout.deliveries import record
from lookout.notify import outbox
from lookout.sender import escalate, hold, timers
from lookout.sender.deliver import deliver, send_escalation, skip_escalation
from lookout.sender.lanes import Bell, Lanes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from lookout.notify.outbox import AlertJob, Job
    from lookout.shapes import Config


# A job older than this was never picked up (its sender failed to start): never send it.
STALE_JOB_S = 3600.0
# How often the sender looks again while sends are in flight (between deadlines it waits for a
# hook's ring instead), and how often a waiting escalation asks whether it is still due (that
# reads the transcript: not every poll).
POLL_S = 0.2
RECHECK_S = 1.0


def main(argv: Sequence[str] | None = None) -> int:
    """`sender STATE_DIR JOB [LOCK_FD]`: serve the state directory; LOCK_FD holds its
    sender.lock already (taken by the hook that started us). SIGTERM is back to its default
    (a hook ignores it), for the sender and its children."""
    return spawn.held_main(
        argv, 2, lambda state_dir, held: serve(state_dir, held=held), "notification sender"
    )


def serve(
    state_dir: str,
    poll_s: float = POLL_S,
    held: int | None = None,
    watch_s: float | None = escalate.WATCH_S,
) -> None:
    """Drain outbox/ until nothing is due, waiting, in flight or watched, then exit. Only while
    holding sender.lock (`held`: a descriptor that already holds it): a hook that finds it held
    leaves its job to us. While an alert is out for a dialog still open, every `watch_s` it
    looks whether the dialog was answered (None: no watch), so the "handled" update goes out
    from here, with no reader running."""
    outbox_dir = os.path.join(state_dir, store.OUTBOX)
    lanes = Lanes(state_dir)
    bell = Bell(state_dir)  # a hook's new job wakes it: no polling between deadlines
    waiting: dict[str, dict[str, Any]] = {}  # a job due later -> it, read once
    looks = _Looks(state_dir, watch_s)
    try:
        while True:
            fd = (
                held
                if held is not None
                else store.try_lock(os.path.join(state_dir, store.SENDER_LOCK))
            )
            held = None
            if fd is None:
                return  # another sender serves this state directory
            _say_pid(fd)
            try:
                sweep(outbox_dir, state_dir)
                maintain(state_dir)
                rung = True  # the timers look at once
                while True:
                    next_due = _drain_once(outbox_dir, state_dir, lanes, waiting)
                    looks.look(rung)
                    busy = lanes.busy()
                    if next_due is None and not busy and looks.idle():
                        break
                    rung = bell.wait(
                        poll_s
                        if busy
                        else _until(next_due, waiting, looks.look_s(), looks.watched, looks.timed)
                    )
            finally:
                os.close(fd)  # releases the lock
            # No lost wake-up: a hook that found the lock held wrote its job (or the snapshot of
            # the turn it rang for) before it looked; a job that arrived after our last scan, or
            # a session whose time came to be kept after our last look, is seen here, and we
            # try to serve again.
            if not outbox.names(outbox_dir) and not looks.pending():
                return
    finally:
        bell.close()
        lanes.close()


class _Looks:
    """What the sender looks at with no job: the alerts that are out, every `watch_s` (None:
    never), and the timers, at once when a hook rang (its turn may start a time to keep, never
    to be left until the next deadline), when their time comes, and with each look at alerts."""

    def __init__(self, state_dir: str, watch_s: float | None) -> None:
        self.state_dir = state_dir
        self.watch_s = watch_s
        self.looked = 0.0
        self.watched: list[str] = []
        self.timed: int | None = None
        self.timers = timers.Timers(state_dir)

    def look(self, rung: bool) -> None:
        """The looks due now; what they find (a `resolved` job, an alert's job) goes into
        outbox/ and is taken next round."""
        if self.watch_s is None:
            return
        if time.monotonic() - self.looked >= self.watch_s:
            self.looked = time.monotonic()
            self.watched = escalate.open_alerts(self.state_dir)
            if self.watched:
                escalate.watch(self.state_dir, self.watched)
            rung = True
        if rung or (self.timed is not None and self.timed <= words.now_ms()):
            self.timed = self.timers.look()

    def idle(self) -> bool:
        return not self.watched and self.timed is None

    def look_s(self) -> float | None:
        """How long until the next look at alerts is due (None: never)."""
        return None if self.watch_s is None else self.looked + self.watch_s - time.monotonic()

    def pending(self) -> bool:
        return self.watch_s is not None and self.timers.pending()


def _until(
    next_due: int | None,
    waiting: dict[str, dict[str, Any]],
    look_s: float | None,
    watched: list[str],
    timed: int | None,
) -> float:
    """How long the sender may sleep with no send in flight (a hook's ring wakes it sooner): to
    the first deadline of a job due, a waiting job's re-check, the next look at open alerts
    (`look_s` from now), a timer's session (Timers.look spaces its looks at one session)."""
    now_ms = words.now_ms()
    waits = [(next_due - now_ms) / 1000] if next_due is not None else []
    if waiting:
        waits.append(RECHECK_S)  # a job due later may be freed early (_waits)
    if look_s is not None and watched:
        waits.append(look_s)
    if look_s is not None and timed is not None:
        waits.append((timed - now_ms) / 1000)
    return min(waits) if waits else POLL_S


def _drain_once(
    outbox_dir: str, state_dir: str, lanes: Lanes, waiting: dict[str, dict[str, Any]]
) -> int | None:
    """Run every due job, re-check every waiting one; the earliest due time left."""
    now_ms = words.now_ms()
    next_due: int | None = None
    names = outbox.names(outbox_dir)
    for name in names:
        path = os.path.join(outbox_dir, name)
        due = outbox.due_ms(name)
        if due <= now_ms:
            waiting.pop(name, None)
            run_job(path, state_dir, lanes)
        elif _waits(state_dir, path, name, waiting, now_ms):
            next_due = due if next_due is None else min(next_due, due)
    for gone in set(waiting) - set(names):
        del waiting[gone]
    return next_due


def _waits(
    state_dir: str, path: str, name: str, waiting: dict[str, dict[str, Any]], now_ms: int
) -> bool:
    """A job not due yet, read once and asked every RECHECK_S whether it is still to be sent:
    False once nothing of it is left."""
    if name not in waiting:
        job, newer = outbox.read(path)
        if job is None:
            if not newer:
                outbox.remove(path)  # an older version's: dropped unread
            return False
        waiting[name] = {"job": job, "checked_ms": 0}  # first look: at once
    entry = waiting[name]
    if now_ms - entry["checked_ms"] < RECHECK_S * 1000:
        return True
    entry["checked_ms"] = now_ms
    if _still_to_send(state_dir, path, entry["job"]):
        return True
    waiting.pop(name)
    return False


def _still_to_send(state_dir: str, path: str, job: Job) -> bool:
    if job["kind"] != "escalation":
        # Grace and digest jobs change while they wait (merged, answered): read again.
        return hold.recheck(state_dir, path)
    if escalate.escalation_due(state_dir, job["delivery"]["intent"]):
        return True
    outbox.remove(path)
    skip_escalation(state_dir, job["delivery"], job["escalation"])
    return False


def sweep(outbox_dir: str, state_dir: str, max_age_s: float = STALE_JOB_S) -> int:
    """Drop jobs no sender took in time (and escalations that long overdue): a late alert is a
    wrong alert. `.tmp` files of writers killed mid-write go too."""
    now = time.time()
    dropped = 0
    try:
        entries = list(os.scandir(outbox_dir))
    except FileNotFoundError:
        return 0
    for entry in entries:
        try:
            if entry.name.endswith(".tmp"):
                if now - entry.stat().st_mtime > 60:
                    os.unlink(entry.path)
                continue
            if not entry.name.endswith(".json") or store.file_newer(entry.path, words.JOB_VERSION):
                continue  # not a job, or a newer lookout's
            due_s = outbox.due_ms(entry.name) / 1000 or entry.stat().st_mtime
            if now - due_s > max_age_s:
                os.unlink(entry.path)
                dropped += 1
        except FileNotFoundError:
            continue
    if dropped:
        store.log_error(state_dir, f"notification sender: dropped {dropped} stale job(s)")
    return dropped


# Housekeeping the hooks never pay for: at most once per MAINTAIN_EVERY_S, by the sender.
MAINTAIN_EVERY_S = 3600.0
FORGET_AFTER_S = 30 * 86400.0


def maintain(state_dir: str, now: float | None = None) -> None:
    """Keep the state directory bounded: forget snapshots silent for FORGET_AFTER_S (what
    `lookout prune` does by hand) and sweep `.tmp` files left by writers killed mid-write."""
    now = time.time() if now is None else now
    stamp = os.path.join(state_dir, store.MAINTAINED)
    try:
        if now - os.stat(stamp).st_mtime < MAINTAIN_EVERY_S:
            return
    except FileNotFoundError:
        pass
    store.write_json_atomic(stamp, {"maintained_at": store.rfc3339(int(now * 1000))})
    sessions = os.path.join(state_dir, store.SESSIONS)
    try:
        entries = list(os.scandir(sessions))
    except FileNotFoundError:
        return
    old: list[str] = []
    for entry in entries:
        try:
            age = now - entry.stat(follow_symlinks=False).st_mtime
            if entry.name.endswith(".tmp") and age > 60:
                os.unlink(entry.path)
            elif entry.name.endswith(".json") and age > FORGET_AFTER_S:
                old.append(entry.path)
        except FileNotFoundError:
            continue
    if old:
        with store.Locked(state_dir):  # the hooks' lock: a snapshot being written stays
            for path in old:
                try:
                    if now - os.stat(path).st_mtime > FORGET_AFTER_S and not store.file_newer(path):
                        os.unlink(path)  # (a newer lookout's snapshot is its own to forget)
                except FileNotFoundError:
                    pass


def _say_pid(fd: int) -> None:
    """Our pid in sender.lock while we hold it: doctor compares our environment with its own."""
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError:
        pass  # a pid doctor cannot read is a check it skips


def run_job(job_path: str, state_dir: str, lanes: Lanes | None = None) -> None:
    """Send one job (a hook's, or one due later that came due). Without `lanes`, synchronously:
    returns once every message is sent and recorded."""
    job, newer = outbox.read(job_path)
    if newer:
        return  # a newer lookout's job: left to it
    if not outbox.remove(job_path):
        return  # taken already: one attempt per job, a crash must not resend it forever
    if job is None:
        return  # not a job this version reads: dropped unread rather than misread
    own = lanes is None
    lanes = Lanes(state_dir) if lanes is None else lanes
    try:
        _run(job, job_path, state_dir, lanes)
        if own:
            lanes.wait()
    finally:
        if own:
            lanes.close()


def _run(job: Job, job_path: str, state_dir: str, lanes: Lanes) -> None:
    try:
        cfg = files.load(job.get("cwd"))
    except check.ConfigError as exc:
        for intent, names in outbox.addressed(job):
            for name in names:
                record(state_dir, intent, name, "failed", f"config error: {exc.errors[0]}")
        return
    if job["kind"] == "grace":
        hold.send_grace(job, cfg, state_dir, lanes)
    elif job["kind"] == "digest":
        hold.send_digest(job, job_path, cfg, state_dir, lanes)
    elif job["kind"] == "escalation":
        send_escalation(job["delivery"], job["escalation"], cfg, state_dir, lanes)
    else:
        _send_alert(job, job_path, cfg, state_dir, lanes)


def _send_alert(job: AlertJob, job_path: str, cfg: Config, state_dir: str, lanes: Lanes) -> None:
    """A hook's job: its deliveries now, what they hold back and escalate for later."""
    outbox_dir = os.path.dirname(job_path)
    for d in job["deliveries"]:
        hold.drop_pending(state_dir, outbox_dir, d)
        hold.take_updates(state_dir, d, cfg, lanes)
        escalate.limit_until(state_dir, d["intent"])
        deliver(d, cfg, state_dir, lanes)
        hold.schedule(job["created_ms"], job.get("cwd"), d, outbox_dir, state_dir)
    escalate.schedule_escalations(job["created_ms"], job.get("cwd"), job["deliveries"], outbox_dir)
