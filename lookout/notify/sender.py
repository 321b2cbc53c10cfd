"""The detached background worker: sends one job to its channels (each in its own thread, with
its own timeout), records every result in deliveries.jsonl, updates alerts in place, escalates.

Started by notify.spawn.spawn, never by a hook directly; re-reads the config itself for secrets."""

from __future__ import annotations

import hashlib
import os
import select
import subprocess
import threading
import time
import traceback

from lookout import notify, store
from lookout.notify import channels, config, templates

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    Outcome = tuple[str, str, str | None]
    Task = tuple[str, dict[str, Any], dict[str, Any]]

DELIVERIES = "deliveries.jsonl"
DELIVERIES_ROTATE_BYTES = 1024 * 1024
REFS_NAME = "notify-refs.json"
# A resolve can race the alert's own sender: wait this long for its notification id.
REF_WAIT_S = 3.0
ESCALATION_PREFIX = "Still waiting: "
# While an escalation waits, how often it asks whether it is still due.
WAIT_STEP_S = 1.0
# A job older than this was never picked up (its sender failed to start): never send it.
STALE_JOB_S = 3600.0
# A desktop alert's Focus action is waited for this long at most, and only while the episode
# (or, for a finished turn, the session's idle time) lasts.
FOCUS_WAIT_S = 1800.0
FOCUS_POLL_S = 0.5
FOCUS_KINDS = (*config.ATTENTION_KINDS, "done")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(argv or [])
    if len(args) != 1:
        return 2
    job_path = os.path.abspath(args[0])
    state_dir = os.path.dirname(os.path.dirname(job_path))
    try:
        run_job(job_path, state_dir)
        sweep(os.path.dirname(job_path), state_dir)
    except Exception:
        store.log_error(state_dir, f"notification sender: {traceback.format_exc()}")
    return 0


def sweep(outbox: str, state_dir: str, max_age_s: float = STALE_JOB_S) -> int:
    """Drop jobs no sender took (one that failed to start): a late alert is a wrong alert."""
    now = time.time()
    dropped = 0
    for entry in os.scandir(outbox):
        try:
            if entry.name.endswith(".json") and now - entry.stat().st_mtime > max_age_s:
                os.unlink(entry.path)
                dropped += 1
        except FileNotFoundError:
            continue
    if dropped:
        store.log_error(state_dir, f"notification sender: dropped {dropped} stale job(s)")
    return dropped


def run_job(job_path: str, state_dir: str, sleep: Callable[[float], None] = time.sleep) -> None:
    job = store.read_json(job_path)
    try:
        os.unlink(job_path)  # one attempt per job: a crash must not resend it forever
    except FileNotFoundError:
        return  # another sender took it
    if not isinstance(job, dict):
        return
    try:
        cfg = config.load(job.get("cwd"))
    except config.ConfigError as exc:
        for d in job["deliveries"]:
            for name in d["channels"]:
                record(state_dir, d["intent"], name, "failed", f"config error: {exc.errors[0]}")
        return
    waiters: list[threading.Thread] = []
    for d in job["deliveries"]:
        deliver(d, cfg, state_dir, waiters)
    escalate(job, cfg, state_dir, sleep)
    for waiter in waiters:  # each ends by FOCUS_WAIT_S, or sooner when its episode does
        waiter.join()


# -- one delivery --------------------------------------------------------------------------------


def sequence_id(episode: str) -> str:
    # ntfy wants [-_A-Za-z0-9]{1,64}; episode keys hold ':' and tool input digests.
    return "lookout-" + hashlib.sha256(episode.encode()).hexdigest()[:32]


def message(
    d: dict[str, Any],
    cfg: dict[str, Any],
    ch: dict[str, Any],
    prefix: str = "",
    update: bool = False,
) -> dict[str, Any]:
    intent = d["intent"]
    level = ch["content"]
    texts = d.get("texts", {}).get(level) or templates.render_texts(intent, cfg["templates"], level)
    msg = {
        "title": prefix + texts[0],
        "body": texts[1],
        "kind": intent.get("kind"),
        "intent": intent,
        "values": templates.values(intent, level),
        "update": update,
    }
    episode = intent.get("episode")
    if isinstance(episode, str) and intent.get("kind") in config.ATTENTION_KINDS:
        msg["sequence_id"] = sequence_id(episode)
    return msg


