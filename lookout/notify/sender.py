"""The background sender: one per state directory. It takes jobs from outbox/ in order, sends
each message through its channel (at most IN_FLIGHT at once per channel, at most QUEUED waiting:
a hanging channel delays only itself, and a flood costs threads, not processes), records every
result in deliveries.jsonl, updates alerts in place, and runs escalations as scheduled files
(outbox/esc-<due_ms>-...json) that it re-checks while they wait, so an episode answered early
frees it at once. It exits when nothing is left.

Started by notify.spawn.spawn (only when no sender holds sender.lock), never by a hook directly;
re-reads the config itself for secrets."""

from __future__ import annotations

import hashlib
import os
import select
import signal
import subprocess
import threading
import time
import traceback

from lookout import mask, notify, store
from lookout.machine import ATTENTION_KINDS
from lookout.notify import channels, config, templates

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from concurrent.futures import ThreadPoolExecutor
    from typing import Any

    Outcome = tuple[str, str, str | None]
    Task = tuple[str, dict[str, Any], dict[str, Any]]

    from lookout.shapes import (
        Channel,
        Config,
        Delivery,
        Escalation,
        Intent,
        ScheduledEscalation,
    )

DELIVERIES_ROTATE_BYTES = notify.DELIVERIES_ROTATE_BYTES
# The id of a sent alert is kept this long for an update in place (an episode rarely lasts a day).
REFS_KEEP_MS = store.DAY_MS
ESCALATION_FILE_PREFIX = "esc-"
# A resolve can race the alert's own sender: wait this long for its notification id.
REF_WAIT_S = 3.0
ESCALATION_PREFIX = "Still waiting: "
# A job older than this was never picked up (its sender failed to start): never send it.
STALE_JOB_S = 3600.0
# A desktop alert's Focus action is waited for this long at most, and only while the episode
# (or, for a finished turn, the session's idle time) lasts.
FOCUS_WAIT_S = 1800.0
FOCUS_POLL_S = 0.5
FOCUS_KINDS = (*ATTENTION_KINDS, "done")
# How often the sender looks for new jobs, and how often a waiting escalation asks whether it
# is still due (that reads the transcript: not every poll).
POLL_S = 0.2
RECHECK_S = 1.0
IN_FLIGHT = 8
QUEUED = 64


def main(argv: Sequence[str] | None = None) -> int:
    """`sender STATE_DIR JOB [LOCK_FD]`: serve the state directory; LOCK_FD holds its
    sender.lock already (taken by the hook that started us)."""
    # A hook ignores SIGTERM (install.claude.guarded); the sender and its children must not
    # inherit that, or a logout waits for them until SIGKILL.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    args = list(argv or [])
    if len(args) not in (2, 3) or (len(args) == 3 and not args[2].isdigit()):
        return 2
    state_dir = os.path.abspath(args[0])
    held = int(args[2]) if len(args) == 3 else None
    try:
        serve(state_dir, held=held)
    except Exception:
        store.log_error(state_dir, f"notification sender: {traceback.format_exc()}")
    return 0


def serve(state_dir: str, poll_s: float = POLL_S, held: int | None = None) -> None:
    """Drain outbox/ until nothing is due, waiting or in flight, then exit. Only while holding
    sender.lock (`held`: a descriptor that already holds it): a hook that finds it held leaves
    its job to us."""
    outbox = os.path.join(state_dir, store.OUTBOX)
    lanes = Lanes(state_dir)
    waiting: dict[str, dict[str, Any]] = {}  # escalation file -> its job, read once
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
            try:
                sweep(outbox, state_dir)
                maintain(state_dir)
                while True:
                    next_due = _drain_once(outbox, state_dir, lanes, waiting)
                    if next_due is None and not lanes.busy():
                        break
                    time.sleep(poll_s)
            finally:
                os.close(fd)  # releases the lock
            # No lost wake-up: a hook that found the lock held wrote its job before it looked;
            # a job that arrived after our last scan is seen here, and we try to serve again.
            if not _jobs(outbox):
                return
    finally:
        lanes.close()


