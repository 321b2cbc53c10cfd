"""The desktop popup as an answer surface (issues 13, 25): its Allow / Deny (or a question's
options) bound to the request by its nonce, kept in this sender's memory; notify-send, still
running, reports the click on an action, which a waiter takes (`watch_click`): Focus switches to
the session, an answer button answers its request, and the popup is then replaced by the
request's outcome. A popup with answer buttons that the daemon closes while its request waits
is posted again (`Closures` hears why it closed). The popup itself is sent by
lookout.channels.desktop."""

from __future__ import annotations

import os
import re
import select
import subprocess
import threading
import time
import unicodedata

from lookout import words
from lookout.channels import desktop, registry
from lookout.deliveries import record, send_one
from lookout.jump import focus
from lookout.platform import current as platform
from lookout.platform.base import CLICKS
from lookout.surfaces import base

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from lookout.shapes import Intent
    from lookout.surfaces.base import Alert, Watch


class Popup:
    """The desktop popup: Allow / Deny (or a question's options) bound to the request by its
    nonce, kept in this sender's memory; notify-send reports the click, which a waiter takes
    (watch_click). Added late by closing the popup and posting it again with its actions (a
    replace keeps the old actions on lxqt-notificationd)."""

    NAME = "desktop"
    LABEL = "the desktop popup"

    def bind(self, a: Alert) -> None:
        answer_buttons(a.state_dir, a.intent, a.remote, a.msg, a.ch["content"])

    def sent(self, a: Alert, ref: str) -> None:
        pass

    def take(self, a: Alert, ref: str | None, watch: Watch) -> None:
        """The alert's notify-send waits for a click on an action (Focus, an answer): a waiter
        takes it."""
        if "focus_proc" not in a.msg:
            return
        proc, rest = a.msg.pop("focus_proc")
        if a.msg.get("answer") and ref:
            _answered((a.name, ref, str(a.intent.get("episode"))))
        watch(watch_click, a, proc, rest, ref)

    def late(self, a: Alert, ref: str) -> None:
        self.bind(a)
        if not a.msg.get("answer"):
            return
        registry.of(a.ch).withdraw(a.ch, ref, a.ch["timeout_ms"] / 1000)
        _, _, new = send_one(a.state_dir, a.intent, a.name, a.ch, a.msg, "buttons added: ")
        if "focus_proc" in a.msg:
            proc, rest = a.msg.pop("focus_proc")
            if new:
                _answered((a.name, new, str(a.intent.get("episode"))))
            watch_click(a, proc, rest, new)

    def shows_outcome(self, state_dir: str, name: str, ref: str, episode: str) -> bool:
        return (name, ref, episode) in _ANSWERED_REFS


def answer_buttons(
    state_dir: str,
    intent: Intent,
    remote: dict[str, Any],
    msg: dict[str, Any],
    content: str = "full",
) -> None:
    """Allow / Deny on a desktop alert whose request may be answered from afar (issue 25): the
    request is looked up now, and a click answers that one (its nonce, kept in memory). The
    popup shows the request as lookout.remote.shown renders it, and offers Allow only if that
    is all of it (issue 31)."""
    from lookout.remote import answers

    rec = answers.request_for(state_dir, intent, remote)
    if rec is None:
        return
    actions, picks = [], {}
    for i, (label, decision, picked) in enumerate(base.choices(rec, LIMITS, msg, content)):
        key = decision if picked is None else f"option-{i}"
        actions.append((key, label))
        picks[key] = (decision, picked)
    msg["answer"] = {"rid": rec["id"], "nonce": rec["nonce"], "actions": actions, "picks": picks}


# A popup with answer buttons that the daemon closes while its request waits is posted again: at
# once (the daemon's own expiry, LXQt's 10 s), never after the user dismissed it, at most
# REPOST_MAX times, and no more after QUICK_MAX closes in a row each within QUICK_S of its post
# (a daemon that shows one popup at a time would trade two of them back and forth).
REPOST_MAX = 60
QUICK_S = 5.0
QUICK_MAX = 3
# Once a popup's wait ends without a click, how long its request's record gets to say how it
# ended (the deciding hook settles it within a few polls), so the outcome says it exactly.
SETTLE_S = 1.5


def watch_click(a: Alert, proc: subprocess.Popen[bytes], rest: bytes, ref: str | None) -> None:
    """Wait for a click on the actions of alert `ref` (notify-send `proc` reports it; `rest`: what
    it said past the alert's id): Focus switches to the session; an answer button answers its
    request, and the popup is then replaced by the request's outcome."""
    bound = a.msg.get("answer")
    if bound:
        CLOSED.start()
    try:
        action, ref = _wait_click(a, proc, rest, ref)
    finally:
        if bound:
            CLOSED.stop()
    if action in CLICKS and a.mark is not None:
        detail = focus.jump_to(a.intent, a.state_dir)
        raised = platform.get().raise_terminal()  # macOS: the terminal app comes forward
        said = detail + (f"; {raised}" if raised else "")
        record(a.state_dir, a.intent, a.name, "clicked", said)
    if not bound:
        return
    refused = _answer_click(a, bound, action)
    if ref is not None:
        _show_outcome(a, ref, bound, refused)


