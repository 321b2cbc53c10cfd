"""`python3 install.py`: set up lookout's runtime and merge its hooks into a Claude Code settings
file and/or OpenAI Codex's hooks.json or config.toml `notify` (or take them out again). The one
documented writer of someone else's files: it writes one only atomically, after a backup, and
never one it could not parse.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lookout import __version__, codex_config, hookspec, paths, settings
from lookout.errors import LookoutError

CHECKOUT = Path(__file__).resolve().parent.parent
FALLBACK_DEPS = ("filelock>=3.20.3", "tomli-w>=1.0")
WRAPPER_MARK = "# lookout command, written by lookout's install.py"
NOTHING_CHANGED = "lookout changed nothing"
# The first Codex release with hooks on by default; older ones only have `notify`.
CODEX_HOOKS_SINCE = (0, 124, 0)

Out = Callable[[str], None]


# --- where things are -----------------------------------------------------------------------


def tilde(path: str | os.PathLike[str]) -> str:
    text = str(path)
    home = os.path.expanduser("~").rstrip("/")
    if home and (text == home or text.startswith(home + "/")):
        return "~" + text[len(home) :]
    return text


def user_settings_path() -> Path:
    base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return Path(base) / "settings.json"


def scope_path(scope: str, project: str | None = None) -> Path:
    if scope == "user":
        return user_settings_path()
    root = Path(os.path.abspath(project or os.getcwd()))
    name = "settings.json" if scope == "project" else "settings.local.json"
    return root / ".claude" / name


def codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex"))


def codex_hooks_path() -> Path:
    return codex_home() / "hooks.json"


def codex_config_path() -> Path:
    return codex_home() / "config.toml"


def runtime_home() -> Path:
    return Path(os.path.abspath(paths.data_dir()))


def venv_python(home: Path) -> Path:
    return home / "venv" / "bin" / "python"


def bin_dir() -> Path:
    return Path(os.path.expanduser("~")) / ".local" / "bin"


def hook_command(python: str, home: Path, script: str, agent: str = "claude") -> str:
    # The client runs it through a shell: quote each path, pin the interpreter (no PATH lookup).
    command = f"{shlex.quote(python)} -I -S {shlex.quote(str(home / 'hooks' / script))}"
    # Codex's payloads look much like Claude Code's: its commands say which agent runs them.
    if agent == "codex":
        return f"{settings.AGENT_VAR}=codex {command}"
    return settings.TERM_GUARD + command


def wanted(python: str, home: Path, agent: str = "claude") -> list[tuple[str, settings.Handler]]:
    events = hookspec.CODEX_EVENTS if agent == "codex" else hookspec.EVENTS
    return settings.wanted_handlers(
        lambda script: hook_command(python, home, script, agent), events
    )


# --- reading and writing settings files -----------------------------------------------------


@dataclass
class Loaded:
    path: Path
    text: str | None  # None: the file does not exist
    data: settings.Settings


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            # Rewriting would silently drop one of the two: refuse instead.
            raise ValueError(f"duplicate key {json.dumps(key, ensure_ascii=False)}")
        out[key] = value
    return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _read_text(path: Path) -> str | None:
    """The file's text, None if it does not exist; LookoutError if it cannot be read as UTF-8."""
    where = tilde(path)
    hint = f"fix or move the file; {NOTHING_CHANGED}"
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        if path.is_symlink():
            raise LookoutError(
                f"{where}: is a symlink to a missing file ({os.readlink(path)})", hint=hint
            ) from None
        return None
    except OSError as exc:
        raise LookoutError(f"{where}: cannot read: {exc.strerror}", hint=NOTHING_CHANGED) from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LookoutError(f"{where}: not UTF-8 text (byte {exc.start})", hint=hint) from exc


