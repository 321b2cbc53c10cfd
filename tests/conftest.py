"""Every test runs with HOME, XDG dirs, lookout's state/config and Claude's config dir pointed at
its own temporary directory: nothing here may touch the real ~/.claude or ~/.config."""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
PAYLOADS = FIXTURES / "payloads"
IN_CI = os.environ.get("CI", "").lower() == "true"


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("LOOKOUT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("LOOKOUT_CONFIG", str(home / ".config" / "lookout" / "config.toml"))
    monkeypatch.setenv("LOOKOUT_HOME", str(home / ".local" / "share" / "lookout"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    for var in ("CLAUDE_PID", "TMUX_PANE", "TMUX", "CLAUDE_PROJECT_DIR", "CLAUDE_CODE_SESSION_ID"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


def payload(name: str) -> dict[str, object]:
    """A payload captured from Claude Code 2.1.332, by file stem (e.g. "PreToolUse-Bash")."""
    return json.loads((PAYLOADS / f"{name}.json").read_text())


def require_binary(name: str) -> str:
    """The binary's path; skip when absent, except in CI where its absence is a failure."""
    path = shutil.which(name)
    if path is None:
        if IN_CI:
            pytest.fail(f"{name} is not installed (CI must install it: see .ci/run)")
        pytest.skip(f"{name} is not installed")
    return path


def write_config(text: str) -> None:
    """Write the test's global lookout config ($LOOKOUT_CONFIG)."""
    path = Path(os.environ["LOOKOUT_CONFIG"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def no_notifications() -> None:
    # A config without rules: recording events here must not start notification senders.
    write_config("# no rules\n")


def recorder(tmp_path: Path) -> tuple[Path, Path]:
    """A program that appends its argv (one JSON line) to a log: (program, log)."""
    log = tmp_path / "calls.jsonl"
    prog = tmp_path / "bin" / "record"
    prog.parent.mkdir(exist_ok=True)
    prog.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
    )
    prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    return prog, log


def calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
