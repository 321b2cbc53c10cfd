"""One delivery: its messages rendered per channel, queued on the channel's lane and sent (each
send recorded: lookout.deliveries), its alerts' answer surfaces asked to bind, follow and add
buttons late (lookout.surfaces); an escalation that came due paged."""

from __future__ import annotations

import hashlib
import time

from lookout import away, mask, templates, words
from lookout.channels import registry
from lookout.deliveries import had_actions, record, send_one, wait_ref
from lookout.jump import focus
from lookout.sender import escalate
from lookout.sender.lanes import QUEUED, Lanes
from lookout.surfaces import registry as surfaces
from lookout.surfaces.base import Alert
from lookout.words import ATTENTION_KINDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from lookout.shapes import Channel, Config, Delivery, Escalation, Intent


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
    title, body = templates.render_texts(
        intent, cfg["templates"], level, mask.mask, cfg.get("host")
    )
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
        surface = surfaces.of(ch)
        answers = surface if remote else None  # with [remote] read, its buttons may answer
        alert = Alert(state_dir, intent, name, ch, msg, remote or {}, mark)
        if answers is not None:
            answers.bind(alert)
        bound = bool(msg.get("answer") or msg.get("buttons"))
        result, _, ref = send_one(state_dir, intent, name, ch, msg, detail_prefix)
        sent = ref if result == "sent" else None
        if answers is not None and sent:
            answers.sent(alert, sent)
        if surface is not None:  # a click on the alert's own process (the popup's Focus, an answer)
            surface.take(alert, ref, lanes.watch)
        if answers is not None and not bound and sent and _late(state_dir, intent, remote):
            # Its request was not recorded yet (a question's PreToolUse raised the alert, or a
            # slow deciding hook): the buttons are added when it is.
            lanes.watch(_late_buttons, state_dir, intent, name, ch, msg, sent, mark, remote)

    return work


def _focused(state_dir: str, intent: Intent, name: str, ch: Channel, detail_prefix: str) -> bool:
    """A channel that keeps quiet while its session's tmux pane is focused (`skip_when_focused`,
    never for an escalation or a held alert, nor while away): skipped, and recorded."""
    if not ch.get("skip_when_focused") or detail_prefix:
        return False
    pane = intent.get("tmux_pane")
    if not focus.pane_focused(pane):
        return False
    if away.read(state_dir)["away"]:
        return False  # the user said they are not at the screen (`lookout away on`)
    reason = f"focused: tmux pane {pane} is active in an attached client"
    record(state_dir, intent, name, "skipped", reason)
    return True


def _late(state_dir: str, intent: Intent, remote: dict[str, Any] | None) -> bool:
    from lookout.remote import answers

    return (
        remote is not None
        and bool(answers.request_id_for(intent, remote))
        and answers.waits(state_dir, intent)
    )


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
    surface = surfaces.of(ch)
    if surface is not None:
        surface.late(Alert(state_dir, intent, name, ch, again, remote, mark), ref)


def _update_work(state_dir: str, d: Delivery, cfg: Config, name: str) -> Callable[[], None]:
    def work() -> None:
        intent = d["intent"]
        episode = intent.get("episode")
        ch = cfg["channels"].get(name)
        ref = wait_ref(state_dir, episode, name) if isinstance(episode, str) else None
        if ch is None or ref is None:
            record(state_dir, intent, name, "skipped", "nothing to update")
            return
        surface = surfaces.of(ch)
        if surface is not None and surface.shows_outcome(state_dir, name, ref, str(episode)):
            reason = "replaced by its request's outcome"
            record(state_dir, intent, name, "skipped", reason, update=True)
            return
        msg = message(d, cfg, ch, update=True)
        msg["ref"] = ref
        msg["close_first"] = isinstance(episode, str) and had_actions(state_dir, episode, name)
        send_one(state_dir, intent, name, ch, msg)

    return work


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
