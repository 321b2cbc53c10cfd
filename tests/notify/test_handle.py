"""The hook's side: intents -> rules -> job file -> one spawn, cheaply and never blocking."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from lookout import spawn, store
from lookout.notify import handle
from lookout.shapes import Intent
from tests.helpers import ROOT, build_intent, write_config


def intent(kind: str = "permission", **fields: Any) -> Intent:
    return build_intent(
        kind,
        {"cwd": "/w/demo", "summary": "make", "episode": f"s1:{kind}:1", "reason": kind},
        fields,
    )


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    jobs: list[str] = []
    monkeypatch.setattr(spawn, "spawn", lambda state_dir, path, *dirs: jobs.append(path) or 1)
    return jobs


CONFIG = """
[channels.phone]
type = "ntfy"
url = "https://ntfy.example/topic"
token = "tk_secret"

[[rules]]
when = ["permission"]
channels = ["phone"]
cooldown_s = 300
"""


def test_matching_intent_writes_one_job_and_spawns_once(
    state_dir: Path, spawned: list[str]
) -> None:
    write_config(CONFIG)
    handle.handle([intent(), intent("done")], str(state_dir))
    (job_path,) = spawned
    assert Path(job_path).parent == state_dir / "outbox"
    job = json.loads(Path(job_path).read_text())
    assert [d["channels"] for d in job["deliveries"]] == [["phone"]]
    assert job["deliveries"][0]["texts"] == {"summary": ["demo · needs permission", "Bash: make"]}
    assert "tk_secret" not in Path(job_path).read_text()


def test_nothing_matching_spawns_nothing(state_dir: Path, spawned: list[str]) -> None:
    write_config(CONFIG)
    handle.handle([intent("done")], str(state_dir))
    handle.handle([], str(state_dir))
    assert spawned == []
    assert not (state_dir / "outbox").exists()


def test_cooldown_state_persists_between_hooks(state_dir: Path, spawned: list[str]) -> None:
    write_config(CONFIG)
    handle.handle([intent()], str(state_dir))
    handle.handle([intent(episode="s1:permission:2")], str(state_dir))
    assert len(spawned) == 1
    state = json.loads((state_dir / store.NOTIFY_STATE).read_text())
    assert list(state["episodes"]) == ["s1:permission:1"]


def test_broken_config_sends_nothing_and_logs_once(state_dir: Path, spawned: list[str]) -> None:
    write_config("[[rules]]\nwhen = 1\n")
    for _ in range(3):
        handle.handle([intent()], str(state_dir))
    assert spawned == []
    assert (state_dir / "errors.log").read_text().count("rules[0].when: expected") == 1


def test_default_config_alerts_the_desktop(state_dir: Path, spawned: list[str]) -> None:
    handle.handle([intent()], str(state_dir))
    job = json.loads(Path(spawned[0]).read_text())
    assert job["deliveries"][0]["channels"] == ["desktop"]


HOOK = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    from lookout import store
    from lookout.notify import handle
    start = time.perf_counter()
    handle.handle({intents!r}, {state!r})
    elapsed = time.perf_counter() - start
    heavy = [m for m in ("subprocess", "urllib", "tomllib", "json", "typing", "threading",
                         "filelock", "fnmatch") if m in sys.modules]
    print(repr((elapsed, heavy)))
""")


def run_hook(state_dir: Path, intents: list[dict[str, Any]]) -> tuple[float, list[str]]:
    """notify.handle in a process started like a hook: python -I -S."""
    code = HOOK.format(root=str(ROOT), intents=intents, state=str(state_dir))
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code],
        capture_output=True,
        text=True,
        timeout=30,
        env=os.environ.copy(),
        check=True,
    )
    elapsed, heavy = ast.literal_eval(out.stdout)
    return elapsed, heavy


def test_hot_path_imports_stay_light(state_dir: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "sleeper.pid"
    sleeper = tmp_path / "sleeper.py"
    sleeper.write_text(
        f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(30)\n"
    )
    write_config(
        f'[channels.slow]\ntype = "command"\n'
        f'argv = ["{sys.executable}", "{sleeper}"]\ntimeout_ms = 40000\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["slow"]\n'
    )
    _, heavy = run_hook(state_dir, [intent("idle")])  # parses the TOML once, sends nothing
    assert "tomllib" in heavy and set(heavy) <= {"tomllib", "typing"}  # tomllib needs typing
    elapsed, heavy = run_hook(state_dir, [intent()])  # cached config, dispatches
    try:
        assert heavy == []
        # a channel that hangs for 30 s changes nothing in the hook's own time
        assert elapsed < 0.5
        deadline = time.monotonic() + 10
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pid_file.exists(), "the detached sender never ran the channel"
    finally:
        for _ in range(100):
            if pid_file.exists() and pid_file.read_text():
                break
            time.sleep(0.05)
        if pid_file.exists() and pid_file.read_text():
            os.kill(int(pid_file.read_text()), 15)


def test_failed_spawn_leaves_no_job_behind(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(state_dir: str, path: str, *dirs: object) -> int:
        raise OSError("no processes left")

    monkeypatch.setattr(spawn, "spawn", fail)
    write_config(CONFIG)
    with pytest.raises(OSError):
        handle.handle([intent()], str(state_dir))
    assert list((state_dir / "outbox").iterdir()) == []


def test_a_withheld_notification_is_recorded_as_skipped(
    state_dir: Path, spawned: list[str]
) -> None:
    write_config(
        CONFIG + '\n[[rules]]\nwhen = ["done"]\nchannels = ["phone"]\nmin_duration_s = 60\n'
    )
    handle.handle([intent("done", duration_ms=5000, episode=None, ts_ms=1_800_000_000_000)],
                  str(state_dir))  # fmt: skip
    assert spawned == []
    (line,) = [json.loads(x) for x in (state_dir / store.DELIVERIES).read_text().splitlines()]
    assert line == {
        "ts": line["ts"],
        "session_id": "s1",
        "kind": "done",
        "channel": "phone",
        "result": "skipped",
        "detail": "rules[1]: the turn took 5s, under min_duration_s = 60",
        "rule": 1,
        "reason": "min_duration_s",
        "event_ts": "2027-01-15T08:00:00.000Z",
    }
    assert os.stat(state_dir / store.DELIVERIES).st_mode & 0o777 == 0o600


def test_a_permission_alert_links_to_its_remote_request(
    state_dir: Path, spawned: list[str]
) -> None:
    from lookout.hookspec import request_id

    write_config(
        """
[remote]
enabled = true
tools = ["Bash"]
url = "https://laptop.tail.ts.net:8787"

[channels.hook]
type = "command"
argv = ["true"]

[[rules]]
when = ["permission"]
channels = ["hook"]
"""
    )
    intent = {
        "kind": "permission",
        "session_id": "s1",
        "tool_name": "Bash",
        "cwd": "/tmp",
        "request": [None, "p1", "Bash:abc"],
        "episode": "s1:permission:Bash:abc:",
        "ts_ms": int(time.time() * 1000),
    }
    handle.handle([dict(intent), dict(intent, tool_name="Edit", session_id="s2")], str(state_dir))
    (job,) = [json.loads(Path(p).read_text()) for p in spawned]
    urls = [d["intent"].get("url") for d in job["deliveries"]]
    rid = request_id("s1", None, "p1", "Bash:abc")
    assert urls == [f"https://laptop.tail.ts.net:8787/#request={rid}", None]  # Edit: not remote
