"""The installed code, one directory per build, switched in one step (issue 35).

    runtimes/<version>-<digest>/   lookout/, hooks/, bin/lookout, runtime.json (written last)
    current  -> runtimes/<name>    what a hook or command that starts now runs
    previous -> runtimes/<name>    the one before, kept: a process started with it may still run
    hooks/<script>.py -> ../current/hooks/<script>.py    the stable paths agents' settings name
    bin/lookout       -> ../current/bin/lookout          what ~/.local/bin/lookout runs

A build is complete before anything points at it, and never changed afterwards (its hook pack
checks exact mtimes and sizes). The switch is one rename(2) of a symlink over `current`: a hook
opens its script through it and sees the old runtime or the new one, whole. Each hook script and
the command's entry name their own runtime's directory (written into them here), so a process
that started with one runtime imports from it to its end, whatever an install does meanwhile; it
also holds that directory open, which is how an install sees which runtimes are in use. An
install removes the runtimes that are neither current nor previous and that no process uses.

Before this layout the code lived in lookout/, hooks/ and bin/ directly (the "legacy" runtime):
the first switch turns each entry into a link, one atomic rename each, and leaves lookout/ in
place for the processes that run it; a later install removes it. An older install.py run over
this layout writes its package into lookout/ (which nothing here uses) before it writes its hook
scripts, each through the links and atomically, so its hooks run its own package whole too."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from lookout import store, version, words
from lookout.errors import LookoutError
from lookout.install import files
from lookout.install.files import NOTHING_CHANGED
from lookout.paths import tilde
from lookout.platform.base import last_line

RUNTIMES = "runtimes"
CURRENT = "current"
PREVIOUS = "previous"
MANIFEST = "runtime.json"
MANIFEST_FORMAT = words.FORMATS["runtime.json"]  # its own shape
LEGACY = "lookout"  # the package directory of the layout before runtimes/ (and of older installers)
LOCK = "install.lock"
ENTRY = "bin/lookout"

# The line every hook script starts from (its checkout or a copy holding lookout/ beside hooks/);
# a runtime's copy names that runtime instead.
SHIM_PATH_LINE = 'sys.path.insert(0, __file__.rpartition("/")[0].rpartition("/")[0])'

_ENTRY_TEXT = """\
# The `lookout` command of runtime {name} (run through ~/.local/bin/lookout and bin/lookout).
import os
import sys

RUNTIME = {path!r}
sys.path.insert(0, RUNTIME)
# Held open while the command runs: install.py keeps a runtime that a process still uses.
HELD = os.open(RUNTIME, os.O_RDONLY)

