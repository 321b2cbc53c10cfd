"""Linux: notify-send over D-Bus (in channels/desktop.py), /proc for process truth, systemd's
user unit for the bridge (in install/bridge.py). Base's defaults are Linux's answers."""

from __future__ import annotations

import os

from lookout.platform.base import Platform

PROC = "/proc"


class Linux(Platform):
    name = "linux"

    def notifier(self) -> tuple[bool, str]:
        return notify_send_status()

    def children(self, pid: int) -> list[tuple[int, list[str]]]:
        return proc_children(pid)


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
