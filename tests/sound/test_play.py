"""Playing a file (lookout/sound/play.py) through recording stand-ins of the players: the argv,
the file the player got (or its bytes on stdin), from /; a failing player's last words; a player
that hangs is stopped at the deadline with everything it started."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from lookout.sound.play import find_player, play
from tests.helpers import require_binary, wait_for
from tests.sound.standins import PACKS, players, sha256

DONE = PACKS / "minimal" / "sounds" / "done.wav"


def gone(pid: int) -> bool:
    """Not running: no such process, or a zombie its new parent has not reaped yet."""
    try:
        os.kill(pid, 0)
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (ProcessLookupError, FileNotFoundError):
        return True
    return stat.rpartition(")")[2].split()[0] == "Z"


def test_the_player_gets_the_file_and_its_volume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = players(tmp_path, monkeypatch, "paplay")
    box.server("pulse")
    player = find_player()
    assert player is not None
    assert play(DONE, 0.25, player, 60) == ("sent", "played through paplay", None)
    (call,) = box.calls()
    assert call["prog"] == "paplay"
    assert call["argv"] == ["--volume=16384", str(DONE)]
    assert call["file_sha256"] == sha256(DONE)
    assert call["cwd"] == "/"  # never a session's directory


def test_a_failing_player_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    players(tmp_path, monkeypatch, "aplay")
    monkeypatch.setenv("LOOKOUT_STANDIN_EXIT", "3")
    player = find_player()
    assert player is not None
    assert play(DONE, 1.0, player, 60) == (
        "failed", "aplay exited with 3: boom: no such sink", None
    )  # fmt: skip


def test_a_player_that_vanished(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = players(tmp_path, monkeypatch, "aplay")
    player = find_player()
    assert player is not None
    (box.bin / "aplay").unlink()
    assert play(DONE, 1.0, player, 60) == (
        "failed", f"aplay not found at {box.bin / 'aplay'}", None
    )  # fmt: skip


def test_a_hung_player_is_stopped_at_the_deadline_with_its_children(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = players(tmp_path, monkeypatch)
    box.install("aplay", script="hang")
    player = find_player()
    assert player is not None
    started = time.monotonic()
    result = play(DONE, 1.0, player, 3)
    assert time.monotonic() - started < 60  # back at its deadline, not the sleep's 100000 s
    assert result == (
        "failed",
        "aplay still playing after 3s: stopped (a hung sound server, or a sound longer than"
        " timeout_ms)",
        None,
    )
    pids = [int(p) for p in box.log.read_text().split()]
    assert len(pids) == 2  # the player and the child it started
    wait_for(lambda: all(gone(pid) for pid in pids), what="the player's group to be gone")


def test_a_windows_player_gets_the_bytes_on_stdin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = players(tmp_path, monkeypatch, "powershell.exe", platform="wsl")
    player = find_player()
    assert player is not None and player.stdin
    assert play(DONE, 0.5, player, 60) == ("sent", "played through powershell.exe", None)
    (call,) = box.calls()
    assert call["stdin_sha256"] == sha256(DONE)
    assert str(DONE) not in " ".join(call["argv"])  # type: ignore[arg-type]


@pytest.mark.real
def test_the_default_pack_plays_through_the_real_aplay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_env: Path, state_dir: Path
) -> None:
    """alsa-utils' aplay, the one sound card here ALSA's null device: the test's HOME has an
    ~/.asoundrc that makes it the default, so aplay runs with exactly lookout's argv."""
    from lookout.channels import sound as channel

    real = require_binary("aplay")
    box = players(tmp_path, monkeypatch)
    (box.bin / "aplay").symlink_to(real)
    (isolated_env / ".asoundrc").write_text("pcm.!default { type null }\n")
    ch = {"pack": None, "volume": 1.0, "categories": ["input.required", "task.complete",
                                                      "task.error"]}  # fmt: skip
    for i, kind in enumerate(("permission", "done", "error")):
        msg = {"kind": kind, "intent": {"kind": kind}, "update": False}
        result, detail, _ = channel.send(ch, msg, 60, str(state_dir), now_ms=i * 10_000)
        assert result == "sent", detail
        assert detail.endswith(", played through aplay (no volume control)"), detail


def test_a_file_swapped_for_a_fifo_after_the_check_never_hangs_a_stdin_player(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = players(tmp_path, monkeypatch, "powershell.exe", platform="wsl")
    player = find_player()
    assert player is not None
    fifo = tmp_path / "done.wav"
    os.mkfifo(fifo)
    assert play(fifo, 1.0, player, 60) == (
        "failed", "cannot read done.wav: not a regular file", None
    )  # fmt: skip
    assert box.calls() == []
