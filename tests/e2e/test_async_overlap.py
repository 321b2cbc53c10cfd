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

from lookout.hookspec import EVENTS

from .harness import CHECKOUT, ClaudePane, Sandbox, describe, replay_hooks, wait_for
from .test_interactive import COMMAND

pytestmark = pytest.mark.e2e

ASYNC = frozenset(event for event, _, is_async in EVENTS if is_async)
ALL_EVENTS = [event for event, _, _ in EVENTS]


def capture_interactive(sandbox: Sandbox) -> list[dict[str, Any]]:
    """A permission episode (with its late Notifications), recorded by a plain recorder hook."""
    sandbox.prepare(settings={"hooks": {}})
    sandbox.record_payloads(*ALL_EVENTS)
    sandbox.trust_project(idle_ms=2000)
    names = lambda: [p["hook_event_name"] for p in sandbox.payloads()]  # noqa: E731
    with ClaudePane(sandbox, "--permission-mode", "manual") as pane:
        pane.wait_screen("\u276f")
        time.sleep(0.8)
        pane.type(f"[[bash: {COMMAND}]]")
        pane.wait_screen("Do you want to proceed?")
        wait_for(lambda: "Notification" in names(), 12, "the permission_prompt Notification")
        pane.keys("Enter")
        wait_for(lambda: names().count("Notification") == 2, 12, "the idle_prompt Notification")
        pane.type("/exit")
        wait_for(lambda: "SessionEnd" in names(), 12, "SessionEnd")
    return sandbox.payloads()


def capture_print_subagent(sandbox: Sandbox) -> list[dict[str, Any]]:
    sandbox.prepare(settings={"hooks": {}})
    sandbox.record_payloads(*ALL_EVENTS)
    run = sandbox.claude_print("[[agent: say hi please]]")
    assert run.returncode == 0, run.stderr
    wait_for(lambda: sandbox.payloads("SessionEnd"), 10, "SessionEnd")
    return sandbox.payloads()


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
        [sys.executable, "-m", "lookout", "status", "--json", "--all"],
        cwd=CHECKOUT,
        env={**os.environ, "LOOKOUT_STATE_DIR": str(state)},
        capture_output=True,
        text=True,
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
    capture = (
        capture_interactive if scenario == "interactive-permission" else (capture_print_subagent)
    )
    payloads = capture(sandbox)
    fired = [p["hook_event_name"] for p in payloads]
    assert set(fired) & ASYNC, f"no async event in {fired}: nothing overlaps"

    in_order = replay_hooks(payloads, tmp_path / "in-order" / "state")
    assert not any(r.get("late") for r in in_order), describe(in_order)
    expected = visible(in_order)
    for lag in (1, 2, len(payloads)):
        overlapped = replay_hooks(payloads, tmp_path / f"lag-{lag}" / "state", lag, ASYNC)
        shown = visible(overlapped)
        why = f"lag {lag}\nin order:\n{describe(in_order)}\noverlapped:\n{describe(overlapped)}"
        # A late record may make a passing state unseen (it was already superseded when it
        # landed), but no status the in-order run never had, no reordering, no lost attention.
        assert is_subsequence(shown, expected), why
        assert [x for x in expected if x[0] == "attention"] == [
            x for x in shown if x[0] == "attention"
        ], why
        assert notified(overlapped) == notified(in_order), why
        assert snapshot(tmp_path / f"lag-{lag}" / "state") == snapshot(
            tmp_path / "in-order" / "state"
        ), why


def is_subsequence(short: list[Any], long: list[Any]) -> bool:
    rest = iter(long)
    return all(item in rest for item in short)


def notified(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(kind for row in rows for kind in row.get("notify") or [])
