"""install.py --agent codex|all: Codex's hooks.json (the Claude installer's guarantees), the legacy
`notify` in a commented config.toml, which of the two a Codex version gets, and a real install
whose commands run through /bin/sh -c with Codex-shaped payloads."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lookout import hookspec, paths
from lookout.agents import codex, codex_config
from lookout.install import cli as install_cli
from lookout.install import files, hooks, registry, settings
from tests.helpers import ROOT, write_config

CODEX = Path(__file__).resolve().parents[1] / "fixtures" / "codex"
PY = "/home/dev/.local/share/lookout/venv/bin/python"
HOME_RT = Path("/home/dev/.local/share/lookout")
DEV_PY = sys.executable
N = len(codex.EVENTS)
NOTIFY = [PY, "-I", "-S", str(HOME_RT / "hooks" / "codex_notify.py"), "--"]


@pytest.fixture(autouse=True)
def codex_env(isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """CODEX_HOME in the test's HOME; no real `codex` is asked its version; no running Claude."""
    codex_home = isolated_env / ".codex"
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    monkeypatch.setenv("LOOKOUT_CODEX", "")
    proc = tmp_path / "proc"
    proc.mkdir()
    monkeypatch.setenv("LOOKOUT_PROC_DIR", str(proc))
    return codex_home


def hooks_file(codex_home: Path) -> Path:
    return codex_home / "hooks.json"


def config_file(codex_home: Path) -> Path:
    return codex_home / "config.toml"


def put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def install(mode: str = "hooks", dry_run: bool = False) -> list[str]:
    lines: list[str] = []
    codex.install(mode, PY, HOME_RT, dry_run, lines.append)
    return lines


def main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = install_cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def backups(path: Path) -> list[Path]:
    return registry.backups_of(path)


def command(script: str) -> str:
    path = f"{HOME_RT}/hooks/{script}"
    return f"[ -f {path} ] || exit 0; LOOKOUT_AGENT=codex {PY} -I -S {path}"


# --- hooks.json ------------------------------------------------------------------------------


def test_no_file_gets_one_entry_per_codex_event(codex_env: Path) -> None:
    assert install() == [
        f"installed {N} hooks into ~/.codex/hooks.json (new file)",
        "note: Codex runs new or changed hooks only once you trust them: start codex, type"
        f" /hooks and trust lookout's {N} hooks",
    ]
    data = json.loads(hooks_file(codex_env).read_text())
    assert list(data) == ["hooks"]
    assert list(data["hooks"]) == [event for event, _, _ in codex.EVENTS]
    # 0.169.0 fires these three (checked with the real client); it has no StopFailure.
    assert {"SessionEnd", "Interrupt", "PreModelRequest"} <= set(data["hooks"])
    assert "StopFailure" not in data["hooks"]
    for event, script, _ in codex.EVENTS:
        # Codex clamps Interrupt's and SessionEnd's timeouts to 3 s (a warning at each start).
        timeout = 3 if event in ("Interrupt", "SessionEnd") else 10
        assert data["hooks"][event] == [
            {"hooks": [{"type": "command", "command": command(script), "timeout": timeout}]}
        ]
        handler = data["hooks"][event][0]["hooks"][0]
        assert settings.is_ours(handler)
        assert settings.handler_agent(handler) == "codex"
    assert not config_file(codex_env).exists()  # hooks: config.toml untouched


