"""The owning host's side of the hub (issue 42): what this host's bridge does with a press or a
steer message the fleet's hub publishes on `<prefix>/<host>/press/<token>` and
`<prefix>/<host>/steer/<id>`, and what it publishes for the hub.

It takes one only when its own config names the hub and its broker proved that no other host can
read its requests or write its press and steer topics (lookout.fleet.access.hub_proof; the bridge
checks that before it subscribes). Each message must be fresh (its own `ts_ms` within MAX_AGE_MS
of this host's clock, and not from before this bridge started) and never seen (its nonce); a
steer message then runs through this host's own lookout.steer.core with its own [steer] and
every check, as the surface it came from. The outcome, the lines a local action shows (or the
refusal's error and hint), goes to `<prefix>/<host>/steered/<nonce>` for the hub.

A press carries an answer token minted here (lookout.remote.answers.mint: a chat alert's button,
or one of the tokens published with a request for the hub), answered with answer_token: this
host verifies it; the hub never decides."""

from __future__ import annotations

import json
import queue
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lookout import store
from lookout.boundary import visible
from lookout.config.fleet import FleetConfig
from lookout.errors import LookoutError
from lookout.fleet import topics
from lookout.remote import answers, requests, shown

MAX_AGE_MS = 30_000  # a message older than this (by its own stamp) does nothing
SEEN_MAX = 4096  # nonces remembered: more fresh messages than this within the window are refused
SURFACE = answers.HUB  # the tokens minted for the hub's `lookout answer` and dashboard
NONCE = re.compile(r"[A-Za-z0-9_-]{16,64}")
WAIT_MAX_S = 30.0  # how long a steer message may ask this host to wait (start's first hook)


@dataclass(frozen=True)
class Result:
    """What became of one message: ok, the lines for the hub, and one word for the log."""

    ok: bool
    lines: tuple[str, ...]
    reason: str = ""


class Guard:
    """Fresh and never seen: the nonces of the last MAX_AGE_MS (twice over), at most SEEN_MAX.
    Thread-safe enough for its one caller (the bridge's worker thread)."""

    def __init__(self, started_ms: int) -> None:
        self.started_ms = started_ms
        self.seen: OrderedDict[str, int] = OrderedDict()

    def check(self, data: dict[str, Any], now_ms: int) -> str:
        """ "" when `data` may run now (its nonce is then remembered), else why not."""
        nonce, ts = data.get("nonce"), data.get("ts_ms")
        if not isinstance(nonce, str) or not NONCE.fullmatch(nonce):
            return "it has no nonce"
        if type(ts) is not int:
            return "it has no time stamp"
        while self.seen and next(iter(self.seen.values())) < now_ms - 2 * MAX_AGE_MS:
            self.seen.popitem(last=False)
        if nonce in self.seen:
            return "it was seen before (a replay)"
        age = now_ms - ts
        if age > MAX_AGE_MS:
            return f"it was sent {age / 1000:.0f} s ago (more than {MAX_AGE_MS // 1000} s)"
        if age < -MAX_AGE_MS:
            return f"its time stamp is {-age / 1000:.0f} s ahead of this host's clock"
        if ts < self.started_ms:
            return "it was sent before this host's bridge started (it may be a replay)"
        if len(self.seen) >= SEEN_MAX:
            return f"more than {SEEN_MAX} messages came within {2 * MAX_AGE_MS // 1000} s"
        self.seen[nonce] = now_ms
        return ""


def decode(body: bytes) -> dict[str, Any] | None:
    """A hub message's JSON object, None for anything else."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def outcome_topic(cfg: FleetConfig, nonce: str) -> str:
    return topics.private(cfg.topic_prefix, cfg.host, topics.STEERED, nonce)


def outcome_message(result: Result, nonce: str, now_ms: int) -> bytes:
    body = {"id": nonce, "ok": result.ok, "lines": list(result.lines), "reason": result.reason}
    return json.dumps({**body, "ts_ms": now_ms}).encode()


def refused(exc: LookoutError, reason: str = "refused") -> Result:
    hint = (f"hint: {visible(exc.hint)}",) if exc.hint else ()
    return Result(False, (f"error: {visible(str(exc))}", *hint), reason)


# -- presses -------------------------------------------------------------------------------------


def take_press(
    state_dir: str, cfg: FleetConfig, token: str, data: dict[str, Any], hub_tokens: set[str]
) -> Result:
    """Answer with the answer token a hub's press names. `hub_tokens`: the tokens this bridge
    published for the hub (minted for SURFACE); any other is a chat alert's button, minted for
    the surface and scope (channel) the hub names, as that surface's own press would be."""
    surface = str(data.get("surface") or "")
    # No scope: the hub cannot tell which of this host's channels showed the alert (one bot for
    # the fleet, named as each host likes): the token, unguessable and single-use, is enough.
    scope = data["scope"] if isinstance(data.get("scope"), str) else None
    by = f"{visible(str(data.get('by') or '?'))[:80]} ({visible(surface)[:20]} at {cfg.hub})"
    if token in hub_tokens:
        surface, scope = SURFACE, cfg.hub
    if surface not in answers.MINTED:
        what = f"error: {visible(surface)[:20]!r} is no surface that answers"
        return Result(False, (what,), "surface")
    message = data.get("message") if isinstance(data.get("message"), str) else None
    try:
        rec = answers.answer_token(
            state_dir, token, surface=surface, by=by, scope=scope, message=message or None
        )
    except requests.Refused as exc:
        return Result(False, (answers.outcome_text(None, str(exc)),), "refused")
    return Result(True, (answers.outcome_text(rec),))


