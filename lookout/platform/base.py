"""The platform interface: what lookout asks of the operating system outside the hook path,
with Linux's answers as the defaults. A platform module overrides what differs. Nothing here
ever hands a payload's text to a shell or a script source: text travels as argv items or data."""

from __future__ import annotations

import os

from lookout import procs

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path
    from typing import Any

    Outcome = tuple[str, str, str | None]  # (sent | failed | skipped, detail, ref for updates)
    Out = Callable[[str], None]

NAMES = ("linux", "macos", "wsl")
# What a click on an alert's Focus reports: notify-send's "default" action, alerter's action
# label or its body click.
CLICKS = frozenset({"default", "Focus", "@CONTENTCLICKED"})
# A notifier that reads its arguments like NSUserDefaults (terminal-notifier, alerter) takes a
# value starting with one of these as an option or a property list: shown behind a word joiner.
_ARG_LEADERS = tuple('-[({<"\\')
WORD_JOINER = "\u2060"


class PlatformError(Exception):
    """An alert or a service step failed for a reason worth showing as is."""


def as_value(text: str) -> str:
    """`text` as an argv value that no option parser takes for an option or a plist."""
    return WORD_JOINER + text if text.startswith(_ARG_LEADERS) else text


def run(
    argv: list[str],
    timeout_s: float,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """Run a program without a shell, from / (`env`: its environment, else ours); its stdout,
    or PlatformError naming it."""
    import subprocess  # only when a program runs: `lookout status --line` on Linux never does

    try:
        proc = subprocess.run(
            argv,
            input=stdin if stdin is not None else b"",
            capture_output=True,
            timeout=timeout_s,
            env=env,
            cwd="/",
            check=False,
        )
    except FileNotFoundError:
        raise PlatformError(f"{argv[0]} not found on PATH") from None
    except PermissionError:
        raise PlatformError(f"{argv[0]} is not executable") from None
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        tail = f": {err[-1][:200]}" if err else ""
        raise PlatformError(f"{os.path.basename(argv[0])} exited with {proc.returncode}{tail}")
    return proc.stdout.decode("utf-8", "replace")


def capture(argv: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run a program without a shell for a caller that judges the outcome itself: never raises
    on its exit code; its stdout and stderr as text (the installer, launchctl, systemctl)."""
    import subprocess

    return subprocess.run(argv, capture_output=True, text=True, check=False, **kwargs)


def probe(argv: Sequence[str], timeout_s: float) -> str | None:
    """A quick question to a program (no shell, stdin closed): its stdout when it exits 0; None
    when it is missing, fails or takes longer, and the caller takes the safe answer."""
    import subprocess

    try:
        proc = subprocess.run(
            list(argv),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout_s,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None


def last_line(done: subprocess.CompletedProcess[str]) -> str:
    """What a program that failed said last (its output's last line), else its exit code."""
    lines = [ln for ln in (done.stderr + done.stdout).splitlines() if ln.strip()]
    return lines[-1].strip() if lines else f"exit {done.returncode}"


class SoundPlayer:
    """A program that plays one audio file and exits: `name` (pw-play, paplay, aplay, afplay,
    powershell.exe), its path, the formats it plays, whether it takes a volume, and `stdin`:
    the file's bytes go to its standard input (a Windows program cannot open a Linux path).
    The argv is built here from lookout's own words and the file's path, never from a pack."""

    def __init__(
        self,
        name: str,
        program: str,
        formats: tuple[str, ...],
        build: Callable[[str, str, float], list[str]],
        volume: bool,
        via: str = "",
        stdin: bool = False,
    ) -> None:
        self.name = name
        self.program = program
        self.formats = formats
        self._build = build
        self.volume = volume
        self.via = via  # what it plays through: "PipeWire (/run/user/1000/pipewire-0)"
        self.stdin = stdin

    def argv(self, file: str, volume: float) -> list[str]:
        """The command that plays `file` (an absolute path) at `volume` (0.0-1.0)."""
        return self._build(self.program, file, min(1.0, max(0.0, volume)))

    def describe(self) -> str:
        """What doctor says of it: `paplay at /usr/bin/paplay (PulseAudio ...): wav, ogg, mp3;
        volume`."""
        via = f" ({self.via})" if self.via else ""
        volume = "volume" if self.volume else "no volume control (plays at the system's level)"
        return f"{self.name} at {self.program}{via}: {', '.join(self.formats)}; {volume}"


class Service:
    """The bridge as a background service of the platform (launchd); systemd's unit stays in
    install/bridge.py, which is what Linux and WSL use."""

    name = ""

    def path(self) -> Path:
        raise NotImplementedError

    def install(self, python: str, home: Path, dry_run: bool, out: Out) -> None:
        raise NotImplementedError

    def uninstall(self, dry_run: bool, out: Out) -> None:
        raise NotImplementedError


def no_service(manager: str, out: Out) -> None:
    """Say that without `manager` the bridge is the user's to run."""
    from lookout import paths

    out(f"no {manager} here: run the bridge yourself, e.g. in tmux or a login script:")
    out(f"  {paths.tilde(paths.bin_dir() / 'lookout')} bridge")


def service_file(
    target: Path, mark: str, dry_run: bool, then: str, out: Out
) -> tuple[bool, str | None]:
    """Whether to write the service file `target` now, and what it holds (None: nothing). Not
    a file without lookout's `mark` (someone else's: left alone, with a warning), nor in a dry
    run (which says it would write it and `then`)."""
    from lookout.paths import tilde

    try:
        current: str | None = target.read_text(encoding="utf-8")
    except OSError:
        current = None
    if current is not None and mark not in current:
        out(f"warning: {tilde(target)} exists and is not lookout's: left alone")
        return False, current
    if dry_run:
        out(f"dry run: would write {tilde(target)} and {then}")
        return False, current
    return True, current


def service_to_remove(target: Path, mark: str, dry_run: bool, what: str, out: Out) -> bool:
    """Whether to stop and remove the service file `target` now: only lookout's own (with its
    `mark`), and not in a dry run (which says it would)."""
    from lookout.paths import tilde

    try:
        ours = mark in target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if ours and dry_run:
        out(f"would stop and remove {what} {tilde(target)}")
        return False
    return ours


def write_service_file(target: Path, current: str | None, text: str, what: str, out: Out) -> None:
    """Write `text` to `target` unless it holds that already; say so as `wrote <what> <path>`."""
    if current == text:
        return
    from lookout.atomic import atomic_write
    from lookout.paths import tilde

    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, text.encode("utf-8"), 0o644)
    out(f"wrote {what} {tilde(target)}")


class Platform:
    """Linux's answers where /proc gives them (procs.py, shared with the hook); a platform
    overrides what differs and implements what has no default."""

    name = "linux"

    # -- alerts ------------------------------------------------------------------------------

    def alert(self, ch: Mapping[str, Any], msg: dict[str, Any], timeout_s: float) -> Outcome | None:
        """Show (or, msg["update"], replace) the desktop alert `msg`. None: the notify-send path
        of lookout/channels/desktop.py does it. A platform whose alert waits for a click hands the
        process over as msg["focus_proc"] = (proc, bytes already read); its first line is the
        clicked action (CLICKS: Focus)."""
        return None

    def withdraw(self, ref: str, timeout_s: float) -> bool:
        """Take the alert `ref` away; False where the platform cannot."""
        return False

    def notifier(self) -> tuple[bool, str]:
        """(usable, what doctor says: which notifier was found and what it can do)."""
        raise NotImplementedError

    def sound_player(self) -> SoundPlayer | None:
        """The program that plays a sound here, None when none is found."""
        raise NotImplementedError

    def sound_status(self) -> tuple[bool, str]:
        """(a player was found, what doctor says: which one and what it can do, or what to
        install)."""
        raise NotImplementedError

    def raise_terminal(self) -> str | None:
        """Bring the terminal forward after a Focus click (tmux's jump is done by jump/focus);
        what was done, or None."""
        return None

    # -- processes ---------------------------------------------------------------------------

    def alive(self, pid: object, start: object = None, since_ms: object = None) -> bool | None:
        """Whether the agent process `pid` runs: True/False when it can be known, None when no
        pid was recorded. Pid-reuse safe: `start` is the start time the hook recorded (Linux
        clock ticks); `since_ms` the session's first event, which the agent predates."""
        return procs.alive(pid, start)

    def start_time(self, pid: int) -> int | None:
        found = procs.stat(pid)
        return found[3] if found else None

    def children(self, pid: int) -> list[tuple[int, list[str]]]:
        """(pid, argv) of each direct child of `pid`; [] when unknown (which proves nothing)."""
        raise NotImplementedError

    def parent(self, pid: int) -> int | None:
        """The parent of process `pid`, None when unknown (gone, or no way to ask)."""
        found = procs.stat(pid)
        return found[2] if found else None

    def cmdline(self, pid: int) -> list[str] | None:
        """The argv of process `pid` (as the process shows it: it may rewrite its own), None
        when unknown."""
        return procs.cmdline(pid)

    def started_ms(self, pid: int) -> int | None:
        """When a process started (epoch ms, to the second), None when unknown: its start in
        clock ticks after boot (/proc/<pid>/stat) past the boot time (/proc/stat `btime`)."""
        ticks = self.start_time(pid)
        boot = boot_s()
        if ticks is None or boot is None:
            return None
        return boot * 1000 + ticks * 1000 // os.sysconf("SC_CLK_TCK")

    def slept_ms(self) -> int | None:
        """How long the machine has been suspended since it booted, None when unknown: Linux's
        CLOCK_BOOTTIME counts the time asleep, CLOCK_MONOTONIC does not."""
        import time

        try:
            asleep = time.clock_gettime(time.CLOCK_BOOTTIME) - time.monotonic()
        except (AttributeError, OSError):
            return None
        return max(0, int(asleep * 1000))

    # -- the bridge's service ----------------------------------------------------------------

    def bridge_service(self) -> Service | None:
        """The bridge's service where it is not systemd's user unit (None: systemd)."""
        return None


def plain(text: str) -> str:
    """Text for a notifier that takes no markup: no NUL or other control characters (a NUL
    would cut the argv item, an escape sequence would reach a terminal via logs)."""
    return "".join(" " if (ord(c) < 0x20 and c != "\n") or ord(c) == 0x7F else c for c in text)


def group_id(msg: dict[str, Any]) -> str:
    """The id an alert is shown under, so that its update replaces it: what the send returned,
    the episode's sequence id, else one per session and kind."""
    ref = msg.get("ref") or msg.get("sequence_id")
    if isinstance(ref, str) and ref:
        return ref
    import hashlib

    intent = msg.get("intent") or {}
    key = f"{intent.get('session_id')}:{msg.get('kind')}"
    return "lookout-" + hashlib.sha256(key.encode()).hexdigest()[:32]


def boot_s() -> int | None:
    """When the machine booted (epoch seconds, /proc/stat `btime`), None without /proc."""
    try:
        with open(f"{procs.PROC}/stat", "rb") as f:
            for line in f:
                if line.startswith(b"btime "):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None
