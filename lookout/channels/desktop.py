"""Desktop notifications: notify-send on Linux (D-Bus), the platform layer's alert on macOS and
WSL (lookout/platform/). An alert for a session lookout can switch to offers Focus; one whose
request [remote] may answer carries Allow / Deny (or a question's options), clicked while the
sender waits for notify-send (the desktop answer surface: lookout/surfaces/desktop.py). Never
leaves the machine."""

from __future__ import annotations

import os
import time

from lookout.channels import base

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from typing import Any

    from lookout.channels.base import Doctor, Finding, Message, Option, Outcome
    from lookout.config.check import Checker, KeyPath
    from lookout.shapes import Channel

    class Desktop(Channel):
        urgency: object  # low | normal | critical, or a table of them by kind
        app_name: str
        skip_when_focused: bool  # no alert while the session's tmux pane is focused


NAME = "desktop"
KEYS = ("urgency", "app_name", "skip_when_focused")
SECRETS = ()
TIMEOUT_MS = 5000
REMOTE = False
UPDATABLE = True
LOUD = False
ANSWERS = "desktop"
STEERS = False
FOCUS = True
OPTIONS: tuple[Option, ...] = ()
EXAMPLE = "lookout channel add desk --type desktop"

URGENCIES = ("low", "normal", "critical")
FOCUS_ACTION = "--action=default=Focus"  # "default": the body click everywhere, a button in LXQt
NO_ACTIONS = "Actions are not supported"  # notify-send's words when the daemon has none
BUS_NAME = "org.freedesktop.Notifications"
BUS_PATH = "/org/freedesktop/Notifications"

add_buttons = base.cannot_add_buttons  # buttons go on when the alert is posted (deliver)
inspect = base.nothing_to_inspect
warnings = base.env_warnings


def check(c: Checker, path: KeyPath, raw: dict[str, Any], ch: Desktop) -> None:
    ch["app_name"] = c.get(path, raw, "app_name", str, "a string") or "lookout"
    ch["urgency"] = c.by_kind((*path, "urgency"), raw.get("urgency", "normal"), c.choice(URGENCIES))
    focused = c.get(path, raw, "skip_when_focused", bool, "a bool")
    ch["skip_when_focused"] = True if focused is None else focused


def text(value: str, markup: bool = True) -> str:
    """Text for a notification daemon: no NUL (which would drop the alert) or other control
    characters, and `& < >` escaped where the body is markup (notify-send), so a link or image
    in a message is shown as text, never rendered."""
    value = "".join(" " if (ord(c) < 0x20 and c != "\n") or ord(c) == 0x7F else c for c in value)
    if markup:
        value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return value


def _run(argv: list[str], timeout_s: float) -> str:
    from lookout.platform.base import run

    return run(argv, timeout_s)


def send(ch: Desktop, msg: Message, timeout_s: float) -> Outcome:
    # macOS and WSL's Windows toasts are the platform layer's (lookout/platform/); None: here.
    from lookout.platform import current

    outcome = current.get().alert(ch, msg, timeout_s)
    if outcome is not None:
        return outcome
    title = text(msg["title"], markup=False)
    body = text(msg["body"])
    urgency = (
        "low" if msg.get("update") else str(base.by_kind(ch.get("urgency"), msg["kind"], "normal"))
    )
    argv = ["notify-send", "-a", ch.get("app_name") or "lookout", "-u", urgency, "-p"]
    if msg.get("update"):
        argv.append("-e")  # the "handled" note should not pile up in the history
        # An alert with buttons is closed first, then the note posted: a daemon that keeps the
        # old actions on a replace (lxqt-notificationd) would show buttons that do nothing.
        ref = str(msg["ref"]) if msg.get("ref") else None
        if ref and not (msg.get("close_first") and withdraw(ch, ref, timeout_s)):
            argv += ["-r", ref]
    elif msg.get("answer"):
        # Never expires while its request waits (the spec's 0; LXQt's default is 10 s): it is
        # closed when the request ends, and posted again if the daemon closes it anyway.
        argv += ["-t", "0"]
    argv += ["--", title]
    if body:
        argv.append(body)
    if (msg.get("focus") or msg.get("answer")) and not msg.get("update"):
        outcome = _with_actions(argv, msg, timeout_s)
        if outcome is not None:
            return outcome
    out = _run(argv, timeout_s)
    ref = out.strip().splitlines()[-1] if out.strip() else None
    ref = ref if ref and ref.isdigit() else None
    return "sent", f"notify-send id {ref}" if ref else "notify-send", ref