# -- steer messages ------------------------------------------------------------------------------


def reply_session(state_dir: str, source: str, channel: str, reply_to: str) -> str | None:
    """The session whose alert `reply_to` is (sent here through `channel` of surface `source`;
    "": through any of this host's channels of that surface, whose names the hub cannot know):
    the surface's own alert_session, as its local reply finds it; None for a surface without."""
    import importlib

    from lookout.surfaces import registry

    if source not in registry.SURFACES:
        return None
    find = getattr(importlib.import_module(f"lookout.surfaces.{source}"), "alert_session", None)
    if not callable(find):
        return None
    for name in [channel] if channel else _channels_of(source):
        sid = find(state_dir, name, reply_to)
        if isinstance(sid, str):
            return sid
    return None


def _channels_of(surface: str) -> list[str]:
    """The names of this host's enabled channels whose alerts `surface` answers."""
    from lookout.channels import registry
    from lookout.config import check, files

    try:
        cfg = files.load(None)  # the user's own file: a project never names a channel
    except check.ConfigError:
        return []
    return [
        name
        for name, ch in cfg["channels"].items()
        if surface == registry.of(ch).ANSWERS and ch["enabled"]
    ]


def _target(state_dir: str, data: dict[str, Any], source: str) -> tuple[str, bool]:
    """(session key, whether it is a whole id): a reply to an alert names its session exactly."""
    reply_to = str(data.get("reply_to") or "")
    if not reply_to:
        return str(data.get("session") or ""), False
    channel = str(data.get("channel") or "")
    sid = reply_session(state_dir, source, channel, reply_to)
    if sid is None:
        raise LookoutError(
            f"{visible(reply_to)[:40]} is no alert of a session of {source} channel"
            f" {visible(channel)[:40]!r} on this host (or an old one)",
            hint="reply to a newer alert, or name the session",
        )
    return sid, True


def run_steer(state_dir: str, data: dict[str, Any]) -> Result:
    """Run one steer message through lookout.steer.core as its surface, with this host's own
    [steer]: every check is the core's. Never raises."""
    from lookout.steer import core
    from lookout.steer.show import lines

    action, source = str(data.get("action") or ""), str(data.get("source") or "")
    text = str(data.get("text") or "")
    wait = data.get("wait_s")
    wait_s = min(WAIT_MAX_S, max(1.0, float(wait))) if isinstance(wait, (int, float)) else 4.0
    try:
        if action == "start":
            outcome = core.start(
                str(data.get("project") or ""),
                agent=str(data.get("agent") or "") or None,
                prompt=text or None,
                source=source,
                state_dir=state_dir,
                wait_s=wait_s,
                names=True,
            )
        elif action == "say":
            key, whole = _target(state_dir, data, source)
            outcome = core.say(key, text, source=source, state_dir=state_dir, whole_id=whole)
        elif action in ("interrupt", "stop"):
            key, whole = _target(state_dir, data, source)
            outcome = core.interrupt(key, source=source, state_dir=state_dir, whole_id=whole)
        else:
            return Result(False, (f"error: unknown action {visible(action)[:20]!r}",), "action")
    except LookoutError as exc:
        return refused(exc, getattr(exc, "reason", "refused"))
    except Exception as exc:  # a steer message must never stop the bridge
        store.log_error(state_dir, f"bridge: a steer message from the hub failed: {exc!r}")
        return Result(False, (f"error: it failed on this host: {type(exc).__name__}",), "failed")
    return Result(True, tuple(lines(outcome)))