def load_settings(path: Path) -> Loaded:
    where = tilde(path)
    hint = f"fix or move the file; {NOTHING_CHANGED}"
    text = _read_text(path)
    if text is None:
        return Loaded(path, None, {})
    if not text.strip():
        return Loaded(path, text, {})  # an empty file (`touch`) holds nothing to lose
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise LookoutError(
            f"{where}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", hint=hint
        ) from exc
    except ValueError as exc:
        raise LookoutError(f"{where}: invalid JSON: {exc}", hint=hint) from exc
    try:
        settings.check_shape(data)
    except settings.ShapeError as exc:
        raise LookoutError(f"{where}: {exc}", hint=hint) from exc
    return Loaded(path, text, data)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def backup_name(path: Path, now: float | None = None) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(now))
    candidate = path.with_name(f"{path.name}.bak-{stamp}")
    n = 1
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.bak-{stamp}-{n}")
        n += 1
    return candidate


def atomic_write(path: Path, data: bytes, mode: int) -> None:
    """Temp file in the target's directory, fsync, keep the mode, replace; through a symlink."""
    real = Path(os.path.realpath(path))
    fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".lookout-tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
        os.replace(tmp, real)
        dir_fd = os.open(real.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_settings(loaded: Loaded, new_text: str, now: float | None = None) -> Path | None:
    """Write new_text over the file (a backup first when it exists); return the backup path."""
    path = loaded.path
    where = tilde(path)
    real = Path(os.path.realpath(path))
    data = new_text.encode("utf-8")
    backup: Path | None = None
    try:
        if loaded.text is not None:
            if real.read_bytes() != loaded.text.encode("utf-8"):
                # Someone (a running Claude Code?) wrote it since we read it: never clobber that.
                raise LookoutError(
                    f"{where}: changed while lookout was reading it",
                    hint=f"run the command again; {NOTHING_CHANGED}",
                )
            st = real.stat()
            if not st.st_mode & 0o222:
                raise LookoutError(
                    f"{where}: file is read-only (mode {stat.S_IMODE(st.st_mode):04o})",
                    hint=f"make it writable (chmod u+w {tilde(real)}) and run again;"
                    f" {NOTHING_CHANGED}",
                )
            mode = stat.S_IMODE(st.st_mode)
            backup = backup_name(path, now)
            # The backup holds the original bytes; a plain file next to the name the user gave.
            fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
            with os.fdopen(fd, "wb") as fh:
                fh.write(loaded.text.encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())
        else:
            mode = 0o666 & ~_umask()
            real.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data, mode)
    except PermissionError as exc:
        raise LookoutError(
            f"{where}: cannot write: {exc.strerror} ({exc.filename})",
            hint=f"check the permissions of {tilde(real.parent)}; {NOTHING_CHANGED}",
        ) from exc
    except OSError as exc:
        # The original is untouched (the replace is the last step); only a backup may exist.
        raise LookoutError(
            f"{where}: cannot write: {exc.strerror or exc}",
            hint=f"the file is unchanged{f'; {tilde(backup)} is a copy of it' if backup else ''}",
        ) from exc
    if real.read_bytes() != data:
        restore = f"restore it from {tilde(backup)}" if backup else "remove it"
        raise LookoutError(f"{where}: read-back differs from what was written", hint=restore)
    return backup


def unified_diff(loaded: Loaded, new_text: str) -> str:
    name = tilde(loaded.path)
    old = (loaded.text or "").splitlines(keepends=True)
    new = new_text.splitlines(keepends=True)
    lines = difflib.unified_diff(old, new, "/dev/null" if loaded.text is None else name, name)
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


# --- a running Claude Code -----------------------------------------------------------------


def running_claude(proc: str = "/proc") -> list[int]:
    """Pids of processes named `claude` (the native binary, or node running the `claude` script)."""
    found: list[int] = []
    try:
        entries = os.listdir(proc)
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(os.path.join(proc, entry, "comm"), encoding="utf-8", errors="replace") as fh:
                comm = fh.read().strip()
            with open(os.path.join(proc, entry, "cmdline"), "rb") as fb:
                argv0 = fb.read().split(b"\0", 1)[0].decode("utf-8", "replace")
        except OSError:
            continue
        if comm == "claude" or os.path.basename(argv0) == "claude":
            found.append(int(entry))
    return sorted(found)


