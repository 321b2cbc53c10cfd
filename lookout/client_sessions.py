"""Claude Code's own session registry, `<config dir>/sessions/<pid>.json` (the config dir is
CLAUDE_CONFIG_DIR, else ~/.claude): what the client says about itself (busy / waiting / idle,
the display name, the pid, the tmux pane). See docs/signals.md and
../shared/reference/claude-session-registry.md.

Read only by readers, through lookout.reconcile; never by a hook. Undocumented by Anthropic: every
field is optional, and a file that is missing, partial, of another format or of a process that
is gone (or a reused pid) is no signal at all: lookout falls back to its other signals."""

from __future__ import annotations

import os
import stat

from lookout import _jsonfast, procs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypedDict

    class Entry(TypedDict):
        """One believable registry file, in lookout's words."""

        session_id: str
        pid: int
        status: str | None  # busy | waiting | idle, or None when the file says nothing known
        waiting_for: str | None  # "permission prompt", "input needed", ... while waiting
        status_ms: int | None  # statusUpdatedAt
        name: str | None
        name_source: str | None
        cwd: str | None
        tmux_pane: str | None  # the %N of `tmux`
        version: str | None
        entrypoint: str | None
        path: str
        # Its inbox (cross-session messaging): the socket path, protocol and features, as written
        # (lookout.steer.inbox checks them before use).
        socket: str | None
        peer_protocol: int | None
        peer_features: list[str]


STATUSES = frozenset({"busy", "waiting", "idle"})
# The client version this reader was checked against (docs/signals.md); older clients write no
# registry, newer ones may change it: a file is read only for the fields this module knows.
CHECKED_VERSION = "2.1.332"
MAX_BYTES = 64 * 1024  # a registry file is ~1 KB: anything larger is not one


def directory(env: dict[str, str] | None = None) -> str:
    """Where the client keeps the registry (it follows CLAUDE_CONFIG_DIR like settings.json)."""
    env = dict(os.environ) if env is None else env
    base = env.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return os.path.join(base, "sessions")


def read_file(path: str, limit: int, private: bool = False) -> bytes | None:
    """The bytes of the regular file at `path`, or None: never follows a FIFO, never reads a file
    larger than `limit`. `private` (a key file): only a file of ours that no one else may read or
    write, never behind a link."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, (flags | os.O_NOFOLLOW) if private else flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        if private and (st.st_uid != os.geteuid() or st.st_mode & 0o077):
            return None
        return os.read(fd, limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


def _read(path: str) -> object:
    """The parsed registry file, or None."""
    data = read_file(path, MAX_BYTES)
    if data is None:
        return None
    try:
        return _jsonfast.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None


def proc_start(pid: int) -> str | None:
    """Field 22 of /proc/<pid>/stat (start time in clock ticks since boot), as the client
    records it in `procStart`; None where it cannot be read (not Linux, gone)."""
    found = procs.stat(pid)
    return str(found[3]) if found is not None else None


def _host_ids() -> set[str]:
    """This machine's ids as `pidDomain` may carry them: 2.1.332 writes /etc/machine-id (seen on
    Linux, though the reference called it the boot id); the boot id is accepted too. Dashes and
    case do not count."""
    ids = set()
    for path in ("/etc/machine-id", "/var/lib/dbus/machine-id", "/proc/sys/kernel/random/boot_id"):
        try:
            with open(path) as f:
                text = f.read().strip().replace("-", "").lower()
        except OSError:
            continue
        if text:
            ids.add(text)
    return ids


def _pid_ns() -> str | None:
    try:
        return os.readlink("/proc/self/ns/pid")  # "pid:[4026531836]"
    except OSError:
        return None


def same_domain(pid_domain: object) -> bool:
    """Whether `pidDomain` ("linux:<machine id>:pid:[<ns inode>]") names this machine and this
    pid namespace: only then does its pid mean a process we can look at (a home directory shared
    with another machine holds its files too). Unknown shapes pass (procStart still guards)."""
    if not isinstance(pid_domain, str) or not pid_domain.startswith("linux:"):
        return True
    host, _, namespace = pid_domain[len("linux:") :].partition(":")
    mine = _host_ids()
    if mine and host and host.replace("-", "").lower() not in mine:
        return False
    ns = _pid_ns()
    return not (ns and namespace and namespace != ns)


def believe(raw: object, path: str) -> Entry | None:
    """The entry a file describes, if it is about a live process that is really the one that
    wrote it; None for anything else (no signal)."""
    if not isinstance(raw, dict):
        return None
    writer = _live_writer(raw, path)
    if writer is None:
        return None
    status = raw.get("status")
    if status is not None and status not in STATUSES:
        return None  # another format (a newer client's word): the whole file is no signal
    return _entry(raw, *writer, path)


def _live_writer(raw: dict[str, Any], path: str) -> tuple[int, str] | None:
    """(pid, session id) of the file's process when it runs and is the one that wrote the file:
    the file is named after its pid, on this machine and pid namespace, and the process started
    when the file says it did."""
    pid = raw.get("pid")
    session_id = raw.get("sessionId")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    if not isinstance(session_id, str) or not session_id or len(session_id) > 200:
        return None
    if os.path.basename(path) != f"{pid}.json":
        return None  # someone else's file, or a copy
    if not same_domain(raw.get("pidDomain")):
        return None
    recorded = raw.get("procStart")
    now = proc_start(pid)
    if now is None:
        return None  # the process is gone (SIGKILL leaves its file behind)
    if recorded is not None and str(recorded) != now:
        return None  # the pid was reused by another process
    return pid, session_id


def _entry(raw: dict[str, Any], pid: int, session_id: str, path: str) -> Entry:
    """The file's fields this version reads, each of its type, text cleaned and bounded."""
    status = raw.get("status")
    status_ms = raw.get("statusUpdatedAt")
    tmux = raw.get("tmux")
    pane = tmux.rpartition(".")[2] if isinstance(tmux, str) else ""
    protocol, features = raw.get("peerProtocol"), raw.get("peerFeatures")
    return {
        "session_id": session_id,
        "pid": pid,
        "status": status if isinstance(status, str) else None,
        "waiting_for": _text(raw.get("waitingFor"), 80),
        "status_ms": status_ms if isinstance(status_ms, int) and status_ms > 0 else None,
        "name": _text(raw.get("name")),
        "name_source": _text(raw.get("nameSource")),
        "cwd": _text(raw.get("cwd"), 4096),
        "tmux_pane": pane if pane.startswith("%") and pane[1:].isdigit() else None,
        "version": _text(raw.get("version"), 40),
        "entrypoint": _text(raw.get("entrypoint"), 40),
        "path": path,
        "socket": _text(raw.get("messagingSocketPath"), 4096),
        "peer_protocol": protocol
        if isinstance(protocol, int) and not isinstance(protocol, bool)
        else None,
        "peer_features": [f for f in features if isinstance(f, str)][:16]
        if isinstance(features, list)
        else [],
    }


