"""N2 (security-2.md): the one shared sender serves every session, so it must run in no
session's directory and with no project's PATH; a project file may not name a program that
lives in (or is resolved against) a repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from lookout import spawn
from tests.helpers import ROOT, Ran, in_process, write_config


def script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho {text} >> {path.parent.parent.parent / 'ran.log'}\n")
    path.chmod(0o755)
    return path


def repo(home: Path, name: str) -> Path:
    r = home / "src" / name
    (r / ".git").mkdir(parents=True)
    (r / ".claude").mkdir()
    return r


def hook(script_name: str, payload: dict[str, object], cwd: Path, path: str | None = None) -> None:
    env = dict(os.environ)
    if path is not None:
        env["PATH"] = path
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(ROOT / "hooks" / script_name)],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=cwd,
        env=env,
        timeout=30,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def deliveries(state_dir: Path, n: int, timeout_s: float = 15) -> list[dict[str, object]]:
    path = state_dir / "deliveries.jsonl"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists():
            lines = [json.loads(x) for x in path.read_text().splitlines()]
            done = [x for x in lines if x["result"] != "skipped"]
            if len(done) >= n:
                return done
        time.sleep(0.05)
    raise AssertionError(f"no {n} deliveries in {path}")


def test_the_sender_does_not_run_in_the_directory_of_the_hook_that_started_it(
    state_dir: Path, tmp_path: Path
) -> None:
    # The review's reproduction, with the program in the user's own config: the sender started
    # by a hook in the untrusted clone must not resolve `./.claude/notify.sh` there.
    home = Path(os.environ["HOME"])
    clone = repo(home, "untrusted-clone")
    script(clone / ".claude" / "notify.sh", "UNTRUSTED")
    write_config(
        '[channels.team]\ntype = "command"\nargv = ["./.claude/notify.sh"]\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["team"]\n'
    )
    hook(
        "permission_request.py",
        {
            "session_id": "b1",
            "hook_event_name": "PermissionRequest",
            "tool_name": "Bash",
            "tool_input": {"command": "make"},
            "cwd": str(clone),
        },
        cwd=clone,
    )
    (line,) = deliveries(state_dir, 1)
    assert line["result"] == "failed"
    assert not (home / "src" / "ran.log").exists()


def test_the_sender_ignores_the_projects_path_entries(state_dir: Path, tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    clone = repo(home, "clone")
    helper = script(clone / "bin" / "x" / "notify-helper", "FROM-THE-REPO")
    mine = script(tmp_path / "mine" / "bin" / "notify-helper", "MINE")
    write_config(
        '[channels.team]\ntype = "command"\nargv = ["notify-helper"]\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["team"]\n'
    )
    path = os.pathsep.join(
        ["bin/x", str(helper.parent), str(mine.parent), os.environ.get("PATH", "/usr/bin:/bin")]
    )
    hook(
        "permission_request.py",
        {"session_id": "p1", "hook_event_name": "PermissionRequest", "tool_name": "Bash",
         "tool_input": {"command": "make"}, "cwd": str(clone)},
        cwd=clone,
        path=path,
    )  # fmt: skip
    (line,) = deliveries(state_dir, 1)
    assert line["result"] == "sent"
    assert (tmp_path / "ran.log").read_text() == "MINE\n"
    assert not (home / "src" / "ran.log").exists()


def test_the_sender_ignores_the_repositorys_path_seen_from_a_subdirectory(
    state_dir: Path, tmp_path: Path
) -> None:
    # S5 (security-3.md): a hook in `repo/sub` with `repo/bin` on PATH (direnv style) started a
    # sender that ran `repo/bin/notify-helper`, for that session and every later one.
    home = Path(os.environ["HOME"])
    clone = repo(home, "clone")
    (clone / "sub").mkdir()
    helper = script(clone / "bin" / "x" / "notify-helper", "FROM-THE-REPO")
    mine = script(tmp_path / "mine" / "bin" / "notify-helper", "MINE")
    write_config(
        '[channels.team]\ntype = "command"\nargv = ["notify-helper"]\n'
        '[[rules]]\nwhen = ["session_start"]\nchannels = ["team"]\n'
    )
    path = os.pathsep.join([str(helper.parent), str(mine.parent), os.environ.get("PATH", "")])
    for n, where in enumerate([clone / "sub", clone]):
        hook(
            "session_start.py",
            {"session_id": f"s{n}", "hook_event_name": "SessionStart", "source": "startup",
             "cwd": str(where)},
            cwd=where,
            path=path,
        )  # fmt: skip
        deliveries(state_dir, n + 1)
    assert (tmp_path / "ran.log").read_text() == "MINE\nMINE\n"
    assert not (clone / "ran.log").exists()


def test_sender_env_drops_the_payloads_project_path(tmp_path: Path) -> None:
    # The hook's process may run elsewhere (/): the payload's cwd and CLAUDE_PROJECT_DIR name
    # the project too, up to its repository root.
    home = os.path.expanduser("~")
    a, b = tmp_path / "a", tmp_path / "b"
    for r in (a, b):
        (r / ".git").mkdir(parents=True)
        (r / "deep" / "er").mkdir(parents=True)
    environ = {"PATH": f"{a}/bin:{b}/node_modules/.bin:/usr/bin:{home}/.local/bin"}
    env = spawn.sender_env(environ, "/", project_dirs=[str(a / "deep" / "er")])
    assert env["PATH"] == f"{b}/node_modules/.bin:/usr/bin:{home}/.local/bin"
    env = spawn.sender_env({**environ, "CLAUDE_PROJECT_DIR": str(b / "deep")}, "/", [str(a)])
    assert env["PATH"] == f"/usr/bin:{home}/.local/bin"
    # The home directory (or /) named by a payload is no project: nothing under it goes.
    assert spawn.sender_env(environ, "/", [home, "/"])["PATH"] == environ["PATH"]


def test_sender_env_drops_only_the_projects_path(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    (proj / "bin").mkdir(parents=True)
    env = spawn.sender_env(
        {"PATH": f"{proj}/bin::.:bin:/usr/bin", "PWD": str(proj), "TOKEN": "t"}, str(proj)
    )
    assert env == {"PATH": "/usr/bin", "TOKEN": "t"}
    home = os.path.expanduser("~")
    # From the home directory nothing under it is a project's: ~/.local/bin stays.
    assert spawn.sender_env({"PATH": f"{home}/.local/bin"}, home)["PATH"] == f"{home}/.local/bin"


def lookout(*args: str, cwd: Path) -> Ran:
    """`lookout ARGS` run in `cwd`, in this process (the config's checks are what is tested
    here; an interpreter start for each of its ten runs cost seconds on a busy machine)."""
    import contextlib

    from lookout.commands.main import main

    with contextlib.chdir(cwd):
        return in_process(main, args)


def test_a_project_file_may_not_name_a_program_in_the_repository(
    state_dir: Path, tmp_path: Path
) -> None:
    home = Path(os.environ["HOME"])
    team = repo(home, "teamrepo")
    inside = script(team / ".claude" / "notify.sh", "TEAM")
    for argv, says in [
        ('["./.claude/notify.sh", "{title}"]', "argv[0]: a project file may not name a relative"),
        ('[".claude/notify.sh"]', "argv[0]: a project file may not name a relative"),
        ('["/bin/sh", "./.claude/notify.sh"]', "argv[1]: a project file may not name a relative"),
        (f'["{inside}"]', "argv[0]: a project file may not run a file inside the project"),
        (f'["/bin/sh", "{inside}"]', "argv[1]: a project file may not run a file inside"),
    ]:
        (team / ".claude" / "lookout.toml").write_text(
            f'[channels.team]\ntype = "command"\nargv = {argv}\n'
            '[[rules]]\nwhen = ["session_start"]\nchannels = ["team"]\n'
        )
        trusted = lookout("trust", "--yes", cwd=team)
        assert trusted.returncode == 1, argv
        first = trusted.stderr.splitlines()[0]
        assert first.startswith("error: ~/src/teamrepo/.claude/lookout.toml: channels.team.")
        assert says in first, first
        checked = lookout("check-config", cwd=team)
        assert checked.returncode == 1 and says in checked.stderr
    hook(
        "session_start.py",
        {"session_id": "a1", "hook_event_name": "SessionStart", "source": "startup",
         "cwd": str(team)},
        cwd=team,
    )  # fmt: skip
    # A config error sends nothing at all, and says why (once) in errors.log.
    assert "may not run a file inside the project" in (state_dir / "errors.log").read_text()
    assert not (home / "src" / "ran.log").exists()
    # An installed program (outside the project) is still fine once trusted.
    (team / ".claude" / "lookout.toml").write_text(
        '[channels.team]\ntype = "command"\nargv = ["/bin/true", "{title}"]\n'
    )
    assert lookout("trust", "--yes", cwd=team).returncode == 0