def test_with_remote_on_codex_gets_the_deciding_hook_timed_by_wait_s(codex_env: Path) -> None:
    """Issue 41: Codex's PermissionRequest gets the deciding hook beside the recording one; it
    waits only while `lookout away` is on, and Codex gives up on it at its `timeout`."""
    write_config("[remote]\nenabled = true\nwait_s = 120\n")
    lines = install()
    assert lines[0] == f"installed {N + 1} hooks into ~/.codex/hooks.json (new file)"
    assert lines[1].startswith(
        "remote answers are on: a permission request waits while `lookout away` is on up to"
        " 120 s for `lookout answer`"
    )
    assert lines[2].endswith(f"trust lookout's {N + 1} hooks")
    data = json.loads(hooks_file(codex_env).read_text())
    recording, deciding = (g["hooks"][0] for g in data["hooks"]["PermissionRequest"])
    assert recording["command"] == command("permission_request.py")
    assert deciding == {
        "type": "command",
        "command": command(hookspec.REMOTE_SCRIPT),
        "timeout": 120 + hookspec.TIMEOUT_MARGIN_S,
    }
    assert settings.handler_agent(deciding) == "codex"
    write_config("[remote]\nenabled = false\n")
    install()
    assert len(json.loads(hooks_file(codex_env).read_text())["hooks"]["PermissionRequest"]) == 1


def test_foreign_entries_in_the_same_event_are_kept_in_order(codex_env: Path) -> None:
    before: dict[str, Any] = {
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "say done", "timeout": 5}]}],
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}
            ],
        },
    }
    put(hooks_file(codex_env), json.dumps(before, indent=2) + "\n")
    install()
    data = json.loads(hooks_file(codex_env).read_text())
    assert data["hooks"]["Stop"] == [
        before["hooks"]["Stop"][0],
        {"hooks": [{"type": "command", "command": command("stop.py"), "timeout": 10}]},
    ]
    assert data["hooks"]["PreToolUse"][0] == before["hooks"]["PreToolUse"][0]
    assert list(data["hooks"])[:2] == ["Stop", "PreToolUse"]
    assert len(backups(hooks_file(codex_env))) == 1


def test_second_install_changes_nothing(codex_env: Path) -> None:
    install()
    before = hooks_file(codex_env).read_bytes()
    assert install() == [f"already installed: {N} hooks in ~/.codex/hooks.json"]
    assert hooks_file(codex_env).read_bytes() == before
    assert backups(hooks_file(codex_env)) == []


def test_uninstall_leaves_the_users_file_as_it_was(
    codex_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = json.dumps(
        {
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]},
            "note": "ünïcode kept",
        },
        indent=2,
        ensure_ascii=False,
    )
    put(hooks_file(codex_env), original + "\n")
    install()
    rc, out, err = main(capsys, "--agent", "codex", "--uninstall")
    assert (rc, err) == (0, "")
    assert out.splitlines()[0].startswith(f"removed {N} hooks from ~/.codex/hooks.json (backup: ")
    assert out.splitlines()[1] == "nothing to uninstall in ~/.codex/config.toml"
    assert hooks_file(codex_env).read_text() == original + "\n"


