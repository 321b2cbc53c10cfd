"""The plugin: .claude-plugin/plugin.json, marketplace.json and hooks/hooks.json (generated from
hookspec), its commands run through /bin/sh -c, and `claude plugin validate` of the real client."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from lookout import hookspec
from lookout.install import settings
from tests.e2e.client import CLAUDE_CODE_VERSION, claude_path, installed_version, offline_env
from tests.helpers import ROOT, VERSION

SCHEMA = json.loads((ROOT / "tests" / "fixtures" / "claude-code-settings.schema.json").read_text())
HOOKS_JSON = ROOT / "hooks" / "hooks.json"


def render_plugin_hooks() -> str:
    """The plugin's hooks/hooks.json: the same entries, run with the python3 on PATH."""
    wanted = settings.wanted_handlers(
        lambda script: settings.guarded(
            f'"${{CLAUDE_PLUGIN_ROOT}}/hooks/{script}"',
            f'python3 -I -S "${{CLAUDE_PLUGIN_ROOT}}/hooks/{script}"',
        )
    )
    hooks: dict[str, list[dict[str, Any]]] = {}
    for event, handler in wanted:
        hooks[event] = [{"hooks": [handler]}]
    doc = {
        "description": "lookout: records the status of every Claude Code session (stdlib only)",
        "hooks": hooks,
    }
    return json.dumps(doc, indent=2) + "\n"


def test_hooks_json_is_generated_from_hookspec() -> None:
    if os.environ.get("LOOKOUT_UPDATE_GOLDEN") == "1":
        HOOKS_JSON.write_text(render_plugin_hooks())
    assert HOOKS_JSON.read_text() == render_plugin_hooks(), (
        "hooks/hooks.json is stale: run LOOKOUT_UPDATE_GOLDEN=1 pytest tests/test_plugin.py"
    )


def test_hooks_json_validates_and_every_script_exists() -> None:
    doc = json.loads(HOOKS_JSON.read_text())
    jsonschema.validate({"hooks": doc["hooks"]}, SCHEMA)
    assert list(doc["hooks"]) == [event for event, _, _ in hookspec.EVENTS]
    for event, script, is_async in hookspec.EVENTS:
        (group,) = doc["hooks"][event]
        (handler,) = group["hooks"]
        path = f'"${{CLAUDE_PLUGIN_ROOT}}/hooks/{script}"'
        assert handler["command"] == (
            f"trap '' TERM; [ -f {path} ] || exit 0; exec python3 -I -S {path}"
        )
        assert handler["timeout"] == hookspec.TIMEOUT_S
        assert handler.get("async", False) is is_async
        assert (ROOT / "hooks" / script).is_file()


def test_manifest_and_marketplace() -> None:
    plugin = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    assert plugin["name"] == "lookout" and plugin["version"] == VERSION  # pyproject.toml's
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    assert market["plugins"][0]["name"] == "lookout" and market["plugins"][0]["source"] == "./"


def test_plugin_command_runs_through_sh_with_a_spaced_plugin_root(tmp_path: Path) -> None:
    if shutil.which("python3") is None:
        pytest.skip("no python3 on PATH")
    root = tmp_path / "plugin root's copy"
    shutil.copytree(
        ROOT / "lookout", root / "lookout", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(ROOT / "hooks", root / "hooks", ignore=shutil.ignore_patterns("__pycache__"))
    handler = json.loads(HOOKS_JSON.read_text())["hooks"]["Stop"][0]["hooks"][0]
    state = tmp_path / "state"
    env = dict(os.environ, CLAUDE_PLUGIN_ROOT=str(root), LOOKOUT_STATE_DIR=str(state))
    payload = (ROOT / "tests" / "fixtures" / "payloads" / "Stop.json").read_bytes()
    done = subprocess.run(
        ["/bin/sh", "-c", handler["command"]],
        input=payload,
        env=env,
        capture_output=True,
        timeout=30,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert '"Stop"' in (state / "events.jsonl").read_text()


def client() -> Path:
    binary = claude_path()
    if installed_version(binary) != CLAUDE_CODE_VERSION:
        pytest.skip(
            f"Claude Code {CLAUDE_CODE_VERSION} is not installed (the e2e suite installs it)"
        )
    return binary


def validate(binary: Path, target: Path, home: Path) -> subprocess.CompletedProcess[str]:
    home.mkdir(exist_ok=True)
    return subprocess.run(
        [str(binary), "plugin", "validate", "--strict", str(target)],
        env=offline_env(home, "http://127.0.0.1:9"),
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("target", ["", ".claude-plugin/plugin.json"], ids=["dir", "manifest"])
def test_claude_plugin_validate_strict_passes(tmp_path: Path, target: str) -> None:
    # --strict: a warning (a hook entry the client would ignore) fails too.
    done = validate(client(), ROOT / target, tmp_path / "home")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation passed" in done.stdout
    assert "hooks: Stop command \"trap '' TERM; [ -f " in done.stdout


def test_claude_plugin_validate_catches_a_broken_hooks_json(tmp_path: Path) -> None:
    # Shows the check above is real: the client does read hooks/hooks.json.
    copy = tmp_path / "plugin"
    (copy / "hooks").mkdir(parents=True)
    (copy / ".claude-plugin").mkdir()
    shutil.copy(ROOT / ".claude-plugin" / "plugin.json", copy / ".claude-plugin")
    (copy / "hooks" / "hooks.json").write_text('{"hooks": {"Stop": [{"hooks": "nope"}]}}')
    done = validate(client(), copy, tmp_path / "home")
    assert done.returncode == 1, done.stdout + done.stderr