def _text(value: object, limit: int = 200) -> str | None:
    if not isinstance(value, str) or not value or len(value) > limit:
        return None
    # Shown in a terminal and in alerts: no control characters from a file we did not write.
    return "".join(c for c in value if c.isprintable()) or None


def read(env: dict[str, str] | None = None) -> dict[str, Entry]:
    """Every believable entry, by session id (the newest status wins if a session has two)."""
    found: dict[str, Entry] = {}
    base = directory(env)
    try:
        names = os.listdir(base)
    except OSError:
        return found
    for name in names:
        if not name.endswith(".json") or name.startswith("."):
            continue
        path = os.path.join(base, name)
        entry = believe(_read(path), path)
        if entry is None:
            continue
        known = found.get(entry["session_id"])
        if known is None or (entry["status_ms"] or 0) > (known["status_ms"] or 0):
            found[entry["session_id"]] = entry
    return found


def _newer(version: str, than: str) -> bool:
    def parts(text: str) -> tuple[int, ...]:
        head = text.split("-")[0].split("+")[0]
        return tuple(int(p) if p.isdigit() else 0 for p in head.split("."))

    return parts(version) > parts(than)


def survey(env: dict[str, str] | None = None) -> dict[str, Any]:
    """For `doctor`: the directory, how many files it holds, how many are believed, and the
    files that could not be read or are of a format this version does not know."""
    base = directory(env)
    report: dict[str, Any] = {"directory": base, "files": 0, "live": 0, "notes": []}
    try:
        names = sorted(os.listdir(base))
    except FileNotFoundError:
        return report
    except OSError as exc:
        report["notes"].append(f"{base}: cannot be listed ({exc.strerror})")
        return report
    for name in names:
        if not name.endswith(".json") or name.startswith("."):
            continue
        report["files"] += 1
        path = os.path.join(base, name)
        raw = _read(path)
        if not isinstance(raw, dict):
            report["notes"].append(f"{name}: unreadable (not a JSON object): ignored")
            continue
        if not isinstance(raw.get("sessionId"), str) or not isinstance(raw.get("pid"), int):
            report["notes"].append(f"{name}: no sessionId/pid (another format?): ignored")
            continue
        status = raw.get("status")
        if status is not None and status not in STATUSES:
            report["notes"].append(
                f"{name}: status {str(status)[:40]!r} is unknown to this lookout "
                f"(checked with Claude Code {CHECKED_VERSION}): the file is ignored"
            )
        version = raw.get("version")
        if isinstance(version, str) and _newer(version, CHECKED_VERSION):
            report["notes"].append(
                f"{name}: written by Claude Code {version[:40]}, newer than {CHECKED_VERSION} "
                "(the version lookout was checked with): only the fields it knows are read"
            )
        if believe(raw, path) is not None:
            report["live"] += 1
    return report
