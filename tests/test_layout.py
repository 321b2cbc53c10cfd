"""The package's import regimes, pinned: a hook that notifies nobody loads only the flat hook-path
modules (stdlib only, no json/typing); notify/ loads only when a turn ends or blocks; install/,
commands/ and the optional servers never load in a hook."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import FIXTURES, PAYLOADS, ROOT, write_config

HOOK_PATH = {
    "lookout",
    "lookout._jsonfast",
    "lookout.events",
    "lookout.hookspec",
    "lookout.machine",
    "lookout.paths",
    "lookout.runner",
    "lookout.store",
}
# What a hook must never import, at any cost: each would cost milliseconds on every tool call.
HEAVY_STDLIB = {"json", "typing", "subprocess", "urllib", "tomllib", "threading", "pathlib"}

PROBE = """
import atexit, sys
def dump():
    with open({out!r}, "w") as fh:
        fh.write("\\n".join(sorted(sys.modules)))
atexit.register(dump)
sys.argv = [{script!r}]
with open({script!r}) as fh:
    source = fh.read()
exec(compile(source, {script!r}, "exec"), {{"__name__": "__main__", "__file__": {script!r}}})
"""


def modules_after_hook(tmp_path: Path, script: str, payload: str, answer: bytes = b"") -> set[str]:
    """sys.modules at the exit of a real hook script run as the installed command runs it."""
    out = tmp_path / "modules.txt"
    code = PROBE.format(out=str(out), script=str(ROOT / "hooks" / script))
    name, _, line = payload.partition(":")  # FILE:N: line N of a .jsonl
    source = FIXTURES / name if "/" in name else PAYLOADS / name
    data = source.read_bytes()
    if line:
        data = data.splitlines()[int(line) - 1]
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code],
        input=data,
        capture_output=True,
        env=os.environ.copy(),
        timeout=30,
    )
    assert done.returncode == 0 and done.stdout == answer
    return set(out.read_text().split("\n"))


@pytest.mark.parametrize(
    ("script", "payload"),
    [("pre_tool_use.py", "PreToolUse-Bash.json"), ("post_tool_use.py", "PostToolUse-Bash.json")],
)
def test_a_recording_hook_imports_only_the_hook_path(
    tmp_path: Path, state_dir: Path, script: str, payload: str
) -> None:
    write_config("# no rules\n")
    loaded = modules_after_hook(tmp_path, script, payload)
    ours = {m for m in loaded if m == "lookout" or m.startswith("lookout.")}
    assert ours == HOOK_PATH
    assert not (loaded & HEAVY_STDLIB)
    assert (state_dir / "events.jsonl").exists()  # it did record


AGENT_HOOKS = [
    ("gemini", "gemini/BeforeTool.json"),
    ("cursor", "cursor/afterShellExecution.json"),
    ("copilot", "copilot/preToolUse-bash.json"),
    ("opencode", "opencode/plugin-tui-allow.jsonl:3"),  # its tool.start
]


@pytest.mark.parametrize(("agent", "payload"), AGENT_HOOKS)
def test_another_agents_hook_adds_only_its_own_module(
    tmp_path: Path, state_dir: Path, agent: str, payload: str
) -> None:
    write_config("# no rules\n")
    answer = b"{}\n" if agent == "cursor" else b""  # Cursor needs JSON on stdout
    loaded = modules_after_hook(tmp_path, f"{agent}.py", payload, answer)
    ours = {m for m in loaded if m == "lookout" or m.startswith("lookout.")}
    # Never the registry, nor another agent's module: each would cost every hook of this agent.
    others = {f"lookout.agents.{a}" for a, _ in AGENT_HOOKS if a != agent}
    others |= {"lookout.agents.codex", "lookout.agents.claude"}
    assert not (ours & (others | {"lookout.agents.registry", "lookout.agents.base"}))
    assert ours == HOOK_PATH | {"lookout.agents", f"lookout.agents.{agent}"}
    assert not (loaded & HEAVY_STDLIB)


def test_a_codex_notify_hook_adds_only_the_codex_module(tmp_path: Path, state_dir: Path) -> None:
    write_config("# no rules\n")
    out = tmp_path / "modules.txt"
    script = str(ROOT / "hooks" / "codex_notify.py")
    code = PROBE.format(out=str(out), script=script).replace(
        f"sys.argv = [{script!r}]", f"sys.argv = [{script!r}, sys.stdin.read()]"
    )
    turn = {"type": "agent-turn-complete", "thread-id": "t1", "cwd": "/tmp"}
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code],
        input=json.dumps(turn).encode(),
        capture_output=True,
        env=os.environ.copy(),
        timeout=30,
    )
    assert (done.returncode, done.stdout) == (0, b"")
    loaded = set(out.read_text().split("\n"))
    ours = {m for m in loaded if m == "lookout" or m.startswith("lookout.")}
    # A turn ended, so notify loaded too (as for any Stop); of the agents, only Codex's module.
    assert ours >= HOOK_PATH
    assert {m for m in ours if m.startswith("lookout.agents")} == {
        "lookout.agents",
        "lookout.agents.codex",
    }
    assert not {m for m in ours if m.startswith(("lookout.install", "lookout.commands"))}
    assert not (loaded & {"json", "subprocess", "urllib", "threading"})
    assert (state_dir / "events.jsonl").exists()  # it did record


def test_a_notifying_hook_loads_notify_but_never_install_or_commands(
    tmp_path: Path, state_dir: Path
) -> None:
    # The default config alerts the desktop on a permission: the rules run, a sender is spawned.
    loaded = modules_after_hook(tmp_path, "permission_request.py", "PermissionRequest-Bash.json")
    ours = {m for m in loaded if m.startswith("lookout.")}
    assert "lookout.notify" in ours and "lookout.notify.rules" in ours
    never = ("lookout.install", "lookout.commands", "lookout.web")
    assert not {m for m in ours if m.startswith(never)}
    assert "lookout.notify.sender" not in ours  # the sender runs in its own process
    assert not (loaded & {"json", "subprocess", "urllib", "threading"})


def test_every_subpackage_is_shipped() -> None:
    # pyproject lists packages explicitly; a new subpackage missing there would be left out of
    # `pip install .` although the checkout works.
    text = (ROOT / "pyproject.toml").read_text()
    for init in sorted((ROOT / "lookout").rglob("__init__.py")):
        name = ".".join(init.parent.relative_to(ROOT).parts)
        assert f'"{name}"' in text, f"{name} is not listed in pyproject's packages"
