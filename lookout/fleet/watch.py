"""The other side of the bus: gather every host's retained state (`status --fleet`) and follow it
live (`--watch`). Everything read here comes from the network: it is checked, typed and bounded
before anything shows it."""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

import lookout.sessions
from lookout import words
from lookout.config import fleet
from lookout.config.fleet import FleetConfig
from lookout.errors import LookoutError
from lookout.fleet import limits, mqtt, topics
from lookout.sessions import STALE_AFTER_S

MAX_MESSAGE = limits.MAX_MESSAGE
MAX_SESSIONS = limits.TOTAL_SESSIONS
GATHER_TIMEOUT_S = 5.0
ECHO_GRACE_S = 1.0  # after the broker acknowledged the probe, how long its echo may take
CLOCK_SKEW_S = 5  # a host clock this far off is shown, and its times corrected
STATUSES = ("attention", "working", "idle", "ended")
_MAX_EXTRA = 40


class Fleet:
    """The retained state of every host under one prefix, kept current by a subscription."""

    def __init__(self, cfg: FleetConfig, on_change: Callable[[], None] | None = None) -> None:
        self.cfg = cfg
        self.on_change = on_change
        self.online: dict[str, bool] = {}
        self.sessions: dict[tuple[str, str], dict[str, Any]] = {}
        self.ignored = 0  # malformed messages dropped
        self.skew: dict[str, int] = {}  # host -> its clock minus ours (ms), when it said
        self.problems: list[tuple[str, str]] = []  # (error, hint): what the broker denies us
        self.budget = limits.Budget()  # N6: what one host may cost this viewer, and the drops
        self._lock = threading.Lock()
        self._synced = threading.Event()
        self._client: Any = None
        self._sync_topic = ""
        self.lost = threading.Event()  # the connection dropped: what we hold may be stale

    # -- connection -------------------------------------------------------------------------

    def start(self, timeout: float = GATHER_TIMEOUT_S) -> None:
        """Connect, subscribe, and return once every retained message has arrived. When the
        broker cannot be reached, what was held stays (a viewer shows it as unknown) and `lost`
        stays set, so the caller retries."""
        client = mqtt.new_client(self.cfg, "status")
        client.on_message = self._on_message
        mqtt.connect(client, self.cfg, timeout)  # raises before anything held is dropped
        with self._lock:
            self.online.clear()
            self.sessions.clear()
            self.skew.clear()
            self.budget.clear()
        self.problems = []
        self._synced.clear()
        self.lost.clear()
        client.on_disconnect = self._on_disconnect
        self._client = client
        self._sync_topic = topics.sync(self.cfg.topic_prefix, secrets.token_hex(8))
        subscribed = threading.Event()
        client.on_subscribe = lambda *_a: subscribed.set()
        # QoS 0 on the way to us: a broker queues at most so many QoS 1 messages per client
        # (Mosquitto: 20 in flight + max_queued_messages 1000) and drops the rest, which would
        # lose sessions of a large fleet. Over one TCP connection QoS 0 loses nothing.
        subs = [(t, 0) for t in [*topics.subscriptions(self.cfg.topic_prefix), self._sync_topic]]
        client.subscribe(subs)
        if not subscribed.wait(timeout):
            self.stop()
            self.lost.set()
            raise LookoutError(f"the broker at {self.cfg.url} did not confirm the subscription")
        # Retained messages come before anything published after the SUBACK: our own probe,
        # coming back, marks the end of them.
        self._probe(client, timeout)
        if not self._synced.is_set():
            # The broker's ACL forbids the probe: settle for a quiet period instead.
            self._quiet(0.3, timeout)

    def _probe(self, client: Any, timeout: float) -> None:
        """Publish the end-of-retained probe and wait for it to come back. The broker's answer
        (MQTT 5) tells a denied write at once; an acknowledged probe that never comes back means
        this user may not read the tree, so other hosts are hidden from it: both are problems."""
        acks = mqtt.Acks(client)
        info = acks.publish(client, self._sync_topic, b"", retain=False)
        deadline = time.monotonic() + timeout
        prefix, topic = self.cfg.topic_prefix, self._sync_topic
        who = f"user {self.cfg.username!r}" if self.cfg.username else "an anonymous client"
        while not self._synced.wait(0.02):
            denied = acks.take_denied()
            if denied:
                self.problems.append(
                    (
                        f"the broker at {self.cfg.url} refuses this viewer's end-of-retained probe"
                        f" {topic} ({denied[0][1]}): the list may be incomplete",
                        f"its ACL must let {who} write {prefix}/{topics.SYNC}/#"
                        " (docs/fleet.md: the broker ACL)",
                    )
                )
                return
            if info.is_published():
                if not self._synced.wait(ECHO_GRACE_S):
                    sessions = f"{prefix}/+/{topics.SESSIONS}/+"
                    self.problems.append(
                        (
                            f"the broker at {self.cfg.url} took this viewer's probe {topic} but"
                            f" did not deliver it back: {who} may not read {sessions}, so other"
                            " hosts are hidden from it",
                            f"its ACL must let {who} read {prefix}/+/online and {sessions}"
                            " (docs/fleet.md: the broker ACL)",
                        )
                    )
                return
            if time.monotonic() > deadline:
                return

    def _quiet(self, quiet: float, limit: float) -> None:
        start = time.monotonic()
        last = -1
        while time.monotonic() - start < limit:
            with self._lock:
                n = len(self.sessions) + len(self.online)
            if n == last:
                return
            last = n
            time.sleep(quiet)

    def _on_disconnect(self, *_args: Any) -> None:
        self.lost.set()
        if self.on_change is not None:
            self.on_change()

    def stop(self) -> None:
        if self._client is not None:
            mqtt.close(self._client)
            self._client = None

    # -- messages ---------------------------------------------------------------------------

    def _on_message(self, _c: Any, _u: Any, msg: Any) -> None:
        if msg.topic == self._sync_topic:
            self._synced.set()
            return
        where = topics.parse(self.cfg.topic_prefix, msg.topic)
        if where is None:
            return
        host, kind, segment = where
        data: bytes = msg.payload
        if not fleet.HOST.fullmatch(host):
            self.ignored += 1  # a name no bridge publishes (control characters, say): not shown
            return
        if kind == topics.SESSIONS and len(data) > limits.MAX_MESSAGE:
            self.ignored += 1  # dropped unread: parsing it is the cost a flood wants to cause
            self.budget.drop(host, "too_big")
            return
        with self._lock:
            if kind == topics.ONLINE:
                if host not in self.online and len(self.online) >= limits.MAX_HOSTS:
                    self.ignored += 1
                    self.budget.drop(host, "hosts")
                elif data in (b"true", b"false"):
                    self.online[host] = data == b"true"
                    clock = mqtt.clock_of(getattr(msg, "properties", None))
                    if clock is not None:
                        self.skew[host] = clock - words.now_ms()
                elif not data:
                    self.online.pop(host, None)
                else:
                    self.ignored += 1
                    return
            elif kind == topics.SESSIONS and segment is not None:
                key = (host, segment)
                if not data:
                    self.sessions.pop(key, None)
                    self.budget.forget(key)
                else:
                    session = _session(data, host)
                    if session is None:
                        self.ignored += 1
                        self.budget.drop(host, "malformed")
                        return
                    if self.budget.admit(host, key, len(data)) is not None:
                        self.ignored += 1
                        return
                    self.sessions[key] = session
            else:
                return
        if self.on_change is not None and self._synced.is_set():
            self.on_change()

    # -- the view ---------------------------------------------------------------------------

    def snapshot(
        self, include_ended: bool = False, stale_after_s: int = STALE_AFTER_S
    ) -> dict[str, Any]:
        """`{"hosts": [{"host", "online", "sessions", "attention"}], "sessions": [...]}`, the
        sessions of a host that is not online shown as unknown, attention first."""
        with self._lock:
            online = dict(self.online)
            raw = list(self.sessions.values())
            skew = {h: ms for h, ms in self.skew.items() if abs(ms) >= CLOCK_SKEW_S * 1000}
        now = words.now_ms()
        sessions = [
            _as_its_host_is(_on_our_clock(s, skew.get(s["host"], 0), now, stale_after_s), online)
            for s in raw
        ]
        if not include_ended:
            sessions = [s for s in sessions if s["status"] != "ended"]
        sessions.sort(key=lambda s: (*lookout.sessions.order(s), s["host"]))
        shorts = lookout.sessions.short_ids(s["session_id"] for s in sessions)
        for s in sessions:
            s["short_id"] = shorts[s["session_id"]]
        names = sorted(set(online) | {s["host"] for s in raw})
        out: dict[str, Any] = {
            "hosts": [_host(name, online.get(name), sessions, skew) for name in names],
            "sessions": sessions,
        }
        dropped = self.budget.report()
        if dropped:
            out["dropped"] = dropped  # N6: what the limits kept out, by host and reason
        return out


