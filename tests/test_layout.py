"""The package's import regimes, pinned: a hook that notifies nobody loads only the flat hook-path
modules (stdlib only, no json/typing); notify/ loads only when a turn ends or blocks; install/,
commands/ and the optional servers never load in a hook."""

from __future__ import annotations

import ast
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
    "lookout.hookpack",
    "lookout.machine",
    "lookout.paths",
    "lookout.procs",
    "lookout.runner",
    "lookout.store",
    "lookout.words",
}
# What a hook must never import, at any cost: each would cost milliseconds on every tool call.
HEAVY_STDLIB = {"json", "typing", "subprocess", "urllib", "tomllib", "threading", "pathlib", "os"}
# Nor the version (lookout.version): importlib.metadata alone costs more than a whole hook.
HEAVY_STDLIB |= {"importlib.metadata", "argparse"}
# All a recording hook adds to a bare `python -I -S`'s modules besides its own: os alone (with
# _collections_abc) would cost ~1 ms, zlib's shared library ~0.3 ms (issue 23).
HOOK_STDLIB = {"__future__", "_json", "_stat", "fcntl", "gc"}  # gc: built in, to switch it off

# Dumps sys.modules as the script ends: at exit, or at the hook's posix._exit (no atexit then).
PROBE = """
import atexit, posix, sys
def dump():
    with open({out!r}, "w") as fh:
        fh.write("\\n".join(sorted(sys.modules)))
atexit.register(dump)
real_exit = posix._exit
def fast_exit(code):
    dump()
    real_exit(code)
posix._exit = fast_exit
sys.argv = [{script!r}]
with open({script!r}) as fh:
    source = fh.read()
exec(compile(source, {script!r}, "exec"), {{"__name__": "__main__", "__file__": {script!r}}})
"""


def bare_modules() -> set[str]:
    """sys.modules of a bare `python -I -S` running the probe's own imports."""
    code = "import atexit, posix, sys; print('\\n'.join(sys.modules))"
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=30
    )
    return set(done.stdout.split())


def modules_after_hook(
    tmp_path: Path, script: str, payload: str, answer: bytes = b"", root: Path = ROOT
) -> set[str]:
    """sys.modules at the exit of a real hook script (of `root`: the checkout or a runtime) run
    as the installed command runs it."""
    out = tmp_path / "modules.txt"
    code = PROBE.format(out=str(out), script=str(root / "hooks" / script))
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
    assert loaded - ours - bare_modules() == HOOK_STDLIB
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
    assert {"lookout.notify.handle", "lookout.notify.rules", "lookout.config.cache"} <= ours
    never = ("lookout.install", "lookout.commands", "lookout.web", "lookout.version")
    assert not {m for m in ours if m.startswith(never)}
    assert "lookout.sender.sender" not in ours  # the sender runs in its own process
    assert not (loaded & {"json", "subprocess", "urllib", "threading", "importlib.metadata"})


def test_a_turn_end_the_rules_weigh_loads_no_os(tmp_path: Path, state_dir: Path) -> None:
    # Stop: the default config's `done` rule weighs it (too short: a skipped line for explain)
    # with the config from the hooks' cache. Every turn pays this path: `os` alone was ~1 ms.
    for script, payload in (
        ("session_start.py", "SessionStart.json"),  # parses the config once, fills the cache
        ("user_prompt_submit.py", "UserPromptSubmit.json"),
    ):
        modules_after_hook(tmp_path, script, payload)
    loaded = modules_after_hook(tmp_path, "stop.py", "Stop.json")
    assert {"lookout.notify.handle", "lookout.notify.rules", "lookout.config.cache"} <= loaded
    assert not (loaded & (HEAVY_STDLIB | {"lookout.config.files", "tomllib"}))
    # Nor a channel type: the rules read each channel's traits from the cached config.
    assert not {m for m in loaded if m.startswith("lookout.channels")}
    assert b'"skipped"' in (state_dir / "deliveries.jsonl").read_bytes()  # the rule did weigh it


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
    sender = sorted((ROOT / "lookout" / "sender").glob("*.py"))
    for target, only in (("lookout.jump", "deliver.py"), ("lookout.reconcile", "escalate.py")):
        importers = {
            p.name
            for p in sender
            if any(m == target or m.startswith(target + ".") for m in _imports(p))
        }
        assert importers == {only}, target


