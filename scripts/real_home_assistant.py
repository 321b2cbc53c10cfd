"""Issue 25, checked once by hand against a real Home Assistant: pressing the MQTT-discovered
"Allow" button of a pending lookout request through Home Assistant's REST API answers exactly that
request; the buttons disappear once it ends; a second press changes nothing.

Usage: .venv/bin/python scripts/real_home_assistant.py --ha-python /path/to/ha-venv/bin/python
(Home Assistant in a venv of its own, never one of lookout's dependencies; its mqtt integration's
paho-mqtt installed there too). Not run by the tests or CI. Loopback only: a real Mosquitto with
the documented ACL (tests/fixtures/mosquitto/acl), `hass` on 127.0.0.1, a real `lookout bridge`
and the real deciding hook (hooks/remote_answer.py) fed a captured PermissionRequest payload,
each with HOME, XDG dirs and lookout's state in one temporary directory. Exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

CHECKOUT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(CHECKOUT))

from lookout.fleet import answers  # noqa: E402
from lookout.remote import requests  # noqa: E402
from tests.helpers import payload  # noqa: E402
from tests.mosquitto import Broker  # noqa: E402

HOST = "hacheck"  # lookout's [fleet] host, and its broker user (the ACL's %u)
EVIL = "hostile"  # another fleet host, for issue 31's checks
USERS = {HOST: "pw-hacheck-not-real", "ha": "pw-ha-not-real", EVIL: "pw-hostile-not-real"}
ACL = CHECKOUT / "tests" / "fixtures" / "mosquitto" / "acl"
LOGIN_VAR = "LOOKOUT_HA_CHECK_MQTT_PASSWORD"
COMMAND = "touch made-by-home-assistant"
ICONS = {"mdi:check-circle": "allow", "mdi:close-circle": "deny"}  # as lookout.fleet.answers
HA_USER, HA_PASSWORD = "lookout", "lookout-check-not-real"

T = TypeVar("T")


class Failure(Exception):
    pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(probe: Callable[[], T | None], timeout: float, what: str, step: float = 0.05) -> T:
    deadline = time.monotonic() + timeout
    while True:
        got = probe()
        if got is not None:
            return got
        if time.monotonic() >= deadline:
            raise Failure(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(step)


class HomeAssistant:
    """`hass -c DIR` on 127.0.0.1 and its REST API."""

    def __init__(self, python: str, root: Path) -> None:
        self.python = python
        self.dir = root / "ha-config"
        self.dir.mkdir()
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.token: str | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.out = root / "hass.out"
        self.log = self.dir / "home-assistant.log"
        # Only what this check needs: no default_config (its integrations reach out to the
        # network). onboarding brings auth, person and analytics; config has the flow API.
        (self.dir / "configuration.yaml").write_text(
            "homeassistant:\n"
            "  name: lookout check\n"
            "  latitude: 0\n"
            "  longitude: 0\n"
            "  elevation: 0\n"
            "  unit_system: metric\n"
            "  time_zone: UTC\n"
            "  currency: EUR\n"
            "  country: DE\n"
            "http:\n"
            "  server_host: 127.0.0.1\n"
            f"  server_port: {self.port}\n"
            "api:\n"
            "config:\n"
            "onboarding:\n"
            "logger:\n"
            "  default: warning\n"
            "  logs:\n"
            "    homeassistant.components.mqtt: info\n"
        )

    def version(self) -> str:
        code = "from homeassistant.const import __version__; print(__version__)"
        return subprocess.run(
            [self.python, "-c", code], capture_output=True, text=True, check=True
        ).stdout.strip()

    def package_version(self, name: str) -> str:
        code = f"import importlib.metadata as m; print(m.version({name!r}))"
        done = subprocess.run([self.python, "-c", code], capture_output=True, text=True)
        return done.stdout.strip() or "not installed"

    def start(self, env: dict[str, str]) -> float:
        started = time.monotonic()
        with open(self.out, "ab") as out:
            self.proc = subprocess.Popen(
                [self.python, "-m", "homeassistant", "-c", str(self.dir)],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )

        def up() -> bool | None:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise Failure(f"hass exited with {self.proc.returncode}; see {self.out}")
            try:
                status, _ = self.call("GET", "/api/onboarding")
            except OSError:
                return None
            return True if status == 200 else None

        wait_for(up, 600, "Home Assistant to answer on " + self.base, step=0.5)
        return time.monotonic() - started

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def call(
        self,
        method: str,
        path: str,
        body: object = None,
        form: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = {}
        data: str | None = None
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if form is not None:
            data = urllib.parse.urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None:
            data = json.dumps(body)
            headers["Content-Type"] = "application/json"
        try:
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            raw = response.read()
        finally:
            conn.close()
        try:
            return response.status, json.loads(raw)
        except ValueError:
            return response.status, raw.decode("utf-8", "replace")

    def must(self, method: str, path: str, body: object = None, **kw: Any) -> Any:
        status, got = self.call(method, path, body, **kw)
        if status != 200:
            raise Failure(f"{method} {path}: HTTP {status}: {got}")
        return got

    def onboard(self) -> None:
        """The owner account as the onboarding page makes it, then its access token."""
        client_id = self.base + "/"
        got = self.must(
            "POST",
            "/api/onboarding/users",
            {
                "client_id": client_id,
                "name": "lookout check",
                "username": HA_USER,
                "password": HA_PASSWORD,
                "language": "en",
            },
        )
        token = self.must(
            "POST",
            "/auth/token",
            form={
                "grant_type": "authorization_code",
                "code": got["auth_code"],
                "client_id": client_id,
            },
        )
        self.token = str(token["access_token"])

    def add_mqtt(self, broker: Broker) -> dict[str, Any]:
        """The MQTT integration through its config flow, as Settings > Devices & services does,
        logged in as the broker's `ha` user."""
        flow = self.must(
            "POST",
            "/api/config/config_entries/flow",
            {"handler": "mqtt", "show_advanced_options": False},
        )
        if flow.get("type") != "form" or flow.get("step_id") != "broker":
            raise Failure(f"the mqtt config flow opened with {flow}")
        done = self.must(
            "POST",
            f"/api/config/config_entries/flow/{flow['flow_id']}",
            {"broker": "127.0.0.1", "port": broker.port, "username": "ha", "password": USERS["ha"]},
        )
        if done.get("type") != "create_entry":
            raise Failure(f"the mqtt config flow ended with {done}")
        return dict(done.get("result") or {})

    def states(self) -> list[dict[str, Any]]:
        got = self.must("GET", "/api/states")
        return list(got)

    def state(self, entity_id: str) -> dict[str, Any] | None:
        status, got = self.call("GET", f"/api/states/{entity_id}")
        if status == 404:
            return None
        if status != 200:
            raise Failure(f"GET /api/states/{entity_id}: HTTP {status}: {got}")
        return dict(got)

    def mqtt_problems(self) -> list[str]:
        try:
            lines = self.log.read_text(errors="replace").splitlines()
        except OSError:
            return []
        return [
            x
            for x in lines
            if re.search(r"\b(WARNING|ERROR|CRITICAL)\b", x) and "mqtt" in x.lower()
        ]


