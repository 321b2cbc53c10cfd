"""The sound channel's parts (lookout/sound/channel.py) as its plug-in module will call them: the
config keys' checks worded as check-config words them, the pack's check, a send per kind through
a recording stand-in player, `lookout test`'s sound, and doctor's line."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import pytest

from lookout.config.check import Checker
from lookout.notify import rules
from lookout.sound import channel, default, settings
from tests.sound.standins import PACKS, copy_pack, players, sha256

T = 1_800_000_000_000
MINIMAL = str(PACKS / "minimal")


def checked(raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    c = Checker("config.toml")
    ch: dict[str, Any] = {}
    settings.check(c, ("channels", "speaker"), raw, ch)
    return ch, c.errors


def test_the_keys_and_their_defaults() -> None:
    assert checked({}) == (
        {"pack": None, "volume": 1.0, "categories": list(settings.PLAYED)},
        [],
    )
    ch, errors = checked({"pack": "peon", "volume": 0.4, "categories": ["input.required"]})
    assert (ch, errors) == (
        {"pack": "peon", "volume": 0.4, "categories": ["input.required"]},
        [],
    )
    assert checked({"volume": 0})[0]["volume"] == 0.0


def test_bad_keys_are_worded_as_check_config_words_them() -> None:
    _, errors = checked(
        {"pack": "my packs/peon", "volume": 1.5, "categories": ["input.requierd", "done"]}
    )
    assert errors == [
        "config.toml: channels.speaker.pack: expected a pack name in ~/.openpeon/packs/ (a-z,"
        " 0-9, '_' and '-') or a path (/... or ~/...), got 'my packs/peon'",
        "config.toml: channels.speaker.volume: expected a number from 0.0 to 1.0, got 1.5",
        "config.toml: channels.speaker.categories[0]: expected one of session.start,"
        " task.acknowledge, task.complete, task.error, input.required, resource.limit,"
        " user.spam, session.end, task.progress, got 'input.requierd' (did you mean"
        " 'input.required'?)",
        "config.toml: channels.speaker.categories[1]: expected one of session.start,"
        " task.acknowledge, task.complete, task.error, input.required, resource.limit,"
        " user.spam, session.end, task.progress, got 'done'",
    ]
    assert checked({"pack": 3, "volume": "loud"})[1] == [
        "config.toml: channels.speaker.pack: expected a string, got int",
        "config.toml: channels.speaker.volume: expected a number, got string",
    ]


def test_check_config_names_every_problem_of_the_pack() -> None:
    c = Checker("config.toml")
    bad = PACKS.parent / "invalid" / "wrong-magic"
    channel.check_pack(c, ("channels", "speaker"), {"pack": str(bad)})
    assert c.errors == [
        f"config.toml: channels.speaker.pack: {bad}/openpeon.json: categories['task.complete']"
        ".sounds[0].file: 'sounds/done.wav' is not a WAV file: it does not start with"
        " RIFF....WAVE (CESP 4.4)",
        f"config.toml: channels.speaker.pack: {bad}/openpeon.json: categories['task.error']"
        ".sounds[0].file: 'sounds/note.ogg' is not a OGG file: it does not start with OggS"
        " (CESP 4.4)",
    ]
    for fine in ({"pack": MINIMAL}, {"pack": None}, {"pack": "not a spec"}):
        assert channel.pack_problems(fine) == []  # None: lookout's own; a bad spec: check's


def ch(**over: Any) -> dict[str, Any]:
    base = {"type": "sound", "enabled": True, "timeout_ms": 10_000, "content": "full",
            "pack": MINIMAL, "volume": 0.5, "categories": list(settings.PLAYED)}  # fmt: skip
    return {**base, **over}


def msg(kind: str, **intent: Any) -> dict[str, Any]:
    return {"kind": kind, "intent": {"kind": kind, **intent}, "update": False, "title": "t"}


def send(state_dir: Path, c: dict[str, Any], m: dict[str, Any], at: int) -> tuple[str, str]:
    result, detail, ref = channel.send(c, m, 60, str(state_dir), now_ms=at)
    assert ref is None
    return result, detail


def test_each_kind_plays_its_categorys_sound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state_dir: Path
) -> None:
    box = players(tmp_path, monkeypatch, "paplay")
    box.server("pulse")
    sent = [
        send(state_dir, ch(), msg("permission"), T),
        send(state_dir, ch(), msg("done"), T + 10_000),
        send(state_dir, ch(), msg("error", summary="server_error"), T + 20_000),
    ]
    assert sent == [
        ("sent", "input.required: sounds/ready.wav of pack minimal, played through paplay"
                 " (volume 0.5)"),
        ("sent", "task.complete: sounds/done.wav of pack minimal, played through paplay"
                 " (volume 0.5)"),
        ("sent", "task.error: sounds/oops.wav of pack minimal, played through paplay"
                 " (volume 0.5)"),
    ]  # fmt: skip
    files = [c["file_sha256"] for c in box.calls()]
    assert files == [sha256(PACKS / "minimal" / "sounds" / n) for n in
                     ("ready.wav", "done.wav", "oops.wav")]  # fmt: skip
    assert {tuple(c["argv"][:1]) for c in box.calls()} == {("--volume=32768",)}  # type: ignore[index]


def test_what_plays_no_sound_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state_dir: Path
) -> None:
    box = players(tmp_path, monkeypatch, "aplay")
    assert send(state_dir, ch(), msg("message"), T) == (
        "skipped", "no sound for message (it maps to no CESP category)"
    )  # fmt: skip
    muted = ch(categories=["input.required"])
    assert send(state_dir, muted, msg("done"), T) == (
        "skipped", "task.complete is not in this channel's categories"
    )  # fmt: skip
    assert send(state_dir, ch(), {**msg("permission"), "update": True}, T) == (
        "skipped", "a sound is not replaced when its episode ends"
    )  # fmt: skip
    assert send(state_dir, ch(), msg("session_start"), T) == (
        "skipped", "pack minimal has no session.start sound aplay plays (wav)"
    )  # fmt: skip
    mixed = ch(pack=str(PACKS / "mixed"))
    assert send(state_dir, mixed, msg("question"), T) == (
        "skipped", "pack mixed has no input.required sound aplay plays (wav)"
    )  # fmt: skip
    assert box.calls() == []


def test_a_second_sound_within_2_s_is_debounced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state_dir: Path
) -> None:
    box = players(tmp_path, monkeypatch, "aplay")
    assert send(state_dir, ch(), msg("done"), T)[0] == "sent"
    assert send(state_dir, ch(), msg("done"), T + 1500) == (
        "skipped", "debounced: a sound played 1500 ms before (at most one per 2 s)"
    )  # fmt: skip
    assert send(state_dir, ch(), msg("permission"), T + 1600)[0] == "sent"  # needs you: plays
    assert send(state_dir, ch(), msg("done"), T + 3700)[0] == "sent"
    assert len(box.calls()) == 3


def test_a_packs_sounds_take_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state_dir: Path
) -> None:
    box = players(tmp_path, monkeypatch, "aplay")
    mixed = ch(pack=str(PACKS / "mixed"))
    for i in range(6):
        result, _, _ = channel.send(mixed, msg("done"), 60, str(state_dir), T + i * 5000,
                                    random.Random(i))  # fmt: skip
        assert result == "sent"
    played = [c["file_sha256"] for c in box.calls()]
    assert all(a != b for a, b in itertools.pairwise(played))  # never twice in a row


def test_without_a_pack_lookouts_own_is_made_and_played(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state_dir: Path
) -> None:
    box = players(tmp_path, monkeypatch, "aplay")
    assert send(state_dir, ch(pack=None), msg("permission"), T) == (
        "sent",
        "input.required: sounds/needs-you.wav of pack lookout, played through aplay (no volume"
        " control)",
    )
    made = state_dir / default.DIR
    assert box.calls()[0]["file_sha256"] == sha256(made / "sounds" / "needs-you.wav")
    assert box.calls()[0]["argv"] == ["-q", str(made.resolve() / "sounds" / "needs-you.wav")]


def test_lookout_test_plays_the_first_category_and_is_never_debounced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state_dir: Path
) -> None:
    box = players(tmp_path, monkeypatch, "aplay")
    test = {**msg("message"), "test": True}
    for at in (T, T + 10):
        assert send(state_dir, ch(), test, at) == (
            "sent",
            "input.required: sounds/ready.wav of pack minimal, played through aplay (no volume"
            " control)",
        )
    only_done = ch(categories=["session.start", "task.complete"])
    assert send(state_dir, only_done, test, T + 20)[1].startswith("task.complete: ")
    assert len(box.calls()) == 3
    assert not (state_dir / "sound-played.json").exists()  # a test leaves the window alone


def test_a_bad_pack_or_no_player_fails_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state_dir: Path
) -> None:
    box = players(tmp_path, monkeypatch)
    assert send(state_dir, ch(), msg("done"), T) == (
        "failed",
        "no sound player found: pw-play, paplay or aplay (apt install pipewire-bin,"
        " pulseaudio-utils or alsa-utils)",
    )
    box.install("aplay")
    root = copy_pack("minimal", tmp_path / "broken")
    (root / "sounds" / "done.wav").write_text("not audio")
    (root / "sounds" / "oops.wav").unlink()
    assert send(state_dir, ch(pack=str(root)), msg("done"), T) == (
        "failed",
        f"pack: {root}/openpeon.json: categories['task.complete'].sounds[0].file:"
        " 'sounds/done.wav' is not a WAV file: it does not start with RIFF....WAVE (CESP 4.4)"
        " (and 1 more)",
    )
    assert box.calls() == []


def test_doctors_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = players(tmp_path, monkeypatch)
    assert channel.doctor(ch()) == (
        False,
        "no sound player found: pw-play, paplay or aplay (apt install pipewire-bin,"
        " pulseaudio-utils or alsa-utils)",
        "install one: apt install pipewire-bin (pw-play), pulseaudio-utils (paplay) or"
        " alsa-utils (aplay)",
    )
    box.install("aplay")
    assert channel.doctor(ch(pack=None)) == (
        True,
        f"aplay at {box.bin / 'aplay'} (ALSA): wav; no volume control (plays at the system's"
        " level); pack lookout's own (lookout)",
        None,
    )
    bad = str(PACKS.parent / "invalid" / "missing-file")
    ok, line, hint = channel.doctor(ch(pack=bad))
    assert (ok, hint) == (False, "lookout check-config lists every problem")
    assert line.startswith(f"pack: {bad}/openpeon.json: ") and line.endswith(" (and 1 more)")


# -- the rules a sound channel goes through (notify/rules.py, unchanged) --------------------------


def rule(**over: Any) -> dict[str, Any]:
    base = {"when": ["done", "subagent_done", "permission"], "channels": ["speaker"],
            "projects": None, "agents": None, "min_duration_s": None, "include_subagents": False,
            "print_mode": False, "cooldown_s": 0.0, "quiet_hours": None,
            "quiet_kinds": ["done", "idle", "subagent_done", "session_start", "session_end",
                            "message"], "escalate_after_s": None, "escalate_to": [],
            "grace_s": None, "digest_s": None}  # fmt: skip
    return {**base, **over}


def decided(r: dict[str, Any], kind: str, minute: int = 600, **intent: Any) -> list[str]:
    cfg: Any = {"channels": {"speaker": ch()}, "rules": [r]}
    full = {"kind": kind, "session_id": "s", "agent_id": None, "episode": "e", **intent}
    deliveries, _ = rules.decide([full], cfg, T, minute, None)  # type: ignore[list-item]
    return [n for d in deliveries for n in d["channels"]]


def test_subagents_and_quiet_hours_reach_a_sound_channel_through_the_rules() -> None:
    assert decided(rule(), "done") == ["speaker"]
    assert decided(rule(), "subagent_done") == []  # no sound for subagents...
    assert decided(rule(), "done", agent_id="a1") == []
    assert decided(rule(include_subagents=True), "subagent_done") == ["speaker"]  # ...unless asked
    night = rule(quiet_hours=[22 * 60, 7 * 60])
    assert decided(night, "done", minute=23 * 60) == []  # done is a quiet kind by default
    assert decided(night, "done", minute=12 * 60) == ["speaker"]


def test_a_state_directory_lookout_cannot_use_fails_the_sound_not_the_sender(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    players(tmp_path, monkeypatch, "aplay")
    blocked = tmp_path / "state-file"
    blocked.write_text("a file where the state directory should be")
    assert send(blocked, ch(), msg("done"), T) == (
        "failed", f"state directory: {blocked} is not a directory"
    )  # fmt: skip


def test_lookout_test_with_nothing_the_player_plays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state_dir: Path
) -> None:
    players(tmp_path, monkeypatch, "aplay")
    only_ogg = ch(pack=str(PACKS / "mixed"), categories=["input.required"])
    assert send(state_dir, only_ogg, {**msg("message"), "test": True}, T) == (
        "skipped", "pack mixed has nothing aplay plays"
    )  # fmt: skip
