"""lookout.ledger: episodes and idle gaps read back from what the real runner recorded, for the
cases the recorded week does not hold (torn lines, subagents, the window's edge)."""

from __future__ import annotations

import json
from pathlib import Path

from lookout import ledger, runner, store
from tests.fixtures.ledger import build


def test_a_torn_line_and_a_subagent_dialog(state_dir: Path) -> None:
    """A torn line is skipped; a subagent's dialog is the subagent's episode, closed by its own
    tool's completion while the main thread's stays open."""
    sid = "f0000000-0000-4000-8000-000000000001"
    base = build.BASE_MS

    def hook(t: float, name: str, **fields: object) -> None:
        data = {**build.payload("api1", name, dict(fields), 1), "session_id": sid}
        runner.record(json.dumps(data).encode(), name, base + int(t * 1000), str(state_dir), {})

    (state_dir).mkdir(parents=True, exist_ok=True)
    hook(0, "UserPromptSubmit", prompt="go")
    hook(1, "PermissionRequest", **build.bash("npm test"))
    hook(2, "PermissionRequest", agent_id="a1", agent_type="Explore", **build.bash("ls src"))
    with open(state_dir / "events.jsonl", "ab") as fh:
        fh.write(b'{"ts":"2026-11-16T09:00:02.500Z","seq":9,"notify":["resol')
    hook(
        5,
        "PostToolUse",
        agent_id="a1",
        agent_type="Explore",
        tool_use_id="t1",
        **build.bash("ls src"),
    )
    hook(9, "PostToolUse", tool_use_id="t2", **build.bash("npm test"))
    waits = ledger.read(str(state_dir)).waits
    assert [(w.tool, w.summary, w.wait_ms, w.answer) for w in waits] == [
        ("Bash", "ls src", 3000, "approved"),
        ("Bash", "npm test", 8000, "approved"),
    ]


def test_an_episode_open_when_the_window_starts_is_followed_not_counted(state_dir: Path) -> None:
    sid = "f0000000-0000-4000-8000-000000000002"
    base = build.BASE_MS

    def hook(t: float, name: str, **fields: object) -> None:
        data = {**build.payload("api1", name, dict(fields), 1), "session_id": sid}
        runner.record(json.dumps(data).encode(), name, base + int(t * 1000), str(state_dir), {})

    hook(0, "UserPromptSubmit", prompt="go")
    hook(1, "PermissionRequest", **build.bash("npm test"))  # before the window
    hook(10, "PermissionRequest", agent_id="a1", agent_type="Explore", **build.bash("ls src"))
    hook(15, "PostToolUse", tool_use_id="t2", **build.bash("npm test"))  # ends the main one
    hook(
        30,
        "PostToolUse",
        agent_id="a1",
        agent_type="Explore",
        tool_use_id="t1",
        **build.bash("ls src"),
    )
    waits = ledger.read(str(state_dir), base + 5000).waits
    assert [(w.summary, w.wait_ms) for w in waits] == [("ls src", 20000)]


def test_timestamps_are_the_stores_own() -> None:
    for ms in (0, 1_795_424_400_123, 1_795_478_399_999):
        assert ledger.ts_ms(store.rfc3339(ms).encode()) == ms
    assert ledger.ts_ms(b"2026-11-26 06:36:55.123Z") is None
    assert ledger.ts_ms(b"garbage") is None
