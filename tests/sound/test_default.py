"""lookout's own pack (lookout/sound/default.py): synthesized here, valid CESP 1.0 by lookout's
own checker held to the schema's rules (cesp_version 1.0: no unknown field or category), a
different tone for "needs you", "done" and "error", written whole and rewritten when damaged."""

from __future__ import annotations

import array
import itertools
import json
import subprocess
import sys
import wave
from pathlib import Path

from lookout.sound import default
from lookout.sound.categories import PLAYED
from lookout.sound.manifest import OPTIONAL, REQUIRED
from lookout.sound.pack import load_pack
from tests.helpers import ROOT


def test_the_default_pack_is_a_valid_cesp_pack_of_every_category_lookout_plays(
    tmp_path: Path,
) -> None:
    root = default.default_pack(tmp_path / "state" / default.DIR)
    pack = load_pack(root)  # every check: magic bytes, sizes, sha256, inside the pack
    assert (pack["name"], pack["version"]) == ("lookout", default.VERSION)
    assert sorted(pack["categories"]) == sorted(PLAYED)
    data = json.loads((root / "openpeon.json").read_text())
    assert data["cesp_version"] == "1.0"  # held to the schema: nothing it does not know
    assert set(data) <= set(REQUIRED + OPTIONAL)
    for sounds in data["categories"].values():
        for sound in sounds["sounds"]:
            assert set(sound) == {"file", "label", "sha256"}
    for path in (root / "sounds").iterdir():
        assert path.stat().st_size < 64 * 1024  # short tones, far below the 1 MiB of a file
        assert path.stat().st_mode & 0o077 == 0


def frames(path: Path) -> tuple[int, array.array[int]]:
    with wave.open(str(path), "rb") as w:
        assert (w.getnchannels(), w.getsampwidth()) == (1, 2)
        data = array.array("h", w.readframes(w.getnframes()))
        if sys.byteorder == "big":
            data.byteswap()
        return w.getframerate(), data


def pitch(rate: int, samples: array.array[int]) -> float:
    """The dominant frequency of a stretch of samples, from its zero crossings."""
    crossings = sum(1 for a, b in itertools.pairwise(samples) if a < 0 <= b)
    return crossings * rate / len(samples)


def test_needs_you_rises_done_falls_and_error_is_low(tmp_path: Path) -> None:
    root = default.default_pack(tmp_path / default.DIR)
    contours = {}
    for name in ("needs-you", "done", "error"):
        rate, samples = frames(root / "sounds" / f"{name}.wav")
        assert max(abs(s) for s in samples) < 32767  # never clipped
        assert samples[0] == 0 and abs(samples[-1]) < 200  # no click at either end
        tenth = rate // 10  # the first and the last 100 ms
        contours[name] = (pitch(rate, samples[:tenth]), pitch(rate, samples[-tenth:]))
    first, last = contours["needs-you"]
    assert last > first * 1.3  # rises: a question
    first, last = contours["done"]
    assert last < first * 0.8  # falls: settled
    assert max(contours["error"]) < min(contours["done"] + contours["needs-you"])  # lowest


def test_it_is_written_once_and_rewritten_when_damaged_or_outdated(tmp_path: Path) -> None:
    dest = tmp_path / "state" / default.DIR
    default.default_pack(dest)
    manifest = dest / "openpeon.json"
    inode = manifest.stat().st_ino
    default.default_pack(dest)
    assert manifest.stat().st_ino == inode  # current: untouched
    (dest / "sounds" / "done.wav").write_bytes(b"RIFF....WAVE")  # damaged: its sha256 differs
    default.default_pack(dest)
    load_pack(dest)
    assert manifest.stat().st_ino != inode
    manifest.write_text(manifest.read_text().replace(default.VERSION, "0.0.1"))  # an older one
    default.default_pack(dest)
    assert json.loads(manifest.read_text())["version"] == default.VERSION
    assert sorted(p.name for p in dest.parent.iterdir()) == [default.DIR, default.LOCK]


def test_two_processes_writing_it_at_once_leave_one_whole_pack(tmp_path: Path) -> None:
    dest = tmp_path / "state" / default.DIR
    go = tmp_path / "go"
    code = (
        "import sys, time, pathlib\n"
        "from lookout.sound import default, pack\n"
        "go = pathlib.Path(sys.argv[1])\n"
        "while not go.exists(): time.sleep(0.005)\n"
        "root = default.default_pack(pathlib.Path(sys.argv[2]))\n"
        "print(pack.load_pack(root)['name'])\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(go), str(dest)],
            stdout=subprocess.PIPE, cwd=ROOT, text=True,
        )
        for _ in range(2)
    ]  # fmt: skip
    go.touch()
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert outs == ["lookout\n", "lookout\n"]
    load_pack(dest)
    assert sorted(p.name for p in dest.parent.iterdir()) == [default.DIR, default.LOCK]
