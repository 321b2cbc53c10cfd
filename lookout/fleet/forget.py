"""`lookout fleet forget HOST`: clear a retired host's retained topics (its online, summary and
sessions, and Home Assistant's discovery configs for it), so no viewer shows it any more.
Reads what the broker holds for that host first, then clears exactly that."""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from lookout.config import fleet as config
from lookout.config.fleet import FleetConfig
from lookout.errors import LookoutError
from lookout.fleet import mqtt, topics

GATHER_TIMEOUT_S = 5.0
ACK_TIMEOUT_S = 10.0


class NothingHeld(LookoutError):
    """The broker holds no retained topic of that host."""


@dataclass
class Held:
    """What the broker retains for one host."""

    topics: list[str] = field(default_factory=list)
    online: bool | None = None


def held(client: Any, cfg: FleetConfig, host: str, timeout: float = GATHER_TIMEOUT_S) -> Held:
    """Every retained topic of `host` this user may read, the end marked by our own probe."""
    found = Held()
    lock = threading.Lock()
    done, subscribed = threading.Event(), threading.Event()
    probe = topics.sync(cfg.topic_prefix, secrets.token_hex(8))
    online = topics.online(cfg.topic_prefix, host)

    def on_message(_c: Any, _u: Any, msg: Any) -> None:
        if msg.topic == probe:
            done.set()
        elif msg.retain and msg.payload:
            with lock:
                found.topics.append(msg.topic)
                if msg.topic == online:
                    found.online = msg.payload == b"true"

    client.on_message = on_message
    client.on_subscribe = lambda *_a: subscribed.set()
    subs = [
        f"{cfg.topic_prefix}/{host}/#",
        f"{cfg.home_assistant_prefix}/+/{topics.ha_node(host)}/#",
        probe,
    ]
    client.subscribe([(t, 0) for t in subs])
    if not subscribed.wait(timeout):
        raise LookoutError(f"the broker at {cfg.url} did not confirm the subscription")
    acks = mqtt.Acks(client)
    acks.publish(client, probe, b"", retain=False)
    if not done.wait(timeout):
        raise LookoutError(
            f"cannot tell what the broker at {cfg.url} holds for {host}: the probe {probe} did"
            " not come back",
            hint="the broker's ACL must let this user write and read "
            f"{cfg.topic_prefix}/{topics.SYNC}/# (docs/fleet.md: the broker ACL)",
        )
    client.on_message = None
    with lock:
        # Sessions first, online last: a viewer never sees sessions of a host with no status.
        found.topics.sort(key=lambda t: (t == online, t.endswith(f"/{topics.SUMMARY}"), t))
        return found


def forget(cfg: FleetConfig, host: str, *, force: bool = False, dry_run: bool = False) -> list[str]:
    """Clear `host`'s retained topics; the topics cleared (with dry_run: to clear)."""
    if not config.HOST.fullmatch(host):
        raise LookoutError(
            f"not a host name: {host!r}",
            hint="letters, digits, '.', '-' and '_'; `lookout status --fleet` lists the hosts",
        )
    client = mqtt.new_client(cfg, "forget")
    mqtt.connect(client, cfg)
    try:
        found = held(client, cfg, host)
        if not found.topics:
            raise NothingHeld(
                f"the broker at {cfg.url} holds nothing for host {host}"
                f" ({cfg.topic_prefix}/{host}/...)",
                hint="`lookout status --fleet` lists the hosts it knows",
            )
        if found.online and not force:
            raise LookoutError(
                f"{host} says it is online: a bridge that runs would publish it all again",
                hint=f"stop its bridge first; a host that published with `bridge --once` stays"
                f" online: lookout fleet forget --force {host}",
            )
        if dry_run:
            return found.topics
        acks = mqtt.Acks(client)
        infos = [acks.publish(client, t, b"", retain=True) for t in found.topics]
        deadline = time.monotonic() + ACK_TIMEOUT_S
        for info in infos:
            info.wait_for_publish(max(0.1, deadline - time.monotonic()))
        denied = acks.take_denied()
        if denied:
            topic, reason = denied[0]
            more = f" and {len(denied) - 1} more" if len(denied) > 1 else ""
            who = f"user {cfg.username!r}" if cfg.username else "an anonymous client"
            raise LookoutError(
                f"the broker at {cfg.url} refused to clear {topic}{more} ({reason}):"
                f" {host} is not forgotten",
                hint=f"the ACL lets {who} write its own host only; run it as a user that may"
                " write every host (the ACL's `admin`, through its own config file:"
                " LOOKOUT_CONFIG=admin.toml lookout fleet forget HOST; docs/fleet.md)",
            )
        if not all(info.is_published() for info in infos):
            raise LookoutError(
                f"the broker at {cfg.url} did not acknowledge every message",
                hint="run it again",
            )
        return found.topics
    finally:
        client.disconnect()
        client.loop_stop()
