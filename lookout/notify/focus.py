"""A desktop alert's Focus action (issue 13) and tmux focus: whether a Focus click still makes
sense, the bounded wait for it, the jump it makes, and whether the session's pane is in view.
The only part of notify that imports jump."""

from __future__ import annotations

import os
import select
import subprocess
import threading
import time

from lookout import store, words
from lookout.channels import desktop
from lookout.words import ATTENTION, ATTENTION_KINDS, ENDED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lookout.shapes import Intent


# A desktop alert's Focus action is waited for this long at most, and only while the episode
# (or, for a finished turn, the session's idle time) lasts.
FOCUS_WAIT_S = 1800.0
FOCUS_POLL_S = 0.5
FOCUS_KINDS = (*ATTENTION_KINDS, "done")


def focus_mark(state_dir: str, intent: Intent) -> object | None:
    """What must stay the same while a Focus click still makes sense: the episode of an
    attention alert, the turn of a finished one. None: no Focus for this alert (another kind, or
    the session lives nowhere lookout can switch to)."""
    if intent.get("kind") not in FOCUS_KINDS or intent.get("agent_id"):
        return None
    snap = store.read_session(state_dir, str(intent.get("session_id")))
    if snap is None:
        return None
    from lookout.jump import locate as jump

    if not jump.reachable(snap) or jump.shared(state_dir, snap) is not None:
        return None  # no Focus where it would land on another session's window
    if intent["kind"] == "done":
        return ("turn", (snap.get("turn") or {}).get("started_ms"))
    return ("episode", intent.get("episode"))


def resolved(state_dir: str, intent: Intent, mark: object) -> bool:
    snap = store.read_session(state_dir, str(intent.get("session_id")))
    if snap is None or snap.get("status") == ENDED:
        return True
    if intent.get("kind") == "done":
        return mark != ("turn", (snap.get("turn") or {}).get("started_ms"))
    return snap.get("status") != ATTENTION or mark != ("episode", snap.get("episode"))


def wait_focus(
    proc: subprocess.Popen[bytes],
    rest: bytes,
    intent: Intent,
    state_dir: str,
    mark: object,
    wait_s: float = FOCUS_WAIT_S,
    rid: str | None = None,
) -> str | None:
    """Wait for a click on one of the alert's actions, at most `wait_s` and only while the alert
    is current (and its request `rid`, if it answers one, still pending). Returns the action
    notify-send reported ("default": a click on Focus; "allow", "deny", "option-N")."""
    return wait_click(proc, rest, intent, state_dir, mark, wait_s, rid)[0]


def wait_click(
    proc: subprocess.Popen[bytes],
    rest: bytes,
    intent: Intent,
    state_dir: str,
    mark: object,
    wait_s: float = FOCUS_WAIT_S,
    rid: str | None = None,
    nonce: str | None = None,
) -> tuple[str | None, bool]:
    """wait_focus, and whether the popup was closed without a click (by the daemon or the user:
    CLOSED tells which) rather than left because its wait ended. `nonce`: the request the popup
    was built for, not a later one with the same id (the same call asked again)."""
    assert proc.stdout is not None and proc.stderr is not None
    fd = proc.stdout.fileno()
    buf = rest
    closed = False
    deadline = time.monotonic() + wait_s
    try:
        while b"\n" not in buf:
            if (
                (mark is not None and resolved(state_dir, intent, mark))
                or (rid is not None and not pending(state_dir, rid, nonce))
                or time.monotonic() > deadline
            ):
                # SIGTERM, not SIGINT: notify-send then leaves the alert (or the "handled"
                # note that replaced it) where it is instead of closing it.
                proc.terminate()
                break
            if select.select([fd], [], [], FOCUS_POLL_S)[0]:
                chunk = os.read(fd, 4096)
                if not chunk:
                    closed = True  # closed or expired without a click
                    break
                buf += chunk
    finally:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    action = buf.partition(b"\n")[0].decode("utf-8", "replace").strip() if b"\n" in buf else None
    return action, closed and action is None


