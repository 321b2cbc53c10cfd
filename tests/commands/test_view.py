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


def episode(since_ms: int) -> dict[str, Any]:
    return {"key": f"k{since_ms}", "reason": "permission", "since_ms": since_ms}


def test_the_longest_waiting_attention_comes_first_whatever_happened_since(tmp_path: Any) -> None:
    from lookout import store

    # "late" started waiting first; a later duplicate Notification touched it most recently.
    rows = (
        ("early", NOW - 10_000, {"main": {"episode": episode(NOW - 20_000)}}),
        ("late", NOW - 1_000, {"main": {"episode": episode(NOW - 90_000)}}),
        ("child", NOW - 5_000, {"agents": {"a1": {"episode": episode(NOW - 60_000)}}}),
    )
    for sid, updated, extra in rows:
        with store.Locked(str(tmp_path)) as st:
            st.write_session(snapshot(sid, "attention", updated_ms=updated, **extra))
    shown = view.load_sessions(str(tmp_path), NOW)
    assert [s["session_id"] for s in shown] == ["late", "child", "early"]
    assert shown[0]["waiting_since"] == store.rfc3339(NOW - 90_000)
    assert "waiting_ms" not in view.public(shown[0])
    table = view.table(shown, NOW, colour=False).splitlines()
    ages = [line.split()[3] for line in table[1:] if not line.startswith(" ")]
    assert ages == ["1m", "1m", "20s"]  # AGE: how long each has waited


def test_the_id_column_tells_two_sessions_of_one_project_apart() -> None:
    sessions = [
        view.present(snapshot(sid, "idle"), NOW, 3600)
        for sid in ("0a1b2c3d-1111-2222", "9f8e7d6c-3333-4444")
    ]
    lines = view.table(sessions, NOW, colour=False).splitlines()
    assert [line.split()[:2] for line in lines[1:]] == [["demo", "0a1b2c3d"], ["demo", "9f8e7d6c"]]


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
    assert lines[0].split() == ["PROJECT", "ID", "STATUS", "DETAIL", "AGE", "SUMMARY"]
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


def test_status_line_cannot_restyle_the_tmux_bar(tmp_path: Any) -> None:
    # N9 (security-2.md): tmux expands formats and styles in #() output; a directory name must
    # come out literally (`#` doubled, as `pick` does for menu labels).
    from tests.conftest import ROOT

    cwd = f"{os.environ['HOME']}/#[fg=colour235,bg=colour235]hidden#{{host}}"
    payload = (
        '{"session_id":"tm1","hook_event_name":"Notification",'
        '"notification_type":"permission_prompt","message":"m","cwd":"' + cwd + '"}'
    )
    env = {**os.environ}
    hook = subprocess.run(
        [sys.executable, "-I", "-S", str(ROOT / "hooks" / "notification.py")],
        input=payload.encode(),
        capture_output=True,
        env=env,
        timeout=30,
    )
    assert hook.returncode == 0
    out = subprocess.run(
        [sys.executable, "-m", "lookout", "status", "--line"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=30,
    )
    assert out.stdout.strip() == "! ##[fg=colour235,bg=colour235]hidden##{host}:permission"
