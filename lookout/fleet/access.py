"""What the broker lets this host do, tried for real (for `lookout doctor`, and the bridge before
it offers Home Assistant answers): write its own subtree and, with Home Assistant, its discovery
topics; publish the viewer's end-of-retained probe and get it back, which it does only when it may
read the other hosts' sessions; and, with answers, that it may NOT read the other hosts' requests
and presses (their press tokens). Publishes nothing retained, and nothing a viewer or Home
Assistant reads."""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from lookout.config.fleet import FleetConfig
from lookout.errors import LookoutError
from lookout.fleet import mqtt, topics

ECHO_WAIT_S = 1.0
PRIVATE_WAIT_S = 5.0
ACL_HINT = "docs/fleet.md: the broker ACL"


@dataclass
class Exposure:
    """What private_reads() found: the private areas (topics.PRIVATE) of every host this user may
    read, or why it cannot tell."""

    kinds: list[str] = field(default_factory=list)
    unknown: str = ""

    @property
    def safe(self) -> bool:
        return not self.kinds and not self.unknown


def private_reads(client: Any, acks: mqtt.Acks, cfg: FleetConfig, timeout: float) -> Exposure:
    """May this user read other hosts' requests and presses? Tried on the `!sync` pseudo-host,
    which any grant with a wildcard for the host (`pattern read lookout/#`) covers as it covers
    every real host: a probe there comes back only through such a grant. A marker on our own
    subtree, published after the probes were acknowledged, comes back after them (the broker
    queues a message for its subscribers before it acknowledges it): no wait for a timeout.
    Changes client.on_message and on_subscribe; unsubscribes what it subscribed."""
    rand = secrets.token_hex(8)
    probes = {topics.private_probe(cfg.topic_prefix, k, rand): k for k in topics.PRIVATE}
    marker = f"{cfg.topic_prefix}/{cfg.host}/{topics.SYNC}/{rand}"
    got: set[str] = set()
    done, subscribed = threading.Event(), threading.Event()

    def on_message(_c: Any, _u: Any, msg: Any) -> None:
        if msg.topic in probes:
            got.add(probes[msg.topic])
        elif msg.topic == marker:
            done.set()

    client.on_message = on_message
    client.on_subscribe = lambda *_a: subscribed.set()
    client.subscribe([(t, 0) for t in [*probes, marker]])
    try:
        if not subscribed.wait(timeout):
            return Exposure(unknown="the broker did not confirm the probes' subscription")
        infos = [acks.publish(client, t, b"", retain=False) for t in probes]
        deadline = time.monotonic() + timeout
        for info in infos:
            try:
                info.wait_for_publish(max(0.1, deadline - time.monotonic()))
            except (RuntimeError, ValueError) as exc:  # not connected (any more)
                return Exposure(unknown=f"the probes were not sent: {exc}")
        denied = [t for t, _reason in acks.take_denied() if t in probes]
        if denied or not all(info.is_published() for info in infos):
            return Exposure(unknown=f"the broker refused the probe {(denied or [*probes])[0]}")
        acks.publish(client, marker, b"", retain=False)
        if not done.wait(max(0.1, deadline - time.monotonic())):
            return Exposure(unknown=f"the probe {marker} on this host's subtree never came back")
        return Exposure(kinds=[k for k in topics.PRIVATE if k in got])
    finally:
        client.unsubscribe([*probes, marker])


def is_hub(cfg: FleetConfig) -> bool:
    return bool(cfg.hub) and cfg.hub == cfg.host


def others_reads(found: Exposure, cfg: FleetConfig) -> Exposure:
    """`found` without what the hub's own ACL block grants it (it reads every host's requests
    and steered outcomes): on the hub, only a grant beyond that exposes anything."""
    if not is_hub(cfg):
        return found
    kinds = [k for k in found.kinds if k not in (topics.REQUESTS, topics.STEERED)]
    return Exposure(kinds=kinds, unknown=found.unknown)