from lookout.commands.main import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
"""

WRITE_PACK = (
    "import sys; sys.path.insert(0, sys.argv[1]); from lookout import hookpack; hookpack.write()"
)


class Manifest(TypedDict):
    format: int  # MANIFEST_FORMAT
    lookout: str  # the code's version (lookout.version)
    name: str
    commit: str | None  # the checkout's git commit, when it is one
    source: str  # the checkout it was built from
    python: str  # the interpreter its bytecode and hook pack were made by
    formats: dict[str, int]  # words.FORMATS: the state files' format versions this code writes
    files: dict[str, str]  # relative path -> sha256 of what is on disk


@dataclass
class Outcome:
    """What install_runtime did."""

    runtime: Path
    built: bool  # a new directory was made
    switched: bool  # `current` now names another runtime than before
    before: str | None  # the name `current` had (LEGACY_NAME for the old layout, None: none)
    was: str | None = None  # the version `current` ran (its manifest's; None: none or unknown)
    # Older runtimes left because a process runs them: (name, "lookout serve (pid 12)").
    kept: list[tuple[str, str]] = field(default_factory=list)


LEGACY_NAME = "(the runtime before runtimes/)"
# The layout before runtimes/ has no manifest, but every lookout that wrote it was 0.1.0 (the
# version was first raised with runtimes/ in place, issue 39): what it ran is known.
LEGACY_VERSION = "0.1.0"
CHANGELOG = "CHANGELOG.md"  # shipped in each runtime: what `upgraded A -> B` points at


def runtimes_dir(home: Path) -> Path:
    return home / RUNTIMES


# -- what a runtime holds --------------------------------------------------------------------


def _shipped(directory: Path) -> set[Path]:
    """What the runtime holds of a tree: its modules, the dashboard's page (HTML, CSS, JS and an
    icon that lookout/web reads at run time; there is no build step) and the plugins an agent
    module writes out (lookout/agents/*.js)."""
    if not directory.is_dir():
        return set()
    found = {p.relative_to(directory) for p in directory.rglob("*.py")}
    static = directory / "web" / "static"
    if static.is_dir():
        found |= {p.relative_to(directory) for p in static.iterdir() if p.is_file()}
    found |= {p.relative_to(directory) for p in directory.glob("agents/*.js") if p.is_file()}
    return found


def sources(checkout: Path) -> dict[str, bytes]:
    """The checkout's files a runtime is built from, by path relative to the runtime."""
    found: dict[str, bytes] = {}
    for sub in ("lookout", "hooks"):
        for rel in sorted(_shipped(checkout / sub)):
            found[f"{sub}/{rel}"] = (checkout / sub / rel).read_bytes()
    if (checkout / CHANGELOG).is_file():
        found[CHANGELOG] = (checkout / CHANGELOG).read_bytes()
    if not any(rel.startswith("hooks/") for rel in found):
        raise LookoutError(f"{tilde(checkout)} holds no hooks/: not a lookout checkout")
    return found


def name_for(sources: dict[str, bytes], number: str) -> str:
    digest = hashlib.sha256()
    for rel in sorted(sources):
        digest.update(rel.encode("utf-8") + b"\0" + hashlib.sha256(sources[rel]).digest())
    return f"{number}-{digest.hexdigest()[:12]}"


def stamped(rel: str, data: bytes, runtime: Path) -> bytes:
    """A hook script as a runtime holds it: its package is this runtime's, by absolute path."""
    if not rel.startswith("hooks/") or not rel.endswith(".py"):
        return data
    text = data.decode("utf-8")
    if text.count(SHIM_PATH_LINE) != 1:
        raise LookoutError(
            f"{rel}: expected the line {SHIM_PATH_LINE!r} once",
            hint=f"a hook script must find its package that way; {NOTHING_CHANGED}",
        )
    here = str(runtime)
    pinned = (
        f"sys.path.insert(0, {here!r})  # this runtime's package (install.py wrote the path)\n"
        "import posix  # built in\n"
        "\n"
        "# Held open while the hook runs: install.py keeps a runtime that a process still uses.\n"
        f"posix.open({here!r}, posix.O_RDONLY)"
    )
    return text.replace(SHIM_PATH_LINE, pinned).encode("utf-8")


def entry_text(runtime: Path) -> str:
    return _ENTRY_TEXT.format(name=runtime.name, path=str(runtime))


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_manifest(runtime: Path) -> Manifest | None:
    try:
        value = json.loads((runtime / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(value, dict) or not isinstance(value.get("files"), dict):
        return None
    return value  # type: ignore[return-value]


def _on_disk(runtime: Path) -> set[str]:
    found = {f"lookout/{p}" for p in _shipped(runtime / "lookout")}
    found |= {f"hooks/{p}" for p in _shipped(runtime / "hooks")}
    for rel in (ENTRY, CHANGELOG):
        if (runtime / rel).is_file():
            found.add(rel)
    return found


def intact(runtime: Path) -> bool:
    """Complete and unchanged since it was built: exactly the files runtime.json lists, each
    with its bytes (an older install.py writes through the links into the current one)."""
    manifest = read_manifest(runtime)
    if manifest is None or manifest.get("format") != MANIFEST_FORMAT:
        return False
    listed = manifest["files"]
    try:
        return _on_disk(runtime) == set(listed) and all(
            _sha(runtime / rel) == sha for rel, sha in listed.items()
        )
    except OSError:
        return False


# -- the links ---------------------------------------------------------------------------------


def _target(link: Path) -> str | None:
    try:
        return os.readlink(link)
    except OSError:
        return None


def current(home: Path) -> Path | None:
    """The runtime `current` names, when it names one in runtimes/."""
    return _named(home, CURRENT)


def previous(home: Path) -> Path | None:
    return _named(home, PREVIOUS)


def _named(home: Path, link: str) -> Path | None:
    target = _target(home / link)
    if target is None:
        return None
    name = Path(target).name
    if target != f"{RUNTIMES}/{name}" or name.startswith("."):
        return None
    path = runtimes_dir(home) / name
    return path if path.is_dir() else None


def code_root(home: Path) -> Path:
    """Where the installed `lookout` package lives: the current runtime, or (the layout before
    runtimes/, a checkout-like copy) home itself."""
    return current(home) or home


def _link(path: Path, target: str) -> bool:
    """Make `path` a symlink to `target` in one step (rename(2) over whatever is there: a
    file, or another link). False when it already was."""
    if _target(path) == target:
        return False
    tmp = path.with_name(f".{path.name}.{os.getpid()}.new")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    os.symlink(target, tmp)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return True


def legacy_live(home: Path) -> bool:
    """Whether hooks or the command may run the package in lookout/: an entry that is a file
    (the layout before runtimes/, or an older install.py wrote its scripts over the links' ends),
    or a current runtime an older install.py changed."""
    entries = [*(home / "hooks").glob("*.py"), home / ENTRY]
    if any(p.is_file() and not p.is_symlink() for p in entries):
        return True
    now = current(home)
    return now is not None and not intact(now)


def switch(home: Path, runtime: Path) -> bool:
    """Point `current` at `runtime` (the one it named becomes `previous`), then make sure every
    entry is a link through `current`. True when `current` changed."""
    before = current(home)
    changed = before != runtime
    if changed and before is not None:
        _link(home / PREVIOUS, f"{RUNTIMES}/{before.name}")
    if changed:
        _link(home / CURRENT, f"{RUNTIMES}/{runtime.name}")
    files.make_dirs(home / "hooks")
    files.make_dirs(home / "bin")
    scripts = {p.name for p in (runtime / "hooks").glob("*.py")}
    for script in sorted(scripts):
        _link(home / "hooks" / script, f"../{CURRENT}/hooks/{script}")
    _link(home / ENTRY, f"../{CURRENT}/{ENTRY}")
    # A script the new version no longer has: its entry would fail to open (an older version's
    # settings that still name it are rewritten by the same install).
    for stale in (home / "hooks").glob("*.py"):
        if stale.name not in scripts:
            stale.unlink()
    return changed


# -- building ------------------------------------------------------------------------------------


def _git_commit(checkout: Path) -> str | None:
    if not (checkout / ".git").exists():
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(checkout), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and len(commit) == 40 else None


def compile_code(runtime: Path, python: str) -> None:
    """Bytecode and the hook pack, made by the interpreter that runs the hooks: no hook ever
    compiles (or writes) on its path. Each file is replaced atomically, so this may run on the
    current runtime too (same sources: same results)."""
    done = subprocess.run(
        [python, "-I", "-m", "compileall", "-q", str(runtime / "lookout"), str(runtime / "hooks")],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise LookoutError(f"byte-compiling {tilde(runtime)} failed: {last_line(done)}")
    done = subprocess.run(
        [python, "-I", "-c", WRITE_PACK, str(runtime)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise LookoutError(f"precompiling the hooks in {tilde(runtime)} failed: {last_line(done)}")


def build(runtime: Path, code: dict[str, bytes], python: str, checkout: Path, number: str) -> None:
    """Write a complete runtime at its final path (the hook pack records its sources' paths);
    runtime.json, written last, is what makes it complete. Beside the package, the metadata
    its lookout.version reads (`number`, the checkout's version)."""
    files.make_dirs(runtime)
    listed: dict[str, str] = {}
    for rel, data in sorted(code.items()):
        path = runtime / rel
        files.make_dirs(path.parent)
        data = stamped(rel, data, runtime)
        path.write_bytes(data)
        path.chmod(0o644)
        listed[rel] = hashlib.sha256(data).hexdigest()
    entry = runtime / ENTRY
    files.make_dirs(entry.parent)
    entry.write_text(entry_text(runtime), encoding="utf-8")
    entry.chmod(0o644)
    listed[ENTRY] = _sha(entry)
    rel, data = version.metadata(number)
    files.make_dirs((runtime / rel).parent)
    (runtime / rel).write_bytes(data)
    compile_code(runtime, python)
    manifest: Manifest = {
        "format": MANIFEST_FORMAT,
        "lookout": number,
        "name": runtime.name,
        "commit": _git_commit(checkout),
        "source": str(checkout),
        "python": python,
        "formats": dict(words.FORMATS),
        "files": listed,
    }
    text = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    files.atomic_write(runtime / MANIFEST, text.encode("utf-8"), 0o644)


def _remove(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        path.unlink()
    else:
        shutil.rmtree(path)


def _free_name(home: Path, name: str) -> Path:
    """runtimes/<name>, or <name>.2, .3 ... when a runtime of that name is in use but not
    intact (an older install.py wrote into it): a build never writes where a hook may read."""
    keep = {p.name for p in (current(home), previous(home)) if p is not None}
    for n in range(1, 100):
        path = runtimes_dir(home) / (name if n == 1 else f"{name}.{n}")
        if not path.exists() or intact(path):
            return path
        if path.name not in keep:
            _remove(path)  # a build cut short, or a changed copy nothing points at
            return path
    raise LookoutError(f"too many runtimes named {name} in {tilde(runtimes_dir(home))}")


def install_runtime(home: Path, python: str, checkout: Path) -> Outcome:
    """Build the checkout's runtime beside the running one (or find it built) and switch to it."""
    code = sources(checkout)
    number = version.of(str(checkout))
    was_current = current(home)
    before = was_current.name if was_current is not None else None
    was = _version_of(was_current)
    if before is None and (home / LEGACY).is_dir():
        before, was = LEGACY_NAME, LEGACY_VERSION
    runtime = _free_name(home, name_for(code, number))
    built = not runtime.exists()
    files.make_dirs(runtimes_dir(home))
    if built:
        build(runtime, code, python, checkout, number)
    else:
        compile_code(runtime, python)  # another interpreter, or bytecode someone removed
    legacy = legacy_live(home)
    switched = switch(home, runtime)
    outcome = Outcome(runtime, built, switched, before, was)
    outcome.kept = prune(home, legacy)
    return outcome


def _version_of(runtime: Path | None) -> str | None:
    manifest = read_manifest(runtime) if runtime is not None else None
    found = manifest.get("lookout") if manifest is not None else None
    return found if isinstance(found, str) and found else None


# -- what runs, and what may go ----------------------------------------------------------------


@dataclass(frozen=True)
class User:
    pid: int
    what: str  # "lookout serve", "the notification sender", "a hook (stop.py)" ...
    runtime: str  # a runtime's name, or LEGACY_NAME
    long_lived: bool


def _proc() -> str:
    return os.environ.get("LOOKOUT_PROC_DIR", "/proc")


def _describe(argv: list[str], home: Path) -> tuple[str, bool]:
    entry = str(home / ENTRY)
    for i, arg in enumerate(argv):
        module = arg == "-m" and argv[i + 1 : i + 2] == ["lookout"]
        if arg == entry or arg.endswith("/" + ENTRY) or module:
            sub = next((a for a in argv[i + 1 + module :] if not a.startswith("-")), "")
            return f"lookout {sub}".strip(), True
        if arg.startswith(str(home / "hooks") + "/"):
            return f"a hook ({os.path.basename(arg)})", False
    code = " ".join(argv)
    if "sender.sender" in code or "notify.sender" in code:  # or an older install's
        return "the notification sender", True
    if "surfaces.telegram" in code or "remote.telegram" in code:  # or an older install's
        return "the Telegram poller", True
    if "surfaces.matrix" in code:
        return "the Matrix listener", True
    return "a lookout process", True


def _runtimes_of(pid_dir: str, argv: list[str], home: Path) -> set[str]:
    base = str(runtimes_dir(home)) + "/"
    found: set[str] = set()
    with contextlib.suppress(OSError):
        for fd in os.listdir(os.path.join(pid_dir, "fd")):
            with contextlib.suppress(OSError):
                target = os.readlink(os.path.join(pid_dir, "fd", fd))
                if target.startswith(base):
                    found.add(target[len(base) :].split("/", 1)[0])
    if found:
        return found
    for arg in argv:
        if arg.startswith(base):
            found.add(arg[len(base) :].split("/", 1)[0])
        elif arg == str(home):  # a sender or poller the layout before runtimes/ started
            found.add(LEGACY_NAME)
    if not found:
        # Started from an entry before it opened its runtime, or a process of the layout
        # before runtimes/ (its scripts and command ran the package in lookout/).
        found.add(LEGACY_NAME)
    return found


def _naming(home: Path, proc: str) -> Iterator[tuple[int, str, list[str]]]:
    """(pid, its /proc directory, argv) of this user's processes (but this one) whose command
    line names home."""
    try:
        entries = os.listdir(proc)
    except OSError:
        return
    uid, me, mark = os.getuid(), os.getpid(), str(home).encode()
    for entry in sorted((e for e in entries if e.isdigit()), key=int):
        if int(entry) == me:
            continue
        pid_dir = os.path.join(proc, entry)
        try:
            if os.stat(pid_dir).st_uid != uid:
                continue
            with open(os.path.join(pid_dir, "cmdline"), "rb") as fh:
                raw = fh.read()
        except OSError:
            continue
        if mark in raw:
            argv = [a.decode("utf-8", "replace") for a in raw.rstrip(b"\0").split(b"\0")]
            yield int(entry), pid_dir, argv


def users(home: Path) -> list[User]:
    """This user's processes running one of home's runtimes (Linux: /proc; elsewhere none are
    known). A hook or command holds its runtime open; the sender and the Telegram poller name
    it in their arguments."""
    found: list[User] = []
    for pid, pid_dir, argv in _naming(home, _proc()):
        what, long_lived = _describe(argv, home)
        for name in sorted(_runtimes_of(pid_dir, argv, home)):
            found.append(User(pid, what, name, long_lived))
    return found


def running(home: Path, proc: str = "/proc") -> list[tuple[int, int, str]]:
    """(pid, start time, what) of this user's long-lived lookout processes that run from home,
    for --purge to stop: its command (`lookout serve`, `lookout bridge`, ...), its venv's
    python running lookout, the sender or the Telegram poller started with its runtime. Read
    from the system's /proc (these get signals): never a process that only names a file there
    (an editor), a hook (the agent's own, over in a moment), this process or one it runs
    under (`lookout uninstall --purge` runs from the runtime it removes)."""
    from lookout import procs

    inside = str(home) + "/"
    mine: set[int] = set()
    pid = os.getpid()
    while pid > 1 and pid not in mine and (found := procs.stat(pid)) is not None:
        mine.add(pid)
        pid = found[2]
    out: list[tuple[int, int, str]] = []
    for pid, _, argv in _naming(home, proc):
        what, long_lived = _describe(argv, home)
        python = os.path.basename(argv[0]).startswith("python")
        boot = "-c" in argv and "from lookout." in " ".join(argv)
        ours = argv[0].startswith(inside) or (python and (what.startswith("lookout") or boot))
        if not long_lived or not ours or pid in mine:
            continue
        found = procs.stat(pid)
        if found is not None and found[1] not in ("Z", "X"):
            out.append((pid, found[3], what))
    return out


def stop(targets: list[tuple[int, int, str]], grace_s: float = 3.0) -> dict[int, str]:
    """SIGTERM each process, wait up to grace_s for them to exit, SIGKILL what is left: pid ->
    "stopped", "killed" or "gone" (it had exited already). A pid whose start time changed is
    another process now: never signalled."""
    import signal
    import time

    from lookout import procs

    said: dict[int, str] = {}

    def send(pid: int, start: int, sig: int) -> bool:
        if not procs.alive(pid, start):
            return False
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return False
        return True

    for pid, start, _ in targets:
        said[pid] = "stopped" if send(pid, start, signal.SIGTERM) else "gone"
    deadline = time.monotonic() + grace_s
    left = [(pid, start) for pid, start, _ in targets if said[pid] == "stopped"]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [(pid, start) for pid, start in left if procs.alive(pid, start)]
    for pid, start in left:
        if send(pid, start, signal.SIGKILL):
            said[pid] = "killed"
    return said


def prune(home: Path, legacy_in_use: bool) -> list[tuple[str, str]]:
    """Remove the runtimes that are neither current nor previous and that no process runs, and
    the package of the layout before runtimes/ once nothing can run it. Returns what was kept
    because a process runs it, and which process."""
    keep = {p.name for p in (current(home), previous(home)) if p is not None}
    running: dict[str, list[User]] = {}
    for user in users(home):
        running.setdefault(user.runtime, []).append(user)
    kept: list[tuple[str, str]] = []

    def who(name: str) -> str:
        user = running[name][0]
        return f"{user.what} (pid {user.pid})"

    for path in sorted(runtimes_dir(home).iterdir()) if runtimes_dir(home).is_dir() else []:
        if path.name in keep:
            continue
        if path.name in running:
            kept.append((path.name, who(path.name)))
            continue
        _remove(path)
    legacy = home / LEGACY
    if legacy.is_dir() and not legacy.is_symlink():
        if LEGACY_NAME in running and not legacy_in_use:
            kept.append((LEGACY_NAME, who(LEGACY_NAME)))
        elif not legacy_in_use:
            shutil.rmtree(legacy)
            with contextlib.suppress(FileNotFoundError):
                shutil.rmtree(home / "hooks" / "__pycache__")
    return kept


@contextlib.contextmanager
def locked(home: Path) -> Iterator[None]:
    """One install at a time on a runtime home (a second one says so and changes nothing)."""
    files.make_dirs(home)
    fd = store.try_lock(str(home / LOCK))
    if fd is None:
        raise LookoutError(
            f"another install.py is changing {tilde(home)}",
            hint=f"run it again when that one has finished; {NOTHING_CHANGED}",
        )
    try:
        yield
    finally:
        os.close(fd)


def describe(manifest: Manifest | None, runtime: Path | None) -> str:
    """`0.1.0 (commit 69338df)` or `0.1.0 (runtimes/0.1.0-ab12...)`: for messages."""
    if manifest is None:
        return "an unknown version" if runtime is None else runtime.name
    commit = manifest.get("commit")
    where = f"commit {commit[:7]}" if isinstance(commit, str) else f"{RUNTIMES}/{manifest['name']}"
    return f"{manifest.get('lookout', '?')} ({where})"


def newer_formats(manifest: Manifest) -> list[str]:
    """The state files the installed runtime writes in a format this code does not read."""
    theirs: Any = manifest.get("formats")
    if not isinstance(theirs, dict):
        return []
    return sorted(
        f"{kind} (format {v}; this version reads {words.FORMATS[kind]})"
        for kind, v in theirs.items()
        if kind in words.FORMATS and isinstance(v, int) and v > words.FORMATS[kind]
    )
