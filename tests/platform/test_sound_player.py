"""Which program plays a sound on each platform (lookout/platform: sound_player, sound_status),
against recording stand-ins: pw-play when PipeWire's socket is there, paplay when a PulseAudio
server is, else aplay; afplay on macOS; on WSL a Linux player only with a server (WSLg), else
PowerShell's SoundPlayer with the WAV on stdin under a fixed script; none is doctor's warning."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from lookout.platform import current, wsl
from tests.sound.standins import players


def found(platform: str = "linux") -> tuple[str, str] | None:
    player = current.get().sound_player()
    assert current.get().name == platform
    return None if player is None else (player.name, player.via)


def test_linux_prefers_the_player_whose_server_is_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = players(tmp_path, monkeypatch, "pw-play", "paplay", "aplay")
    assert found() == ("aplay", "ALSA")  # no server seen: ALSA, which a desktop routes
    pulse = box.server("pulse")
    assert found() == ("paplay", f"PulseAudio {pulse}")
    pipewire = box.server("pipewire")
    assert found() == ("pw-play", f"PipeWire {pipewire}")
    monkeypatch.setenv("PIPEWIRE_REMOTE", "elsewhere-0")  # a remote that is not there
    assert found() == ("paplay", f"PulseAudio {pulse}")
    monkeypatch.setenv("PULSE_SERVER", "unix:/mnt/wslg/PulseServer")
    assert found() == ("paplay", "PulseAudio PULSE_SERVER")  # named, its value never shown


def test_linux_without_a_server_or_aplay_takes_what_is_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = players(tmp_path, monkeypatch, "paplay")
    assert found() == ("paplay", "no PulseAudio server seen")
    box.install("pw-play")
    assert found() == ("pw-play", "no PipeWire socket seen")


def test_no_player_is_a_clear_status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    players(tmp_path, monkeypatch)
    assert current.get().sound_player() is None
    assert current.get().sound_status() == (
        False,
        "no sound player found: pw-play, paplay or aplay (apt install pipewire-bin,"
        " pulseaudio-utils or alsa-utils)",
    )


def test_each_players_argv_and_what_doctor_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = players(tmp_path, monkeypatch, "pw-play", "paplay", "aplay")
    wav = "/packs/p/sounds/a.wav"
    aplay = current.get().sound_player()
    assert aplay is not None
    assert aplay.argv(wav, 0.5) == [str(box.bin / "aplay"), "-q", wav]
    assert current.get().sound_status() == (
        True,
        f"aplay at {box.bin / 'aplay'} (ALSA): wav; no volume control (plays at the system's"
        " level)",
    )
    box.server("pulse")
    paplay = current.get().sound_player()
    assert paplay is not None
    assert paplay.argv(wav, 0.5) == [str(box.bin / "paplay"), "--volume=32768", wav]
    assert paplay.argv(wav, 7) == [str(box.bin / "paplay"), "--volume=65536", wav]  # clamped
    box.server("pipewire")
    pw = current.get().sound_player()
    assert pw is not None
    assert pw.argv(wav, 0.25) == [str(box.bin / "pw-play"), "--volume=0.25", wav]
    assert pw.formats == ("wav", "ogg", "mp3")
    assert current.get().sound_status()[1].endswith(": wav, ogg, mp3; volume")


def test_macos_plays_through_afplay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = players(tmp_path, monkeypatch, "afplay", "paplay", platform="macos")
    player = current.get().sound_player()
    assert player is not None and (player.name, player.formats) == ("afplay", ("wav", "mp3"))
    assert player.argv("/p/a.mp3", 0.3) == [str(box.bin / "afplay"), "-v", "0.30", "/p/a.mp3"]
    (box.bin / "afplay").unlink()
    assert current.get().sound_status() == (
        False,
        "afplay not found (it ships with macOS in /usr/bin: is it on PATH?)",
    )


def test_wsl_plays_through_powershell_with_a_fixed_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = players(tmp_path, monkeypatch, "powershell.exe", "aplay", platform="wsl")
    player = current.get().sound_player()
    assert player is not None
    assert (player.name, player.formats, player.volume, player.stdin) == (
        "powershell.exe", ("wav",), False, True
    )  # fmt: skip
    argv = player.argv("/p/$(whoami).wav", 1.0)  # the path is never in the script: stdin is
    assert argv[:-1] == [
        str(box.bin / "powershell.exe"), "-NoProfile", "-NonInteractive", "-ExecutionPolicy",
        "Bypass", "-EncodedCommand",
    ]  # fmt: skip
    assert base64.b64decode(argv[-1]).decode("utf-16-le") == wsl.SOUND_SCRIPT
    assert current.get().sound_status() == (
        True,
        f"WSL, powershell.exe at {box.bin / 'powershell.exe'} (Windows SoundPlayer): wav; no"
        " volume control (plays at the system's level)",
    )


def test_wsl_uses_a_linux_player_when_wslg_runs_a_sound_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    players(tmp_path, monkeypatch, "powershell.exe", "paplay", platform="wsl")
    monkeypatch.setenv("PULSE_SERVER", "unix:/mnt/wslg/PulseServer")
    assert found("wsl") == ("paplay", "PulseAudio PULSE_SERVER")


def test_wsl_without_interop_or_a_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = players(tmp_path, monkeypatch, platform="wsl")
    assert current.get().sound_status() == (
        False,
        "WSL: no sound server (PULSE_SERVER, as WSLg sets it) and no powershell.exe on PATH"
        " (WSL interop off?)",
    )
    box.install("aplay")  # may still reach a device: taken last
    assert found("wsl") == ("aplay", "ALSA")
