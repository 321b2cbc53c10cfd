"""One delivery: its messages rendered per channel, queued on the channel's lane, sent under the
channel's timeout, recorded in deliveries.jsonl; the ids of sent alerts kept to update them in
place; an escalation that came due paged."""

from __future__ import annotations

import hashlib
import os
import threading
import time

from lookout import mask, store, templates, words
from lookout.channels import registry
from lookout.jump import focus
from lookout.platform import current as platform
from lookout.platform.base import CLICKS
from lookout.sender import escalate
from lookout.sender.lanes import QUEUED, Lanes
from lookout.words import ATTENTION_KINDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable
    from typing import Any

    from lookout.shapes import Channel, Config, Delivery, Escalation, Intent

    Outcome = tuple[str, str, str | None]
    Task = tuple[str, Channel, dict[str, Any]]


DELIVERIES_ROTATE_BYTES = store.DELIVERIES_ROTATE_BYTES
# The id of a sent alert is kept this long for an update in place (an episode rarely lasts a day).
REFS_KEEP_MS = store.DAY_MS
# A resolve can race the alert's own sender: wait this long for its notification id.
REF_WAIT_S = 3.0


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


def deliver(
    d: Delivery,
    cfg: Config,
    state_dir: str,
    lanes: Lanes | None = None,
    detail_prefix: str = "",
) -> None:
    """Queue one delivery's alerts and updates on their channels' lanes (without `lanes`:
    send them and return once all are recorded)."""
    own = lanes is None
    lanes = Lanes(state_dir) if lanes is None else lanes
    intent = d["intent"]
    # An alert for a session lookout can switch to offers Focus (issue 13), where its type can.
    mark = focus.focus_mark(state_dir, intent)
    for name in d["channels"]:
        ch = cfg["channels"].get(name)
        if ch is None or not ch["enabled"]:
            record(state_dir, intent, name, "skipped", "channel no longer in the config")
            continue
        msg = message(d, cfg, ch)
        if registry.of(ch).FOCUS and mark is not None:
            msg["focus"] = True
        work = _alert_work(
            lanes, state_dir, d, name, ch, msg, mark, detail_prefix, remote=cfg.get("remote")
        )
        queue(lanes, state_dir, intent, name, work)
    for name in d.get("updates", []):
        queue(lanes, state_dir, intent, name, _update_work(state_dir, d, cfg, name))
    if own:
        lanes.wait()
        lanes.close()


def queue(
    lanes: Lanes, state_dir: str, intent: Intent, name: str, work: Callable[[], None]
) -> None:
    """Hand `work` to channel `name`'s lane; a lane already full records a failed delivery."""
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
    remote: dict[str, Any] | None = None,
) -> Callable[[], None]:
    def work() -> None:
        intent = d["intent"]
        if _focused(state_dir, intent, name, ch, detail_prefix):
            return
        surface = _surface(ch) if remote else None
        alert = _Alert(state_dir, intent, name, ch, msg, remote or {}, mark)
        if surface is not None:
            surface.bind(alert)
        bound = bool(msg.get("answer") or msg.get("buttons"))
        result, _, ref = send_one(state_dir, intent, name, ch, msg, detail_prefix)
        sent = ref if result == "sent" else None
        if surface is not None and sent:
            surface.sent(alert, sent)
        if "focus_proc" in msg:  # notify-send waits for a click on an action: a waiter takes it
            _hand_over(lanes, state_dir, intent, name, ch, msg, mark, ref)
        if surface is not None and not bound and sent and _late(intent, remote):
            # Its request was not recorded yet (a question's PreToolUse raised the alert, or a
            # slow deciding hook): the buttons are added when it is.
            lanes.watch(_late_buttons, state_dir, intent, name, ch, msg, sent, mark, remote)

    return work


def _focused(state_dir: str, intent: Intent, name: str, ch: Channel, detail_prefix: str) -> bool:
    """A channel that keeps quiet while its session's tmux pane is focused (`skip_when_focused`,
    never for an escalation or a held alert): skipped, and recorded."""
    if not ch.get("skip_when_focused") or detail_prefix:
        return False
    pane = intent.get("tmux_pane")
    if not focus.pane_focused(pane):
        return False
    reason = f"focused: tmux pane {pane} is active in an attached client"
    record(state_dir, intent, name, "skipped", reason)
    return True


