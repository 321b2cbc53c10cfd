"""lookout's runtime: the interpreter the hooks run with (a private venv), the code next to it
(built and switched by lookout.install.runtimes), the `lookout` command, the default config; and
whether Claude Code is running.

Writes only under the runtime directory, ~/.local/bin/lookout (if it is ours) and a config that
does not exist yet."""

from __future__ import annotations

import os
import shlex
import sys
import tomllib
from pathlib import Path

from lookout import paths
from lookout.errors import LookoutError
from lookout.install import files, runtimes
from lookout.install.files import NOTHING_CHANGED, Out
from lookout.paths import tilde
from lookout.platform.base import capture, last_line

# The checkout (or runtime) this package was loaded from: lookout/install/runtime.py -> root.
CHECKOUT = Path(__file__).resolve().parent.parent.parent
FALLBACK_DEPS = ("tomli-w>=1.0",)
WRAPPER_MARK = "# lookout command, written by lookout's install.py"


def running_claude(proc: str = "/proc") -> list[int]:
    """Pids of this user's live processes named `claude` (the native binary, or node running the
    `claude` script) whose HOME is ours. Other users' sessions, and ours under another HOME, read
    their own settings, never the file changed here; a zombie is no session (newuser-3)."""
    found: list[int] = []
    try:
        entries = os.listdir(proc)
    except OSError:
        return found
    uid = os.getuid()
    home = os.path.realpath(os.path.expanduser("~"))
    for entry in entries:
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        where = os.path.join(proc, entry)
        try:
            if os.stat(where).st_uid != uid:
                continue
            with open(os.path.join(where, "comm"), encoding="utf-8", errors="replace") as fh:
                comm = fh.read().strip()
            with open(os.path.join(where, "cmdline"), "rb") as fb:
                argv0 = fb.read().split(b"\0", 1)[0].decode("utf-8", "replace")
            if not (comm == "claude" or os.path.basename(argv0) == "claude"):
                continue
            with open(os.path.join(where, "stat"), "rb") as fb:
                state = fb.read().rpartition(b")")[2].split()[:1]
            with open(os.path.join(where, "environ"), "rb") as fb:
                env = fb.read().split(b"\0")
        except OSError:
            continue
        if state in ([b"Z"], [b"X"], []):
            continue  # a zombie (or dead): it runs nothing
        theirs = next((v[5:] for v in env if v.startswith(b"HOME=")), None)
        if theirs is not None and os.path.realpath(os.fsdecode(theirs)) == home:
            found.append(int(entry))
    return sorted(found)


def warn_running(out: Out) -> None:
    """Said after a settings file changed. Measured with Claude Code 2.1.332: a running session
    reloads its hooks about a second after the file changes, and when it writes the file itself
    (a "don't ask again" permission) it keeps what is there, lookout's hooks included."""
    pids = running_claude(os.environ.get("LOOKOUT_PROC_DIR", "/proc"))
    if pids:
        shown = ", ".join(str(p) for p in pids[:5])
        more = f" and {len(pids) - 5} more" if len(pids) > 5 else ""
        out(
            f"note: Claude Code is running (pid {shown}{more}): it picks up the change within a"
            " few seconds, no restart needed (checked with Claude Code 2.1.332)"
        )


def runtime_deps(checkout: Path = CHECKOUT) -> list[str]:
    try:
        with open(checkout / "pyproject.toml", "rb") as fh:
            deps = tomllib.load(fh)["project"]["dependencies"]
        return [str(d) for d in deps]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return list(FALLBACK_DEPS)


_PROBE = (
    "import sys\n"
    "ok = sys.version_info >= (3, 11)\n"
    "try:\n"
    "    import tomli_w\n"
    "except ImportError:\n"
    "    ok = ok and 'nodeps'\n"
    "print(sys.executable)\n"
    "print('%d.%d' % sys.version_info[:2])\n"
    "print(ok)\n"
)


def probe(python: str) -> tuple[str, str, str] | None:
    """(sys.executable, version, 'True'|'False'|'nodeps') of an interpreter, None if it fails."""
    try:
        done = capture([python, "-I", "-c", _PROBE], timeout=60)
    except OSError:
        return None
    lines = done.stdout.splitlines()
    if done.returncode != 0 or len(lines) != 3:
        return None
    return lines[0], lines[1], lines[2]


