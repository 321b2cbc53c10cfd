"""At most one sound per 2 s (lookout/sound/debounce.py), across the separate sender processes of
one state directory; a "needs you" sound within the window of a lesser one still plays, once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lookout import store
from lookout.sound.debounce import FILE, WINDOW_MS, Debounce
from tests.helpers import ROOT, wait_for
from tests.sound.standins import PACKS, players

T = 1_800_000_000_000


def may(state: Path, category: str, now: int, file: str = "sounds/a.wav") -> bool:
    """Whether `category` may play at `now`; if so, it is recorded as played."""
    with Debounce(str(state)) as memo:
        if memo.wait_ms(category, now):
            return False
        memo.played(category, file, now)
        return True


def test_one_sound_per_window(state_dir: Path) -> None:
    assert may(state_dir, "task.complete", T)
    assert not may(state_dir, "task.complete", T + 1)
    assert not may(state_dir, "session.start", T + WINDOW_MS - 1)
    assert may(state_dir, "task.complete", T + WINDOW_MS)
    assert json.loads((state_dir / FILE).read_text()) == {
        "ts_ms": T + WINDOW_MS,
        "category": "task.complete",
        "last": {"task.complete": "sounds/a.wav"},
    }


def test_needs_you_breaks_into_a_lesser_sounds_window_once(state_dir: Path) -> None:
    assert may(state_dir, "task.complete", T)
    assert may(state_dir, "input.required", T + 500)  # a question right after a finished turn
    assert not may(state_dir, "task.error", T + 900)  # but not a third sound in the window
    assert not may(state_dir, "task.complete", T + 2400)  # the window runs from the question
    assert may(state_dir, "task.complete", T + 2500)


def test_a_clock_that_went_back_never_silences_for_long(state_dir: Path) -> None:
    assert may(state_dir, "task.complete", T)
    assert may(state_dir, "task.complete", T - 3_600_000)


def test_the_last_file_of_each_category_is_remembered(state_dir: Path) -> None:
    assert may(state_dir, "task.complete", T, "sounds/done-1.wav")
    assert may(state_dir, "input.required", T + 10_000, "sounds/ask.mp3")
    with Debounce(str(state_dir)) as memo:
        assert memo.last("task.complete") == "sounds/done-1.wav"
        assert memo.last("input.required") == "sounds/ask.mp3"
        assert memo.last("task.error") is None


def test_a_damaged_or_newer_file_is_read_as_nothing_played(state_dir: Path) -> None:
    state_dir.mkdir()
    (state_dir / FILE).write_text("{not json")
    assert may(state_dir, "task.complete", T)
    newer = '{"v": 2, "ts_ms": 0}'
    (state_dir / FILE).write_text(newer)
    assert may(state_dir, "task.complete", T + 1)  # plays; the newer lookout's file stays
    assert (state_dir / FILE).read_text() == newer
    with pytest.raises(store.NewerFormatError):
        store.write_json_atomic(str(state_dir / FILE), {})


SEND = """
import json, pathlib, sys, time
from lookout.channels import sound as channel
go, state, pack = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
ch = {"pack": pack, "volume": 1.0, "categories": ["task.complete"]}
msg = {"kind": "done", "intent": {"kind": "done"}, "update": False}
pathlib.Path(sys.argv[4]).touch()
while not go.exists():
    time.sleep(0.005)
print(json.dumps(channel.send(ch, msg, 60, state, now_ms=int(sys.argv[5]))))
"""


def test_two_senders_at_the_same_moment_play_one_sound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state_dir: Path
) -> None:
    box = players(tmp_path, monkeypatch, "aplay")
    go = tmp_path / "go"
    procs = []
    for i in range(2):
        ready = tmp_path / f"ready-{i}"
        argv = [sys.executable, "-c", SEND, str(go), str(state_dir), str(PACKS / "minimal")]
        procs.append(
            subprocess.Popen([*argv, str(ready), str(T)], stdout=subprocess.PIPE, cwd=ROOT)
        )
    for i in range(2):  # both wait at the start line: then they race for the lock
        wait_for(lambda i=i: (tmp_path / f"ready-{i}").exists(), timeout=120, what="a sender")
    go.touch()
    results = sorted(json.loads(p.communicate(timeout=120)[0])[0] for p in procs)
    assert results == ["sent", "skipped"]
    assert len(box.calls()) == 1
