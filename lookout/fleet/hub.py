"""The fleet's hub (issue 42, `[fleet] hub = "<host>"`): the one host that listens on the shared
chat surfaces, and its way to answer and steer another host's sessions through the broker.

The hub never decides for another host. A press forwards an opaque answer token minted on the
owning host (lookout.remote.answers.mint) to `<prefix>/<host>/press/<token>`; a steer message
goes to `<prefix>/<host>/steer/<id>`. The owning host's bridge (lookout.fleet.steering) checks
it (its own config names this hub, its broker proved that no other host can write those topics,
fresh, never seen), runs it through its own lookout.steer.core with its own [steer], and
publishes the outcome to `<prefix>/<host>/steered/<id>`, which the hub waits for here.

listens() and owner() are cheap and stdlib-only, and importing this module loads neither the
config reader nor paho (a hook or a sender may ask them); the others connect to the broker."""

from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict

from lookout.fleet import topics

if TYPE_CHECKING:
    from paho.mqtt.client import Client

    from lookout.config.fleet import FleetConfig

TIMEOUT_S = 5.0
# A host name as [fleet] host takes it (lookout.config.fleet.HOST, equal by a test): here too,
# so that owner() loads no config reader.
HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")
ACTIONS = ("say", "interrupt", "start", "stop")
SCHEMA = 1


class Sent(NamedTuple):
    """A press's fate: ok when the owning host answered with it; `text` says what came of it."""

    ok: bool
    text: str


class Steered(NamedTuple):
    """A steer message's outcome: the lines a local action shows (an error and its hint when
    refused or unanswered)."""

    ok: bool
    lines: tuple[str, ...]


class FleetRequest(TypedDict):
    """One open request of a host of the fleet, as its bridge publishes it for the hub."""

    host: str
    id: str  # the request id (`lookout answer HOST:ID`)
    token: str  # its name on the bus (`<prefix>/<host>/requests/<token>`)
    tokens: dict[str, str]  # decision (allow, deny) -> an answer token for hub.press
    title: str  # `host · project · tool`
    text: str  # the whole input, escaped, as the dashboard's card shows it ("" at content none)
    allow: bool  # whether Allow may be offered (the dashboard's rule: all of the input shown)
    why: str  # why not, when not
    session_id: str
    project: str
    tool_name: str
    agent: str
    expires_ms: int


def listens(cfg: FleetConfig | None) -> bool:
    """May this host run the shared chat listeners (Telegram's poller, Slack's Socket Mode,
    Matrix's sync, ntfy's reply subscription)? Yes with no fleet or no hub, or on the hub."""
    return cfg is None or not cfg.hub or cfg.hub == cfg.host


def local() -> FleetConfig | None:
    """This host's [fleet], or None without one (an invalid one too: check-config says why, and
    every host then works alone, as before a hub was named)."""
    from lookout.config import check, fleet

    try:
        return fleet.load()
    except (fleet.NotConfigured, check.ConfigError, OSError):
        return None


def owner(ref: str) -> tuple[str, str]:
    """`"B:ID"` as (host, id); ("", ref) when `ref` names no host."""
    host, sep, rest = ref.partition(":")
    if sep and rest and HOST.fullmatch(host):
        return host, rest
    return "", ref


def _connect(cfg: FleetConfig, timeout_s: float) -> Client:
    from lookout.fleet import mqtt

    client = mqtt.new_client(cfg, "hub")
    mqtt.connect(client, cfg, timeout_s)
    return client


def _close(client: Client) -> None:
    client.disconnect()
    client.loop_stop()


def _unanswered(host: str, timeout_s: float) -> str:
    return f"no answer from {host} within {timeout_s:g} s (is its bridge running?)"