def _hand_over(
    lanes: Lanes,
    state_dir: str,
    intent: Intent,
    name: str,
    ch: Channel,
    msg: dict[str, Any],
    mark: object | None,
    ref: str | None,
) -> None:
    """The alert's process waits for a click on an action (Focus, an answer): a waiter takes it."""
    proc, rest = msg.pop("focus_proc")
    if msg.get("answer") and ref:
        _answered((name, ref, str(intent.get("episode"))))
    lanes.watch(_watch_focus, proc, rest, intent, name, state_dir, mark, ch, msg, ref)


def _late(intent: Intent, remote: dict[str, Any] | None) -> bool:
    from lookout.remote import answers

    return remote is not None and bool(answers.request_id_for(intent, remote))


# How often an alert sent before its request was recorded looks for it (while its episode lasts).
LATE_POLL_S = 0.2


def _late_buttons(
    state_dir: str,
    intent: Intent,
    name: str,
    ch: Channel,
    msg: dict[str, Any],
    ref: str,
    mark: object,
    remote: dict[str, Any],
) -> None:
    """Add the buttons to an alert that went out before its request was recorded, once it is
    (as its answer surface can)."""
    from lookout.remote import answers, requests

    rid = answers.request_id_for(intent, remote)
    if rid is None:
        return
    deadline = time.monotonic() + float(remote.get("wait_s") or 0)
    while True:
        rec = requests.load(state_dir, rid)
        if rec is not None and requests.is_open(rec, words.now_ms()):
            break
        if not escalate.still_open(state_dir, intent):
            return  # answered (or gone) before its request showed up
        if time.monotonic() >= deadline:
            return
        time.sleep(LATE_POLL_S)
    again = {k: v for k, v in msg.items() if k not in ("answer", "buttons", "bound", "ref")}
    surface = _surface(ch)
    if surface is not None:
        surface.late(_Alert(state_dir, intent, name, ch, again, remote, mark), ref)


# -- the answer surfaces ---------------------------------------------------------------------------


class _Alert:
    """One alert and where it goes: what an answer surface works on."""

    def __init__(
        self,
        state_dir: str,
        intent: Intent,
        name: str,
        ch: Channel,
        msg: dict[str, Any],
        remote: dict[str, Any],
        mark: object,
    ) -> None:
        self.state_dir, self.intent, self.name, self.ch = state_dir, intent, name, ch
        self.msg, self.remote, self.mark = msg, remote, mark


class _Surface:
    """Buttons that answer a request on an alert, as a channel type's ANSWERS names them: how
    they are bound to the request, what follows the send, how they are added late, and whether
    the alert already shows its request's outcome (its "handled" update then stays away)."""

    def bind(self, a: _Alert) -> None:
        raise NotImplementedError

    def sent(self, a: _Alert, ref: str) -> None:
        pass

    def late(self, a: _Alert, ref: str) -> None:
        raise NotImplementedError

    def shows_outcome(self, state_dir: str, name: str, ref: str, episode: str) -> bool:
        return False


class _Popup(_Surface):
    """The desktop popup: Allow / Deny (or a question's options) bound to the request by its
    nonce, kept in this sender's memory; notify-send reports the click, which a waiter takes
    (_watch_focus). Added late by closing the popup and posting it again with its actions (a
    replace keeps the old actions on lxqt-notificationd)."""

    def bind(self, a: _Alert) -> None:
        _answer_buttons(a.state_dir, a.intent, a.remote, a.msg, a.ch["content"])

    def late(self, a: _Alert, ref: str) -> None:
        self.bind(a)
        if not a.msg.get("answer"):
            return
        registry.of(a.ch).withdraw(a.ch, ref, a.ch["timeout_ms"] / 1000)
        _, _, new = send_one(a.state_dir, a.intent, a.name, a.ch, a.msg, "buttons added: ")
        if "focus_proc" in a.msg:
            proc, rest = a.msg.pop("focus_proc")
            if new:
                _answered((a.name, new, str(a.intent.get("episode"))))
            _watch_focus(proc, rest, a.intent, a.name, a.state_dir, a.mark, a.ch, a.msg, new)

    def shows_outcome(self, state_dir: str, name: str, ref: str, episode: str) -> bool:
        return (name, ref, episode) in _ANSWERED_REFS


