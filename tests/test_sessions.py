"""lookout.sessions, the read model: computed properties (alive, stale), ordering, `since`, and
events.jsonl's lines."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from lookout import sessions, store
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
    shown = sessions.present(snapshot("s", "working", pid=dead_pid()), NOW, 3600)
    assert (shown["status"], shown["reason"], shown["alive"]) == ("ended", "process_gone", False)


def test_a_live_process_keeps_its_status() -> None:
    shown = sessions.present(
        snapshot("s", "attention", reason="permission", pid=os.getpid()), NOW, 3600
    )
    assert (shown["status"], shown["reason"], shown["alive"]) == ("attention", "permission", True)
    assert sessions.present(snapshot("s"), NOW, 3600)["alive"] is None


def test_stale_after() -> None:
    old = snapshot("s", updated_ms=NOW - 9 * 3600 * 1000)
    assert sessions.present(old, NOW, 8 * 3600)["stale"] is True
    assert sessions.present(snapshot("t"), NOW, 8 * 3600)["stale"] is False


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
    order = [s["session_id"] for s in sessions.load_sessions(str(tmp_path), NOW)]
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
    shown = sessions.load_sessions(str(tmp_path), NOW)
    assert [s["session_id"] for s in shown] == ["late", "child", "early"]
    assert shown[0]["waiting_since"] == store.rfc3339(NOW - 90_000)
    assert "waiting_ms" not in sessions.public(shown[0])
    table = view.table(shown, NOW, colour=False).splitlines()
    ages = [line.split()[3] for line in table[1:] if not line.startswith(" ")]
    assert ages == ["1m", "1m", "20s"]  # AGE: how long each has waited


def test_parse_line_skips_torn_and_foreign_lines() -> None:
    assert sessions.parse_line(b'{"event":"Stop"}') == {"event": "Stop"}
    assert sessions.parse_line(b'{"event":"St') is None
    assert sessions.parse_line(b"\xff\xfe") is None
    assert sessions.parse_line(b"[1,2]") is None


def test_since_is_when_the_shown_status_began() -> None:
    episode = {"key": "k", "reason": "permission", "since_ms": NOW - 192_000}
    waiting = snapshot("s", "attention", main={"status": "attention", "episode": episode})
    assert sessions.present(waiting, NOW, 3600)["since"] == store.rfc3339(NOW - 192_000)
    # A subagent's dialog: the child's episode is the session's.
    child = {"status": "attention", "episode": {**episode, "since_ms": NOW - 5000}}
    nested = snapshot("s", "attention", main={"status": "working"}, agents={"a1": child})
    assert sessions.present(nested, NOW, 3600)["since"] == store.rfc3339(NOW - 5000)
    working = snapshot("s", "working", turn={"started_ms": NOW - 60_000})
    assert sessions.present(working, NOW, 3600)["since"] == store.rfc3339(NOW - 60_000)
    # Idle, ended, or an old snapshot without these keys: the last event.
    assert sessions.present(snapshot("s", "idle"), NOW, 3600)["since"] == store.rfc3339(NOW - 1000)
    assert sessions.present(snapshot("s", "attention"), NOW, 3600)["since"] == store.rfc3339(
        NOW - 1000
    )


# -- the short id (issue 22 item 17) -------------------------------------------------------------


def test_short_ids_are_unique_among_the_sessions_shown(tmp_path: Any) -> None:
    # OpenCode's ids share a time prefix: `ses_de99` three times named nothing.
    ids = ["ses_de99b7c6aa", "ses_de99b067bb", "ses_de99b7c1cc", "0f3a9c2e-1111", "0f3a9c2e"]
    short = sessions.short_ids(ids)
    assert short == {
        "ses_de99b7c6aa": "ses_de99b7c6",
        "ses_de99b067bb": "ses_de99b0",
        "ses_de99b7c1cc": "ses_de99b7c1",
        "0f3a9c2e-1111": "0f3a9c2e-",
        "0f3a9c2e": "0f3a9c2e",  # the start of another id: shown whole
    }
    assert sessions.short_ids(["79c8ec5c-aaaa", "1e6e5e1f-bbbb"]) == {
        "79c8ec5c-aaaa": "79c8ec5c",
        "1e6e5e1f-bbbb": "1e6e5e1f",
    }
    for sid in ids[:3]:
        with store.Locked(str(tmp_path)) as st:
            st.write_session(snapshot(sid, "idle", project="oc", agent="opencode"))
    rows = sessions.load_sessions(str(tmp_path), NOW)
    assert sorted(s["short_id"] for s in rows) == ["ses_de99b0", "ses_de99b7c1", "ses_de99b7c6"]
    shown = [line.split()[2] for line in view.table(rows, NOW, colour=False).splitlines()[1:]]
    assert sorted(shown) == ["ses_de99b0", "ses_de99b7c1", "ses_de99b7c6"]


# -- naming a session (issue 22 item 12) ---------------------------------------------------------


def rows_of(tmp_path: Any, *snaps: dict[str, Any]) -> list[sessions.Row]:
    for snap in snaps:
        with store.Locked(str(tmp_path)) as st:
            st.write_session(snap)
    return sessions.load_sessions(str(tmp_path), NOW)


def test_resolve_by_id_prefix_project_and_title(tmp_path: Any) -> None:
    rows = rows_of(
        tmp_path,
        snapshot("aaaa1111-x", project="api"),
        snapshot("bbbb2222-y", project="web", name="fix the login", name_source="user"),
        snapshot("cccc3333-z", "ended", project="web"),  # an earlier run of web
    )
    assert sessions.resolve(rows, "aaaa")["session_id"] == "aaaa1111-x"
    assert sessions.resolve(rows, "api")["session_id"] == "aaaa1111-x"
    assert sessions.resolve(rows, "fix the login")["session_id"] == "bbbb2222-y"
    # web's ended session does not make "web" ambiguous while another web session lives...
    assert sessions.resolve(rows, "web")["session_id"] == "bbbb2222-y"
    # ...but its id still names it.
    assert sessions.resolve(rows, "cccc")["session_id"] == "cccc3333-z"
    assert sessions.public(sessions.resolve(rows, "api"))["title"] == "api"  # else the project


def test_resolve_never_guesses(tmp_path: Any) -> None:
    import pytest

    from lookout.errors import LookoutError

    rows = rows_of(
        tmp_path,
        snapshot("ses_de99b7c6aa", "attention", project="api", updated_ms=NOW - 5000),
        snapshot("ses_de99b067bb", "idle", project="api"),
    )
    with pytest.raises(LookoutError) as err:
        sessions.resolve(rows, "api", "lookout explain")
    assert str(err.value) == (
        "'api' names 2 sessions: api (project) — ses_de99b7, attention;"
        " api (project) — ses_de99b0, idle"
    )
    assert err.value.hint == "name one by its id: lookout explain ses_de99b7"
    with pytest.raises(LookoutError, match="'ses_de99' names 2 sessions"):
        sessions.resolve(rows, "ses_de99")
    with pytest.raises(LookoutError, match=r"^no session 'nope' is recorded$"):
        sessions.resolve(rows, "nope")


def test_a_list_of_sessions_names_each_by_its_title_and_why_it_matched(tmp_path: Any) -> None:
    # newuser-3 defect 7: demo's session renamed `api` was listed as `demo`, and the session
    # titled `billing-fix` as `api`: the list did not show why either matched.
    import pytest

    from lookout.errors import LookoutError

    rows = rows_of(
        tmp_path,
        snapshot("210d8789-a", project="api", name="billing-fix", name_source="user"),
        snapshot("b3f79f9e-b", project="demo", name="api", name_source="user"),
        snapshot("c0ffee00-c", project="web", name="web-0f", name_source="derived"),
    )
    with pytest.raises(LookoutError) as err:
        sessions.resolve(rows, "api", "lookout ack")
    assert str(err.value) == (
        "'api' names 2 sessions: billing-fix (project api) — 210d8789, idle;"
        " api (title) — b3f79f9e, idle"
    )
    # The name a command takes: the title when it names that session alone, else the id.
    assert [sessions.handle(s, rows) for s in rows] == ["billing-fix", "b3f79f9e", "web-0f"]
    assert [sessions.label(s) for s in rows] == ["billing-fix", "api", "web-0f"]


# -- one order (issue 22 item 11) ----------------------------------------------------------------


def test_one_order_for_every_list() -> None:
    def row(status: str, updated: int, waiting: int | None = None) -> dict[str, Any]:
        return {"status": status, "updated_ms": updated, "waiting_ms": waiting}

    shown = [
        row("ended", 9),
        row("unknown", 8),  # the fleet's: a host that is not online
        row("attention", 7, waiting=3),
        row("idle", 6),
        row("attention", 5, waiting=1),  # waiting longest, though not the latest event
        row("working", 4),
    ]
    shown.sort(key=sessions.order)
    assert [(s["status"], s["updated_ms"]) for s in shown] == [
        ("attention", 5),
        ("attention", 7),
        ("working", 4),
        ("idle", 6),
        ("unknown", 8),
        ("ended", 9),
    ]
