"""What the sender and the answer surfaces both write about a send: one line of deliveries.jsonl
each (`record`), a send under its channel's timeout (`send_one`, `run_parallel`), and the ids of
an episode's sent alerts, kept to update them in place (`save_refs`, `load_ref`, `wait_ref`,
`had_actions`)."""

from __future__ import annotations

import os
import threading
import time

from lookout import store, words
from lookout.channels import registry
from lookout.words import ATTENTION_KINDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from lookout.shapes import Channel, Intent

    Outcome = tuple[str, str, str | None]
    Task = tuple[str, Channel, dict[str, Any]]


DELIVERIES_ROTATE_BYTES = store.DELIVERIES_ROTATE_BYTES
# The id of a sent alert is kept this long for an update in place (an episode rarely lasts a day).
REFS_KEEP_MS = store.DAY_MS
# A resolve can race the alert's own sender: wait this long for its notification id.
REF_WAIT_S = 3.0


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
        actions = [name] if msg.get("focus") or msg.get("answer") else []
        save_refs(state_dir, episode, {name: ref}, actions)
    return result, detail, ref


def run_parallel(
    tasks: list[Task],
    send: Callable[[Channel, dict[str, Any], float], Outcome] = registry.send,
) -> list[Outcome]:
    """Each channel in its own thread under its own deadline: a hung one costs the others
    nothing, and the process never outlives the slowest timeout by much."""
    results: list[Outcome | None] = [None] * len(tasks)

    def work(i: int, ch: Channel, msg: dict[str, Any], timeout_s: float) -> None:
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


def save_refs(
    state_dir: str, episode: str, refs: dict[str, str], actions: list[str] | None = None
) -> None:
    """Keep the ids of an episode's alerts; `actions`: the channels whose alert has buttons
    (its update closes it first, so no daemon keeps them under the note)."""
    path = os.path.join(state_dir, store.NOTIFY_REFS)
    now_ms = words.now_ms()
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
        with_actions = [n for n in entry.get("actions") or [] if n not in refs]
        entry["actions"] = with_actions + list(actions or [])
        table[episode] = entry
        store.write_json_atomic(path, table)


def load_ref(state_dir: str, episode: str, channel: str) -> str | None:
    data = store.read_json(os.path.join(state_dir, store.NOTIFY_REFS))
    if isinstance(data, dict):
        ref = (data.get(episode) or {}).get("refs", {}).get(channel)
        return ref if isinstance(ref, str) else None
    return None


def had_actions(state_dir: str, episode: str, channel: str) -> bool:
    data = store.read_json(os.path.join(state_dir, store.NOTIFY_REFS))
    if isinstance(data, dict):
        return channel in ((data.get(episode) or {}).get("actions") or [])
    return False


def wait_ref(state_dir: str, episode: str, channel: str, wait_s: float = REF_WAIT_S) -> str | None:
    deadline = time.monotonic() + wait_s
    while True:
        ref = load_ref(state_dir, episode, channel)
        if ref is not None or time.monotonic() >= deadline:
            return ref
        time.sleep(0.1)


def record(
    state_dir: str,
    intent: Intent,
    channel: str,
    result: str,
    detail: str,
    update: bool = False,
    rule: int | None = None,
    reason: str | None = None,
) -> None:
    """One line of deliveries.jsonl; a rule that withheld or merged it names itself (`rule`,
    `reason`: the rule's index and key) for `lookout explain`."""
    now_ms = words.now_ms()
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
    if rule is not None:
        line["rule"] = rule
        line["reason"] = reason
    # Its own lock: a slow disk under the senders never makes a hook wait on events.lock.
    with store.Locked(state_dir, store.DELIVERIES_LOCK) as st:  # rotated: the log stays bounded
        st.append(store.DELIVERIES, line, DELIVERIES_ROTATE_BYTES)
