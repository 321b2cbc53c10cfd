"""lookout.channels.registry: exactly the eight channel types, each a module behind
channels.base.ChannelType; what a channel type is lives in its module (no branch on a type's name
anywhere else), and a new type is one file and one registry line (docs/development.md's example,
run here)."""

from __future__ import annotations

import ast
import re
import types
from pathlib import Path
from typing import Any

import pytest

from lookout import words
from lookout.channels import base, registry
from lookout.commands import main as cli
from lookout.config import cache, files
from tests.helpers import ROOT, write_config

TYPES = ["desktop", "ntfy", "webhook", "command", "apprise", "telegram", "slack", "sound", "matrix"]
PACKAGE = ROOT / "lookout"


def protocol_members() -> set[str]:
    """The members of base.ChannelType (a class for the type checker only: read from the source)."""
    tree = ast.parse((PACKAGE / "channels" / "base.py").read_text())
    (proto,) = [
        n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "ChannelType"
    ]
    return {n.name for n in proto.body if isinstance(n, ast.FunctionDef)}


def test_the_registry_lists_exactly_the_eight_types() -> None:
    assert list(registry.CHANNELS) == TYPES
    assert tuple(TYPES) == registry.NAMES
    for name, kind in registry.CHANNELS.items():
        assert name == kind.NAME
        assert kind.__name__ == f"lookout.channels.{name}"  # type: ignore[attr-defined]
    assert registry.REMOTE == ("ntfy", "webhook", "apprise", "telegram", "slack", "matrix")
    assert registry.UPDATABLE == ("desktop", "ntfy", "telegram", "slack", "matrix")


@pytest.mark.parametrize("name", TYPES)
def test_each_type_implements_the_interface(name: str) -> None:
    kind = registry.CHANNELS[name]
    members = protocol_members()
    assert members == {
        "NAME", "KEYS", "SECRETS", "TIMEOUT_MS", "REMOTE", "UPDATABLE", "LOUD", "ANSWERS",
        "STEERS", "FOCUS", "OPTIONS", "EXAMPLE", "check", "send", "replace", "withdraw",
        "add_buttons", "inspect", "warnings", "doctor",
    }  # fmt: skip
    for member in members:
        assert hasattr(kind, member), f"{name} lacks {member}"
    assert not set(kind.KEYS) & set(base.COMMON_KEYS)
    assert set(kind.SECRETS) <= set(kind.KEYS)
    assert 0 < kind.TIMEOUT_MS <= 600_000
    assert kind.ANSWERS in (None, "desktop", "ntfy", "telegram", "slack", "matrix")
    # Only a type whose replies steer keeps a listener up whenever [steer] is on.
    assert kind.STEERS is (name == "telegram")
    assert kind.EXAMPLE.startswith("lookout channel add ") and f"--type {name}" in kind.EXAMPLE
    for opt in kind.OPTIONS:
        assert opt["key"] in kind.KEYS, f"{name}: {opt['flag']} sets an unknown key"


def test_the_vocabulary_holds_no_channel_type() -> None:
    # words is the hook path's: it names no channel type; the registry is where they are.
    text = (PACKAGE / "words.py").read_text()
    assert not {n for n in TYPES if f'"{n}"' in text}
    assert not hasattr(words, "CHANNEL_TYPES")


def test_each_channel_carries_its_types_traits() -> None:
    # What a hook's rules read from the cached config without loading the type.
    raw = {
        "channels": {
            "d": {"type": "desktop"},
            "p": {"type": "ntfy", "url": "https://ntfy.sh/t"},
            "w": {"type": "webhook", "url": "https://h.example/x"},
            "c": {"type": "command", "argv": ["true"]},
            "s": {"type": "sound"},
        },
        "rules": [],
    }
    cfg = files.validate(raw)
    for ch in cfg["channels"].values():
        kind = registry.of(ch)
        assert (ch["remote"], ch["updatable"], ch["loud"]) == (
            kind.REMOTE,
            kind.UPDATABLE,
            kind.LOUD,
        )
        assert ch["timeout_ms"] == kind.TIMEOUT_MS
        assert ch["content"] == ("summary" if kind.REMOTE else "full")


