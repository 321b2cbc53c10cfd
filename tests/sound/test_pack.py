"""Packs on disk (lookout/sound/pack.py): the fixture packs under tests/fixtures/sound/, the valid
ones loaded and the invalid ones refused with every problem said (expected.txt beside each), and
nothing read outside a pack, nor a FIFO that would hang the sender."""

from __future__ import annotations

import os
import random
import shutil
import threading
from pathlib import Path

import pytest

from lookout.sound import pack
from lookout.sound.pack import PackError, load_pack, pick_sound
from tests.sound.standins import PACKS, SOUND, copy_pack

INVALID = sorted((SOUND / "invalid").iterdir())


def problems(spec: str | Path) -> list[str]:
    with pytest.raises(PackError) as caught:
        load_pack(spec)
    return caught.value.problems


@pytest.mark.parametrize("case", INVALID, ids=[p.name for p in INVALID])
def test_an_invalid_pack_is_refused_with_every_problem(case: Path) -> None:
    want = (case / "expected.txt").read_text(encoding="utf-8").splitlines()
    assert [p.replace(str(case), "PACK") for p in problems(case)] == want


def test_the_minimal_pack_loads_with_its_files_resolved_inside_it() -> None:
    loaded = load_pack(PACKS / "minimal")
    assert (loaded["name"], loaded["display_name"], loaded["version"]) == (
        "minimal", "Minimal test pack", "1.0.0"
    )  # fmt: skip
    files = {c: [(s["file"], s["format"], s["label"]) for s in v]
             for c, v in loaded["categories"].items()}  # fmt: skip
    assert files == {
        "input.required": [("sounds/ready.wav", "wav", "ready?")],
        "task.complete": [("sounds/done.wav", "wav", "done")],
        "task.error": [("sounds/oops.wav", "wav", "oops")],
    }
    root = (PACKS / "minimal").resolve()
    for sounds in loaded["categories"].values():
        for sound in sounds:
            assert sound["path"] == root / sound["file"]


def test_every_optional_field_and_all_three_formats_load() -> None:
    loaded = load_pack(PACKS / "mixed")
    formats = [s["format"] for s in loaded["categories"]["task.complete"]]
    assert formats == ["wav", "wav", "ogg"]
    assert loaded["categories"]["session.start"] == []
    assert loaded["aliases"] == {"complete": "task.complete", "permission": "input.required"}


def test_a_later_cesp_1x_pack_plays_and_what_it_adds_is_passed_over() -> None:
    # CESP 8.1: a player plays every pack of its major version; 1.1 may add fields.
    loaded = load_pack(PACKS / "later-minor")
    assert list(loaded["categories"]) == ["task.complete"]
    assert loaded["version"] == "2.3.4-beta.1+build.5"


def test_a_pack_of_another_major_version_is_refused(tmp_path: Path) -> None:
    root = copy_pack("minimal", tmp_path / "p")
    text = (root / "openpeon.json").read_text().replace('"1.0",', '"2.0",', 1)
    (root / "openpeon.json").write_text(text)
    assert problems(root) == [
        f'{root}/openpeon.json: cesp_version: expected "1.0" (lookout plays CESP 1.x packs),'
        " got '2.0'"
    ]


def riff(size: int) -> bytes:
    return b"RIFF" + (size - 8).to_bytes(4, "little") + b"WAVE" + bytes(size - 12)


def test_a_file_over_1_mib_is_refused_and_one_of_1_mib_plays(tmp_path: Path) -> None:
    root = copy_pack("minimal", tmp_path / "p")
    (root / "sounds" / "done.wav").write_bytes(riff(1024 * 1024))
    load_pack(root)
    (root / "sounds" / "done.wav").write_bytes(riff(1024 * 1024 + 1))
    assert problems(root) == [
        f"{root}/openpeon.json: categories['task.complete'].sounds[0].file: 'sounds/done.wav'"
        " is 1048577 bytes, over the 1 MiB such a file may have"
    ]


def test_a_preview_over_500_kib_and_a_pack_over_its_total_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_pack("mixed", tmp_path / "p")
    (root / "preview.wav").write_bytes(riff(500 * 1024 + 1))
    assert problems(root) == [
        f"{root}/openpeon.json: preview: 'preview.wav' is 512001 bytes, over the 500 KiB such a"
        " file may have"
    ]
    (root / "preview.wav").write_bytes(riff(64))
    monkeypatch.setattr(pack, "PACK_MAX", 3 * 1024)  # 50 MiB of fixtures would waste the disk
    assert problems(root) == [f"{root}: its files are 3295 bytes, over the 3 KiB a pack may have"]


def test_a_fifo_in_a_pack_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    root = copy_pack("minimal", tmp_path / "p")
    (root / "sounds" / "done.wav").unlink()
    os.mkfifo(root / "sounds" / "done.wav")
    found: list[list[str]] = []
    worker = threading.Thread(target=lambda: found.append(problems(root)), daemon=True)
    worker.start()
    worker.join(60)  # a ceiling for a broken check that opens it blocking, never the wait
    assert found == [[
        f"{root}/openpeon.json: categories['task.complete'].sounds[0].file: 'sounds/done.wav'"
        " is not a regular file"
    ]]  # fmt: skip


