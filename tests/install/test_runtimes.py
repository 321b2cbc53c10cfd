"""lookout.install.runtimes: a runtime is built beside the running one and switched in one step;
a process keeps the runtime it started with to its end; the previous runtime stays, older ones
go once no process runs them; install says what must restart, and refuses an installed lookout
whose files this version cannot read (issue 35)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lookout import words
from lookout.errors import LookoutError
from lookout.install import cli as install_cli
from lookout.install import plan, registry, runtime, runtimes
from tests.helpers import PAYLOADS, ROOT, VERSION, recorder, wait_for, write_config


def fake_runtime(home: Path, name: str, **manifest: object) -> Path:
    """A runtime directory as a build leaves it (no bytecode: nothing here runs it)."""
    rt = home / runtimes.RUNTIMES / name
    (rt / "hooks").mkdir(parents=True)
    (rt / "bin").mkdir()
    (rt / "lookout").mkdir()
    (rt / "hooks" / "stop.py").write_text("# stop\n")
    (rt / "bin" / "lookout").write_text("# entry\n")
    listed = {
        rel: hashlib.sha256((rt / rel).read_bytes()).hexdigest()
        for rel in ("hooks/stop.py", runtimes.ENTRY)
    }
    doc = {
        "format": 1,
        "lookout": VERSION,
        "name": name,
        "commit": None,
        "formats": words.FORMATS,
        "files": listed,
        **manifest,
    }
    (rt / runtimes.MANIFEST).write_text(json.dumps(doc))
    return rt


def fake_process(proc: Path, pid: int, argv: list[str], holds: Path | None = None) -> None:
    entry = proc / str(pid)
    (entry / "fd").mkdir(parents=True)
    (entry / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
    if holds is not None:
        (entry / "fd" / "3").symlink_to(holds)


@pytest.fixture
def proc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    found = tmp_path / "proc"
    found.mkdir()
    monkeypatch.setenv("LOOKOUT_PROC_DIR", str(found))
    return found


def test_each_hook_script_names_its_own_runtime() -> None:
    rt = Path("/home/u/.local/share/lookout/runtimes/0.1.0-abc")
    for script in sorted((ROOT / "hooks").glob("*.py")):
        text = runtimes.stamped(f"hooks/{script.name}", script.read_bytes(), rt).decode()
        assert runtimes.SHIM_PATH_LINE not in text
        assert f"sys.path.insert(0, {str(rt)!r})" in text
        assert f"posix.open({str(rt)!r}, posix.O_RDONLY)" in text
    with pytest.raises(LookoutError, match="expected the line"):
        runtimes.stamped("hooks/x.py", b"import sys\n", rt)
    assert runtimes.stamped("lookout/x.py", b"same", rt) == b"same"


def test_the_switch_turns_each_entry_into_a_link_in_one_rename(tmp_path: Path, proc: Path) -> None:
    home = tmp_path / "home"
    (home / "hooks").mkdir(parents=True)
    (home / "hooks" / "stop.py").write_text("# the layout before runtimes/\n")
    (home / "hooks" / "gone.py").write_text("# a script the new version dropped\n")
    (home / "bin").mkdir()
    (home / "bin" / "lookout").write_text("# entry\n")
    (home / "lookout").mkdir()
    assert runtimes.legacy_live(home)
    rt = fake_runtime(home, "0.1.0-a")
    assert runtimes.switch(home, rt)
    assert os.readlink(home / "current") == "runtimes/0.1.0-a"
    assert os.readlink(home / "hooks" / "stop.py") == "../current/hooks/stop.py"
    assert os.readlink(home / "bin" / "lookout") == "../current/bin/lookout"
    assert (home / "hooks" / "stop.py").read_text() == "# stop\n"
    assert not (home / "hooks" / "gone.py").exists()
    assert runtimes.previous(home) is None and (home / "lookout").is_dir()
    assert not runtimes.legacy_live(home)
    assert not runtimes.switch(home, rt)  # nothing to do
    second = fake_runtime(home, "0.1.0-b")
    assert runtimes.switch(home, second)
    assert (runtimes.current(home), runtimes.previous(home)) == (second, rt)
    assert not list(home.glob(".*.new")) and not list((home / "hooks").glob(".*"))


def test_a_runtime_an_older_installer_wrote_into_is_not_intact(tmp_path: Path) -> None:
    rt = fake_runtime(tmp_path, "0.1.0-a")
    assert runtimes.intact(rt)
    (rt / "hooks" / "stop.py").write_text("# written over by an older install.py\n")
    assert not runtimes.intact(rt)
    rt = fake_runtime(tmp_path, "0.1.0-b")
    (rt / "hooks" / "extra.py").write_text("")
    assert not runtimes.intact(rt)


def test_prune_keeps_current_previous_and_what_a_process_runs(tmp_path: Path, proc: Path) -> None:
    home = tmp_path / "home"
    a, b, c, d = (fake_runtime(home, f"0.1.0-{n}") for n in "abcd")
    for rt in (a, b, c, d):
        runtimes.switch(home, rt)
    (home / "lookout").mkdir()  # the layout before runtimes/, which a hook still runs
    fake_process(proc, 4242, [sys.executable, "-I", str(home / "bin" / "lookout"), "serve"], b)
    fake_process(proc, 4343, [sys.executable, "-I", "-S", str(home / "hooks" / "stop.py")])
    kept = runtimes.prune(home, legacy_in_use=False)
    assert kept == [
        ("0.1.0-b", "lookout serve (pid 4242)"),
        (runtimes.LEGACY_NAME, "a hook (stop.py) (pid 4343)"),
    ]
    assert not a.exists() and b.exists() and c.exists() and d.exists()
    shutil.rmtree(proc / "4242")
    shutil.rmtree(proc / "4343")
    assert runtimes.prune(home, legacy_in_use=True) == []  # the legacy one is the previous
    assert not b.exists() and (home / "lookout").exists()
    assert runtimes.prune(home, legacy_in_use=False) == []
    assert not (home / "lookout").exists()


def test_install_names_what_still_runs_the_previous_version(
    tmp_path: Path, proc: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = Path(os.environ["LOOKOUT_HOME"])
    old, new = fake_runtime(home, "0.1.0-old"), fake_runtime(home, "0.1.0-new")
    runtimes.switch(home, new)
    entry = str(home / "bin" / "lookout")
    fake_process(proc, 4242, [sys.executable, "-I", entry, "serve", "--port", "1"], old)
    fake_process(proc, 4243, [sys.executable, "-I", entry, "status"], new)  # the new one already
    boot = "import os, sys; ...; from lookout.sender.sender import main; ..."
    fake_process(proc, 4343, [sys.executable, "-I", "-c", boot, str(old), "/state", "/job"])
    fake_process(proc, 4444, [sys.executable, "-I", "-c", boot, str(home), "/state", "/job"])

    def switched(home: Path, python: str, checkout: Path) -> runtimes.Outcome:
        return runtimes.Outcome(new, built=True, switched=True, before=old.name)

    monkeypatch.setattr(runtime, "ensure_interpreter", lambda home, given, out: sys.executable)
    monkeypatch.setattr(runtimes, "install_runtime", switched)
    monkeypatch.setattr(runtime, "install_wrapper", lambda python, home, out: None)
    assert install_cli.main(["--python", sys.executable]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:5] == [
        f"installed runtime {VERSION} into ~/.local/share/lookout (hooks run {sys.executable})",
        "switched from runtimes/0.1.0-old to runtimes/0.1.0-new in one step (the previous one"
        " stays until the next install)",
        "restart: lookout serve (pid 4242) still runs the previous version",
        "note: the notification sender (pid 4343) finishes its work with the previous version,"
        " then exits",
        "note: the notification sender (pid 4444) finishes its work with the previous version,"
        " then exits",
    ]


def test_install_refuses_an_installed_lookout_of_newer_formats(
    capsys: pytest.CaptureFixture[str], proc: Path
) -> None:
    home = Path(os.environ["LOOKOUT_HOME"])
    newer = fake_runtime(
        home, "9.0.0-abc", lookout="9.0.0", formats={**words.FORMATS, "events.jsonl": 2}
    )
    runtimes.switch(home, newer)
    before = sorted(str(p) for p in home.rglob("*"))
    assert install_cli.main(["--python", sys.executable]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"error: the installed lookout 9.0.0 (runtimes/9.0.0-abc) is newer than this checkout"
        f" ({VERSION}): it writes events.jsonl (format 2; this version reads 1)",
        "hint: install from a checkout of that version or newer; to go back anyway, `lookout"
        " uninstall --purge` first (it removes the state and config); nothing changed",
    ]
    assert sorted(str(p) for p in home.rglob("*")) == before
    assert not Path(os.environ["CLAUDE_CONFIG_DIR"], "settings.json").exists()


def test_an_older_version_of_the_same_formats_installs_and_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], proc: Path
) -> None:
    home = Path(os.environ["LOOKOUT_HOME"])
    runtimes.switch(home, fake_runtime(home, "9.0.0-abc", lookout="9.0.0"))
    lines: list[str] = []
    plan.refuse_newer(home, lines.append)
    assert lines == [
        f"note: replacing lookout 9.0.0 (runtimes/9.0.0-abc) with the older {VERSION}"
        " (same state formats)"
    ]


@pytest.mark.parametrize("name", ["installed.json", "codex-notify.json"])
def test_a_newer_install_record_stops_install_and_uninstall(
    capsys: pytest.CaptureFixture[str], proc: Path, name: str
) -> None:
    record = registry.registry_path().with_name(name)
    record.parent.mkdir(parents=True)
    record.write_text('{\n  "v": 2,\n  "files": []\n}\n')
    for argv in (["--python", sys.executable], ["--uninstall"], ["--agent", "all"]):
        assert install_cli.main(argv) == 1
        err = capsys.readouterr().err
        assert f"{name} was written by a newer lookout (format 2; this one reads 1)" in err
    assert record.read_text() == '{\n  "v": 2,\n  "files": []\n}\n'
    assert not Path(os.environ["CLAUDE_CONFIG_DIR"], "settings.json").exists()


def test_a_second_install_at_the_same_time_changes_nothing(tmp_path: Path) -> None:
    with (
        runtimes.locked(tmp_path),
        pytest.raises(LookoutError, match=r"another install\.py"),
        runtimes.locked(tmp_path),
    ):
        pass


def blocked_on_stdin(pid: int) -> bool:
    """The process is in read(0, ...) (waiting for its payload)."""
    try:
        return Path(f"/proc/{pid}/syscall").read_text().startswith("0 0x0 ")
    except OSError:
        return False


@pytest.mark.real
def test_a_hook_started_before_the_switch_imports_from_its_own_runtime_after_it(
    tmp_path: Path, state_dir: Path
) -> None:
    """A hook that started with one runtime loads the notification path lazily, after its
    payload: an install that switches meanwhile (to code whose notification path is broken)
    changes nothing for it; a hook started after the switch runs the new code."""
    program, calls = recorder(tmp_path)
    write_config(
        f'[channels.log]\ntype = "command"\nargv = ["{program}", "{{title}}"]\n'
        '[[rules]]\nwhen = ["done"]\nchannels = ["log"]\n'
    )
    home = tmp_path / "rt"
    runtime.install_code(home, sys.executable, ROOT)
    first = runtimes.current(home)
    payload = json.loads((PAYLOADS / "Stop.json").read_text())
    hook = subprocess.Popen(
        [sys.executable, "-I", "-S", str(home / "hooks" / "stop.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    wait_for(lambda: blocked_on_stdin(hook.pid), what="the hook to wait for its payload")
    broken = tmp_path / "broken"
    for sub in ("lookout", "hooks"):
        shutil.copytree(ROOT / sub, broken / sub, ignore=shutil.ignore_patterns("__py*"))
    (broken / "lookout" / "notify" / "handle.py").write_text("raise ImportError('new code')\n")
    runtime.install_code(home, sys.executable, broken)
    assert runtimes.current(home) != first and runtimes.previous(home) == first
    out, err = hook.communicate(json.dumps({**payload, "session_id": "before"}).encode(), 60)
    assert (hook.returncode, out, err) == (0, b"", b"")
    wait_for(calls.exists, what="the alert the old runtime sent")
    assert not (state_dir / "errors.log").exists()
    after = subprocess.run(
        [sys.executable, "-I", "-S", str(home / "hooks" / "stop.py")],
        input=json.dumps({**payload, "session_id": "after"}).encode(),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert (after.returncode, after.stdout, after.stderr) == (0, b"", b"")
    assert "ImportError: new code" in (state_dir / "errors.log").read_text()
