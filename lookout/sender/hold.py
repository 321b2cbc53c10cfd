"""Grace and digests (issue 26): alerts a rule holds back as jobs due later (notify/outbox.py),
re-checked like escalations (escalate.escalation_due) and dropped or merged instead of paging.

- grace (a job of kind `grace`): sent when due unless the dialog was answered meanwhile.
- digest (kind `digest`): one per channel; every alert held for the channel before it is due
  joins it; when due, one message lists every session still waiting. notify-digests.json keeps a
  sent digest's items so that a resolve replaces the message with the sessions left.

Only the sender runs this (one per state directory): the outbox files have one writer."""

from __future__ import annotations

import hashlib
import os
import threading

from lookout import mask, store, templates, words
from lookout.deliveries import record, save_refs, send_one
from lookout.notify import outbox
from lookout.sender import escalate
from lookout.sender.deliver import deliver, message, queue

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from lookout.notify.outbox import DigestItem, DigestJob, GraceJob, Job
    from lookout.sender.lanes import Lanes
    from lookout.shapes import Config, Delivery, Hold, Intent

DIGESTS = "notify-digests.json"  # sent digests: their items, to update them on a resolve
DIGESTS_KEEP_MS = store.DAY_MS
# Updates of one sent digest, one at a time: two resolves racing must not reorder the message.
_digest_locks: dict[str, threading.Lock] = {}
_locks_lock = threading.Lock()


def _seconds(s: float) -> str:
    return f"{s:g}"


def _hold_line(
    state_dir: str, intent: Intent, channel: str, result: str, hold: Hold, detail: str
) -> None:
    record(
        state_dir,
        intent,
        channel,
        result,
        f"rules[{hold['rule']}]: {hold['key']} = {_seconds(hold['after_s'])}: {detail}",
        rule=hold["rule"],
        reason=hold["key"],
    )


# -- the hook's job arrives ----------------------------------------------------------------------


def schedule(
    created_ms: int, cwd: str | None, d: Delivery, outbox_dir: str, state_dir: str
) -> None:
    """Each hold of a delivery: a grace job due `after_s` after the job was made, or the item
    joins the channel's open digest (opening one due `after_s` from now)."""
    for h in d.get("hold") or []:
        due = int(created_ms + h["after_s"] * 1000)
        if h["key"] == "grace_s":
            outbox.grace(outbox_dir, due, cwd, d, h)
            continue
        for channel in h["channels"]:
            _join_digest(due, cwd, d, {**h, "channels": [channel]}, outbox_dir, state_dir)


def _join_digest(
    due: int, cwd: str | None, d: Delivery, h: Hold, outbox_dir: str, state_dir: str
) -> None:
    channel = h["channels"][0]
    item: DigestItem = {"intent": d["intent"], "texts": d.get("texts") or {}}
    others = outbox.join_digest(outbox_dir, channel, item)
    if others is not None:
        detail = f"merged into the digest with {others} other alert(s)"
        _hold_line(state_dir, d["intent"], channel, "merged", h, detail)
        return
    outbox.open_digest(outbox_dir, due, cwd, h, item)
    _hold_line(state_dir, d["intent"], channel, "merged", h, "opened a digest")


def drop_pending(state_dir: str, outbox_dir: str, d: Delivery) -> None:
    """A `resolved` delivery: a held alert of its episode is dropped at once (the dialog was
    answered), and so is the update of its channel, which never got that alert."""
    episode = d["intent"].get("episode")
    if d["intent"].get("kind") != "resolved" or not isinstance(episode, str):
        return
    if d["updates"]:  # a hold the sender's own re-check dropped already
        dropped = _dropped(state_dir, episode)
        d["updates"] = [n for n in d["updates"] if n not in dropped]
    for path, job in outbox.later(outbox_dir):
        gone = _drop_answered(state_dir, path, job, episode)
        d["updates"] = [n for n in d["updates"] if n not in gone]


def _drop_answered(state_dir: str, path: str, job: Job, episode: str) -> set[str]:
    """Take `episode`'s alert out of a held job (a grace job goes, a digest loses its item):
    the channels that will never get it."""
    if job["kind"] == "grace":
        if job["delivery"]["intent"].get("episode") != episode or not outbox.remove(path):
            return set()
        _answered_in_grace(state_dir, job)
        return set(job["grace"]["channels"])
    if job["kind"] == "digest":
        left = [i for i in job["items"] if i["intent"].get("episode") != episode]
        if len(left) == len(job["items"]):
            return set()
        for item in job["items"]:
            if item not in left:
                _answered_in_digest(state_dir, job["digest"], item)
        outbox.keep_items(path, job, left)
        return set(job["digest"]["channels"][:1])
    return set()


