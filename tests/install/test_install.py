"""lookout.install: settings files on disk (golden cases), backups, atomic writes, scopes,
uninstall/purge and a real install whose hook commands are run through /bin/sh -c."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest

from lookout import hookspec, paths, swap
from lookout.config import notify
from lookout.config.files import load as load_config
from lookout.errors import LookoutError
from lookout.install import cli as install_cli
from lookout.install import files, hooks, registry, runtime, runtimes, settings
from tests.helpers import FIXTURES, ROOT, VERSION, write_config

CASES = FIXTURES / "settings"
SCHEMA = json.loads((FIXTURES / "claude-code-settings.schema.json").read_text())
PY = "/home/dev/.local/share/lookout/venv/bin/python"
HOME_RT = Path("/home/dev/.local/share/lookout")
# An interpreter that already has tomli-w: installs in tests skip the venv.
DEV_PY = sys.executable
N = len(hookspec.EVENTS)


@pytest.fixture(autouse=True)
def no_running_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    proc = tmp_path / "proc"
    proc.mkdir()
    monkeypatch.setenv("LOOKOUT_PROC_DIR", str(proc))
    return proc


def settings_file(home: Path) -> Path:
    return home / ".claude" / "settings.json"


def lay_out(case: Path, home: Path) -> Path:
    """Put the case's before.json where the user settings live, in the case's layout."""
    layout = (
        json.loads((case / "case.json").read_text())["layout"]
        if (case / "case.json").exists()
        else ""
    )
    target = settings_file(home)
    before = case / "before.json"
    if layout == "no-claude-dir":
        return target
    target.parent.mkdir(parents=True)
    if not before.exists():
        return target
    if layout == "symlink":
        real = home / "dotfiles" / "claude-settings.json"
        real.parent.mkdir()
        shutil.copyfile(before, real)
        target.symlink_to(real)
    else:
        shutil.copyfile(before, target)
    if layout == "read-only":
        target.chmod(0o444)
    return target


def run_install(target: Path) -> tuple[int, list[str], str]:
    lines: list[str] = []
    try:
        hooks.install_into(files.load_settings(target), PY, HOME_RT, False, lines.append)
    except LookoutError as exc:
        return 1, lines, f"error: {exc}\nhint: {exc.hint}\n"
    return 0, lines, ""


def backups(target: Path) -> list[Path]:
    return registry.backups_of(target)


def leftovers(directory: Path) -> list[Path]:
    return [p for p in directory.rglob("*") if p.name.endswith(".lookout-tmp")]


@pytest.mark.parametrize("case", sorted(CASES.iterdir()), ids=lambda p: p.name)
def test_install_on_disk_matches_golden(case: Path, isolated_env: Path) -> None:
    target = lay_out(case, isolated_env)
    before = target.read_bytes() if target.exists() else None
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else None
    rc, lines, err = run_install(target)
    if (case / "error.txt").exists():
        assert (rc, lines) == (1, [])
        assert err == (case / "error.txt").read_text()
        assert target.read_bytes() == before
        assert stat.S_IMODE(target.stat().st_mode) == mode
        assert backups(target) == [] and leftovers(isolated_env) == []
        return
    after = (case / "after.json").read_bytes()
    assert rc == 0, err
    assert target.read_bytes() == after
    jsonschema.validate(json.loads(after), SCHEMA)
    if before is None:
        assert lines == [f"installed {N} hooks into ~/.claude/settings.json (new file)"]
        assert backups(target) == []
    else:
        (backup,) = backups(target)
        assert backup.read_bytes() == before
        assert stat.S_IMODE(target.stat().st_mode) == mode
        assert lines[0].startswith(f"installed {N} hooks into ~/.claude/settings.json (")
        assert lines[0].endswith(f"backup: {paths.tilde(backup)})")
    if case.name == "symlink":
        assert target.is_symlink(), "the write must go through the link, not replace it"
        assert (isolated_env / "dotfiles" / "claude-settings.json").read_bytes() == after
    assert leftovers(isolated_env) == []
    # Second run: byte-identical, says so, no new backup.
    n_backups = len(backups(target))
    rc, lines, _ = run_install(target)
    assert (rc, lines) == (0, [f"already installed: {N} hooks in ~/.claude/settings.json"])
    assert target.read_bytes() == after and len(backups(target)) == n_backups


def test_stale_entries_are_reported_as_replaced(isolated_env: Path) -> None:
    target = lay_out(CASES / "older-layout", isolated_env)
    _, lines, _ = run_install(target)
    assert lines[0].startswith(f"installed {N} hooks into ~/.claude/settings.json (replaced 6 from")


def test_a_crash_before_the_replace_leaves_the_original(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = lay_out(CASES / "other-keys", isolated_env)
    original = target.read_bytes()

    def crash(src: str, dst: str) -> None:
        assert Path(src).read_bytes().startswith(b"{")  # the temp file was fully written
        raise OSError(5, "simulated crash")

    monkeypatch.setattr(files.os, "replace", crash)
    monkeypatch.setattr(swap, "exchange", crash)  # the final switch where there is one
    rc, _, err = run_install(target)
    (backup,) = backups(target)
    assert rc == 1
    assert err == (
        "error: ~/.claude/settings.json: cannot write: simulated crash\n"
        f"hint: the file is unchanged; {paths.tilde(backup)} is a copy of it\n"
    )
    assert target.read_bytes() == original
    assert leftovers(isolated_env) == []


def test_read_back_mismatch_is_an_error(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = lay_out(CASES / "other-keys", isolated_env)
    real_write = files.atomic_write

    def corrupting(path: Path, data: bytes, mode: int, expect: bytes | None = None) -> None:
        real_write(path, data[:-2], mode, expect)

    monkeypatch.setattr(files, "atomic_write", corrupting)
    rc, _, err = run_install(target)
    (backup,) = backups(target)
    assert rc == 1
    assert err == (
        "error: ~/.claude/settings.json: read-back differs from what was written\n"
        f"hint: restore it from {paths.tilde(backup)}\n"
    )


def test_backups_are_private_bounded_and_never_more_readable(isolated_env: Path) -> None:
    target = isolated_env / "proj" / ".claude" / "settings.json"
    names = [registry.backup(target, f"v{i}".encode(), 0o644, now=0).name for i in range(5)]
    assert names[:2] == [names[0], f"{names[0]}-01"]  # same second: no collision
    kept = backups(target)
    assert [p.read_text() for p in kept] == ["v2", "v3", "v4"]  # the last few only
    assert all(p.parent.parent == registry.backups_root() for p in kept)  # not in the repo
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in kept)  # 0644 -> owner only
    assert stat.S_IMODE(registry.backups_root().stat().st_mode) == 0o700
    secret = registry.backup(target, b"token", 0o600)
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert not target.parent.exists()


def test_new_file_gets_the_umask_mode(isolated_env: Path) -> None:
    target = settings_file(isolated_env)
    old = os.umask(0o027)
    try:
        run_install(target)
    finally:
        os.umask(old)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_an_unwritable_directory_is_an_error_naming_it(isolated_env: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    target = settings_file(isolated_env)
    target.parent.mkdir()
    target.write_text("{}\n")
    target.parent.chmod(0o555)
    try:
        rc, _, err = run_install(target)
    finally:
        target.parent.chmod(0o755)
    assert rc == 1 and "cannot write" in err and target.read_text() == "{}\n"


# --- main(): scopes, dry run, uninstall, purge ----------------------------------------------


def main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = install_cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def fake_runtime(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """main() without the venv, code copy and command: just the settings part."""
    calls: list[str] = []
    monkeypatch.setattr(runtime, "ensure_interpreter", lambda home, given, out: PY)

    def unchanged(home: Path, python: str, checkout: Path) -> runtimes.Outcome:
        calls.append("code")
        return runtimes.Outcome(home, built=False, switched=False, before=None)

    monkeypatch.setattr(runtimes, "install_runtime", unchanged)
    monkeypatch.setattr(runtime, "install_wrapper", lambda python, home, out: None)
    monkeypatch.setattr(runtime, "install_config", lambda out: None)
    return calls


def test_user_scope_honours_claude_config_dir(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cc"))
    assert paths.scope_path("user") == tmp_path / "cc" / "settings.json"
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    assert paths.scope_path("user") == isolated_env / ".claude" / "settings.json"


def test_project_and_local_scopes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_runtime: list[str]
) -> None:
    project = tmp_path / "app"
    rc, out, _ = main(capsys, "--scope", "local", "--project", str(project))
    assert rc == 0
    local = project / ".claude" / "settings.local.json"
    assert f"installed {N} hooks into {local} (new file)" in out
    assert settings.count_ours(json.loads(local.read_text())) == N
    _, out, _ = main(capsys, "--scope", "project", "--project", str(project))
    assert "--scope local keeps them out of git" in out
    assert (project / ".claude" / "settings.json").exists()


def test_explicit_settings_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_runtime: list[str]
) -> None:
    target = tmp_path / "x" / "my-settings.json"
    rc, out, _ = main(capsys, "--settings", str(target))
    assert rc == 0 and target.exists() and str(target) in out
    with pytest.raises(SystemExit) as info:
        install_cli.main(["--settings", str(target), "--scope", "local"])
    assert info.value.code == 2
    assert "--settings replaces --scope/--project" in capsys.readouterr().err


def test_dry_run_prints_a_diff_and_writes_nothing(
    isolated_env: Path, capsys: pytest.CaptureFixture[str], fake_runtime: list[str]
) -> None:
    target = lay_out(CASES / "other-keys", isolated_env)
    original = target.read_bytes()
    rc, out, _ = main(capsys, "--dry-run")
    assert rc == 0
    lines = out.splitlines()
    assert lines[0].startswith("dry run: would install the runtime into ~/.local/share/lookout")
    assert lines[1:3] == ["--- ~/.claude/settings.json", "+++ ~/.claude/settings.json"]
    assert '-  "cleanupPeriodDays": 30' in lines and '+  "cleanupPeriodDays": 30,' in lines
    assert target.read_bytes() == original and backups(target) == [] and fake_runtime == []
    assert not (isolated_env / ".local" / "share" / "lookout").exists()


def test_dry_run_of_a_new_file_diffs_against_dev_null(
    isolated_env: Path, capsys: pytest.CaptureFixture[str], fake_runtime: list[str]
) -> None:
    _, out, _ = main(capsys, "--dry-run")
    assert "--- /dev/null\n+++ ~/.claude/settings.json\n" in out
    assert not settings_file(isolated_env).exists()


def test_errors_print_error_and_hint_and_change_nothing(
    isolated_env: Path, capsys: pytest.CaptureFixture[str], fake_runtime: list[str]
) -> None:
    target = lay_out(CASES / "invalid-json", isolated_env)
    rc, out, err = main(capsys)
    assert (rc, out) == (1, "")
    assert err == (CASES / "invalid-json" / "error.txt").read_text()
    assert fake_runtime == []  # refused before the runtime was touched
    assert not (isolated_env / ".local").exists() and backups(target) == []


def test_uninstall_removes_only_ours_and_says_nothing_the_second_time(
    isolated_env: Path, capsys: pytest.CaptureFixture[str], fake_runtime: list[str]
) -> None:
    target = lay_out(CASES / "claude-written", isolated_env)
    original = target.read_bytes()
    main(capsys)
    rc, out, _ = main(capsys, "--uninstall")
    assert rc == 0
    assert out.startswith(f"removed {N} hooks from ~/.claude/settings.json (backup: ~/.local/")
    assert target.read_bytes() == original  # a Claude-Code-written file: identical bytes
    rc, out, _ = main(capsys, "--uninstall")
    assert (rc, out) == (0, "nothing to uninstall in ~/.claude/settings.json\n")


def test_uninstall_without_a_file(isolated_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = main(capsys, "--uninstall")
    assert (rc, out) == (0, "nothing to uninstall in ~/.claude/settings.json\n")
    assert not settings_file(isolated_env).exists()


def test_uninstall_dry_run(
    isolated_env: Path, capsys: pytest.CaptureFixture[str], fake_runtime: list[str]
) -> None:
    main(capsys)
    installed = settings_file(isolated_env).read_bytes()
    rc, out, _ = main(capsys, "--uninstall", "--dry-run")
    assert (rc, out) == (
        0,
        "would remove ~/.claude/settings.json (install created it; only lookout's hooks are in"
        " it)\nwould keep: the runtime ~/.local/share/lookout\n"
        "note: python3 install.py --uninstall --purge removes them too\n",
    )
    assert settings_file(isolated_env).read_bytes() == installed
    settings_file(isolated_env).write_text(installed.decode().replace("{", '{"model": "x",', 1))
    rc, out, _ = main(capsys, "--uninstall", "--dry-run")
    assert rc == 0 and out.count("\n-") > N and '"model": "x"' in out


def fake_process(
    proc: Path,
    pid: str,
    comm: str = "claude",
    argv0: str = "claude",
    state: str = "S",
    home: str | None = None,
) -> None:
    """A /proc/PID entry as running_claude reads it (comm, cmdline, stat, environ)."""
    (proc / pid).mkdir()
    (proc / pid / "comm").write_text(comm + "\n")
    (proc / pid / "cmdline").write_bytes(b"" if state == "Z" else argv0.encode() + b"\0-p\0")
    (proc / pid / "stat").write_text(f"{pid} ({comm}) {state} 1 {pid} {pid} 0 -1 4194560 0\n")
    env = f"TERM=xterm\0HOME={home or os.path.expanduser('~')}\0PATH=/usr/bin\0"
    (proc / pid / "environ").write_bytes(b"" if state == "Z" else env.encode())


def test_running_claude_is_detected(no_running_claude: Path) -> None:
    for pid, comm, argv0 in [
        ("101", "claude", "claude"),
        ("102", "node", "/usr/bin/claude"),
        ("103", "bash", "bash"),
        ("self", "claude", "claude"),
    ]:
        fake_process(no_running_claude, pid, comm, argv0)
    assert runtime.running_claude(str(no_running_claude)) == [101, 102]


def test_running_claude_counts_only_live_processes_of_this_home(
    no_running_claude: Path, tmp_path: Path
) -> None:
    # newuser-3: the note named a zombie of another process tree and clients under another
    # HOME (they read another settings file and pick up nothing).
    fake_process(no_running_claude, "301")
    fake_process(no_running_claude, "302", state="Z")  # <defunct>
    fake_process(no_running_claude, "303", home=str(tmp_path / "home2"))
    fake_process(no_running_claude, "304", state="R")
    os.symlink(os.path.expanduser("~"), tmp_path / "via-link")
    fake_process(no_running_claude, "305", home=str(tmp_path / "via-link"))  # the same home
    assert runtime.running_claude(str(no_running_claude)) == [301, 304, 305]


def test_running_claude_warning(
    no_running_claude: Path, capsys: pytest.CaptureFixture[str], fake_runtime: list[str]
) -> None:
    fake_process(no_running_claude, "4242")
    rc, out, _ = main(capsys)
    assert rc == 0
    assert out.splitlines()[-1] == (
        "note: Claude Code is running (pid 4242): it picks up the change within a few seconds,"
        " no restart needed (checked with Claude Code 2.1.332)"
    )
    # Nothing changed: nothing to say about a running client.
    rc, out, _ = main(capsys)
    assert rc == 0 and "Claude Code is running" not in out
    for pid in range(4243, 4250):
        fake_process(no_running_claude, str(pid))
    rc, out, _ = main(capsys, "--uninstall")
    assert rc == 0
    assert "note: Claude Code is running (pid 4242, 4243, 4244, 4245, 4246 and 3 more)" in out


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to own a file as another user")
def test_running_claude_counts_only_this_users_processes(no_running_claude: Path) -> None:
    for pid in ("201", "202"):
        fake_process(no_running_claude, pid)
    os.chown(no_running_claude / "202", 12345, 12345)  # another user's session
    assert runtime.running_claude(str(no_running_claude)) == [201]


def test_disable_all_hooks_is_warned_about(
    isolated_env: Path, capsys: pytest.CaptureFixture[str], fake_runtime: list[str]
) -> None:
    settings_file(isolated_env).parent.mkdir()
    settings_file(isolated_env).write_text('{\n  "disableAllHooks": true\n}\n')
    _, out, _ = main(capsys)
    assert "sets disableAllHooks: true, so no hook runs" in out


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        install_cli.main(["--help"])
    out = capsys.readouterr().out
    assert info.value.code == 0
    for word in ("--scope", "--dry-run", "--uninstall", "--purge", "--python", "CLAUDE_CONFIG_DIR"):
        assert word in out


def test_lookout_uninstall_has_install_pys_options_but_its_own(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from lookout.commands.main import main as lookout

    def flags(run: Callable[[list[str]], object], argv: list[str]) -> list[str]:
        with pytest.raises(SystemExit):
            run(argv)
        usage = capsys.readouterr().out.split("\n\n")[0]
        return [word.strip("[]") for word in usage.split() if word.startswith("[--")]

    shared = ["--agent", "--scope", "--project", "--settings", "--dry-run", "--purge"]
    assert flags(lookout, ["uninstall", "--help"]) == shared
    assert flags(install_cli.main, ["--help"]) == [
        "--agent",
        "--codex-notify",
        "--scope",
        "--project",
        "--settings",
        "--python",
        "--dry-run",
        "--bridge",
        "--uninstall",
        "--purge",
        "--version",
    ]


# --- the runtime -----------------------------------------------------------------------------


def test_missing_venv_module_says_how_to_fix_it(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runtime, "has_module", lambda name: name != "ensurepip")
    with pytest.raises(LookoutError) as info:
        runtime.ensure_interpreter(isolated_env / "rt", None, print)
    assert str(info.value) == (
        "cannot create a virtual environment: this Python has no venv/ensurepip module"
    )
    assert info.value.hint is not None and info.value.hint.startswith("apt install python3-venv")


def test_python_without_the_deps_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho /opt/py/bin/python; echo 3.12; echo nodeps\n")
    fake.chmod(0o755)
    with pytest.raises(LookoutError) as info:
        runtime.ensure_interpreter(tmp_path / "rt", str(fake), print)
    assert str(info.value) == f"--python {fake}: tomli-w is not installed in it"
    assert info.value.hint == f"{fake} -m pip install 'tomli-w>=1.0'"


def test_python_that_does_not_run_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LookoutError, match="does not run"):
        runtime.ensure_interpreter(tmp_path, str(tmp_path / "nope"), print)


def test_default_config_is_written_once(isolated_env: Path) -> None:
    lines: list[str] = []
    runtime.install_config(lines.append)
    config = isolated_env / ".config" / "lookout" / "config.toml"
    assert lines == [
        "wrote default config ~/.config/lookout/config.toml (desktop notifications when an"
        " agent waits for you and for turns of 30 s or more)"
    ]
    # Whichever agent the user runs (a Codex-only user has no Claude): no agent's name.
    assert "Claude" not in notify.DEFAULT_TEXT
    assert config.read_text() == notify.DEFAULT_TEXT
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    config.write_text("# mine\n")
    runtime.install_config(lines.append)
    assert config.read_text() == "# mine\n" and len(lines) == 1


def test_the_written_default_config_is_the_built_in_default_and_what_the_readme_says(
    isolated_env: Path,
) -> None:
    # One truth: no file, the file install writes, check-config's words and the docs'.
    without_file = load_config()
    runtime.install_config(lambda line: None)
    with_file = load_config()
    assert with_file == without_file
    assert tomllib.loads(notify.DEFAULT_TEXT) == notify.DEFAULT_RAW
    assert [r["when"] for r in with_file["rules"]] == [
        list(notify.ATTENTION_KINDS),
        ["done"],
        ["stuck", "limit_lifted"],
    ]
    assert with_file["rules"][1]["min_duration_s"] == 30
    readme = " ".join((ROOT / "docs" / "notifications.md").read_text().split())
    assert (
        "Without any config, and with the default config install.py writes, you get desktop"
        " notifications for every attention reason and for turns of 30 s or more" in readme
    )


def test_foreign_lookout_command_is_left_alone(isolated_env: Path) -> None:
    target = isolated_env / ".local" / "bin" / "lookout"
    target.parent.mkdir(parents=True)
    target.write_text("#!/bin/sh\necho someone else's\n")
    lines: list[str] = []
    runtime.install_wrapper(PY, HOME_RT, lines.append)
    assert lines[0] == "warning: ~/.local/bin/lookout exists and is not lookout's: left alone"
    assert "someone else's" in target.read_text()


def payload_file() -> Path:
    return FIXTURES / "payloads" / "Stop.json"


@pytest.mark.real  # a real runtime (copied, byte-compiled) whose hooks run
@pytest.mark.parametrize("home_name", ["plain", "with space", 'it\'s "quoted" $HOME'])
def test_real_install_runs_hooks_through_sh(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    home_name: str,
) -> None:
    home = tmp_path / home_name
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("LOOKOUT_HOME", str(home / ".local" / "share" / "lookout"))
    rc, out, err = main(capsys, "--python", DEV_PY)
    assert rc == 0, err
    rt = home / ".local" / "share" / "lookout"
    assert (rt / "hooks" / "stop.py").exists()
    assert list((rt / "current" / "lookout" / "__pycache__").glob("runner.*.pyc"))
    data = json.loads((home / ".claude" / "settings.json").read_text())
    jsonschema.validate(data, SCHEMA)
    command = data["hooks"]["Stop"][0]["hooks"][0]["command"]
    state = tmp_path / "state"
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "LOOKOUT_STATE_DIR": str(state),
        "LOOKOUT_CONFIG": str(tmp_path / "none.toml"),
    }
    done = subprocess.run(
        ["/bin/sh", "-c", command],
        input=payload_file().read_bytes(),
        env=env,
        capture_output=True,
        timeout=30,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    events = (state / "events.jsonl").read_text()
    assert '"Stop"' in events
    # Second run: nothing to do, nothing rewritten.
    before = (home / ".claude" / "settings.json").read_bytes()
    rc, out, _ = main(capsys, "--python", DEV_PY)
    assert (
        out.splitlines()[0]
        == "using "
        + paths.tilde(
            subprocess.run(
                [DEV_PY, "-c", "import sys; print(sys.executable)"], capture_output=True, text=True
            ).stdout.strip()
        )
        + f" (Python {sys.version_info[0]}.{sys.version_info[1]}) for the hooks"
    )
    assert f"runtime {paths.tilde(rt)} is up to date" in out
    assert f"already installed: {N} hooks in ~/.claude/settings.json" in out
    assert (home / ".claude" / "settings.json").read_bytes() == before
    # The lookout command runs from the runtime copy.
    done = subprocess.run(
        [str(home / ".local" / "bin" / "lookout"), "--version"],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    assert done.returncode == 0 and done.stdout == f"lookout {VERSION}\n"


def checkout_copy(tmp_path: Path) -> Path:
    checkout = tmp_path / "checkout"
    for sub in ("lookout", "hooks"):
        shutil.copytree(ROOT / sub, checkout / sub, ignore=shutil.ignore_patterns("__py*"))
    shutil.copy(ROOT / "pyproject.toml", checkout / "pyproject.toml")  # where its version is
    return checkout


@pytest.mark.real
def test_the_runtime_survives_deleting_the_checkout(tmp_path: Path, isolated_env: Path) -> None:
    checkout = checkout_copy(tmp_path)
    rt = tmp_path / "rt"
    assert runtime.install_code(rt, DEV_PY, checkout) > 0
    first = runtimes.current(rt)
    assert runtime.install_code(rt, DEV_PY, checkout) == 0  # the same code: nothing to do
    (checkout / "lookout" / "install" / "settings.py").write_text(
        (ROOT / "lookout" / "install" / "settings.py").read_text() + "\n"
    )
    assert runtime.install_code(rt, DEV_PY, checkout) > 0  # a new runtime beside the first
    assert runtimes.previous(rt) == first and runtimes.current(rt) != first
    second = runtimes.current(rt)
    shutil.rmtree(checkout)
    done = subprocess.run(
        [DEV_PY, "-I", "-S", str(rt / "hooks" / "stop.py")],
        input=b"{}",
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 0
    checkout = checkout_copy(tmp_path)
    (checkout / "lookout" / "paths.py").write_text(
        (ROOT / "lookout" / "paths.py").read_text() + "\n"
    )
    assert runtime.install_code(rt, DEV_PY, checkout) > 0
    # Current and previous stay; the first one goes (no process runs it).
    assert runtimes.previous(rt) == second
    assert first is not None and not first.exists()
    assert len(list((rt / "runtimes").iterdir())) == 2
    # The checkout's own code again: a runtime holding exactly it is built again (the first is
    # gone), and the oldest goes.
    assert runtime.install_code(rt, DEV_PY, ROOT) > 0
    assert second is not None and not second.exists()


@pytest.mark.real
def test_the_runtime_ships_the_dashboard_page(tmp_path: Path, isolated_env: Path) -> None:
    checkout = checkout_copy(tmp_path)
    rt = tmp_path / "rt"
    runtime.install_code(rt, DEV_PY, checkout)
    static = ROOT / "lookout" / "web" / "static"
    for name in ("index.html", "app.js", "app.css"):
        assert (rt / "current" / "lookout" / "web" / "static" / name).read_bytes() == (
            static / name
        ).read_bytes()
    # An agent's plugin body, which its module writes out from the runtime (OpenCode's).
    plugin = rt / "current" / "lookout" / "agents" / "opencode_plugin.js"
    assert plugin.read_bytes() == (ROOT / "lookout" / "agents" / "opencode_plugin.js").read_bytes()
    (checkout / "lookout" / "web" / "static" / "icon.svg").unlink()  # gone in a newer version
    assert runtime.install_code(rt, DEV_PY, checkout) > 0
    assert not (rt / "current" / "lookout" / "web" / "static" / "icon.svg").exists()


@pytest.mark.real
def test_a_runtime_of_the_flat_layout_upgrades_cleanly(tmp_path: Path, isolated_env: Path) -> None:
    # Before the subpackages, the runtime held lookout/cli.py, installer.py, sender.py ... and
    # bin/lookout imported lookout.cli. An upgrade must leave no old module that could shadow or
    # confuse, and the command, the hooks and the detached sender must run from the new tree.
    rt = tmp_path / "rt"
    old = ("cli", "installer", "settings", "codex_config", "doctor", "notify_cli", "config")
    for name in (*old, "rules", "templates", "dispatch", "sender", "channels", "view", "notify"):
        (rt / "lookout" / f"{name}.py").parent.mkdir(parents=True, exist_ok=True)
        (rt / "lookout" / f"{name}.py").write_text("raise ImportError('old layout')\n")
    (rt / "bin").mkdir()
    (rt / "bin" / "lookout").write_text("from lookout.cli import main\n")
    assert runtime.install_code(rt, DEV_PY, ROOT) > 0
    code = runtimes.code_root(rt)
    top = {p.name for p in (code / "lookout").glob("*.py")}
    assert top == {p.name for p in (ROOT / "lookout").glob("*.py")}
    assert (code / "lookout" / "notify" / "__init__.py").exists()
    version = subprocess.run(
        [DEV_PY, "-I", str(rt / "bin" / "lookout"), "--version"], capture_output=True, text=True
    )
    # No pyproject.toml in a runtime: the version comes from the metadata the build wrote there.
    assert version.stdout.strip() == f"lookout {VERSION}"
    sender = subprocess.run(
        [
            DEV_PY,
            "-I",
            "-c",
            "import sys; sys.path.insert(0, sys.argv[1]); import lookout.sender.sender",
            str(code),
        ],
        capture_output=True,
        text=True,
    )
    assert sender.returncode == 0, sender.stderr


def test_purge_removes_runtime_command_state_config_and_every_scope(
    tmp_path: Path,
    isolated_env: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = tmp_path / "app"
    project.mkdir()
    monkeypatch.chdir(project)
    main(capsys, "--python", DEV_PY)
    main(capsys, "--python", DEV_PY, "--scope", "local")
    state = tmp_path / "state"
    (state / "sessions").mkdir(parents=True)
    config = isolated_env / ".config" / "lookout" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("")
    rc, out, _ = main(capsys, "--uninstall", "--purge")
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == f"removed ~/.claude/settings.json ({N} hooks; install had created it)"
    assert lines[1] == (
        f"removed {project}/.claude/settings.local.json ({N} hooks; install had created it)"
    )
    assert lines[2] == "nothing to uninstall in " + str(project / ".claude" / "settings.json")
    assert not (project / ".claude").exists() and not (isolated_env / ".claude").exists()
    assert (
        "removing lookout's backups (also of the files changed above) and its record of"
        " installed files in ~/.local/share/lookout" in lines
    )
    assert "removing runtime ~/.local/share/lookout/venv" not in out  # --python: no venv made
    assert "removing runtime ~/.local/share/lookout/runtimes" in lines
    assert "removing command ~/.local/bin/lookout" in lines
    assert "also removing lookout's state and config:" in lines
    assert f"removing state {state}" in lines
    assert "removing config ~/.config/lookout/config.toml" in lines
    assert not (isolated_env / ".local" / "share" / "lookout").exists()
    assert not (isolated_env / ".local" / "bin" / "lookout").exists()
    assert not state.exists() and not config.parent.exists()


def test_uninstall_says_what_stays_and_that_purge_removes_it(
    tmp_path: Path,
    isolated_env: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # newuser-3, doc problem 4: it said only `removed ~/.claude/settings.json`.
    main(capsys, "--python", DEV_PY)
    state = tmp_path / "state"
    state.mkdir()
    from lookout.commands.main import main as lookout

    assert lookout(["tmux-setup", "--apply"]) == 0
    capsys.readouterr()
    rc, out, _ = main(capsys, "--uninstall")
    assert rc == 0
    assert out.splitlines()[1:] == [
        f"kept: the runtime ~/.local/share/lookout, the lookout command ~/.local/bin/lookout,"
        f" your config ~/.config/lookout/config.toml, lookout's state {state} and the tmux"
        " block in ~/.tmux.conf",
        "note: python3 install.py --uninstall --purge removes them too",
    ]
    rc, out, _ = main(capsys, "--uninstall")  # nothing changed: nothing more to say
    assert (rc, out) == (0, "nothing to uninstall in ~/.claude/settings.json\n")


def test_purge_never_removes_home(
    isolated_env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOKOUT_STATE_DIR", str(isolated_env))
    rc, out, _ = main(capsys, "--uninstall", "--purge")
    assert rc == 0 and "warning: not removing state ~: refusing a home or root directory" in out
    assert isolated_env.exists()


@pytest.mark.slow
def test_install_py_on_a_fresh_machine(tmp_path: Path) -> None:
    """`python3 install.py` with no flags: a private venv from the package index (or a cache)."""
    home = tmp_path / "fresh home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOOKOUT_", "XDG_", "CLAUDE"))}
    env.update(HOME=str(home), PATH="/usr/bin:/bin", LOOKOUT_PROC_DIR=str(tmp_path))
    done = subprocess.run(
        [DEV_PY, str(ROOT / "install.py")], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "creating virtual environment ~/.local/share/lookout/venv ..."
    assert lines[1].startswith("installing tomli-w")
    assert lines[-1] == f"installed {N} hooks into ~/.claude/settings.json (new file)"
    venv_py = home / ".local" / "share" / "lookout" / "venv" / "bin" / "python"
    command = json.loads((home / ".claude" / "settings.json").read_text())["hooks"]["Stop"][0][
        "hooks"
    ][0]["command"]
    assert f"|| exit 0; exec '{venv_py}' -I -S " in command
    done = subprocess.run(
        [str(home / ".local" / "bin" / "lookout"), "--version"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    again = subprocess.run(
        [DEV_PY, str(ROOT / "install.py")], env=env, capture_output=True, text=True, timeout=300
    )
    assert f"already installed: {N} hooks in ~/.claude/settings.json" in again.stdout


def test_a_file_changed_behind_our_back_is_not_clobbered(isolated_env: Path) -> None:
    target = lay_out(CASES / "other-keys", isolated_env)
    loaded = files.load_settings(target)
    target.write_text('{\n  "model": "written meanwhile"\n}\n')
    with pytest.raises(LookoutError) as info:
        hooks.install_into(loaded, PY, HOME_RT, False, print)
    assert str(info.value) == "~/.claude/settings.json: changed while lookout was reading it"
    assert json.loads(target.read_text()) == {"model": "written meanwhile"}
    assert backups(target) == []


# --- giving back what was there; the registry that purge reads --------------------------------


def test_uninstall_removes_the_file_and_directory_install_created_and_leaves_no_backup_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_runtime: list[str]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    rc, out, _ = main(capsys, "--scope", "project", "--project", str(repo))
    assert rc == 0 and (repo / ".claude" / "settings.json").exists()
    rc, out, _ = main(capsys, "--uninstall", "--scope", "project", "--project", str(repo))
    assert (rc, out) == (
        0,
        f"removed {repo}/.claude/settings.json ({N} hooks; install had created it)\n"
        "kept: the runtime ~/.local/share/lookout\n"
        "note: python3 install.py --uninstall --purge removes them too\n",
    )
    assert list(repo.iterdir()) == []  # as before: no settings.json, no .claude/, no .bak
    assert registry.load() == {}


def test_uninstall_keeps_a_created_directory_that_holds_something_else(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_runtime: list[str]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    main(capsys, "--scope", "local", "--project", str(repo))
    (repo / ".claude" / "commands.md").write_text("mine")
    main(capsys, "--uninstall", "--scope", "local", "--project", str(repo))
    assert sorted(p.name for p in (repo / ".claude").iterdir()) == ["commands.md"]


@pytest.mark.parametrize(
    "text",
    [
        '{\n\t"model": "opus",\n\t"permissions": {"allow": ["Bash(ls:*)", "Read"]}\n}\n',
        '{"env": {"GREETING": "caf\\u00e9"}, "hooks": {"Stop": []}}',
        "",
        '{\r\n  "model": "x"\r\n}\r\n',  # L14: the review's CRLF file
        '{"model": "x", "permissions": {"allow": ["Read"]}}\n',  # L14: a single line
    ],
    ids=[
        "tabs-and-compact-arrays",
        "ascii-escapes-and-an-empty-event",
        "empty-file",
        "crlf",
        "single-line",
    ],
)
def test_uninstall_gives_back_the_original_bytes(
    text: str, isolated_env: Path, capsys: pytest.CaptureFixture[str], fake_runtime: list[str]
) -> None:
    target = settings_file(isolated_env)
    target.parent.mkdir()
    target.write_bytes(text.encode())
    main(capsys)
    assert target.read_bytes() != text.encode()
    if "\r\n" in text:  # L14: what install writes keeps the file's line endings
        assert target.read_bytes().count(b"\n") == target.read_bytes().count(b"\r\n")
    rc, out, _ = main(capsys, "--uninstall")
    assert rc == 0 and out.startswith(f"removed {N} hooks from ~/.claude/settings.json")
    assert target.read_bytes() == text.encode()


def test_uninstall_after_the_user_edited_the_file_keeps_their_edit(
    isolated_env: Path, capsys: pytest.CaptureFixture[str], fake_runtime: list[str]
) -> None:
    main(capsys)  # creates the file
    target = settings_file(isolated_env)
    data = json.loads(target.read_text())
    target.write_text(json.dumps({"model": "sonnet", **data}, indent=2) + "\n")
    main(capsys, "--uninstall")
    assert json.loads(target.read_text()) == {"model": "sonnet"}


def test_purge_cleans_every_settings_file_install_wrote_to(
    tmp_path: Path,
    isolated_env: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The review's finding 4: a project installed from its own directory, purge run elsewhere.
    web, other = tmp_path / "web", tmp_path / "elsewhere"
    web.mkdir(), other.mkdir()
    (web / ".claude").mkdir()
    local = web / ".claude" / "settings.local.json"
    local.write_text('{\n  "model": "opus"\n}\n')
    monkeypatch.chdir(web)
    main(capsys, "--python", DEV_PY, "--scope", "local")
    monkeypatch.chdir(other)
    rc, out, _ = main(capsys, "--uninstall", "--purge")
    assert rc == 0, out
    # --purge removes every backup at its end: no line names one as a way back (newuser-3).
    assert f"removed {N} hooks from {local}\n" in out and "backup: " not in out
    assert local.read_text() == '{\n  "model": "opus"\n}\n'
    assert not (isolated_env / ".local" / "share" / "lookout").exists()  # backups went too


def test_purge_refuses_and_lists_registered_files_it_cannot_read(
    tmp_path: Path, isolated_env: Path, capsys: pytest.CaptureFixture[str], fake_runtime: list[str]
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for repo in (a, b):
        repo.mkdir()
        main(capsys, "--scope", "local", "--project", str(repo))
    main(capsys)
    for repo in (a, b):
        (repo / ".claude" / "settings.local.json").write_text("{ broken")
    user = settings_file(isolated_env).read_bytes()
    rc, out, err = main(capsys, "--uninstall", "--purge")
    assert (rc, out) == (1, "")
    assert err.startswith("error: 2 settings files with lookout's hooks cannot be read:\n")
    assert f"  {a}/.claude/settings.local.json: invalid JSON at line 1" in err
    assert f"  {b}/.claude/settings.local.json: invalid JSON at line 1" in err
    assert err.endswith(
        "hint: fix or move them, then run the command again; lookout changed nothing\n"
    )
    assert settings_file(isolated_env).read_bytes() == user
    assert registry.registry_path().exists()


def test_the_registry_records_each_file_once_with_what_was_there_before(
    isolated_env: Path,
    capsys: pytest.CaptureFixture[str],
    fake_runtime: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target = settings_file(isolated_env)
    target.parent.mkdir()
    target.write_text('{"model": "opus"}')
    main(capsys)
    (entry,) = registry.load().values()
    assert (entry.path, entry.agent, entry.created, entry.created_dirs) == (
        str(target),
        "claude",
        False,
        [],
    )
    assert entry.original is not None
    assert Path(entry.original).read_text() == '{"model": "opus"}'
    for i in range(5):  # upgrades: each rewrites the commands; the original stays pinned
        python = f"/opt/py{i}/bin/python"
        monkeypatch.setattr(runtime, "ensure_interpreter", lambda home, given, out, p=python: p)
        main(capsys)
    assert registry.load()[str(target)].original == entry.original
    kept = backups(target)
    assert len(kept) == registry.KEEP + 1 and str(kept[0]) == entry.original
    main(capsys, "--uninstall")
    assert target.read_text() == '{"model": "opus"}'
    assert registry.load() == {} and len(backups(target)) == registry.KEEP


def test_an_edit_by_someone_else_between_installs_is_kept_by_uninstall(
    isolated_env: Path,
    capsys: pytest.CaptureFixture[str],
    fake_runtime: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target = settings_file(isolated_env)
    target.parent.mkdir()
    target.write_text('{\n\t"model": "opus"\n}\n')
    main(capsys)
    data = json.loads(target.read_text())
    target.write_text(json.dumps({**data, "theme": "dark"}, indent="\t") + "\n")
    monkeypatch.setattr(runtime, "ensure_interpreter", lambda home, given, out: "/opt/py/python")
    main(capsys)  # re-install over the edited file: the original bytes are no longer the truth
    assert registry.load()[str(target)].original is None
    main(capsys, "--uninstall")
    assert json.loads(target.read_text()) == {"model": "opus", "theme": "dark"}


def test_purge_removes_the_backups_an_older_lookout_left_next_to_the_files(
    isolated_env: Path, capsys: pytest.CaptureFixture[str], fake_runtime: list[str]
) -> None:
    main(capsys)
    target = settings_file(isolated_env)
    old = [target.with_name("settings.json.bak-20261125T222243"),
           target.with_name("settings.json.bak-20261125T222243-1")]  # fmt: skip
    for path in old:
        path.write_text("{}")
    mine = target.with_name("settings.json.bak-mine")
    mine.write_text("{}")
    rc, out, _ = main(capsys, "--uninstall", "--purge")
    assert rc == 0
    assert f"removing old backup ~/.claude/{old[0].name}" in out.splitlines()
    assert not any(p.exists() for p in old) and mine.exists()
    assert sorted(p.name for p in target.parent.iterdir()) == ["settings.json.bak-mine"]


# -- the installer's own safety (L8, L9, L10) ----------------------------------------------------


def test_under_umask_000_nothing_installed_is_writable_by_others(
    tmp_path: Path, isolated_env: Path
) -> None:
    done = subprocess.run(
        [DEV_PY, str(ROOT / "install.py"), "--python", DEV_PY],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=lambda: os.umask(0),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    home = paths.runtime_home()
    written = [
        isolated_env / ".claude",
        isolated_env / ".claude" / "settings.json",
        home,
        home / "hooks",
        home / "hooks" / "stop.py",
        home / "runtimes",
        home / "current",
        home / "current" / "lookout",
        home / "current" / "lookout" / "__pycache__",
        home / "current" / "runtime.json",
        isolated_env / ".local" / "bin" / "lookout",
    ]
    loose = {
        str(p): oct(stat.S_IMODE(p.stat().st_mode)) for p in written if p.stat().st_mode & 0o022
    }
    assert loose == {}


def test_a_write_racing_the_install_is_kept_not_clobbered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "settings.json"
    target.write_text('{"permissions": {"allow": []}}\n')
    loaded = files.load_settings(target)
    real_backup = registry.backup

    def racing(path: Path, data: bytes, mode: int, now: float | None = None) -> Path:
        # Another program writes between lookout's check and its replace.
        target.write_text('{"permissions": {"allow": ["Bash(npm test)"]}}\n')
        return real_backup(path, data, mode, now)

    monkeypatch.setattr(registry, "backup", racing)
    with pytest.raises(LookoutError) as exc:
        files.write_settings(loaded, '{"hooks": {}}\n')
    assert str(exc.value).endswith("changed while lookout was writing it")
    assert json.loads(target.read_text()) == {"permissions": {"allow": ["Bash(npm test)"]}}


def test_a_write_racing_the_final_switch_is_kept_not_clobbered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # L8 (security-2.md): a second writer between the re-check and the replace was lost (install
    # exit 0, `final allow: []`). Now the old file is checked after an atomic exchange.
    target = tmp_path / "settings.json"
    target.write_text('{"permissions": {"allow": []}}\n')
    loaded = files.load_settings(target)
    real_exchange, real_replace = swap.exchange, os.replace
    raced: list[bool] = []

    def rival() -> None:
        if not raced:  # another program renames its version into place at the last moment
            raced.append(True)
            theirs = tmp_path / "theirs.json"
            theirs.write_text('{"permissions": {"allow": ["Bash(npm test)"]}}\n')
            real_replace(theirs, target)

    def exchange(a: str, b: str) -> bool:
        rival()
        return real_exchange(a, b)

    def replace(a: object, b: object) -> None:  # the final step where there is no exchange
        rival()
        real_replace(a, b)  # type: ignore[arg-type]

    monkeypatch.setattr(swap, "exchange", exchange)
    monkeypatch.setattr(files.os, "replace", replace)
    with pytest.raises(LookoutError) as exc:
        files.write_settings(loaded, '{"hooks": {}}\n')
    assert str(exc.value).endswith("changed while lookout was writing it")
    assert json.loads(target.read_text()) == {"permissions": {"allow": ["Bash(npm test)"]}}
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".lookout-tmp")]  # none left


def test_without_an_atomic_exchange_the_write_falls_back_to_a_replace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "settings.json"
    target.write_text("{}\n")
    monkeypatch.setattr(swap, "exchange", lambda a, b: False)  # macOS, old libc, some mounts
    files.write_settings(files.load_settings(target), '{"model": "x"}\n')
    assert target.read_text() == '{"model": "x"}\n'


def test_a_failed_settings_write_speaks_for_that_file_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # By then the runtime and the command may be installed: "lookout changed nothing" would lie.
    target = tmp_path / "settings.json"
    loaded = files.load_settings(target)

    def denied(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(tmp_path / ".x.lookout-tmp"))

    monkeypatch.setattr(files, "atomic_write", denied)
    with pytest.raises(LookoutError) as exc:
        files.write_settings(loaded, "{}\n")
    assert exc.value.hint is not None
    assert "changed nothing" not in exc.value.hint
    assert exc.value.hint.endswith(f"{files.tilde(target)} is unchanged")


def test_the_deciding_hook_is_registered_only_when_remote_is_enabled(isolated_env: Path) -> None:
    target = isolated_env / ".claude" / "settings.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    write_config("# remote off\n")
    run_install(target)
    off = json.loads(target.read_text())
    assert "remote_answer.py" not in target.read_text()
    assert len(off["hooks"]["PermissionRequest"]) == 1

    write_config("[remote]\nenabled = true\nwait_s = 120\n")
    rc, lines, _ = run_install(target)
    assert rc == 0 and lines[-1] == (
        "remote answers are on: a permission request waits up to 120 s for"
        " `lookout answer` or the dashboard"
    )
    on = json.loads(target.read_text())
    recording, deciding = (g["hooks"][0] for g in on["hooks"]["PermissionRequest"])
    assert recording["timeout"] == hookspec.TIMEOUT_S and "async" not in recording
    assert deciding["command"].endswith(f"{HOME_RT}/hooks/remote_answer.py")
    assert (deciding["timeout"], deciding.get("async")) == (135, None)  # wait_s + 15, sync
    jsonschema.validate(on, SCHEMA)

    write_config("[remote]\nenabled = false\n")
    run_install(target)
    assert json.loads(target.read_text()) == off


def test_the_install_message_names_every_surface_that_answers(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # newuser-3, doc problem 2: the popup and Telegram answered too, but went unnamed.
    target = isolated_env / ".claude" / "settings.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    write_config(
        '[remote]\nenabled = true\n[channels.desktop]\ntype = "desktop"\n'
        '[channels.chat]\ntype = "telegram"\ntoken_env = "TG"\nchat_id = 1\n'
        'allowed_user_ids = [1]\n[channels.off]\ntype = "ntfy"\nurl = "https://n.example/t"\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["desktop"]\nescalate_after_s = 60\n'
        'escalate_to = ["chat"]\n[[rules]]\nwhen = ["done"]\nchannels = ["off"]\n'
        '[fleet]\nmqtt = "mqtts://broker.example:8883"\nusername = "laptop"\nhost = "laptop"\n'
        'password_env = "PW"\nhome_assistant = true\nanswers = true\n'
    )
    rc, lines, _ = run_install(target)
    assert rc == 0 and lines[-1] == (
        "remote answers are on: a permission request waits up to 300 s for `lookout answer`,"
        " the dashboard, the desktop popup, Telegram or Home Assistant"
    )


def test_a_broken_config_leaves_remote_answers_off(isolated_env: Path) -> None:
    target = isolated_env / ".claude" / "settings.json"
    write_config("[remote]\nenabled = tru\n")
    assert run_install(target)[0] == 0
    assert "remote_answer.py" not in target.read_text()


def test_purge_removes_a_tree_a_finishing_process_still_writes_into(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A sender a hook started may write into the runtime while `--uninstall --purge` removes
    # it ("Directory not empty", seen in CI): the removal tries again, and leaves nothing.
    import errno
    import shutil

    from lookout.install import plan

    tree = tmp_path / "lookout-home"
    (tree / "runtimes" / "0.1.0-x").mkdir(parents=True)
    real = shutil.rmtree
    calls = {"n": 0}

    def racing(path: Path) -> None:
        calls["n"] += 1
        if calls["n"] == 1:  # a writer adds a file as the removal empties the directory
            (tree / "runtimes" / "0.1.0-x" / "late.pyc").write_bytes(b"")
            raise OSError(errno.ENOTEMPTY, "Directory not empty", "0.1.0-x")
        real(path)

    monkeypatch.setattr(shutil, "rmtree", racing)
    said: list[str] = []
    plan._remove_tree(tree, "lookout's home", False, said.append)
    assert not tree.exists() and calls["n"] == 2
    assert said == [f"removing lookout's home {tree}"]


@pytest.mark.real
def test_purge_stops_every_lookout_process_running_from_the_runtime(
    tmp_path: Path, isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """newuser-4 defect 6: a `lookout serve` started earlier outlived the purge and wrote
    ~/.local/state/lookout back within a second. Real processes of the installed runtime: its
    command's `serve` and `tail -f`, and a stand-in for a poller that ignores SIGTERM (so it is
    killed); a process that only names a file there is none of lookout's and runs on."""
    from tests.helpers import Output, preinstall_runtime, wait_for

    preinstall_runtime()
    assert main(capsys, "--python", DEV_PY)[0] == 0
    home = paths.runtime_home()
    command = isolated_env / ".local" / "bin" / "lookout"
    state = Path(paths.state_dir())
    started: list[subprocess.Popen[str]] = []

    def start(*argv: str) -> tuple[subprocess.Popen[str], Output]:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        started.append(proc)
        return proc, Output(proc.stdout)  # type: ignore[arg-type]

    try:
        serve, said = start(str(command), "serve", "--port", "0")
        wait_for(lambda: "serving the dashboard at" in said.text(), what="lookout serve")
        tail, _ = start(str(command), "tail", "-f")
        stubborn = (
            "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN);"
            " print('ready', flush=True); time.sleep(120)  # from lookout.remote.telegram"
        )
        poller, ready = start(DEV_PY, "-I", "-c", stubborn, str(runtimes.current(home)))
        wait_for(lambda: "ready" in ready.text(), what="the stand-in poller")
        editor, _ = start(DEV_PY, "-c", "import time; time.sleep(120)", str(home / "x.json"))
        wait_for(lambda: state.exists(), what="serve's state directory")
        rc, out, _ = main(capsys, "--uninstall", "--purge")
        assert rc == 0
        lines = out.splitlines()
        assert f"stopped lookout serve (pid {serve.pid})" in lines
        assert f"stopped lookout tail (pid {tail.pid})" in lines
        assert (
            f"stopped the Telegram poller (pid {poller.pid}): killed, it did not exit on SIGTERM"
        ) in lines
        assert not any(str(editor.pid) in line for line in lines)
        # Stopped before the state and the runtime go: nothing writes them back.
        assert lines.index(f"stopped lookout serve (pid {serve.pid})") < lines.index(
            f"removing state {state}"
        )
        for proc in (serve, tail, poller):
            assert proc.wait(timeout=10) != 0
        assert editor.poll() is None
        assert not state.exists() and not home.exists()
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


