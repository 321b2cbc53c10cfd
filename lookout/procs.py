"""The agent's process: which one a hook runs under (hook side: a few reads of
/proc/<pid>/stat, nothing imported beyond the built-in posix) and whether it still runs
(readers). A pid is kept with its start time, so a pid the system reused for another process
never passes for the agent.

Linux /proc; elsewhere the start time is unknown and only kill(pid, 0) tells."""

from __future__ import annotations

import posix  # built in: `os` costs a hook ~1 ms (bench/hook_latency.py --phases)
import time  # built in, loaded by every hook already (words)

PROC = "/proc"
# Agents whose hooks run as children of their own process, with at most a shell in between,
# checked with the real clients (docs/agents.md): Gemini CLI runs `bash -c <command>`, Codex
# `sh -c`, OpenCode's plugin spawns the interpreter itself. Claude Code names itself
# (CLAUDE_PID). Copilot CLI and Cursor are unverified: their sessions keep no pid. Each plug-in
# says so (lookout.agents.<name>.CHILD_HOOKS); this is the hook path's copy (a hook of Codex runs
# Claude Code's scripts, which never load its module), kept equal by tests/agents/test_registry.
CHILD_HOOKS = frozenset({"codex", "gemini", "opencode"})
# What a client starts a hook command with: never the agent itself.
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox", "fish"})
_DEPTH = 3
# Agents that run a notify program of lookout's (runner.run_notify) as their own child.
NOTIFY_AGENTS = frozenset({"codex"})


def stat(pid: int) -> tuple[str, str, int, int] | None:
    """(name, state, parent pid, start time in clock ticks after boot) of a process; None when
    /proc has no such process (or cannot say)."""
    try:
        fd = posix.open(f"{PROC}/{pid}/stat", posix.O_RDONLY | posix.O_CLOEXEC)
        try:
            data = posix.read(fd, 4096)  # one line, given whole by one read (no io: 3x faster)
        finally:
            posix.close(fd)
    except OSError:
        return None
    # The name is in parentheses and may hold spaces or parentheses itself: split after the last.
    close = data.rfind(b")")
    fields = data[close + 2 :].split()
    try:
        name = data[data.find(b"(") + 1 : close].decode("utf-8", "replace")
        return name, fields[0].decode("ascii", "replace"), int(fields[1]), int(fields[19])
    except (IndexError, ValueError):
        return None


def cmdline(pid: int) -> list[str] | None:
    """The argv of a process from /proc (what it shows there: a process may rewrite it), None
    when /proc has no such process or hides it (a kernel thread has none: [])."""
    try:
        fd = posix.open(f"{PROC}/{pid}/cmdline", posix.O_RDONLY | posix.O_CLOEXEC)
        try:
            data = b""
            while chunk := posix.read(fd, 65536):
                data += chunk
        finally:
            posix.close(fd)
    except OSError:
        return None
    return [a.decode("utf-8", "replace") for a in data.rstrip(b"\0").split(b"\0")] if data else []


# A client kills a hook past its timeout (hookspec.TIMEOUT_S): a start further back than this is
# a clock read wrong (a kernel whose start times leave out a suspend), and not believed.
STARTED_MAX_MS = 10_000


def _wall_minus_boot() -> int:
    """The wall clock less the boot clock (what /proc counts in), in ns: processes started in one
    tick get one time stamp. The wall clock is read between two reads of the boot clock, and the
    tightest of three brackets is taken: a preemption between two reads (a busy machine) would
    otherwise put every stamp that much early."""
    best: tuple[int, int] | None = None
    for _ in range(3):
        before = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
        wall = time.time_ns()
        after = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
        if best is None or after - before < best[0]:
            best = (after - before, wall - (before + after) // 2)
        if after - before < 20_000:  # 20 us: close enough
            break
    return best[1] if best is not None else 0


def started_ms(now_ms: int) -> int:
    """When this process was started, in wall-clock ms (rounded down to a clock tick, 10 ms):
    for a hook, when the client fired it (the shell it runs under execs the interpreter),
    however long a busy machine kept the interpreter from coming up; records are ordered by it.
    `now_ms` (the wall clock read just before) where /proc cannot say."""
    found = stat(posix.getpid())
    if found is None:
        return now_ms  # no /proc: not Linux
    try:
        hz = posix.sysconf("SC_CLK_TCK")
        offset_ns = _wall_minus_boot()
        started = (offset_ns + found[3] * 1_000_000_000 // hz) // 1_000_000
    except (AttributeError, ValueError, OSError, ZeroDivisionError):
        return now_ms
    return started if 0 <= now_ms - started <= STARTED_MAX_MS else now_ms


def of_hook(agent: str, claude_pid: int | None) -> tuple[int, int | None]:
    """(pid, start time) of the agent process a hook runs under, (0, None) when unknown.
    Claude Code says which (CLAUDE_PID); for CHILD_HOOKS it is the hook's parent, past shells."""
    if agent == "claude":
        if claude_pid is None:
            return 0, None
        found = stat(claude_pid)
        return claude_pid, found[3] if found else None
    if agent not in CHILD_HOOKS:
        return 0, None
    pid = posix.getppid()
    for _ in range(_DEPTH):
        if pid <= 1:
            return 0, None  # orphaned (the agent is gone already): init is nobody's agent
        found = stat(pid)
        if found is None:
            return 0, None
        name, _, parent, start = found
        if name not in SHELLS:
            return pid, start
        pid = parent
    return 0, None


def of_notify(agent: str) -> tuple[int, int | None]:
    """(pid, start time) of the agent that started this notify program (Codex's legacy `notify`),
    (0, None) when its parent is not that agent: the agent does not wait for its notify program,
    which may outlive it (its parent then is whoever adopted it). The agent is the parent only
    when that process is named after it (`codex`; a native build may add `-<target>`)."""
    if agent not in NOTIFY_AGENTS:
        return 0, None
    pid = posix.getppid()
    found = stat(pid) if pid > 1 else None
    if found is None or not (found[0] == agent or found[0].startswith(agent + "-")):
        return 0, None
    return pid, found[3]


def alive(pid: object, start: object = None) -> bool | None:
    """True/False when it can be known, None when no pid was recorded. A pid whose start time
    differs from the recorded one is another process now: the agent's is gone."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    found = stat(pid)
    if found is not None:
        if found[1] in ("Z", "X"):
            return False  # killed, not yet reaped
        return not (isinstance(start, int) and found[3] != start)
    try:
        posix.stat(f"{PROC}/self/stat")
    except OSError:
        pass  # no /proc here: ask the kernel
    else:
        return False  # /proc answers for this process but not that one: it is gone
    try:
        posix.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except OSError:
        return None
    return True
