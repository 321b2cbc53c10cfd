"""Playing one file through the platform's player: argv only (no shell), started from /, in a
session of its own, and never waited on past its deadline (the player and anything it started
are killed then): a hung sound server costs one sound, never the sender."""

from __future__ import annotations

import os
import signal
import subprocess

from lookout.platform.base import plain
from lookout.sound.pack import SOUND_MAX

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from lookout.platform.base import SoundPlayer

    Outcome = tuple[str, str, str | None]  # (sent | failed | skipped, detail, None)


def find_player() -> SoundPlayer | None:
    """The program that plays sounds here (the platform layer's choice), or None."""
    from lookout.platform import current

    return current.get().sound_player()


def play(path: Path, volume: float, player: SoundPlayer, timeout_s: float) -> Outcome:
    """Play `path` (a checked pack file) at `volume`; back when the player has exited, or at
    `timeout_s` with the player stopped."""
    argv = player.argv(str(path), volume)
    try:
        data = _contents(path) if player.stdin else None
    except OSError as exc:
        return "failed", f"cannot read {path.name}: {exc.strerror or exc}", None
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd="/",
            start_new_session=True,  # its whole group is stopped at the deadline
        )
    except FileNotFoundError:
        return "failed", f"{player.name} not found at {player.program}", None
    except OSError as exc:
        return "failed", f"cannot run {player.name}: {exc.strerror or exc}", None
    try:
        _, err = proc.communicate(data, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _stop(proc)
        return (
            "failed",
            (
                f"{player.name} still playing after {timeout_s:g}s: stopped (a hung sound server,"
                " or a sound longer than timeout_ms)"
            ),
            None,
        )
    if proc.returncode != 0:
        lines = plain(err.decode("utf-8", "replace")).strip().splitlines()
        tail = f": {lines[-1][:200]}" if lines else ""
        return "failed", f"{player.name} exited with {proc.returncode}{tail}", None
    return "sent", f"played through {player.name}", None


def _contents(path: Path) -> bytes:
    """A pack file's bytes for a player's stdin: checked again here, since the pack's check ran
    earlier (a file swapped for a FIFO meanwhile must not hang the sender)."""
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file")
        data = fh.read(SOUND_MAX + 1)
    if len(data) > SOUND_MAX:
        raise OSError(0, "over 1 MiB")
    return data


def _stop(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()
    try:
        proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        pass  # a grandchild that left the group holds stderr: not waited for
