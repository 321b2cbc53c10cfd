"""The hook's side of notifications: intents -> rules -> one job file -> one detached sender.

Runs on the hook's hot path after the state lock is released: never sends, never waits, never
imports subprocess/urllib/tomllib unless a config file changed."""

from __future__ import annotations

import os
import time

from lookout import store
from lookout.notify import config, rules, templates

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lookout.shapes import Config, Delivery, Intent, Job

# The job file's shape (shapes.Job); the sender drops a job of another version unread.
JOB_VERSION = 1


def minute_of_day(now_ms: int) -> int:
    t = time.localtime(now_ms / 1000)
    return t.tm_hour * 60 + t.tm_min


def handle(intents: list[Intent], state_dir: str) -> None:
    if not intents:
        return
    cwd = intents[0].get("cwd")
    cfg = config.load_cached(state_dir, cwd if isinstance(cwd, str) else None)
    if not cfg or not cfg["rules"]:
        return
    now_ms = int(time.time() * 1000)
    deliveries = decide_and_remember(intents, cfg, state_dir, now_ms)
    if deliveries:
        job_path = write_job(state_dir, build_job(deliveries, cfg, cwd, now_ms))
        from lookout.notify import spawn

        try:
            spawn.spawn(state_dir, job_path)
        except BaseException:
            os.unlink(job_path)  # no sender will ever take it
            raise


def decide_and_remember(
    intents: list[Intent], cfg: Config, state_dir: str, now_ms: int
) -> list[Delivery]:
    path = os.path.join(state_dir, store.NOTIFY_STATE)
    # Its own lock (the events lock is already released), with the same bounded wait.
    with store.Locked(state_dir, store.NOTIFY_LOCK):
        state = store.read_json(path)
        deliveries, new_state = rules.decide(
            intents, cfg, now_ms, minute_of_day(now_ms), state if isinstance(state, dict) else None
        )
        if new_state != state:
            store.write_json_atomic(path, new_state)
    return deliveries


def build_job(deliveries: list[Delivery], cfg: Config, cwd: object, now_ms: int) -> Job:
    """What the sender needs besides secrets: intents, channel names and the rendered texts at
    each content level those channels use."""
    channels = cfg["channels"]
    out: list[Delivery] = []
    for d in deliveries:
        names = set(d["channels"]) | set(d["updates"])
        for e in d["escalate"]:
            names.update(e["channels"])
        levels = sorted({channels[n]["content"] for n in names if n in channels})
        texts = {
            level: list(templates.render_texts(d["intent"], cfg["templates"], level))
            for level in levels
        }
        out.append({**d, "texts": texts})
    return {
        "v": JOB_VERSION,
        "created_ms": now_ms,
        "cwd": cwd if isinstance(cwd, str) else None,
        "deliveries": out,
    }


def write_job(state_dir: str, job: Job) -> str:
    outbox = os.path.join(state_dir, store.OUTBOX)
    store.ensure_dir(outbox)
    path = os.path.join(outbox, f"{job['created_ms']}-{os.getpid()}.json")
    store.write_json_atomic(path, job)
    return path
