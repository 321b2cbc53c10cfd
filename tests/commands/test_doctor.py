"""lookout doctor: each check's verdict on real installs and on broken ones, and that it changes
nothing."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from lookout import hookspec, paths
from lookout.commands.doctor import report as doctor
from lookout.commands.main import main as cli_main
from lookout.install import cli as install_cli
from tests.helpers import VERSION, preinstall_runtime, write_config

N = len(hookspec.EVENTS)


@pytest.fixture(autouse=True)
def quiet_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    proc = tmp_path / "proc"
    proc.mkdir()
    monkeypatch.setenv("LOOKOUT_PROC_DIR", str(proc))
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    # A machine with notify-send and a session bus, unless a test says otherwise.
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "notify-send").write_text("#!/bin/sh\nexit 0\n")
    (bindir / "notify-send").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:/usr/bin:/bin")
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent")
    return project


def install(capsys: pytest.CaptureFixture[str], *argv: str) -> None:
    """install.py over the runtime an earlier install of this checkout left (doctor judges what
    an install leaves, not how long it takes)."""
    preinstall_runtime()
    assert install_cli.main(["--python", sys.executable, *argv]) == 0
    capsys.readouterr()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    rc = cli_main(["doctor", "--json", *argv])
    return rc, json.loads(capsys.readouterr().out)


def verdicts(doc: dict[str, Any], check: str) -> list[tuple[str, str]]:
    return [(c["status"], c["message"]) for c in doc["checks"] if c["check"] == check]


def test_nothing_installed_is_a_problem(capsys: pytest.CaptureFixture[str]) -> None:
    rc, doc = run(capsys)
    assert rc == 1 and doc["ok"] is False
    assert verdicts(doc, "hooks") == [("fail", "lookout's hooks are not installed in any scope")]


def test_a_good_install(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    install(capsys)
    rc, doc = run(capsys)
    assert rc == 0, doc
    assert verdicts(doc, "hooks (user)") == [
        ("ok", f"{N} hooks in ~/.claude/settings.json"),
        ("ok", f"all {N} hook commands resolve and import the runner"),
    ]
    ((status, message),) = verdicts(doc, "runtime")
    assert status == "ok" and message.startswith(f"~/.local/share/lookout: {VERSION} (")
    assert verdicts(doc, "hook pack") == [
        ("ok", "the hook path is precompiled into one file, current")
    ]
    assert verdicts(doc, "hooks (project)")[0][0] == "info"
    assert verdicts(doc, "channel desktop")[0][0] == "ok"
    text_rc = cli_main(["doctor"])
    text = capsys.readouterr().out
    assert text_rc == 0 and text.endswith("no problems found\n")
    assert f"ok    hooks (user): {N} hooks in ~/.claude/settings.json\n" in text


def test_a_stale_hook_pack_is_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    install(capsys)
    machine = paths.runtime_home() / "current" / "lookout" / "machine.py"
    machine.write_text(machine.read_text() + "\n")  # edited after install wrote the pack
    rc, doc = run(capsys)
    ((status, message),) = verdicts(doc, "hook pack")
    assert status == "warn" and "out of date" in message
    assert rc == 0  # the hooks still work


def test_doctor_changes_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    install(capsys)
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (state / "errors.log").write_text("boom\n")

    def snapshot() -> dict[str, tuple[int, int, bytes]]:
        out = {}
        for p in sorted(tmp_path.rglob("*")):
            if p.is_file() and not p.is_symlink():
                st = p.stat()
                out[str(p)] = (st.st_mtime_ns, st.st_mode, p.read_bytes())
            elif p.is_dir():
                out[str(p)] = (0, p.stat().st_mode, b"")
        return out

    before = snapshot()
    run(capsys)
    assert snapshot() == before


def test_a_missing_script_and_a_missing_interpreter_fail(
    capsys: pytest.CaptureFixture[str], isolated_env: Path
) -> None:
    install(capsys)
    (isolated_env / ".local" / "share" / "lookout" / "hooks" / "stop.py").unlink()
    rc, doc = run(capsys)
    assert rc == 1
    (status, message) = verdicts(doc, "hooks (user)")[1]
    assert status == "fail"
    assert (
        message
        == "1 hook commands cannot run: script ~/.local/share/lookout/hooks/stop.py is missing"
    )
    settings = isolated_env / ".claude" / "settings.json"
    settings.write_text(settings.read_text().replace(sys.executable, "/nonexistent/python"))
    rc, doc = run(capsys)
    assert rc == 1
    assert f"{N} hook commands cannot run: interpreter /nonexistent/python not found" in [
        m for _, m in verdicts(doc, "hooks (user)")
    ]


def test_a_runtime_that_cannot_import_fails(
    capsys: pytest.CaptureFixture[str], isolated_env: Path
) -> None:
    install(capsys)
    runner = isolated_env / ".local" / "share" / "lookout" / "current" / "lookout" / "runner.py"
    runner.write_text("raise ImportError('broken on purpose')\n")
    for pyc in runner.parent.glob("__pycache__/runner.*"):
        pyc.unlink()
    rc, doc = run(capsys)
    assert rc == 1
    (_, message) = verdicts(doc, "hooks (user)")[1]
    assert "cannot import the runner: ImportError: broken on purpose" in message


def test_old_layout_from_path_and_partial_install_warn(
    capsys: pytest.CaptureFixture[str], isolated_env: Path
) -> None:
    install(capsys)
    rt = isolated_env / ".local" / "share" / "lookout"
    settings = isolated_env / ".claude" / "settings.json"
    settings.write_text(
        json.dumps(
            {
                "hooks": {
                    "Stop": [
                        {"hooks": [{"type": "command", "command": f"python3 {rt}/hooks/stop.py"}]}
                    ]
                }
            }
        )
    )
    rc, doc = run(capsys)
    checks = verdicts(doc, "hooks (user)")
    assert rc == 0
    assert checks[0][0] == "warn" and checks[0][1].startswith(
        f"1 hooks in ~/.claude/settings.json, missing {N - 1} events"
    )
    assert ("warn", "commands run python3 from PATH (slower, may change)") in checks


def test_broken_settings_in_a_scope_fail(
    capsys: pytest.CaptureFixture[str], quiet_env: Path
) -> None:
    install(capsys)
    (quiet_env / ".claude").mkdir()
    (quiet_env / ".claude" / "settings.local.json").write_text("{\n  nope\n}\n")
    rc, doc = run(capsys)
    assert rc == 1
    ((status, message),) = verdicts(doc, "hooks (local)")
    assert status == "fail"
    assert message == (
        f"{quiet_env}/.claude/settings.local.json: invalid JSON at line 2 column 3:"
        " Expecting property name enclosed in double quotes"
    )


def test_plugin_only_is_fine_and_plugin_plus_settings_warns(
    capsys: pytest.CaptureFixture[str], isolated_env: Path
) -> None:
    settings = isolated_env / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"enabledPlugins": {"lookout@lookout-dev": true}}')
    rc, doc = run(capsys)
    assert rc == 0
    assert verdicts(doc, "plugin (user)") == [
        ("ok", "the lookout plugin is enabled in ~/.claude/settings.json")
    ]
    install(capsys, "--scope", "local")
    rc, doc = run(capsys)
    assert rc == 0
    assert verdicts(doc, "hooks")[0][1].startswith("installed both as a plugin and in settings")


def test_an_invalid_config_fails(capsys: pytest.CaptureFixture[str], isolated_env: Path) -> None:
    install(capsys)
    config = isolated_env / ".config" / "lookout" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[channels.phone]\ntype = 3\n")
    rc, doc = run(capsys)
    assert rc == 1
    ((status, message),) = verdicts(doc, "config")
    assert status == "fail" and "channels.phone.type" in message


def test_state_permissions_and_errors_log_warn(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    install(capsys)
    state = tmp_path / "state"
    state.mkdir()
    state.chmod(0o755)
    (state / "events.jsonl").write_text("")
    (state / "events.jsonl").chmod(0o644)
    (state / "errors.log").write_text("2026-11-25 boom: KeyError\n  traceback line\n")
    (state / "errors.log").chmod(0o600)
    rc, doc = run(capsys)
    assert rc == 0
    checks = verdicts(doc, "state")
    assert checks[0] == ("warn", f"{state} has mode 0755: others can read your prompts")
    assert checks[1] == ("warn", "1 files readable by others (events.jsonl)")
    assert checks[2] == ("warn", "errors.log has 2 lines; last: 2026-11-25 boom: KeyError")


def test_state_dir_not_created_yet_is_fine(capsys: pytest.CaptureFixture[str]) -> None:
    install(capsys)
    rc, doc = run(capsys)
    assert rc == 0 and verdicts(doc, "state")[0][0] == "info"


def test_desktop_channel_without_a_bus(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    install(capsys)
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    rc, doc = run(capsys)
    assert rc == 0  # the machine cannot show it; not a broken install
    ((status, message),) = verdicts(doc, "channel desktop")
    assert status == "warn" and message.endswith("D-Bus session bus missing")
    monkeypatch.setenv("PATH", "/nonexistent")
    _, doc = run(capsys)
    assert verdicts(doc, "channel desktop")[0][1].startswith("notify-send not found")


def test_warnings_are_counted_never_no_problems(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # issue 22 item 15: warn lines, then "no problems found", read as all clear.
    install(capsys)
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    rc, doc = run(capsys)
    warned = sum(c["status"] == "warn" for c in doc["checks"])
    assert warned >= 1 and rc == 0
    assert (doc["ok"], doc["problems"], doc["warnings"]) == (True, 0, warned)
    assert cli_main(["doctor"]) == 0
    text = capsys.readouterr().out
    assert "no problems found" not in text
    word = "warning" if warned == 1 else "warnings"
    assert text.endswith(f"\n{warned} {word} (nothing failed)\n")
    report = doctor.Report()
    report.add("a", doctor.FAIL, "broken")
    report.add("b", doctor.WARN, "odd")
    report.add("c", doctor.WARN, "odd too")
    assert doctor.render(report).splitlines()[-1] == "1 problem found, 2 warnings"


def test_other_channels(
    capsys: pytest.CaptureFixture[str], isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(capsys)
    config = isolated_env / ".config" / "lookout" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        '[channels.phone]\ntype = "ntfy"\nurl = "https://ntfy.example/topic"\n'
        'token_env = "NTFY_TOKEN"\n'
        '[channels.mine]\ntype = "command"\nargv = ["no-such-program-here", "{title}"]\n'
        '[channels.unused]\ntype = "command"\nargv = ["not-used-by-a-rule"]\n'
        '[[rules]]\nwhen = ["done"]\nchannels = ["mine"]\nescalate_after_s = 60\n'
        'escalate_to = ["phone"]\n'
    )
    monkeypatch.delenv("NTFY_TOKEN", raising=False)
    rc, doc = run(capsys)
    assert rc == 0, doc
    assert verdicts(doc, "channel phone") == [
        ("warn", "ntfy: environment variable NTFY_TOKEN is not set")
    ]
    assert verdicts(doc, "channel mine") == [
        ("warn", "command 'no-such-program-here' not found on PATH")
    ]
    assert verdicts(doc, "channel unused") == []
    monkeypatch.setenv("NTFY_TOKEN", "tk_x")
    _, doc = run(capsys)
    assert verdicts(doc, "channel phone")[0][0] == "ok"


def test_a_telegram_api_in_clear_text_and_an_empty_user_list_warn(
    capsys: pytest.CaptureFixture[str], isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(capsys)
    monkeypatch.setenv("TG_TOKEN", "123:abc")
    write_config(
        '[channels.chat]\ntype = "telegram"\ntoken_env = "TG_TOKEN"\nchat_id = 1001\n'
        'api_url = "http://tg-proxy.example.net:8080"\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["chat"]\n[remote]\nenabled = true\n'
    )
    _, doc = run(capsys)
    assert verdicts(doc, "channel chat") == [
        ("warn", "api_url: http://tg-proxy.example.net:8080 is not encrypted: the bot token (part"
         " of every call's URL) crosses the network in clear text, and whoever holds it can"
         " answer your requests (use https://)"),
        ("warn", "allowed_user_ids is empty: a press from anyone in chat 1001 answers a"
         " permission request (set it to your Telegram user id)"),
    ]  # fmt: skip
    write_config(
        '[channels.chat]\ntype = "telegram"\ntoken_env = "TG_TOKEN"\nchat_id = 1001\n'
        "allowed_user_ids = [1001]\n"
        '[[rules]]\nwhen = ["permission"]\nchannels = ["chat"]\n[remote]\nenabled = true\n'
    )
    _, doc = run(capsys)
    assert verdicts(doc, "channel chat") == [
        ("ok", "telegram configured (reached over the network when sent)")
    ]


def test_project_option(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    install(capsys, "--scope", "project", "--project", str(other))
    rc, doc = run(capsys, "--project", str(other))
    assert rc == 0
    assert verdicts(doc, "hooks (project)")[0] == (
        "ok",
        f"{N} hooks in {other}/.claude/settings.json",
    )
    assert os.path.exists(other / ".claude" / "settings.json")


def test_project_in_the_home_directory_is_not_counted_twice(
    capsys: pytest.CaptureFixture[str], isolated_env: Path
) -> None:
    install(capsys)
    rc, doc = run(capsys, "--project", str(isolated_env))
    assert rc == 0
    assert verdicts(doc, "hooks (project)") == []
    assert verdicts(doc, "hooks") == []


def test_plugin_needs_a_recent_python3_on_path(
    capsys: pytest.CaptureFixture[str],
    isolated_env: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = isolated_env / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"enabledPlugins": {"lookout@lookout-dev": true}}')
    old = tmp_path / "old-python"
    old.mkdir()
    (old / "python3").write_text("#!/bin/sh\necho 3.8\n")
    (old / "python3").chmod(0o755)
    monkeypatch.setenv("PATH", f"{old}:/usr/bin:/bin")
    rc, doc = run(capsys)
    assert rc == 1
    assert verdicts(doc, "plugin") == [
        ("fail", f"python3 on PATH ({old}/python3) is 3.8; lookout needs 3.11+")
    ]


def test_doctor_shows_failed_deliveries(tmp_path: Path) -> None:
    from lookout import store

    state = os.environ["LOOKOUT_STATE_DIR"]
    with store.Locked(state, store.DELIVERIES_LOCK) as st:
        st.append(
            store.DELIVERIES,
            {
                "ts": "2026-11-25T21:00:00.000Z",
                "kind": "done",
                "channel": "desktop",
                "result": "sent",
                "detail": "",
            },
        )
    with store.Locked(state, store.DELIVERIES_LOCK) as st:
        st.append(
            store.DELIVERIES,
            {
                "ts": "2026-11-25T21:00:05.000Z",
                "kind": "permission",
                "channel": "phone",
                "result": "failed",
                "detail": "HTTP 401 unauthorized",
            },
        )
    report = doctor.diagnose(str(tmp_path))
    found = [c for c in report.checks if c.check == "deliveries"]
    assert len(found) == 1
    assert found[0].status == doctor.WARN
    assert (
        "1 failed" in found[0].message
        and "phone" in found[0].message
        and "HTTP 401" in found[0].message
    )


def test_desktop_is_judged_by_what_the_hooks_last_saw(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from lookout import store

    install(capsys)  # the default config: a desktop channel
    state = os.environ["LOOKOUT_STATE_DIR"]

    def delivered(result: str, detail: str, session: str = "s1") -> None:
        with store.Locked(state, store.DELIVERIES_LOCK) as st:
            st.append(store.DELIVERIES, {
                "ts": "2026-11-26T01:23:27.000Z", "session_id": session, "kind": "permission",
                "channel": "desktop", "result": result, "detail": detail,
            })  # fmt: skip

    # This shell has a bus, but the session's hooks did not.
    delivered("failed", "notify-send exited with 1: Cannot autolaunch D-Bus without X11 $DISPLAY")
    rc, doc = run(capsys)
    assert rc == 0  # a warning: the install is fine, the session's environment is not
    ((status, message),) = verdicts(doc, "channel desktop")
    assert status == "warn"
    assert message.startswith(
        "the hooks' last desktop notification failed (desktop, 2026-11-26T01:23:27.000Z):"
        " notify-send exited with 1: Cannot autolaunch D-Bus without X11 $DISPLAY; in this"
        " shell: notify-send at "
    )
    hint = next(c["hint"] for c in doc["checks"] if c["check"] == "channel desktop")
    assert hint.startswith("the hooks run with Claude Code's environment, not this shell's")
    delivered("sent", "lookout test: notify-send id 3", session="lookout-test")  # this shell's
    assert verdicts(run(capsys)[1], "channel desktop")[0][0] == "warn"
    delivered("sent", "notify-send id 20")
    ((status, message),) = verdicts(run(capsys)[1], "channel desktop")
    assert status == "ok" and message.startswith("the hooks' last desktop notification was sent")


def test_doctor_never_runs_what_a_repository_chose(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # A cloned repository whose .claude/settings.json names its own interpreter and runtime (H1).
    repo = tmp_path / "evil"
    marker = tmp_path / "RAN"
    interpreter = repo / "bin" / "python"
    interpreter.parent.mkdir(parents=True)
    interpreter.write_text(
        f'#!/bin/sh\necho interpreter >> "{marker}"\nexec {sys.executable} "$@"\n'
    )
    interpreter.chmod(0o755)
    runtime = repo / "vendor" / "lookout"
    (runtime / "hooks").mkdir(parents=True)
    (runtime / "lookout").mkdir()
    (runtime / "lookout" / "__init__.py").write_text("")
    (runtime / "lookout" / "runner.py").write_text(
        f"open({str(marker)!r}, 'a').write('import\\n')\n"
    )
    hooks: dict[str, Any] = {}
    for event, script, _async in hookspec.EVENTS:
        (runtime / "hooks" / script).write_text("")
        command = f"{interpreter} -I -S {runtime / 'hooks' / script}"
        hooks[event] = [{"hooks": [{"type": "command", "command": command}]}]
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    install(capsys)  # the user's own install: probed as before
    rc, doc = run(capsys, "--project", str(repo))
    assert not marker.exists(), marker.read_text()
    assert rc == 0
    assert verdicts(doc, "hooks (project)")[-1] == (
        "ok",
        f"all {N} hook commands resolve; {N} of them use an interpreter or runtime the"
        " repository chose: found, not run (doctor never runs what a repository chose)",
    )
    assert verdicts(doc, "hooks (user)")[-1] == (
        "ok",
        f"all {N} hook commands resolve and import the runner",
    )


def test_a_project_install_of_the_users_own_runtime_is_still_probed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    other = tmp_path / "elsewhere"
    install(capsys)
    install(capsys, "--scope", "project", "--project", str(other))
    rc, doc = run(capsys, "--project", str(other))
    assert rc == 0
    assert verdicts(doc, "hooks (project)")[-1] == (
        "ok",
        f"all {N} hook commands resolve and import the runner",
    )


def test_doctor_says_a_project_file_is_ignored_and_why(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    repo = tmp_path / "evil"
    (repo / ".claude").mkdir(parents=True)
    (repo / ".claude" / "lookout.toml").write_text(
        '[channels.x]\ntype = "command"\nargv = ["id"]\n'
    )
    _rc, doc = run(capsys, "--project", str(repo))
    assert verdicts(doc, "config")[-1] == (
        "warn",
        f'{repo}/.claude/lookout.toml: ignored: not trusted; it sets channels.x.type = "command"'
        " (and 1 more)",
    )


def test_remote_answers_need_the_installer_to_run_again(
    capsys: pytest.CaptureFixture[str],
) -> None:
    install(capsys)
    write_config("[remote]\nenabled = true\n")
    _, doc = run(capsys)
    ((status, message),) = verdicts(doc, "remote")
    assert status == "warn" and "the deciding hook is not registered" in message
    install(capsys)
    _, doc = run(capsys)
    assert verdicts(doc, "remote") == [
        ("ok", "remote answers are on: requests wait up to 300 s (tools: *)"),
        ("info", "alerts carry no link to the request (set [remote] url)"),
    ]
    write_config('[remote]\nenabled = true\nwait_s = 60\nurl = "https://h.example:8787"\n')
    _, doc = run(capsys)
    ((status, message),) = verdicts(doc, "remote")
    assert status == "warn" and "(want 75 s)" in message
    write_config("# remote off\n")
    _, doc = run(capsys)
    ((status, message),) = verdicts(doc, "remote")
    assert status == "warn" and "[remote] is off" in message


def test_other_agents_are_checked(capsys: pytest.CaptureFixture[str], isolated_env: Path) -> None:
    (isolated_env / ".gemini").mkdir()
    install(capsys, "--agent", "gemini")
    install(capsys, "--agent", "opencode")
    (isolated_env / ".cursor").mkdir()  # Cursor set up here, lookout not installed for it
    rc, doc = run(capsys)
    assert rc == 0, doc
    gemini = verdicts(doc, "hooks (gemini)")
    assert ("ok", "7 hooks in ~/.gemini/settings.json") in gemini
    assert ("ok", "all 7 hook commands resolve and import the runner") in gemini
    opencode = verdicts(doc, "hooks (opencode)")
    assert ("ok", "lookout's plugin ~/.config/opencode/plugin/lookout.js") in opencode
    assert ("ok", "all 1 hook commands resolve and import the runner") in opencode
    assert verdicts(doc, "hooks (cursor)") == [
        ("info", "not installed (python3 install.py --agent cursor)")
    ]
    assert verdicts(doc, "hooks (copilot)") == []  # not set up on this machine: not a word


def test_a_broken_agent_file_is_a_problem(
    capsys: pytest.CaptureFixture[str], isolated_env: Path
) -> None:
    install(capsys)
    path = isolated_env / ".cursor" / "hooks.json"
    path.parent.mkdir()
    path.write_text('{"version": 1, "hooks": {"stop": {}}}')
    rc, doc = run(capsys)
    assert rc == 1
    ((status, message),) = verdicts(doc, "hooks (cursor)")
    assert status == "fail" and "hooks.stop: expected an array of hooks" in message
    assert path.read_text() == '{"version": 1, "hooks": {"stop": {}}}'


def test_an_agent_hook_whose_runtime_is_gone_fails(
    capsys: pytest.CaptureFixture[str], isolated_env: Path
) -> None:
    (isolated_env / ".gemini").mkdir()
    install(capsys, "--agent", "gemini")
    (isolated_env / ".local" / "share" / "lookout" / "hooks" / "gemini.py").unlink()
    rc, doc = run(capsys)
    assert rc == 1
    assert any(
        s == "fail" and "gemini.py is missing" in m for s, m in verdicts(doc, "hooks (gemini)")
    )


def test_doctor_says_whether_away_is_on_and_whom_it_makes_wait(
    capsys: pytest.CaptureFixture[str], isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(isolated_env / ".codex"))
    monkeypatch.setenv("LOOKOUT_CODEX", "")  # no real codex is asked its version
    _, doc = run(capsys)
    assert verdicts(doc, "away") == [
        ("info", "away is off (it makes Codex wait once [remote] is on and installed)")
    ]
    assert cli_main(["away", "on"]) == 0
    capsys.readouterr()
    _, doc = run(capsys)
    assert verdicts(doc, "away") == [
        ("warn", "away is on (from terminal), but it makes no agent wait: [remote] is off")
    ]
    write_config("[remote]\nenabled = true\nwait_s = 60\n")
    install(capsys, "--agent", "codex")
    _, doc = run(capsys)
    assert verdicts(doc, "away") == [
        (
            "ok",
            "away is on (from terminal): it makes Codex wait up to 60 s for an answer from"
            " afar before its own prompt",
        )
    ]
    assert cli_main(["away", "off"]) == 0
    write_config("[remote]\nenabled = true\nwait_s = 90\n")  # install.py not run again
    capsys.readouterr()
    _, doc = run(capsys)
    # Codex would give up on its deciding hook before the wait ends: said as Claude Code's is.
    assert verdicts(doc, "remote")[0] == (
        "warn",
        "the deciding hook's timeout (codex: 75 s) does not follow wait_s = 90 (want 105 s)",
    )
    assert verdicts(doc, "away") == [
        (
            "info",
            "away is off (from terminal): Codex asks at its own prompt at once (`lookout"
            " away on` makes it wait for an answer from afar)",
        ),
    ]
