"""The recording stand-ins of tests/fixtures/platforms on PATH (first), their calls read back."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.helpers import FIXTURES

STANDINS = FIXTURES / "platforms"


class Standins:
    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, only: tuple[str, ...]):
        self.log = tmp_path / "standins.jsonl"
        self.bin = tmp_path / "standin-bin"
        self.bin.mkdir()
        for name in only:  # each test chooses which notifiers "are installed"
            (self.bin / name).symlink_to(STANDINS / name)
        # The stand-ins' `#!/usr/bin/env python3`, also for a test that narrows PATH to this.
        (self.bin / "python3").symlink_to(sys.executable)
        monkeypatch.setenv("LOOKOUT_STANDIN_LOG", str(self.log))
        monkeypatch.setenv("PATH", f"{self.bin}{os.pathsep}{os.environ['PATH']}")

    def calls(self, prog: str | None = None) -> list[dict[str, object]]:
        if not self.log.exists():
            return []
        found = [json.loads(line) for line in self.log.read_text().splitlines()]
        return [c for c in found if prog is None or c["prog"] == prog]

    def argvs(self, prog: str) -> list[list[str]]:
        return [c["argv"] for c in self.calls(prog)]  # type: ignore[misc]


def standins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, platform: str, *only: str
) -> Standins:
    from lookout.platform import current

    monkeypatch.setenv("LOOKOUT_PLATFORM", platform)
    current.reset()
    return Standins(tmp_path, monkeypatch, only)