@pytest.mark.real
def test_purge_stops_the_sender_so_it_never_writes_the_state_back(
    isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """newuser-5 defect 6: the sender of an alert still out wrote clock.json and
    config-cache.json into the purged state directory a second later. The installed hook (the
    agent's command in settings.json) starts the real sender, which waits on an escalation;
    the purge stops it before the state goes, and nothing comes back."""
    from lookout import store
    from tests.helpers import PAYLOADS, wait_for

    # A runtime of its own (not preinstall_runtime's copy, whose code runs from elsewhere): the
    # sender runs from it, as on a user's machine.
    assert main(capsys, "--python", DEV_PY)[0] == 0
    write_config(
        '[channels.hook]\ntype = "webhook"\nurl_env = "LOOKOUT_TEST_UNSET"\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["hook"]\n'
        'escalate_after_s = 600\nescalate_to = ["hook"]\n'
    )
    hooks_of = json.loads((isolated_env / ".claude" / "settings.json").read_text())["hooks"]
    [command] = [h["command"] for entry in hooks_of["PermissionRequest"] for h in entry["hooks"]]
    body = (PAYLOADS / "PermissionRequest-Bash.json").read_text()
    ran = subprocess.run(["sh", "-c", command], input=body, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    state = Path(paths.state_dir())
    lock = str(state / store.SENDER_LOCK)
    pid = int(wait_for(lambda: (h := store.holder(lock)) and h.isdigit() and h))
    try:
        rc, out, _ = main(capsys, "--uninstall", "--purge")
        assert rc == 0
        assert f"stopped the notification sender (pid {pid})" in out.splitlines()
        from lookout import procs

        assert wait_for(lambda: (found := procs.stat(pid)) is None or found[1] in ("Z", "X"))
        assert not state.exists()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)
