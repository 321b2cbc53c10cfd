"""Typing into a session's own tmux pane: its exact pane as jump finds it (lookout.jump.locate),
the text as literal keys (`send-keys -l`, no shell, no key names), then Enter once the pane shows
it. Every call names the server (-S) and the pane (-t %N); bounded in time."""

from __future__ import annotations

import os
import time

from lookout.errors import LookoutError
from lookout.jump import locate, tmux
from lookout.jump.tmux import Pane
from lookout.steer.shapes import SteerError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

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


def runs_in(where: Pane, snapshot: Mapping[str, object]) -> bool:
    """Whether the session's agent process is the pane's process or one of its descendants (a
    pane can outlive the agent and run a shell or another program). True when no pid was
    recorded (the pane the hooks recorded is all there is); False when one was and it cannot be
    followed to the pane's process (gone, no way to ask, tmux names no pane pid): fail closed.
    The parents come from the platform (/proc on Linux, ps on macOS)."""
    from lookout.platform import current

    parent = current.get().parent
    pid = snapshot.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return True
    text = _run(where, "display-message", "-p", "-t", where.pane, "#{pane_pid}").strip()
    if not text.isdigit():
        return False
    top = int(text)
    for _ in range(64):
        if pid == top:
            return True
        found = parent(pid)
        if found is None or found <= 1:
            return False
        pid = found
    return False
