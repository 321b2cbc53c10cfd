"""The sound channel type (lookout/channels/sound.py) through the real entry points: hooks whose
notifications play a real pack's files through a recording stand-in player, `lookout channel
add` and `lookout test`, check-config on a bad pack, doctor without a player, quiet hours, no
sound for subagents, and a project file that may not choose a pack; then the plug-in's parts called
directly: the keys' checks worded as check-config words them, the pack's check, a send per kind,
`lookout test`'s sound, and doctor's line."""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout import runner, spawn
from lookout.channels import sound as plugin
from lookout.commands.main import main
from lookout.config.check import Checker
from lookout.notify import rules
from lookout.sender import sender
from lookout.sound import default
from tests.helpers import calls, payload, recorder, write_config
from tests.sound.standins import PACKS, Players, copy_pack, players, sha256

SESSION = "5e55e1d0-aaaa-4bbb-8ccc-000000000007"
T = 1_800_000_000_000  # 08:00 UTC
MINIMAL = PACKS / "minimal"
BAD = PACKS.parent / "invalid" / "wrong-magic"


CLOCK = [T]  # the time of the last hook's event: when the rules and the sound think it is


@pytest.fixture
def sent_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    # The detached sender, run in this process: its sends are over when the hook returns. The
    # rules (quiet hours) and the debounce read the event's time, never the wall clock nor how
    # fast this machine runs the hooks.
    from lookout.notify import handle

    monkeypatch.setattr(spawn, "spawn", lambda st, job, *_: sender.serve(st, watch_s=None) or 1)
    monkeypatch.setattr(handle, "now_ms", lambda: CLOCK[0])
    monkeypatch.setattr(plugin, "words", types.SimpleNamespace(now_ms=lambda: CLOCK[0]))


@pytest.fixture
def utc() -> Iterator[None]:
    was = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"  # quiet hours are local time: T is 08:00 here
    time.tzset()
    yield
    if was is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = was
    time.tzset()


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_env: Path) -> Players:
    box = players(tmp_path, monkeypatch, "paplay")
    box.server("pulse")
    return box


def hook(state_dir: Path, name: str, ts_ms: int, cwd: Path, **fields: object) -> None:
    CLOCK[0] = ts_ms
    data = {**payload(name), "session_id": SESSION, "cwd": str(cwd), **fields}
    raw = json.dumps(data).encode()
    runner.record(raw, str(data["hook_event_name"]), ts_ms, str(state_dir),
                  {"CLAUDE_PID": str(os.getpid())})  # fmt: skip


def a_turn(state_dir: Path, project: Path) -> None:
    """A session asks for a permission, runs a subagent and finishes its turn."""
    hook(state_dir, "SessionStart-startup", T, project)
    hook(state_dir, "UserPromptSubmit", T + 1000, project)
    hook(state_dir, "PreToolUse-Bash", T + 2000, project)
    hook(state_dir, "PermissionRequest-Bash", T + 2100, project)
    hook(state_dir, "PostToolUse-Bash", T + 5000, project)
    hook(state_dir, "SubagentStart-general-purpose", T + 6000, project)
    hook(state_dir, "SubagentStop-general-purpose", T + 9000, project)
    hook(state_dir, "Stop", T + 12_000, project)


def speaker(rule: str = "") -> str:
    return (
        f'[channels.speaker]\ntype = "sound"\npack = "{MINIMAL}"\nvolume = 0.5\n'
        '[[rules]]\nwhen = ["permission", "subagent_done", "done"]\nchannels = ["speaker"]\n' + rule
    )


def played(box: Players) -> list[str]:
    by_hash = {sha256(p): p.name for p in (MINIMAL / "sounds").iterdir()}
    return [by_hash[str(c["file_sha256"])] for c in box.calls()]


def test_the_hooks_play_needs_you_and_done_and_no_subagent(
    box: Players, tmp_path: Path, state_dir: Path, sent_in_process: None
) -> None:
    write_config(speaker())
    project = tmp_path / "demo"
    project.mkdir()
    a_turn(state_dir, project)
    assert played(box) == ["ready.wav", "done.wav"]  # input.required, then task.complete
    assert {c["prog"] for c in box.calls()} == {"paplay"}
    assert [c["argv"][0] for c in box.calls()] == ["--volume=32768"] * 2  # type: ignore[index]
    sent = [
        json.loads(line)
        for line in (state_dir / "deliveries.jsonl").read_text().splitlines()
        if json.loads(line).get("channel") == "speaker"
    ]
    assert [(d["kind"], d["result"]) for d in sent] == [
        ("permission", "sent"),
        ("subagent_done", "skipped"),  # no sound for subagents (include_subagents = false)
        ("done", "sent"),
    ]
    assert sent[0]["detail"] == (
        "input.required: sounds/ready.wav of pack minimal, played through paplay (volume 0.5)"
    )


