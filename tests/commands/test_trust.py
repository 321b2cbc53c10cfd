"""`lookout trust [DIR]` and what a repository's .claude/lookout.toml can do without it (C1),
through the real hook entry and the real `lookout` entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import ROOT
from tests.helpers import lookout as run_lookout


def lookout(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return run_lookout(*args, cwd=cwd, stdin=stdin)


def hostile_repo(tmp_path: Path) -> tuple[Path, Path]:
    """A cloned repository whose project file runs a command at session start: (repo, marker)."""
    repo = tmp_path / "home" / "src" / "evil"
    (repo / ".git").mkdir(parents=True)
    (repo / ".claude").mkdir()
    marker = tmp_path / "PWNED"
    (repo / ".claude" / "lookout.toml").write_text(
        f'[channels.x]\ntype = "command"\nargv = ["/bin/sh", "-c", "id > {marker}"]\n'
        '[[rules]]\nwhen = ["session_start"]\nchannels = ["x"]\n'
    )
    return repo, marker


def session_start(repo: Path, session: str = "s1") -> None:
    payload = {
        "session_id": session,
        "hook_event_name": "SessionStart",
        "source": "startup",
        "cwd": str(repo),
    }
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(ROOT / "hooks" / "session_start.py")],
        input=json.dumps(payload).encode(),
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def appears(marker: Path, seconds: float) -> bool:
    """Whether the command channel's marker shows up within `seconds` (the sender is detached)."""
    deadline = time.monotonic() + seconds
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return marker.exists()


@pytest.mark.slow  # proving that nothing runs means waiting out the detached sender, twice
def test_a_cloned_repository_cannot_run_a_command_until_trusted(tmp_path: Path) -> None:
    repo, marker = hostile_repo(tmp_path)
    session_start(repo)
    assert not appears(marker, 2.0)
    # `lookout test` run in the repository does not run it either, and says why.
    tested = lookout("test", "x", cwd=repo)
    assert tested.returncode == 1
    assert "ignored: not trusted" in tested.stderr
    assert not marker.exists()

    trusted = lookout("trust", "--yes", cwd=repo)
    assert trusted.returncode == 0, trusted.stderr
    assert trusted.stdout.splitlines()[:3] == [
        "~/src/evil/.claude/lookout.toml (sha256 "
        + trusted.stdout.split("sha256 ")[1][:12]
        + "…) sets what only your own config may set:",
        '  channels.x.type = "command"',
        f'  channels.x.argv = ["/bin/sh", "-c", "id > {marker}"]',
    ]
    session_start(repo, "s2")
    assert appears(marker, 5.0)

    # One changed byte: untrusted again.
    marker.unlink()
    path = repo / ".claude" / "lookout.toml"
    path.write_text(path.read_text() + "# harmless?\n")
    session_start(repo, "s3")
    assert not appears(marker, 2.0)
    listed = lookout("trust", "--list", cwd=repo)
    assert "changed since (not applied)" in listed.stdout


def test_trust_without_a_terminal_asks_for_yes_and_records_nothing(tmp_path: Path) -> None:
    repo, _marker = hostile_repo(tmp_path)
    done = lookout("trust", cwd=repo, stdin="y\n")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "error: not trusted: nobody to ask (stdin is not a terminal)",
        "hint: read the lines above, then run lookout trust --yes ~/src/evil",
    ]
    assert not (Path(os.environ["LOOKOUT_STATE_DIR"]) / "trust.json").exists()
    assert lookout("trust", "--list", cwd=repo).stdout == "no trusted project files\n"


def test_trust_remove_takes_it_back(tmp_path: Path) -> None:
    repo, _marker = hostile_repo(tmp_path)
    assert lookout("trust", "--yes", str(repo), cwd=tmp_path).returncode == 0
    check = lookout("check-config", cwd=repo)
    assert (
        "~/src/evil/.claude/lookout.toml: ok (trusted: it may add to your config)" in check.stdout
    )
    removed = lookout("trust", "--remove", cwd=repo)
    assert removed.stdout == "no longer trusted: ~/src/evil/.claude/lookout.toml\n"
    assert "ignored: not trusted" in lookout("check-config", cwd=repo).stdout
    again = lookout("trust", "--remove", cwd=repo)
    assert (again.returncode, again.stderr.splitlines()[0]) == (
        1,
        "error: no trusted project file for ~/src/evil",
    )


def test_a_file_that_only_narrows_needs_no_trust(tmp_path: Path) -> None:
    repo = tmp_path / "home" / "api"
    (repo / ".claude").mkdir(parents=True)
    (repo / ".claude" / "lookout.toml").write_text("[channels.desktop]\nenabled = false\n")
    done = lookout("trust", cwd=repo)
    assert (done.returncode, done.stdout) == (
        0,
        "~/api/.claude/lookout.toml only narrows or quiets your config: it applies without trust\n",
    )


def test_trust_without_a_project_file(tmp_path: Path) -> None:
    done = lookout("trust", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("error: no .claude/lookout.toml in ")


def test_status_says_which_project_file_was_ignored_and_why(tmp_path: Path) -> None:
    repo, _marker = hostile_repo(tmp_path)
    session_start(repo)
    table = lookout("status", cwd=tmp_path)
    assert table.returncode == 0
    # (A note says no hooks are installed here: this test records through the runner directly.)
    assert [ln for ln in table.stderr.splitlines() if not ln.startswith("note: no lookout")] == [
        "warning: ~/src/evil/.claude/lookout.toml: ignored: not trusted; it sets"
        ' channels.x.type = "command" (and 1 more)',
        "hint: lookout trust ~/src/evil shows what it adds and asks",
    ]
    body = json.loads(lookout("status", "--json", cwd=tmp_path).stdout)
    assert body["ignored_project_files"] == [
        {
            "path": str(repo / ".claude" / "lookout.toml"),
            "reason": 'not trusted; it sets channels.x.type = "command" (and 1 more)',
        }
    ]
