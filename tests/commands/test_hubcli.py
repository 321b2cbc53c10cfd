"""`lookout answer|say|interrupt|start HOST:...` (issue 42): off the fleet's hub each says why it
cannot reach another host (no [fleet], no hub named, not the hub), with a hint, and sends
nothing; this host's own name is this host's session. The hub's way through the broker:
tests/fleet/test_hub.py."""

from __future__ import annotations

import json

import pytest

from tests.helpers import lookout, write_config

FLEET = '[fleet]\nmqtt = "mqtt://127.0.0.1:1"\nhost = "laptop"\n'


COMMANDS = (
    ("say", "hostB:api", "hello"),
    ("interrupt", "hostB:api"),
    ("start", "hostB:api", "--prompt", "hi"),
    ("answer", "hostB:0123456789abcdef0123", "allow"),
)


@pytest.mark.parametrize("command", COMMANDS)
def test_without_a_fleet(command: tuple[str, ...]) -> None:
    write_config("# no fleet\n")
    out = lookout(*command)
    assert (out.returncode, out.stdout) == (1, "")
    assert out.stderr.splitlines()[0] == (
        f"error: {command[1]!r} names host hostB, but this host has no [fleet]"
    )
    assert out.stderr.splitlines()[1].startswith("hint: answering and steering another host go")


@pytest.mark.parametrize("command", COMMANDS)
def test_without_a_hub_and_off_the_hub(command: tuple[str, ...]) -> None:
    write_config(FLEET)
    out = lookout(*command)
    assert (out.returncode, out.stdout) == (1, "")
    assert out.stderr.splitlines() == [
        f"error: {command[1]!r} names host hostB, but [fleet] hub is not set: each host answers"
        " and steers only its own",
        'hint: name the hub in every host\'s [fleet]: hub = "laptop" (docs/fleet.md), or run it'
        " on hostB",
    ]
    write_config(FLEET + 'hub = "desktop"\n')
    out = lookout(*command)
    assert (out.returncode, out.stdout) == (1, "")
    assert out.stderr.splitlines() == [
        "error: this host (laptop) is not the fleet's hub (desktop): only the hub answers and"
        " steers another host",
        "hint: run it on desktop, or on hostB itself",
    ]


def test_on_the_hub_a_broker_that_does_not_answer_is_said() -> None:
    write_config(FLEET + 'hub = "laptop"\n')
    out = lookout("say", "hostB:api", "hello", "--json")
    assert out.returncode == 1
    said = json.loads(out.stdout)
    assert (said["host"], said["ok"]) == ("hostB", False)
    assert said["lines"][0].startswith("error: cannot reach the broker at mqtt://127.0.0.1:1")


def test_this_hosts_own_name_is_a_local_session() -> None:
    write_config(FLEET + 'hub = "desktop"\n')
    out = lookout("say", "laptop:api", "hello")
    assert out.returncode == 1
    assert "steering is off" in out.stderr  # the local core's own refusal, not the hub's