def lookout_env(root: Path) -> dict[str, str]:
    """The caller's environment with HOME, XDG dirs, lookout's state and config and Claude's
    config dir in `root` (as tests/conftest.py isolates every test), no session variables."""
    home = root / "home"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LOOKOUT_", "CLAUDE_", "PYTHON")) and k not in ("TMUX", "TMUX_PANE")
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(root / "cache"),
        LOOKOUT_STATE_DIR=str(root / "state"),
        LOOKOUT_CONFIG=str(home / ".config" / "lookout" / "config.toml"),
        LOOKOUT_HOME=str(home / ".local" / "share" / "lookout"),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
    )
    for d in ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        Path(env[d]).mkdir(parents=True, exist_ok=True)
    return env


def write_config(env: dict[str, str], broker: Broker) -> None:
    path = Path(env["LOOKOUT_CONFIG"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "[remote]\nenabled = true\nwait_s = 300\n\n"
        f'[fleet]\nmqtt = "{broker.url}"\nusername = "{HOST}"\n'
        f'password_env = "{LOGIN_VAR}"\nhost = "{HOST}"\n'
        "home_assistant = true\nanswers = true\n"
    )


class Hook:
    """The deciding hook as the client runs it (payload on stdin, waits for an answer); the
    moment it exits is taken by a thread, so timings do not depend on how often we look."""

    def __init__(self, env: dict[str, str], data: dict[str, Any]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", str(CHECKOUT / "hooks" / "remote_answer.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(data).encode())
        self.proc.stdin.close()
        self.proc.stdin = None
        self.exited: float | None = None
        self.out = b""
        self.err = b""
        self.thread = threading.Thread(target=self._wait, daemon=True)
        self.thread.start()

    def _wait(self) -> None:
        self.out, self.err = self.proc.communicate()
        self.exited = time.monotonic()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.thread.join(10)


def record_hook(env: dict[str, str], script: str, data: dict[str, Any]) -> None:
    """A recording hook, as the client runs it before the deciding one."""
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(CHECKOUT / "hooks" / script)],
        input=json.dumps(data).encode(),
        capture_output=True,
        env=env,
        timeout=30,
    )
    if (done.returncode, done.stdout, done.stderr) != (0, b"", b""):
        raise Failure(f"hooks/{script}: {done}")


