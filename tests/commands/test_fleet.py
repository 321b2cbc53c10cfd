"""`lookout status --fleet` as people see it: the table with a HOST column, the status-bar line,
--watch updating live from the subscription, and the errors when there is no fleet."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from lookout.commands import fleet
from tests.fleet.conftest import Host, broker, hosts  # noqa: F401 - fixtures
from tests.helpers import ROOT, payload, wait_for
from tests.mosquitto import Broker
from tests.receivers import TmuxServer


def snap(*sessions: dict[str, object], on: list[dict[str, object]]) -> dict[str, object]:
    return {"hosts": on, "sessions": list(sessions)}


def row(host: str, project: str, status: str, reason: str | None = None) -> dict[str, object]:
    return {
        "host": host, "project": project, "status": status, "reason": reason, "agent": "claude",
        "session_id": f"{host}-{project}-0000", "detail": None, "summary": "", "updated_ms": 0,
        "stale": False, "agents": [],
    }  # fmt: skip


def test_table_has_a_host_column_and_names_the_hosts_not_online() -> None:
    text = fleet.table(
        snap(
            row("alpha", "api", "attention", "permission"),
            row("beta", "web", "working"),
            row("gamma", "db", "unknown", "host_offline"),
            on=[
                {"host": "alpha", "online": True},
                {"host": "beta", "online": True},
                {"host": "gamma", "online": False},
            ],
        ),
        now_ms=0,
        colour=False,
    )
    lines = text.splitlines()
    assert lines[0].split() == ["HOST", "SESSION", "ID", "STATUS", "DETAIL", "AGE", "SUMMARY"]
    assert lines[1].split()[:5] == ["alpha", "api", "alpha-ap", "attention", "permission"]
    assert lines[3].split()[:4] == ["gamma", "db", "gamma-db", "unknown"]
    assert lines[-1] == "not online: gamma (offline); their sessions are shown as unknown"


def test_line() -> None:
    text = fleet.line(
        snap(
            row("alpha", "api", "attention", "permission"),
            row("beta", "web", "attention", "question"),
            row("beta", "x", "working"),
            row("gamma", "db", "unknown", "host_offline"),
            on=[{"host": "gamma", "online": False}],
        )
    )
    assert (
        text == "! alpha/api:permission beta/web:question · 1 working · 1 unknown · 1 host offline"
    )


def test_without_a_fleet_config_it_says_how_to_add_one() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "lookout", "status", "--fleet"],
        capture_output=True, text=True, cwd=ROOT, timeout=30, check=False,
    )  # fmt: skip
    assert out.returncode == 1
    assert out.stderr.startswith("error: no config file")
    assert 'hint: add [fleet] with mqtt = "mqtt://BROKER:1883"' in out.stderr


def test_watch_updates_live_from_the_subscription(
    hosts: Callable[[str], Host],  # noqa: F811 - the fixture imported above
) -> None:
    a, b = hosts("alpha"), hosts("beta")
    a.bridge()
    a.hook("session_start", "SessionStart-startup")
    wait_for(lambda: b.fleet()["sessions"])
    watcher = subprocess.Popen(
        [sys.executable, "-m", "lookout", "status", "--fleet", "--watch"],
        stdout=subprocess.PIPE, text=True, env=b.env, cwd=ROOT,
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(
        target=lambda: [lines.put(x) for x in iter(watcher.stdout.readline, "")],  # type: ignore[union-attr]
        daemon=True,
    ).start()

    def seen(text: str, timeout: float) -> float:
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            try:
                if text in lines.get(timeout=0.05):
                    return time.monotonic() - start
            except queue.Empty:
                pass
        raise AssertionError(f"{text!r} not shown within {timeout} s")

    try:
        seen("lookout fleet · 1 host", 10)
        seen("alpha", 5)
        a.hook("permission_request", "PermissionRequest-Bash")
        # Within a second of the hook (the table also redraws every second for the ages).
        assert seen("attention permission", 3) < 1.0
    finally:
        watcher.terminate()
        watcher.wait(10)
        assert watcher.stdout is not None
        watcher.stdout.close()
    assert payload("PermissionRequest-Bash")["session_id"]


def test_watch_says_when_the_broker_is_gone_and_recovers(
    hosts: Callable[[str], Host],  # noqa: F811 - the fixture imported above
    broker: Broker,  # noqa: F811
) -> None:
    a, b = hosts("alpha"), hosts("beta")
    a.bridge()
    a.hook("session_start", "SessionStart-startup")
    wait_for(lambda: b.fleet()["sessions"])
    watcher = subprocess.Popen(
        [sys.executable, "-m", "lookout", "status", "--fleet", "--watch"],
        stdout=subprocess.PIPE, text=True, env=b.env, cwd=ROOT,
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(
        target=lambda: [lines.put(x) for x in iter(watcher.stdout.readline, "")],  # type: ignore[union-attr]
        daemon=True,
    ).start()

    def seen(text: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if text in lines.get(timeout=0.05):
                    return
            except queue.Empty:
                pass
        raise AssertionError(f"{text!r} not shown within {timeout} s")

    try:
        seen("alpha", 10)
        broker.kill()
        seen("cannot reach the broker", 10)
        broker.start()  # empty: the bridge republishes, the watcher re-subscribes
        seen("lookout fleet · 1 host", 40)
        seen("alpha", 10)
    finally:
        watcher.terminate()
        watcher.wait(10)
        assert watcher.stdout is not None
        watcher.stdout.close()


def test_clock_skew_reads_to_the_minute() -> None:
    # The measure is good to a second or two: 599 s is the 10 minutes it was set to.
    assert [fleet.skew(s) for s in (599, 601, -7, -32399, 3600 * 25)] == [
        "+10m", "+10m", "-7s", "-9h00m", "+25h00m",
    ]  # fmt: skip


def test_fleet_attention_quiet_is_an_exit_code_like_local_status(
    hosts: Callable[[str], Host],  # noqa: F811 - the fixture imported above
) -> None:
    a, viewer = hosts("alpha"), hosts("viewer")
    a.hook("session_start", "SessionStart-startup")
    assert a.lookout("bridge", "--once").returncode == 0
    quiet = viewer.lookout("status", "--fleet", "--attention", "-q")
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (1, "", "")  # nobody waits
    a.hook("permission_request", "PermissionRequest-Bash")
    assert a.lookout("bridge", "--once").returncode == 0
    quiet = viewer.lookout("status", "--fleet", "--attention", "-q")
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
    shown = viewer.lookout("status", "--fleet", "--attention", "--json")
    assert [s["status"] for s in json.loads(shown.stdout)["sessions"]] == ["attention"]
    project = str(payload("PermissionRequest-Bash")["cwd"]).rsplit("/", 1)[-1]
    mine = viewer.lookout("status", "--fleet", "--json", "--project", project)
    assert {s["project"] for s in json.loads(mine.stdout)["sessions"]} == {project}
    none = viewer.lookout("status", "--fleet", "--json", "--project", "nothing-*")
    assert json.loads(none.stdout)["sessions"] == []
    other = viewer.lookout("status", "--fleet", "--attention", "-q", "--project", "nothing-*")
    assert other.returncode == 1
    # A usage error is not "nobody waits": argparse's exit 2.
    assert viewer.lookout("status", "--fleet", "--json", "--line").returncode == 2


def test_fleet_json_has_the_tmux_key(
    hosts: Callable[[str], Host],  # noqa: F811 - the fixture imported above
    tmp_path: Path,
) -> None:
    a, viewer = hosts("alpha"), hosts("viewer")
    with TmuxServer() as server:
        pane = server.tmux("display-message", "-p", "#{pane_id}")
        socket = server.env["TMUX"].split(",")[0]
        a.hook("session_start", "SessionStart-startup", TMUX=server.env["TMUX"], TMUX_PANE=pane)
        a.hook("session_start", {**payload("SessionStart-startup"), "session_id": "no-tmux"})
        assert a.lookout("bridge", "--once").returncode == 0
        local = json.loads(a.lookout("status", "--json").stdout)["sessions"]
        sessions = {s["session_id"]: s for s in viewer.fleet()["sessions"]}
    here = {"socket": socket, "pane": pane, "session": "main", "window": 0}
    assert {s["session_id"]: s["tmux"] for s in local} == {
        payload("SessionStart-startup")["session_id"]: here,
        "no-tmux": None,
    }
    assert {sid: s["tmux"] for sid, s in sessions.items()} == {
        payload("SessionStart-startup")["session_id"]: here,
        "no-tmux": None,
    }


def test_line_doubles_hash_so_a_host_cannot_restyle_the_tmux_bar() -> None:
    # N9: a project name from another host reaches tmux's #() output too.
    text = fleet.line(snap(row("alpha", "#[fg=red]x#{host}", "attention", "permission"), on=[]))
    assert text == "! alpha/##[fg=red]x##{host}:permission"


def test_status_fleet_names_the_hosts_it_sees_without_sessions(
    hosts: Callable[[str], Host],  # noqa: F811 - the fixture imported above
) -> None:
    """Issue 42: a fleet without sessions printed only "no sessions", which read as "nothing
    is connected"."""
    a, b, viewer = hosts("alpha"), hosts("beta"), hosts("viewer")
    assert a.lookout("bridge", "--once").returncode == 0
    assert b.lookout("bridge", "--once").returncode == 0
    out = viewer.lookout("status", "--fleet")
    assert (out.returncode, out.stdout.strip()) == (0, "no sessions; 2 hosts online: alpha, beta")
    # With sessions elsewhere, a host without one is still named.
    a.hook("session_start", "SessionStart-startup")
    assert a.lookout("bridge", "--once").returncode == 0
    out = viewer.lookout("status", "--fleet")
    assert out.stdout.strip().endswith("also online, no sessions shown: beta"), out.stdout
