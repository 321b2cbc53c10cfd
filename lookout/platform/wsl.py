"""WSL: Linux underneath (/proc, tmux, systemd when WSL runs it), alerts on the Windows desktop:
the Linux notify-send path when a Linux notification daemon answers on D-Bus, else
wsl-notify-send.exe, else a Windows toast through powershell.exe. The toast's script is fixed
(-EncodedCommand); the alert's text reaches it only as JSON data on stdin. Sounds: a Linux
player when a sound server answers (WSLg), else Windows' SoundPlayer through powershell.exe,
with the WAV's bytes on stdin under a fixed script as well."""

from __future__ import annotations

import base64
import json
import os
import shutil

from lookout.platform.base import PlatformError, SoundPlayer, group_id, plain, probe, run
from lookout.platform.linux import Linux, linux_sound_player

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from lookout.platform.base import Outcome

POWERSHELL = "powershell.exe"
WSL_NOTIFY = "wsl-notify-send.exe"
# Windows PowerShell's own AppUserModelID: toasts shown under it need no registration.
APP_ID = r"{1AC14E77-02E7-4E5D-B744-2EB1AE5198B7}\WindowsPowerShell\v1.0\powershell.exe"
# Reads {title, body, tag, remove} from stdin; the text becomes XML text nodes, never markup
# and never code. Tag + Group make an update replace the toast, and let it be removed.
TOAST_SCRIPT = (
    "$ErrorActionPreference = 'Stop'\n"
    "$d = [Console]::In.ReadToEnd() | ConvertFrom-Json\n"
    "$null = [Windows.UI.Notifications.ToastNotificationManager, Windows.UI.Notifications,"
    " ContentType = WindowsRuntime]\n"
    "$null = [Windows.Data.Xml.Dom.XmlDocument, Windows.Data.Xml.Dom.XmlDocument,"
    " ContentType = WindowsRuntime]\n"
    "$m = [Windows.UI.Notifications.ToastNotificationManager]\n"
    f"$app = '{APP_ID}'\n"
    "if ($d.remove) { $m::History.Remove($d.tag, 'lookout', $app); 'removed'; exit 0 }\n"
    "$x = $m::GetTemplateContent([Windows.UI.Notifications.ToastTemplateType]::ToastText02)\n"
    "$t = $x.GetElementsByTagName('text')\n"
    "$null = $t.Item(0).AppendChild($x.CreateTextNode($d.title))\n"
    "$null = $t.Item(1).AppendChild($x.CreateTextNode($d.body))\n"
    "$n = [Windows.UI.Notifications.ToastNotification]::new($x)\n"
    "$n.Tag = $d.tag\n"
    "$n.Group = 'lookout'\n"
    "$m::CreateToastNotifier($app).Show($n)\n"
    "'shown'\n"
)


# Plays the WAV it reads from stdin (System.Media.SoundPlayer: PCM WAV only, no volume).
SOUND_SCRIPT = (
    "$ErrorActionPreference = 'Stop'\n"
    "$m = New-Object System.IO.MemoryStream\n"
    "[Console]::OpenStandardInput().CopyTo($m)\n"
    "$m.Position = 0\n"
    "(New-Object System.Media.SoundPlayer $m).PlaySync()\n"
)


def encoded(script: str) -> str:
    """PowerShell's -EncodedCommand: base64 of the UTF-16LE script."""
    return base64.b64encode(script.encode("utf-16-le")).decode("ascii")


def toast_argv() -> list[str]:
    return powershell_argv(POWERSHELL, TOAST_SCRIPT)


def powershell_argv(program: str, script: str) -> list[str]:
    return [
        program,
        "-NoProfile",
        "-NonInteractive",
        "-ExecutionPolicy",
        "Bypass",
        "-EncodedCommand",
        encoded(script),
    ]


def sound_argv(program: str, file: str, volume: float) -> list[str]:
    return powershell_argv(program, SOUND_SCRIPT)  # the file goes on stdin, never into a script


def toast_data(title: str, body: str, tag: str, remove: bool = False) -> bytes:
    # ASCII JSON (\\u escapes): the Windows console's input code page cannot garble it.
    data = {"title": title, "body": body, "tag": tag[:64], "remove": remove}
    return json.dumps(data, ensure_ascii=True).encode("ascii")


