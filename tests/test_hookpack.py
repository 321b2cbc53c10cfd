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
from lookout.config import notify
from lookout.install import runtime, runtimes
from tests.helpers import PAYLOADS, ROOT, write_config
from tests.test_layout import HOOK_PATH, HOOK_STDLIB, bare_modules, modules_after_hook

PAYLOAD = (PAYLOADS / "PreToolUse-Bash.json").read_bytes()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the package and its hooks, with a pack written as install writes it."""
    home = tmp_path / "rt"
    for sub in ("lookout", "hooks"):
        shutil.copytree(ROOT / sub, home / sub, ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run(
        [sys.executable, "-I", "-c", runtimes.WRITE_PACK, str(home)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return home


def pack_of(home: Path, group: str = "record") -> Path:
    return Path(hookpack.pack_path(str(home / "lookout"), group))


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
    # The extension modules it needs, loaded from the files the pack names: no search either.
    assert run_hook(tree, "_json") | run_hook(tree, "fcntl") == set()
    assert events_recorded(state_dir) == 4
    assert not (state_dir / "errors.log").exists()


def test_the_pack_loads_the_same_modules_as_the_imports(tree: Path, tmp_path: Path) -> None:
    loaded = modules_after_hook(tmp_path, "pre_tool_use.py", "PreToolUse-Bash.json", root=tree)
    ours = {m for m in loaded if m == "lookout" or m.startswith("lookout.")}
    assert ours == HOOK_PATH
    assert loaded - ours - bare_modules() == HOOK_STDLIB


def test_a_recording_hook_reads_only_its_own_group(tree: Path, state_dir: Path) -> None:
    pack_of(tree, "notify").unlink()
    assert run_hook(tree) == {"lookout", "lookout.hookpack"}
    assert events_recorded(state_dir) == 1


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


@pytest.mark.parametrize("group", ["record", "notify"])
def test_a_module_failing_in_the_pack_leaves_nothing_half_loaded(tree: Path, group: str) -> None:
    pack = pack_of(tree, group)
    fmt, version, entries = marshal.loads(pack.read_bytes())
    last = f"lookout.{hookpack.GROUPS[group][-1]}"
    boom = compile("raise RuntimeError('boom')", "boom.py", "exec")
    entries = tuple(e if e[0] != last else (*e[:4], boom) for e in entries)
    pack.write_bytes(marshal.dumps((fmt, version, entries)))
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); from lookout import hookpack;"
        " group = sys.argv[2]; group == 'notify' and hookpack.load();"  # what notify runs after
        " names = [f'lookout.{n}' for n in hookpack.GROUPS[group]];"
        " print(hookpack.load(group), [n for n in names if n in sys.modules],"
        " [n for n in names if n.rpartition('.')[0] in sys.modules"
        " if hasattr(sys.modules[n.rpartition('.')[0]], n.rpartition('.')[2])])"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", probe, str(tree), group],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.stdout.split() == ["False", "[]", "[]"], done.stderr


# Dumps, as a hook ends, which lookout modules it loaded and which of them came from the pack (a
# module the pack ran has no import spec).
PROBE = """
import posix, sys
def dump(code):
    import gc
    with open(OUT, "w") as fh:
        fh.write(f"gc-enabled {gc.isenabled()}\\n")
        for name, m in sorted(sys.modules.items()):
            if name.startswith("lookout."):
                fh.write(f"{name} {getattr(m, '__spec__', None) is None}\\n")
    real(code)
real, posix._exit = posix._exit, dump
sys.argv = [SCRIPT]
exec(compile(open(SCRIPT).read(), SCRIPT, "exec"), {"__name__": "__main__", "__file__": SCRIPT})
"""


def test_a_turn_end_loads_the_notify_group_from_the_pack(
    tree: Path, tmp_path: Path, state_dir: Path
) -> None:
    write_config(notify.DEFAULT_TEXT)  # its `done` rule weighs a Stop
    out = tmp_path / "modules.txt"
    for script, name in (
        ("session_start.py", "SessionStart"),  # fills the hooks' config cache
        ("user_prompt_submit.py", "UserPromptSubmit"),
        ("stop.py", "Stop"),
    ):
        path = str(tree / "hooks" / script)
        code = PROBE.replace("OUT", repr(str(out))).replace("SCRIPT", repr(path))
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", code],
            input=(PAYLOADS / f"{name}.json").read_bytes(),
            capture_output=True,
            timeout=30,
        )
        assert done.returncode == 0 and done.stdout == b""
    loaded = dict(line.split() for line in out.read_text().splitlines())
    assert loaded.pop("gc-enabled") == "False"  # a hook never pays for a cycle collection
    notify_group = {f"lookout.{m}" for m in hookpack.GROUPS["notify"]}
    assert notify_group <= set(loaded)
    assert {name for name, packed in loaded.items() if packed == "True"} == (
        notify_group | {f"lookout.{m}" for m in hookpack.GROUPS["record"]}
    )
    assert b'"skipped"' in (state_dir / "deliveries.jsonl").read_bytes()  # the rules ran


def test_each_group_runs_its_modules_after_what_they_import() -> None:
    assert {
        "lookout",
        "lookout.hookpack",
        *(f"lookout.{m}" for m in hookpack.GROUPS["record"]),
    } == (HOOK_PATH)
    import ast

    for modules in hookpack.GROUPS.values():
        for i, name in enumerate(modules):
            path = ROOT / "lookout" / name.replace(".", "/")
            source = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
            used = set()
            for node in ast.parse(source.read_text()).body:  # module level: what runs at import
                if isinstance(node, ast.ImportFrom) and node.module == "lookout":
                    used |= {a.name for a in node.names}
                elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "lookout."
                ):
                    module = node.module.partition(".")[2]
                    used |= {module, *(f"{module}.{a.name}" for a in node.names)}
            assert used & set(modules) <= set(modules[:i]), name
            if "." in name:
                assert name.rpartition(".")[0] in modules[:i], name  # its package first


@pytest.mark.real
def test_install_writes_a_current_pack(tmp_path: Path, state_dir: Path) -> None:
    home = tmp_path / "runtime"
    runtime.install_code(home, sys.executable)
    code = runtimes.code_root(home)
    assert all(pack_of(code, group).exists() for group in hookpack.GROUPS)
    assert run_hook(home) == {"lookout", "lookout.hookpack"}
    assert events_recorded(state_dir) == 1
