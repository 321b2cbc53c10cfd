"""Recording stand-in players (tests/fixtures/sound/bin/player) on a PATH of their own: the real
aplay this machine may have is never reached from these tests, and every call is read back."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.helpers import FIXTURES

SOUND = FIXTURES / "sound"
PACKS = SOUND / "valid"
BIN = SOUND / "bin"


class Players:
    def __init__(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, platform: str, names: tuple[str, ...]
    ) -> None:
        from lookout.platform import current

        self.log = tmp_path / "players.jsonl"
        self.bin = tmp_path / "player-bin"
        self.bin.mkdir()
        self.runtime = tmp_path / "run-user"
        self.runtime.mkdir()
        for name in names:  # each test chooses which players "are installed"
            self.install(name)
        (self.bin / "python3").symlink_to(sys.executable)  # the stand-in's `env python3`
        monkeypatch.setenv("PATH", str(self.bin))
        monkeypatch.setenv("LOOKOUT_STANDIN_LOG", str(self.log))
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(self.runtime))
        for var in ("PULSE_SERVER", "PIPEWIRE_REMOTE", "LOOKOUT_STANDIN_EXIT"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("LOOKOUT_PLATFORM", platform)
        current.reset()

    def install(self, name: str, script: str = "player") -> Path:
        link = self.bin / name
        if link.is_symlink():
            link.unlink()
        link.symlink_to(BIN / script)
        return link

    def server(self, kind: str) -> Path:
        """A sound server's socket where the players look for it (an empty file will do)."""
        path = self.runtime / ("pipewire-0" if kind == "pipewire" else "pulse/native")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
        return path

    def calls(self) -> list[dict[str, object]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


def players(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *names: str, platform: str = "linux"
) -> Players:
    return Players(tmp_path, monkeypatch, platform, names)


def copy_pack(name: str, dest: Path) -> Path:
    """A fixture pack copied (symlinks as links) to `dest`, to change or to install."""
    shutil.copytree(PACKS / name, dest, symlinks=True)
    return dest


def sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()