# -- what this host publishes for the hub ------------------------------------------------------


def hub_part(state_dir: str, cfg: FleetConfig, rec: dict[str, Any]) -> dict[str, Any]:
    """What the hub needs of an open request, added to its request message: its id, the whole
    input as the dashboard shows it (none at `content = "none"`), whether Allow may be offered
    (the dashboard's rule), and an answer token for each button, minted here for the hub."""
    if cfg.content == "none":
        view = shown.View(text="", allow=False, why='this host sends no text (content = "none")')
    else:
        view = shown.view(rec, None)
    picks: list[tuple[str, dict[str, str] | None]] = [("deny", None)]
    if view["allow"]:
        picks.insert(0, ("allow", None))
    minted = answers.mint(state_dir, rec, SURFACE, picks, scope=cfg.hub)
    return {
        "id": rec["id"],
        "session_id": rec.get("session_id") or "",
        "agent": rec.get("agent") or "",
        "expires_ms": int(rec.get("expires_ms") or 0),
        "text": view["text"],
        "allow": view["allow"],
        "why": view["why"],
        "tokens": {decision: tok for (decision, _), tok in zip(picks, minted, strict=True)},
    }


# -- the bridge's inbox ------------------------------------------------------------------------

QUEUE_MAX = 16  # messages waiting behind the one running; more are refused at once
STOP = ("", "", b"")


class Inbox:
    """The hub's presses and steer messages, taken off paho's network thread (a steer waits for
        the agent, seconds) and run one after another on a thread of their own. `publish(topic,
        body)` sends an outcome; `say(reason, text)` logs one (an ignored message's `reason`: said
    at most once a second per reason; "" for an outcome, always said)."""

    def __init__(
        self,
        state_dir: str,
        cfg: FleetConfig,
        publish: Callable[[str, bytes], None],
        say: Callable[[str, str], None],
        hub_tokens: Callable[[], set[str]],
        started_ms: int,
    ) -> None:
        self.state_dir, self.cfg = state_dir, cfg
        self.publish, self.say, self.hub_tokens = publish, say, hub_tokens
        self.guard = Guard(started_ms)
        self.queue: queue.Queue[tuple[str, str, bytes]] = queue.Queue(QUEUE_MAX)
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        if self.thread is None:
            self.thread = threading.Thread(target=self._run, name="hub-inbox", daemon=True)
            self.thread.start()

    def stop(self) -> None:
        if self.thread is not None:
            self.queue.put(STOP)
            self.thread.join(WAIT_MAX_S + 5)
            self.thread = None

    def put(self, kind: str, name: str, body: bytes, retained: bool) -> None:
        """A message on this host's press or steer topics (paho's thread): queued, never run
        here. A retained one was held by the broker (not just sent): ignored."""
        if retained:
            self.say("retained", f"a retained {kind} message on {visible(name)[:40]}: ignored")
            return
        try:
            self.queue.put_nowait((kind, name, body))
        except queue.Full:
            self.say("busy", f"a {kind} message from the hub: {QUEUE_MAX} wait already, ignored")

    def _run(self) -> None:
        while True:
            item = self.queue.get()
            if item == STOP:
                return
            try:
                self.handle(*item)
            except Exception as exc:  # the inbox must never die
                store.log_error(self.state_dir, f"bridge: a hub message failed: {exc!r}")

    def handle(self, kind: str, name: str, body: bytes, now_ms: int | None = None) -> Result:
        """Check one message, run it, publish its outcome (when it names a nonce to answer on)."""
        from lookout import words

        data = decode(body)
        if data is None:
            self.say("payload", f"a {kind} message that is no JSON object: ignored")
            return Result(False, ("error: not a JSON object",), "payload")
        why = self.guard.check(data, words.now_ms() if now_ms is None else now_ms)
        if why:
            result = Result(False, (f"error: refused: {why}",), "stale")
            self.say("stale", f"a {kind} message from the hub refused: {why}")
        elif kind == topics.PRESS:
            result = take_press(self.state_dir, self.cfg, name, data, self.hub_tokens())
            self.say("", f"a press from the hub {self.cfg.hub}: {result.lines[0]}")
        else:
            result = run_steer(self.state_dir, data)
            self.say("", f"steered from the hub {self.cfg.hub}: {' / '.join(result.lines)}")
        nonce = data.get("nonce")
        if isinstance(nonce, str) and NONCE.fullmatch(nonce):
            self.publish(outcome_topic(self.cfg, nonce), outcome_message(result, nonce, _now()))
        return result


def _now() -> int:
    from lookout import words

    return words.now_ms()