def events(state_dir: Path) -> list[dict[str, Any]]:
    path = state_dir / "events.jsonl"
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def mosquitto_version(broker: Broker) -> str:
    done = subprocess.run([broker.binary, "-h"], capture_output=True, text=True)
    first = (done.stdout or done.stderr).splitlines()[:1]
    return first[0].removeprefix("mosquitto version ").strip() if first else "?"


def lookout_commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(CHECKOUT), *args], capture_output=True, text=True
        ).stdout.strip()

    dirty = "-dirty" if git("status", "--porcelain") else ""
    return git("rev-parse", "--short", "HEAD") + dirty


def press_replay(broker: Broker, topic: str, body: str, user: str = "ha") -> None:
    """The press HA's button published, sent again on the broker as the `ha` user (or another
    message as another user)."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"lookout-ha-check-{user}")
    client.username_pw_set(user, USERS[user])
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    try:
        client.publish(topic, body, qos=1, retain=user != "ha").wait_for_publish(10)
    finally:
        client.disconnect()
        client.loop_stop()


def rename_device(broker: Broker, ha: HomeAssistant, sensor_id: str) -> str:
    """Issue 31: why request buttons have no device. A config another host publishes in its own
    discovery subtree, naming this host's device, renames that device, and Home Assistant puts a
    device's name in front of its entities' names. Returns the sensor's new friendly name."""
    lure = {
        "name": "Allow",
        "unique_id": f"lookout_{EVIL}_lure",
        "command_topic": f"lookout/{EVIL}/press/lure",
        "device": {"identifiers": [f"lookout_{HOST}"], "name": "RENAMED npm test OK"},
    }
    press_replay(broker, f"homeassistant/button/lookout_{EVIL}/lure/config", json.dumps(lure), EVIL)

    def renamed() -> str | None:
        name = str((ha.state(sensor_id) or {}).get("attributes", {}).get("friendly_name"))
        return name if name.startswith("RENAMED") else None

    return wait_for(renamed, 30, "the device to be renamed", 0.2)


def automation_templates(ha: HomeAssistant) -> str:
    """The phone automation's templates (docs/remote.md), rendered by Home Assistant's own
    template engine for a request topic of another host: the press goes to that host."""
    docs = (CHECKOUT / "docs" / "remote.md").read_text()
    topic = f"lookout/{EVIL}/requests/abc123"
    want = {"host": EVIL, "press_topic": f"lookout/{EVIL}/press/abc123"}
    got = {}
    for name in want:
        found = re.search(rf'^ +{name}: "(.*)"$', docs, re.M)
        if found is None:
            raise Failure(f"docs/remote.md has no `{name}:` template")
        template = "{% set trigger = {'topic': '" + topic + "'} %}" + found.group(1)
        got[name] = str(ha.must("POST", "/api/template", {"template": template}))
    if got != want:
        raise Failure(f"the automation's templates rendered {got}, not {want}")
    return f"automation templates rendered by HA for {topic}: {got}"


def buttons_of(ha: HomeAssistant, tok: str) -> dict[str, dict[str, Any]] | None:
    """decision -> state of the request's button entities, once both are there and available.
    They are told apart by the icon lookout gives each (the state carries no payload_press)."""
    found: dict[str, dict[str, Any]] = {}
    for s in ha.states():
        attrs = s.get("attributes") or {}
        if not s["entity_id"].startswith("button.") or attrs.get("token") != tok:
            continue
        decision = ICONS.get(str(attrs.get("icon")))
        if decision:
            found[decision] = s
    if set(found) != {"allow", "deny"}:
        return None
    if any(s["state"] == "unavailable" for s in found.values()):
        return None
    return found