def answer_actions(msg: Message) -> list[str]:
    """notify-send options for the buttons that answer the alert's request (issue 25): Allow and
    Deny, or a question's options and Deny. Their keys are what notify-send prints on a click."""
    return [
        f"--action={key}={text(label, markup=False)}"
        for key, label in (msg.get("answer") or {}).get("actions", [])
    ]


def _with_actions(argv: list[str], msg: Message, timeout_s: float) -> Outcome | None:
    """notify-send with a Focus action and/or the buttons that answer a request. It keeps
    running to report a click, so it is handed over (msg["focus_proc"]: the process and what it
    printed after the id) to the sender, which waits for it. None: no action possible here (no
    stdbuf, or a notify-send without --action); send the plain alert instead."""
    import shutil
    import subprocess

    stdbuf = shutil.which("stdbuf")
    if stdbuf is None:
        return None  # notify-send 0.8.1 would hold the id in its buffer until it exits
    split = argv.index("--")
    actions = [FOCUS_ACTION] if msg.get("focus") else []
    actions += answer_actions(msg)
    cmd = [stdbuf, "-oL", *argv[:split], *actions, *argv[split:]]
    try:
        proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    except OSError as exc:
        raise base.ChannelError(f"cannot run notify-send: {exc.strerror or exc}") from None
    assert proc.stdout is not None
    line, rest = read_line(proc.stdout.fileno(), time.monotonic() + timeout_s)
    if line is None:
        return _no_id(proc, timeout_s)
    ref = line if line.isdigit() else None
    # A daemon without actions: notify-send shows the alert and exits at once. Its stdout's
    # end tells, not wait(): a reaped-elsewhere child would look like an exit with status 0.
    rest, ended = _until_eof(proc.stdout.fileno(), rest, time.monotonic() + 0.5)
    if not ended or b"\n" in rest:  # still waiting, or already clicked: the sender takes over
        msg["focus_proc"] = (proc, rest)
        what = " and ".join(
            n for n, on in (("Focus", msg.get("focus")), ("answer", msg.get("answer"))) if on
        )
        return "sent", f"notify-send id {ref}, {what} action{'s' if 'answer' in what else ''}", ref
    return _ended(proc, msg, ref)


def _no_id(proc: subprocess.Popen[bytes], timeout_s: float) -> Outcome | None:
    """notify-send printed no id: timed out, too old for --action (None), or failed."""
    assert proc.stderr is not None
    if proc.poll() is None:
        proc.kill()
        proc.wait()
        raise base.ChannelError(f"timed out after {timeout_s:g}s")
    err = proc.stderr.read().decode("utf-8", "replace").strip()
    if "Unknown option" in err:
        return None  # libnotify older than 0.7.10
    tail = f": {err.splitlines()[-1][:200]}" if err else ""
    raise base.ChannelError(f"notify-send exited with {proc.returncode}{tail}")


def _ended(proc: subprocess.Popen[bytes], msg: Message, ref: str | None) -> Outcome:
    """notify-send showed the alert and exited: the daemon has no actions (or it failed)."""
    assert proc.stderr is not None
    code = proc.wait()
    err = proc.stderr.read().decode("utf-8", "replace")
    if NO_ACTIONS in err:
        msg.pop("answer", None)  # no buttons were shown: nothing to withdraw
        return "sent", f"notify-send id {ref} (the notification daemon has no actions)", ref
    if code != 0:
        raise base.ChannelError(f"notify-send exited with {code}: {err.strip()[-200:]}")
    return "sent", f"notify-send id {ref}", ref