# wsl-notify-send.exe hands its text to go-toast, which writes it into a PowerShell script
# (a double-quoted here-string around CDATA): characters that could end or expand either are
# shown as look-alikes.
_INERT = str.maketrans({"$": "\uff04", "`": "\u02cb", '"': "\uff02", "@": "\uff20"})


def inert(text: str) -> str:
    return text.translate(_INERT).replace("]]>", "]] >")


def linux_daemon() -> bool:
    """Whether a Linux notification daemon answers on the session bus (WSLg, or one the user
    runs): then the Linux path, with its Focus action, is used."""
    if shutil.which("notify-send") is None or not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        return False
    if shutil.which("busctl") is None:
        return False
    return probe(["busctl", "--user", "status", "org.freedesktop.Notifications"], 3) is not None


def path() -> tuple[str, str | None]:
    """Which way alerts go: (linux | wsl-notify-send | powershell | none, program)."""
    if linux_daemon():
        return "linux", shutil.which("notify-send")
    # powershell.exe first: its script is fixed and the text is data, and a tag replaces.
    for name, prog in (("powershell", POWERSHELL), ("wsl-notify-send", WSL_NOTIFY)):
        found = shutil.which(prog)
        if found:
            return name, found
    return "none", None


class WSL(Linux):
    name = "wsl"

    def alert(self, ch: Mapping[str, Any], msg: dict[str, Any], timeout_s: float) -> Outcome | None:
        way, prog = path()
        if way == "linux":
            return None
        if prog is None:
            raise PlatformError(
                "no way to the Windows desktop: no Linux notification daemon, no"
                f" {WSL_NOTIFY}, no {POWERSHELL} on PATH (WSL interop off?)"
            )
        title = plain(msg["title"])
        body = plain(msg["body"]) or title
        if way == "wsl-notify-send":
            if msg.get("update"):
                return "skipped", f"{WSL_NOTIFY} cannot replace a notification", None
            argv = [prog, f"--category={inert(title)}", "--", inert(body)]
            run(argv, timeout_s)
            return "sent", WSL_NOTIFY, None
        tag = group_id(msg)[:64]
        run([prog, *toast_argv()[1:]], timeout_s, stdin=toast_data(title, body, tag))
        return "sent", f"Windows toast (powershell.exe) tag {tag}", tag

    def withdraw(self, ref: str, timeout_s: float) -> bool:
        way, prog = path()
        if way != "powershell" or prog is None:
            return False
        run([prog, *toast_argv()[1:]], timeout_s, stdin=toast_data("", "", ref, remove=True))
        return True

    def notifier(self) -> tuple[bool, str]:
        way, prog = path()
        if way == "linux":
            ok, detail = super().notifier()
            return ok, f"WSL, Linux notification daemon: {detail} (Focus action)"
        if way == "wsl-notify-send":
            return True, f"WSL, {WSL_NOTIFY} at {prog}: Windows toasts, no actions, no replacement"
        if way == "powershell":
            return True, (
                f"WSL, Windows toast through {prog}: replaces by tag, no actions"
                " (lookout jump switches tmux)"
            )
        return False, f"WSL: no Linux notification daemon, no {WSL_NOTIFY}, no {POWERSHELL}"

    def sound_player(self) -> SoundPlayer | None:
        linux = linux_sound_player(server_only=True)
        if linux is not None:
            return linux  # WSLg's PulseAudio server (PULSE_SERVER), or one the user runs
        prog = shutil.which(POWERSHELL)
        if prog is not None:
            return SoundPlayer(
                POWERSHELL, prog, ("wav",), sound_argv, False, "Windows SoundPlayer", stdin=True
            )
        return linux_sound_player()  # aplay and the like may still reach a device

    def sound_status(self) -> tuple[bool, str]:
        player = self.sound_player()
        if player is None:
            return False, (
                f"WSL: no sound server (PULSE_SERVER, as WSLg sets it) and no {POWERSHELL} on"
                " PATH (WSL interop off?)"
            )
        return True, f"WSL, {player.describe()}"
