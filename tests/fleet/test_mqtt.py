"""lookout.fleet.mqtt: the client built from [fleet], and failures that say what to fix."""

from __future__ import annotations

import sys

import pytest

from lookout.config import fleet
from lookout.errors import LookoutError
from lookout.fleet import mqtt


def test_without_paho_the_error_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "paho.mqtt.client", None)  # import fails
    with pytest.raises(LookoutError) as caught:
        mqtt.require()
    assert "paho-mqtt" in str(caught.value)
    assert "install.py --bridge" in (caught.value.hint or "")


def test_nothing_listening_is_a_transient_error() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    cfg = fleet.validate({"mqtt": f"mqtt://127.0.0.1:{port}", "host": "h"})
    with pytest.raises(mqtt.ConnectError) as caught:
        mqtt.connect(mqtt.new_client(cfg, "test"), cfg, timeout=2)
    assert caught.value.transient
    assert str(caught.value).startswith(f"cannot reach the broker at mqtt://127.0.0.1:{port}: ")
    assert "is the broker running" in (caught.value.hint or "")


def test_client_ids_are_unique_per_process() -> None:
    # A takeover of one bridge's connection by another would fire its Last Will.
    cfg = fleet.validate({"mqtt": "mqtt://b", "host": "laptop"})
    a, b = mqtt.client_id("bridge", cfg), mqtt.client_id("bridge", cfg)
    assert a != b and a.startswith("lookout-bridge-laptop-") and len(a) <= 64