def test_a_link_inside_the_pack_is_followed_and_the_pack_itself_may_be_a_link(
    tmp_path: Path,
) -> None:
    root = copy_pack("minimal", tmp_path / "p")
    (root / "sounds" / "done.wav").unlink()
    (root / "sounds" / "done.wav").symlink_to("ready.wav")  # stays inside: fine
    link = tmp_path / "link"
    link.symlink_to(root)  # the user's own link to the pack: its target is the pack
    loaded = load_pack(link)
    assert loaded["categories"]["task.complete"][0]["path"] == root.resolve() / "sounds/ready.wav"


def test_a_name_is_looked_up_in_openpeon_packs(isolated_env: Path) -> None:
    assert problems("peon") == ["no pack 'peon' in ~/.openpeon/packs/ (none installed)"]
    copy_pack("minimal", isolated_env / ".openpeon" / "packs" / "minimal")
    (isolated_env / ".openpeon" / "packs" / "empty").mkdir()  # no manifest: not a pack
    assert problems("peon") == ["no pack 'peon' in ~/.openpeon/packs/ (installed: minimal)"]
    assert load_pack("minimal")["name"] == "minimal"
    assert load_pack("~/.openpeon/packs/minimal")["name"] == "minimal"
    assert problems("~/nowhere") == ["~/nowhere: not a directory"]


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("peon", None),
        ("/opt/packs/peon", None),
        ("~/packs/peon", None),
        ("~", None),
        (
            "packs/peon",
            "expected a pack name in ~/.openpeon/packs/ (a-z, 0-9, '_' and '-') or a path"
            " (/... or ~/...), got 'packs/peon'",
        ),
        (
            "Peon",
            "expected a pack name in ~/.openpeon/packs/ (a-z, 0-9, '_' and '-') or a path"
            " (/... or ~/...), got 'Peon'",
        ),
        (
            "~root/packs",
            "expected a pack name in ~/.openpeon/packs/ (a-z, 0-9, '_' and '-') or a path"
            " (/... or ~/...), got '~root/packs'",
        ),
    ],
)
def test_what_a_pack_setting_may_be(spec: str, problem: str | None) -> None:
    assert pack.spec_problem(spec) == problem


def test_a_manifest_that_is_not_a_file_or_not_text(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / "openpeon.json").mkdir(parents=True)
    assert problems(root) == [f"{root}/openpeon.json: is not a regular file"]
    shutil.rmtree(root / "openpeon.json")
    (root / "openpeon.json").write_bytes(b"\xff\xfe{}")
    assert problems(root) == [f"{root}/openpeon.json: not UTF-8 text"]
    (root / "openpeon.json").write_text("[" * 100000 + "]" * 100000)
    assert problems(root) == [f"{root}/openpeon.json: nested too deeply"]
    (root / "openpeon.json").write_text("[]")
    assert problems(root) == [f"{root}/openpeon.json: expected a JSON object, got an array"]
    (root / "openpeon.json").unlink()
    assert problems(root) == [f"{root}/openpeon.json: is missing"]


# -- choosing a sound ----------------------------------------------------------------------------


def test_a_sound_is_chosen_among_those_the_player_plays() -> None:
    mixed = load_pack(PACKS / "mixed")
    rng = random.Random(7)
    seen = {pick_sound(mixed, "task.complete", ("wav",), rng=rng)["file"] for _ in range(50)}  # type: ignore[index]
    assert seen == {"sounds/done-1.wav", "sounds/done-2.wav"}
    assert pick_sound(mixed, "input.required", ("wav",)) is None  # only OGG and MP3 there
    assert pick_sound(mixed, "input.required", ("wav", "mp3"))["file"] == "sounds/ask.mp3"  # type: ignore[index]
    assert pick_sound(mixed, "session.start") is None  # an empty category: no sound, no error
    assert pick_sound(mixed, "task.error") is None  # a category the pack lacks


def test_the_same_sound_is_not_played_twice_in_a_row_when_there_is_another() -> None:
    mixed = load_pack(PACKS / "mixed")
    rng = random.Random(1)
    for _ in range(30):
        got = pick_sound(mixed, "task.complete", ("wav",), avoid="sounds/done-1.wav", rng=rng)
        assert got is not None and got["file"] == "sounds/done-2.wav"
    minimal = load_pack(PACKS / "minimal")  # one sound only: it plays again
    again = pick_sound(minimal, "task.complete", avoid="sounds/done.wav")
    assert again is not None and again["file"] == "sounds/done.wav"


def test_a_category_is_found_through_the_packs_aliases() -> None:
    # CESP 5: the category first, then the alias table (legacy names).
    mixed = load_pack(PACKS / "mixed")
    assert [s["file"] for s in pack.sounds_for(mixed, "complete")] == [
        "sounds/done-1.wav", "sounds/done-2.wav", "sounds/done-3.ogg"
    ]  # fmt: skip
    assert pack.sounds_for(mixed, "greeting") == []
