"""LocalSource: which sessions changed (without re-reading the others), and a session's records
paged backwards through events.jsonl and its rotated files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lookout import store
from lookout.web.source import LocalSource, session_events
from tests.web import seed


def test_changed_names_exactly_the_sessions_written(
    state_dir: Path, no_notifications: None
) -> None:
    seed.hook(state_dir, "UserPromptSubmit", "a", "/w/a", prompt="x")
    seed.hook(state_dir, "UserPromptSubmit", "b", "/w/b", prompt="y")
    source = LocalSource(str(state_dir))
    assert source.changed() == {"a", "b"}
    assert source.changed() == set()
    # Two writes within one tick of the file system clock: both seen (new inode each time).
    seed.hook(state_dir, "Stop", "a", "/w/a")
    assert source.changed() == {"a"}
    seed.hook(state_dir, "PreToolUse", "a", "/w/a", **seed.bash("ls", "u1"))
    assert source.changed() == {"a"}
    assert source.sessions()["a"]["detail"] == "Bash"
    os.unlink(state_dir / "sessions" / "b.json")  # lookout prune
    assert source.changed() == {"b"}
    assert set(source.sessions()) == {"a"}


def test_an_unreadable_snapshot_shows_nothing_rather_than_a_guess(
    state_dir: Path, no_notifications: None
) -> None:
    seed.hook(state_dir, "UserPromptSubmit", "a", "/w/a", prompt="x")
    source = LocalSource(str(state_dir))
    source.changed()
    (state_dir / "sessions" / "a.json").write_text('{"session_id": "a", "stat')
    assert source.changed() == {"a"}
    assert source.sessions() == {}


def test_no_state_dir_yet_is_no_sessions(tmp_path: Path) -> None:
    source = LocalSource(str(tmp_path / "nothing"))
    assert source.changed() == set() and source.sessions() == {}
    assert session_events(str(tmp_path / "nothing"), "a", None, 10) == ([], None)


def test_paging_crosses_rotated_files(
    state_dir: Path, no_notifications: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOKOUT_ROTATE_BYTES", "3000")  # a rotation every few records
    for n in range(40):
        seed.hook(state_dir, "PreToolUse", "r", "/w/r", 100 - n, **seed.bash(f"echo {n}", f"u{n}"))
        seed.hook(state_dir, "PreToolUse", "noise", "/w/n", 100 - n, **seed.bash("ls", f"v{n}"))
    assert (state_dir / f"events.jsonl.{store.DEFAULT_KEEP}").exists()
    found, cursor = [], None
    while True:
        page, cursor = session_events(str(state_dir), "r", cursor, 7)
        found += page
        if cursor is None:
            break
    # The store keeps 7 rotated files: the oldest records are gone, the rest come in order.
    seqs = [r["seq"] for r in found]
    assert seqs == list(range(40, 40 - len(seqs), -1)) and len(seqs) > 7
    assert {r["session_id"] for r in found} == {"r"}


def test_a_torn_last_line_and_foreign_lines_are_skipped(
    state_dir: Path, no_notifications: None
) -> None:
    for n in range(3):
        seed.hook(state_dir, "PreToolUse", "t", "/w/t", 10 - n, **seed.bash(f"echo {n}", f"u{n}"))
    with open(state_dir / "events.jsonl", "ab") as f:
        f.write(b'not json "session_id":"t"\n{"session_id":"t","seq":99,"ev')  # torn: killed
    page, cursor = session_events(str(state_dir), "t", None, 10)
    assert [r["seq"] for r in page] == [3, 2, 1] and cursor is None


def test_a_session_id_cannot_smuggle_a_pattern(state_dir: Path, no_notifications: None) -> None:
    seed.hook(state_dir, "Stop", 'a"b\\c', "/w/q")
    seed.hook(state_dir, "Stop", "a", "/w/q")
    page, _ = session_events(str(state_dir), 'a"b\\c', None, 10)
    assert [r["session_id"] for r in page] == ['a"b\\c']
    assert session_events(str(state_dir), "a", None, 10)[0][0]["session_id"] == "a"
