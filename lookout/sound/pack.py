"""A CESP pack on disk: where a channel's `pack` points, its openpeon.json read and every file it
names checked (inside the pack once symlinks are resolved, a regular file, at most 1 MiB, the
magic bytes of its format, the sha256 when given), and the choice of one sound. A pack is
untrusted input: nothing in it can make lookout read outside its directory, run anything or
choose a program (the player is the platform's; the pack only ever gives a file to play)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from lookout import paths
from lookout.errors import LookoutError
from lookout.sound import manifest
from lookout.sound.manifest import AUDIO_EXTENSIONS, is_pack_name, shown

TYPE_CHECKING = False
if TYPE_CHECKING:
    import random
    from collections.abc import Iterable
    from typing import TypedDict

    from lookout.sound.manifest import Entry, Manifest

    class Sound(TypedDict):
        file: str  # as the manifest names it
        path: Path  # where it is: resolved, inside the pack
        label: str
        format: str  # wav | mp3 | ogg

    class Pack(TypedDict):
        root: Path  # resolved
        shown: str  # as messages name it: the setting's path, ~ for the home directory
        name: str
        display_name: str
        version: str
        categories: dict[str, list[Sound]]
        aliases: dict[str, str]


MANIFEST = "openpeon.json"
MIB = 1024 * 1024
SOUND_MAX = MIB  # CESP 4.2: a file at most 1 MB, a preview 500 KB, the pack 50 MB
PREVIEW_MAX = 500 * 1024
PACK_MAX = 50 * MIB
MANIFEST_MAX = MIB
# CESP 4.4 and its appendix C; a WAV is a RIFF file of form WAVE.
MAGIC: dict[str, tuple[bytes, ...]] = {
    "wav": (b"RIFF",),
    "mp3": (b"ID3", b"\xff\xfb", b"\xff\xf3", b"\xff\xf2"),
    "ogg": (b"OggS",),
}
MAGIC_SHOWN = {"wav": "RIFF....WAVE", "mp3": "ID3 or an MPEG frame sync", "ogg": "OggS"}
_O_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class PackError(LookoutError):
    """A pack lookout will not play: every problem found, one per line, each starting with the
    file it is about (`~/.openpeon/packs/peon/openpeon.json: version: ...`)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(
            "\n".join(problems),
            hint="a pack is a directory with openpeon.json (CESP 1.0): see docs/notifications.md",
        )
        self.problems = problems


def spec_problem(spec: str) -> str | None:
    """Why a `pack` setting can name no pack, before the disk is asked (check-config's check of
    the key, in a hook too: no disk read)."""
    if is_pack_name(spec) or spec.startswith("/") or spec == "~" or spec.startswith("~/"):
        return None
    return (
        "expected a pack name in ~/.openpeon/packs/ (a-z, 0-9, '_' and '-') or a path"
        f" (/... or ~/...), got {shown(spec)}"
    )


def packs_dir() -> Path:
    """Where a pack named by its name is looked up (CESP 7.2's global pack directory)."""
    return Path(paths.home()) / ".openpeon" / "packs"


def locate(spec: str) -> Path:
    """The directory a `pack` setting names: a name in ~/.openpeon/packs/, else a path."""
    if is_pack_name(spec):
        return packs_dir() / spec
    return Path(paths.expanduser(spec))


def installed() -> list[str]:
    """The packs in ~/.openpeon/packs/ (directories with a manifest), by name."""
    try:
        found = sorted(p.name for p in packs_dir().iterdir() if (p / MANIFEST).is_file())
    except OSError:
        return []
    return [name for name in found if is_pack_name(name)]


def load_pack(spec: str | Path) -> Pack:
    """The pack `spec` names (a `pack` setting, or a directory), checked whole; PackError lists
    every problem."""
    root = locate(spec) if isinstance(spec, str) else spec
    label = paths.tilde(root)
    if not root.is_dir():
        if isinstance(spec, str) and is_pack_name(spec):
            names = installed()
            have = f"installed: {', '.join(names)}" if names else "none installed"
            raise PackError([f"no pack {spec!r} in {paths.tilde(packs_dir())}/ ({have})"])
        raise PackError([f"{label}: not a directory"])
    real = Path(os.path.realpath(root))
    reader = _Reader(real, label)
    data = reader.manifest()
    checked, problems = manifest.check(data) if data is not None else (None, [])
    reader.problems += [f"{label}/{MANIFEST}: {p}" for p in problems]
    if checked is None:
        raise PackError(reader.problems)
    pack = reader.files(checked)
    if reader.problems:
        raise PackError(reader.problems)
    return pack