def warn_running(out: Out) -> None:
    pids = running_claude(os.environ.get("LOOKOUT_PROC_DIR", "/proc"))
    if pids:
        shown = ", ".join(str(p) for p in pids[:5])
        out(
            f"warning: Claude Code is running (pid {shown}): restart it to load the change;"
            " until then a session may write its old settings back over the file"
        )


# --- the runtime: interpreter, code, command, config ---------------------------------------


def _run(argv: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=False, **kwargs)


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
    "    import filelock, tomli_w\n"
    "except ImportError:\n"
    "    ok = ok and 'nodeps'\n"
    "print(sys.executable)\n"
    "print('%d.%d' % sys.version_info[:2])\n"
    "print(ok)\n"
)


def probe(python: str) -> tuple[str, str, str] | None:
    """(sys.executable, version, 'True'|'False'|'nodeps') of an interpreter, None if it fails."""
    try:
        done = _run([python, "-I", "-c", _PROBE], timeout=60)
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
                f"--python {given}: filelock and tomli-w are not installed in it",
                hint=f"{shlex.quote(given)} -m pip install {deps}",
            )
        # A venv interpreter reports its own path; a pyenv shim reports the real one (no shim cost).
        out(f"using {tilde(executable)} (Python {version}) for the hooks")
        return executable
    python = venv_python(home)
    found = probe(str(python)) if python.exists() else None
    if found is not None and found[2] == "True":
        return str(python)
    if found is None:
        if not (has_module("venv") and has_module("ensurepip")):
            raise LookoutError(
                "cannot create a virtual environment: this Python has no venv/ensurepip module",
                hint="apt install python3-venv (or pass --python PATH of an interpreter that has"
                f" filelock and tomli-w); {NOTHING_CHANGED}",
            )
        out(f"creating virtual environment {tilde(home / 'venv')} ...")
        done = _run([sys.executable, "-m", "venv", "--clear", str(home / "venv")])
        if done.returncode != 0:
            raise LookoutError(
                f"python -m venv {tilde(home / 'venv')} failed: {_last_line(done)}",
                hint="apt install python3-venv, or pass --python PATH",
            )
    needed = runtime_deps()
    out(f"installing {', '.join(needed)} into it (pip) ...")
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    done = _run([str(python), "-m", "pip", "install", "--quiet", *needed], env=env)
    if done.returncode != 0:
        raise LookoutError(
            f"pip install into {tilde(home / 'venv')} failed: {_last_line(done)}",
            hint="check the network or your pip configuration, or pass --python PATH of an"
            " interpreter that has filelock and tomli-w",
        )
    return str(python)


def _last_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in (done.stderr + done.stdout).splitlines() if ln.strip()]
    return lines[-1].strip() if lines else f"exit {done.returncode}"


def _copy_if_changed(src: Path, dst: Path) -> bool:
    data = src.read_bytes()
    try:
        if dst.read_bytes() == data:
            return False
    except OSError:
        pass
    dst.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(dst, data, 0o644)
    return True


_CLI_ENTRY = """\
# The `lookout` command of an installed runtime (run by ~/.local/bin/lookout).
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lookout.cli import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
"""