@pytest.mark.parametrize(
    "init",
    sorted(p.relative_to(ROOT / "lookout") for p in (ROOT / "lookout").rglob("__init__.py")),
    ids=str,
)
def test_package_inits_hold_only_a_docstring(init: Path) -> None:
    # pre-commit's way: a package's __init__ says what is in it; the code lives in modules.
    import ast

    body = ast.parse((ROOT / "lookout" / init).read_text()).body
    assert len(body) == 1 and isinstance(body[0], ast.Expr)


# -- the import graph (issue 20): no circle, and nothing reaches up into the CLI -------------------

PACKAGE = ROOT / "lookout"
# `python -m lookout` is the CLI's entry point: the one module outside commands/ that may import it.
ENTRY_POINTS = {"lookout.__main__"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _resolve(name: str) -> str | None:
    """The lookout module an import of `name` runs (a name inside a module: that module)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and (
        (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
        or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")
    )


def imports_of(module: str) -> set[str]:
    """Every lookout module `module` imports, at the top or inside a function (a lazy import runs
    too, only later); not those under `if TYPE_CHECKING:`, which never run."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    pending: list[ast.AST] = [ast.parse(path.read_text(encoding="utf-8"))]
    while pending:
        node = pending.pop()
        if _type_checking_only(node):
            continue
        pending.extend(ast.iter_child_nodes(node))
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            # `from lookout.web import routes` imports the module routes; `from x import name`, x.
            targets = [f"{base}.{alias.name}" for alias in node.names]
            targets = [t if t in MODULES else base for t in targets]
        found.update(r for r in map(_resolve, targets) if r is not None and r != module)
    return found


GRAPH = {module: imports_of(module) for module in MODULES}


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The import circles: each set of modules that import one another round. A module is on a
    circle when a depth-first walk of what it imports comes back to it; its circle is every
    module it reaches that reaches it again."""
    found: list[set[str]] = []
    for start in sorted(graph):
        if any(start in circle for circle in found):
            continue
        ahead = _reachable(graph, start)
        if start in ahead:
            found.append({m for m in ahead if start in _reachable(graph, m)})
    return found


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    stack = [start]
    while stack:
        for there in graph[stack.pop()]:
            if there not in seen:
                seen.add(there)
                stack.append(there)
    return seen


def test_the_import_scan_sees_top_level_lazy_and_relative_imports() -> None:
    # The scanner itself: what a module imports at the top and in a function, not for typing.
    assert "lookout.sessions" in GRAPH["lookout.commands.status"]
    assert "lookout.jump.locate" in GRAPH["lookout.commands.status"]  # a lazy import
    assert "lookout.web.server" not in GRAPH["lookout.web.routing"]  # under TYPE_CHECKING
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_nothing_outside_the_cli_imports_it() -> None:
    upward = {
        (module, target)
        for module, targets in GRAPH.items()
        for target in targets
        if target.startswith("lookout.commands")
        and not module.startswith("lookout.commands")
        and module not in ENTRY_POINTS
    }
    assert not upward, "import lookout.sessions (the read model), not the CLI: " + repr(upward)


def test_no_import_circle() -> None:
    found = circles(GRAPH)
    assert not found, f"import circles: {[sorted(c) for c in found]}"


def cli_imports(*commands: str | None) -> set[str]:
    """The lookout modules that declaring `commands` (None: `lookout --help`) loads, beyond
    commands/main.py's own."""
    code = (
        "import sys; from lookout.commands import main; known = set(sys.modules);"
        f" [main.build_parser(c) for c in {commands!r}];"
        " print('\\n'.join(m for m in set(sys.modules) - known if m.startswith('lookout')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=30
    )
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_the_cli_loads_a_command_module_only_when_that_command_runs() -> None:
    # pip's commands_dict: `lookout --help` lists the table in commands/main.py, and a command
    # line loads its own command's module, no other.
    assert {m for m in cli_imports(None) if m.startswith("lookout.commands.")} == {
        "lookout.commands.args"
    }
    assert {m for m in cli_imports("prune") if m.startswith("lookout.commands.")} == {
        "lookout.commands.args",
        "lookout.commands.prune",
    }
    # `lookout uninstall` shares install.py's options (install/cli.py): only it loads them.
    installer = {"lookout.install", "lookout.install.cli"}
    assert not cli_imports("status", "tail", "prune", "jump", "explain") & installer
    assert {m for m in cli_imports("uninstall") if m.startswith("lookout.install")} == installer


# -- the floors (issue 34): every import runs down, no private name crosses a folder -------------

# A room is a folder (lookout/notify/, with commands/doctor/ in commands/) or a flat module; the
# ground is one room: the leaf modules, which import nothing of lookout but one another.
GROUND = {
    "lookout",
    "lookout._jsonfast",
    "lookout.atomic",
    "lookout.errors",
    "lookout.hookpack",
    "lookout.hookspec",
    "lookout.limits",
    "lookout.mask",
    "lookout.paths",
    "lookout.procs",
    "lookout.net",
    "lookout.programs",
    "lookout.shapes",
    "lookout.swap",
    "lookout.templates",
    "lookout.transcript",
    "lookout.version",
    "lookout.words",
}
# A room imports only its own modules and rooms on lower floors. A new room gets a floor here.
FLOORS: dict[str, int] = {
    "ground": 1,
    # the write path's state, and the operating system (platform/ asks it; nothing above ground)
    "events": 2,
    "machine": 2,
    "store": 2,
    "client_sessions": 2,
    "platform": 2,
    # what every reader and writer above stands on
    "boundary": 3,
    "ledger": 3,
    "away": 3,  # the away switch: the status line, the deciding hook and the surfaces read it
    # what time passing proves (stuck, a usage limit), from the client's traces and processes
    "silence": 3,
    "sound": 3,  # CESP packs, the debounce store, playing (the sound channel's library)
    "spawn": 3,  # the detached processes: the sender a hook starts, the Telegram poller
    "sessions": 3,  # the read model
    # the channel types: sent through by the sender, checked by config/, the Bot API for surfaces/
    "channels": 4,
    "suggest": 4,
    "config": 5,
    "deliveries": 5,  # a send and its record: what the sender and the surfaces both write
    "notify": 6,  # the hook's side: rules, one job file, a detached sender
    "reconcile": 7,  # the second writer: records and notifies as a hook would
    "remote": 8,  # the answers domain: requests, answers, the deciding hook, what is shown
    "jump": 8,
    "runner": 9,  # every hook's boundary: records, then notifies or decides
    "steer": 9,  # types into a session's pane (jump finds it) or its inbox
    "surfaces": 10,  # where an alert is answered (a button, a reply); Telegram's chat steers
    "sender": 11,
    "fleet": 11,  # the bridge: Home Assistant's buttons show a request as its surface does
    "web": 12,  # the detached sender: delivers on lanes, asks the surfaces to bind and follow
    "install": 12,  # names the surfaces a request can be answered on
    "agents": 13,  # the plug-ins use the installer's toolkit (install/files, hooks, checks)
    "commands": 14,
    "__main__": 15,
}
# The arrows that still run up, each a known coupling with its owner; the list only shrinks.
UPWARD = {
    # the installer drives the plug-ins, as pre-commit's core imports all_languages
    ("lookout.install.plan", "lookout.agents.registry"),
    # at the fleet's hub a press or reply for another host goes over the broker (issue 42); fleet/
    # stands above surfaces/ because the bridge shows a request as Home Assistant's surface does
    ("lookout.surfaces.listener", "lookout.fleet.hub"),
}


def room_of(module: str) -> str:
    if module in GROUND:
        return "ground"
    return module.split(".")[1]


def test_every_room_has_a_floor() -> None:
    rooms = {room_of(m) for m in MODULES}
    assert rooms == set(FLOORS), "give each new room a floor in FLOORS"
    # The ground is the ground: nothing in it imports a module off it.
    assert {(m, t) for m in GROUND & set(GRAPH) for t in GRAPH[m] if t not in GROUND} == set()


def upward_arrows(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {
        (module, target)
        for module, targets in graph.items()
        for target in targets
        if room_of(module) != room_of(target) and FLOORS[room_of(target)] >= FLOORS[room_of(module)]
    }


def test_every_import_runs_down_a_floor() -> None:
    # Lazy imports count (they run, later); `if TYPE_CHECKING:` ones do not.
    found = upward_arrows(GRAPH)
    assert not found - UPWARD, f"imports that run up a floor: {sorted(found - UPWARD)}"
    assert not UPWARD - found, f"gone (take them off UPWARD): {sorted(UPWARD - found)}"


def test_the_platform_layer_stands_on_the_ground() -> None:
    # platform/ is what the read model, reconcile, notify and the installer ask the OS through:
    # it imports only the ground and itself (launchd's agent used to reach into install/).
    for module in (m for m in GRAPH if room_of(m) == "platform"):
        assert {room_of(t) for t in GRAPH[module]} <= {"ground", "platform"}, module


def test_sound_is_a_pure_library_and_its_channel_one_module() -> None:
    # issue 39 item 3: the plug-in (channels/sound.py) stands on sound/, never the other way;
    # sound/ reads packs, keeps the debounce and plays, and knows no channel nor config.
    for module in (m for m in GRAPH if room_of(m) == "sound"):
        assert {room_of(t) for t in GRAPH[module]} <= {"ground", "platform", "store", "sound"}
    assert not {"lookout.sound.channel", "lookout.sound.settings"} & set(MODULES)


def _folder(module: str) -> str:
    """The package a module is filed in (lookout.sender.deliver: lookout.notify)."""
    return module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]


def private_uses(module: str) -> set[str]:
    """Each `_name` of another folder's module that `module` imports or reads: `from m import
    _x`, or `m._x` where m names a lookout module. A private *module* (`lookout._jsonfast`) is
    its package's: open to every module under lookout/."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    bound: dict[str, str] = {}  # a local name -> the lookout module it is
    used: set[tuple[str, str]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module in MODULES:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full in MODULES:
                    bound[alias.asname or alias.name] = full
                else:
                    used.add((node.module, alias.name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in MODULES:
                    bound[alias.asname] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            owner = bound.get(node.value.id)
            if owner is not None:
                used.add((owner, node.attr))
    return {
        f"{owner}.{name}"
        for owner, name in used
        if name.startswith("_") and not name.startswith("__") and _folder(owner) != _folder(module)
    }


def test_the_private_scan_sees_names_and_attributes(tmp_path: Path) -> None:
    # The scanner itself, on the code before issue 34: remote/decide read runner's boundary.
    old = (
        "from lookout import runner\n"
        "from lookout.sender.deliver import _queue\n"
        "def f():\n    return runner._fail_open, runner.record\n"
    )
    MODULES["lookout.remote.probe"] = tmp_path / "probe.py"
    try:
        (tmp_path / "probe.py").write_text(old)
        assert private_uses("lookout.remote.probe") == {
            "lookout.runner._fail_open",
            "lookout.sender.deliver._queue",
        }
    finally:
        del MODULES["lookout.remote.probe"]


def test_no_module_uses_a_private_name_of_another_folder() -> None:
    found = {module: private_uses(module) for module in MODULES}
    assert not {m: sorted(u) for m, u in found.items() if u}, "make it public, or move it"


# -- complexity (issue 34): no function above 20, radon's cyclomatic measure ----------------------

CEILING = 20
# Functions other helpers are splitting now, each at its ceiling today: it may only fall, and
# the list only shrinks (an entry at or below CEILING, or gone, must leave it).
COMPLEX = {}


def complexities() -> dict[str, int]:
    """`path:function` (`path:Class.method`, closures by their own name too) -> radon's
    cyclomatic complexity, for every function in lookout/."""
    from radon.complexity import cc_visit
    from radon.visitors import Function

    found: dict[str, int] = {}

    def add(path: str, block: Function) -> None:
        name = f"{block.classname}.{block.name}" if block.classname else block.name
        found[f"{path}:{name}"] = max(found.get(f"{path}:{name}", 0), block.complexity)
        for closure in block.closures:
            add(path, closure)

    for file in sorted(PACKAGE.rglob("*.py")):
        path = file.relative_to(ROOT).as_posix()
        for block in cc_visit(file.read_text(encoding="utf-8")):
            if isinstance(block, Function):
                add(path, block)
    return found


def test_no_function_is_above_complexity_20() -> None:
    found = complexities()
    assert found["lookout/events.py:parse"] <= CEILING  # the scan sees functions...
    assert "lookout/fleet/watch.py:Fleet.snapshot" in found  # ...and methods
    over = {name: cc for name, cc in found.items() if cc > COMPLEX.get(name, CEILING)}
    assert not over, f"split into named steps (radon cc > {CEILING}, or above its ceiling): {over}"
    done = sorted(name for name, cc in COMPLEX.items() if found.get(name, 0) <= CEILING)
    assert not done, f"at or below {CEILING} now, or gone: take them off COMPLEX: {done}"


# -- names (issue 39): a channel type or an answer surface is asked, never named -----------------

# The channel types' and the answer surfaces' names, and those of the next ones (issue 40).
KIND_NAMES = {"desktop", "telegram", "home_assistant", "ntfy", "webhook", "command", "apprise"}
KIND_NAMES |= {"sound", "slack", "matrix"}
# Where one of those words is no channel type's or surface's name, or stays until a named step.
NAMED_ELSEWHERE = {
    # a Claude Code / Cursor / Gemini CLI hook handler's {"type": "command", "command": ...}
    ("lookout/agents/cursor.py", "command"),
    ("lookout/agents/codex_config.py", "command"),  # the hook handler Codex hashes for its trust
    ("lookout/agents/gemini.py", "command"),
    ("lookout/install/hookfiles.py", "command"),
    ("lookout/install/hooks.py", "command"),
    ("lookout/install/settings.py", "command"),
    ("lookout/commands/status.py", "command"),  # argparse's dest for the subcommand
    ("lookout/suggest.py", "command"),  # the shell builtin `command` (a wrapper it sees through)
    ("lookout/config/notify.py", "desktop"),  # the built-in config's channel, by its name
    ("lookout/fleet/bridge.py", "home_assistant"),  # a [fleet] key in the bridge's state
}


def _names_in(node: ast.AST) -> list[str]:
    values = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return [v.value for v in values if isinstance(v, ast.Constant) and v.value in KIND_NAMES]


def named_kinds(source: str) -> set[tuple[int, str]]:
    """(line, name) for each channel type's or surface's name a comparison (==, !=, in, not in)
    holds on either side, or a dict literal has as a key."""
    found: set[tuple[int, str]] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                found.update((node.lineno, n) for n in _names_in(side))
        elif isinstance(node, ast.Dict):
            for key in node.keys:
                if key is not None:
                    found.update((key.lineno, n) for n in _names_in(key))
    return found


def test_the_name_scan_sees_comparisons_and_table_keys() -> None:
    old = (
        'if surface == "telegram":\n    pass\n'
        'ok = answers in ("desktop", "telegram")\n'
        'SURFACES = {"desktop": Popup(), "telegram": Chat()}\n'
        'label = {"desktop": "the desktop popup"}.get(kind)\n'
    )
    assert named_kinds(old) == {
        (1, "telegram"),
        (3, "desktop"),
        (3, "telegram"),
        (4, "desktop"),
        (4, "telegram"),
        (5, "desktop"),
    }
    assert named_kinds('NAME = "desktop"\nif kind.ANSWERS == surface.NAME:\n    pass\n') == set()


def test_no_module_outside_channels_and_surfaces_names_a_type_or_surface() -> None:
    # A channel type is asked (lookout.channels.registry.of(ch)), a surface too
    # (lookout.surfaces.registry.of(ch)): a new one is then its modules and registry lines.
    found = {
        (path, name)
        for path, module in ((p.relative_to(ROOT).as_posix(), p) for p in MODULES.values())
        if path.split("/")[1] not in ("channels", "surfaces")
        for _, name in named_kinds(module.read_text(encoding="utf-8"))
    }
    assert not found - NAMED_ELSEWHERE, sorted(found - NAMED_ELSEWHERE)
    gone = NAMED_ELSEWHERE - found
    assert not gone, f"no longer named there: take them off NAMED_ELSEWHERE: {sorted(gone)}"
