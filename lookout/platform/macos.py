"""macOS: alerts through alerter (Focus as an action, the click printed), terminal-notifier
(Focus through -activate/-execute) or osascript (no actions); sounds through afplay; process
truth from kill(pid, 0) and ps; the bridge as a launchd agent (launchd.py). Never a payload's
text in a shell command or an AppleScript source: argv items only."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time

from lookout import paths
from lookout.platform.base import (
    Platform,
    PlatformError,
    SoundPlayer,
    as_value,
    group_id,
    plain,
    run,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from lookout.platform.base import Outcome, Service

# alerter keeps its alert (and itself) up this long at most: surfaces/desktop.py's FOCUS_WAIT_S; the
# sender stops waiting (and alerter) earlier when the episode ends.
ALERTER_TIMEOUT_S = 1800
UPDATE_TIMEOUT_S = 30
# The terminal app to bring forward, by TERM_PROGRAM (tmux hides it: then __CFBundleIdentifier,
# which Terminal, iTerm2 and others export to their shells).
BUNDLES = {
    "Apple_Terminal": "com.apple.Terminal",
    "iTerm.app": "com.googlecode.iterm2",
    "WezTerm": "com.github.wez.wezterm",
    "vscode": "com.microsoft.VSCode",
    "ghostty": "com.mitchellh.ghostty",
}
_BUNDLE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]{0,127}")
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")


def notifier() -> tuple[str, str | None]:
    """The best notifier on PATH: (name, path)."""
    for name in ("alerter", "terminal-notifier", "osascript"):
        found = shutil.which(name)
        if found:
            return name, found
    return "none", None


def terminal_bundle() -> str | None:
    bundle = os.environ.get("__CFBundleIdentifier") or ""  # noqa: SIM112 - macOS spells it so
    if _BUNDLE_ID.fullmatch(bundle) and "." in bundle:
        return bundle
    if os.environ.get("KITTY_WINDOW_ID"):
        return "net.kovidgoyal.kitty"
    return BUNDLES.get(os.environ.get("TERM_PROGRAM") or "")


def jump_command(session_id: object) -> str | None:
    """The shell command terminal-notifier's -execute runs on a click: `lookout jump SESSION`,
    every part quoted, and only for a session id of plain characters."""
    if not isinstance(session_id, str) or not _SESSION_ID.fullmatch(session_id):
        return None
    launcher = paths.bin_dir() / "lookout"
    prog = shlex.quote(str(launcher)) if launcher.exists() else "lookout"
    state = shlex.quote("LOOKOUT_STATE_DIR=" + paths.state_dir())
    return f"env {state} {prog} jump {shlex.quote(session_id)}"


class MacOS(Platform):
    name = "macos"

    def alert(self, ch: Mapping[str, Any], msg: dict[str, Any], timeout_s: float) -> Outcome:
        title = plain(msg["title"])
        body = plain(msg["body"]) or title
        name, prog = notifier()
        group = group_id(msg)
        if prog is None:
            raise PlatformError("no notifier found: alerter, terminal-notifier or osascript")
        if name == "osascript":
            if msg.get("update"):
                return "skipped", "osascript cannot replace a notification", None
            # argv items, never interpolated into the script: no AppleScript quoting to get wrong.
            script = ["-e", "on run argv", "-e", "display notification (item 2 of argv) with"
                      " title (item 1 of argv)", "-e", "end run"]  # fmt: skip
            run([prog, *script, title, body], timeout_s)
            return "sent", "osascript (no actions)", None
        argv = [prog, "-title", as_value(title), "-message", as_value(body), "-group", group]
        if name == "terminal-notifier":
            if msg.get("focus") and not msg.get("update"):
                bundle = terminal_bundle()
                command = jump_command((msg.get("intent") or {}).get("session_id"))
                argv += ["-activate", bundle] if bundle else []
                argv += ["-execute", command] if command else []
            run(argv, timeout_s)
            return "sent", f"terminal-notifier group {group}", group
        # alerter: it shows the alert and waits, then prints what was clicked.
        # Our own labels only (never a payload's): Focus, and whatever a caller adds (Allow /
        # Deny, once desktop answers exist); the waiter gets the clicked one's label.
        labels = [str(a) for a in msg.get("actions") or [] if str(a).isalnum()]
        labels += ["Focus"] if msg.get("focus") else []
        if labels and not msg.get("update"):
            argv += ["-actions", ",".join(labels), "-closeLabel", "Close"]
            argv += ["-timeout", str(ALERTER_TIMEOUT_S)]
            proc = _start(argv)
            msg["focus_proc"] = (proc, b"")
            return "sent", f"alerter group {group}, {', '.join(labels)} action", group
        argv += ["-timeout", str(UPDATE_TIMEOUT_S if msg.get("update") else ALERTER_TIMEOUT_S)]
        _start(argv, wait_s=0.3)
        return "sent", f"alerter group {group}", group

    def withdraw(self, ref: str, timeout_s: float) -> bool:
        name, prog = notifier()
        if prog is None or name == "osascript":
            return False
        run([prog, "-remove", ref], timeout_s)
        return True

    def notifier(self) -> tuple[bool, str]:
        name, prog = notifier()
        if name == "alerter":
            return True, f"alerter at {prog}: actions (Focus), replaces by group id"
        if name == "terminal-notifier":
            return True, f"terminal-notifier at {prog}: Focus on click, replaces by group id"
        if name == "osascript":
            return True, (
                f"osascript at {prog}: plain alerts only, no actions and no replacement"
                " (brew install alerter or terminal-notifier for Focus)"
            )
        return False, "no notifier found (alerter, terminal-notifier or osascript)"

    def sound_player(self) -> SoundPlayer | None:
        found = shutil.which("afplay")
        if found is None:
            return None
        # Core Audio reads WAV and MP3; Ogg Vorbis needs a component macOS does not ship.
        return SoundPlayer("afplay", found, ("wav", "mp3"), afplay_argv, True, "Core Audio")

    def sound_status(self) -> tuple[bool, str]:
        player = self.sound_player()
        if player is None:
            return False, "afplay not found (it ships with macOS in /usr/bin: is it on PATH?)"
        return True, player.describe()

    def raise_terminal(self) -> str | None:
        bundle = terminal_bundle()
        if bundle is None or shutil.which("open") is None:
            return None
        try:
            run(["open", "-b", bundle], 10)
        except (PlatformError, subprocess.TimeoutExpired):
            return None
        return f"open -b {bundle}"

    # -- processes ---------------------------------------------------------------------------

    def alive(self, pid: object, start: object = None, since_ms: object = None) -> bool | None:
        """No /proc: kill(pid, 0), then ps for the process's state and start time. The hook
        cannot afford ps, so `start` is unknown here; a process that started after the session's
        first event (`since_ms`) is not the session's agent but a reuse of its pid."""
        if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass  # exists, owned by someone else
        except OSError:
            return None
        seen = ps_status(pid)
        if seen is None:
            return True  # no ps: kill(pid, 0) is all there is
        if not seen:
            return False
        state, started = seen
        if state.startswith("Z"):
            return False  # killed, not yet reaped
        # ps gives whole seconds: a start in the session's own second is still the agent's.
        younger = (
            isinstance(since_ms, int) and started is not None and started > since_ms // 1000 + 1
        )
        return not younger

    def start_time(self, pid: int) -> int | None:
        seen = ps_status(pid)
        return seen[1] if seen else None

    def started_ms(self, pid: int) -> int | None:
        seen = ps_status(pid)
        return seen[1] * 1000 if seen and seen[1] is not None else None

    def slept_ms(self) -> int | None:
        # macOS: CLOCK_MONOTONIC counts the time asleep, CLOCK_UPTIME_RAW does not.
        try:
            uptime = getattr(time, "CLOCK_UPTIME_RAW")  # noqa: B009 - macOS only
            asleep = time.clock_gettime(time.CLOCK_MONOTONIC) - time.clock_gettime(uptime)
        except (AttributeError, OSError):
            return None
        return max(0, int(asleep * 1000))

    def children(self, pid: int) -> list[tuple[int, list[str]]]:
        try:
            out = run(["ps", "-ww", "-A", "-o", "pid=,ppid=,command="], 10)
        except (PlatformError, subprocess.TimeoutExpired):
            return []
        found = []
        for line in out.splitlines():
            parts = line.split(None, 2)
            if len(parts) < 3 or not parts[0].isdigit() or parts[1] != str(pid):
                continue
            found.append((int(parts[0]), command_argv(parts[2])))
        return found

    def parent(self, pid: int) -> int | None:
        try:
            out = run(["ps", "-o", "ppid=", "-p", str(pid)], 10).strip()
        except (PlatformError, subprocess.TimeoutExpired):
            return None
        return int(out) if out.isdigit() else None

    def cmdline(self, pid: int) -> list[str] | None:
        try:
            out = run(["ps", "-ww", "-o", "command=", "-p", str(pid)], 10).strip()
        except (PlatformError, subprocess.TimeoutExpired):
            return None
        return command_argv(out) if out else None

    def bridge_service(self) -> Service | None:
        from lookout.platform import launchd

        return launchd.LaunchAgent()