def _jobs(outbox: str) -> list[str]:
    try:
        names = os.listdir(outbox)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if n.endswith(".json") and not n.startswith("."))


def _due_ms(name: str) -> int:
    if name.startswith(ESCALATION_FILE_PREFIX):
        stamp = name[len(ESCALATION_FILE_PREFIX) :].split("-", 1)[0]
        return int(stamp) if stamp.isdigit() else 0
    return 0  # a job: due now


def _drain_once(
    outbox: str, state_dir: str, lanes: Lanes, waiting: dict[str, dict[str, Any]]
) -> int | None:
    """Run every due job, re-check every waiting escalation; the earliest due time left."""
    now_ms = int(time.time() * 1000)
    next_due: int | None = None
    names = _jobs(outbox)
    for name in names:
        path = os.path.join(outbox, name)
        due = _due_ms(name)
        if due <= now_ms:
            waiting.pop(name, None)
            run_job(path, state_dir, lanes)
            continue
        if name not in waiting:
            job = store.read_json(path)
            if not isinstance(job, dict) or job.get("v") != notify.JOB_VERSION:
                _unlink(path)
                continue
            waiting[name] = {"job": job, "checked_ms": 0}  # first look: at once
        entry = waiting[name]
        if now_ms - entry["checked_ms"] >= RECHECK_S * 1000:
            entry["checked_ms"] = now_ms
            if not escalation_due(state_dir, entry["job"]["delivery"]["intent"]):
                _unlink(path)
                _skip_escalation(state_dir, waiting.pop(name)["job"])
                continue
        next_due = due if next_due is None else min(next_due, due)
    for gone in set(waiting) - set(names):
        del waiting[gone]
    return next_due


def _unlink(path: str) -> bool:
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True


def sweep(outbox: str, state_dir: str, max_age_s: float = STALE_JOB_S) -> int:
    """Drop jobs no sender took in time (and escalations that long overdue): a late alert is a
    wrong alert. `.tmp` files of writers killed mid-write go too."""
    now = time.time()
    dropped = 0
    try:
        entries = list(os.scandir(outbox))
    except FileNotFoundError:
        return 0
    for entry in entries:
        try:
            if entry.name.endswith(".tmp"):
                if now - entry.stat().st_mtime > 60:
                    os.unlink(entry.path)
                continue
            if not entry.name.endswith(".json"):
                continue
            due_s = _due_ms(entry.name) / 1000 or entry.stat().st_mtime
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
                    if now - os.stat(path).st_mtime > FORGET_AFTER_S:
                        os.unlink(path)
                except FileNotFoundError:
                    pass


def run_job(job_path: str, state_dir: str, lanes: Lanes | None = None) -> None:
    """Send one job (a hook's, or an escalation that came due). Without `lanes`, synchronously:
    returns once every message is sent and recorded."""
    raw = store.read_json(job_path)
    if not _unlink(job_path):
        return  # taken already: one attempt per job, a crash must not resend it forever
    if not isinstance(raw, dict) or raw.get("v") != notify.JOB_VERSION:
        return  # not a job this version wrote: dropped unread rather than misread
    job: dict[str, Any] = raw  # a Job (notify.write_job) or a ScheduledEscalation, version checked
    own = lanes is None
    lanes = Lanes(state_dir) if lanes is None else lanes
    try:
        _run(job, job_path, state_dir, lanes)
        if own:
            lanes.wait()
    finally:
        if own:
            lanes.close()


def _run(job: dict[str, Any], job_path: str, state_dir: str, lanes: Lanes) -> None:
    escalation = job.get("escalation")
    deliveries = [job["delivery"]] if escalation else job["deliveries"]
    try:
        cfg = config.load(job.get("cwd"))
    except config.ConfigError as exc:
        for d in deliveries:
            names = escalation["channels"] if escalation else d["channels"]
            for name in names:
                record(state_dir, d["intent"], name, "failed", f"config error: {exc.errors[0]}")
        return
    if escalation:
        send_escalation(job["delivery"], escalation, cfg, state_dir, lanes)
        return
    for d in deliveries:
        deliver(d, cfg, state_dir, lanes)
    schedule_escalations(job["created_ms"], job.get("cwd"), deliveries, os.path.dirname(job_path))


