"""The package's import regimes, pinned: a hook that notifies nobody loads only the flat hook-path
modules (stdlib only, no json/typing); notify/ loads only when a turn ends or blocks; install/,
commands/ and the optional servers never load in a hook."""

from __future__ import annotations

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
    "lookout.words",
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
    source = FIXTURES / payload if "/" in payload else PAYLOADS / payload
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code],
        input=source.read_bytes(),
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


@pytest.mark.parametrize(
    ("script", "payload"),
    [
        ("gemini.py", "gemini/BeforeTool.json"),
        ("cursor.py", "cursor/afterShellExecution.json"),
        ("copilot.py", "copilot/preToolUse-bash.json"),
    ],
)
def test_another_agents_hook_adds_only_the_adapters(
    tmp_path: Path, state_dir: Path, script: str, payload: str
) -> None:
    write_config("# no rules\n")
    answer = b"{}\n" if script == "cursor.py" else b""  # Cursor needs JSON on stdout
    loaded = modules_after_hook(tmp_path, script, payload, answer)
    ours = {m for m in loaded if m == "lookout" or m.startswith("lookout.")}
    assert ours == HOOK_PATH | {"lookout.adapters"}
    assert not (loaded & HEAVY_STDLIB)


def test_a_notifying_hook_loads_notify_but_never_install_or_commands(
    tmp_path: Path, state_dir: Path
) -> None:
    # The default config alerts the desktop on a permission: the rules run, a sender is spawned.
    loaded = modules_after_hook(tmp_path, "permission_request.py", "PermissionRequest-Bash.json")
    ours = {m for m in loaded if m.startswith("lookout.")}
    assert {"lookout.notify.handle", "lookout.notify.rules", "lookout.config.cache"} <= ours
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


def _imports(path: Path) -> set[str]:
    """Every module `path` imports, at any depth (lazy imports count too)."""
    import ast

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_the_sender_reaches_jump_and_reconcile_through_one_module_each() -> None:
    notify = sorted((ROOT / "lookout" / "notify").glob("*.py"))
    for target, only in (("lookout.jump", "focus.py"), ("lookout.reconcile", "escalate.py")):
        importers = {p.name for p in notify if target in _imports(p)}
        assert importers == {only}, target


@pytest.mark.parametrize("package", ["config", "notify"])
def test_these_package_inits_hold_only_a_docstring(package: str) -> None:
    import ast

    body = ast.parse((ROOT / "lookout" / package / "__init__.py").read_text()).body
    assert len(body) == 1 and isinstance(body[0], ast.Expr)
