"""lookout's own sound pack: short tones synthesized here (no third-party audio), each category
its own shape, so "needs you" (rising), "done" (falling, resolved) and "error" (low, falling)
tell apart without a look. Written on demand, whole or not at all, into the state directory."""

from __future__ import annotations

import os
from pathlib import Path

from lookout import store
from lookout.sound.pack import MANIFEST, PackError, load_pack

NAME = "lookout"
# This pack's version: change it with any tone, and every pack written before is rewritten.
VERSION = "1.0.0"
DIR = "sound-pack"  # in the state directory
LOCK = "sound.lock"  # beside it; the debounce store takes the same lock, never both at once
RATE = 22050
LEVEL = 0.45  # of full scale: a chime, not an alarm

# (file, category, label, notes): each note (frequency in Hz, length in ms), 0 Hz a rest.
TONES: tuple[tuple[str, str, str, tuple[tuple[int, int], ...]], ...] = (
    ("needs-you.wav", "input.required", "two rising chimes: a session needs you",
     ((880, 110), (0, 40), (1319, 220))),
    ("done.wav", "task.complete", "a falling arpeggio: a turn is done",
     ((784, 90), (659, 90), (523, 240))),
    ("error.wav", "task.error", "two low falling tones: a turn failed",
     ((311, 170), (0, 30), (233, 280))),
    ("limit.wav", "resource.limit", "three low pulses: a usage limit",
     ((392, 70), (0, 50), (392, 70), (0, 50), (392, 70))),
    ("start.wav", "session.start", "one short high tone: a session started", ((1047, 120),)),
    ("end.wav", "session.end", "one short low tone: a session ended", ((523, 160),)),
)  # fmt: skip


def tone(notes: tuple[tuple[int, int], ...], rate: int = RATE) -> bytes:
    """16-bit mono PCM of `notes`: a sine with a soft second harmonic (a bell more than a
    beep), a 5 ms attack, an exponential decay and a 5 ms release, so nothing clicks."""
    import array
    import math
    import sys

    samples = array.array("h")
    edge = rate * 5 // 1000
    for freq, ms in notes:
        n = rate * ms // 1000
        for i in range(n):
            if freq == 0:
                samples.append(0)
                continue
            t = i / rate
            env = min(1.0, i / edge, (n - i) / edge) * math.exp(-3.0 * i / n)
            wave = math.sin(2 * math.pi * freq * t) + 0.25 * math.sin(4 * math.pi * freq * t)
            samples.append(round(32767 * LEVEL * env * wave / 1.25))
    if sys.byteorder == "big":
        samples.byteswap()  # WAV is little-endian
    return samples.tobytes()


def wav(pcm: bytes, rate: int = RATE) -> bytes:
    import io
    import wave

    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm)
    return buf.getvalue()


def build() -> dict[str, bytes]:
    """The pack's files by their path in it: the WAVs and the manifest naming them."""
    import hashlib
    import json

    files = {f"sounds/{name}": wav(tone(notes)) for name, _cat, _label, notes in TONES}
    categories = {
        category: {
            "sounds": [
                {
                    "file": f"sounds/{name}",
                    "label": label,
                    "sha256": hashlib.sha256(files[f"sounds/{name}"]).hexdigest(),
                }
            ]
        }
        for name, category, label, _notes in TONES
    }
    manifest = {
        "cesp_version": "1.0",
        "name": NAME,
        "display_name": "lookout tones",
        "version": VERSION,
        "description": "Short tones lookout synthesizes itself: needs you, done, error, limit,"
        " start, end",
        "author": {"name": "lookout"},
        "license": "MIT",
        "categories": categories,
    }
    files[MANIFEST] = (json.dumps(manifest, indent=2) + "\n").encode("ascii")
    return files


def current(dest: Path) -> bool:
    """Whether `dest` holds this version's pack, whole and valid."""
    try:
        pack = load_pack(dest)
    except PackError:
        return False
    return pack["name"] == NAME and pack["version"] == VERSION


def default_pack(dest: Path) -> Path:
    """lookout's pack at `dest`, written first when it is missing, outdated or damaged: built
    beside it and renamed into place, under a lock, so a reader never sees half of it."""
    parent = dest.parent
    with store.Locked(str(parent), LOCK):
        if current(dest):
            return dest
        import shutil

        tmp = parent / f".{dest.name}.{os.getpid()}.tmp"
        old = parent / f".{dest.name}.{os.getpid()}.old"
        try:
            shutil.rmtree(tmp, ignore_errors=True)
            for rel, data in build().items():
                path = tmp / rel
                path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
            if dest.is_symlink() or dest.exists():
                os.rename(dest, old)
            os.rename(tmp, dest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
            if old.is_symlink():
                old.unlink()  # rmtree never follows one
            shutil.rmtree(old, ignore_errors=True)
    return dest
