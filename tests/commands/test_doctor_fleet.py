"""`lookout doctor` with a [fleet]: whether the bridge runs and whether the broker answers."""

from __future__ import annotations

import json
from collections.abc import Callable

from tests.fleet.conftest import Host, broker, hosts  # noqa: F401 - fixtures
from tests.helpers import wait_for
from tests.mosquitto import Broker


def fleet_checks(h: Host) -> list[dict[str, str]]:
    out = h.lookout("doctor", "--json")
    return [c for c in json.loads(out.stdout)["checks"] if c["check"] == "fleet"]


def test_bridge_and_broker(hosts: Callable[[str], Host], broker: Broker) -> None:  # noqa: F811
    a = hosts("alpha")
    checks = fleet_checks(a)
    assert [c["status"] for c in checks] == ["warn", "ok"]
    assert (
        "no bridge runs for" in checks[0]["message"] and "alpha as offline" in checks[0]["message"]
    )
    assert checks[0]["hint"].startswith("lookout bridge")
    assert checks[1]["message"].startswith(f"broker {broker.url} answers (as fleet-user, ")

    proc = a.bridge()
    wait_for(lambda: fleet_checks(a)[0]["status"] == "ok")
    assert fleet_checks(a)[0]["message"].startswith(f"bridge runs (pid {proc.pid}) for ")

    broker.kill()
    checks = fleet_checks(a)
    assert checks[-1]["status"] == "fail"
    assert checks[-1]["message"].startswith("broker: cannot reach the broker at mqtt://127.0.0.1")
    text = a.lookout("doctor")
    assert text.returncode == 1
    assert "FAIL  fleet: broker: cannot reach the broker" in text.stdout


def test_wrong_password(hosts: Callable[[str], Host], broker: Broker) -> None:  # noqa: F811
    a = hosts("alpha")
    out = a.lookout("doctor", "--json", LOOKOUT_TEST_MQTT_PASSWORD="nope")
    [_bridge, check] = [c for c in json.loads(out.stdout)["checks"] if c["check"] == "fleet"]
    assert check["status"] == "fail" and "Not authorized" in check["message"]
    assert "nope" not in out.stdout


def test_no_fleet_no_fleet_check(hosts: Callable[[str], Host]) -> None:  # noqa: F811
    a = hosts("alpha")
    a.config.write_text("# nothing\n")
    assert fleet_checks(a) == []


def test_doctor_tries_what_the_broker_allows(
    hosts: Callable[[str], Host],  # noqa: F811 - the fixture imported above
    broker: Broker,  # noqa: F811
) -> None:
    # No ACL on this broker: every area is tried for real and allowed. (tests/fleet/test_acl.py
    # has the ACLs that deny them.)
    a = hosts("alpha")
    a.write_config(home_assistant=True)
    [_bridge, check] = fleet_checks(a)
    assert check["status"] == "ok"
    assert check["message"].endswith(
        "; it may write lookout/alpha/# and homeassistant/+/lookout_alpha/# and read every host"
    )