class Lanes:
    """Sends grouped by channel: at most IN_FLIGHT at once per channel and QUEUED waiting. A
    hanging channel delays only its own messages; a flood costs threads, never processes."""

    def __init__(self, state_dir: str) -> None:
        self.state_dir = state_dir
        self._pools: dict[str, ThreadPoolExecutor] = {}
        self._pending: dict[str, int] = {}
        self._waiters: list[threading.Thread] = []
        self._lock = threading.Lock()

    def submit(self, channel: str, work: Callable[[], None]) -> bool:
        """Queue `work` for `channel`; False (nothing queued) when its backlog is full."""
        from concurrent.futures import ThreadPoolExecutor

        with self._lock:
            if self._pending.get(channel, 0) >= QUEUED:
                return False
            pool = self._pools.get(channel)
            if pool is None:
                pool = self._pools[channel] = ThreadPoolExecutor(IN_FLIGHT)
            self._pending[channel] = self._pending.get(channel, 0) + 1
        pool.submit(self._work, channel, work)
        return True

    def _work(self, channel: str, work: Callable[[], None]) -> None:
        try:
            work()
        except Exception:
            store.log_error(self.state_dir, f"notification sender: {traceback.format_exc()}")
        finally:
            with self._lock:
                self._pending[channel] -= 1

    def watch(self, wait: Callable[..., object], *args: Any) -> None:
        """Run `wait(*args)` in a thread of its own (a Focus click's bounded wait): the sender
        stays up while it runs, and it holds no lane slot."""
        waiter = threading.Thread(target=wait, args=args, daemon=True)
        with self._lock:
            self._waiters = [w for w in self._waiters if w.is_alive()] + [waiter]
        waiter.start()

    def busy(self) -> bool:
        with self._lock:
            return any(self._pending.values()) or any(w.is_alive() for w in self._waiters)

    def wait(self) -> None:
        while self.busy():
            time.sleep(0.01)

    def close(self) -> None:
        for pool in self._pools.values():
            pool.shutdown(wait=False)


# -- one delivery --------------------------------------------------------------------------------


def sequence_id(episode: str) -> str:
    # ntfy wants [-_A-Za-z0-9]{1,64}; episode keys hold ':' and tool input digests.
    return "lookout-" + hashlib.sha256(episode.encode()).hexdigest()[:32]


def message(
    d: Delivery,
    cfg: Config,
    ch: Channel,
    prefix: str = "",
    update: bool = False,
) -> dict[str, Any]:
    intent = d["intent"]
    level = ch["content"]
    # Every text that leaves goes through the one masker (N7), before it is cut to its level:
    # rendered here from the intent, not taken from the job, so a cut never splits a secret.
    title, body = templates.render_texts(intent, cfg["templates"], level, mask.mask)
    msg = {
        "title": prefix + title,
        "body": body,
        "kind": intent.get("kind"),
        "intent": intent,
        "values": templates.values(intent, level, mask.mask),
        "update": update,
    }
    episode = intent.get("episode")
    if isinstance(episode, str) and intent.get("kind") in ATTENTION_KINDS:
        msg["sequence_id"] = sequence_id(episode)
    return msg


def deliver(d: Delivery, cfg: Config, state_dir: str, lanes: Lanes | None = None) -> None:
    """Queue one delivery's alerts and updates on their channels' lanes (without `lanes`:
    send them and return once all are recorded)."""
    own = lanes is None
    lanes = Lanes(state_dir) if lanes is None else lanes
    intent = d["intent"]
    # A desktop alert for a session lookout can switch to offers Focus (issue 13).
    mark = focus_mark(state_dir, intent)
    for name in d["channels"]:
        ch = cfg["channels"].get(name)
        if ch is None or not ch["enabled"]:
            record(state_dir, intent, name, "skipped", "channel no longer in the config")
            continue
        msg = message(d, cfg, ch)
        if ch["type"] == "desktop" and mark is not None:
            msg["focus"] = True
        _queue(
            lanes, state_dir, intent, name, _alert_work(lanes, state_dir, d, name, ch, msg, mark)
        )
    for name in d.get("updates", []):
        _queue(lanes, state_dir, intent, name, _update_work(state_dir, d, cfg, name))
    if own:
        lanes.wait()
        lanes.close()


