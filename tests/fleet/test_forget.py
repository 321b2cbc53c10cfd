"""A retired host leaves the fleet: `lookout fleet forget HOST` clears its retained topics
(Home Assistant's discovery too), and `install.py --uninstall --purge` stops a bridge that was
started by hand instead of leaving it publishing from a state directory that is gone."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable

import pytest

from tests.fleet.conftest import PASSWORD_ENV, Host, retained, wait_for
from tests.helpers import ROOT
from tests.mosquitto import Broker

# A real broker, real sender/poller processes or a real hook sequence: the full suite, not --fast.
pytestmark = pytest.mark.real


def topics_of(broker: Broker, host: str) -> set[str]:
    return {t for t in retained(broker) if f"/{host}/" in t or f"/lookout_{host}/" in t}


def retire(h: Host, broker: Broker) -> None:
    """Published with Home Assistant on, then its bridge stopped cleanly (online = false)."""
    h.write_config(home_assistant=True)
    h.hook("session_start", "SessionStart-startup")
    proc = h.bridge()
    wait_for(lambda: retained(broker).get(f"lookout/{h.name}/online") == b"true")
    proc.terminate()
    assert proc.wait(10) == 0
    assert retained(broker)[f"lookout/{h.name}/online"] == b"false"


def test_forget_clears_a_retired_host(hosts: Callable[[str], Host], broker: Broker) -> None:
    old, keep, viewer = hosts("old"), hosts("keep"), hosts("viewer")
    retire(old, broker)
    keep.hook("session_start", "SessionStart-startup")
    assert keep.lookout("bridge", "--once").returncode == 0
    assert viewer.lookout("status", "--fleet", "--line").stdout.strip().endswith("1 host offline")
    held = topics_of(broker, "old")
    assert {
        "lookout/old/online",
        "lookout/old/summary",
        "homeassistant/binary_sensor/lookout_old/needs_you/config",
        "homeassistant/sensor/lookout_old/attention/config",
    } <= held and any(t.startswith("lookout/old/sessions/") for t in held)

    dry = viewer.lookout("fleet", "forget", "old", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert {line.removeprefix("would clear ") for line in dry.stdout.splitlines()[:-1]} == held
    assert topics_of(broker, "old") == held

    out = viewer.lookout("fleet", "forget", "old")
    assert out.returncode == 0, out.stderr
    assert out.stdout == (
        f"forgot host old: cleared {len(held)} retained topics on {broker.url}"
        " (lookout/old/... and 2 Home Assistant discovery configs)\n"
    )
    assert topics_of(broker, "old") == set()
    assert [h["host"] for h in viewer.fleet()["hosts"]] == ["keep"]
    assert viewer.lookout("status", "--fleet", "--line").stdout.strip() == "1 idle"

    again = viewer.lookout("fleet", "forget", "old")
    assert again.returncode == 1
    assert again.stderr.startswith(f"error: the broker at {broker.url} holds nothing for host old")


def test_forget_refuses_a_host_that_says_it_is_online(
    hosts: Callable[[str], Host], broker: Broker
) -> None:
    cron, viewer = hosts("cron"), hosts("viewer")
    cron.hook("session_start", "SessionStart-startup")
    assert cron.lookout("bridge", "--once").returncode == 0  # stays online: nothing says else
    out = viewer.lookout("fleet", "forget", "cron")
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        "error: cron says it is online: a bridge that runs would publish it all again",
        "hint: stop its bridge first; a host that published with `bridge --once` stays online:"
        " lookout fleet forget --force cron",
    ]
    assert topics_of(broker, "cron")
    assert viewer.lookout("fleet", "forget", "--force", "cron").returncode == 0
    assert topics_of(broker, "cron") == set()
    bad = viewer.lookout("fleet", "forget", "a/#")
    assert bad.returncode == 1 and bad.stderr.startswith("error: not a host name: 'a/#'")


def test_purge_stops_a_bridge_started_by_hand_and_clears_its_host(
    hosts: Callable[[str], Host], broker: Broker
) -> None:
    """newuser-5 defect 7: the purged host stayed `offline` on every viewer until an admin ran
    `fleet forget`; its own ACL lets it clear its own topics, once its bridge has stopped."""
    h, viewer = hosts("gone"), hosts("viewer")
    h.write_config(home_assistant=True)
    h.hook("session_start", "SessionStart-startup")
    proc = h.bridge()
    wait_for(lambda: retained(broker).get("lookout/gone/online") == b"true")
    assert [x["host"] for x in viewer.fleet()["hosts"]] == ["gone"]
    held = topics_of(broker, "gone")
    env = {k: v for k, v in h.env.items() if k != PASSWORD_ENV}  # in fleet.env, as for systemd
    (h.config.parent / "fleet.env").write_text(f"{PASSWORD_ENV}={h.password}\n")
    out = subprocess.run(
        [sys.executable, str(ROOT / "install.py"), "--uninstall", "--purge"],
        capture_output=True, text=True, env=env, cwd=h.root, timeout=60, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert f"stopped the bridge (pid {proc.pid}) that ran for " in out.stdout
    assert (
        f"cleared host gone's {len(held)} retained topics on {broker.url}: the other hosts no"
        " longer show it"
    ) in lines
    assert proc.wait(10) == 0  # it stopped cleanly before its topics were cleared
    assert topics_of(broker, "gone") == set()
    assert viewer.fleet()["hosts"] == []
    assert not h.state.exists()


def test_purge_says_what_to_do_when_it_cannot_clear_its_host(
    hosts: Callable[[str], Host], broker: Broker
) -> None:
    h = hosts("kept")
    h.hook("session_start", "SessionStart-startup")
    assert h.lookout("bridge", "--once").returncode == 0
    env = {k: v for k, v in h.env.items() if k != PASSWORD_ENV}  # no password anywhere
    out = subprocess.run(
        [sys.executable, str(ROOT / "install.py"), "--uninstall", "--purge"],
        capture_output=True, text=True, env=env, cwd=h.root, timeout=60, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert (
        f"warning: could not clear host kept's retained topics on {broker.url}: environment"
        f" variable {PASSWORD_ENV} (fleet.password_env) is not set"
    ) in out.stdout
    assert (
        "note: other hosts keep showing kept as offline; `lookout fleet forget kept` as a broker"
        " user that may write it (docs/fleet.md: admin) clears it"
    ) in out.stdout
    assert retained(broker)["lookout/kept/online"] == b"true"


def test_purge_from_a_python_without_the_mqtt_client_clears_through_the_runtime(
    hosts: Callable[[str], Host], broker: Broker
) -> None:
    """`python3 install.py` is the system's python3, which seldom has paho-mqtt; the runtime
    that `install.py --bridge` set up has it: the purge clears the host through its command."""
    system = "/usr/bin/python3"
    probe = subprocess.run([system, "-c", "import paho"], capture_output=True, check=False)
    if probe.returncode == 0 or not os.access(system, os.X_OK):
        pytest.skip(f"needs a {system} without paho-mqtt")
    h = hosts("plain")
    h.hook("session_start", "SessionStart-startup")

    def install_py(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [system, str(ROOT / "install.py"), *argv],
            capture_output=True, text=True, env=h.env, cwd=h.root, timeout=300, check=False,
        )  # fmt: skip

    installed = install_py("--python", sys.executable)  # a runtime whose interpreter has it
    assert installed.returncode == 0, installed.stderr
    assert h.lookout("bridge", "--once").returncode == 0
    assert topics_of(broker, "plain")
    out = install_py("--uninstall", "--purge")
    assert out.returncode == 0, out.stderr
    assert "cleared host plain's " in out.stdout, out.stdout
    assert topics_of(broker, "plain") == set()