def test_invalid_json_is_refused_and_left_alone(
    codex_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    put(hooks_file(codex_env), '{"hooks": {"Stop": [}\n')
    rc, out, err = main(capsys, "--agent", "codex", "--python", DEV_PY)
    assert rc == 1
    assert out == ""  # refused before the runtime or anything else is touched
    assert err == (
        "error: ~/.codex/hooks.json: invalid JSON at line 1 column 21: Expecting value\n"
        "hint: fix or move the file; lookout changed nothing\n"
    )
    assert hooks_file(codex_env).read_text() == '{"hooks": {"Stop": [}\n'
    assert not Path(os.environ["LOOKOUT_HOME"]).exists()


def test_dry_run_prints_the_diff_and_writes_nothing(codex_env: Path) -> None:
    put(hooks_file(codex_env), '{\n  "hooks": {}\n}\n')
    lines = install(dry_run=True)
    diff = "\n".join(lines)
    assert diff.startswith("--- ~/.codex/hooks.json\n+++ ~/.codex/hooks.json\n")
    assert f'"command": "{command("stop.py")}",' in diff
    assert not any(line.startswith("note:") for line in lines)
    assert hooks_file(codex_env).read_text() == '{\n  "hooks": {}\n}\n'
    assert backups(hooks_file(codex_env)) == []


def test_codex_and_claude_entries_are_told_apart(isolated_env: Path, codex_env: Path) -> None:
    install()
    claude = isolated_env / ".claude" / "settings.json"
    lines: list[str] = []
    hooks.install_into(files.load_settings(claude), PY, HOME_RT, False, lines.append)
    assert lines == [
        f"installed {len(hookspec.EVENTS)} hooks into ~/.claude/settings.json (new file)"
    ]
    claude_data = json.loads(claude.read_text())
    codex_data = json.loads(hooks_file(codex_env).read_text())
    claude_handlers = [g["hooks"][0] for gs in claude_data["hooks"].values() for g in gs]
    codex_handlers = [g["hooks"][0] for gs in codex_data["hooks"].values() for g in gs]
    assert {settings.handler_agent(h) for h in claude_handlers} == {"claude"}
    assert {settings.handler_agent(h) for h in codex_handlers} == {"codex"}
    # Installing one agent again leaves the other's file alone (and says so).
    assert install() == [f"already installed: {N} hooks in ~/.codex/hooks.json"]
    # A Claude install over a hooks.json would replace the Codex commands, not add beside them.
    merged = settings.merge(codex_data, hooks.wanted(PY, HOME_RT), [str(HOME_RT)])
    assert settings.count_ours(merged) == len(hookspec.EVENTS)
    assert {
        settings.handler_agent(h)
        for h in (g["hooks"][0] for gs in merged["hooks"].values() for g in gs)
    } == {"claude"}


def test_agent_all_installs_both(
    isolated_env: Path, codex_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    codex_env.mkdir()  # Codex is set up here
    rc, out, err = main(capsys, "--agent", "all", "--python", DEV_PY)
    assert (rc, err) == (0, "")
    assert f"installed {len(hookspec.EVENTS)} hooks into ~/.claude/settings.json (new file)" in out
    assert f"installed {N} hooks into ~/.codex/hooks.json (new file)" in out
    rc, out, err = main(capsys, "--agent", "all", "--uninstall")
    n = len(hookspec.EVENTS)
    assert f"removed ~/.claude/settings.json ({n} hooks; install had created it)" in out
    assert f"removed ~/.codex/hooks.json ({N} hooks; install had created it)" in out
    assert not (isolated_env / ".claude" / "settings.json").exists()
    assert not hooks_file(codex_env).exists()


def test_agent_all_skips_codex_where_it_is_not(
    isolated_env: Path,
    codex_env: Path,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # No ~/.codex, no codex on PATH: like every other agent, `all` leaves it alone (issue 22 #18).
    rc, out, err = main(capsys, "--agent", "all", "--python", DEV_PY)
    assert (rc, err) == (0, "")
    assert "Codex: not set up here (~/.codex does not exist, no codex on PATH): skipped" in out
    assert "codex:" not in out
    assert not codex_env.exists()
    # A codex on PATH without its directory yet (never started): installed.
    fake = tmp_path / "bin" / "codex"
    put(fake, "#!/bin/sh\necho 'codex-cli 0.169.0'\n").chmod(0o755)
    monkeypatch.setenv("LOOKOUT_CODEX", str(fake))
    rc, out, err = main(capsys, "--agent", "all", "--python", DEV_PY)
    assert (rc, err) == (0, "")
    assert f"installed {N} hooks into ~/.codex/hooks.json (new file)" in out


def test_agent_flags_that_do_not_go_together(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        install_cli.main(["--agent", "codex", "--scope", "local"])
    assert "--scope/--project/--settings are for Claude Code" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        install_cli.main(["--agent", "claude", "--codex-notify"])
    assert "--codex-notify goes with --agent codex or all" in capsys.readouterr().err


# --- config.toml notify ----------------------------------------------------------------------


def test_commented_config_keeps_everything_but_notify_and_restores_exactly(
    codex_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = (CODEX / "config-commented.toml").read_text()
    put(config_file(codex_env), original)
    lines = install("notify")
    assert len(lines) == 1
    assert lines[0].startswith(
        "set notify in ~/.codex/config.toml (still runs your notify-send; backup: "
    )
    text = config_file(codex_env).read_text()
    wanted = [*NOTIFY, "notify-send", "--app-name=Codex", "Codex"]
    assert text == original.replace(
        codex_config.current_snippet(original), codex_config.render(wanted)
    )
    assert backups(config_file(codex_env))[0].read_text() == original
    # Idempotent.
    assert install("notify") == ["already installed: notify in ~/.codex/config.toml"]
    assert config_file(codex_env).read_text() == text
    # Uninstall: the multi-line notify with its comments comes back byte for byte.
    rc, out, err = main(capsys, "--agent", "codex", "--uninstall")
    assert (rc, err) == (0, "")
    assert out.splitlines() == [
        "nothing to uninstall in ~/.codex/hooks.json",
        out.splitlines()[1],
        "kept: the runtime ~/.local/share/lookout",
        "note: python3 install.py --uninstall --purge removes them too",
    ]
    assert out.splitlines()[1].startswith(
        "restored your previous notify in ~/.codex/config.toml (backup: "
    )
    assert config_file(codex_env).read_text() == original
    assert not codex_config.notify_memo_path().exists()


def test_no_notify_is_inserted_before_the_first_table_and_removed_again(
    codex_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = (CODEX / "config-no-notify.toml").read_text()
    put(config_file(codex_env), original)
    install("notify")
    text = config_file(codex_env).read_text()
    assert text == original.replace(
        "# The fast profile.", codex_config.render(NOTIFY) + "# The fast profile.", 1
    )
    _, out, _ = main(capsys, "--agent", "codex", "--uninstall")
    assert "removed lookout's notify from ~/.codex/config.toml" in out
    assert config_file(codex_env).read_text() == original


def test_no_config_file_gets_one(codex_env: Path) -> None:
    assert install("notify") == ["set notify in ~/.codex/config.toml (new file)"]
    assert config_file(codex_env).read_text() == codex_config.render(NOTIFY)


def test_without_the_memo_the_previous_notify_comes_back_on_one_line(
    codex_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    put(config_file(codex_env), (CODEX / "config-commented.toml").read_text())
    install("notify")
    codex_config.notify_memo_path().unlink()
    main(capsys, "--agent", "codex", "--uninstall")
    text = config_file(codex_env).read_text()
    assert 'notify = ["notify-send", "--app-name=Codex", "Codex"]\n' in text
    assert codex_config.parse(text) == codex_config.parse(
        (CODEX / "config-commented.toml").read_text()
    )


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("broken", "invalid TOML: Unclosed array (at end of document)"),
        ("notify-string", "notify: expected an array of strings, got a string"),
    ],
)
def test_a_config_it_cannot_parse_is_refused(
    codex_env: Path, capsys: pytest.CaptureFixture[str], name: str, message: str
) -> None:
    original = (CODEX / f"config-{name}.toml").read_text()
    put(config_file(codex_env), original)
    for argv in (["--codex-notify", "--python", DEV_PY], ["--agent", "codex", "--uninstall"]):
        rc, _, err = main(capsys, *argv)
        assert rc == 1
        assert err == (
            f"error: ~/.codex/config.toml: {message}\n"
            "hint: fix or move the file; lookout changed nothing\n"
        )
        assert config_file(codex_env).read_text() == original
    assert backups(config_file(codex_env)) == []


def test_uninstall_with_nothing_to_do(codex_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    original = (CODEX / "config-commented.toml").read_text()  # someone else's notify
    put(config_file(codex_env), original)
    rc, out, err = main(capsys, "--agent", "codex", "--uninstall")
    assert (rc, err) == (0, "")
    assert out.splitlines() == [
        "nothing to uninstall in ~/.codex/hooks.json",
        "nothing to uninstall in ~/.codex/config.toml",
    ]
    assert config_file(codex_env).read_text() == original
    assert backups(config_file(codex_env)) == []


def test_notify_dry_run(codex_env: Path) -> None:
    original = (CODEX / "config-commented.toml").read_text()
    put(config_file(codex_env), original)
    diff = "\n".join(install("notify", dry_run=True))
    assert '-  "notify-send",   # libnotify' in diff
    assert f'+notify = ["{PY}"' in diff
    assert config_file(codex_env).read_text() == original


def test_hooks_replace_an_earlier_notify_and_notify_replaces_hooks(codex_env: Path) -> None:
    original = (CODEX / "config-commented.toml").read_text()
    put(config_file(codex_env), original)
    install("notify")
    lines = install("hooks")  # Codex was upgraded: one way of recording turns, not two
    assert lines[0] == f"installed {N} hooks into ~/.codex/hooks.json (new file)"
    assert lines[1].startswith("restored your previous notify in ~/.codex/config.toml")
    assert config_file(codex_env).read_text() == original
    lines = install("notify")
    assert lines[1] == f"removed ~/.codex/hooks.json ({N} hooks; install had created it)"
    assert not hooks_file(codex_env).exists()


# --- which way, by Codex version ---------------------------------------------------------------


def fake_codex(tmp_path: Path, version_line: str) -> str:
    path = tmp_path / "bin" / "codex"
    put(path, f"#!/bin/sh\necho '{version_line}'\n").chmod(0o755)
    return str(path)


@pytest.mark.parametrize(
    ("version", "line", "mode"),
    [
        ("codex-cli 0.169.0", "codex: Codex 0.169.0 has hooks: using ~/.codex/hooks.json", "hooks"),
        ("codex-cli 0.124.0", "codex: Codex 0.124.0 has hooks: using ~/.codex/hooks.json", "hooks"),
        (
            "codex-cli 0.123.9",
            "codex: Codex 0.123.9 has no hooks (they start in 0.124.0):"
            " using notify in ~/.codex/config.toml",
            "notify",
        ),
        (
            "garbage",
            "codex: {bin} --version failed: using hooks in ~/.codex/hooks.json"
            " (Codex 0.124.0+; for an older Codex add --codex-notify)",
            "hooks",
        ),
    ],
)
def test_the_codex_version_picks_the_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: str, line: str, mode: str
) -> None:
    binary = fake_codex(tmp_path, version)
    monkeypatch.setenv("LOOKOUT_CODEX", binary)
    lines: list[str] = []
    assert (
        codex_config.codex_mode(False, lines.append, codex.hooks_path(), codex.config_path())
        == mode
    )
    assert lines == [line.format(bin=binary)]


def test_no_codex_and_forced_notify(monkeypatch: pytest.MonkeyPatch) -> None:
    lines: list[str] = []
    assert (
        codex_config.codex_mode(False, lines.append, codex.hooks_path(), codex.config_path())
        == "hooks"
    )
    assert (
        codex_config.codex_mode(True, lines.append, codex.hooks_path(), codex.config_path())
        == "notify"
    )
    assert lines == [
        "codex: codex not found on PATH: using hooks in ~/.codex/hooks.json (Codex 0.124.0+;"
        " for an older Codex add --codex-notify)",
        "codex: --codex-notify: using notify in ~/.codex/config.toml",
    ]


# --- a real install, its commands run the way Codex runs them ----------------------------------


def codex_payload(name: str, **changes: object) -> bytes:
    data = json.loads((CODEX / "payloads" / f"{name}.json").read_text())
    data.update(changes)
    return json.dumps(data).encode()


def lookout_status(home: Path, env: dict[str, str]) -> dict[str, object]:
    done = subprocess.run(
        [str(home / ".local" / "bin" / "lookout"), "status", "--json", "--all"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.real  # a real runtime (copied, byte-compiled) whose hooks run
def test_real_install_records_codex_sessions_through_sh(
    tmp_path: Path,
    isolated_env: Path,
    codex_env: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    home = isolated_env
    old_version = fake_codex(tmp_path, "codex-cli 0.101.0")
    rc, out, err = main(capsys, "--agent", "codex", "--python", DEV_PY)
    assert (rc, err) == (0, ""), out
    data = json.loads(hooks_file(codex_env).read_text())
    project = tmp_path / "app"
    project.mkdir()
    state = tmp_path / "state"
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "LOOKOUT_STATE_DIR": str(state),
        "LOOKOUT_CONFIG": str(tmp_path / "none.toml"),
    }
    session = "01a214dd-0000-7000-8000-00000000c0de"
    common = {
        "session_id": session,
        "transcript_path": None,
        "cwd": str(project),
        "model": "gpt-5-codex",
        "permission_mode": "default",
    }
    turn = {"turn_id": "01a214dd-0000-7000-8000-0000000000a1"}
    for event, extra in (
        ("SessionStart", {"source": "startup"}),
        ("UserPromptSubmit", {**turn, "prompt": "rename foo"}),
        ("Stop", {**turn, "stop_hook_active": False, "last_assistant_message": "Renamed."}),
    ):
        hook = data["hooks"][event][0]["hooks"][0]["command"]
        done = subprocess.run(
            ["/bin/sh", "-c", hook],
            input=codex_payload(event, **common, **extra, hook_event_name=event),
            env=env,
            capture_output=True,
            timeout=30,
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    sessions = lookout_status(home, env)["sessions"]
    assert isinstance(sessions, list)
    (found,) = [s for s in sessions if s["session_id"] == session]
    assert found["agent"] == "codex"
    assert found["status"] == "idle"
    assert not (state / "errors.log").exists()

    # An older Codex: the legacy notify program, run with the JSON as its last argument.
    monkeypatch.setenv("LOOKOUT_CODEX", old_version)
    rc, out, err = main(capsys, "--agent", "codex", "--python", DEV_PY)
    assert (rc, err) == (0, "")
    assert "codex: Codex 0.101.0 has no hooks" in out
    argv = codex_config.notify_value(codex_config.parse(config_file(codex_env).read_text()))
    assert argv is not None
    thread = "01a214de-0000-7000-8000-0000000000b2"
    note = json.loads((CODEX / "payloads" / "notify-agent-turn-complete.json").read_text())
    note.update({"thread-id": thread, "cwd": str(project)})
    done = subprocess.run(
        [*argv, json.dumps(note)],
        env=env,
        capture_output=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    sessions = lookout_status(home, env)["sessions"]
    assert isinstance(sessions, list)
    (found,) = [s for s in sessions if s["session_id"] == thread]
    assert found["agent"] == "codex"
    # Nothing left pointing at the runtime after a purge.
    rc, out, err = main(capsys, "--uninstall", "--purge")
    assert (rc, err) == (0, "")
    assert "removed lookout's notify from ~/.codex/config.toml" in out
    assert config_file(codex_env).read_text() == ""
    shutil.rmtree(codex_env)


# --- lookout doctor on a Codex install ---------------------------------------------------------


def doctor_checks(capsys: pytest.CaptureFixture[str], check: str) -> list[tuple[str, str]]:
    from lookout.commands.main import main as cli_main

    cli_main(["doctor", "--json"])
    doc = json.loads(capsys.readouterr().out)
    return [(c["status"], c["message"]) for c in doc["checks"] if c["check"] == check]


def test_doctor_sees_codex_hooks_and_notify(
    tmp_path: Path,
    codex_env: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rc, _, err = main(capsys, "--agent", "codex", "--python", DEV_PY)
    assert (rc, err) == (0, "")
    checks = doctor_checks(capsys, "hooks (codex)")
    assert checks[0] == ("ok", f"{N} hooks in ~/.codex/hooks.json")
    assert checks[1] == ("ok", f"all {N} hook commands resolve and import the runner")
    # Codex's own trust records (config.toml's [hooks.state]): none yet.
    assert checks[2] == (
        "warn",
        f"Codex does not run {N} of lookout's {N} hooks until you trust them (new or changed: "
        + ", ".join(sorted(e for e, _, _ in codex.EVENTS))
        + ")",
    )
    assert doctor_checks(capsys, "hooks") == []  # Codex alone is an install, not a failure
    # Trusted the way Codex records it (/hooks in the TUI; hashes checked against 0.169.0's
    # app-server `hooks/list`): a record per hook, its hash over the hook's identity.
    installed = json.loads(hooks_file(codex_env).read_text())
    where = hooks_file(codex_env)
    records = "".join(
        f'[hooks.state."{where}:{codex_config.snake(event)}:0:0"]\n'
        f'trusted_hash = "{codex_config.trust_hash(event, {}, groups[0]["hooks"][0])}"\n'
        for event, groups in installed["hooks"].items()
    )
    config_file(codex_env).write_text(records)
    assert doctor_checks(capsys, "hooks (codex)")[2] == (
        "ok",
        f"Codex trusts all {N} of lookout's hooks",
    )
    # A hook changed since (another timeout): Codex asks again, and so does doctor.
    installed["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 11
    hooks_file(codex_env).write_text(json.dumps(installed))
    assert doctor_checks(capsys, "hooks (codex)")[-1][1].startswith(
        f"Codex does not run 1 of lookout's {N} hooks until you trust them (new or changed: Stop)"
    )
    config_file(codex_env).unlink()
    monkeypatch.setenv("LOOKOUT_CODEX", fake_codex(tmp_path, "codex-cli 0.100.0"))
    assert main(capsys, "--agent", "codex", "--python", DEV_PY)[0] == 0
    rt = paths.tilde(paths.runtime_home())
    assert doctor_checks(capsys, "notify (codex)") == [
        ("ok", f"notify in ~/.codex/config.toml runs {rt}/hooks/codex_notify.py")
    ]
    assert doctor_checks(capsys, "hooks (codex)") == []


# Codex 0.169.0's shared background server, as `ps` shows it: this test's stand-in runs the hook
# as that server does (its child), so lookout records it as the session's process.
FAKE_DAEMON = """
import subprocess, sys, time
subprocess.run([sys.executable, "-I", "-S", sys.argv[1]], input=sys.stdin.buffer.read(), check=True)
print("recorded", flush=True)
time.sleep(120)
"""


def test_doctor_recommends_no_daemon_for_sessions_of_codexs_shared_server(
    codex_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(capsys, "--agent", "codex", "--python", DEV_PY)[0] == 0
    assert not [m for s, m in doctor_checks(capsys, "hooks (codex)") if "background" in m]
    fixture = ROOT / "tests" / "fixtures" / "codex" / "payloads" / "UserPromptSubmit.json"
    body = fixture.read_bytes()
    argv = [sys.executable, "-c", FAKE_DAEMON, str(ROOT / "hooks" / "user_prompt_submit.py")]
    daemon = subprocess.Popen(
        [*argv, "app-server", "--listen", "unix://", "--managed-daemon"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "LOOKOUT_AGENT": "codex"},
    )
    try:
        assert daemon.stdin is not None and daemon.stdout is not None
        daemon.stdin.write(body)
        daemon.stdin.close()
        assert daemon.stdout.readline() == b"recorded\n"
        said = doctor_checks(capsys, "hooks (codex)")
        assert (
            "warn",
            "1 Codex session(s) run in Codex's shared background server (codex app-server):"
            " lookout knows neither their windows nor when they end",
        ) in said
    finally:
        daemon.kill()
        daemon.wait()


def test_doctor_flags_codex_commands_in_claude_settings(
    isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claude = isolated_env / ".claude" / "settings.json"
    codex_style = {"hooks": dict(settings.merge({}, codex.wanted(PY, HOME_RT))["hooks"])}
    put(claude, json.dumps(codex_style))
    checks = doctor_checks(capsys, "hooks (user)")
    assert (
        "warn",
        f"{N} of them are Codex commands (LOOKOUT_AGENT=codex): Claude Code sessions would be"
        " recorded as Codex ones",
    ) in checks