def test_a_sound_is_silent_in_quiet_hours_for_every_kind(
    box: Players, tmp_path: Path, state_dir: Path, sent_in_process: None, utc: None
) -> None:
    # permission is an attention kind: through quiet hours it still reaches the command
    # channel, never the speaker.
    prog, log = recorder(tmp_path)
    write_config(
        f'[channels.cmd]\ntype = "command"\nargv = ["{prog}", "{{kind}}"]\n'
        + speaker('quiet_hours = "07:00-09:00"\n').replace(
            'channels = ["speaker"]', 'channels = ["speaker", "cmd"]'
        )
    )
    project = tmp_path / "demo"
    project.mkdir()
    a_turn(state_dir, project)
    assert box.calls() == []
    assert calls(log) == [["permission"]]
    skipped = [
        json.loads(line)
        for line in (state_dir / "deliveries.jsonl").read_text().splitlines()
        if '"quiet_hours"' in line
    ]
    assert [(s["kind"], s["channel"]) for s in skipped] == [
        ("permission", "speaker"),
        ("done", "speaker,cmd"),  # done is a quiet kind: withheld from both
    ]
    assert skipped[0]["detail"] == (
        "rules[0]: quiet hours 07:00-09:00 (it was 08:00 local time); a sound keeps them for"
        " every kind"
    )