def _answer_click(a: Alert, bound: dict[str, Any], action: str | None) -> str | None:
    """A click on one of the popup's answer buttons answers the request it was bound to (and is
    recorded); why it did not, or None."""
    from lookout.remote import answers, requests

    if action not in bound["picks"]:
        return None
    decision, picked = bound["picks"][action]
    refused = None
    try:
        answers.answer(
            a.state_dir,
            bound["rid"],
            bound["nonce"],
            decision,
            surface=Popup.NAME,
            by="the desktop alert",
            answers=picked,
        )
    except requests.Refused as exc:
        refused = str(exc)
    label = dict(bound["actions"])[action]
    said = f"not answered: {refused}" if refused else "answered"
    record(a.state_dir, a.intent, a.name, "clicked", f"{label}: {said}")
    return refused


def _show_outcome(a: Alert, ref: str, bound: dict[str, Any], refused: str | None) -> None:
    """Popup `ref` is replaced by its request's outcome: its buttons go with it (within a poll of
    the end)."""
    from lookout.remote import answers, requests

    rec = _settled(a.state_dir, bound["rid"], bound["nonce"])
    if refused is None and rec is not None and requests.is_open(rec, words.now_ms()):
        if a.mark is None or not focus.resolved(a.state_dir, a.intent, a.mark):
            return  # the wait timed out (or Focus was clicked) and the request still waits
        rec = {**rec, "status": requests.ANSWERED_LOCALLY}  # its episode ended in the terminal
    if rec is not None and rec.get("nonce") != bound["nonce"]:
        rec = None  # a later request with the same id: this one is no longer waiting
    text, timeout_s = answers.outcome_text(rec, refused), a.ch["timeout_ms"] / 1000
    result, detail, _ = registry.of(a.ch).replace(a.ch, ref, a.msg["title"], text, timeout_s)
    record(a.state_dir, a.intent, a.name, result, detail, update=True)


def _wait_click(
    a: Alert, proc: subprocess.Popen[bytes], rest: bytes, ref: str | None
) -> tuple[str | None, str | None]:
    """The action clicked on the popup (None: none), and the popup's id as it stands then: a
    popup with answer buttons that the daemon closes while its request waits is posted again."""
    bound = a.msg.get("answer")
    rid, nonce = (bound["rid"], bound["nonce"]) if bound else (None, None)
    reposts = quick = 0
    while True:
        posted = time.monotonic()
        action, closed = wait_click(proc, rest, a.intent, a.state_dir, a.mark, rid=rid, nonce=nonce)
        if not (closed and rid is not None):
            return action, ref
        if CLOSED.reason(ref) != EXPIRED:
            return None, ref  # the user dismissed it (or lookout cannot tell): it stays away
        if not pending(a.state_dir, rid, nonce):
            return None, ref
        if a.mark is not None and focus.resolved(a.state_dir, a.intent, a.mark):
            return None, ref
        quick = quick + 1 if time.monotonic() - posted < QUICK_S else 0
        if reposts >= REPOST_MAX or quick >= QUICK_MAX:
            why = "not posted again: the daemon keeps closing it"
            record(a.state_dir, a.intent, a.name, "skipped", why)
            return None, ref
        reposts += 1
        result, _, new = send_one(a.state_dir, a.intent, a.name, a.ch, a.msg, "posted again: ")
        if result != "sent" or "focus_proc" not in a.msg:
            return None, ref
        proc, rest = a.msg.pop("focus_proc")
        if new:
            ref = new
            _answered((a.name, new, str(a.intent.get("episode"))))


def _settled(state_dir: str, rid: str, nonce: str) -> dict[str, Any] | None:
    """Request `rid` once its deciding hook has settled it (or SETTLE_S passed)."""
    from lookout.remote import requests

    deadline = time.monotonic() + SETTLE_S
    while True:
        rec = requests.load(state_dir, rid)
        if (
            rec is None
            or rec.get("nonce") != nonce
            or not requests.is_open(rec, words.now_ms())
            or time.monotonic() >= deadline
        ):
            return rec
        time.sleep(0.05)


# Desktop alerts of this sender that carried answer buttons: their waiter replaces them with the
# request's outcome, which a "handled" update must not overwrite. By (channel, notification id,
# episode): a daemon reuses ids (after a restart), an episode is never reused.
# The newest ANSWERED_MAX (in insertion order): a sender lives for hours.
_ANSWERED_REFS: dict[tuple[str, str, str], None] = {}
ANSWERED_MAX = 1000