def _exchange(
    cfg: FleetConfig, host: str, topic: str, body: dict[str, Any], timeout_s: float
) -> dict[str, Any] | str:
    """Publish `body` on `topic` and wait for `<prefix>/<host>/steered/<nonce>`: the owning
    host's outcome, or what went wrong (a string)."""
    import threading

    from lookout.fleet import mqtt

    answer_topic = topics.private(cfg.topic_prefix, host, topics.STEERED, body["nonce"])
    got: dict[str, Any] = {}
    answered, subscribed = threading.Event(), threading.Event()

    def on_message(_c: Any, _u: Any, msg: Any) -> None:
        if msg.topic == answer_topic and not msg.retain:
            try:
                data = json.loads(bytes(msg.payload))
            except ValueError:
                return
            if isinstance(data, dict):
                got.update(data)
                answered.set()

    deadline = time.monotonic() + timeout_s
    try:
        client = _connect(cfg, timeout_s)
    except mqtt.ConnectError as exc:
        return f"{exc} ({exc.hint})" if exc.hint else str(exc)
    try:
        acks = mqtt.Acks(client)
        client.on_message = on_message
        client.on_subscribe = lambda *_a: subscribed.set()
        client.subscribe(answer_topic, qos=1)
        if not subscribed.wait(max(0.1, deadline - time.monotonic())):
            return f"the broker at {cfg.url} did not confirm a subscription"
        info = acks.publish(client, topic, json.dumps(body).encode(), retain=False)
        try:
            info.wait_for_publish(max(0.1, deadline - time.monotonic()))
        except (RuntimeError, ValueError) as exc:
            return f"not sent: {exc}"
        denied = acks.take_denied()
        if denied:
            who = f"user {cfg.username!r}" if cfg.username else "an anonymous client"
            return (
                f"the broker at {cfg.url} refused {topic} ({denied[0][1]}): its ACL must let {who}"
                f" write {cfg.topic_prefix}/+/{topic.split('/')[-2]}/+ (docs/fleet.md)"
            )
        if not answered.wait(max(0.0, deadline - time.monotonic())):
            return _unanswered(host, timeout_s)
        return got
    finally:
        _close(client)


def _stamp(cfg: FleetConfig, by: str) -> dict[str, Any]:
    import secrets

    from lookout import words

    return {
        "schema": SCHEMA,
        "hub": cfg.host,
        "by": by,
        "ts_ms": words.now_ms(),
        "nonce": secrets.token_hex(16),
    }


def _not_the_hub(cfg: FleetConfig) -> str:
    if not cfg.hub:
        return "[fleet] hub is not set in this host's config, so it answers and steers only its own"
    return (
        f"this host ({cfg.host}) is not the fleet's hub ({cfg.hub}): only the hub answers and"
        " steers another host"
    )


def press(
    cfg: FleetConfig,
    host: str,
    token: str,
    *,
    surface: str,
    by: str,
    timeout_s: float = TIMEOUT_S,
    scope: str | None = None,
    message: str = "",
) -> Sent:
    """Forward a press of answer token `token` (minted on `host`, for `surface` and `scope`: the
    name of `host`'s channel that showed it; None: any of its channels of that surface) to
    `<prefix>/<host>/press/<token>`; `host` answers with it and says
    what came of it. `by`: who pressed, as the owning host records it; `message`: a deny's
    reason for the agent."""
    if cfg.hub != cfg.host:
        return Sent(False, _not_the_hub(cfg))
    body = {**_stamp(cfg, by), "surface": surface}
    if scope is not None:
        body["scope"] = scope
    if message:
        body["message"] = message
    topic = topics.private(cfg.topic_prefix, host, topics.PRESS, token)
    got = _exchange(cfg, host, topic, body, timeout_s)
    if isinstance(got, str):
        return Sent(False, got)
    lines = [str(x) for x in got.get("lines") or []]
    return Sent(bool(got.get("ok")), lines[0] if lines else "")


def steer(
    cfg: FleetConfig,
    host: str,
    action: str,
    *,
    session: str = "",
    project: str = "",
    text: str = "",
    agent: str = "",
    reply_to: str = "",
    source: str,
    by: str,
    timeout_s: float = TIMEOUT_S,
    channel: str = "",
) -> Steered:
    """Ask `host` to steer one of its sessions: `action` say | interrupt | stop (`session`, or
    `reply_to`: the id of one of its alerts as that surface's alert_session takes it, sent
    through `channel`, a channel name of its config, "": any of its channels of surface
    `source`), start (`project`, `agent`, `text` its first prompt). `source` is the surface
    (telegram, slack, matrix, dashboard, terminal), which `host`'s [steer] rate limits as its
    own. Waits up to timeout_s for its outcome."""
    if cfg.hub != cfg.host:
        return Steered(False, (f"error: {_not_the_hub(cfg)}", f"hint: {_hub_hint(cfg)}"))
    if action not in ACTIONS:
        return Steered(False, (f"error: unknown action {action!r}",))
    body = {
        **_stamp(cfg, by),
        "action": action,
        "session": session,
        "project": project,
        "text": text,
        "agent": agent,
        "reply_to": reply_to,
        "channel": channel,
        "source": source,
        "wait_s": max(1.0, timeout_s - 1.0),
    }
    topic = topics.private(cfg.topic_prefix, host, topics.STEER, body["nonce"])
    got = _exchange(cfg, host, topic, body, timeout_s)
    if isinstance(got, str):
        return Steered(False, (f"error: {got}",))
    return Steered(bool(got.get("ok")), tuple(str(x) for x in got.get("lines") or []))