def test_channel_add_writes_the_table_and_lookout_test_plays_it(
    box: Players, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["channel", "add", "speaker", "--type", "sound", "--pack", str(MINIMAL),
            "--volume", "0.25", "--categories", "task.complete,input.required"]  # fmt: skip
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith("added channel speaker (sound) to ")
    text = Path(os.environ["LOOKOUT_CONFIG"]).read_text()
    assert text.endswith(
        f'[channels.speaker]\ntype = "sound"\npack = "{MINIMAL}"\nvolume = 0.25\n'
        'categories = [\n    "task.complete",\n    "input.required",\n]\n'
    )
    assert main(["test", "speaker"]) == 0
    assert capsys.readouterr().out == (
        "speaker: sent (task.complete: sounds/done.wav of pack minimal, played through paplay"
        " (volume 0.25))\n"
    )
    assert played(box) == ["done.wav"]
    # The pack is read before the file changes, as check-config reads it.
    assert main(["channel", "add", "bad", "--type", "sound", "--pack", str(BAD)]) == 1
    assert capsys.readouterr().err.startswith(
        "error: ~/.config/lookout/config.toml: channels.bad.pack: "
        f"{BAD}/openpeon.json: categories['task.complete'].sounds[0].file: 'sounds/done.wav' is"
        " not a WAV file"
    )
    assert Path(os.environ["LOOKOUT_CONFIG"]).read_text() == text
    assert main(["channel", "add", "loud", "--type", "sound", "--volume", "2"]) == 1
    assert "channels.loud.volume: expected a number from 0.0 to 1.0, got 2" in (
        capsys.readouterr().err
    )


def test_check_config_names_each_problem_of_the_pack(
    box: Players, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config(speaker().replace(str(MINIMAL), str(BAD)))
    assert main(["check-config"]) == 1
    where = "~/.config/lookout/config.toml: channels.speaker.pack"
    assert capsys.readouterr().err.splitlines() == [
        f"error: {where}: {BAD}/openpeon.json: categories['task.complete'].sounds[0].file:"
        " 'sounds/done.wav' is not a WAV file: it does not start with RIFF....WAVE (CESP 4.4)",
        f"error: {where}: {BAD}/openpeon.json: categories['task.error'].sounds[0].file:"
        " 'sounds/note.ogg' is not a OGG file: it does not start with OggS (CESP 4.4)",
    ]
    off = speaker().replace(str(MINIMAL), str(BAD)).replace("volume", "enabled = false\nvolume")
    write_config(off)
    assert main(["check-config"]) == 0  # a disabled channel plays nothing: its pack waits


def test_doctor_without_a_player_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_env: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    players(tmp_path, monkeypatch)
    write_config(speaker())
    main(["doctor"])
    out = capsys.readouterr().out.splitlines()
    i = next(i for i, line in enumerate(out) if "channel speaker" in line)
    assert out[i].split(None, 1) == [
        "warn",
        "channel speaker: no sound player found: pw-play, paplay or aplay (apt install"
        " pipewire-bin, pulseaudio-utils or alsa-utils)",
    ]
    assert out[i + 1].strip() == (
        "hint: install one: apt install pipewire-bin (pw-play), pulseaudio-utils (paplay) or"
        " alsa-utils (aplay)"
    )


def a_bad_pack(root: Path) -> Path:
    """A pack with a `../` path, a text file named .wav and a link out of the pack."""
    pack = root / "bad"
    (pack / "sounds").mkdir(parents=True)
    shutil.copyfile(MINIMAL / "sounds" / "done.wav", pack / "sounds" / "done.wav")
    (pack / "sounds" / "note.wav").write_text("#!/bin/sh\necho hi\n")
    (root / "secret.wav").write_bytes((MINIMAL / "sounds" / "oops.wav").read_bytes())
    (pack / "sounds" / "out.wav").symlink_to(root / "secret.wav")
    sounds = {
        "task.complete": "sounds/done.wav",
        "input.required": "../secret.wav",
        "task.error": "sounds/note.wav",
        "resource.limit": "sounds/out.wav",
    }
    manifest = {
        "cesp_version": "1.0", "name": "bad", "display_name": "Bad", "version": "1.0.0",
        "categories": {k: {"sounds": [{"file": f, "label": k}]} for k, f in sounds.items()},
    }  # fmt: skip
    (pack / "openpeon.json").write_text(json.dumps(manifest))
    return pack


def test_channel_add_prints_each_problem_of_the_pack_on_its_own_line(
    box: Players, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """newuser-4 defect 10: `channel add` joined a pack's problems with `; ` on one line."""
    pack = a_bad_pack(tmp_path)
    write_config(speaker())
    before = Path(os.environ["LOOKOUT_CONFIG"]).read_text()
    assert main(["channel", "add", "beep", "--type", "sound", "--pack", str(pack)]) == 1
    err = capsys.readouterr().err.splitlines()
    where = "error: ~/.config/lookout/config.toml: channels.beep.pack: "
    assert [line.startswith(where) for line in err] == [True, True, True, False], err
    assert "leaves the pack directory (no ../)" in err[0] and "; " not in err[0]
    assert "is not a WAV file" in err[1]
    assert "leaves the pack directory (through a symlink)" in err[2]
    assert err[3] == ("hint: the config file is unchanged; see lookout channel add --help")
    assert Path(os.environ["LOOKOUT_CONFIG"]).read_text() == before


def test_doctor_fails_on_a_channel_whose_pack_is_invalid_naming_it(
    box: Players, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """newuser-4 defect 5: check-config exited 1 on the pack, doctor said `3 warnings (nothing
    failed)` and never named the channel (no rule sends to it yet: check-config reads it all
    the same)."""
    pack = a_bad_pack(tmp_path)
    write_config(speaker() + f'[channels.beep2]\ntype = "sound"\npack = "{pack}"\n')
    assert main(["check-config"]) == 1
    problems = [line.removeprefix("error: ") for line in capsys.readouterr().err.splitlines()]
    assert len(problems) == 3, problems
    assert all(
        p.startswith("~/.config/lookout/config.toml: channels.beep2.pack: ") for p in problems
    )
    assert "leaves the pack directory (no ../)" in problems[0]
    assert "is not a WAV file" in problems[1]
    assert "leaves the pack directory (through a symlink)" in problems[2]
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out.splitlines()
    (i,) = [i for i, line in enumerate(out) if "channel beep2" in line]
    assert out[i].split(None, 1) == ["FAIL", f"channel beep2: {problems[0]} (and 2 more)"]
    assert out[i + 1].strip() == (
        "hint: lookout check-config lists every problem; until they are fixed, every send to it"
        " fails"
    )
    assert any(line.split(None, 1)[0] == "ok" and "channel speaker" in line for line in out)
    # A disabled channel plays nothing: its pack waits, in doctor as in check-config.
    write_config(
        speaker() + f'[channels.beep2]\ntype = "sound"\npack = "{pack}"\nenabled = false\n'
    )
    main(["doctor"])
    assert "channel beep2" not in capsys.readouterr().out


def test_a_project_file_never_adds_a_sound_channel_nor_chooses_a_pack(
    box: Players, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config(speaker())
    repo = tmp_path / "home" / "src" / "game"
    (repo / ".git").mkdir(parents=True)
    (repo / ".claude").mkdir()
    pfile = repo / ".claude" / "lookout.toml"
    pfile.write_text(
        '[channels.speaker]\npack = "/tmp/their-pack"\n'
        '[channels.horn]\ntype = "sound"\n'
        '[[rules]]\nwhen = ["done"]\nchannels = ["horn"]\n'
    )
    assert main(["trust", str(repo), "--yes"]) == 1
    err = capsys.readouterr().err
    where = "~/src/game/.claude/lookout.toml: channels"
    own = ": define the channel in your own config (a project's rules may name it)"
    assert err.splitlines() == [
        f"error: {where}.speaker.pack: a project file may not choose a sound pack (a repository"
        f" never chooses a file lookout opens){own}",
        f"{where}.horn.type: a project file may not add a sound channel (a repository never"
        f" chooses what this machine plays){own}",
        "hint: see config.example.toml for every key",
    ]
    # What a project may do: its rules name your sound channel, or turn it off.
    pfile.write_text("[channels.speaker]\nenabled = false\n")
    assert main(["check-config", "--project", str(repo)]) == 0
    capsys.readouterr()


# -- the plug-in's parts, called directly --------------------------------------------------------


def checked(raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    c = Checker("config.toml")
    ch: dict[str, Any] = {}
    plugin.check_keys(c, ("channels", "speaker"), raw, ch)
    return ch, c.errors


def test_the_keys_and_their_defaults() -> None:
    assert checked({}) == (
        {"pack": None, "volume": 1.0, "categories": list(plugin.PLAYED)},
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
    plugin.check_pack(c, ("channels", "speaker"), {"pack": str(bad)})
    assert c.errors == [
        f"config.toml: channels.speaker.pack: {bad}/openpeon.json: categories['task.complete']"
        ".sounds[0].file: 'sounds/done.wav' is not a WAV file: it does not start with"
        " RIFF....WAVE (CESP 4.4)",
        f"config.toml: channels.speaker.pack: {bad}/openpeon.json: categories['task.error']"
        ".sounds[0].file: 'sounds/note.ogg' is not a OGG file: it does not start with OggS"
        " (CESP 4.4)",
    ]
    for fine in ({"pack": str(MINIMAL)}, {"pack": None}, {"pack": "not a spec"}):
        assert plugin.pack_problems(fine) == []  # None: lookout's own; a bad spec: check's


def ch(**over: Any) -> dict[str, Any]:
    base = {"type": "sound", "enabled": True, "timeout_ms": 10_000, "content": "full",
            "pack": str(MINIMAL), "volume": 0.5, "categories": list(plugin.PLAYED)}  # fmt: skip
    return {**base, **over}


def msg(kind: str, **intent: Any) -> dict[str, Any]:
    return {"kind": kind, "intent": {"kind": kind, **intent}, "update": False, "title": "t"}


def send(state_dir: Path, c: dict[str, Any], m: dict[str, Any], at: int) -> tuple[str, str]:
    result, detail, ref = plugin.send(c, m, 60, str(state_dir), now_ms=at)
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
        result, _, _ = plugin.send(mixed, msg("done"), 60, str(state_dir), T + i * 5000,
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
    assert plugin.doctor_line(ch()) == (
        False,
        "no sound player found: pw-play, paplay or aplay (apt install pipewire-bin,"
        " pulseaudio-utils or alsa-utils)",
        "install one: apt install pipewire-bin (pw-play), pulseaudio-utils (paplay) or"
        " alsa-utils (aplay)",
    )
    box.install("aplay")
    assert plugin.doctor_line(ch(pack=None)) == (
        True,
        f"aplay at {box.bin / 'aplay'} (ALSA): wav; no volume control (plays at the system's"
        " level); pack lookout's own (lookout)",
        None,
    )
    bad = str(PACKS.parent / "invalid" / "missing-file")
    ok, line, hint = plugin.doctor_line(ch(pack=bad))
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