def install_code(home: Path, python: str, checkout: Path = CHECKOUT) -> int:
    """Copy the package and hook scripts into home and byte-compile them with `python`.
    Returns how many files changed (stale files from an older version are removed)."""
    changed = 0
    for sub in ("lookout", "hooks"):
        src_dir = checkout / sub
        wanted_files = {p.relative_to(src_dir) for p in src_dir.rglob("*.py")}
        for rel in sorted(wanted_files):
            changed += _copy_if_changed(src_dir / rel, home / sub / rel)
        for old in sorted((home / sub).rglob("*.py")):
            if old.relative_to(home / sub) not in wanted_files:
                old.unlink()
                changed += 1
    entry = home / "bin" / "lookout"
    entry.parent.mkdir(parents=True, exist_ok=True)
    if not entry.exists() or entry.read_text(encoding="utf-8") != _CLI_ENTRY:
        atomic_write(entry, _CLI_ENTRY.encode("utf-8"), 0o644)
        changed += 1
    # Hooks run with -I, which ignores PYTHONDONTWRITEBYTECODE: ship bytecode for the interpreter
    # that runs them so no hook ever compiles (or writes) on its hot path.
    done = _run(
        [python, "-I", "-m", "compileall", "-q", str(home / "lookout"), str(home / "hooks")]
    )
    if done.returncode != 0:
        raise LookoutError(f"byte-compiling {tilde(home)} failed: {_last_line(done)}")
    return changed


def wrapper_text(python: str, home: Path) -> str:
    entry = shlex.quote(str(home / "bin" / "lookout"))
    return f'#!/bin/sh\n{WRAPPER_MARK}\nexec {shlex.quote(python)} -I {entry} "$@"\n'


def install_wrapper(python: str, home: Path, out: Out) -> None:
    target = bin_dir() / "lookout"
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
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, text.encode("utf-8"), 0o755)
        out(f"installed the lookout command: {tilde(target)}")
    on_path = {os.path.realpath(p) for p in os.environ.get("PATH", "").split(os.pathsep) if p}
    if os.path.realpath(target.parent) not in on_path:
        out(
            f"note: {tilde(target.parent)} is not on PATH; add it, e.g."
            ' export PATH="$HOME/.local/bin:$PATH" in ~/.profile'
        )


def install_config(out: Out, checkout: Path = CHECKOUT) -> None:
    target = Path(paths.config_path())
    if target.exists():
        return
    example = checkout / "config.example.toml"
    if not example.exists():
        out("note: no config.example.toml next to install.py: no default config written")
        return
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    # May later hold webhook URLs and tokens: owner-only.
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(example.read_bytes())
    out(f"wrote default config {tilde(target)} (from config.example.toml)")


# --- OpenAI Codex ------------------------------------------------------------------------------


def load_codex_config(path: Path) -> Loaded:
    """Codex's config.toml, parsed strictly (data: the TOML document)."""
    text = _read_text(path)
    if text is None:
        return Loaded(path, None, {})
    try:
        data = codex_config.parse(text)
        codex_config.notify_value(data)
    except codex_config.ConfigError as exc:
        raise LookoutError(
            f"{tilde(path)}: {exc}", hint=f"fix or move the file; {NOTHING_CHANGED}"
        ) from exc
    return Loaded(path, text, data)


