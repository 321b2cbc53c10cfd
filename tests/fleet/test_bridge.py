"""`lookout bridge` against a real Mosquitto: two hosts, outages, crashes, prunes, secrets."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable

from tests.fleet.conftest import PASSWORD_ENV, Host, Spy, retained
from tests.helpers import payload, wait_for
from tests.mosquitto import PASSWORD, USER, Broker

SID = payload("PermissionRequest-Bash")["session_id"]


def sessions(fleet: dict, host: str) -> dict[str, dict]:
    return {s["session_id"]: s for s in fleet["sessions"] if s["host"] == host}


def online(broker: Broker, host: str) -> bytes | None:
    return retained(broker, f"lookout/{host}/online").get(f"lookout/{host}/online")


def test_a_hook_on_host_a_shows_on_host_b_within_a_second(hosts: Callable[[str], Host]) -> None:
    a, b = hosts("alpha"), hosts("beta")
    a.bridge()
    b.bridge()
    a.hook("session_start", "SessionStart-startup")
    wait_for(lambda: sessions(b.fleet(), "alpha"))
    hosts_seen = {h["host"]: h["online"] for h in b.fleet()["hosts"]}
    assert hosts_seen == {"alpha": True, "beta": True}

    a.hook("permission_request", "PermissionRequest-Bash")
    start = time.monotonic()
    seen = wait_for(
        lambda: (s := sessions(b.fleet(), "alpha").get(SID)) and s["status"] == "attention" and s
    )
    elapsed = time.monotonic() - start
    assert elapsed < 1.0, f"{elapsed:.2f} s from the hook to status --fleet on the other host"
    assert seen["reason"] == "permission" and seen["detail"] == "Bash"
    assert seen["host"] == "alpha"
    # The shape the issue names, and every status --json key besides.
    fleet = b.fleet()
    assert set(fleet) == {"hosts", "sessions"}
    assert {"host", "online", "sessions"} <= set(fleet["hosts"][0])
    local = json.loads(a.lookout("status", "--json").stdout)["sessions"][0]
    # Except `tmux`: where a pane is, asked of this host's tmux server, means nothing elsewhere.
    assert set(local) - {"tmux"} <= set(seen)


def test_broker_restart_while_hooks_record_converges(
    hosts: Callable[[str], Host], broker: Broker
) -> None:
    a, b = hosts("alpha"), hosts("beta")
    a.bridge()
    a.hook("session_start", "SessionStart-startup")
    wait_for(lambda: sessions(b.fleet(), "alpha"))
    broker.kill()
    # Hooks keep recording while the broker is down (they never connect anywhere).
    ids = [f"outage-{i}" for i in range(5)]
    for sid in ids:
        a.hook("session_start", dict(payload("SessionStart-startup"), session_id=sid))
    a.hook("permission_request", "PermissionRequest-Bash")
    log = a.state / "errors.log"
    wait_for(lambda: log.exists() and "bridge:" in log.read_text())  # the bridge saw the outage
    broker.start()  # no persistence: every retained message is gone
    fleet = wait_for(lambda: (f := b.fleet()) and len(sessions(f, "alpha")) == 7 and f, timeout=40)
    mine = sessions(fleet, "alpha")
    assert set(ids) <= set(mine)
    assert mine[SID]["status"] == "attention"
    assert {h["host"]: h["online"] for h in fleet["hosts"]}["alpha"] is True
    errors = (a.state / "errors.log").read_text()
    assert "bridge:" in errors and "127.0.0.1" in errors


def test_sigkilled_bridge_shows_offline_through_last_will(
    hosts: Callable[[str], Host], broker: Broker
) -> None:
    a, b = hosts("alpha"), hosts("beta")
    proc = a.bridge()
    a.hook("permission_request", "PermissionRequest-Bash")
    wait_for(lambda: sessions(b.fleet(), "alpha").get(SID))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    wait_for(lambda: online(broker, "alpha") == b"false", timeout=5)
    fleet = b.fleet()
    assert fleet["hosts"] == [
        {"host": "alpha", "online": False, "sessions": 1, "attention": 0, "clock_skew_s": None}
    ]
    [s] = fleet["sessions"]
    assert (s["status"], s["reason"]) == ("unknown", "host_offline")
    line = b.lookout("status", "--fleet", "--line").stdout
    assert "1 host offline" in line and "permission" not in line


def test_clean_stop_says_offline(hosts: Callable[[str], Host], broker: Broker) -> None:
    a = hosts("alpha")
    proc = a.bridge()
    wait_for(lambda: online(broker, "alpha") == b"true")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == 0
    assert online(broker, "alpha") == b"false"


def test_prune_clears_the_retained_message(hosts: Callable[[str], Host], broker: Broker) -> None:
    a = hosts("alpha")
    a.bridge()
    a.hook("session_start", "SessionStart-startup")
    a.hook("session_end", "SessionEnd")
    sid = payload("SessionEnd")["session_id"]
    topic = f"lookout/alpha/sessions/{sid}"
    wait_for(lambda: b'"ended"' in retained(broker).get(topic, b""))
    out = a.lookout("prune", "--older-than", "0")
    assert out.returncode == 0, out.stderr
    wait_for(lambda: topic not in retained(broker), timeout=5)


def test_prune_while_the_bridge_is_down_is_cleared_on_its_restart(
    hosts: Callable[[str], Host], broker: Broker
) -> None:
    a = hosts("alpha")
    a.hook("session_start", "SessionStart-startup")
    a.hook("session_end", "SessionEnd")
    sid = payload("SessionEnd")["session_id"]
    topic = f"lookout/alpha/sessions/{sid}"
    assert a.lookout("bridge", "--once").returncode == 0
    assert topic in retained(broker)
    a.lookout("prune", "--older-than", "0")
    # The cursor remembers what the bus holds from us: the next run clears it.
    assert a.lookout("bridge", "--once").returncode == 0
    assert topic not in retained(broker)


def test_only_changes_after_the_first_publish(hosts: Callable[[str], Host], broker: Broker) -> None:
    a = hosts("alpha")
    for i in range(10):
        a.hook("session_start", dict(payload("SessionStart-startup"), session_id=f"s{i}"))
    spy = Spy(broker, "lookout/alpha/sessions/+")
    a.bridge()
    wait_for(lambda: len({t for t, d, r in spy.messages}) == 10)
    time.sleep(0.3)
    before = len(spy.messages)
    a.hook("user_prompt_submit", dict(payload("UserPromptSubmit"), session_id="s3"))
    wait_for(lambda: len(spy.messages) > before)
    time.sleep(0.5)
    changed = [t for t, d, r in spy.messages[before:]]
    spy.close()
    assert changed == ["lookout/alpha/sessions/s3"]


def test_no_secrets_on_the_bus(hosts: Callable[[str], Host], broker: Broker) -> None:
    a = hosts("alpha")
    a.write_config(home_assistant=True)
    # A channel token in the same config file, and secrets in the hook's environment and input.
    with open(a.config, "a") as f:
        f.write(
            '\n[channels.phone]\ntype = "ntfy"\nurl = "https://ntfy.example/topic-SECRET-URL"\n'
            'token = "tk_CHANNELSECRETTOKEN00000000"\n'
        )
    spy = Spy(broker)
    a.bridge()
    body = payload("PermissionRequest-Bash")
    body["tool_input"] = {
        "command": 'curl -H "Authorization: Bearer sk-live-PRIVATE0123456789" '
        "https://bob:hunter2pw@api.internal/x && AWS_SECRET_ACCESS_KEY=abc123xyz deploy"
    }
    a.hook("permission_request", body, GITHUB_TOKEN="ghp_ENVSECRET0000000000000000000000")
    wait_for(lambda: spy.last(f"lookout/alpha/sessions/{SID}"))
    time.sleep(0.3)
    spy.close()
    bus = b"\n".join(t.encode() + b" " + d for t, d, _r in spy.messages)
    for secret in (
        PASSWORD,
        "SECRET-URL",
        "CHANNELSECRET",
        "sk-live-PRIVATE",
        "hunter2pw",
        "abc123xyz",
        "ENVSECRET",
    ):
        assert secret.encode() not in bus, secret
    summary = json.loads(spy.last(f"lookout/alpha/sessions/{SID}") or b"{}")["summary"]
    assert summary.startswith("curl -H") and "…" in summary


def test_one_bridge_per_state_dir(hosts: Callable[[str], Host], broker: Broker) -> None:
    a = hosts("alpha")
    first = a.bridge()
    wait_for(lambda: online(broker, "alpha") == b"true")
    second = a.lookout("bridge")
    assert second.returncode == 1
    assert "a bridge already runs for" in second.stderr and f"pid {first.pid}" in second.stderr
    assert "hint:" in second.stderr


def test_once_publishes_and_exits(hosts: Callable[[str], Host], broker: Broker) -> None:
    a = hosts("alpha")
    a.hook("permission_request", "PermissionRequest-Bash")
    out = a.lookout("bridge", "--once")
    assert out.returncode == 0, out.stderr
    assert "published 1 session of host alpha" in out.stdout
    held = retained(broker)
    assert held["lookout/alpha/online"] == b"true"
    assert json.loads(held[f"lookout/alpha/sessions/{SID}"])["status"] == "attention"


def test_tls_with_the_generated_ca(hosts: Callable[[str], Host], broker: Broker) -> None:
    a, b = hosts("alpha"), hosts("beta")
    a.write_config(tls=True)
    b.write_config(tls=True)
    a.hook("permission_request", "PermissionRequest-Bash")
    assert a.lookout("bridge", "--once").returncode == 0
    assert sessions(b.fleet(), "alpha")[SID]["status"] == "attention"


def test_tls_without_the_ca_is_refused_clearly(
    hosts: Callable[[str], Host], broker: Broker
) -> None:
    a = hosts("alpha")
    a.config.write_text(
        f'[fleet]\nmqtt = "{broker.tls_url}"\nusername = "{USER}"\n'
        f'password_env = "{PASSWORD_ENV}"\n'
    )
    out = a.lookout("status", "--fleet")
    assert out.returncode == 1
    assert out.stderr.startswith("error: TLS: the broker's certificate")
    assert "hint: set fleet.ca_file" in out.stderr
    assert "Traceback" not in out.stderr


def test_wrong_password_is_refused_clearly(hosts: Callable[[str], Host], broker: Broker) -> None:
    a = hosts("alpha")
    bad = a.lookout("bridge", "--once", **{PASSWORD_ENV: "wrong-password"})
    assert bad.returncode == 1
    assert "refused the connection for user" in bad.stderr and "Not authorized" in bad.stderr
    assert "hint: check fleet.username" in bad.stderr
    assert "wrong-password" not in bad.stderr
    # The long-running bridge says so and exits too (a retry loop would hide it).
    proc = a.lookout("bridge", **{PASSWORD_ENV: "wrong-password"})
    assert proc.returncode == 1 and "Not authorized" in proc.stderr


def test_broker_down_is_an_error_for_status(hosts: Callable[[str], Host], broker: Broker) -> None:
    a = hosts("alpha")
    broker.kill()
    out = a.lookout("status", "--fleet", "--json")
    assert out.returncode == 1
    assert "error: cannot reach the broker at mqtt://127.0.0.1:" in out.stderr
    assert "hint:" in out.stderr


def test_home_assistant_discovery_on_the_bus(hosts: Callable[[str], Host], broker: Broker) -> None:
    a = hosts("alpha")
    a.write_config(home_assistant=True)
    a.hook("permission_request", "PermissionRequest-Bash")
    assert a.lookout("bridge", "--once").returncode == 0
    held = retained(broker)
    needs_you = json.loads(held["homeassistant/binary_sensor/lookout_alpha/needs_you/config"])
    attention = json.loads(held["homeassistant/sensor/lookout_alpha/attention/config"])
    assert needs_you["state_topic"] == attention["state_topic"] == "lookout/alpha/summary"
    state = json.loads(held["lookout/alpha/summary"])
    assert (state["needs_you"], state["attention"]) == (True, 1)
    assert state["most_urgent"]["session_id"] == SID
    assert state["most_urgent"]["text"] == "demo: permission"
    # Switched off: the entities are removed from Home Assistant (empty retained configs).
    a.write_config(home_assistant=False)
    assert a.lookout("bridge", "--once").returncode == 0
    held = retained(broker)
    assert not [t for t in held if t.startswith("homeassistant/")]
    assert "lookout/alpha/summary" in held  # the summary stays: Stream Deck keys read it too


def test_changes_are_followed_across_rotation(hosts: Callable[[str], Host], broker: Broker) -> None:
    a, b = hosts("alpha"), hosts("beta")
    a.bridge()
    small = {"LOOKOUT_ROTATE_BYTES": "2000"}  # a rotation every few records
    for i in range(12):
        a.hook("session_start", dict(payload("SessionStart-startup"), session_id=f"r{i}"), **small)
    a.hook("permission_request", dict(payload("PermissionRequest-Bash"), session_id="r5"), **small)
    assert (a.state / "events.jsonl.2").exists()
    fleet = wait_for(lambda: (f := b.fleet()) and len(sessions(f, "alpha")) == 12 and f)
    assert sessions(fleet, "alpha")["r5"]["status"] == "attention"


def test_a_hostile_session_id_stays_one_topic_level(
    hosts: Callable[[str], Host], broker: Broker
) -> None:
    a, b = hosts("alpha"), hosts("beta")
    evil = "x/../+/#/\x1b]52;c;AA==\x07"
    a.hook("session_start", dict(payload("SessionStart-startup"), session_id=evil))
    assert a.lookout("bridge", "--once").returncode == 0
    [topic] = [t for t in retained(broker) if "/sessions/" in t]
    assert topic == "lookout/alpha/sessions/x%2f%2e%2e%2f%2b%2f%23%2f%1b%5d52%3bc%3bAA%3d%3d%07"
    out = b.lookout("status", "--fleet", "--json")
    [s] = json.loads(out.stdout)["sessions"]
    assert s["session_id"] == "x/../+/#/ ]52;c;AA== " and "\\u001b" not in out.stdout


def test_an_agent_process_gone_shows_ended_without_an_event(
    hosts: Callable[[str], Host], broker: Broker
) -> None:
    # No hook fires when an agent is killed: the bridge re-presents every session every few
    # seconds, so the process check of `lookout status` reaches the other hosts too.
    import subprocess
    import sys

    a, b = hosts("alpha"), hosts("beta")
    agent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        a.hook("permission_request", "PermissionRequest-Bash", CLAUDE_PID=str(agent.pid))
        a.bridge()
        wait_for(lambda: sessions(b.fleet(), "alpha").get(SID, {}).get("status") == "attention")
        agent.kill()
        agent.wait()
        gone = wait_for(
            lambda: (s := sessions(b.fleet(), "alpha").get(SID)) and s["status"] == "ended" and s,
            timeout=15,
        )
        assert (gone["reason"], gone["alive"]) == ("process_gone", False)
    finally:
        agent.kill()
        agent.wait()