def _on_our_clock(s: dict[str, Any], off: int, now: int, stale_after_s: int) -> dict[str, Any]:
    """The host's times on our clock (`off`: its clock minus ours): a host whose clock is off
    neither sorts first (ahead) nor looks stale (behind). Without its clock, never later than
    now."""
    updated = min(now, s["updated_ms"] - off) if s["updated_ms"] else 0
    waiting = min(now, s["waiting_ms"] - off) if s.get("waiting_ms") else None
    s = {**s, "updated_ms": updated, "waiting_ms": waiting}
    if updated:
        s["stale"] = now - updated > stale_after_s * 1000
    return s


def _as_its_host_is(s: dict[str, Any], online: dict[str, bool]) -> dict[str, Any]:
    """A session as known only while its host is online: else its status is unknown."""
    state = online.get(s["host"])
    if state is True:
        return s
    reason = "host_offline" if state is False else "host_unknown"
    return {**s, "status": "unknown", "reason": reason, "detail": None, "agents": []}


def _host(
    name: str, online: bool | None, sessions: list[dict[str, Any]], skew: dict[str, int]
) -> dict[str, Any]:
    mine = [s for s in sessions if s["host"] == name]
    return {
        "host": name,
        "online": online,
        "sessions": len(mine),
        "attention": sum(1 for s in mine if s["status"] == "attention"),
        "clock_skew_s": round(skew[name] / 1000) if name in skew else None,
    }


