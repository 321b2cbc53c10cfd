"""Home Assistant answers (issue 25, `[fleet] answers = true`): each open permission request of
this host as two MQTT `button` entities (Allow, Deny), and a press on their command topic turned
into an answer of exactly that request.

A request is named on the bus by an opaque token derived from its nonce (a one-way hash: the
nonce itself never leaves the state directory), so a press binds to the one request it was shown
for: a re-asked request with the same id has a new nonce, hence a new token. A press for a token
that is not open, a retained (stale) press, a payload other than `allow`/`deny` or a topic of
another host changes nothing.

The token is also what makes a press come only from this host's own buttons (issue 31): it is on
the bus only in topics that this host and Home Assistant's user may read (its discovery configs,
`<prefix>/<host>/requests/`, `<prefix>/<host>/press/`; the ACL in docs/fleet.md), so no other
host can learn it, and a button or automation lure another host publishes cannot name it. The
buttons have no device: Home Assistant prefixes an entity's name with its device's, and any host
may publish a config that renames a device.

The answer goes through lookout.remote.requests.answer, as the dashboard's POST
/api/requests/{id} does (to be switched to lookout.remote.answers at merge). Stdlib only; never
raises out of take_press."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from lookout import mask, words
from lookout.boundary import visible
from lookout.config.fleet import FleetConfig
from lookout.fleet import payload, topics
from lookout.remote import requests
from lookout.surfaces import home_assistant

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lookout.remote.shown import View

PRESS = topics.PRESS  # <prefix>/<host>/press/<token>: Home Assistant publishes a press here
REQUESTS = topics.REQUESTS  # <prefix>/<host>/requests/<token>: the request, for automations
BUTTONS = {"allow": "Allow", "deny": "Deny"}  # payload_press -> label
SOURCE = "home_assistant"
BY = "Home Assistant"
NAME_CHARS = 120  # a Deny button's name, at most (an Allow's: surfaces.home_assistant.LIMITS)
# The buttons' attributes come from the request topic, which is emptied when the request ends.
# Home Assistant removes the entities a moment after their empty configs, so the empty message
# still reaches them and, parsed as JSON, logged "Erroneous JSON" for every request (seen with
# Home Assistant 2024.1.6): an empty payload reads as no attributes instead.
ATTRIBUTES_TEMPLATE = "{{ value if value else '{}' }}"


def token(rec: dict[str, Any]) -> str:
    """The request's name on the bus: a hash of its nonce (fresh per request), never the nonce."""
    nonce = str(rec.get("nonce") or "")
    return hashlib.sha256(b"lookout-ha-press\0" + nonce.encode()).hexdigest()[:32]


def answerable(rec: dict[str, Any], now_ms: int) -> bool:
    """Open, and answerable by one Allow or Deny: a question needs its options and a request too
    large to show may only be allowed in the terminal, so neither gets buttons."""
    return (
        bool(rec.get("nonce"))
        and requests.is_open(rec, now_ms)
        and not rec.get("questions")
        and not rec.get("too_large")
    )


def open_requests(state_dir: str, now_ms: int) -> dict[str, dict[str, Any]]:
    """token -> record, for every request that buttons may answer now."""
    return {token(r): r for r in requests.load_all(state_dir) if answerable(r, now_ms)}


def press_topic(cfg: FleetConfig, tok: str) -> str:
    return f"{cfg.topic_prefix}/{cfg.host}/{PRESS}/{tok}"


def press_filter(cfg: FleetConfig) -> str:
    """The bridge's one subscription: presses on its own host's topics only."""
    return f"{cfg.topic_prefix}/{cfg.host}/{PRESS}/+"


def request_topic(cfg: FleetConfig, tok: str) -> str:
    return f"{cfg.topic_prefix}/{cfg.host}/{REQUESTS}/{tok}"


def object_id(tok: str, decision: str) -> str:
    return f"request_{tok}_{decision}"


def _one_line(text: object, limit: int) -> str:
    line = next((x.strip() for x in str(text or "").split("\n") if x.strip()), "")
    line = visible(mask.mask(line))  # masked first: escaping must not split a secret's pattern
    return line if len(line) <= limit else line[: limit - 1] + "…"


def texts(rec: dict[str, Any], content: str, host: str = "") -> tuple[str, str]:
    """(title, summary) as shown: masked, one line, control characters visible-escaped; the
    summary is the request as lookout.remote.shown renders it for a button's name (`host`: the
    name starts with it, and the rule counts it). At `content = "none"` no summary leaves the
    machine, as for sessions."""
    project = _one_line(rec.get("project") or "?", 40)
    tool = _one_line(rec.get("tool_name") or "a tool", 40)
    title = f"{_one_line(host, 40)} · {project} · {tool}" if host else f"{project} · {tool}"
    return title, _view(rec, title, content)["text"]