def _answered(key: tuple[str, str, str]) -> None:
    _ANSWERED_REFS[key] = None
    while len(_ANSWERED_REFS) > ANSWERED_MAX:
        del _ANSWERED_REFS[next(iter(_ANSWERED_REFS))]


# -- notify-send's click, and why the daemon closed a popup ------------------------------------

# A desktop alert's Focus action is waited for this long at most, and only while the episode
# (or, for a finished turn, the session's idle time) lasts.
FOCUS_WAIT_S = 1800.0
FOCUS_POLL_S = 0.5


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
    """Wait for a click on one of the alert's actions, at most `wait_s` and only while the alert
    is current (and its request `rid`, if it answers one, still pending; `nonce`: the request the
    popup was built for, not a later one with the same id, the same call asked again). Returns
    the action notify-send reported ("default": a click on Focus; "allow", "deny", "option-N";
    None: none), and whether the popup was closed without a click (by the daemon or the user:
    CLOSED tells which) rather than left because its wait ended."""
    assert proc.stdout is not None and proc.stderr is not None
    fd = proc.stdout.fileno()
    buf = rest
    closed = False
    deadline = time.monotonic() + wait_s
    try:
        while b"\n" not in buf:
            if (
                (mark is not None and focus.resolved(state_dir, intent, mark))
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


# -- what the popup shows: its real limits (lookout.remote.shown's rule asks) ------------------
# Measured with the real lxqt-notificationd 1.2.0 under Xvfb (300 px wide, its default font;
# tests/channels/test_desktop_limits.py): the body is rich text in a label 225 px wide, 15 px a
# row. The daemon never scrolls: a popup taller than the screen is cut at the screen's edge, its
# last rows and buttons with it. A run of characters with no break opportunity is clipped at the
# label's edge, not wrapped, and runs of spaces collapse. So lookout keeps spaces (U+00A0) and
# gives every run a break (U+200B) at most ROW_UNITS wide, each unit the widest ASCII glyph
# measured (W, m, @: 12.8 px); and a popup offers Allow only when its title and body take at
# most ROWS rows, which fit a 400 px screen (and dunst's default 300 px height).
ROWS = 15
ROW_UNITS = 17
ZWSP, NBSP = "\u200b", "\u00a0"
_SOFT_BREAKS = frozenset("/._-=:,;|&?+")


class Rows:
    """The popup's limits: rows of ROW_UNITS, ROWS of them. A refusal's own lines come on top of
    the preview's (a popup without Allow approves nothing, and still fits a 600 px screen)."""

    WHAT = "popup"
    ONE_LINE = 0
    TAIL_ROOM = False

    def fits(self, title: str, lines: list[str]) -> bool:
        return _rows(title) + sum(_rows(_desktop_line(line)) for line in lines) <= ROWS

    def render(self, lines: list[str]) -> str:
        return "\n".join(_desktop_line(line) for line in lines)


LIMITS = Rows()


def _units(c: str) -> int:
    """A character's width in units of the widest ASCII glyph: east Asian wide ones two, the
    rare ones outside the common scripts four (a Bismillah ligature is wider than four W)."""
    if c == ZWSP:
        return 0
    wide = unicodedata.east_asian_width(c) in ("W", "F")
    if wide:
        return 2
    return 1 if ord(c) < 0x2E80 else 4


def _desktop_line(line: str) -> str:
    """One line as the popup's rich text keeps it: spaces that rich text would collapse become
    no-break spaces (a single space between words stays a break), and a run wider than a row
    gets a zero-width break (after a `/`, `.`, `-` ... where one is)."""
    line = re.sub("  +", lambda m: NBSP * (len(m.group()) - 1) + " ", line)
    line = re.sub("^ +| +$", lambda m: NBSP * len(m.group()), line)
    out: list[str] = []
    run: list[str] = []
    for c in line:
        if c == " ":
            out += [*run, c]
            run = []
            continue
        run.append(c)
        while sum(_units(x) for x in run) > ROW_UNITS:
            soft = [i + 1 for i, x in enumerate(run[:-1]) if x in _SOFT_BREAKS]
            at = soft[-1] if soft else len(run) - 1
            out += [*run[:at], ZWSP]
            run = run[at:]
    return "".join(out + run)


def _rows(line: str) -> int:
    """The rows a line takes, wrapped greedily at its breaks with every glyph at its widest."""
    rows, used = 1, 0
    for chunk in re.split(f"(?<=[ {ZWSP}])", line):
        word = chunk.rstrip(" " + ZWSP)
        width = sum(_units(c) for c in word)
        if used and used + width > ROW_UNITS:
            rows, used = rows + 1, 0
        used += width + (len(chunk) - len(word) if chunk.endswith(" ") else 0)
    return rows
