"""The read side: computed properties (alive, stale), ordering and renderings."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from lookout import store
from lookout.commands import view

NOW = 1_800_000_000_000


def snapshot(sid: str, status: str = "idle", **extra: Any) -> dict[str, Any]:
    return {
        "session_id": sid,
        "status": status,
        "reason": None,
        "detail": None,
        "summary": "",
        "project": "demo",
        "updated_ms": NOW - 1000,
        "agents": {},
        **extra,
    }


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_dead_claude_process_shows_the_session_as_ended() -> None:
    shown = view.present(snapshot("s", "working", pid=dead_pid()), NOW, 3600)
    assert (shown["status"], shown["reason"], shown["alive"]) == ("ended", "process_gone", False)


def test_a_live_process_keeps_its_status() -> None:
    shown = view.present(
        snapshot("s", "attention", reason="permission", pid=os.getpid()), NOW, 3600
    )
    assert (shown["status"], shown["reason"], shown["alive"]) == ("attention", "permission", True)
    assert view.present(snapshot("s"), NOW, 3600)["alive"] is None


def test_stale_after() -> None:
    old = snapshot("s", updated_ms=NOW - 9 * 3600 * 1000)
    assert view.present(old, NOW, 8 * 3600)["stale"] is True
    assert view.present(snapshot("t"), NOW, 8 * 3600)["stale"] is False


def test_attention_first_then_most_recent(tmp_path: Any) -> None:
    from lookout import store

    for sid, status, age in (
        ("a", "idle", 1),
        ("b", "attention", 50),
        ("c", "working", 5),
        ("d", "working", 2),
    ):
        with store.Locked(str(tmp_path)) as st:
            st.write_session(snapshot(sid, status, updated_ms=NOW - age * 1000))
    (tmp_path / "sessions" / "garbage.json").write_text("{torn")
    order = [s["session_id"] for s in view.load_sessions(str(tmp_path), NOW)]
    assert order == ["b", "d", "c", "a"]


def test_table_nests_subagents_and_colours_only_when_asked() -> None:
    parent = snapshot(
        "s",
        "attention",
        reason="permission",
        detail="Explore: Bash",
        summary="curl example.test",
        agents={
            "a1": {
                "agent_type": "Explore",
                "status": "attention",
                "reason": "permission",
                "detail": "Bash",
            }
        },
    )
    sessions = [view.present(parent, NOW, 3600)]
    plain = view.table(sessions, NOW, colour=False)
    lines = plain.splitlines()
    assert lines[0].split() == ["PROJECT", "STATUS", "DETAIL", "AGE", "SUMMARY"]
    assert "attention permission" in lines[1] and "curl example.test" in lines[1]
    assert lines[2].lstrip().startswith("└ Explore")
    assert "\033[" not in plain
    assert "\033[1;31m" in view.table(sessions, NOW, colour=True)
    assert view.table([], NOW, colour=False) == "no sessions"


def test_status_line() -> None:
    sessions = [
        view.present(snapshot(*a), NOW, 3600)
        for a in (("a", "attention"), ("b", "working"), ("c", "working"), ("d", "idle"))
    ]
    sessions[0]["reason"] = "question"
    assert view.line(sessions) == "! demo:question · 2 working · 1 idle"
    assert view.line([]) == "no sessions"


def test_parse_line_skips_torn_and_foreign_lines() -> None:
    assert view.parse_line(b'{"event":"Stop"}') == {"event": "Stop"}
    assert view.parse_line(b'{"event":"St') is None
    assert view.parse_line(b"\xff\xfe") is None
    assert view.parse_line(b"[1,2]") is None


def test_format_record() -> None:
    text = view.format_record(
        {
            "ts": "2026-11-25T21:00:01.000Z",
            "session_id": "abcdef123456",
            "project": "demo",
            "event": "PermissionRequest",
            "status": "attention",
            "reason": "permission",
            "detail": "Bash",
            "summary": "make",
            "duplicate": True,
            "notify": ["permission"],
        }
    )
    assert text.startswith("21:00:01 demo")
    for part in (
        "abcdef12",
        "attention permission",
        "[Bash]",
        "(duplicate)",
        "— make",
        "→ permission",
    ):
        assert part in text


def test_age() -> None:
    assert view.age(90 * 60 * 1000) == "1h30m"
    assert view.age(4_000) == "4s"
    assert view.age(3 * 86400 * 1000) == "3d"


def test_since_is_when_the_shown_status_began() -> None:
    episode = {"key": "k", "reason": "permission", "since_ms": NOW - 192_000}
    waiting = snapshot("s", "attention", main={"status": "attention", "episode": episode})
    assert view.present(waiting, NOW, 3600)["since"] == store.rfc3339(NOW - 192_000)
    # A subagent's dialog: the child's episode is the session's.
    child = {"status": "attention", "episode": {**episode, "since_ms": NOW - 5000}}
    nested = snapshot("s", "attention", main={"status": "working"}, agents={"a1": child})
    assert view.present(nested, NOW, 3600)["since"] == store.rfc3339(NOW - 5000)
    working = snapshot("s", "working", turn={"started_ms": NOW - 60_000})
    assert view.present(working, NOW, 3600)["since"] == store.rfc3339(NOW - 60_000)
    # Idle, ended, or an old snapshot without these keys: the last event.
    assert view.present(snapshot("s", "idle"), NOW, 3600)["since"] == store.rfc3339(NOW - 1000)
    assert view.present(snapshot("s", "attention"), NOW, 3600)["since"] == store.rfc3339(NOW - 1000)