class _Chat(_Surface):
    """Telegram's buttons: each carries a single-use token for this channel, never the request's
    nonce; the poller (lookout.remote.telegram) takes the presses and edits the message to the
    outcome. Added late under the message as it stands."""

    def bind(self, a: _Alert) -> None:
        _telegram_buttons(a.state_dir, a.intent, a.remote, a.msg, a.name, a.ch["content"])

    def sent(self, a: _Alert, ref: str) -> None:
        from lookout.surfaces import telegram

        # Every alert: a reply to it steers its session (issue 33), with [steer] on.
        telegram.remember_alert(a.state_dir, a.name, ref, a.intent["session_id"])
        if a.msg.get("buttons"):
            msg = a.msg
            telegram.watch(a.state_dir, a.name, ref, msg["bound"], msg["title"], msg["body"])

    def late(self, a: _Alert, ref: str) -> None:
        self.bind(a)
        if not a.msg.get("buttons"):
            return
        timeout_s = a.ch["timeout_ms"] / 1000
        result, detail = registry.of(a.ch).add_buttons(a.ch, ref, a.msg["buttons"], timeout_s)
        record(a.state_dir, a.intent, a.name, result, f"buttons added: {detail}", update=True)
        if result == "sent":
            self.sent(a, ref)

    def shows_outcome(self, state_dir: str, name: str, ref: str, episode: str) -> bool:
        from lookout.surfaces import telegram

        return telegram.known(state_dir, name, ref)


# By the answer surface a channel type's buttons are (its ANSWERS): remote.answers.SURFACES.
SURFACES: dict[str, _Surface] = {"desktop": _Popup(), "telegram": _Chat()}


def _surface(ch: Channel) -> _Surface | None:
    answers = registry.of(ch).ANSWERS
    return SURFACES[answers] if answers is not None else None


def _answer_buttons(
    state_dir: str,
    intent: Intent,
    remote: dict[str, Any],
    msg: dict[str, Any],
    content: str = "full",
) -> None:
    """Allow / Deny on a desktop alert whose request may be answered from afar (issue 25): the
    request is looked up now, and a click answers that one (its nonce, kept in memory). The
    popup shows the request as lookout.remote.shown renders it, and offers Allow only if that
    is all of it (issue 31)."""
    from lookout.remote import answers

    rec = answers.request_for(state_dir, intent, remote)
    if rec is None:
        return
    actions, picks = [], {}
    for i, (label, decision, picked) in enumerate(_shown_choices(rec, "desktop", msg, content)):
        key = decision if picked is None else f"option-{i}"
        actions.append((key, label))
        picks[key] = (decision, picked)
    msg["answer"] = {"rid": rec["id"], "nonce": rec["nonce"], "actions": actions, "picks": picks}


def _telegram_buttons(
    state_dir: str,
    intent: Intent,
    remote: dict[str, Any],
    msg: dict[str, Any],
    name: str,
    content: str = "summary",
) -> None:
    """Buttons under a Telegram alert whose request may be answered from afar (issue 25): each
    carries an opaque single-use token for this channel, never the request's nonce. The message
    shows the request as lookout.remote.shown renders it (issue 31)."""
    from lookout.remote import answers

    rec = answers.request_for(state_dir, intent, remote)
    if rec is None:
        return
    picks = _shown_choices(rec, "telegram", msg, content)
    tokens = answers.mint(state_dir, rec, "telegram", [(d, a) for _, d, a in picks], scope=name)
    msg["buttons"] = [(label, token) for (label, _, _), token in zip(picks, tokens, strict=True)]
    msg["bound"] = rec["id"]


def _shown_choices(
    rec: dict[str, Any], surface: str, msg: dict[str, Any], content: str
) -> list[tuple[str, str, dict[str, str] | None]]:
    """The alert's body becomes the request as `surface` shows it, and its buttons the ones that
    rule allows: Allow (or a question's options) only when that body holds all of it."""
    from lookout.remote import answers, shown

    url = msg["intent"].get("url") if isinstance(msg.get("intent"), dict) else None
    seen = shown.view(
        rec, surface, title=msg["title"], content=content, url=url if isinstance(url, str) else None
    )
    msg["body"] = seen["text"]
    return [c for c in answers.choices(rec) if seen["allow"] or c[1] == "deny"]


