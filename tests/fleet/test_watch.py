"""The viewer's side: everything on the bus is untrusted input. A hostile or broken publisher
cannot crash `status --fleet`, inject terminal escapes, or pose as another host."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest

from lookout.config import fleet
from lookout.fleet import watch
from tests.fleet.conftest import Host, Spy
from tests.mosquitto import PASSWORD, USER, Broker


def publish(broker: Broker, messages: list[tuple[str, bytes]]) -> None:
    spy = Spy(broker, "nothing/at/all")
    for topic, body in messages:
        spy.client.publish(topic, body, qos=1, retain=True).wait_for_publish(5)
    spy.close()


def session(**over: object) -> bytes:
    base = {"session_id": "s1", "status": "idle", "project": "p", "host": "h"}
    return json.dumps({**base, **over}).encode()


def test_gather_gets_every_retained_message(
    broker: Broker, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The end-of-retained probe: nothing is missed, and nobody waits for a timeout. More than
    # Mosquitto queues per client at QoS 1 (20 in flight + 1000): those would be dropped.
    monkeypatch.setenv("MQ_PW", PASSWORD)
    c = fleet.validate({"mqtt": broker.url, "username": USER, "password_env": "MQ_PW", "host": "v"})
    # Three hosts of 400: one host may hold at most fleet.limits.HOST_SESSIONS (N6).
    names = ("h1", "h2", "h3")
    publish(broker, [(f"lookout/{h}/online", b"true") for h in names])
    publish(
        broker,
        [
            (f"lookout/{h}/sessions/s{i}", session(session_id=f"s{i}"))
            for h in names
            for i in range(400)
        ],
    )
    start = time.monotonic()
    snap = watch.gather(c).snapshot()
    took = time.monotonic() - start
    assert len(snap["sessions"]) == 1200
    assert snap["hosts"] == [
        {"host": h, "online": True, "sessions": 400, "attention": 0, "clock_skew_s": None}
        for h in names
    ]
    assert took < 3.0


def test_bad_messages_are_dropped_and_text_is_cleaned(
    broker: Broker, hosts: Callable[[str], Host]
) -> None:
    viewer = hosts("viewer")
    publish(
        broker,
        [
            ("lookout/h/online", b"true"),
            ("lookout/h/sessions/bad1", b"not json"),
            ("lookout/h/sessions/bad2", b"[1, 2]"),
            ("lookout/h/sessions/bad3", session(status="pwned")),
            ("lookout/h/sessions/bad4", b"{" * 100_000),
            ("lookout/h/sessions/bad5", json.dumps({"status": "idle"}).encode()),
            ("lookout/h/online/extra", b"true"),
            ("lookout/evil host/online", b"true"),
            ("lookout/évil/sessions/s9", session(session_id="s9")),
            (
                "lookout/h/sessions/ok",
                session(
                    session_id="ok",
                    status="attention",
                    reason="permission",
                    summary="rm -rf \x1b]52;c;ZXZpbA==\x07 x\x1b[2J",
                    project="\x1b[31mred",
                    host="someone-else",
                    extra_field="\x1b[1mnew",
                    nested={"not": "kept"},
                ),
            ),
        ],
    )
    out = viewer.lookout("status", "--fleet", "--json")
    assert out.returncode == 0, out.stderr
    fleet = json.loads(out.stdout)
    assert [h["host"] for h in fleet["hosts"]] == ["h"]
    [s] = fleet["sessions"]
    assert s["session_id"] == "ok" and s["host"] == "h"  # the topic's host, not the payload's
    assert "\x1b" not in out.stdout and "\x07" not in out.stdout
    assert s["extra_field"] == " [1mnew" and "nested" not in s
    table = viewer.lookout("status", "--fleet").stdout
    assert "\x1b" not in table and "permission" in table


def test_a_host_without_online_status_is_unknown(
    broker: Broker, hosts: Callable[[str], Host]
) -> None:
    viewer = hosts("viewer")
    publish(broker, [("lookout/ghost/sessions/s1", session(status="attention", reason="question"))])
    fleet = viewer.fleet()
    assert fleet["hosts"] == [
        {"host": "ghost", "online": None, "sessions": 1, "attention": 0, "clock_skew_s": None}
    ]
    assert (fleet["sessions"][0]["status"], fleet["sessions"][0]["reason"]) == (
        "unknown",
        "host_unknown",
    )
    line = viewer.lookout("status", "--fleet", "--line").stdout.strip()
    assert line == "1 unknown · 1 host offline"
    table = viewer.lookout("status", "--fleet").stdout
    assert "not online: ghost (no online status); their sessions are shown as unknown" in table


def test_other_prefixes_are_not_ours(broker: Broker, hosts: Callable[[str], Host]) -> None:
    viewer = hosts("viewer")
    publish(broker, [("other/h/online", b"true"), ("other/h/sessions/s1", session())])
    assert viewer.fleet() == {"hosts": [], "sessions": []}
    out = viewer.lookout("status", "--fleet")
    assert out.stdout.strip() == "no hosts on the bus yet (is a bridge running?)"


def test_fleet_order_and_ids_are_the_read_models(
    broker: Broker, hosts: Callable[[str], Host]
) -> None:
    # issue 22 items 11 and 17: the one waiting longest on top (as `lookout status`), though
    # another's last event is older; and OpenCode's ids, which share a time prefix, told apart.
    viewer = hosts("viewer")
    now = time.time()

    def stamp(ago_s: float) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(now - ago_s))

    publish(
        broker,
        [
            ("lookout/h/online", b"true"),
            ("lookout/h/sessions/ses_de99b7c6aa", session(
                session_id="ses_de99b7c6aa", status="attention", reason="permission",
                updated_at=stamp(1), waiting_since=stamp(120))),
            ("lookout/h/sessions/ses_de99b067bb", session(
                session_id="ses_de99b067bb", status="attention", reason="question",
                updated_at=stamp(5), waiting_since=stamp(10))),
            ("lookout/h/sessions/ses_de99c000cc", session(
                session_id="ses_de99c000cc", status="idle", updated_at=stamp(2))),
        ],
    )  # fmt: skip
    fleet = viewer.fleet()
    assert [(s["session_id"], s["short_id"]) for s in fleet["sessions"]] == [
        ("ses_de99b7c6aa", "ses_de99b7"),
        ("ses_de99b067bb", "ses_de99b0"),
        ("ses_de99c000cc", "ses_de99c"),
    ]
    table = viewer.lookout("status", "--fleet").stdout.splitlines()
    assert [line.split()[2] for line in table[1:4]] == ["ses_de99b7", "ses_de99b0", "ses_de99c"]
    line = viewer.lookout("status", "--fleet", "--line").stdout.strip()
    assert line.startswith("! h/p:permission h/p:question")
