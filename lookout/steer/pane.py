"""Typing into a session's own tmux pane: its exact pane as jump finds it (lookout.jump.locate),
the text as literal keys (`send-keys -l`, no shell, no key names), then Enter once the pane shows
it. Every call names the server (-S) and the pane (-t %N); bounded in time."""

from __future__ import annotations

import os
import time

from lookout.errors import LookoutError
from lookout.jump import locate, tmux
from lookout.jump.tmux import Pane
from lookout.steer.agents import INTERPRETERS
from lookout.steer.shapes import SteerError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from lookout.platform.base import Platform
    from lookout.steer.agents import Keys

# One client message to a tmux server holds at most 16 KB (`command too long` above): a longer
# text goes through a buffer of its own (load-buffer from stdin, then paste-buffer), never in
# pieces: the agent would take each piece for a paste of its own.
SEND_KEYS_MAX_BYTES = 12_000
ECHO_WAIT_S = 2.0
POLL_S = 0.02
SETTLE_S = 0.2


def find(snapshot: Mapping[str, object]) -> Pane | None:
    """The session's pane as its tmux server knows it now, or None (no pane recorded, the
    server or the pane gone)."""
    return locate.locate_tmux(snapshot)


def recorded(snapshot: Mapping[str, object]) -> bool:
    place = locate.where(snapshot)
    return bool(place.get("tmux_socket") and place.get("tmux_pane"))


def shared(state_dir: str, snapshot: Mapping[str, object]) -> tuple[str, str] | None:
    """(why, hint) when the session has no pane of its own (its process serves several sessions:
    locate.shared), else None."""
    return locate.shared(state_dir, snapshot)


def unsafe(snapshot: Mapping[str, object]) -> str | None:
    """Why the session's recorded tmux server may not be typed into (not this user's own
    socket: locate.untrusted), or None."""
    return locate.untrusted(snapshot)


def _run(pane: Pane, *args: str) -> str:
    """tmux's answer; every failure a SteerError(failed), which say and interrupt record (the
    pane closed between the text and Enter, a server that did not answer in time)."""
    try:
        return tmux.run(pane.socket, *args)
    except tmux.ServerGone:
        raise SteerError("failed", f"the tmux server of pane {pane.pane} exited") from None
    except LookoutError as exc:
        raise SteerError(
            "failed",
            f"pane {pane.pane}: {exc}",
            hint=exc.hint or "look at the pane: lookout jump (what was typed may be in its box)",
        ) from None


def screen(pane: Pane, styled: bool = False) -> str:
    """What the pane shows now: its visible lines, no escapes; `styled`: with the escapes that
    draw them (`-e`: what is dim, what is the cursor)."""
    if styled:
        return _run(pane, "capture-pane", "-p", "-e", "-t", pane.pane)
    return _run(pane, "capture-pane", "-p", "-t", pane.pane)


def escaped_arg(arg: str) -> str:
    """`arg` as tmux's command parser gives it back: it ends a command at an argument's trailing
    `;` (`a;` would reach the pane as `a`), and reads a trailing `\\;` as a plain `;`."""
    return arg[:-1] + "\\;" if arg.endswith(";") else arg