def _queue(
    lanes: Lanes, state_dir: str, intent: Intent, name: str, work: Callable[[], None]
) -> None:
    if not lanes.submit(name, work):
        record(state_dir, intent, name, "failed", f"dropped: {QUEUED} messages already wait for it")


def _alert_work(
    lanes: Lanes,
    state_dir: str,
    d: Delivery,
    name: str,
    ch: Channel,
    msg: dict[str, Any],
    mark: object | None = None,
    detail_prefix: str = "",
) -> Callable[[], None]:
    def work() -> None:
        intent = d["intent"]
        if ch["type"] == "desktop" and ch.get("skip_when_focused") and not detail_prefix:
            pane = intent.get("tmux_pane")
            if pane_focused(pane):
                reason = f"focused: tmux pane {pane} is active in an attached client"
                record(state_dir, intent, name, "skipped", reason)
                return
        send_one(state_dir, intent, name, ch, msg, detail_prefix)
        if "focus_proc" in msg:  # notify-send waits for a click on Focus: a waiter takes it
            proc, rest = msg.pop("focus_proc")
            lanes.watch(wait_focus, proc, rest, intent, name, state_dir, mark)

    return work


def _update_work(state_dir: str, d: Delivery, cfg: Config, name: str) -> Callable[[], None]:
    def work() -> None:
        intent = d["intent"]
        episode = intent.get("episode")
        ch = cfg["channels"].get(name)
        ref = wait_ref(state_dir, episode, name) if isinstance(episode, str) else None
        if ch is None or ref is None:
            record(state_dir, intent, name, "skipped", "nothing to update")
            return
        msg = message(d, cfg, ch, update=True)
        msg["ref"] = ref
        if ch["type"] == "ntfy":
            msg["sequence_id"] = ref
        send_one(state_dir, intent, name, ch, msg)

    return work


def send_one(
    state_dir: str,
    intent: Intent,
    name: str,
    ch: Channel,
    msg: dict[str, Any],
    detail_prefix: str = "",
) -> Outcome:
    """Send one message under its channel's timeout, record it, remember an alert's ref."""
    ((result, detail, ref),) = run_parallel([(name, ch, msg)])
    update = bool(msg.get("update"))
    record(state_dir, intent, name, result, detail_prefix + detail, update=update)
    episode = intent.get("episode")
    if (
        result == "sent"
        and ref
        and not update
        and isinstance(episode, str)
        and intent.get("kind") in ATTENTION_KINDS
    ):
        save_refs(state_dir, episode, {name: ref})
    return result, detail, ref


# -- the Focus action ----------------------------------------------------------------------------


def focus_mark(state_dir: str, intent: Intent) -> object | None:
    """What must stay the same while a Focus click still makes sense: the episode of an
    attention alert, the turn of a finished one. None: no Focus for this alert (another kind, or
    the session lives nowhere lookout can switch to)."""
    if intent.get("kind") not in FOCUS_KINDS or intent.get("agent_id"):
        return None
    snap = store.read_session(state_dir, str(intent.get("session_id")))
    if snap is None:
        return None
    from lookout import jump

    if not jump.reachable(snap):
        return None
    if intent["kind"] == "done":
        return ("turn", (snap.get("turn") or {}).get("started_ms"))
    return ("episode", intent.get("episode"))


def resolved(state_dir: str, intent: Intent, mark: object) -> bool:
    snap = store.read_session(state_dir, str(intent.get("session_id")))
    if snap is None or snap.get("status") == "ended":
        return True
    if intent.get("kind") == "done":
        return mark != ("turn", (snap.get("turn") or {}).get("started_ms"))
    return snap.get("status") != "attention" or mark != ("episode", snap.get("episode"))