def _answered_in_grace(state_dir: str, job: GraceJob) -> None:
    h = job["grace"]
    intent = job["delivery"]["intent"]
    _mark_dropped(state_dir, intent, h["channels"])
    for channel in h["channels"]:
        _hold_line(state_dir, intent, channel, "skipped", h, "answered within grace")


def _answered_in_digest(state_dir: str, h: Hold, item: DigestItem) -> None:
    channel = h["channels"][0]
    _mark_dropped(state_dir, item["intent"], [channel])
    _hold_line(
        state_dir, item["intent"], channel, "skipped", h, "answered before the digest was sent"
    )


def _mark_dropped(state_dir: str, intent: Intent, channels: list[str]) -> None:
    """Remember (next to the sent alerts' ids) the channels that never got the episode's alert:
    its resolve, however late, has nothing to update there."""
    episode = intent.get("episode")
    if not isinstance(episode, str):
        return
    path = os.path.join(state_dir, store.NOTIFY_REFS)
    with store.Locked(state_dir, store.NOTIFY_LOCK):
        data = store.read_json(path)
        table = data if isinstance(data, dict) else {}
        entry = table.get(episode)
        if not isinstance(entry, dict):
            entry = table[episode] = {"ts_ms": words.now_ms(), "refs": {}}
        entry["dropped"] = sorted({*entry.get("dropped", []), *channels})
        store.write_json_atomic(path, table)


def _dropped(state_dir: str, episode: str) -> list[str]:
    data = store.read_json(os.path.join(state_dir, store.NOTIFY_REFS))
    entry = data.get(episode) if isinstance(data, dict) else None
    dropped = entry.get("dropped") if isinstance(entry, dict) else None
    return [str(n) for n in dropped] if isinstance(dropped, list) else []


# -- while it waits ------------------------------------------------------------------------------


def recheck(state_dir: str, path: str) -> bool:
    """A waiting grace or digest job, asked every RECHECK_S: drop what was answered (recorded);
    False when nothing of it is left."""
    job, newer = outbox.read(path)
    if job is None:
        if not newer:
            outbox.remove(path)
        return False
    if job["kind"] == "grace":
        if escalate.escalation_due(state_dir, job["delivery"]["intent"]):
            return True
        if outbox.remove(path):
            _answered_in_grace(state_dir, job)
        return False
    if job["kind"] != "digest":
        return True  # not held here: the sender's own
    left = _still_waiting(state_dir, job)
    if len(left) < len(job["items"]):
        outbox.keep_items(path, job, left)
    return bool(left)


def _still_waiting(state_dir: str, job: DigestJob) -> list[DigestItem]:
    left = []
    for item in job["items"]:
        if escalate.escalation_due(state_dir, item["intent"]):
            left.append(item)
        else:
            _answered_in_digest(state_dir, job["digest"], item)
    return left


# -- when due ------------------------------------------------------------------------------------


def send_grace(job: GraceJob, cfg: Config, state_dir: str, lanes: Lanes) -> None:
    """A grace file came due: one last check, then the held channels' alerts."""
    if not escalate.escalation_due(state_dir, job["delivery"]["intent"]):
        _answered_in_grace(state_dir, job)
        return
    h = job["grace"]
    held = job["delivery"]
    d: Delivery = {
        "intent": held["intent"],
        "channels": h["channels"],
        "updates": [],
        "escalate": [],
        "hold": [],
    }
    deliver(d, cfg, state_dir, lanes, detail_prefix=f"after grace_s = {_seconds(h['after_s'])}: ")


def digest_id(path: str) -> str:
    return "lookout-digest-" + hashlib.sha256(os.path.basename(path).encode()).hexdigest()[:24]


def _entry(item: DigestItem, level: str) -> str:
    intent = item["intent"]
    values = templates.values(intent, level, mask.mask)
    kind = values["kind"]
    summary = templates.truncate(" ".join(mask.mask(str(intent.get("summary") or "")).split()), 60)
    # Named by its title, as the alert itself and `lookout status` name it (sessions.label).
    if kind == "permission" and summary and level != "none":
        return f"{values['session']} ({kind}: {summary})"
    return f"{values['session']} ({kind})"