def private_writes(client: Any, acks: mqtt.Acks, cfg: FleetConfig, timeout: float) -> Exposure:
    """May this user write other hosts' presses and steer messages (issue 42)? Tried on the
    `!probe` pseudo-host, which no grant names but one with a wildcard for the host (`pattern
    write lookout/+/steer/+`, `topic write lookout/#`), as it would name every real host: the
    broker acknowledges (MQTT 5) or refuses ("Not authorized") each publish. Nobody reads them.
    Under the shipped ACL every one is refused: then no host, by the same grants, may write
    this host's press and steer topics (a `topic` line naming this host for another user is not
    seen from here: docs/fleet.md says not to write one)."""
    rand = secrets.token_hex(8)
    probes = {
        f"{cfg.topic_prefix}/{topics.PROBE}/{kind}/{rand}": kind
        for kind in (topics.PRESS, topics.STEER)
    }
    infos = [acks.publish(client, t, b"", retain=False) for t in probes]
    deadline = time.monotonic() + timeout
    for info in infos:
        try:
            info.wait_for_publish(max(0.1, deadline - time.monotonic()))
        except (RuntimeError, ValueError) as exc:
            return Exposure(unknown=f"the probes were not sent: {exc}")
    if not all(info.is_published() for info in infos):
        return Exposure(unknown="the broker did not acknowledge the probes")
    denied = {t for t, _reason in acks.take_denied() if t in probes}
    return Exposure(kinds=[kind for t, kind in probes.items() if t not in denied])


def hub_proof(client: Any, acks: mqtt.Acks, cfg: FleetConfig, timeout: float) -> Exposure:
    """Whether this host may take presses and steer messages from the hub: nobody but it (and
    Home Assistant) may read its requests and answer tokens, and no other host may write its
    press and steer topics. Both tried for real; what cannot be told counts as unsafe."""
    reads = private_reads(client, acks, cfg, timeout)
    if reads.unknown or reads.kinds:
        return reads
    return hub_proof_of(reads, private_writes(client, acks, cfg, timeout))


def _who(cfg: FleetConfig) -> str:
    """This host's login as the broker's ACL names it."""
    return f"user {cfg.username!r}" if cfg.username else "an anonymous client"


def _cannot_tell(
    found: Exposure, cfg: FleetConfig, may: str, so: str, also: str = ""
) -> tuple[str, str]:
    """An error and its hint when the probes cannot tell whether other hosts `may` do it."""
    return (
        f"the broker at {cfg.url}: cannot tell whether other hosts may {may} ({found.unknown}),"
        f" {so}",
        f"its ACL must let {_who(cfg)} write {cfg.topic_prefix}/{topics.SYNC}/#{also} ({ACL_HINT})",
    )


def hub_text(found: Exposure, cfg: FleetConfig) -> tuple[str, str]:
    """An error and its hint for a hub_proof() that is not safe."""
    if found.unknown:
        return _cannot_tell(
            found,
            cfg,
            "write this host's press and steer topics",
            f"so it takes nothing from the hub {cfg.hub}",
            " and answer each publish",
        )
    who, p = _who(cfg), cfg.topic_prefix
    writes = [k.split(" ", 1)[1] for k in found.kinds if k.startswith("write ")]
    if writes:
        areas = " and ".join(f"{p}/+/{k}/+" for k in writes)
        return (
            f"the broker at {cfg.url} lets {who} write other hosts' {areas}: under the same"
            f" grant every host may press and steer this one, so it takes nothing from the hub"
            f" {cfg.hub}",
            f"in its ACL only the hub's user may write {p}/+/{topics.PRESS}/+ and"
            f" {p}/+/{topics.STEER}/+; a host writes only {p}/%u/# ({ACL_HINT})",
        )
    areas = " and ".join(f"{p}/+/{k}/..." for k in found.kinds)
    return (
        f"the broker at {cfg.url} lets {who} read other hosts' {areas}: under the same grant"
        f" every host may read this host's answer tokens, so it takes nothing from the hub"
        f" {cfg.hub}",
        f"in its ACL no host may read {p}/# or {p}/+/{topics.REQUESTS}/#: give them"
        f" {p}/+/online, {p}/+/summary and {p}/+/sessions/+ instead ({ACL_HINT})",
    )


