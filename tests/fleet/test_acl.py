"""The broker ACL from docs/fleet.md on a real Mosquitto: every host sees every host, Home
Assistant gets its discovery, and `status --fleet` does not wait for a timeout. An ACL that
denies part of it is said (by the viewer, the bridge and doctor), never a silent exit 0."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lookout.fleet import watch
from tests.fleet.conftest import Host, retained, wait_for
from tests.helpers import ROOT
from tests.mosquitto import Broker

# A real broker, real sender/poller processes or a real hook sequence: the full suite, not --fast.
pytestmark = pytest.mark.real

DOCUMENTED = (ROOT / "tests" / "fixtures" / "mosquitto" / "acl").read_text()
ONE_LINE = "pattern readwrite lookout/%u/#\n"  # what the README used to recommend
NO_READ = "pattern readwrite lookout/%u/#\npattern write lookout/!sync/#\n"
USERS = ("hostA", "hostB", "hostC", "hostD", "ha", "admin", "spy", "hub")


def password(user: str) -> str:
    return f"pw-{user}-not-a-real-one"


class Fleet:
    def __init__(self, root: Path, acl: str) -> None:
        self.root = root
        directory = root / "broker"
        directory.mkdir()
        # A spy that reads everything, to look at what the broker holds.
        (directory / "acl").write_text(acl + "\nuser spy\ntopic readwrite #\n")
        self.broker = Broker(
            directory, acl=directory / "acl", users={u: password(u) for u in USERS}
        )
        self.broker.start()
        self.hosts: list[Host] = []

    def host(self, name: str, user: str | None = None, **config: object) -> Host:
        user = user or name
        h = Host(self.root, name, self.broker, user, password(user))
        h.write_config(**config)
        self.hosts.append(h)
        return h

    def retained(self) -> dict[str, bytes]:
        return retained(self.broker, "#", "spy", password("spy"))

    def close(self) -> None:
        for h in self.hosts:
            h.stop()
        self.broker.kill()


@pytest.fixture
def fleet_with(tmp_path: Path) -> Iterator[Callable[[str], Fleet]]:
    made: list[Fleet] = []

    def make(acl: str) -> Fleet:
        made.append(Fleet(tmp_path, acl))
        return made[-1]

    try:
        yield make
    finally:
        for f in made:
            f.close()


def fleet_checks(h: Host) -> list[dict[str, str]]:
    out = h.lookout("doctor", "--json")
    return [c for c in json.loads(out.stdout)["checks"] if c["check"] == "fleet"]


def timed_status(h: Host, *args: str) -> tuple[float, int, str, str]:
    start = time.monotonic()
    out = h.lookout("status", "--fleet", *args)
    return time.monotonic() - start, out.returncode, out.stdout, out.stderr


def test_docs_ship_the_tested_acl() -> None:
    assert DOCUMENTED in (ROOT / "docs" / "fleet.md").read_text()


def test_with_the_documented_acl_every_host_sees_every_host(
    fleet_with: Callable[[str], Fleet],
) -> None:
    f = fleet_with(DOCUMENTED)
    a = f.host("hostA", home_assistant=True)
    b = f.host("hostB", home_assistant=True)
    viewer = f.host("hostD")  # a viewer only: no bridge
    a.hook("session_start", "SessionStart-startup")
    b.hook("session_start", "SessionStart-startup")
    for h in (a, b):
        out = h.lookout("bridge", "--once")
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith("published 1 session of host ")
    took, rc, stdout, stderr = timed_status(viewer, "--json")
    assert (rc, stderr) == (0, "")
    assert [h["host"] for h in json.loads(stdout)["hosts"]] == ["hostA", "hostB"]
    # The end-of-retained probe came back: no waiting for the gather's timeout.
    assert took < watch.GATHER_TIMEOUT_S
    held = f.retained()
    for host in ("hostA", "hostB"):
        assert json.loads(held[f"homeassistant/binary_sensor/lookout_{host}/needs_you/config"])
    assert [c["status"] for c in fleet_checks(a)][1:] == ["ok"]
    assert fleet_checks(a)[-1]["message"].endswith(
        "it may write lookout/hostA/# and homeassistant/+/lookout_hostA/# and read every host"
    )
    assert [c["status"] for c in fleet_checks(viewer)][1:] == ["ok"]


def test_the_one_line_acl_is_said(fleet_with: Callable[[str], Fleet]) -> None:
    f = fleet_with(ONE_LINE)
    a, b = f.host("hostA"), f.host("hostB")
    a.hook("session_start", "SessionStart-startup")
    assert a.lookout("bridge", "--once").returncode == 0
    took, rc, stdout, stderr = timed_status(b)
    assert rc == 1
    assert (
        "error: the broker at mqtt://127.0.0.1:" in stderr
        and "refuses this viewer's end-of-retained probe lookout/!sync/" in stderr
    )
    assert "hint: its ACL must let user 'hostB' write lookout/!sync/# (docs/fleet.md" in stderr
    # The broker said no at once: no 5 s wait for a probe that cannot come back.
    assert took < watch.GATHER_TIMEOUT_S
    assert stdout.strip() == "no hosts on the bus yet (is a bridge running?)"
    [_bridge, answers, probe] = fleet_checks(b)
    assert answers["status"] == "ok" and probe["status"] == "fail"
    assert probe["message"].startswith(
        "broker denies user 'hostB' writing lookout/!sync/# (Not authorized): `status --fleet`"
    )
    # Home Assistant discovery outside the host's subtree: the bridge says it is dropped.
    a.write_config(home_assistant=True)
    out = a.lookout("bridge", "--once")
    assert out.returncode == 1 and "published" not in out.stdout
    assert "refused to publish homeassistant/binary_sensor/lookout_hostA/" in out.stderr
    ha = [c for c in fleet_checks(a) if "homeassistant" in c["message"]]
    assert [c["status"] for c in ha] == ["fail"]
    assert "Home Assistant discovery is dropped" in ha[0]["message"]


def test_an_acl_that_hides_the_other_hosts_is_said(fleet_with: Callable[[str], Fleet]) -> None:
    f = fleet_with(NO_READ)
    a, b = f.host("hostA"), f.host("hostB")
    a.hook("session_start", "SessionStart-startup")
    assert a.lookout("bridge", "--once").returncode == 0
    took, rc, stdout, stderr = timed_status(b, "--json")
    assert rc == 1 and json.loads(stdout)["hosts"] == []
    assert "did not deliver it back: user 'hostB' may not read lookout/+/sessions/+" in stderr
    assert took < watch.GATHER_TIMEOUT_S
    read = fleet_checks(b)[-1]
    assert read["status"] == "fail"
    assert read["message"].startswith("broker does not let user 'hostB' read lookout/+/sessions/+")
    assert read["hint"] == (
        "let user 'hostB' read lookout/+/sessions/+ in the broker's ACL"
        " (docs/fleet.md: the broker ACL)"
    )


def test_publishes_the_broker_denies_are_errors(fleet_with: Callable[[str], Fleet]) -> None:
    # A copied config: the user of another host, so the ACL denies every publish.
    f = fleet_with(DOCUMENTED)
    b = f.host("hostB", user="hostC")
    b.hook("session_start", "SessionStart-startup")
    out = b.lookout("bridge", "--once")
    assert out.returncode == 1 and out.stdout == ""
    assert (
        out.stderr.startswith("error: the broker at mqtt://127.0.0.1:")
        and "refused to publish lookout/hostB/" in out.stderr.splitlines()[0]
    )
    assert "(Not authorized)" in out.stderr
    assert "fleet.username (hostC) is not fleet.host (hostB)" in out.stderr
    assert not any(t.startswith("lookout/hostB/") for t in f.retained())
    denied = [c for c in fleet_checks(b) if c["status"] == "fail"]
    assert denied[0]["message"].startswith("broker denies user 'hostC' writing lookout/hostB/#")

    # The running bridge says it too, once, and logs it.
    proc = b.bridge()
    assert proc.stdout is not None
    lines: list[str] = []
    wait_for(lambda: lines.append(proc.stdout.readline()) or "refused" in lines[-1])  # type: ignore[union-attr]
    assert "refused to publish lookout/hostB/" in lines[-1]
    errors = (b.state / "errors.log").read_text()
    assert "bridge: the broker at mqtt://127.0.0.1:" in errors and "refused" in errors


def test_forgetting_another_host_takes_the_admin_user(fleet_with: Callable[[str], Fleet]) -> None:
    f = fleet_with(DOCUMENTED)
    a, b = f.host("hostA", home_assistant=True), f.host("hostB")
    admin = f.host("admin-laptop", user="admin")
    a.hook("session_start", "SessionStart-startup")
    assert a.lookout("bridge", "--once").returncode == 0
    out = b.lookout("fleet", "forget", "--force", "hostA")
    assert out.returncode == 1
    assert (
        "refused to clear lookout/hostA/" in out.stderr and "hostA is not forgotten" in out.stderr
    )
    assert "the ACL's `admin`" in out.stderr
    out = admin.lookout("fleet", "forget", "--force", "hostA")
    assert out.returncode == 0, out.stderr
    assert "and 2 Home Assistant discovery configs" in out.stdout
    assert not [t for t in f.retained() if "hostA" in t]
