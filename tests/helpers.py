"""Helpers the tests share (fixtures live in conftest.py): captured payloads, the test's config
file, a recording program, and intents built the way the state machine builds them."""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from lookout.machine import make_intent
from lookout.shapes import Intent

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
PAYLOADS = FIXTURES / "payloads"
IN_CI = os.environ.get("CI", "").lower() == "true"


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


def build_intent(kind: str, defaults: dict[str, Any], fields: dict[str, Any]) -> Intent:
    """machine.make_intent with a test module's defaults, then `fields` (any Intent key)."""
    values = {"project": "demo", "tool_name": "Bash", **defaults, **fields}
    after = {key: values.pop(key) for key in ("ts", "seq") if key in values}
    built = make_intent(kind, values.pop("session_id", "s1"), values.pop("ts_ms", 0), **values)
    built.update(after)  # type: ignore[typeddict-item] # only Intent keys
    return built