class _Reader:
    """Reads one pack's files, never outside its (resolved) directory, collecting problems."""

    def __init__(self, real: Path, label: str) -> None:
        self.real = real
        self.label = label
        self.problems: list[str] = []
        self.sizes: dict[Path, int] = {}

    def manifest(self) -> object | None:
        import json

        where = f"{self.label}/{MANIFEST}"
        found = self.read(MANIFEST, MANIFEST_MAX, None)
        if isinstance(found, str):
            self.problems.append(f"{where}: {found}")
            return None
        try:
            value: object = json.loads(found[1].decode("utf-8"))
            return value
        except UnicodeDecodeError:
            self.problems.append(f"{where}: not UTF-8 text")
        except RecursionError:
            self.problems.append(f"{where}: nested too deeply")
        except ValueError as exc:
            self.problems.append(f"{where}: not valid JSON ({exc})")
        return None

    def files(self, m: Manifest) -> Pack:
        categories: dict[str, list[Sound]] = {}
        for category, entries in m["categories"].items():
            sounds = categories.setdefault(category, [])
            for i, entry in enumerate(entries):
                key = f"categories[{shown(category)}].sounds[{i}].file"
                sound = self.sound(entry, key)
                if sound is not None:
                    sounds.append(sound)
        if m["preview"] is not None:
            self.check_file(m["preview"], "preview", PREVIEW_MAX, None)
        total = sum(self.sizes.values())
        if total > PACK_MAX:
            limit = _size(PACK_MAX)
            self.problems.append(
                f"{self.label}: its files are {total} bytes, over the {limit} a pack may have"
            )
        return {
            "root": self.real,
            "shown": self.label,
            "name": m["name"],
            "display_name": m["display_name"],
            "version": m["version"],
            "categories": categories,
            "aliases": m["aliases"],
        }

    def sound(self, entry: Entry, key: str) -> Sound | None:
        path = self.check_file(entry["file"], key, SOUND_MAX, entry["sha256"])
        if path is None:
            return None
        fmt = AUDIO_EXTENSIONS["." + entry["file"].rpartition(".")[2].lower()]
        return {"file": entry["file"], "path": path, "label": entry["label"], "format": fmt}

    def check_file(self, rel: str, key: str, limit: int, sha256: str | None) -> Path | None:
        fmt = AUDIO_EXTENSIONS["." + rel.rpartition(".")[2].lower()]
        found = self.read(rel, limit, sha256)
        if isinstance(found, str):
            self.problems.append(f"{self.label}/{MANIFEST}: {key}: {shown(rel)} {found}")
            return None
        path, head = found
        if not head.startswith(MAGIC[fmt]) or (fmt == "wav" and head[8:12] != b"WAVE"):
            self.problems.append(
                f"{self.label}/{MANIFEST}: {key}: {shown(rel)} is not a {fmt.upper()} file: it"
                f" does not start with {MAGIC_SHOWN[fmt]} (CESP 4.4)"
            )
            return None
        return path

    def read(self, rel: str, limit: int, sha256: str | None) -> tuple[Path, bytes] | str:
        """(the resolved path, its first bytes, or all of them for the manifest or a hash
        check), or what is wrong. Never opens anything outside the pack, nor a FIFO or device
        (which could hang the sender)."""
        try:
            path = Path(os.path.realpath(self.real / rel, strict=True))
        except FileNotFoundError:
            return "is missing"
        except OSError as exc:
            return f"cannot be read ({exc.strerror or exc})"
        if path != self.real and self.real not in path.parents:
            return "leaves the pack directory (through a symlink)"
        try:
            fd = os.open(path, _O_FLAGS)
        except OSError as exc:
            return f"cannot be read ({exc.strerror or exc})"
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            return "is not a regular file"
        with os.fdopen(fd, "rb") as fh:
            if st.st_size > limit:
                return f"is {st.st_size} bytes, over the {_size(limit)} such a file may have"
            whole = rel == MANIFEST or sha256 is not None
            data = fh.read(limit + 1) if whole else fh.read(12)
        self.sizes[path] = st.st_size
        if sha256 is not None:
            import hashlib

            if hashlib.sha256(data).hexdigest() != sha256:
                return "does not match its sha256 in the manifest"
        return path, data


def _size(limit: int) -> str:
    return f"{limit // MIB} MiB" if limit % MIB == 0 else f"{limit // 1024} KiB"


def sounds_for(pack: Pack, category: str) -> list[Sound]:
    """CESP 5's lookup: the category itself, else what an alias maps it to, else nothing."""
    if category in pack["categories"]:
        return pack["categories"][category]
    target = pack["aliases"].get(category)
    return pack["categories"].get(target, []) if target else []


def pick_sound(
    pack: Pack,
    category: str,
    formats: Iterable[str] = tuple(AUDIO_EXTENSIONS.values()),
    avoid: str | None = None,
    rng: random.Random | None = None,
) -> Sound | None:
    """One of the category's sounds the player can play, at random, not `avoid` (the file
    played last for it) when there is another (CESP 7.1); None: the pack has none."""
    playable = [s for s in sounds_for(pack, category) if s["format"] in tuple(formats)]
    fresh = [s for s in playable if s["file"] != avoid] or playable
    if not fresh:
        return None
    if rng is None:
        import random

        rng = random.SystemRandom()
    return rng.choice(fresh)
