"""Linux: notify-send over D-Bus (in channels/desktop.py), /proc for process truth, systemd's
user unit for the bridge (in install/bridge.py), sounds through pw-play, paplay or aplay. Base's
defaults are Linux's answers."""

from __future__ import annotations

import os

from lookout.platform.base import Platform, SoundPlayer

PROC = "/proc"


class Linux(Platform):
    name = "linux"

    def notifier(self) -> tuple[bool, str]:
        return notify_send_status()

    def children(self, pid: int) -> list[tuple[int, list[str]]]:
        return proc_children(pid)

    def sound_player(self) -> SoundPlayer | None:
        return linux_sound_player()

    def sound_status(self) -> tuple[bool, str]:
        player = self.sound_player()
        if player is None:
            return False, NO_PLAYER
        return True, player.describe()


def notify_send_status() -> tuple[bool, str]:
    import shutil  # doctor's question: `lookout status --line` never asks it

    send = shutil.which("notify-send")
    bus = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    socket_ok = bool(runtime) and os.path.exists(os.path.join(runtime or "", "bus"))
    parts = [f"notify-send {'at ' + send if send else 'not found'}"]
    parts.append("D-Bus session bus " + ("set" if bus else "found" if socket_ok else "missing"))
    return bool(send) and bool(bus or socket_ok), ", ".join(parts)


def proc_children(pid: int) -> list[tuple[int, list[str]]]:
    """Direct children of `pid` with their argv, from /proc."""
    kids: list[int] = []
    try:
        tasks = os.listdir(f"{PROC}/{pid}/task")
    except OSError:
        return []
    for task in tasks:
        try:
            with open(f"{PROC}/{pid}/task/{task}/children", "rb") as f:
                kids += [int(x) for x in f.read().split()]
        except (OSError, ValueError):
            continue
    found = []
    for child in kids:
        try:
            with open(f"{PROC}/{child}/cmdline", "rb") as f:
                argv = f.read().decode("utf-8", "replace").split("\0")
        except OSError:
            continue
        found.append((child, argv))
    return found


# -- sounds ------------------------------------------------------------------------------------

# libsndfile (pw-play's and paplay's reader) reads MP3 from its version 1.1 on.
SNDFILE_FORMATS = ("wav", "ogg", "mp3")
NO_PLAYER = (
    "no sound player found: pw-play, paplay or aplay (apt install pipewire-bin,"
    " pulseaudio-utils or alsa-utils)"
)


def pw_play_argv(program: str, file: str, volume: float) -> list[str]:
    return [program, f"--volume={volume:.2f}", file]  # the stream's volume, 1.0 = as recorded


def paplay_argv(program: str, file: str, volume: float) -> list[str]:
    return [program, f"--volume={round(volume * 65536)}", file]  # linear, 65536 = 100 %


def aplay_argv(program: str, file: str, volume: float) -> list[str]:
    return [program, "-q", file]  # aplay has no volume: the mixer's level


def pipewire_socket() -> str | None:
    """The PipeWire socket pw-play would connect to, when it is there."""
    runtime = os.environ.get("XDG_RUNTIME_DIR") or ""
    name = os.environ.get("PIPEWIRE_REMOTE") or "pipewire-0"
    path = name if name.startswith("/") else os.path.join(runtime, name) if runtime else ""
    return path if path and os.path.exists(path) else None


def pulse_server() -> str | None:
    """Where paplay finds a PulseAudio server (PipeWire's pipewire-pulse is one), if anywhere."""
    if os.environ.get("PULSE_SERVER"):
        return "PULSE_SERVER"
    runtime = os.environ.get("XDG_RUNTIME_DIR") or ""
    native = os.path.join(runtime, "pulse", "native") if runtime else ""
    return native if native and os.path.exists(native) else None


def linux_sound_player(server_only: bool = False) -> SoundPlayer | None:
    """pw-play when PipeWire's socket is there, paplay when a PulseAudio server is, else aplay
    (ALSA, which a desktop routes to its sound server); with no server seen, the first player
    found (it may know a server lookout does not see). `server_only`: only a player whose
    server was seen."""
    import shutil

    pw, pa, al = (shutil.which(name) for name in ("pw-play", "paplay", "aplay"))
    pipewire, pulse = pipewire_socket(), pulse_server()
    if pw and pipewire:
        return SoundPlayer(
            "pw-play", pw, SNDFILE_FORMATS, pw_play_argv, True, f"PipeWire {pipewire}"
        )
    if pa and pulse:
        return SoundPlayer("paplay", pa, SNDFILE_FORMATS, paplay_argv, True, f"PulseAudio {pulse}")
    if server_only:
        return None
    if al:
        return SoundPlayer("aplay", al, ("wav",), aplay_argv, False, "ALSA")
    if pw:
        return SoundPlayer(
            "pw-play", pw, SNDFILE_FORMATS, pw_play_argv, True, "no PipeWire socket seen"
        )
    if pa:
        return SoundPlayer(
            "paplay", pa, SNDFILE_FORMATS, paplay_argv, True, "no PulseAudio server seen"
        )
    return None
