"""The hook's side of notifications: intents -> rules -> one job file -> one detached sender.

Runs on the hook's hot path after the state lock is released: never sends, never waits, never
imports subprocess/urllib/tomllib unless a config file changed."""

from __future__ import annotations

import posix
import time

from lookout import paths, store
from lookout.config import cache
from lookout.words import now_ms

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from lookout.notify.outbox import AlertJob
    from lookout.notify.rules import Skip
    from lookout.shapes import Config, Delivery, Intent


def stuck_after_s(state_dir: str) -> float:
    """`[sessions] stuck_after_s` of the config the hooks cache (the default when it cannot be
    read): what reconcile judges a silent session by."""
    from lookout.config.sessions import stuck_after_s as read
    from lookout.errors import LookoutError

    try:
        cfg = cache.load_cached(state_dir, None)
    except (OSError, LookoutError):
        cfg = None
    return read(cfg)


def minute_of_day(ms: int) -> int:
    t = time.localtime(ms / 1000)
    return t.tm_hour * 60 + t.tm_min


def handle(intents: list[Intent], state_dir: str) -> None:
    if not intents:
        return
    cwd = intents[0].get("cwd")
    cfg = cache.load_cached(state_dir, cwd if isinstance(cwd, str) else None)
    if not cfg or not cfg["rules"]:
        return
    ms = now_ms()
    _link_requests(intents, cfg)
    skipped: list[Skip] = []
    deliveries = decide_and_remember(intents, cfg, state_dir, ms, skipped)
    if skipped:
        record_skipped(state_dir, skipped, ms)
    if deliveries:
        job_path = write_job(state_dir, build_job(deliveries, cfg, cwd, ms))
        from lookout import spawn

        try:
            spawn.spawn(state_dir, job_path, [cwd] if isinstance(cwd, str) else [])
        except BaseException:
            posix.unlink(job_path)  # no sender will ever take it
            raise


def _link_requests(intents: list[Intent], cfg: Config) -> None:
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
        from lookout.hookspec import request_id

        agent_id, prompt_id, key = request
        rid = request_id(str(intent["session_id"]), agent_id, prompt_id, str(key or ""))
        intent["url"] = f"{remote['url']}/#request={rid}"


def decide_and_remember(
    intents: list[Intent],
    cfg: Config,
    state_dir: str,
    now_ms: int,
    skipped: list[Skip] | None = None,
) -> list[Delivery]:
    path = paths.join(state_dir, store.NOTIFY_STATE)
    # Its own lock (the events lock is already released), with the same bounded wait.
    with store.Locked(state_dir, store.NOTIFY_LOCK):
        state = store.read_json(path)
        from lookout.notify import rules  # not for stuck_after_s: a reader's way here

        deliveries, new_state = rules.decide(
            intents,
            cfg,
            now_ms,
            minute_of_day(now_ms),
            state if isinstance(state, dict) else None,
            skipped,
        )
        if new_state != state:
            store.write_json_atomic(path, new_state)
    return deliveries


def record_skipped(state_dir: str, skipped: list[Skip], now_ms: int) -> None:
    """One `skipped` line per rule that withheld a notification, in deliveries.jsonl next to
    what was sent: the answer to "why did I not get it?" (`lookout explain`)."""
    lines = []
    for skip in skipped:
        intent = skip["intent"]
        line: dict[str, Any] = {
            "ts": store.rfc3339(now_ms),
            "session_id": intent.get("session_id"),
            "kind": intent.get("kind"),
            "channel": ",".join(skip["channels"]),
            "result": "skipped",
            "detail": f"rules[{skip['rule']}]: {skip['detail']}",
            "rule": skip["rule"],
            "reason": skip["reason"],
            "event_ts": store.rfc3339(intent["ts_ms"]),
        }
        if intent.get("episode"):
            line["episode"] = intent["episode"]
        lines.append(line)
    with store.Locked(state_dir, store.DELIVERIES_LOCK) as st:  # as the sender's records
        for line in lines:
            st.append(store.DELIVERIES, line, store.DELIVERIES_ROTATE_BYTES)


def build_job(deliveries: list[Delivery], cfg: Config, cwd: object, now_ms: int) -> AlertJob:
    """What the sender needs besides secrets: intents, channel names and the rendered texts at
    each content level those channels use."""
    from lookout import templates
    from lookout.notify import outbox  # only a hook that notifies: its job's format

    channels = cfg["channels"]
    out: list[Delivery] = []
    for d in deliveries:
        names = set(d["channels"]) | set(d["updates"])
        for e in [*d["escalate"], *d.get("hold", [])]:
            names.update(e["channels"])
        levels = sorted({channels[n]["content"] for n in names if n in channels})
        texts = {
            level: list(
                templates.render_texts(d["intent"], cfg["templates"], level, host=cfg.get("host"))
            )
            for level in levels
        }
        out.append({**d, "texts": texts})
    return outbox.alert(now_ms, cwd if isinstance(cwd, str) else None, out)


def write_job(state_dir: str, job: AlertJob) -> str:
    from lookout.notify import outbox

    return outbox.write_alert(state_dir, job)