def deliver(
    d: dict[str, Any],
    cfg: dict[str, Any],
    state_dir: str,
    waiters: list[threading.Thread] | None = None,
) -> list[Outcome]:
    """Send one delivery. Desktop alerts that can offer Focus leave their notify-send running:
    a thread waits for its click (appended to `waiters`; without it, nothing is waited for)."""
    intent = d["intent"]
    mark = focus_mark(state_dir, intent) if waiters is not None else None
    tasks: list[Task] = []
    for name in d["channels"]:
        ch = cfg["channels"].get(name)
        if ch is None or not ch["enabled"]:
            record(state_dir, intent, name, "skipped", "channel no longer in the config")
            continue
        if ch["type"] == "desktop" and ch.get("skip_when_focused"):
            pane = intent.get("tmux_pane")
            if pane_focused(pane):
                record(
                    state_dir,
                    intent,
                    name,
                    "skipped",
                    f"focused: tmux pane {pane} is active in an attached client",
                )
                continue
        msg = message(d, cfg, ch)
        if ch["type"] == "desktop" and mark is not None:
            msg["focus"] = True
        tasks.append((name, ch, msg))
    episode = intent.get("episode")
    for name in d.get("updates", []):
        ch = cfg["channels"].get(name)
        ref = wait_ref(state_dir, episode, name) if isinstance(episode, str) else None
        if ch is None or ref is None:
            record(state_dir, intent, name, "skipped", "nothing to update")
            continue
        msg = message(d, cfg, ch, update=True)
        msg["ref"] = ref
        if ch["type"] == "ntfy":
            msg["sequence_id"] = ref
        tasks.append((name, ch, msg))
    outcomes = run_parallel(tasks)
    refs: dict[str, str] = {}
    for (name, _ch, msg), (result, detail, ref) in zip(tasks, outcomes, strict=True):
        record(state_dir, intent, name, result, detail, update=bool(msg.get("update")))
        if result == "sent" and ref and not msg.get("update"):
            refs[name] = ref
    if refs and isinstance(episode, str) and intent.get("kind") in config.ATTENTION_KINDS:
        save_refs(state_dir, episode, refs)
    for name, _ch, msg in tasks:
        if "focus_proc" in msg:
            proc, rest = msg.pop("focus_proc")
            if waiters is None:
                proc.terminate()
                continue
            args = (proc, rest, intent, name, state_dir, mark)
            waiter = threading.Thread(target=wait_focus, args=args, daemon=True)
            waiter.start()
            waiters.append(waiter)
    return outcomes


# -- the Focus action ----------------------------------------------------------------------------


def focus_mark(state_dir: str, intent: dict[str, Any]) -> object | None:
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


def resolved(state_dir: str, intent: dict[str, Any], mark: object) -> bool:
    snap = store.read_session(state_dir, str(intent.get("session_id")))
    if snap is None or snap.get("status") == "ended":
        return True
    if intent.get("kind") == "done":
        return mark != ("turn", (snap.get("turn") or {}).get("started_ms"))
    return snap.get("status") != "attention" or mark != ("episode", snap.get("episode"))


def wait_focus(
    proc: subprocess.Popen[bytes],
    rest: bytes,
    intent: dict[str, Any],
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
    path = os.path.join(state_dir, REFS_NAME)
    now_ms = int(time.time() * 1000)
    with store.Locked(state_dir, notify.LOCK_NAME):
        data = store.read_json(path)
        table = data if isinstance(data, dict) else {}
        table = {
            k: v
            for k, v in table.items()
            if isinstance(v, dict) and now_ms - int(v.get("ts_ms", 0)) < 86_400_000
        }
        entry = table.get(episode) or {"ts_ms": now_ms, "refs": {}}
        entry["refs"].update(refs)
        table[episode] = entry
        store.write_json_atomic(path, table)


def load_ref(state_dir: str, episode: str, channel: str) -> str | None:
    data = store.read_json(os.path.join(state_dir, REFS_NAME))
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


def escalate(
    job: dict[str, Any], cfg: dict[str, Any], state_dir: str, sleep: Callable[[float], None]
) -> None:
    pending = sorted(
        (
            (job["created_ms"] / 1000 + e["after_s"], d, e)
            for d in job["deliveries"]
            for e in d.get("escalate", [])
        ),
        key=lambda item: item[0],
    )
    for due, d, e in pending:
        intent = d["intent"]
        if not wait_while_due(state_dir, intent, due, sleep):
            for name in e["channels"]:
                record(
                    state_dir,
                    intent,
                    name,
                    "skipped",
                    f"escalation after {e['after_s']:g}s: no longer waiting",
                )
            continue
        tasks: list[Task] = []
        for name in e["channels"]:
            ch = cfg["channels"].get(name)
            if ch is None or not ch["enabled"]:
                record(state_dir, intent, name, "skipped", "channel no longer in the config")
                continue
            tasks.append((name, ch, message(d, cfg, ch, prefix=ESCALATION_PREFIX)))
        refs: dict[str, str] = {}
        for (name, _ch, _msg), (result, detail, ref) in zip(
            tasks, run_parallel(tasks), strict=True
        ):
            record(state_dir, intent, name, result, f"escalated after {e['after_s']:g}s: {detail}")
            if result == "sent" and ref:
                refs[name] = ref
        if refs:  # so that the episode's end can update the escalation too
            save_refs(state_dir, str(intent["episode"]), refs)


def wait_while_due(
    state_dir: str, intent: dict[str, Any], due: float, sleep: Callable[[float], None]
) -> bool:
    """Wait until `due` (epoch seconds), asking every WAIT_STEP_S whether the escalation is still
    due: an answer in the terminal ends the wait (and its episode, through reconcile) at once."""
    while True:
        sleep(max(0.0, min(WAIT_STEP_S, due - time.time())))
        if not escalation_due(state_dir, intent):
            return False
        if time.time() >= due:
            return True


def escalation_due(state_dir: str, intent: dict[str, Any]) -> bool:
    """The one check right before an escalation pages anyone: the episode still waits on the
    user after reconciling it with the transcript and the process (not answered, not ended,
    process alive). When that cannot be read, the snapshot as the hooks left it decides."""
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


def record(
    state_dir: str,
    intent: dict[str, Any],
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
    if update:
        line["update"] = True
    with store.Locked(state_dir) as st:  # rotated like events.jsonl: the log stays bounded
        st.append(DELIVERIES, line, DELIVERIES_ROTATE_BYTES)