def _session(data: bytes, host: str) -> dict[str, Any] | None:
    """A session message as the bridge publishes it, typed; None when it is not one."""
    raw = _message(data)
    if raw is None:
        return None
    out = _fields(raw)
    out.update(_newer_fields(raw, out))
    out["updated_ms"] = _ms(out["updated_at"])
    out["waiting_ms"] = _ms(out.get("waiting_since")) or None
    out["host"] = host  # the topic names the host (a broker ACL can enforce it), not the payload
    return out


def _message(data: bytes) -> dict[str, Any] | None:
    """The JSON object of a session message; None when the bytes are none (too big, not JSON,
    no session id, a status this viewer does not know)."""
    if len(data) > MAX_MESSAGE:
        return None
    try:
        raw = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("session_id"), str):
        return None
    return raw if raw.get("status") in STATUSES else None


def _fields(raw: dict[str, Any]) -> dict[str, Any]:
    """The fields this viewer knows, each of its type, text cleaned and bounded."""
    return {
        "session_id": _text(raw["session_id"], 200),
        "agent": _text(raw.get("agent")) or "claude",
        "status": raw["status"],
        "reason": _text(raw.get("reason")),
        "detail": _text(raw.get("detail")),
        "summary": _text(raw.get("summary")) or "",
        "cwd": _text(raw.get("cwd")),
        "project": _text(raw.get("project")) or "",
        "last_event": _text(raw.get("last_event")),
        "updated_at": _text(raw.get("updated_at")),
        "updated_ms": 0,
        "stale": raw.get("stale") is True,
        "alive": raw.get("alive") if isinstance(raw.get("alive"), bool) else None,
        "pid": _int(raw.get("pid")),
        "tmux_pane": _text(raw.get("tmux_pane")),
        "tmux": _tmux(raw.get("tmux")),
        "model": _text(raw.get("model")),
        "last_turn_ms": _int(raw.get("last_turn_ms")),
        "episode": _text(raw.get("episode")),
        "agents": _agents(raw.get("agents")),
    }


def _agents(value: object) -> list[dict[str, Any]]:
    """The session's subagents: at most 50."""
    return [
        {
            "agent_id": _text(a.get("agent_id")) or "",
            "agent_type": _text(a.get("agent_type")) or "",
            "status": _text(a.get("status")),
            "reason": _text(a.get("reason")),
            "detail": _text(a.get("detail")),
        }
        for a in (value if isinstance(value, list) else [])[:50]
        if isinstance(a, dict)
    ]


def _newer_fields(raw: dict[str, Any], known: dict[str, Any]) -> dict[str, Any]:
    """Keys a newer lookout may add: plain values only, text cleaned, a bounded number."""
    out: dict[str, Any] = {}
    extra = [k for k in raw if k not in known and k not in ("host", "schema")][:_MAX_EXTRA]
    for key in extra:
        value = raw[key]
        if not (isinstance(key, str) and key.isidentifier() and len(key) <= 64):
            continue
        if isinstance(value, str):
            out[key] = _text(value)
        elif value is None or isinstance(value, (bool, int, float)):
            out[key] = value
    return out


def _tmux(value: object) -> dict[str, object] | None:
    """Where the session's pane is on its host (its bridge asked that host's tmux), or None."""
    if not isinstance(value, dict):
        return None
    out: dict[str, object] = {k: _text(value.get(k), 200) for k in ("socket", "pane", "session")}
    out["window"] = _int(value.get("window"))
    return out


def _int(value: object) -> int | None:
    return value if type(value) is int else None


def _text(value: object, limit: int = 600) -> str | None:
    if not isinstance(value, str):
        return None
    # Control characters never reach a terminal (OSC 52 can write the clipboard).
    cleaned = "".join(c if c.isprintable() else " " for c in value[:limit])
    return cleaned


def _ms(stamp: str | None) -> int:
    if not stamp:
        return 0
    try:
        import datetime

        return int(datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return 0


def gather(cfg: FleetConfig, timeout: float = GATHER_TIMEOUT_S) -> Fleet:
    fleet = Fleet(cfg)
    fleet.start(timeout)
    fleet.stop()
    return fleet


def public(snapshot: dict[str, Any]) -> dict[str, Any]:
    out = {
        "hosts": snapshot["hosts"],
        "sessions": [lookout.sessions.public(s) for s in snapshot["sessions"]],
    }
    if snapshot.get("dropped"):
        out["dropped"] = snapshot["dropped"]
    return out
