"""The terminal renderings of the read model: the status table, the status-bar line, records."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from lookout.commands import view
from lookout.sessions import present
from tests.test_sessions import NOW, snapshot


def test_the_id_column_tells_two_sessions_of_one_project_apart() -> None:
    sessions = [
        present(snapshot(sid, "idle"), NOW, 3600)
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
    sessions = [present(parent, NOW, 3600)]
    plain = view.table(sessions, NOW, colour=False)
    lines = plain.splitlines()
    assert lines[0].split() == ["SESSION", "ID", "STATUS", "DETAIL", "AGE", "SUMMARY"]
    assert "attention permission" in lines[1] and "curl example.test" in lines[1]
    assert lines[2].lstrip().startswith("└ Explore")
    assert "\033[" not in plain
    assert "\033[1;31m" in view.table(sessions, NOW, colour=True)
    assert view.table([], NOW, colour=False) == "no sessions"


def test_status_line() -> None:
    sessions = [
        present(snapshot(*a), NOW, 3600)
        for a in (("a", "attention"), ("b", "working"), ("c", "working"), ("d", "idle"))
    ]
    sessions[0]["reason"] = "question"
    assert view.line(sessions) == "! demo:question · 2 working · 1 idle"
    assert view.line([]) == "no sessions"


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


def test_status_line_cannot_restyle_the_tmux_bar(tmp_path: Any) -> None:
    # N9 (security-2.md): tmux expands formats and styles in #() output; a directory name must
    # come out literally (`#` doubled, as `pick` does for menu labels).
    from tests.helpers import ROOT

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