def codex_version(binary: str | None = None) -> tuple[str | None, tuple[int, int, int] | None]:
    """(the codex binary, its version), from `codex --version`; None where unknown.
    $LOOKOUT_CODEX names the binary (empty: none), else `codex` on PATH."""
    if binary is None:
        binary = os.environ.get("LOOKOUT_CODEX", shutil.which("codex") or "")
    if not binary:
        return None, None
    try:
        done = _run([binary, "--version"], timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return binary, None
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", done.stdout)
    if done.returncode != 0 or found is None:
        return binary, None
    major, minor, patch = (int(x) for x in found.groups())
    return binary, (major, minor, patch)


def codex_mode(force_notify: bool, out: Out) -> str:
    """'hooks' or 'notify': which way Codex is wired, said in one line."""
    hooks, config = tilde(codex_hooks_path()), tilde(codex_config_path())
    since = ".".join(str(n) for n in CODEX_HOOKS_SINCE)
    if force_notify:
        out(f"codex: --codex-notify: using notify in {config}")
        return "notify"
    binary, version = codex_version()
    if version is None:
        what = "codex not found on PATH" if binary is None else f"{binary} --version failed"
        out(
            f"codex: {what}: using hooks in {hooks} (Codex {since}+;"
            " for an older Codex add --codex-notify)"
        )
        return "hooks"
    shown = ".".join(str(n) for n in version)
    if version < CODEX_HOOKS_SINCE:
        out(f"codex: Codex {shown} has no hooks (they start in {since}): using notify in {config}")
        return "notify"
    out(f"codex: Codex {shown} has hooks: using {hooks}")
    return "hooks"


def notify_memo_path() -> Path:
    # The exact text of the notify lines lookout replaced, so uninstall restores them byte for
    # byte; without it the previous argv (kept after our "--") is rewritten on one line.
    return runtime_home() / "codex-notify.json"


def _read_memo() -> dict[str, dict[str, str]]:
    try:
        memo = json.loads(notify_memo_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(memo, dict):
        return {}
    return {
        k: v
        for k, v in memo.items()
        if isinstance(v, dict) and all(isinstance(x, str) for x in v.values())
    }


def _write_memo(memo: dict[str, dict[str, str]]) -> None:
    path = notify_memo_path()
    if not memo:
        if path.exists():
            path.unlink()
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, (json.dumps(memo, indent=2) + "\n").encode("utf-8"), 0o600)


def _edit_notify(loaded: Loaded, snippet: str, notify: list[str] | None) -> str:
    text = loaded.text or ""
    try:
        new_text = codex_config.replace(text, snippet)
        codex_config.check(text, new_text, notify)
    except codex_config.ConfigError as exc:
        raise LookoutError(f"{tilde(loaded.path)}: {exc}", hint=NOTHING_CHANGED) from exc
    return new_text


def _verify_written(loaded: Loaded, backup: Path | None, notify: list[str] | None) -> None:
    """Read the file back: every other key as before, notify as wanted."""
    text = _read_text(loaded.path) or ""
    try:
        codex_config.check(loaded.text or "", text, notify)
    except codex_config.ConfigError as exc:
        restore = f"restore it from {tilde(backup)}" if backup else "remove it"
        raise LookoutError(f"{tilde(loaded.path)}: read back: {exc}", hint=restore) from exc


def install_notify(loaded: Loaded, python: str, home: Path, dry_run: bool, out: Out) -> bool:
    """Point Codex's legacy `notify` at codex_notify.py, chaining the program set before."""
    path = loaded.path
    current = codex_config.notify_value(loaded.data)
    previous = codex_config.chained(current)
    script = str(home / "hooks" / hookspec.CODEX_NOTIFY_SCRIPT)
    argv = codex_config.notify_argv(python, script, previous)
    if current == argv:
        out(f"already installed: notify in {tilde(path)}")
        return False
    old_snippet = codex_config.current_snippet(loaded.text) if loaded.text else ""
    snippet = codex_config.render(argv)
    text = _edit_notify(loaded, snippet, argv)
    if dry_run:
        out(unified_diff(loaded, text).rstrip("\n"))
        return True
    backup = write_settings(loaded, text)
    _verify_written(loaded, backup, argv)
    memo = _read_memo()
    key = os.path.realpath(path)
    if not codex_config.is_ours(current):
        memo[key] = {"previous": old_snippet, "written": snippet}
    elif key in memo:
        memo[key]["written"] = snippet
    _write_memo(memo)
    first = [f"still runs your {shlex.join(previous[:1])}"] if previous else []
    out(f"set notify in {tilde(path)}{_written_note(first, backup, loaded)}")
    return True


def uninstall_notify(loaded: Loaded, dry_run: bool, out: Out) -> bool:
    """Put back the notify lookout replaced (exactly, when it remembers the text), or remove
    ours when there was none."""
    path = loaded.path
    current = codex_config.notify_value(loaded.data)
    if loaded.text is None or not codex_config.is_ours(current):
        out(f"nothing to uninstall in {tilde(path)}")
        return False
    previous = codex_config.chained(current)
    restore = codex_config.render(previous) if previous else ""
    memo = _read_memo()
    key = os.path.realpath(path)
    entry = memo.get(key)
    if entry and entry.get("written") == codex_config.current_snippet(loaded.text):
        kept = entry.get("previous", "")
        try:
            value = codex_config.parse(kept).get("notify") if kept else None
        except codex_config.ConfigError:
            value = False
        if value == (previous or None):
            restore = kept
    text = _edit_notify(loaded, restore, previous or None)
    if dry_run:
        out(unified_diff(loaded, text).rstrip("\n"))
        return False
    backup = write_settings(loaded, text)
    _verify_written(loaded, backup, previous or None)
    if memo.pop(key, None) is not None:
        _write_memo(memo)
    what = "restored your previous notify in" if previous else "removed lookout's notify from"
    out(f"{what} {tilde(path)}{_suffix(backup)}")
    return True


def install_codex(mode: str, python: str, home: Path, dry_run: bool, out: Out) -> None:
    hooks = load_settings(codex_hooks_path())
    config = load_codex_config(codex_config_path())
    if mode == "hooks":
        changed = install_into(hooks, python, home, dry_run, out, agent="codex")
        if codex_config.is_ours(codex_config.notify_value(config.data)):
            # Upgraded from a Codex without hooks: both would record every turn.
            uninstall_notify(config, dry_run, out)
        if changed and not dry_run:
            out(
                "note: Codex runs new or changed hooks only once you trust them:"
                " start codex, type /hooks and trust lookout's"
                f" {len(hookspec.CODEX_EVENTS)} hooks"
            )
        return
    install_notify(config, python, home, dry_run, out)
    if settings.count_ours(hooks.data, [str(home)]):
        # One way only: with both, a Codex that has hooks would record every turn twice.
        uninstall_file(hooks.path, [str(home)], dry_run, out)


# --- the commands ----------------------------------------------------------------------------


def targets(args: argparse.Namespace) -> list[Path]:
    if args.settings:
        return [Path(os.path.abspath(args.settings))]
    return [scope_path(args.scope, args.project)]


def _written_note(details: list[str], backup: Path | None, loaded: Loaded) -> str:
    """` (…; backup: …)` / ` (new file)` after a line that says what was written."""
    if backup:
        details = [*details, f"backup: {tilde(backup)}"]
    elif loaded.text is None:
        details = [*details, "new file"]
    return f" ({'; '.join(details)})" if details else ""


def _suffix(backup: Path | None) -> str:
    return f" (backup: {tilde(backup)})" if backup else ""


def do_install(args: argparse.Namespace, out: Out) -> int:
    claude = args.agent in ("claude", "all")
    codex = args.agent in ("codex", "all")
    (target,) = targets(args)
    # Refuse a broken file before touching anything else.
    loaded = load_settings(target) if claude else Loaded(target, None, {})
    mode = ""
    if codex:
        load_settings(codex_hooks_path())
        load_codex_config(codex_config_path())
        mode = codex_mode(args.codex_notify, out)
    home = runtime_home()
    if args.dry_run:
        python = args.python or str(venv_python(home))
        out(f"dry run: would install the runtime into {tilde(home)}; nothing is written")
    else:
        python = ensure_interpreter(home, args.python, out)
        changed = install_code(home, python)
        if changed:
            out(f"installed runtime {__version__} into {tilde(home)} (hooks run {tilde(python)})")
        else:
            out(f"runtime {tilde(home)} is up to date")
        install_wrapper(python, home, out)
        install_config(out)
    if claude:
        install_into(loaded, python, home, args.dry_run, out)
    if codex:
        install_codex(mode, python, home, args.dry_run, out)
    if args.dry_run or not claude:
        return 0
    if loaded.data.get("disableAllHooks") is True:
        out(f"warning: {tilde(target)} sets disableAllHooks: true, so no hook runs")
    if args.scope == "project" and not args.settings:
        out(
            "note: .claude/settings.json is usually committed, and these commands hold this"
            " machine's paths: --scope local keeps them out of git"
        )
    warn_running(out)
    return 0


def install_into(
    loaded: Loaded, python: str, home: Path, dry_run: bool, out: Out, agent: str = "claude"
) -> bool:
    """Merge our entries into one settings file (Claude Code's settings.json or Codex's
    hooks.json, the same shape); True if the file changed (or would)."""
    target = loaded.path
    roots = [str(home)]
    handlers = wanted(python, home, agent)
    new = settings.merge(loaded.data, handlers, roots)
    text = settings.dumps(new, loaded.text)
    count = len(handlers)
    if loaded.text is not None and text == loaded.text:
        out(f"already installed: {count} hooks in {tilde(target)}")
        return False
    if dry_run:
        out(unified_diff(loaded, text).rstrip("\n"))
        return True
    stale = settings.count_ours(loaded.data, roots)
    backup = write_settings(loaded, text)
    first = [f"replaced {stale} from an earlier install"] if stale else []
    out(f"installed {count} hooks into {tilde(target)}{_written_note(first, backup, loaded)}")
    return True


def uninstall_file(target: Path, roots: list[str], dry_run: bool, out: Out) -> bool:
    loaded = load_settings(target)
    found = settings.count_ours(loaded.data, roots)
    if not found:
        out(f"nothing to uninstall in {tilde(target)}")
        return False
    assert loaded.text is not None
    text = settings.dumps(settings.unmerge(loaded.data, roots), loaded.text)
    if dry_run:
        out(unified_diff(loaded, text).rstrip("\n"))
        return False
    backup = write_settings(loaded, text)
    out(f"removed {found} hooks from {tilde(target)}{_suffix(backup)}")
    return True


def _remove_tree(path: Path, what: str, dry_run: bool, out: Out) -> None:
    home = Path(os.path.expanduser("~")).resolve()
    real = path.resolve()
    if real == Path("/") or real == home or real in home.parents:
        out(f"warning: not removing {what} {tilde(path)}: refusing a home or root directory")
        return
    if not path.exists():
        return
    out(f"{'would remove' if dry_run else 'removing'} {what} {tilde(path)}")
    if not dry_run:
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


def do_uninstall(args: argparse.Namespace, out: Out) -> int:
    home = runtime_home()
    roots = [str(home)]
    claude = args.agent in ("claude", "all")
    codex = args.agent in ("codex", "all")
    files = targets(args) if claude else []
    codex_files = [codex_hooks_path(), codex_config_path()]
    if args.purge and not codex:
        # The runtime goes away: Codex's hooks and notify must not point at it either.
        codex = any(os.path.lexists(f) for f in codex_files)
    if codex:
        # Before changing anything: a broken file stops the whole uninstall.
        load_settings(codex_files[0])
        load_codex_config(codex_files[1])
    if args.purge:
        # The runtime goes away: hooks anywhere that point at it would fail, so clear all scopes.
        files += [scope_path(s, args.project) for s in ("user", "project", "local")]
    unique: list[Path] = []
    for f in files:
        if all(os.path.realpath(f) != os.path.realpath(u) for u in unique):
            unique.append(f)
    for f in unique:
        load_settings(f)  # refuse a broken file before changing anything
    changed = False
    for target in unique:
        changed |= uninstall_file(target, roots, args.dry_run, out)
    if codex:
        uninstall_file(codex_files[0], roots, args.dry_run, out)
        uninstall_notify(load_codex_config(codex_files[1]), args.dry_run, out)
    if args.purge:
        for sub in ("venv", "lookout", "hooks", "bin"):
            _remove_tree(home / sub, "runtime", args.dry_run, out)
        if not args.dry_run and home.is_dir() and not any(home.iterdir()):
            home.rmdir()
        wrapper = bin_dir() / "lookout"
        try:
            ours = WRAPPER_MARK in wrapper.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            ours = False
        if ours:
            _remove_tree(wrapper, "command", args.dry_run, out)
        verb = "would also remove" if args.dry_run else "also removing"
        out(f"{verb} lookout's state and config:")
        _remove_tree(Path(paths.state_dir()), "state", args.dry_run, out)
        config = Path(paths.config_path())
        _remove_tree(config, "config", args.dry_run, out)
        if not args.dry_run and config.parent.is_dir() and not any(config.parent.iterdir()):
            config.parent.rmdir()
    if changed and claude:
        warn_running(out)
    return 0


DESCRIPTION = """\
Install lookout: set up its runtime (a private virtual environment under
$LOOKOUT_HOME, default ~/.local/share/lookout), put the `lookout` command in
~/.local/bin, write a default config if there is none, and merge one hook
entry per Claude Code event into a settings file (a backup first, an atomic
write, everything else in the file kept as it was). With --agent codex, the
same for OpenAI Codex: its hooks into $CODEX_HOME/hooks.json (default
~/.codex), or, for a Codex older than 0.124.0, its `notify` program in
$CODEX_HOME/config.toml (only that setting changes)."""

EPILOG = """\
scopes:
  user     ~/.claude/settings.json ($CLAUDE_CONFIG_DIR/settings.json if set)
  project  DIR/.claude/settings.json (shared with the repository)
  local    DIR/.claude/settings.local.json (this machine only)

examples:
  python3 install.py                      install for every session of this user
  python3 install.py --dry-run            show the settings diff, write nothing
  python3 install.py --scope local --project ~/src/app
  python3 install.py --agent all          Claude Code and Codex
  python3 install.py --agent codex --codex-notify
                                          Codex through its legacy notify setting
  python3 install.py --uninstall          remove lookout's hooks (keeps the runtime)
  python3 install.py --uninstall --purge  also remove runtime, command, state and config"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="install.py",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--agent",
        choices=("claude", "codex", "all"),
        help="which coding agent to install for (default: claude)",
    )
    p.add_argument(
        "--codex-notify",
        action="store_true",
        help="Codex: set the legacy `notify` program in config.toml instead of hooks"
        " (automatic for Codex older than 0.124.0)",
    )
    p.add_argument(
        "--scope",
        choices=("user", "project", "local"),
        help="which settings file to edit (default: user)",
    )
    p.add_argument(
        "--project", metavar="DIR", help="project for --scope project|local (default: .)"
    )
    p.add_argument("--settings", metavar="FILE", help="edit this settings file instead of a scope")
    p.add_argument(
        "--python",
        metavar="PATH",
        help="run the hooks with this interpreter (it must have filelock and tomli-w)"
        " instead of creating a virtual environment",
    )
    p.add_argument("--dry-run", action="store_true", help="print the diff, change nothing")
    p.add_argument("--uninstall", action="store_true", help="remove lookout's hook entries")
    p.add_argument(
        "--purge",
        action="store_true",
        help="with --uninstall: clear every scope and remove the runtime, state and config",
    )
    p.add_argument("--version", action="version", version=f"lookout {__version__}")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.purge and not args.uninstall:
        parser.error("--purge only goes with --uninstall")
    if args.settings and (args.scope or args.project):
        parser.error("--settings replaces --scope/--project")
    if args.codex_notify and args.agent == "claude":
        parser.error("--codex-notify goes with --agent codex or all")
    args.agent = args.agent or ("codex" if args.codex_notify else "claude")
    if args.agent == "codex" and (args.scope or args.project or args.settings):
        parser.error("--scope/--project/--settings are for Claude Code (--agent claude or all)")
    args.scope = args.scope or "user"

    def out(line: str) -> None:
        print(line, flush=True)

    try:
        return do_uninstall(args, out) if args.uninstall else do_install(args, out)
    except LookoutError as exc:
        print(f"error: {exc}", file=sys.stderr)
        if exc.hint:
            print(f"hint: {exc.hint}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