def test_types_that_share_a_flag_agree_on_it() -> None:
    seen: dict[str, dict[str, Any]] = {}
    for kind in registry.CHANNELS.values():
        for opt in kind.OPTIONS:
            shape = {k: v for k, v in opt.items() if k not in ("key", "help", "required", "many")}
            assert seen.setdefault(opt["flag"], shape) == shape, opt["flag"]
    helps = registry.flags()
    assert helps["--url"]["help"] == (
        "ntfy: server and topic; webhook: the URL; apprise: a URL; telegram: the Bot API server"
        " (api_url, default the public one); slack: the Web API's base URL (api_url, default"
        " https://slack.com/api/); matrix: the homeserver's URL (homeserver)"
    )


# -- no type's name is branched on outside lookout/channels/ -------------------------------------


def _is_type_of(node: ast.AST) -> bool:
    """`x["type"]`, `x.get("type")`, or a variable `kind` (the old code's name for a type)."""
    if isinstance(node, ast.Name):
        return node.id == "kind"
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "type"
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value == "type"
    )


def _names_a_type(node: ast.AST) -> bool:
    values = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return any(isinstance(v, ast.Constant) and v.value in TYPES for v in values)


def type_branches(source: str) -> list[int]:
    """The lines comparing a channel's type with a type's name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_type_of(s) for s in sides) and any(_names_a_type(s) for s in sides):
                found.append(node.lineno)
    return found


def test_the_scan_sees_a_branch_on_a_type() -> None:
    old = 'if ch["type"] == "desktop":\n    pass\nok = ch.get("type") in ("ntfy", "telegram")\n'
    assert type_branches(old) == [1, 3]
    assert type_branches('kind = ch.get("type")\nif kind != "telegram":\n    pass\n') == [2]
    assert type_branches('if ch["type"] == kind.NAME:\n    pass\n') == []


# Other things with a `type` spelled like a channel type's name.
NOT_A_CHANNEL = {"lookout/install/settings.py"}  # a Claude Code hook handler's: "command"


def test_no_module_outside_the_channels_branches_on_a_type() -> None:
    found = {
        name: lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if "channels" not in path.relative_to(PACKAGE).parts[:1]
        and (name := str(path.relative_to(ROOT))) not in NOT_A_CHANNEL
        and (lines := type_branches(path.read_text(encoding="utf-8")))
    }
    assert not found, "ask the type (lookout.channels.registry.of(ch)) instead"


# -- a new type is one file and one registry line -----------------------------------------------


def docs_example() -> tuple[str, str]:
    """The channel type docs/development.md shows (its module), and the registry line it adds."""
    text = (ROOT / "docs" / "development.md").read_text()
    section = text[text.index("### A new channel type") :]
    module = re.search(r"```python\n(.*?)```", section, re.S)
    line = re.search(r'^\s*("file": file,)$', section, re.M)
    assert module is not None and line is not None
    return module.group(1), line.group(1)


@pytest.fixture
def file_type(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    source, _ = docs_example()
    module = types.ModuleType("lookout.channels.file")
    exec(compile(source, "lookout/channels/file.py", "exec"), module.__dict__)
    monkeypatch.setitem(registry.CHANNELS, "file", module)  # type: ignore[arg-type]
    monkeypatch.setattr(registry, "NAMES", (*registry.NAMES, "file"))
    return module


def test_the_documented_new_type_is_checked_sent_added_and_doctored(
    file_type: types.ModuleType,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    isolated_env: Path,
) -> None:
    log = tmp_path / "alerts.log"
    cfg = files.validate({"channels": {"log": {"type": "file", "path": str(log)}}, "rules": []})
    ch = cfg["channels"]["log"]
    assert (ch["remote"], ch["updatable"], ch["timeout_ms"]) == (False, False, 2000)
    msg = {"title": "demo · needs permission", "body": "Bash: make", "kind": "permission"}
    assert registry.send(ch, msg, 2.0) == ("sent", f"appended to {log}", None)
    assert log.read_text() == "demo · needs permission: Bash: make\n"
    # check-config's errors, by its own check
    with pytest.raises(files.ConfigError) as exc:
        files.validate({"channels": {"log": {"type": "file"}}, "rules": []})
    assert exc.value.errors == [
        "config.toml: channels.log: missing key 'path' (the file to append to)"
    ]
    # `lookout channel add` takes its flag, and refuses it without
    assert cli.main(["channel", "add", "log", "--type", "file", "--path", str(log)]) == 0
    assert "added channel log (file)" in capsys.readouterr().out
    assert files.load()["channels"]["log"]["path"] == str(log)
    assert cli.main(["channel", "add", "log2", "--type", "file"]) == 1
    assert "a file channel needs --path" in capsys.readouterr().err
    # doctor asks it for the channels a rule sends to (this one has nothing to say)
    assert cli.main(["rule", "add", "--when", "permission", "--channels", "log"]) == 0
    capsys.readouterr()
    assert cli.main(["doctor"]) in (0, 1)
    out = capsys.readouterr().out
    assert "channel desktop" in out and "channel log" not in out
    _, line = docs_example()
    assert line == '"file": file,'


def test_check_config_looks_at_what_a_table_names_and_a_hook_never_does(
    file_type: types.ModuleType,
    capsys: pytest.CaptureFixture[str],
    isolated_env: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    looked: list[str] = []

    def inspect(c: Any, path: Any, ch: dict[str, Any]) -> None:  # a sound pack's check, say
        looked.append(ch["path"])
        c.error((*path, "path"), "no such file")

    monkeypatch.setattr(file_type, "inspect", inspect)
    write_config(
        '[channels.log]\ntype = "file"\npath = "/nonexistent/log"\n'
        '[[rules]]\nwhen = ["done"]\nchannels = ["log"]\n'
    )
    assert cache.load_cached(str(isolated_env.parent / "state"), None) is not None
    assert files.load()["channels"]["log"]["path"] == "/nonexistent/log"
    assert looked == []  # a hook's cache, the sender's load: the table only
    assert cli.main(["check-config"]) == 1
    assert capsys.readouterr().err == (
        "error: ~/.config/lookout/config.toml: channels.log.path: no such file\n"
    )
    assert looked == ["/nonexistent/log"]


def test_a_findings_status_is_one_doctor_knows() -> None:
    from lookout.install import checks

    assert (base.OK, base.INFO, base.WARN) == (checks.OK, checks.INFO, checks.WARN)


def test_a_types_secrets_stay_out_of_the_cache_and_every_detail(
    file_type: types.ModuleType,
    tmp_path: Path,
    isolated_env: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A type whose secret lives under a key of its own says so (SECRETS), in its own file.
    monkeypatch.setattr(file_type, "SECRETS", ("path",))
    secret = str(tmp_path / "s3cr3t-inbox")
    write_config(
        f'[channels.log]\ntype = "file"\npath = "{secret}"\n'
        '[[rules]]\nwhen = ["done"]\nchannels = ["log"]\n'
    )
    state = isolated_env.parent / "state"
    cached = cache.load_cached(str(state), None)
    assert cached is not None and "path" not in cached["channels"]["log"]
    assert "s3cr3t" not in (state / "config-cache.json").read_text()
    ch = files.load()["channels"]["log"]
    result, detail, _ = registry.send(ch, {"title": "t", "body": "b", "kind": "done"}, 2.0)
    assert (result, detail) == ("sent", "appended to …")