def exposure_text(found: Exposure, cfg: FleetConfig) -> tuple[str, str]:
    """An error and its hint for an Exposure that is not safe."""
    if found.unknown:
        return _cannot_tell(
            found, cfg, "read this host's press tokens", "so Home Assistant answers are off"
        )
    who, p = _who(cfg), cfg.topic_prefix
    # The areas that carry press tokens (a grant that reads them reads steer messages too).
    kinds = [k for k in found.kinds if k in (topics.REQUESTS, topics.PRESS)] or found.kinds
    areas = " and ".join(f"{p}/+/{k}/..." for k in kinds)
    return (
        f"the broker at {cfg.url} lets {who} read other hosts' {areas}: under the same grant"
        f" every host may read this host's press tokens, so Home Assistant answers are off",
        f"in its ACL no host may read {p}/# or {p}/+/{topics.REQUESTS}/#: give them"
        f" {p}/+/online, {p}/+/summary and {p}/+/sessions/+ instead ({ACL_HINT})",
    )


def check(cfg: FleetConfig, timeout: float = 3.0) -> list[tuple[bool, str, str | None]]:
    """(ok, message, hint) per finding, the connection first. Raises mqtt.ConnectError when the
    broker cannot be reached or refuses the login."""
    client = mqtt.new_client(cfg, "doctor")
    start = time.monotonic()
    mqtt.connect(client, cfg, timeout)
    took = (time.monotonic() - start) * 1000
    who = _who(cfg)
    try:
        acks = mqtt.Acks(client)
        probe = topics.sync(cfg.topic_prefix, secrets.token_hex(8))
        echo, subscribed = threading.Event(), threading.Event()

        def on_message(_c: Any, _u: Any, msg: Any) -> None:
            if msg.topic == probe:
                echo.set()

        client.on_message = on_message
        client.on_subscribe = lambda *_a: subscribed.set()
        client.subscribe(probe, qos=0)
        if not subscribed.wait(timeout):
            raise LookoutError(f"the broker at {cfg.url} did not confirm a subscription")
        own = f"{cfg.topic_prefix}/{cfg.host}/#"
        ha = f"{cfg.home_assistant_prefix}/+/{topics.ha_node(cfg.host)}/#"
        tries = {f"{cfg.topic_prefix}/{cfg.host}/doctor": own}
        if cfg.home_assistant:
            tries[f"{cfg.home_assistant_prefix}/sensor/{topics.ha_node(cfg.host)}/doctor"] = ha
        tries[probe] = f"{cfg.topic_prefix}/{topics.SYNC}/#"
        infos = [acks.publish(client, topic, b"", retain=False) for topic in tries]
        deadline = time.monotonic() + timeout
        for info in infos:
            info.wait_for_publish(max(0.1, deadline - time.monotonic()))
        denied = dict(acks.take_denied())
        got_back = echo.wait(ECHO_WAIT_S) if probe not in denied else False
        reads = private_reads(client, acks, cfg, timeout) if cfg.answers or cfg.hub else None
        writes = private_writes(client, acks, cfg, timeout) if cfg.hub else None
    finally:
        mqtt.close(client)
    found: list[tuple[bool, str, str | None]] = []
    answers = f"broker {cfg.url} answers (as {cfg.username}, {took:.0f} ms)"
    if not cfg.username:
        answers = f"broker {cfg.url} answers (without a login, {took:.0f} ms)"
    found.append((True, answers, None))
    mismatch = (
        f"; fleet.username ({cfg.username}) is not fleet.host ({cfg.host}), and the documented"
        " ACL gives each user the host of the same name"
        if cfg.username and cfg.username != cfg.host
        else ""
    )
    why = {
        own: "the bridge's messages are dropped, other hosts do not see this one",
        ha: "Home Assistant discovery is dropped",
        f"{cfg.topic_prefix}/{topics.SYNC}/#": "`status --fleet` cannot tell when it has every"
        " host and waits 5 s",
    }
    for topic, area in tries.items():
        if topic in denied:
            found.append(
                (
                    False,
                    f"broker denies {who} writing {area} ({denied[topic]}): {why[area]}",
                    f"let {who} write {area} in the broker's ACL ({ACL_HINT}){mismatch}",
                )
            )
    sessions = f"{cfg.topic_prefix}/+/{topics.SESSIONS}/+"
    if probe not in denied and not got_back:
        found.append(
            (
                False,
                f"broker does not let {who} read {sessions} (the probe {probe} did not"
                " come back): `status --fleet` on this host sees no other host",
                f"let {who} read {sessions} in the broker's ACL ({ACL_HINT})",
            )
        )
    if len(found) == 1:
        areas = " and ".join([own, *([ha] if cfg.home_assistant else [])])
        found[0] = (True, f"{answers}; it may write {areas} and read every host", None)
    return found + _private_findings(cfg, reads, writes)


