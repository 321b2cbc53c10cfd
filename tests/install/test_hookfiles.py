"""lookout.install.hookfiles and the agents' modules through install.py: Gemini CLI's
settings.json, Copilot CLI's hooks file, Cursor's hooks.json and OpenCode's plugin. The
guarantees of Claude Code's installer: a broken or foreign file refused with nothing changed,
every foreign entry kept in place, a backup, writes through symlinks, idempotent, a diff for
--dry-run, an uninstall that gives the file back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lookout.agents import copilot, cursor, gemini, opencode
from lookout.install import hookfiles, settings
from tests.helpers import ROOT, Ran, install_py, preinstall_runtime, write_config

DEV_PY = sys.executable

# A user's Gemini settings: other keys, hooks settings (not events) and a hook of their own.
GEMINI = """{
  "security": {
    "auth": {
      "selectedType": "gemini-api-key"
    }
  },
  "hooks": {
    "enabled": true,
    "disabled": [
      "noisy"
    ],
    "AfterAgent": [
      {
        "matcher": "",
        "hooks": [
          {
            "type": "command",
            "command": "notify-me"
          }
        ]
      }
    ]
  },
  "ui": {
    "theme": "dark"
  }
}
"""
CURSOR = """{
  "version": 1,
  "hooks": {
    "stop": [
      {
        "command": "./audit.sh"
      }
    ],
    "beforeReadFile": [
      {
        "command": "./guard.sh"
      }
    ]
  }
}
"""


@pytest.fixture(autouse=True)
def no_running_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proc = tmp_path / "proc"
    proc.mkdir()
    monkeypatch.setenv("LOOKOUT_PROC_DIR", str(proc))


def install(*args: str, ok: bool = True) -> Ran:
    """install.py with the hooks run by this interpreter; over the runtime an earlier install
    of this checkout left, unless it is to be refused (which must write nothing at all)."""
    if ok:
        preinstall_runtime()
    done = install_py("--python", DEV_PY, *args)
    assert (done.returncode == 0) == ok, f"{done.stdout}\n{done.stderr}"
    return done


def uninstall(*args: str) -> Ran:
    done = install_py("--uninstall", *args)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    return done


def test_gemini_install_keeps_everything_and_uninstall_gives_the_file_back(
    isolated_env: Path,
) -> None:
    path = isolated_env / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text(GEMINI)
    out = install("--agent", "gemini").stdout
    assert "installed 7 hooks for Gemini CLI into ~/.gemini/settings.json (backup: " in out
    data = json.loads(path.read_text())
    assert data["security"] == {"auth": {"selectedType": "gemini-api-key"}}
    assert data["hooks"]["enabled"] is True and data["hooks"]["disabled"] == ["noisy"]
    after = data["hooks"]["AfterAgent"]
    assert after[0]["hooks"][0]["command"] == "notify-me"  # theirs first, in place
    ours = after[1]["hooks"][0]
    assert ours["timeout"] == 10000  # Gemini counts milliseconds
    assert ours["command"].endswith("/hooks/gemini.py")
    assert set(data["hooks"]) - {"enabled", "disabled"} == set(gemini.EVENTS)
    assert "PreCompress" not in data["hooks"]
    again = install("--agent", "gemini").stdout
    assert "already installed: 7 hooks for Gemini CLI in ~/.gemini/settings.json" in again
    out = uninstall("--agent", "gemini").stdout
    assert "removed 7 hooks for Gemini CLI from ~/.gemini/settings.json (backup: " in out
    assert path.read_text() == GEMINI


@pytest.mark.real  # two interpreters and a runtime built from nothing: seconds
def test_the_same_through_install_py_itself(isolated_env: Path) -> None:
    """The tests here run install.py's main in-process over a runtime built once; this one runs
    `python3 install.py` as a user does, from an empty HOME, and uninstalls again."""

    def install_py_run(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, str(ROOT / "install.py"), *args],
            capture_output=True,
            text=True,
            timeout=300,
            env=os.environ.copy(),
        )
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
        return done.stdout

    path = isolated_env / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text(GEMINI)
    out = install_py_run("--python", DEV_PY, "--agent", "gemini")
    assert "installed runtime " in out
    assert "installed 7 hooks for Gemini CLI into ~/.gemini/settings.json (backup: " in out
    out = install_py_run("--uninstall", "--agent", "gemini")
    assert "removed 7 hooks for Gemini CLI from ~/.gemini/settings.json (backup: " in out
    assert path.read_text() == GEMINI


def test_cursor_install_keeps_foreign_handlers_in_place(isolated_env: Path) -> None:
    path = isolated_env / ".cursor" / "hooks.json"
    path.parent.mkdir()
    path.write_text(CURSOR)
    install("--agent", "cursor")
    data = json.loads(path.read_text())
    assert data["version"] == 1
    assert data["hooks"]["stop"][0] == {"command": "./audit.sh"}
    assert data["hooks"]["stop"][1]["command"].endswith("/hooks/cursor.py")
    assert data["hooks"]["beforeReadFile"] == [{"command": "./guard.sh"}]
    assert set(data["hooks"]) == set(cursor.EVENTS) | {"beforeReadFile"}
    uninstall("--agent", "cursor")
    assert path.read_text() == CURSOR


def test_copilot_gets_a_hooks_file_of_its_own_with_the_event_in_each_command(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    copilot_home = tmp_path / "copilot-home"
    monkeypatch.setenv("COPILOT_HOME", str(copilot_home))
    out = install("--agent", "copilot").stdout
    path = copilot_home / "hooks" / "lookout.json"
    assert f"installed 11 hooks for Copilot CLI into {path} (new file)" in out
    data = json.loads(path.read_text())
    assert data["version"] == 1
    for event in copilot.EVENTS:
        (handler,) = data["hooks"][event]
        assert handler["type"] == "command" and handler["timeoutSec"] == 10
        assert handler["bash"].endswith(f"/hooks/copilot.py {event}")
    assert "permissionRequest" not in data["hooks"]  # fires before policy: not "waiting"
    uninstall("--agent", "copilot")
    # install created the file and its folders: uninstall takes them all (issue 22 #9).
    assert not path.exists() and not copilot_home.exists()


def test_each_agents_home_is_its_variable_where_set_else_a_folder_in_home(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from lookout.agents import codex

    monkeypatch.setenv("COPILOT_HOME", "")  # set but empty: not set
    monkeypatch.delenv("CODEX_HOME", raising=False)
    homes = {agent.NAME: agent.home() for agent in (codex, gemini, copilot, cursor)}
    assert homes == {
        "codex": isolated_env / ".codex",
        "gemini": isolated_env / ".gemini",
        "copilot": isolated_env / ".copilot",
        "cursor": isolated_env / ".cursor",
    }
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    assert (copilot.home(), codex.home()) == (tmp_path / "copilot", tmp_path / "codex")


def test_opencode_plugin_is_written_whole_and_removed(isolated_env: Path) -> None:
    path = isolated_env / ".config" / "opencode" / "plugin" / "lookout.js"
    out = install("--agent", "opencode").stdout
    assert "installed the plugin for OpenCode into ~/.config/opencode/plugin/lookout.js" in out
    text = path.read_text()
    assert text.startswith(hookfiles.plugin_mark(opencode.TITLE))
    python, script = opencode.plugin_paths(text)
    assert python == DEV_PY and script.endswith("/hooks/opencode.py")
    assert "already installed: the plugin for OpenCode" in install("--agent", "opencode").stdout
    assert not list(path.parent.glob("*.bak-*"))  # lookout's own file: nothing to back up
    out = uninstall("--agent", "opencode").stdout
    assert "removed lookout's plugin ~/.config/opencode/plugin/lookout.js" in out
    assert not path.exists()
    assert not (isolated_env / ".config" / "opencode").exists()  # install made the folders


def test_opencode_plugin_starts_the_deciding_hook_only_with_remote_on(isolated_env: Path) -> None:
    """Issue 41: with [remote] on, the plugin names the deciding hook it starts beside
    OpenCode's dialog; off (the default), it names none and starts nothing more."""
    path = isolated_env / ".config" / "opencode" / "plugin" / "lookout.js"

    def decide_line() -> str:
        (line,) = [x for x in path.read_text().splitlines() if x.startswith("const DECIDE = ")]
        return str(json.loads(line.removeprefix("const DECIDE = ").removesuffix(";")))

    def doctor() -> str:
        done = subprocess.run(
            [sys.executable, "-m", "lookout", "doctor"], capture_output=True, text=True, timeout=60
        )
        return done.stdout + done.stderr

    install("--agent", "opencode")
    assert decide_line() == ""
    write_config("[remote]\nenabled = true\n")
    # Turned on without re-running the installer: doctor says so.
    assert "lookout's plugin starts no deciding hook" in doctor()
    install("--agent", "opencode")
    assert decide_line().endswith("/hooks/remote_answer.py")
    said = doctor()
    assert "starts no deciding hook" not in said and "but [remote] is off" not in said
    write_config("")
    assert "lookout's plugin starts the deciding hook but [remote] is off" in doctor()
    install("--agent", "opencode")
    assert decide_line() == ""


