"""Fleet fixtures: a real Mosquitto broker per test (tests/mosquitto.py) and hosts, each with its
own state directory and config, driven through the real hook scripts and the real `lookout`
entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import PAYLOADS, ROOT, wait_for
from tests.mosquitto import PASSWORD, USER, Broker

PASSWORD_ENV = "LOOKOUT_TEST_MQTT_PASSWORD"


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    directory = tmp_path / "broker"
    directory.mkdir()
    b = Broker(directory)
    b.start()
    try:
        yield b
    finally:
        b.kill()


class Host:
    def __init__(
        self, root: Path, name: str, broker: Broker, user: str = USER, password: str = PASSWORD
    ) -> None:
        self.name = name
        self.user = user
        self.password = password
        self.root = root / f"host-{name}"
        self.state = self.root / "state"
        self.config = self.root / "config.toml"
        self.root.mkdir(parents=True)
        self.broker = broker
        self.procs: list[subprocess.Popen[str]] = []
        self.write_config()

    def write_config(self, tls: bool = False, **extra: object) -> None:
        lines = [
            "[fleet]",
            f'mqtt = "{self.broker.tls_url if tls else self.broker.url}"',
            f'username = "{self.user}"',
            f'password_env = "{PASSWORD_ENV}"',
            f'host = "{self.name}"',
        ]
        if tls:
            lines.append(f'ca_file = "{self.broker.ca}"')
        for key, value in extra.items():
            lines.append(f"{key} = {json.dumps(value)}")
        self.config.write_text("\n".join(lines) + "\n")

    @property
    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "LOOKOUT_STATE_DIR": str(self.state),
            "LOOKOUT_CONFIG": str(self.config),
            PASSWORD_ENV: self.password,
        }

    def hook(self, script: str, body: dict[str, Any] | str, **env: str) -> None:
        if isinstance(body, str):
            body = json.loads((PAYLOADS / f"{body}.json").read_text())
        out = subprocess.run(
            [sys.executable, "-I", "-S", str(ROOT / "hooks" / f"{script}.py")],
            input=json.dumps(body),
            capture_output=True,
            text=True,
            env={**self.env, **env},
            timeout=30,
            check=False,
        )
        assert out.returncode == 0 and out.stdout == "", out

    def lookout(
        self, *args: str, timeout: float = 30, **env: str
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "lookout", *args],
            capture_output=True,
            text=True,
            env={**self.env, **env},
            cwd=ROOT,
            timeout=timeout,
            check=False,
        )

    def bridge(self, *args: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "lookout", "bridge", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=self.env,
            cwd=ROOT,
        )
        self.procs.append(proc)
        return proc

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()

    def fleet(self) -> dict[str, Any]:
        out = self.lookout("status", "--fleet", "--json", "--all")
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)


@pytest.fixture
def hosts(tmp_path: Path, broker: Broker) -> Iterator[Callable[[str], Host]]:
    made: list[Host] = []

    def make(name: str) -> Host:
        h = Host(tmp_path, name, broker)
        made.append(h)
        return h

    try:
        yield make
    finally:
        for h in made:
            h.stop()


class Spy:
    """Every message on the broker (`#`), for what the bus carries and what it retains."""

    def __init__(
        self, broker: Broker, topic: str = "#", user: str = USER, password: str = PASSWORD
    ) -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        self.messages: list[tuple[str, bytes, bool]] = []
        self.lock = threading.Lock()
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=f"spy-{time.monotonic_ns()}"
        )
        self.client.username_pw_set(user, password)
        self.client.on_message = self._on
        self.client.connect("127.0.0.1", broker.port)
        self.client.loop_start()
        self.client.subscribe(topic, qos=1)

    def _on(self, _c: Any, _u: Any, msg: Any) -> None:
        with self.lock:
            self.messages.append((msg.topic, bytes(msg.payload), bool(msg.retain)))

    def last(self, topic: str) -> bytes | None:
        with self.lock:
            for t, data, _r in reversed(self.messages):
                if t == topic:
                    return data
        return None

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def retained(
    broker: Broker, topic: str = "#", user: str = USER, password: str = PASSWORD
) -> dict[str, bytes]:
    """What a new subscriber gets: the retained messages under `topic` (all of them: a probe
    published after the subscription comes back after the last retained message)."""
    spy = Spy(broker, topic, user, password)
    probe = f"probe/{time.monotonic_ns()}"
    spy.client.subscribe(probe, qos=1)
    time.sleep(0.05)
    spy.client.publish(probe, b"end", qos=1)
    wait_for(lambda: spy.last(probe) is not None)
    spy.close()
    return {t: data for t, data, r in spy.messages if r and t != probe}