# A popup with answer buttons that the daemon closes while its request waits is posted again: at
# once (the daemon's own expiry, LXQt's 10 s), never after the user dismissed it, at most
# REPOST_MAX times, and no more after QUICK_MAX closes in a row each within QUICK_S of its post
# (a daemon that shows one popup at a time would trade two of them back and forth).
REPOST_MAX = 60
QUICK_S = 5.0
QUICK_MAX = 3
# Once a popup's wait ends without a click, how long its request's record gets to say how it
# ended (the deciding hook settles it within a few polls), so the outcome says it exactly.
SETTLE_S = 1.5


def _watch_focus(
    proc: subprocess.Popen[bytes],
    rest: bytes,
    intent: Intent,
    channel: str,
    state_dir: str,
    mark: object,
    ch: Channel | None = None,
    msg: dict[str, Any] | None = None,
    ref: str | None = None,
) -> None:
    """Wait for a click on the alert's actions: Focus switches to the session; an answer button
    answers its request, and the popup is then replaced by the request's outcome."""
    bound = (msg or {}).get("answer")
    if bound:
        focus.CLOSED.start()
    try:
        action, ref = _wait_click(proc, rest, intent, channel, state_dir, mark, ch, msg, ref)
    finally:
        if bound:
            focus.CLOSED.stop()
    if action in CLICKS and mark is not None:
        detail = focus.jump_to(intent, state_dir)
        raised = platform.get().raise_terminal()  # macOS: the terminal app comes forward
        record(state_dir, intent, channel, "clicked", detail + (f"; {raised}" if raised else ""))
    if not bound or ch is None or msg is None:
        return
    refused = _answer_click(state_dir, intent, channel, bound, action)
    if ref is not None:
        _show_outcome(state_dir, intent, channel, ch, msg, ref, bound, mark, refused)


def _answer_click(
    state_dir: str, intent: Intent, channel: str, bound: dict[str, Any], action: str | None
) -> str | None:
    """A click on one of the popup's answer buttons answers the request it was bound to (and is
    recorded); why it did not, or None."""
    from lookout.remote import answers, requests

    if action not in bound["picks"]:
        return None
    decision, picked = bound["picks"][action]
    refused = None
    try:
        answers.answer(
            state_dir,
            bound["rid"],
            bound["nonce"],
            decision,
            surface="desktop",
            by="the desktop alert",
            answers=picked,
        )
    except requests.Refused as exc:
        refused = str(exc)
    label = dict(bound["actions"])[action]
    said = f"not answered: {refused}" if refused else "answered"
    record(state_dir, intent, channel, "clicked", f"{label}: {said}")
    return refused


def _show_outcome(
    state_dir: str,
    intent: Intent,
    channel: str,
    ch: Channel,
    msg: dict[str, Any],
    ref: str,
    bound: dict[str, Any],
    mark: object,
    refused: str | None,
) -> None:
    """The popup is replaced by its request's outcome: its buttons go with it (within a poll of
    the end)."""
    from lookout.remote import answers, requests

    rec = _settled(state_dir, bound["rid"], bound["nonce"])
    if refused is None and rec is not None and requests.is_open(rec, words.now_ms()):
        if mark is None or not focus.resolved(state_dir, intent, mark):
            return  # the wait timed out (or Focus was clicked) and the request still waits
        rec = {**rec, "status": requests.ANSWERED_LOCALLY}  # its episode ended in the terminal
    if rec is not None and rec.get("nonce") != bound["nonce"]:
        rec = None  # a later request with the same id: this one is no longer waiting
    text, timeout_s = answers.outcome_text(rec, refused), ch["timeout_ms"] / 1000
    result, detail, _ = registry.of(ch).replace(ch, ref, msg["title"], text, timeout_s)
    record(state_dir, intent, channel, result, detail, update=True)