def test_a_foreign_plugin_file_is_refused(isolated_env: Path) -> None:
    path = isolated_env / ".config" / "opencode" / "plugin" / "lookout.js"
    path.parent.mkdir(parents=True)
    path.write_text("export const Mine = async () => ({})\n")
    done = install("--agent", "opencode", ok=False)
    assert "error: " in done.stderr and "is not lookout's plugin" in done.stderr
    assert "hint: " in done.stderr
    assert path.read_text() == "export const Mine = async () => ({})\n"


@pytest.mark.parametrize(
    ("agent", "rel", "text", "expect"),
    [
        ("gemini", ".gemini/settings.json", '{"hooks": {"AfterAgent": {}}}', "hooks.AfterAgent"),
        ("gemini", ".gemini/settings.json", "{ // comment\n}", "invalid JSON"),
        ("cursor", ".cursor/hooks.json", '{"version": 2, "hooks": {}}', "version: expected 1"),
        ("cursor", ".cursor/hooks.json", '{"hooks": {"stop": {}}}', "hooks.stop"),
    ],
)
def test_a_file_it_cannot_parse_is_refused_and_nothing_changes(
    isolated_env: Path, agent: str, rel: str, text: str, expect: str
) -> None:
    path = isolated_env / rel
    path.parent.mkdir(parents=True)
    path.write_text(text)
    done = install("--agent", agent, ok=False)
    assert expect in done.stderr and "hint: " in done.stderr
    assert path.read_text() == text
    assert not (isolated_env / ".local" / "share" / "lookout").exists()  # refused up front


