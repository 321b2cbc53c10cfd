"""What the broker lets this host do, tried for real (for `lookout doctor`): write its own
subtree and, with Home Assistant, its discovery topics; publish the viewer's end-of-retained
probe and get it back, which it does only when it may read the other hosts. Publishes nothing
retained, and nothing a viewer or Home Assistant reads."""

from __future__ import annotations

import secrets
import threading
import time
from typing import Any

from lookout.config.fleet import FleetConfig
from lookout.errors import LookoutError
from lookout.fleet import mqtt, topics

ECHO_WAIT_S = 1.0
ACL_HINT = "docs/fleet.md: the broker ACL"


def check(cfg: FleetConfig, timeout: float = 3.0) -> list[tuple[bool, str, str | None]]:
    """(ok, message, hint) per finding, the connection first. Raises mqtt.ConnectError when the
    broker cannot be reached or refuses the login."""
    client = mqtt.new_client(cfg, "doctor")
    start = time.monotonic()
    mqtt.connect(client, cfg, timeout)
    took = (time.monotonic() - start) * 1000
    who = f"user {cfg.username!r}" if cfg.username else "an anonymous client"
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
    finally:
        client.disconnect()
        client.loop_stop()
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
    if probe not in denied and not got_back:
        found.append(
            (
                False,
                f"broker does not let {who} read {cfg.topic_prefix}/# (the probe {probe} did not"
                " come back): `status --fleet` on this host sees no other host",
                f"let {who} read {cfg.topic_prefix}/# in the broker's ACL ({ACL_HINT})",
            )
        )
    if len(found) == 1:
        areas = " and ".join([own, *([ha] if cfg.home_assistant else [])])
        found[0] = (True, f"{answers}; it may write {areas} and read every host", None)
    return found