def _hub_hint(cfg: FleetConfig) -> str:
    if not cfg.hub:
        return f'name the hub in [fleet] of every host: hub = "{cfg.host}" (docs/fleet.md)'
    return f"run it on {cfg.hub}, or on the host itself"


def waiting(cfg: FleetConfig, timeout_s: float = TIMEOUT_S) -> list[FleetRequest]:
    """The fleet's open requests, as their hosts publish them for the hub (retained on
    `<prefix>/+/requests/+`): read until the end of the retained messages (a marker on this
    host's own subtree comes back after them), at most timeout_s. Raises mqtt.ConnectError."""
    import secrets
    import threading

    from lookout.fleet import mqtt

    client = _connect(cfg, timeout_s)
    marker = f"{cfg.topic_prefix}/{cfg.host}/{topics.SYNC}/{secrets.token_hex(8)}"
    wanted = f"{cfg.topic_prefix}/+/{topics.REQUESTS}/+"
    found: dict[str, FleetRequest] = {}
    done, subscribed = threading.Event(), threading.Event()

    def on_message(_c: Any, _u: Any, msg: Any) -> None:
        if msg.topic == marker:
            done.set()
            return
        rec = parse_request(cfg.topic_prefix, msg.topic, bytes(msg.payload))
        if rec is not None:
            found[msg.topic] = rec
        else:
            found.pop(msg.topic, None)

    try:
        acks = mqtt.Acks(client)
        client.on_message = on_message
        client.on_subscribe = lambda *_a: subscribed.set()
        client.subscribe([(wanted, 1), (marker, 1)])
        if subscribed.wait(timeout_s):
            acks.publish(client, marker, b"", retain=False)
            done.wait(timeout_s)
    finally:
        _close(client)
    return sorted(found.values(), key=lambda r: (r["host"], r["expires_ms"], r["id"]))


def parse_request(prefix: str, topic: str, body: bytes) -> FleetRequest | None:
    """A request message as the hub reads it; None for an empty (withdrawn) one, one without
    the hub's fields (a Home Assistant-only host) or one whose topic is not of its host."""
    parts = topic[len(prefix) + 1 :].split("/") if topic.startswith(prefix + "/") else []
    if len(parts) != 3 or parts[1] != topics.REQUESTS or not body:
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    hub = data.get("hub") if isinstance(data, dict) else None
    if not isinstance(hub, dict) or data.get("host") != parts[0]:
        return None
    tokens = hub.get("tokens")
    if not isinstance(tokens, dict):
        return None
    return _request(parts[0], parts[2], data, hub, tokens)


def _request(
    host: str, token: str, data: dict[str, Any], hub: dict[str, Any], tokens: dict[str, Any]
) -> FleetRequest:
    def text(d: dict[str, Any], key: str) -> str:
        return str(d.get(key) or "")

    expires = hub.get("expires_ms")
    return FleetRequest(
        host=host,
        id=text(hub, "id"),
        token=token,
        tokens={str(k): str(v) for k, v in tokens.items() if k in ("allow", "deny")},
        title=text(data, "title"),
        text=text(hub, "text"),
        allow=hub.get("allow") is True and "allow" in tokens,
        why=text(hub, "why"),
        session_id=text(hub, "session_id"),
        project=text(data, "project"),
        tool_name=text(data, "tool_name"),
        agent=text(hub, "agent"),
        expires_ms=expires if type(expires) is int else 0,
    )