def check(args: argparse.Namespace, root: Path, report: list[str]) -> None:
    procs: list[Callable[[], None]] = []
    env = lookout_env(root)
    (root / "broker").mkdir()
    broker = Broker(root / "broker", acl=ACL, users=USERS)
    ha = HomeAssistant(args.ha_python, root)
    report.append(f"Home Assistant {ha.version()} (paho-mqtt {ha.package_version('paho-mqtt')})")
    report.append(f"Mosquitto {mosquitto_version(broker)}")
    report.append(f"lookout {lookout_commit()} (Python {sys.version.split()[0]})")
    try:
        broker.start()
        procs.append(broker.kill)
        report.append(f"broker: {broker.url} (password file, tests/fixtures/mosquitto/acl)")

        ha_env = {**env, "HOME": str(root / "ha-home")}
        Path(ha_env["HOME"]).mkdir()
        procs.append(ha.stop)
        took = ha.start(ha_env)
        report.append(f"hass: up on {ha.base} in {took:.1f} s")
        ha.onboard()
        entry = ha.add_mqtt(broker)
        report.append(
            f"mqtt config entry: {entry.get('title')!r} as user ha (prefix homeassistant)"
        )

        write_config(env, broker)
        bridge_log = root / "bridge.log"
        with open(bridge_log, "ab") as log:
            bridge = subprocess.Popen(
                [sys.executable, "-m", "lookout", "bridge"],
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**env, LOGIN_VAR: USERS[HOST]},
                cwd=CHECKOUT,
            )

        def stop_bridge() -> None:
            if bridge.poll() is None:
                bridge.terminate()
                try:
                    bridge.wait(15)
                except subprocess.TimeoutExpired:
                    bridge.kill()
                    bridge.wait()

        procs.append(stop_bridge)

        def host_sensor() -> dict[str, Any] | None:
            for s in ha.states():
                name = (s.get("attributes") or {}).get("friendly_name")
                if (
                    s["entity_id"].startswith("binary_sensor.")
                    and name == f"lookout {HOST} Needs you"
                ):
                    return s if s["state"] != "unavailable" else None
            return None

        sensor = wait_for(host_sensor, 120, "the host's Needs you sensor in HA", step=0.5)
        report.append(f"host device: {sensor['entity_id']} = {sensor['state']}")
        renamed = rename_device(broker, ha, sensor["entity_id"])
        report.append(f"another host renamed device lookout_{HOST}: the sensor is now {renamed!r}")
        report.append(automation_templates(ha))

        # A pending request, made as the client makes it: the recording hook, then the
        # deciding hook, which waits for an answer.
        project = root / "demo"
        project.mkdir()
        data: dict[str, Any] = dict(payload("PermissionRequest-Bash"))
        data.update(
            session_id=str(uuid.uuid4()),
            cwd=str(project),
            transcript_path=str(root / "transcript.jsonl"),
            tool_input={"command": COMMAND, "description": "lookout's Home Assistant check"},
        )
        record_hook(env, "permission_request.py", data)
        hook = Hook(env, data)
        procs.append(hook.stop)
        state_dir = Path(env["LOOKOUT_STATE_DIR"])

        def pending() -> dict[str, Any] | None:
            recs = requests.load_all(str(state_dir))
            return next((r for r in recs if r["status"] == "pending"), None)

        rec = wait_for(pending, 20, "a pending request in the state dir")
        asked = time.monotonic()
        tok = answers.token(rec)
        buttons = wait_for(lambda: buttons_of(ha, tok), 60, "the request's buttons in HA", 0.1)
        report.append(f"request {rec['id']}: buttons in HA {time.monotonic() - asked:.2f} s after")
        for decision in ("allow", "deny"):
            s = buttons[decision]
            report.append(
                f"  {decision}: {s['entity_id']} ({s['attributes'].get('friendly_name')!r},"
                f" state {s['state']})"
            )
        for decision, label in (("allow", "Allow"), ("deny", "Deny")):
            name = buttons[decision]["attributes"].get("friendly_name")
            if not str(name).startswith(f"{label} {HOST} · demo · Bash: "):
                raise Failure(f"the {decision} button is named {name!r}: not lookout's own name")
        allow_id = buttons["allow"]["entity_id"]
        deny_id = buttons["deny"]["entity_id"]

        pressed = time.monotonic()
        ha.must("POST", "/api/services/button/press", {"entity_id": allow_id})
        wait_for(lambda: hook.exited, 30, "the deciding hook to exit")
        assert hook.exited is not None
        answered = hook.exited - pressed
        want = {
            "hookSpecificOutput": {
                "hookEventName": "PermissionRequest",
                "decision": {"behavior": "allow"},
            }
        }
        if (hook.proc.returncode, hook.err) != (0, b"") or json.loads(hook.out or b"null") != want:
            raise Failure(f"the hook ended with {hook.proc.returncode}, {hook.out!r}, {hook.err!r}")
        report.append(f"press Allow -> hook exit {answered:.2f} s; stdout {hook.out.decode()}")

        final = requests.load(str(state_dir), rec["id"]) or {}
        decided = [e for e in events(state_dir) if e.get("event") == "RemoteDecision"]
        if final.get("status") != requests.ALLOWED or len(decided) != 1:
            raise Failure(f"request {final.get('status')}, {len(decided)} RemoteDecision events")
        remote = decided[0]["remote"]
        if (remote["source"], remote["by"], remote["request_id"]) != (
            answers.SOURCE,
            answers.BY,
            rec["id"],
        ):
            raise Failure(f"RemoteDecision: {remote}")
        report.append(
            f"RemoteDecision: request {remote['request_id']} {remote['decision']} by"
            f" {remote['by']!r}, source {remote['source']!r}, via {remote['user_agent']!r}"
        )

        def both_gone() -> bool | None:
            return True if ha.state(allow_id) is None and ha.state(deny_id) is None else None

        wait_for(both_gone, 30, "the answered request's buttons to leave HA", 0.05)
        gone = time.monotonic()
        report.append(
            f"both button entities removed from HA {gone - hook.exited:.2f} s after the hook"
            f" exited ({gone - pressed:.2f} s after the press)"
        )

        # A second press: of the entity that is gone (HA), and the very MQTT press again.
        status, got = ha.call("POST", "/api/services/button/press", {"entity_id": allow_id})
        said = bridge_log.read_text().count("ignored")
        # The press topic as the phone automation builds it: from the request's topic (the
        # request message carries no press topic, docs/remote.md).
        press_replay(broker, f"lookout/{HOST}/{answers.PRESS}/{tok}", "allow")
        wait_for(
            lambda: True if bridge_log.read_text().count("ignored") > said else None,
            20,
            "the bridge to ignore the replayed press",
        )
        line = [x for x in bridge_log.read_text().splitlines() if "ignored" in x][-1]
        after = requests.load(str(state_dir), rec["id"]) or {}
        again = [e for e in events(state_dir) if e.get("event") == "RemoteDecision"]
        same = after.get("decision") == final.get("decision")
        if after.get("status") != requests.ALLOWED or not same or len(again) != 1:
            raise Failure(f"a second press changed something: {after}, {len(again)} decisions")
        report.append(
            f"second press of {allow_id}: HTTP {status} {json.dumps(got)}; MQTT replay:"
            f" {line.strip()!r}; request still {after['status']}, 1 RemoteDecision"
        )
        problems = ha.mqtt_problems()
        report.append(f"HA log: {len(problems)} mqtt warnings/errors")
        for x in problems[:10]:
            report.append("  " + x)
        if bridge.poll() is not None:
            raise Failure(f"the bridge exited with {bridge.returncode}: {bridge_log.read_text()}")
    finally:
        for stop in reversed(procs):
            try:
                stop()
            except Exception as exc:
                report.append(f"cleanup: {exc!r}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--ha-python", required=True, help="the python of a venv with HA")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="lookout-ha-check-"))
    report: list[str] = []
    ok = False
    try:
        check(args, root, report)
        ok = True
    except Failure as exc:
        report.append(f"FAIL: {exc}")
    except Exception as exc:
        report.append(f"FAIL: {exc!r}")
    finally:
        print("\n".join(report))
        if ok:
            print("ok: a press of the Allow button in Home Assistant answered that request")
        if args.keep or not ok:
            print(f"logs: {root} (home-assistant.log in ha-config/, bridge.log, hass.out)")
        else:
            import shutil

            shutil.rmtree(root, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