def _view(rec: dict[str, Any], title: str, content: str) -> View:
    return home_assistant.view(rec, title, content)


def buttons(rec: dict[str, Any], content: str, host: str = "") -> dict[str, str]:
    """payload_press -> label of the request's buttons: Allow only when its name holds the
    whole input (issue 31), Deny always."""
    title, _ = texts(rec, content, host)
    if _view(rec, title, content)["allow"]:
        return BUTTONS
    return {"deny": BUTTONS["deny"]}


def entity_name(label: str, title: str, summary: str) -> str:
    name = f"{label} {title}" + (f": {summary}" if summary else "")
    return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "…"


def discovery(cfg: FleetConfig, tok: str, rec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(topic, config) of the request's two buttons on the host's device."""
    node = topics.ha_node(cfg.host)
    title, summary = texts(rec, cfg.content, cfg.host)
    out = []
    for decision, label in buttons(rec, cfg.content, cfg.host).items():
        oid = object_id(tok, decision)
        config = {
            "name": entity_name(label, title, summary),
            "unique_id": f"{node}_{oid}",
            "command_topic": press_topic(cfg, tok),
            "payload_press": decision,
            "qos": 1,
            "retain": False,  # a press is an event: a retained one would outlive its request
            "icon": "mdi:check-circle" if decision == "allow" else "mdi:close-circle",
            "json_attributes_topic": request_topic(cfg, tok),
            "json_attributes_template": ATTRIBUTES_TEMPLATE,
            **_deviceless(cfg),
        }
        out.append((topics.ha_config(cfg.home_assistant_prefix, "button", cfg.host, oid), config))
    return out


def _deviceless(cfg: FleetConfig) -> dict[str, Any]:
    """The host's availability and origin, not its device: a device's name is the prefix of its
    entities' names, and another host may rename it (a config of its own naming this device)."""
    return {k: v for k, v in payload.ha_device(cfg).items() if k != "device"}


def request_message(cfg: FleetConfig, tok: str, rec: dict[str, Any]) -> dict[str, Any]:
    """The request as an automation needs it for an actionable notification (retained on
    request_topic, the buttons' attributes). Where a press goes is not in it: an automation takes
    the host and the token from the topic, which no other host can write (docs/remote.md)."""
    from lookout.store import rfc3339

    title, summary = texts(rec, cfg.content)
    node = topics.ha_node(cfg.host)
    return {
        "host": cfg.host,
        "token": tok,
        "title": title,
        "summary": summary,
        "project": _one_line(rec.get("project"), 40),
        "tool_name": _one_line(rec.get("tool_name"), 40),
        "expires_at": rfc3339(int(rec.get("expires_ms") or 0)),
        "allow": "allow" in buttons(rec, cfg.content, cfg.host),  # else `allow` is ignored
        "buttons": {d: f"{node}_{object_id(tok, d)}" for d in buttons(rec, cfg.content, cfg.host)},
        "schema": 2,
    }


@dataclass(frozen=True)
class Outcome:
    answered: bool
    text: str
    reason: str = ""  # why it was ignored, one word: the bridge logs each reason at most 1/s


def take_press(
    state_dir: str,
    cfg: FleetConfig,
    known: dict[str, str],
    topic: str,
    body: bytes,
    retained: bool,
) -> Outcome:
    """Answer the request a press names, or say why it changed nothing. `known`: token ->
    request id of the buttons this bridge has published."""
    prefix = press_filter(cfg)[:-1]
    if not topic.startswith(prefix) or "/" in topic[len(prefix) :]:
        return Outcome(False, f"a press on {visible(topic)}, not this host's: ignored", "foreign")
    tok = topic[len(prefix) :]
    if retained:
        # Held by the broker since before we subscribed: not a press someone just made.
        return Outcome(False, "a retained press (stale): ignored", "retained")
    decision = body.decode("ascii", "replace")
    if decision not in BUTTONS:
        return Outcome(
            False, f"a press with payload {visible(decision[:20])!r}: ignored", "payload"
        )
    rid = known.get(tok)
    rec = requests.load(state_dir, rid) if rid else None
    if rid is None or rec is None or token(rec) != tok:
        return Outcome(False, "a press for a request that is not open here: ignored", "unknown")
    if decision not in buttons(rec, cfg.content, cfg.host):
        # The request's Allow button was never shown: its name cannot hold the whole input.
        return Outcome(False, "an Allow for a request that offers only Deny: ignored", "deny-only")
    try:
        requests.answer(
            state_dir,
            rid,
            decision,
            rec.get("nonce"),
            by=BY,
            source=SOURCE,
            user_agent=f"MQTT via {cfg.url}",
            now_ms=words.now_ms(),
        )
    except requests.Refused as exc:
        return Outcome(False, f"a press for request {rid} changed nothing: {exc}", "refused")
    return Outcome(True, f"request {rid} answered from Home Assistant: {decision}")