def has_module(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def ensure_interpreter(home: Path, given: str | None, out: Out) -> str:
    """The absolute interpreter the hooks will run with (created or checked)."""
    if given is not None:
        found = probe(given)
        if found is None:
            raise LookoutError(f"--python {given}: does not run", hint=NOTHING_CHANGED)
        executable, version, ok = found
        if ok == "False":
            raise LookoutError(f"--python {given}: Python {version}, lookout needs 3.11 or newer")
        if ok == "nodeps":
            deps = " ".join(shlex.quote(d) for d in runtime_deps())
            raise LookoutError(
                f"--python {given}: tomli-w is not installed in it",
                hint=f"{shlex.quote(given)} -m pip install {deps}",
            )
        # A venv interpreter reports its own path; a pyenv shim reports the real one (no shim cost).
        out(f"using {tilde(executable)} (Python {version}) for the hooks")
        return executable
    python = paths.venv_python(home)
    found = probe(str(python)) if python.exists() else None
    if found is not None and found[2] == "True":
        return str(python)
    if found is None:
        if not (has_module("venv") and has_module("ensurepip")):
            raise LookoutError(
                "cannot create a virtual environment: this Python has no venv/ensurepip module",
                hint="apt install python3-venv (or pass --python PATH of an interpreter that has"
                f" tomli-w); {NOTHING_CHANGED}",
            )
        out(f"creating virtual environment {tilde(home / 'venv')} ...")
        done = capture([sys.executable, "-m", "venv", "--clear", str(home / "venv")])
        if done.returncode != 0:
            raise LookoutError(
                f"python -m venv {tilde(home / 'venv')} failed: {last_line(done)}",
                hint="apt install python3-venv, or pass --python PATH",
            )
    needed = runtime_deps()
    out(f"installing {', '.join(needed)} into it (pip) ...")
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    done = capture([str(python), "-m", "pip", "install", "--quiet", *needed], env=env)
    if done.returncode != 0:
        raise LookoutError(
            f"pip install into {tilde(home / 'venv')} failed: {last_line(done)}",
            hint="check the network or your pip configuration, or pass --python PATH of an"
            " interpreter that has tomli-w",
        )
    return str(python)


def install_code(home: Path, python: str, checkout: Path = CHECKOUT) -> int:
    """Build the checkout's runtime in home/runtimes/ beside the running one and switch to it in
    one step (lookout.install.runtimes). Returns how many files the new runtime holds, 0 when
    the current one already holds exactly this code."""
    outcome = runtimes.install_runtime(home, python, checkout)
    manifest = runtimes.read_manifest(outcome.runtime) if outcome.switched else None
    return len(manifest["files"]) if manifest is not None else 0


def wrapper_text(python: str, home: Path) -> str:
    entry = shlex.quote(str(home / "bin" / "lookout"))
    return f'#!/bin/sh\n{WRAPPER_MARK}\nexec {shlex.quote(python)} -I {entry} "$@"\n'


def install_wrapper(python: str, home: Path, out: Out) -> None:
    target = paths.bin_dir() / "lookout"
    text = wrapper_text(python, home)
    current: str | None = None
    if target.exists() or target.is_symlink():
        try:
            current = target.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            current = ""
        if WRAPPER_MARK not in current:
            out(f"warning: {tilde(target)} exists and is not lookout's: left alone")
            return
    if current != text:
        files.make_dirs(target.parent)
        files.atomic_write(target, text.encode("utf-8"), 0o755)
        out(f"installed the lookout command: {tilde(target)}")
    on_path = {os.path.realpath(p) for p in os.environ.get("PATH", "").split(os.pathsep) if p}
    if os.path.realpath(target.parent) not in on_path:
        out(
            f"note: {tilde(target.parent)} is not on PATH; add it, e.g."
            ' export PATH="$HOME/.local/bin:$PATH" in ~/.profile'
        )


def install_config(out: Out) -> None:
    """Write the default config (the built-in default, as a file to read and change) when
    there is none; never touch one that exists."""
    from lookout.config import notify

    target = Path(paths.config_path())
    if target.exists() or target.is_symlink():
        return
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    # May later hold webhook URLs and tokens: owner-only.
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(notify.DEFAULT_TEXT.encode("utf-8"))
    out(
        f"wrote default config {tilde(target)} (desktop notifications when an agent waits for you"
        " and for turns of 30 s or more)"
    )