def digest_message(items: list[DigestItem], level: str, ident: str) -> dict[str, Any]:
    """ "3 sessions need you" / "api (permission: npm test), web (question), demo (plan)"."""
    n = len(items)
    title = f"{n} session needs you" if n == 1 else f"{n} sessions need you"
    first = items[0]["intent"]
    body = ", ".join(_entry(i, level) for i in items)
    values = {**templates.values(first, level, mask.mask), "summary": body}
    for key in ("project", "session"):
        named = (templates.values(i["intent"], "none", mask.mask)[key] for i in items)
        values[key] = ", ".join(dict.fromkeys(named))
    return {
        "title": title,
        "body": body,
        "kind": first.get("kind"),
        "intent": {"kind": first.get("kind")},  # many sessions: no one session's link or id
        "values": values,
        "update": False,
        "sequence_id": ident,
    }


def send_digest(job: DigestJob, path: str, cfg: Config, state_dir: str, lanes: Lanes) -> None:
    """A digest came due: the items still waiting, as one message on its channel."""
    h = job["digest"]
    channel = h["channels"][0]
    items = _still_waiting(state_dir, job)
    ch = cfg["channels"].get(channel)
    if not items:
        return
    if ch is None or not ch["enabled"]:
        for item in items:
            record(state_dir, item["intent"], channel, "skipped", "channel no longer in the config")
        return
    ident = digest_id(path)
    msg = digest_message(items, ch["content"], ident)
    first = items[0]["intent"]

    def work() -> None:
        prefix = f"a digest of {len(items)}: "
        result, detail, ref = send_one(state_dir, first, channel, ch, msg, prefix)
        for item in items[1:]:
            record(state_dir, item["intent"], channel, result, prefix + detail)
        if result == "sent" and ref:
            _remember(state_dir, ident, channel, ref, items)
            for item in items[1:]:
                save_refs(state_dir, str(item["intent"]["episode"]), {channel: ref})

    queue(lanes, state_dir, first, channel, work)


def _remember(state_dir: str, ident: str, channel: str, ref: str, items: list[DigestItem]) -> None:
    path = os.path.join(state_dir, DIGESTS)
    now_ms = words.now_ms()
    with store.Locked(state_dir, store.NOTIFY_LOCK):
        data = store.read_json(path)
        table = {
            k: v
            for k, v in (data if isinstance(data, dict) else {}).items()
            if isinstance(v, dict) and now_ms - int(v.get("ts_ms", 0)) < DIGESTS_KEEP_MS
        }
        table[ident] = {"channel": channel, "ref": ref, "ts_ms": now_ms, "items": items}
        store.write_json_atomic(path, table)


def _lock(ident: str) -> threading.Lock:
    with _locks_lock:
        return _digest_locks.setdefault(ident, threading.Lock())


def take_updates(state_dir: str, d: Delivery, cfg: Config, lanes: Lanes) -> None:
    """A `resolved` delivery whose alert went out in a digest: instead of the episode's own
    update, the digest is replaced with the sessions left (or with the episode's "handled" note
    when none is)."""
    episode = d["intent"].get("episode")
    if d["intent"].get("kind") != "resolved" or not isinstance(episode, str):
        return
    table = store.read_json(os.path.join(state_dir, DIGESTS))
    for ident, entry in (table if isinstance(table, dict) else {}).items():
        if not isinstance(entry, dict) or entry.get("channel") not in d["updates"]:
            continue
        if any(i["intent"].get("episode") == episode for i in entry.get("items", [])):
            channel = str(entry["channel"])
            d["updates"] = [n for n in d["updates"] if n != channel]
            work = _digest_update_work(state_dir, d, cfg, ident, channel, str(entry["ref"]))
            queue(lanes, state_dir, d["intent"], channel, work)


def _digest_update_work(
    state_dir: str, d: Delivery, cfg: Config, ident: str, channel: str, ref: str
) -> Callable[[], None]:
    def work() -> None:
        episode = d["intent"].get("episode")
        ch = cfg["channels"].get(channel)
        if ch is None or not ch["enabled"]:
            record(state_dir, d["intent"], channel, "skipped", "channel no longer in the config")
            return
        path = os.path.join(state_dir, DIGESTS)
        with _lock(ident):
            with store.Locked(state_dir, store.NOTIFY_LOCK):
                table = store.read_json(path)
                if not isinstance(table, dict) or not isinstance(table.get(ident), dict):
                    return
                entry = table[ident]
                left = [i for i in entry["items"] if i["intent"].get("episode") != episode]
                if left:
                    entry["items"] = left
                else:
                    del table[ident]
                store.write_json_atomic(path, table)
            # The sessions left, or the last one's "handled" note.
            msg = digest_message(left, ch["content"], ident) if left else message(d, cfg, ch)
            msg["update"] = True
            msg["ref"] = ref
            send_one(state_dir, d["intent"], channel, ch, msg, "digest: " if left else "")

    return work