def type_text(pane: Pane, text: str) -> None:
    """The text as literal keys, nothing else (a newline is the key C-j), in one burst."""
    if len(text.encode("utf-8")) <= SEND_KEYS_MAX_BYTES:
        _run(pane, "send-keys", "-l", "-t", pane.pane, "--", escaped_arg(text))
        return
    import secrets
    import subprocess

    # A name of this call's own: the dashboard and the Telegram poller steer from threads of one
    # process, and the session lock does not cover another session on the same tmux server.
    buffer = f"lookout-steer-{os.getpid()}-{secrets.token_hex(6)}"
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    try:
        done = subprocess.run(
            ["tmux", "-S", pane.socket, "load-buffer", "-b", buffer, "-"],
            input=text.encode("utf-8"),
            capture_output=True,
            timeout=tmux.TIMEOUT_S,
            env=env,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SteerError("failed", f"tmux load-buffer failed: {exc}") from None
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip()
        raise SteerError("failed", f"tmux load-buffer failed: {err or done.returncode}")
    # -r: newlines as they are (not turned into Enter); -d: the buffer goes with the paste; no
    # -p: no bracketed-paste marks, the keys arrive as if typed.
    _run(pane, "paste-buffer", "-d", "-r", "-b", buffer, "-t", pane.pane)


def press(pane: Pane, key: str) -> None:
    """One named key (Enter, Escape): never text."""
    _run(pane, "send-keys", "-t", pane.pane, key)


def tail(text: str) -> str:
    """A few characters the pane shows once the text is in (its last line's end)."""
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    return lines[-1][-6:] if lines else ""


def wait_echo(pane: Pane, text: str, before: str, check: Callable[[str], None]) -> str:
    """Wait until the pane shows the typed text: its tail more often than before, or else a
    screen that changed and then held still for SETTLE_S (a long paste shows collapsed); `check`
    may refuse a screen on the way. Returns the screen."""
    needle = tail(text)
    seen = before.count(needle) if needle else 0
    deadline = time.monotonic() + ECHO_WAIT_S
    last, still_since = before, time.monotonic()
    while True:
        now = screen(pane)
        check(now)
        if needle and now.count(needle) > seen:
            return now
        if now != last:
            last, still_since = now, time.monotonic()
        elif now != before and time.monotonic() - still_since >= SETTLE_S:
            return now
        if time.monotonic() > deadline:
            raise SteerError(
                "failed",
                f"typed into pane {pane.pane}, but it did not show the text within"
                f" {ECHO_WAIT_S:g} s: Enter was not pressed",
                hint="look at the pane: lookout jump (the text may be in its input box)",
            )
        time.sleep(POLL_S)


def not_agent(where: Pane, snapshot: Mapping[str, object], keys: Keys) -> str | None:
    """Why lookout cannot tell that the pane runs the session's agent now (a pane outlives its
    agent: a shell, or another program, may run there), or None when it can. With a recorded pid,
    that process (the same one: its start time matches, so not a reused pid) is the pane's own
    process or a descendant of it; without one (Codex's `notify`, an agent whose process is not
    known), the pane runs the agent's program (Keys.processes) now. Anything lookout cannot ask
    (no /proc, no ps, tmux names no process) fails closed. The processes come from the platform
    (/proc on Linux, ps on macOS)."""
    from lookout.platform import current

    system = current.get()
    pid = snapshot.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return _program_shown(where, keys, system)
    gone = (
        f"its tmux pane does not run its {keys.title} process any more (or lookout cannot tell"
        " that it does)"
    )
    if system.alive(pid, snapshot.get("pid_start"), snapshot.get("started_ms")) is not True:
        return gone  # gone, or its pid is another process's now
    text = _run(where, "display-message", "-p", "-t", where.pane, "#{pane_pid}").strip()
    if not text.isdigit():
        return gone
    top = int(text)
    for _ in range(64):
        if pid == top:
            return None
        found = system.parent(pid)
        if found is None or found <= 1:
            return gone
        pid = found
    return gone


def _program_shown(where: Pane, keys: Keys, system: Platform) -> str | None:
    """Why the pane (of a session with no recorded pid) is not shown to run the agent's program:
    tmux's name for the pane's foreground process is one of Keys.processes, or an interpreter
    (node) with the agent's script in the pane's processes (`node .../bin/codex.js`)."""
    fmt = "#{pane_current_command}\x1f#{pane_pid}"
    command, _, top = (
        _run(where, "display-message", "-p", "-t", where.pane, fmt).strip().partition("\x1f")
    )
    if command in keys.processes:
        return None
    if command in INTERPRETERS and top.isdigit() and _runs_script(int(top), keys, system):
        return None
    return (
        f"lookout cannot tell that its tmux pane still runs {keys.title}: no process of it was"
        f" recorded, and the pane runs {command or 'nothing tmux can name'!r} now"
    )


def _runs_script(top: int, keys: Keys, system: Platform) -> bool:
    """Whether a process in the pane's tree (its process and descendants, a few levels down)
    is the agent: its program, or an interpreter running a script named after it."""
    level = [top]
    for _ in range(5):
        below: list[int] = []
        for pid in level:
            if _names_agent(system.cmdline(pid) or [], keys):
                return True
            below += [child for child, _ in system.children(pid)]
        level = below[:32]
    return False


_SCRIPTS = (".js", ".mjs", ".cjs", ".ts")


def _names_agent(argv: list[str], keys: Keys) -> bool:
    program = os.path.basename(argv[0]) if argv else ""
    if program in keys.processes:
        return True
    if program not in INTERPRETERS:
        return False
    script = os.path.basename(next((a for a in argv[1:] if not a.startswith("-")), ""))
    return (script.rsplit(".", 1)[0] if script.endswith(_SCRIPTS) else script) in keys.processes