def pending(state_dir: str, rid: str, nonce: str | None = None) -> bool:
    """Request `rid` still takes an answer (and is the one with `nonce`, if given)."""
    from lookout.remote import requests

    rec = requests.load(state_dir, rid)
    if rec is None or (nonce is not None and rec.get("nonce") != nonce):
        return False
    return requests.is_open(rec, words.now_ms())


# NotificationClosed's reasons (the Desktop Notifications spec).
EXPIRED, DISMISSED, CLOSED_BY_CALL = 1, 2, 3


class Closures:
    """Why the daemon closed each notification, heard on the session bus by one `gdbus monitor`
    while popups with answer buttons are watched (`start` / `stop`, counted): a popup the daemon
    expired while its request waits is posted again, one the user dismissed never is. Without
    gdbus nothing is heard, and nothing is posted again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._users = 0
        self._reasons: dict[int, int] = {}

    def start(self) -> None:
        import shutil

        with self._lock:
            self._users += 1
            if self._proc is not None:
                return
            gdbus = shutil.which("gdbus")
            if gdbus is None:
                return
            stdbuf = shutil.which("stdbuf")
            argv = [*([stdbuf, "-oL"] if stdbuf else []), gdbus, "monitor", "--session"]
            argv += ["--dest", desktop.BUS_NAME, "--object-path", desktop.BUS_PATH]
            try:
                proc = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    cwd="/",
                )
            except OSError:
                return
            self._proc = proc
        ready = threading.Event()
        threading.Thread(target=self._read, args=(proc, ready), daemon=True).start()
        ready.wait(2.0)  # its first line: the match is in place

    def _read(self, proc: subprocess.Popen[bytes], ready: threading.Event) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            ready.set()
            line = raw.decode("utf-8", "replace")
            mark = ".NotificationClosed ("
            if mark not in line:
                continue
            args = line.split(mark, 1)[1].rstrip().rstrip(")").split(",")
            numbers = [a.strip().rpartition(" ")[2] for a in args]
            if len(numbers) == 2 and all(n.isdigit() for n in numbers):
                with self._lock:
                    self._reasons[int(numbers[0])] = int(numbers[1])
                    while len(self._reasons) > 1000:
                        del self._reasons[next(iter(self._reasons))]
        ready.set()

    def stop(self) -> None:
        with self._lock:
            self._users = max(0, self._users - 1)
            proc = self._proc if self._users == 0 else None
            if proc is not None:
                self._proc = None
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def reason(self, ref: str | None, wait_s: float = 1.0) -> int | None:
        """The reason notification `ref` was closed, waited for a moment (the signal reaches the
        monitor about when notify-send exits); None when it was not heard."""
        if ref is None or not ref.isdigit():
            return None
        deadline = time.monotonic() + wait_s
        while True:
            with self._lock:
                said = self._reasons.get(int(ref))
                listening = self._proc is not None and self._proc.poll() is None
            if said is not None or not listening or time.monotonic() >= deadline:
                return said
            time.sleep(0.02)


CLOSED = Closures()


def jump_to(intent: Intent, state_dir: str) -> str:
    """Switch to the alert's session (a click on Focus); what happened, for deliveries.jsonl."""
    from lookout.errors import LookoutError
    from lookout.jump import locate as jump

    try:
        landed = jump.jump_to(str(intent["session_id"]), state_dir=state_dir)
    except LookoutError as exc:
        return f"Focus: {exc}"
    on = f" on client {landed.client}" if landed.client else ""
    return f"Focus: {landed.via} {landed.target}{on}"


def pane_focused(pane: object) -> bool:
    """True only when tmux says `pane` is the active pane of the active window of an attached
    client. Anything unknown (no tmux, no pane, an error) means not focused: notify."""
    if not isinstance(pane, str) or not pane.startswith("%"):
        return False
    try:
        proc = subprocess.run(
            ["tmux", "list-clients", "-F", "#{pane_id}"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=2,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    if proc.returncode != 0:
        return False
    return pane in proc.stdout.decode("utf-8", "replace").split()