def _wait_click(
    proc: subprocess.Popen[bytes],
    rest: bytes,
    intent: Intent,
    channel: str,
    state_dir: str,
    mark: object,
    ch: Channel | None,
    msg: dict[str, Any] | None,
    ref: str | None,
) -> tuple[str | None, str | None]:
    """The action clicked on the popup (None: none), and the popup's id as it stands then: a
    popup with answer buttons that the daemon closes while its request waits is posted again."""
    bound = (msg or {}).get("answer")
    rid, nonce = (bound["rid"], bound["nonce"]) if bound else (None, None)
    reposts = quick = 0
    while True:
        posted = time.monotonic()
        action, closed = focus.wait_click(proc, rest, intent, state_dir, mark, rid=rid, nonce=nonce)
        if not (closed and ch is not None and msg is not None and rid is not None):
            return action, ref
        if focus.CLOSED.reason(ref) != focus.EXPIRED:
            return None, ref  # the user dismissed it (or lookout cannot tell): it stays away
        if not focus.pending(state_dir, rid, nonce):
            return None, ref
        if mark is not None and focus.resolved(state_dir, intent, mark):
            return None, ref
        quick = quick + 1 if time.monotonic() - posted < QUICK_S else 0
        if reposts >= REPOST_MAX or quick >= QUICK_MAX:
            why = "not posted again: the daemon keeps closing it"
            record(state_dir, intent, channel, "skipped", why)
            return None, ref
        reposts += 1
        result, _, new = send_one(state_dir, intent, channel, ch, msg, "posted again: ")
        if result != "sent" or "focus_proc" not in msg:
            return None, ref
        proc, rest = msg.pop("focus_proc")
        if new:
            ref = new
            _answered((channel, new, str(intent.get("episode"))))


def _settled(state_dir: str, rid: str, nonce: str) -> dict[str, Any] | None:
    """Request `rid` once its deciding hook has settled it (or SETTLE_S passed)."""
    from lookout.remote import requests

    deadline = time.monotonic() + SETTLE_S
    while True:
        rec = requests.load(state_dir, rid)
        if (
            rec is None
            or rec.get("nonce") != nonce
            or not requests.is_open(rec, words.now_ms())
            or time.monotonic() >= deadline
        ):
            return rec
        time.sleep(0.05)


# Desktop alerts of this sender that carried answer buttons: their waiter replaces them with the
# request's outcome, which a "handled" update must not overwrite. By (channel, notification id,
# episode): a daemon reuses ids (after a restart), an episode is never reused.
# The newest ANSWERED_MAX (in insertion order): a sender lives for hours.
_ANSWERED_REFS: dict[tuple[str, str, str], None] = {}
ANSWERED_MAX = 1000


def _answered(key: tuple[str, str, str]) -> None:
    _ANSWERED_REFS[key] = None
    while len(_ANSWERED_REFS) > ANSWERED_MAX:
        del _ANSWERED_REFS[next(iter(_ANSWERED_REFS))]


def _shows_outcome(state_dir: str, name: str, ch: Channel, ref: str, episode: str) -> bool:
    surface = _surface(ch)
    return surface is not None and surface.shows_outcome(state_dir, name, ref, episode)


def _update_work(state_dir: str, d: Delivery, cfg: Config, name: str) -> Callable[[], None]:
    def work() -> None:
        intent = d["intent"]
        episode = intent.get("episode")
        ch = cfg["channels"].get(name)
        ref = wait_ref(state_dir, episode, name) if isinstance(episode, str) else None
        if ch is None or ref is None:
            record(state_dir, intent, name, "skipped", "nothing to update")
            return
        if _shows_outcome(state_dir, name, ch, ref, str(episode)):
            reason = "replaced by its request's outcome"
            record(state_dir, intent, name, "skipped", reason, update=True)
            return
        msg = message(d, cfg, ch, update=True)
        msg["ref"] = ref
        msg["close_first"] = isinstance(episode, str) and had_actions(state_dir, episode, name)
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


def send_escalation(d: Delivery, e: Escalation, cfg: Config, state_dir: str, lanes: Lanes) -> None:
    intent = d["intent"]
    if not escalate.escalation_due(state_dir, intent):
        skip_escalation(state_dir, d, e)
        return
    for name in e["channels"]:
        ch = cfg["channels"].get(name)
        if ch is None or not ch["enabled"]:
            record(state_dir, intent, name, "skipped", "channel no longer in the config")
            continue
        msg = message(d, cfg, ch, prefix=escalate.ESCALATION_PREFIX)
        prefix = f"escalated after {e['after_s']:g}s: "
        work = _alert_work(
            lanes, state_dir, d, name, ch, msg, detail_prefix=prefix, remote=cfg.get("remote")
        )
        queue(lanes, state_dir, intent, name, work)


def skip_escalation(state_dir: str, d: Delivery, e: Escalation) -> None:
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