def wait_focus(
    proc: subprocess.Popen[bytes],
    rest: bytes,
    intent: Intent,
    channel: str,
    state_dir: str,
    mark: object,
    wait_s: float = FOCUS_WAIT_S,
) -> str | None:
    """Wait for a click on the alert's Focus action, at most `wait_s` and only while the alert
    is current; on a click, jump to the session. Returns the action notify-send reported."""
    assert proc.stdout is not None and proc.stderr is not None
    fd = proc.stdout.fileno()
    buf = rest
    deadline = time.monotonic() + wait_s
    try:
        while b"\n" not in buf:
            if resolved(state_dir, intent, mark) or time.monotonic() > deadline:
                # SIGTERM, not SIGINT: notify-send then leaves the alert (or the "handled"
                # note that replaced it) where it is instead of closing it.
                proc.terminate()
                break
            if select.select([fd], [], [], FOCUS_POLL_S)[0]:
                chunk = os.read(fd, 4096)
                if not chunk:
                    break  # closed or expired without a click
                buf += chunk
    finally:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    action = buf.partition(b"\n")[0].decode("utf-8", "replace").strip() if b"\n" in buf else None
    if action == "default":
        from lookout import jump
        from lookout.errors import LookoutError

        try:
            landed = jump.jump_to(str(intent["session_id"]), state_dir=state_dir)
        except LookoutError as exc:
            record(state_dir, intent, channel, "clicked", f"Focus: {exc}")
        else:
            on = f" on client {landed.client}" if landed.client else ""
            record(
                state_dir, intent, channel, "clicked", f"Focus: {landed.via} {landed.target}{on}"
            )
    return action


def run_parallel(
    tasks: list[Task],
    send: Callable[[dict[str, Any], dict[str, Any], float], Outcome] = channels.send,
) -> list[Outcome]:
    """Each channel in its own thread under its own deadline: a hung one costs the others
    nothing, and the process never outlives the slowest timeout by much."""
    results: list[Outcome | None] = [None] * len(tasks)

    def work(i: int, ch: dict[str, Any], msg: dict[str, Any], timeout_s: float) -> None:
        results[i] = send(ch, msg, timeout_s)

    threads = []
    start = time.monotonic()
    for i, (_name, ch, msg) in enumerate(tasks):
        timeout_s = ch["timeout_ms"] / 1000
        t = threading.Thread(target=work, args=(i, ch, msg, timeout_s), daemon=True)
        t.start()
        threads.append((t, timeout_s))
    for t, timeout_s in threads:
        t.join(max(0.0, start + timeout_s + 0.5 - time.monotonic()))
    return [
        r if r is not None else ("failed", f"timed out after {t_s:g}s", None)
        for r, (_t, t_s) in zip(results, threads, strict=True)
    ]


# -- focus, refs, escalation -------------------------------------------------------------------


