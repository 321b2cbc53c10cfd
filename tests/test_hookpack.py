"""The precompiled hook path (lookout/hookpack.py): a hook of a runtime with a current pack loads
the hook path from it (no import searches), and anything else (an edited source, a torn pack,
another interpreter's, a module failing) falls back to the normal imports, recording as before."""

from __future__ import annotations

import marshal
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lookout import hookpack
from lookout.install import runtime
from tests.helpers import PAYLOADS, ROOT
from tests.test_layout import HOOK_PATH, HOOK_STDLIB, bare_modules, modules_after_hook

PAYLOAD = (PAYLOADS / "PreToolUse-Bash.json").read_bytes()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the package and its hooks, with a pack written as install writes it."""
    home = tmp_path / "rt"
    for sub in ("lookout", "hooks"):
        shutil.copytree(ROOT / sub, home / sub, ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run(
        [sys.executable, "-I", "-c", runtime._WRITE_PACK, str(home)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return home


def pack_of(home: Path) -> Path:
    return Path(hookpack.pack_path(str(home / "lookout")))


def run_hook(home: Path, prefix: str = "lookout") -> set[str]:
    """Runs the tree's PreToolUse hook as installed; the modules (lookout's, by default) it
    imported the normal way (`-X importtime` names every module that went through an import
    search)."""
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", str(home / "hooks" / "pre_tool_use.py")],
        input=PAYLOAD,
        capture_output=True,
        env=os.environ.copy(),
        timeout=30,
    )
    assert done.returncode == 0 and done.stdout == b""
    return {
        line.rpartition("|")[2].strip()
        for line in done.stderr.decode().splitlines()
        if line.rpartition("|")[2].strip().startswith(prefix)
    }


def events_recorded(state_dir: Path) -> int:
    return (state_dir / "events.jsonl").read_bytes().count(b"\n")


def test_a_current_pack_replaces_the_hook_paths_imports(tree: Path, state_dir: Path) -> None:
    assert run_hook(tree) == {"lookout", "lookout.hookpack"}
    assert run_hook(tree, "__future__") == set()  # the standard module every one imports
    assert events_recorded(state_dir) == 2
    assert not (state_dir / "errors.log").exists()


def test_the_pack_loads_the_same_modules_as_the_imports(tree: Path, tmp_path: Path) -> None:
    loaded = modules_after_hook(tmp_path, "pre_tool_use.py", "PreToolUse-Bash.json", root=tree)
    ours = {m for m in loaded if m == "lookout" or m.startswith("lookout.")}
    assert ours == HOOK_PATH
    assert loaded - ours - bare_modules() == HOOK_STDLIB


def test_without_a_pack_the_hook_imports_as_before(tree: Path, state_dir: Path) -> None:
    pack_of(tree).unlink()
    assert run_hook(tree) == HOOK_PATH
    assert events_recorded(state_dir) == 1


def test_an_edited_source_is_read_from_itself_not_the_pack(tree: Path, state_dir: Path) -> None:
    machine = tree / "lookout" / "machine.py"
    machine.write_text(machine.read_text() + "\n# edited after the pack was made\n")
    assert run_hook(tree) == HOOK_PATH
    assert events_recorded(state_dir) == 1


@pytest.mark.parametrize("damage", ["torn", "empty", "not marshal", "another interpreter"])
def test_a_bad_pack_falls_back_silently(tree: Path, state_dir: Path, damage: str) -> None:
    pack = pack_of(tree)
    data = pack.read_bytes()
    if damage == "torn":
        pack.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        pack.write_bytes(b"")
    elif damage == "not marshal":
        pack.write_bytes(b"\x00garbage" * 100)
    else:
        fmt, version, entries = marshal.loads(data)
        pack.write_bytes(marshal.dumps((fmt, version + 1, entries)))
    assert run_hook(tree) == HOOK_PATH
    assert events_recorded(state_dir) == 1
    assert not (state_dir / "errors.log").exists()


def test_a_module_failing_in_the_pack_leaves_nothing_half_loaded(tree: Path) -> None:
    pack = pack_of(tree)
    fmt, version, entries = marshal.loads(pack.read_bytes())
    boom = compile("raise RuntimeError('boom')", "runner.py", "exec")
    entries = tuple(e if e[0] != "lookout.runner" else (*e[:4], boom) for e in entries)
    pack.write_bytes(marshal.dumps((fmt, version, entries)))
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); from lookout import hookpack;"
        " print(hookpack.load(), sorted(m for m in sys.modules if m.startswith('lookout.')),"
        " [n for n in hookpack.MODULES if hasattr(sys.modules['lookout'], n)])"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", probe, str(tree)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.stdout.split() == ["False", "['lookout.hookpack']", "[]"]


def test_the_pack_holds_exactly_the_hook_path_in_import_order() -> None:
    assert {"lookout", "lookout.hookpack", *(f"lookout.{m}" for m in hookpack.MODULES)} == (
        HOOK_PATH
    )
    import ast

    for i, name in enumerate(hookpack.MODULES):
        tree = ast.parse((ROOT / "lookout" / f"{name}.py").read_text())
        used = set()
        for node in tree.body:  # module level only: what runs when the module is executed
            if isinstance(node, ast.ImportFrom) and node.module == "lookout":
                used |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lookout."):
                used.add(node.module.partition(".")[2])
        assert used & set(hookpack.MODULES) <= set(hookpack.MODULES[:i]), name


@pytest.mark.real
def test_install_writes_a_current_pack(tmp_path: Path, state_dir: Path) -> None:
    home = tmp_path / "runtime"
    runtime.install_code(home, sys.executable)
    assert pack_of(home).exists()
    assert run_hook(home) == {"lookout", "lookout.hookpack"}
    assert events_recorded(state_dir) == 1
