"""lookout.install.settings: the pure merge / unmerge, checked against golden before/after files.

LOOKOUT_UPDATE_GOLDEN=1 rewrites the after.json / uninstalled.json files (then review the diff).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from lookout import hookspec
from lookout.install import hooks, settings
from tests.helpers import FIXTURES, ROOT

CASES = FIXTURES / "settings"
SCHEMA = json.loads((FIXTURES / "claude-code-settings.schema.json").read_text())
UPDATE = os.environ.get("LOOKOUT_UPDATE_GOLDEN") == "1"

# The runtime every golden file is written for.
PY = "/home/dev/.local/share/lookout/venv/bin/python"
HOME_RT = "/home/dev/.local/share/lookout"


def command(script: str) -> str:
    path = f"{HOME_RT}/hooks/{script}"
    return f"trap '' TERM; [ -f {path} ] || exit 0; exec {PY} -I -S {path}"


WANTED = settings.wanted_handlers(command)
ROOTS = [HOME_RT]


def read_case(case: Path) -> tuple[str | None, dict[str, Any]]:
    before = case / "before.json"
    if not before.exists():
        return None, {}
    text = before.read_text(encoding="utf-8")
    return text, (json.loads(text) if text.strip() else {})


def golden(path: Path, text: str) -> None:
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden file {path} (run with LOOKOUT_UPDATE_GOLDEN=1)"
    assert text == path.read_text(encoding="utf-8")


def merging_cases() -> list[Path]:
    return sorted(p for p in CASES.iterdir() if not (p / "error.txt").exists())


@pytest.mark.parametrize("case", merging_cases(), ids=lambda p: p.name)
def test_install_matches_golden(case: Path) -> None:
    text, data = read_case(case)
    after = settings.dumps(settings.merge(data, WANTED, ROOTS), text)
    golden(case / "after.json", after)
    jsonschema.validate(json.loads(after), SCHEMA)


@pytest.mark.parametrize("case", merging_cases(), ids=lambda p: p.name)
def test_second_install_is_identical(case: Path) -> None:
    after = (case / "after.json").read_text(encoding="utf-8")
    again = settings.dumps(settings.merge(json.loads(after), WANTED, ROOTS), after)
    assert again == after


@pytest.mark.parametrize("case", merging_cases(), ids=lambda p: p.name)
def test_uninstall_gives_back_the_original(case: Path) -> None:
    after = (case / "after.json").read_text(encoding="utf-8")
    removed = settings.dumps(settings.unmerge(json.loads(after), ROOTS), after)
    before, _ = read_case(case)
    if removed != before or (case / "uninstalled.json").exists():
        golden(case / "uninstalled.json", removed)
    assert settings.count_ours(json.loads(removed), ROOTS) == 0


def test_claude_written_file_round_trips_byte_for_byte() -> None:
    # Written by the real client (2.1.332, `claude plugin install`): 2-space JSON, final newline.
    text, data = read_case(CASES / "claude-written")
    assert text is not None
    installed = settings.dumps(settings.merge(data, WANTED, ROOTS), text)
    assert installed.startswith(text[:-3])  # ours goes at the end
    assert settings.dumps(settings.unmerge(json.loads(installed), ROOTS), installed) == text


def test_one_entry_per_event_with_timeout_and_async_where_the_table_says() -> None:
    after = json.loads((CASES / "empty-object" / "after.json").read_text())
    assert list(after["hooks"]) == [event for event, _, _ in hookspec.EVENTS]
    for event, script, is_async in hookspec.EVENTS:
        (group,) = after["hooks"][event]
        assert "matcher" not in group
        (handler,) = group["hooks"]
        assert handler["command"] == command(script)
        assert handler["timeout"] == hookspec.TIMEOUT_S
        assert handler.get("async", False) is is_async


def test_schema_allows_async_and_every_registered_event() -> None:
    events = SCHEMA["properties"]["hooks"]["properties"]
    assert {event for event, _, _ in hookspec.EVENTS} <= set(events)
    command_schema = SCHEMA["$defs"]["hookCommand"]["anyOf"][0]
    assert command_schema["properties"]["async"] == {
        "type": "boolean",
        "description": command_schema["properties"]["async"]["description"],
    }


def test_foreign_entries_keep_their_order_inside_our_group() -> None:
    _, data = read_case(CASES / "same-matcher-group")
    merged = settings.merge(data, WANTED, ROOTS)
    stop = [h["command"] for h in merged["hooks"]["Stop"][0]["hooks"]]
    assert stop == ["notify-send 'Claude is done'", command("stop.py"), "~/bin/after-stop"]
    removed = settings.unmerge(merged, ROOTS)
    assert [h["command"] for h in removed["hooks"]["Stop"][0]["hooks"]] == [
        "notify-send 'Claude is done'",
        "~/bin/after-stop",
    ]


def test_older_layout_is_replaced_not_duplicated() -> None:
    _, data = read_case(CASES / "older-layout")
    merged = settings.merge(data, WANTED, ROOTS)
    assert settings.count_ours(merged, ROOTS) == len(hookspec.EVENTS)
    commands = json.dumps(merged)
    assert "/old/place" not in commands and "/home/dev/src/lookout" not in commands
    assert "ConfigChange" not in merged["hooks"]  # only an old generic entry was there
    # The foreign entry that shared a group with an old entry of ours stays in that group.
    assert merged["hooks"]["PreToolUse"][0]["hooks"][1]["command"] == "~/bin/audit-tool-use"


@pytest.mark.parametrize(
    ("command_text", "ours"),
    [
        ("python3 /old/place/lookout/hooks/stop.py", True),
        (
            "'/home/a b/.local/share/lookout/venv/bin/python' -I -S"
            " '/home/a b/x/lookout/hooks/stop.py'",
            True,
        ),
        ('python3 "/srv/lookout/hooks/event.py"', True),
        ("python3 /srv/lookout/hooks/my_own.py", False),  # not one of our scripts
        ("python3 /srv/other/hooks/stop.py", False),  # no lookout directory
        ("python3 /srv/lookout/stop.py", False),  # not in hooks/
        ("/opt/rt/venv/bin/python -I -S /opt/rt/hooks/stop.py", True),  # under the runtime root
        ("python3 'unbalanced /srv/lookout/hooks/stop.py", True),
    ],
)
def test_marker(command_text: str, ours: bool) -> None:
    assert settings.is_ours({"type": "command", "command": command_text}, ["/opt/rt"]) is ours


def test_marker_ignores_other_handler_types_and_sees_exec_form() -> None:
    assert not settings.is_ours({"type": "http", "url": "http://127.0.0.1/lookout/hooks/stop.py"})
    assert settings.is_ours(
        {"type": "command", "command": "python3", "args": ["/x/lookout/hooks/stop.py"]}
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "expected a JSON object at the top level, got an array"),
        ("x", "expected a JSON object at the top level, got a string"),
        ({"hooks": []}, "hooks: expected an object, got an array"),
        ({"hooks": None}, "hooks: expected an object, got null"),
        ({"hooks": True}, "hooks: expected an object, got a boolean"),
        ({"hooks": {"Stop": [0.5]}}, "hooks.Stop[0]: expected an object, got a number"),
        ({"hooks": {"Stop": {}}}, "hooks.Stop: expected an array of matcher groups, got an object"),
        ({"hooks": {"Stop": [1]}}, "hooks.Stop[0]: expected an object, got a number"),
        ({"hooks": {"Stop": [{}]}}, "hooks.Stop[0].hooks: expected an array of hooks, got nothing"),
        (
            {"hooks": {"Stop": [{"matcher": 3, "hooks": []}]}},
            "hooks.Stop[0].matcher: expected a string, got a number",
        ),
        (
            {"hooks": {"Stop": [{"hooks": ["echo"]}]}},
            "hooks.Stop[0].hooks[0]: expected an object, got a string",
        ),
    ],
)
def test_malformed_shapes_are_refused(data: object, message: str) -> None:
    with pytest.raises(settings.ShapeError) as info:
        settings.merge(data, WANTED, ROOTS)  # type: ignore[arg-type]
    assert str(info.value) == message


def test_foreign_empty_containers_are_left_alone() -> None:
    data = {"hooks": {"Stop": [], "PreToolUse": [{"matcher": "Bash", "hooks": []}]}}
    merged = settings.merge(data, WANTED, ROOTS)
    assert merged["hooks"]["PreToolUse"][0] == {"matcher": "Bash", "hooks": []}
    assert settings.unmerge(data, ROOTS) == data
    # An event array that held only our group is indistinguishable from one we created: dropped.
    assert settings.unmerge(merged, ROOTS) == {"hooks": {"PreToolUse": data["hooks"]["PreToolUse"]}}


def test_unmerge_without_our_entries_changes_nothing() -> None:
    _, data = read_case(CASES / "foreign-hooks")
    assert settings.unmerge(data, ROOTS) == data


def test_dumps_keeps_the_file_style() -> None:
    assert settings.dumps({"a": 1}, None) == '{\n  "a": 1\n}\n'
    assert settings.dumps({"a": 1}, '{\n    "b": 2\n}') == '{\n    "a": 1\n}'
    assert settings.dumps({"a": "é"}, '{\n  "b": "\\u00e9"\n}\n') == '{\n  "a": "\\u00e9"\n}\n'
    assert settings.dumps({"a": "é"}, "{}\n") == '{\n  "a": "é"\n}\n'


def test_plugin_hooks_use_the_plugin_root_quoted() -> None:
    from tests.test_plugin import render_plugin_hooks

    doc = json.loads(render_plugin_hooks())
    handler = doc["hooks"]["Stop"][0]["hooks"][0]
    path = '"${CLAUDE_PLUGIN_ROOT}/hooks/stop.py"'
    assert handler["command"] == f"trap '' TERM; [ -f {path} ] || exit 0; exec python3 -I -S {path}"
    jsonschema.validate({"hooks": doc["hooks"]}, SCHEMA)


@pytest.mark.parametrize("form", ["claude", "codex", "plugin"])
def test_a_hook_command_whose_script_is_gone_exits_0(tmp_path: Path, form: str) -> None:
    # Python exits 2 for a missing script, and Claude Code reads 2 as "block this prompt" (M3).
    runtime = tmp_path / "rt dir"
    if form == "plugin":  # the shipped hooks/hooks.json
        shipped = json.loads((ROOT / "hooks" / "hooks.json").read_text())
        command = shipped["hooks"]["Stop"][0]["hooks"][0]["command"]
    else:
        command = hooks.hook_command(sys.executable, runtime, "stop.py", form)
    env = {"PATH": os.environ["PATH"], "CLAUDE_PLUGIN_ROOT": str(runtime)}

    def run() -> tuple[int, str]:
        done = subprocess.run(
            ["/bin/sh", "-c", command], env=env, capture_output=True, text=True, timeout=30
        )
        return done.returncode, done.stdout + done.stderr

    assert run() == (0, "")  # no script at all: nothing runs, exit 0
    (runtime / "hooks").mkdir(parents=True)
    (runtime / "hooks" / "stop.py").write_text("import sys; print('ran'); sys.exit(7)\n")
    assert run() == (7, "ran\n")  # the script is there: it runs, as before


def test_two_entries_for_one_event_install_and_reinstall_identically() -> None:
    deciding = {"type": "command", "command": command(hookspec.REMOTE_SCRIPT), "timeout": 315}
    wanted = [*WANTED, (hookspec.REMOTE_EVENT, deciding)]
    once = settings.merge({}, wanted, ROOTS)
    groups = once["hooks"]["PermissionRequest"]
    assert [g["hooks"][0]["command"].rsplit("/", 1)[1] for g in groups] == [
        "permission_request.py",
        "remote_answer.py",
    ]
    assert settings.merge(once, wanted, ROOTS) == once
    assert settings.count_ours(once, ROOTS) == len(wanted)
    # Turned off again: the deciding entry goes, the recording one stays.
    off = settings.merge(once, WANTED, ROOTS)
    assert off == settings.merge({}, WANTED, ROOTS)
    assert settings.unmerge(once, ROOTS) == {}