def pane_focused(pane: object) -> bool:
    """True only when tmux says `pane` is the active pane of the active window of an attached
    client. Anything unknown (no tmux, no pane, an error) means not focused: notify."""
    if not isinstance(pane, str) or not pane.startswith("%"):
        return False
    try:
        proc = subprocess.run(
            ["tmux", "list-clients", "-F", "#{pane_id}"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=2,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    if proc.returncode != 0:
        return False
    return pane in proc.stdout.decode("utf-8", "replace").split()


def save_refs(state_dir: str, episode: str, refs: dict[str, str]) -> None:
    path = os.path.join(state_dir, store.NOTIFY_REFS)
    now_ms = int(time.time() * 1000)
    with store.Locked(state_dir, store.NOTIFY_LOCK):
        data = store.read_json(path)
        table = data if isinstance(data, dict) else {}
        table = {
            k: v
            for k, v in table.items()
            if isinstance(v, dict) and now_ms - int(v.get("ts_ms", 0)) < REFS_KEEP_MS
        }
        entry = table.get(episode) or {"ts_ms": now_ms, "refs": {}}
        entry["refs"].update(refs)
        table[episode] = entry
        store.write_json_atomic(path, table)


def load_ref(state_dir: str, episode: str, channel: str) -> str | None:
    data = store.read_json(os.path.join(state_dir, store.NOTIFY_REFS))
    if isinstance(data, dict):
        ref = (data.get(episode) or {}).get("refs", {}).get(channel)
        return ref if isinstance(ref, str) else None
    return None


def wait_ref(state_dir: str, episode: str, channel: str, wait_s: float = REF_WAIT_S) -> str | None:
    deadline = time.monotonic() + wait_s
    while True:
        ref = load_ref(state_dir, episode, channel)
        if ref is not None or time.monotonic() >= deadline:
            return ref
        time.sleep(0.1)


_escalation_seq = iter(range(1 << 62))


def schedule_escalations(
    created_ms: int, cwd: str | None, deliveries: list[Delivery], outbox: str
) -> None:
    """Each escalation of a job becomes its own file (shapes.ScheduledEscalation), due
    `after_s` after the job was made: the sender waits for it, re-checking it, instead of a
    process sleeping for each one."""
    for d in deliveries:
        for e in d.get("escalate", []):
            due_ms = int(created_ms + e["after_s"] * 1000)
            name = f"{ESCALATION_FILE_PREFIX}{due_ms:013d}-{os.getpid()}-{next(_escalation_seq)}"
            scheduled: ScheduledEscalation = {
                "v": notify.JOB_VERSION,
                "cwd": cwd,
                "delivery": d,
                "escalation": e,
            }
            store.write_json_atomic(os.path.join(outbox, name + ".json"), scheduled)


def escalation_due(state_dir: str, intent: Intent) -> bool:
    """Is this escalation still due? The one check, asked while it waits (every POLL_S) and
    right before it pages anyone: the episode still waits on the user after reconciling it with
    the transcript and the process (not answered, not ended, process alive). When that cannot be
    read, the snapshot as the hooks left it decides."""
    from lookout import reconcile

    session_id = str(intent.get("session_id"))
    episode = intent.get("episode")
    if not isinstance(episode, str):
        return False
    try:
        return reconcile.still_waiting(state_dir, session_id, episode)
    except (OSError, TimeoutError):
        snap = store.read_session(state_dir, session_id)
        if snap is None:
            return False
        return snap.get("status") == "attention" and snap.get("episode") == episode


def send_escalation(d: Delivery, e: Escalation, cfg: Config, state_dir: str, lanes: Lanes) -> None:
    intent = d["intent"]
    if not escalation_due(state_dir, intent):
        _skip_escalation(state_dir, {"delivery": d, "escalation": e})
        return
    for name in e["channels"]:
        ch = cfg["channels"].get(name)
        if ch is None or not ch["enabled"]:
            record(state_dir, intent, name, "skipped", "channel no longer in the config")
            continue
        msg = message(d, cfg, ch, prefix=ESCALATION_PREFIX)
        prefix = f"escalated after {e['after_s']:g}s: "
        work = _alert_work(lanes, state_dir, d, name, ch, msg, detail_prefix=prefix)
        _queue(lanes, state_dir, intent, name, work)


def _skip_escalation(state_dir: str, job: dict[str, Any]) -> None:
    d, e = job["delivery"], job["escalation"]
    for name in e["channels"]:
        record(
            state_dir,
            d["intent"],
            name,
            "skipped",
            f"escalation after {e['after_s']:g}s: no longer waiting",
        )


def record(
    state_dir: str,
    intent: Intent,
    channel: str,
    result: str,
    detail: str,
    update: bool = False,
) -> None:
    now_ms = int(time.time() * 1000)
    line: dict[str, Any] = {
        "ts": store.rfc3339(now_ms),
        "session_id": intent.get("session_id"),
        "kind": intent.get("kind"),
        "channel": channel,
        "result": result,
        "detail": detail,
    }
    if intent.get("episode"):
        line["episode"] = intent["episode"]
    if isinstance(intent.get("ts_ms"), int):
        line["event_ts"] = store.rfc3339(intent["ts_ms"])  # joins the event that raised it
    if update:
        line["update"] = True
    # Its own lock: a slow disk under the senders never makes a hook wait on events.lock.
    with store.Locked(state_dir, store.DELIVERIES_LOCK) as st:  # rotated: the log stays bounded
        st.append(store.DELIVERIES, line, DELIVERIES_ROTATE_BYTES)
