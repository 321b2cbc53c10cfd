"""Issue 25, Home Assistant: a real dialog of the real client (tmux) answered by pressing the
request's Allow button, and a dialog answered in the terminal withdrawing its buttons within 2 s.

No Home Assistant runs here: a client logged in with Home Assistant's broker user does what HA's
MQTT button does when pressed (its payload_press on its command_topic), on a real Mosquitto with
the documented ACL, to a real `lookout bridge` with `[fleet] answers = true`."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout.fleet import answers
from tests.mosquitto import Broker

from .harness import CHECKOUT, ClaudePane, Sandbox, wait_for
from .test_remote_answer import COMMAND, enable_remote, pending, status_of

pytestmark = pytest.mark.e2e

USERS = {"e2ehost": "pw-e2ehost-not-real", "ha": "pw-ha-not-real"}
ACL = CHECKOUT / "tests" / "fixtures" / "mosquitto" / "acl"


class HomeAssistant:
    """Keeps the button configs it sees; presses one as HA's MQTT button does."""

    def __init__(self, broker: Broker) -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        self.lock = threading.Lock()
        self.configs: dict[str, dict[str, Any] | None] = {}
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id="e2e-ha", protocol=mqtt.MQTTv5
        )
        self.client.username_pw_set("ha", USERS["ha"])
        self.client.on_message = self._on
        self.client.connect("127.0.0.1", broker.port)
        self.client.loop_start()
        self.client.subscribe("homeassistant/button/#", qos=1)

    def _on(self, _c: Any, _u: Any, msg: Any) -> None:
        with self.lock:
            self.configs[msg.topic] = json.loads(msg.payload) if msg.payload else None

    def buttons(self, rec: dict[str, Any]) -> dict[str, dict[str, Any]]:
        tok = answers.token(rec)
        with self.lock:
            return {
                c["payload_press"]: c
                for c in self.configs.values()
                if c is not None and c["command_topic"].endswith("/" + tok)
            }

    def press(self, config: dict[str, Any]) -> None:
        info = self.client.publish(
            config["command_topic"], config["payload_press"], qos=config["qos"]
        )
        info.wait_for_publish(10)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    directory = tmp_path / "broker"
    directory.mkdir()
    b = Broker(directory, acl=ACL, users=USERS)
    b.start()
    try:
        yield b
    finally:
        b.kill()


def test_a_home_assistant_press_closes_the_terminal_dialog(
    sandbox: Sandbox, broker: Broker
) -> None:
    from ..receivers import require

    require("tmux")
    sandbox.trust_project(idle_ms=2000)
    enable_remote(
        sandbox,
        wait_s=120,
        extra=f'\n[fleet]\nmqtt = "{broker.url}"\nusername = "e2ehost"\n'
        'password_env = "E2E_MQTT_PASSWORD"\nhost = "e2ehost"\n'
        "home_assistant = true\nanswers = true\n",
    )
    bridge = subprocess.Popen(
        [sys.executable, "-m", "lookout", "bridge"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=sandbox.env(E2E_MQTT_PASSWORD=USERS["e2ehost"]),
        cwd=CHECKOUT,
    )
    ha = HomeAssistant(broker)
    try:
        with ClaudePane(sandbox, "--permission-mode", "manual") as pane:
            session = pane.ready()
            # 1. Pressed in Home Assistant: the dialog goes and the tool runs.
            # The mock model runs both commands in turn (its script is the first message), each
            # with a description beside it, as the real client sends nearly every command. A
            # button's name is one line and must hold all of what runs for an Allow (issue 31);
            # the description is the model's commentary, not what runs (issue 38).
            pane.type(f"[[bash: {COMMAND}]] [[bash: touch made-second]]")
            pane.wait_screen("Do you want to proceed?")
            rec = pending(sandbox)
            assert rec["tool_input"] == {"command": COMMAND, "description": "mock command"}
            buttons = wait_for(lambda: ha.buttons(rec) or None, 10, "the request's buttons")
            assert set(buttons) == {"allow", "deny"}
            assert buttons["allow"]["name"] == f"Allow e2ehost · project · Bash: {COMMAND}"
            assert buttons["deny"]["name"] == f"Deny e2ehost · project · Bash: {COMMAND}"
            ha.press(buttons["allow"])
            pressed = time.monotonic()
            wait_for(lambda: "Do you want to proceed?" not in pane.screen(), 10, "the dialog")
            gone = time.monotonic() - pressed
            wait_for(lambda: "Allowed by PermissionRequest hook" in pane.screen(), 10, "the note")
            wait_for(lambda: (sandbox.project / "made-remotely").exists(), 10, "the tool to run")
            event = sandbox.wait_event(session, "RemoteDecision")
            assert event["remote"]["by"] == "Home Assistant"
            assert event["remote"]["source"] == "home_assistant"
            wait_for(lambda: not ha.buttons(rec), 5, "the answered request's buttons to go")

            # 2. Answered in the terminal (Esc): its buttons are withdrawn within 2 s.
            wait_for(lambda: "touch made-second" in pane.screen(), 20, "the second dialog")
            pane.wait_screen("Do you want to proceed?")
            second = pending(sandbox)
            assert second["id"] != rec["id"]
            late = wait_for(lambda: ha.buttons(second) or None, 10, "the second's buttons")
            time.sleep(0.5)  # the dialog takes keys only once it has drawn (as the other tests)
            pane.keys("Escape")
            escaped = time.monotonic()
            wait_for(lambda: not ha.buttons(second), 10, "the buttons to be withdrawn")
            withdrawn = time.monotonic() - escaped
            assert status_of(sandbox, second["id"]) == "answered_locally"
            ha.press(late["allow"])  # a late press: changes nothing
            assert not (sandbox.project / "made-second").exists()
            assert status_of(sandbox, second["id"]) == "answered_locally"
        assert gone < 3, gone
        assert withdrawn < 2, withdrawn
        print(f"press -> dialog gone {gone:.2f} s; Esc -> buttons withdrawn {withdrawn:.2f} s")
    finally:
        ha.close()
        bridge.terminate()
        bridge.wait(10)
    sandbox.assert_no_errors()