def _private_findings(
    cfg: FleetConfig, reads: Exposure | None, writes: Exposure | None
) -> list[tuple[bool, str, str | None]]:
    """What the probes of the private areas found: Home Assistant's answers, then the hub's."""
    found: list[tuple[bool, str, str | None]] = []
    exposure = others_reads(reads, cfg) if reads is not None and cfg.answers else None
    if exposure is not None and exposure.safe:
        found.append(
            (
                True,
                f"no other host may read this host's press tokens ({cfg.topic_prefix}/{cfg.host}"
                f"/{topics.REQUESTS}/..., /{topics.PRESS}/...): Home Assistant answers are on",
                None,
            )
        )
    elif exposure is not None:
        found.append((False, *exposure_text(exposure, cfg)))
    if reads is not None and writes is not None:
        found += hub_findings(cfg, reads, writes)
    return found


def hub_findings(
    cfg: FleetConfig, reads: Exposure, writes: Exposure
) -> list[tuple[bool, str, str | None]]:
    """What doctor says of the hub: which host it is, whether this one listens, what the proofs
    found (on the hub: that its user may do what the hub does; elsewhere: that nobody else may)."""
    p, who = cfg.topic_prefix, _who(cfg)
    if not is_hub(cfg):
        head = (
            f"the fleet's hub is {cfg.hub}: it listens on the shared chat surfaces, this host"
            " does not"
        )
        proof = hub_proof_of(reads, writes)
        if proof.safe:
            return [
                (True, head, None),
                (
                    True,
                    f"no other host may read this host's requests or write its press and steer"
                    f" topics ({p}/{cfg.host}/...): it takes presses and steering from {cfg.hub}",
                    None,
                ),
            ]
        return [(True, head, None), (False, *hub_text(proof, cfg))]
    head = "this host is the fleet's hub: it listens on the shared chat surfaces for every host"
    lacking = [
        f"read {p}/+/{k}/+" for k in (topics.REQUESTS, topics.STEERED) if k not in reads.kinds
    ]
    lacking += [f"write {p}/+/{k}/+" for k in (topics.PRESS, topics.STEER) if k not in writes.kinds]
    if reads.unknown or writes.unknown:
        lacking.append(f"(cannot tell: {reads.unknown or writes.unknown})")
    if not lacking:
        return [(True, f"{head}; the broker lets it answer and steer every host", None)]
    return [
        (True, head, None),
        (
            False,
            f"the broker does not let {who} {', '.join(lacking)}: the hub cannot answer or"
            " steer the other hosts",
            f"give the hub's user the block `user {cfg.username or cfg.host}` ({ACL_HINT})",
        ),
    ]


def hub_proof_of(reads: Exposure, writes: Exposure) -> Exposure:
    """hub_proof()'s verdict from the two probes' findings."""
    if reads.unknown or reads.kinds:
        return reads
    return Exposure(kinds=[f"write {k}" for k in writes.kinds], unknown=writes.unknown)
