"""Hooks registered `async` overlap the ones after them: the status a user sees must not depend on
it. Payloads come from the real client; they are replayed through the real hook scripts, once in
order and once with every async event's hook started in its turn but finishing later."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lookout.hookspec import EVENTS, script_for

from .harness import CHECKOUT, ClaudePane, Sandbox, describe
from .test_interactive import COMMAND

pytestmark = pytest.mark.e2e

ASYNC = {event for event, _, is_async in EVENTS if is_async}
ALL_EVENTS = [event for event, _, _ in EVENTS]


def capture_interactive(sandbox: Sandbox) -> list[dict[str, Any]]:
    """A permission episode (with its late Notifications), recorded by a plain recorder hook."""
    sandbox.prepare(settings={"hooks": {}})
    sandbox.record_payloads(*ALL_EVENTS)
    sandbox.trust_project(idle_ms=2000)
    names = lambda: [p["hook_event_name"] for p in all_payloads(sandbox)]  # noqa: E731
    with ClaudePane(sandbox, "--permission-mode", "manual") as pane:
        pane.wait_screen("\u276f")
        time.sleep(0.8)
        pane.type(f"[[bash: {COMMAND}]]")
        pane.wait_screen("Do you want to proceed?")
        wait_until(lambda: "Notification" in names(), 12)
        pane.keys("Enter")
        wait_until(lambda: names().count("Notification") == 2, 12)
        pane.type("/exit")
        wait_until(lambda: "SessionEnd" in names(), 12)
    return all_payloads(sandbox)


def capture_print_subagent(sandbox: Sandbox) -> list[dict[str, Any]]:
    sandbox.prepare(settings={"hooks": {}})
    sandbox.record_payloads(*ALL_EVENTS)
    run = sandbox.claude_print("[[agent: say hi please]]")
    assert run.returncode == 0, run.stderr
    wait_until(lambda: "SessionEnd" in [p["hook_event_name"] for p in all_payloads(sandbox)], 10)
    return all_payloads(sandbox)


def all_payloads(sandbox: Sandbox) -> list[dict[str, Any]]:
    path = sandbox.root / "payloads.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def wait_until(probe: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not probe():
        assert time.monotonic() < deadline, "timed out capturing payloads"
        time.sleep(0.05)


def replay(payloads: list[dict[str, Any]], state: Path, lag: int) -> list[dict[str, Any]]:
    """Run each payload through hooks/<script> as the client would. An async event's hook is
    started in its turn (its start time is taken then) but gets its stdin, and so finishes,
    only after the next `lag` hooks have finished."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(state.parent),
        "LOOKOUT_STATE_DIR": str(state),
        "LOOKOUT_CONFIG": str(state.parent / "empty.toml"),
        "CLAUDE_PID": str(os.getpid()),
    }
    state.parent.mkdir(parents=True)
    (state.parent / "empty.toml").write_text("")
    pending: list[tuple[int, subprocess.Popen[bytes], bytes]] = []

    def finish(proc: subprocess.Popen[bytes], data: bytes) -> None:
        out, _ = proc.communicate(data, timeout=20)
        assert (proc.returncode, out) == (0, b"")

    for i, payload in enumerate(payloads):
        event = payload["hook_event_name"]
        argv = [sys.executable, "-I", "-S", str(CHECKOUT / "hooks" / script_for(event))]
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        data = json.dumps(payload).encode() + b"\n"
        if lag and event in ASYNC:
            pending.append((i + lag, proc, data))
            time.sleep(0.25)  # the hook has taken its start time before the next one starts
        else:
            finish(proc, data)
        for item in [p for p in pending if p[0] <= i]:
            pending.remove(item)
            finish(item[1], item[2])
    for _, proc, data in pending:
        finish(proc, data)
    lines = (state / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def visible(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The statuses a user could have seen, in the order the hooks started, repeats collapsed."""
    seen: list[tuple[Any, ...]] = []
    for row in sorted(rows, key=lambda r: (r["ts"], r["seq"])):
        if row.get("duplicate") or row.get("late"):
            continue
        shown = (row["status"], row.get("reason"))
        if not seen or seen[-1] != shown:
            seen.append(shown)
    return seen


def snapshot(state: Path) -> list[tuple[Any, ...]]:
    done = subprocess.run(
        [sys.executable, "-m", "lookout", "status", "--json", "--all"], cwd=CHECKOUT,
        env={**os.environ, "LOOKOUT_STATE_DIR": str(state)}, capture_output=True, text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return [
        (s["status"], s["reason"], tuple((a["agent_id"], a["status"]) for a in s["agents"]))
        for s in json.loads(done.stdout)["sessions"]
    ]


@pytest.mark.parametrize("scenario", ["interactive-permission", "print-subagent"])
def test_async_hooks_finishing_late_change_no_status(
    sandbox: Sandbox, tmp_path: Path, scenario: str
) -> None:
    capture = capture_interactive if scenario == "interactive-permission" else (
        capture_print_subagent)
    payloads = capture(sandbox)
    fired = [p["hook_event_name"] for p in payloads]
    assert set(fired) & ASYNC, f"no async event in {fired}: nothing overlaps"

    in_order = replay(payloads, tmp_path / "in-order" / "state", lag=0)
    assert not any(r.get("late") for r in in_order), describe(in_order)
    expected = visible(in_order)
    for lag in (1, 2, len(payloads)):
        overlapped = replay(payloads, tmp_path / f"lag-{lag}" / "state", lag=lag)
        shown = visible(overlapped)
        why = f"lag {lag}\nin order:\n{describe(in_order)}\noverlapped:\n{describe(overlapped)}"
        # A late record may make a passing state unseen (it was already superseded when it
        # landed), but no status the in-order run never had, no reordering, no lost attention.
        assert is_subsequence(shown, expected), why
        assert [x for x in expected if x[0] == "attention"] == [
            x for x in shown if x[0] == "attention"], why
        assert notified(overlapped) == notified(in_order), why
        assert snapshot(tmp_path / f"lag-{lag}" / "state") == snapshot(
            tmp_path / "in-order" / "state"), why


def is_subsequence(short: list[Any], long: list[Any]) -> bool:
    rest = iter(long)
    return all(item in rest for item in short)


def notified(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(kind for row in rows for kind in row.get("notify") or [])
