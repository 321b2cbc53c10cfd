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
    from typing import Any

STATE_NAME = "notify-state.json"
LOCK_NAME = "notify.lock"
OUTBOX = "outbox"


def minute_of_day(now_ms: int) -> int:
    t = time.localtime(now_ms / 1000)
    return t.tm_hour * 60 + t.tm_min


def handle(intents: list[dict[str, Any]], state_dir: str) -> None:
    if not intents:
        return
    cwd = intents[0].get("cwd")
    cfg = config.load_cached(state_dir, cwd if isinstance(cwd, str) else None)
    if not cfg or not cfg["rules"]:
        return
    now_ms = int(time.time() * 1000)
    _link_requests(intents, cfg)
    deliveries = decide_and_remember(intents, cfg, state_dir, now_ms)
    if deliveries:
        job_path = write_job(state_dir, build_job(deliveries, cfg, cwd, now_ms))
        from lookout.notify import spawn

        try:
            spawn.spawn(job_path)
        except BaseException:
            os.unlink(job_path)  # no sender will ever take it
            raise


def _link_requests(intents: list[dict[str, Any]], cfg: dict[str, Any]) -> None:
    """With [remote] on and the dashboard's address known, an alert for a permission that may
    be answered from afar links to that request's page: a link, never a bearer decision (the
    page needs the dashboard's login; the request's nonce never leaves the state directory)."""
    remote = cfg.get("remote") or {}
    if not (remote.get("enabled") and remote.get("url")):
        return
    for intent in intents:
        request = intent.get("request")
        tool = intent.get("tool_name")
        if not (isinstance(request, list) and len(request) == 3 and isinstance(tool, str)):
            continue
        from fnmatch import fnmatchcase

        if not any(fnmatchcase(tool, glob) for glob in remote.get("tools") or []):
            continue
        from lookout.remote.requests import request_id

        agent_id, prompt_id, key = request
        rid = request_id(str(intent["session_id"]), agent_id, prompt_id, str(key or ""))
        intent["url"] = f"{remote['url']}/#request={rid}"


def decide_and_remember(
    intents: list[dict[str, Any]], cfg: dict[str, Any], state_dir: str, now_ms: int
) -> list[dict[str, Any]]:
    path = os.path.join(state_dir, STATE_NAME)
    # Its own lock (the events lock is already released), with the same bounded wait.
    with store.Locked(state_dir, LOCK_NAME):
        state = store.read_json(path)
        deliveries, new_state = rules.decide(
            intents, cfg, now_ms, minute_of_day(now_ms), state if isinstance(state, dict) else None
        )
        if new_state != state:
            store.write_json_atomic(path, new_state)
    return deliveries


def build_job(
    deliveries: list[dict[str, Any]], cfg: dict[str, Any], cwd: object, now_ms: int
) -> dict[str, Any]:
    """What the sender needs besides secrets: intents, channel names and the rendered texts at
    each content level those channels use."""
    channels = cfg["channels"]
    out = []
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
        "v": 1,
        "created_ms": now_ms,
        "cwd": cwd if isinstance(cwd, str) else None,
        "deliveries": out,
    }


def write_job(state_dir: str, job: dict[str, Any]) -> str:
    outbox = os.path.join(state_dir, OUTBOX)
    store.ensure_dir(outbox)
    path = os.path.join(outbox, f"{job['created_ms']}-{os.getpid()}.json")
    store.write_json_atomic(path, job)
    return path