def test_dry_run_prints_the_diff_and_writes_nothing(isolated_env: Path) -> None:
    path = isolated_env / ".cursor" / "hooks.json"
    path.parent.mkdir()
    path.write_text(CURSOR)
    out = install("--agent", "cursor", "--dry-run").stdout
    assert "--- ~/.cursor/hooks.json" in out and "+++ ~/.cursor/hooks.json" in out
    assert '+        "command": ' in out and "cursor.py" in out
    assert path.read_text() == CURSOR


def test_writes_go_through_a_symlink(isolated_env: Path, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "gemini-settings.json"
    real.parent.mkdir()
    real.write_text(GEMINI)
    link = isolated_env / ".gemini" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(real)
    install("--agent", "gemini")
    assert link.is_symlink() and "gemini.py" in real.read_text()
    uninstall("--agent", "gemini")
    assert link.is_symlink() and real.read_text() == GEMINI


def test_all_installs_only_the_agents_set_up_here(isolated_env: Path) -> None:
    (isolated_env / ".cursor").mkdir()
    out = install("--agent", "all").stdout
    assert "Gemini CLI: not set up here (~/.gemini does not exist): skipped" in out
    assert "installed 6 hooks for Cursor into ~/.cursor/hooks.json (new file)" in out
    assert not (isolated_env / ".gemini").exists()
    out = uninstall("--agent", "all").stdout
    assert "removed ~/.cursor/hooks.json (6 hooks; install had created it)" in out
    assert not (isolated_env / ".cursor" / "hooks.json").exists()
    assert (isolated_env / ".cursor").is_dir()  # the user's: install did not create it


def test_a_plain_uninstall_says_which_other_agents_hooks_it_keeps(isolated_env: Path) -> None:
    """newuser-4 defect 7: `--uninstall` took Claude Code's hooks out and left Gemini CLI's 7
    without a word."""
    (isolated_env / ".gemini").mkdir()
    install()
    install("--agent", "gemini")
    install("--agent", "cursor")
    out = uninstall().stdout.splitlines()
    assert out[0].startswith("removed ~/.claude/settings.json (")
    assert out[1:3] == [
        "kept: hooks for Gemini CLI in ~/.gemini/settings.json (python3 install.py --uninstall"
        " --agent gemini, or --agent all, removes them)",
        "kept: hooks for Cursor in ~/.cursor/hooks.json (python3 install.py --uninstall --agent"
        " cursor, or --agent all, removes them)",
    ]
    assert out[3].startswith("kept: the runtime ")
    out = uninstall("--agent", "gemini").stdout.splitlines()
    assert out[0].startswith("removed ~/.gemini/settings.json (7 hooks; install had created it)")
    assert [line for line in out if line.startswith("kept: hooks")] == [
        "kept: hooks for Cursor in ~/.cursor/hooks.json (python3 install.py --uninstall --agent"
        " cursor, or --agent all, removes them)",
    ]
    assert "kept: hooks" not in uninstall("--agent", "all").stdout


def test_purge_removes_every_agents_entries(isolated_env: Path) -> None:
    path = isolated_env / ".cursor" / "hooks.json"
    path.parent.mkdir()
    path.write_text(CURSOR)
    install("--agent", "cursor")
    install("--agent", "opencode")
    uninstall("--purge")
    assert path.read_text() == CURSOR
    assert not (isolated_env / ".config" / "opencode" / "plugin" / "lookout.js").exists()


def test_flat_merge_replaces_an_old_entry_where_it_stands() -> None:
    old = {"command": "/old/lookout/hooks/cursor.py", "timeout": 5}
    data = {"version": 1, "hooks": {"stop": [{"command": "a"}, old, {"command": "b"}]}}
    new = hookfiles.merge_flat(data, [("stop", {"command": "NEW"})], cursor.SCRIPT, [])
    assert new["hooks"]["stop"] == [{"command": "a"}, {"command": "NEW"}, {"command": "b"}]
    assert hookfiles.count_flat(new, cursor.SCRIPT, []) == 0  # "NEW" is not a lookout command
    assert hookfiles.unmerge_flat(data, cursor.SCRIPT, []) == {
        "version": 1,
        "hooks": {"stop": [{"command": "a"}, {"command": "b"}]},
    }


def test_gemini_config_keys_are_never_taken_for_events() -> None:
    data = json.loads(GEMINI)
    with pytest.raises(settings.ShapeError):
        settings.check_shape(data)  # Claude Code's shape: `enabled` is not an event
    assert settings.check_shape(data, gemini.CONFIG_KEYS) is data


def test_installed_hook_commands_run_through_a_shell(isolated_env: Path, tmp_path: Path) -> None:
    # The command Gemini runs (through the user's shell) records the real captured payload.
    path = isolated_env / ".gemini" / "settings.json"
    install("--agent", "gemini")
    command = json.loads(path.read_text())["hooks"]["BeforeAgent"][0]["hooks"][0]["command"]
    payload = (ROOT / "tests" / "fixtures" / "gemini" / "BeforeAgent.json").read_bytes()
    done = subprocess.run(
        ["/bin/sh", "-c", command], input=payload, capture_output=True, timeout=60
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    events = (Path(os.environ["LOOKOUT_STATE_DIR"]) / "events.jsonl").read_text()
    line = json.loads(events.splitlines()[-1])
    shown = (line["agent"], line["event"], line["status"])
    assert shown == ("gemini", "UserPromptSubmit", "working")


# The user's own files as they wrote them: one-line objects, their own spacing (issue 22 #9).
COMPACT = {
    "gemini": (
        ".gemini/settings.json",
        '{"security": {"auth": {"selectedType": "gemini-api-key"}}, "ui":{"theme":"dark"}}\n',
    ),
    "cursor": (
        ".cursor/hooks.json",
        '{"version":1,"hooks":{"stop":[{"command":"echo user-stop"}]}}',
    ),
}


@pytest.mark.parametrize("agent", list(COMPACT))
def test_uninstall_gives_back_the_exact_bytes(isolated_env: Path, agent: str) -> None:
    rel, text = COMPACT[agent]
    path = isolated_env / rel
    path.parent.mkdir()
    path.write_text(text)
    install("--agent", agent)
    assert path.read_text() != text and json.loads(path.read_text())
    uninstall("--agent", agent)
    assert path.read_text() == text


def test_uninstall_after_the_user_changed_the_file_keeps_their_change(isolated_env: Path) -> None:
    rel, text = COMPACT["cursor"]
    path = isolated_env / rel
    path.parent.mkdir()
    path.write_text(text)
    install("--agent", "cursor")
    data = json.loads(path.read_text())
    data["hooks"]["sessionEnd"].insert(0, {"command": "echo mine"})
    path.write_text(json.dumps(data, indent=2))
    uninstall("--agent", "cursor")
    assert json.loads(path.read_text()) == {
        "version": 1,
        "hooks": {
            "stop": [{"command": "echo user-stop"}],
            "sessionEnd": [{"command": "echo mine"}],
        },
    }


def test_uninstall_removes_the_files_and_folders_install_created(isolated_env: Path) -> None:
    # --agent cursor with no ~/.cursor: install makes both; uninstall leaves no empty shell.
    install("--agent", "cursor")
    install("--agent", "gemini")
    assert (isolated_env / ".cursor" / "hooks.json").exists()
    out = uninstall("--agent", "cursor").stdout
    assert "removed ~/.cursor/hooks.json (6 hooks; install had created it)" in out
    assert not (isolated_env / ".cursor").exists()
    uninstall("--agent", "gemini")
    assert not (isolated_env / ".gemini").exists()


def test_a_created_file_the_user_added_to_stays_without_lookouts_entries(
    isolated_env: Path,
) -> None:
    install("--agent", "cursor")
    path = isolated_env / ".cursor" / "hooks.json"
    data = json.loads(path.read_text())
    data["hooks"]["stop"].append({"command": "echo mine"})
    path.write_text(json.dumps(data))
    uninstall("--agent", "cursor")
    assert json.loads(path.read_text()) == {
        "version": 1,
        "hooks": {"stop": [{"command": "echo mine"}]},
    }


def test_all_then_uninstall_all_leaves_every_home_as_it_was(isolated_env: Path) -> None:
    # The review's run: every agent's directory there, the user's own files in two of them.
    for rel, text in COMPACT.values():
        (isolated_env / rel).parent.mkdir(parents=True)
        (isolated_env / rel).write_text(text)
    for home in (".copilot", ".config/opencode"):
        (isolated_env / home).mkdir(parents=True)

    def tree() -> dict[str, bytes | None]:
        return {
            str(p.relative_to(isolated_env)): p.read_bytes() if p.is_file() else None
            for p in sorted(isolated_env.rglob("*"))
            # Not lookout's own runtime and config (`--purge` takes those).
            if ".local" not in p.parts and "lookout" not in p.parts
        }

    before = tree()
    install("--agent", "all")
    assert tree() != before
    uninstall("--agent", "all")
    after = tree()
    assert after == before