def replace(ch: Desktop, ref: str, title: str, body: str, timeout_s: float) -> Outcome:
    """Replace alert `ref` with a note without actions (the outcome of its request): a popup
    whose request ended never keeps buttons that can no longer answer it. The alert is closed,
    then the note posted (a replace in place keeps the old buttons on lxqt-notificationd); where
    it cannot be closed, it is replaced in place."""
    from lookout.platform.base import PlatformError

    closed = withdraw(ch, ref, timeout_s)
    argv = ["notify-send", "-a", ch.get("app_name") or "lookout", "-u", "low", "-e", "-p"]
    if not closed:
        argv += ["-r", ref]
    argv += ["--", text(title, markup=False), text(body)]
    try:
        out = _run(argv, timeout_s)
    except PlatformError as exc:
        return "failed", str(exc), None
    said = out.strip().splitlines()[-1] if out.strip() else ""
    new = said if said.isdigit() else ref
    if closed:
        return "sent", f"notify-send id {ref} closed, the outcome is id {new}", new
    return "sent", f"notify-send id {new} replaced", new


def withdraw(ch: Desktop, ref: str, timeout_s: float) -> bool:
    """CloseNotification(ref) on the session bus (gdbus, else dbus-send; no shell, no text from
    the alert): True once the daemon took the call."""
    import shutil
    import subprocess

    from lookout.platform.base import PlatformError

    if not ref.isdigit():
        return False
    gdbus, send = shutil.which("gdbus"), shutil.which("dbus-send")
    if gdbus is not None:
        argv = [gdbus, "call", "--session", "--dest", BUS_NAME, "--object-path", BUS_PATH]
        argv += ["--method", f"{BUS_NAME}.CloseNotification", ref]
    elif send is not None:
        argv = [send, "--session", "--type=method_call", "--print-reply", f"--dest={BUS_NAME}"]
        argv += [BUS_PATH, f"{BUS_NAME}.CloseNotification", f"uint32:{ref}"]
    else:
        return False
    try:
        _run(argv, timeout_s)
    except (PlatformError, subprocess.TimeoutExpired):
        return False
    return True


def _chunk(fd: int, deadline: float) -> bytes | None:
    """The next bytes on `fd`: None at the deadline, b"" at its end."""
    import select

    left = deadline - time.monotonic()
    if left <= 0 or not select.select([fd], [], [], left)[0]:
        return None
    return os.read(fd, 4096)


def _until_eof(fd: int, buf: bytes, deadline: float) -> tuple[bytes, bool]:
    """What `fd` gives until its end or the deadline; True if it ended."""
    while True:
        chunk = _chunk(fd, deadline)
        if not chunk:
            return buf, chunk is not None
        buf += chunk


def read_line(fd: int, deadline: float) -> tuple[str | None, bytes]:
    """The first line on `fd` (None at EOF or the deadline) and the bytes after it."""
    buf = b""
    while b"\n" not in buf:
        chunk = _chunk(fd, deadline)
        if not chunk:
            return None, buf
        buf += chunk
    line, _, rest = buf.partition(b"\n")
    return line.decode("utf-8", "replace").strip(), rest


# -- doctor ----------------------------------------------------------------------------------------


def notifier() -> tuple[bool, str]:
    """Which notifier the platform layer found and what it can do."""
    from lookout.platform import current

    return current.get().notifier()


def _hint(detail: str) -> str:
    if "no notifier found" in detail:
        return "brew install alerter (Focus action) or terminal-notifier"
    if "notify-send not found" in detail:
        return "apt install libnotify-bin (desktop notifications need notify-send)"
    return "desktop notifications need a graphical session with a D-Bus session bus"


def doctor(used: dict[str, Any], ctx: Doctor) -> list[Finding]:
    """One line for the desktop as a whole: the hooks run in the agent's environment, not this
    shell's, so what their last desktop notification did is the better witness."""
    ok, detail = notifier()
    last = ctx["last"](list(used))
    if last is not None and last.get("result") == "failed":
        said = (
            f"the hooks' last desktop notification failed ({last.get('channel')},"
            f" {last.get('ts')}): {last.get('detail')}; in this shell: {detail}"
        )
        hint = (
            "the hooks run with Claude Code's environment, not this shell's: start claude"
            " where DBUS_SESSION_BUS_ADDRESS (or DISPLAY) is set, e.g. in a terminal of your"
            " desktop session (tmux: update-environment, or start the tmux server from there)"
        )
        return [(None, base.WARN, said, hint)]
    if last is not None:
        said = (
            f"the hooks' last desktop notification was sent ({last.get('channel')},"
            f" {last.get('ts')}); in this shell: {detail}"
        )
        return [(None, base.OK, said, None)]
    status = base.OK if ok else (base.WARN if used else base.INFO)
    return [(None, status, detail, None if ok or not used else _hint(detail))]