def afplay_argv(program: str, file: str, volume: float) -> list[str]:
    return [program, "-v", f"{volume:.2f}", file]  # 0.0-1.0 of the output level


def command_argv(command: str) -> list[str]:
    """argv from ps's `command` column, which joins the items with spaces: `sh -c SCRIPT`
    keeps SCRIPT whole (the one shape reconcile looks for), anything else splits on spaces."""
    words = command.split(" ", 2)
    if len(words) == 3 and words[1] == "-c":
        return words
    return command.split()


def ps_status(pid: int) -> tuple[str, int | None] | tuple[()] | None:
    """(state, start in epoch seconds) from `ps -o stat=,lstart= -p PID`; () when ps knows no
    such process; None when ps cannot run."""
    try:
        proc = subprocess.run(
            ["ps", "-o", "stat=,lstart=", "-p", str(pid)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
            cwd="/",
            env={**os.environ, **{"LC_ALL": "C"}},
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    line = proc.stdout.decode("utf-8", "replace").strip()
    if not line:
        return ()  # ps exits 1 and prints nothing for a pid it does not know
    state, _, lstart = line.partition(" ")
    return state, parse_lstart(lstart)


def parse_lstart(text: str) -> int | None:
    """`ps -o lstart=` ("Thu Nov 26 07:51:27 2026", local time) in epoch seconds."""
    try:
        return int(time.mktime(time.strptime(" ".join(text.split()), "%a %b %d %H:%M:%S %Y")))
    except (ValueError, OverflowError):
        return None


def _start(argv: list[str], wait_s: float = 0.3) -> subprocess.Popen[bytes]:
    """Start a notifier that stays up (alerter) and make sure it did not fail at once."""
    try:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd="/"
        )
    except OSError as exc:
        raise PlatformError(f"cannot run {os.path.basename(argv[0])}: {exc.strerror}") from None
    try:
        code = proc.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        return proc  # up and waiting for the user
    assert proc.stderr is not None
    err = proc.stderr.read().decode("utf-8", "replace").strip()
    if code != 0:
        tail = f": {err.splitlines()[-1][:200]}" if err else ""
        raise PlatformError(f"{os.path.basename(argv[0])} exited with {code}{tail}")
    return proc  # done already (a click within wait_s): its answer waits in the pipe
