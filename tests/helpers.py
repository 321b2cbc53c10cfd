"""Helpers the tests share (fixtures live in conftest.py): captured payloads, the test's config
file, a recording program, intents built the way the state machine builds them, and waiting on a
condition instead of sleeping."""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

import pytest

from lookout import store
from lookout.machine import make_intent
from lookout.shapes import Intent

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
PAYLOADS = FIXTURES / "payloads"
IN_CI = os.environ.get("CI", "").lower() == "true"
# The one place lookout's version is written.
VERSION: str = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]

T = TypeVar("T")


def payload(name: str) -> dict[str, object]:
    """A payload captured from Claude Code 2.1.332, by file stem (e.g. "PreToolUse-Bash")."""
    return json.loads((PAYLOADS / f"{name}.json").read_text())


def require_binary(name: str) -> str:
    """The binary's path; skip when absent, except in CI where its absence is a failure."""
    path = shutil.which(name)
    if path is None:
        if IN_CI:
            pytest.fail(f"{name} is not installed (CI must install it: see .ci/run)")
        pytest.skip(f"{name} is not installed")
    return path


# A Unix socket's path holds at most 107 bytes (sun_path); tmux, D-Bus and Chromium put theirs
# under a directory the tests choose. pytest's basetemp and $TMPDIR can be long (a private CI
# folder, a long test name), so sockets never live under either.
SHORT_TMP = "/tmp"


def short_tmpdir(prefix: str) -> Path:
    """A new private (0700) directory with a short path, for Unix sockets: under $TMPDIR when
    that is short, else under /tmp. The caller removes it."""
    base = tempfile.gettempdir()
    if len(base) > 20:
        base = SHORT_TMP
    return Path(tempfile.mkdtemp(prefix=prefix, dir=base))


def lookout(
    *args: str,
    cwd: Path = ROOT,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 30,
) -> subprocess.CompletedProcess[str]:
    """`python -m lookout ARGS`, the real entry point, in a child process; `env`: its whole
    environment (by default this one's, with this checkout on PYTHONPATH)."""
    return subprocess.run(
        [sys.executable, "-m", "lookout", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env if env is not None else {**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=timeout,
        check=False,
    )


def lock_free(lock: Path) -> bool:
    """Nobody holds the lock file `lock` (a detached sender, poller or listener has left)."""
    fd = store.try_lock(str(lock))
    if fd is None:
        return False
    os.close(fd)
    return True


def write_config(text: str) -> None:
    """Write the test's global lookout config ($LOOKOUT_CONFIG)."""
    path = Path(os.environ["LOOKOUT_CONFIG"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def recorder(tmp_path: Path) -> tuple[Path, Path]:
    """A program that appends its argv (one JSON line) to a log: (program, log)."""
    log = tmp_path / "calls.jsonl"
    prog = tmp_path / "bin" / "record"
    prog.parent.mkdir(exist_ok=True)
    prog.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
    )
    prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    return prog, log


def calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def build_intent(kind: str, defaults: dict[str, Any], fields: dict[str, Any]) -> Intent:
    """machine.make_intent with a test module's defaults, then `fields` (any Intent key)."""
    values = {"project": "demo", "tool_name": "Bash", **defaults, **fields}
    after = {key: values.pop(key) for key in ("ts", "seq") if key in values}
    built = make_intent(kind, values.pop("session_id", "s1"), values.pop("ts_ms", 0), **values)
    built.update(after)  # type: ignore[typeddict-item] # only Intent keys
    return built


def wait_for(
    predicate: Callable[[], T], timeout: float = 20.0, what: str = "", every: float = 0.01
) -> T:
    """Poll `predicate` until it returns something true, and return that; fail the test after
    `timeout` seconds. The timeout is a ceiling for a stuck test, never the expected wait."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout} s for {what or predicate}")
        time.sleep(every)


class Output:
    """What a child process writes to one pipe, collected by a thread so that a test can wait
    for a line without blocking on the pipe."""

    def __init__(self, pipe: IO[str]) -> None:
        self._parts: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self._thread.start()

    def _read(self, pipe: IO[str]) -> None:
        for line in iter(pipe.readline, ""):
            self._parts.append(line)

    def text(self) -> str:
        return "".join(self._parts)

    def rest(self, timeout: float = 20.0) -> str:
        """Everything, once the pipe is closed (the process has exited)."""
        self._thread.join(timeout)
        return self.text()


def shape(chars: int) -> str:
    """How the masker shows a secret of this many characters (lookout.mask)."""
    return f"\u2039secret, {chars} chars\u203a"


# -- install.py in this process ---------------------------------------------------------------


@dataclass(frozen=True)
class Ran:
    """What a command's main() returned and printed, as subprocess.run reports it."""

    returncode: int
    stdout: str
    stderr: str


def in_process(main: Callable[[list[str]], int], argv: Sequence[str]) -> Ran:
    """Run a command's main(argv) in this process, its output captured (argparse's usage errors
    exit: their code is the return code). A test saves the ~0.3 s (seconds on a busy machine) an
    interpreter costs to start and import."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(list(argv))
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
    return Ran(rc, out.getvalue(), err.getvalue())


def install_py(*argv: str) -> Ran:
    """`python3 install.py ARGV`: install.py's whole body is lookout.install.cli.main (the true
    entry point runs in tests/test_readme.py and the e2e suite)."""
    from lookout.install import cli

    return in_process(cli.main, argv)


_built_runtime: list[Path] = []


def built_runtime() -> Path:
    """lookout's runtime as install.py lays it out for this interpreter (the package and hooks
    copied, byte-compiled, the hook pack written), built once per test process: ~3 s of fsyncs
    and compiling that a test about the installer's other steps need not pay each time."""
    if not _built_runtime:
        from lookout.install import runtime

        root = Path(tempfile.mkdtemp(prefix="lookout-runtime-"))
        atexit.register(shutil.rmtree, root, True)
        runtime.install_code(root / "lookout", sys.executable)
        _built_runtime.append(root / "lookout")
    return _built_runtime[0]


def preinstall_runtime() -> Path:
    """This test's runtime home ($LOOKOUT_HOME) as an earlier install.py of this checkout left it
    (its files with their times: the installer finds it up to date, checks it, compiles it and
    writes its hook pack again). Returns the home."""
    from lookout import paths

    home = paths.runtime_home()
    if not home.exists():
        shutil.copytree(built_runtime(), home, symlinks=True)
    return home
