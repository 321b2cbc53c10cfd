"""The WSL module against stand-ins: a Windows toast through powershell.exe (a fixed
-EncodedCommand script, the text as JSON data on stdin, a tag that an update replaces),
wsl-notify-send.exe when PowerShell is not reachable, the Linux path when a Linux notification
daemon answers; doctor says which."""

from __future__ import annotations

import base64
import json
import os
import shutil
from pathlib import Path

import pytest

from lookout.channels import desktop, registry
from lookout.platform import current, wsl
from tests.platform.standins import standins

CH = {"type": "desktop", "enabled": True}
SEQ = "lookout-0123456789abcdef0123456789abcdef"
EVIL = "$(Remove-Item C:\\ -Recurse) `whoami` \"@ ]]> '; <toast>"


def msg(title: str = "demo · needs permission", body: str = "Bash: ls", **more: object) -> dict:
    return {
        "title": title,
        "body": body,
        "kind": "permission",
        "values": {},
        "intent": {"session_id": "s-1", "kind": "permission"},
        "sequence_id": SEQ,
        **more,
    }


@pytest.fixture(autouse=True)
def no_linux_daemon(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)


def test_a_toast_through_powershell_gets_the_text_as_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = standins(tmp_path, monkeypatch, "wsl", "powershell.exe", "wsl-notify-send.exe")
    assert registry.send(CH, msg(EVIL, EVIL), 10) == (
        "sent",
        f"Windows toast (powershell.exe) tag {SEQ}",
        SEQ,
    )
    (call,) = box.calls("powershell.exe")
    argv = call["argv"]
    assert argv[:-1] == [
        "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-EncodedCommand"
    ]  # fmt: skip
    script = base64.b64decode(argv[-1]).decode("utf-16-le")
    assert script == wsl.TOAST_SCRIPT
    assert "Remove-Item" not in script and "whoami" not in script
    data = json.loads(str(call["stdin"]))
    assert data == {"title": EVIL, "body": EVIL, "tag": SEQ, "remove": False}
    assert str(call["stdin"]).isascii()
    assert box.calls("wsl-notify-send.exe") == []


def test_an_update_replaces_the_toast_by_tag_and_withdraw_removes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = standins(tmp_path, monkeypatch, "wsl", "powershell.exe")
    ref = registry.send(CH, msg(), 10)[2]
    update = msg("demo · handled", "answered", update=True, ref=ref)
    update.pop("sequence_id")
    assert registry.send(CH, update, 10)[2] == ref
    assert current.get().withdraw(str(ref), 10) is True
    sent = [json.loads(str(c["stdin"])) for c in box.calls("powershell.exe")]
    assert [(d["tag"], d["title"], d["remove"]) for d in sent] == [
        (SEQ, "demo · needs permission", False),
        (SEQ, "demo · handled", False),
        (SEQ, "", True),
    ]


def test_wsl_notify_send_gets_inert_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = standins(tmp_path, monkeypatch, "wsl", "wsl-notify-send.exe")
    monkeypatch.setenv("PATH", str(tmp_path / "standin-bin"))  # no powershell.exe reachable
    assert registry.send(CH, msg("-p " + EVIL, "-x " + EVIL), 10) == (
        "sent",
        "wsl-notify-send.exe",
        None,
    )
    (argv,) = box.argvs("wsl-notify-send.exe")
    assert argv[0].startswith("--category=-p ") and argv[1] == "--"
    for text in (argv[0], argv[2]):
        assert not set('$`"@') & set(text) and "]]>" not in text
    assert "Remove-Item" in argv[2]  # shown, as text


def test_the_linux_path_when_a_linux_daemon_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = standins(tmp_path, monkeypatch, "wsl", "powershell.exe")
    fake = tmp_path / "standin-bin"
    for name, body in (("notify-send", "echo 7"), ("busctl", "exit 0")):
        (fake / name).write_text(f"#!/bin/sh\n{body}\n")
        (fake / name).chmod(0o755)
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={tmp_path}/bus")
    monkeypatch.setattr(
        shutil, "which", lambda n: None if n == "stdbuf" else os.path.join(fake, n)
    )
    assert registry.send(CH, msg(), 10) == ("sent", "notify-send id 7", "7")
    assert box.calls("powershell.exe") == []
    ok, detail = desktop.notifier()
    assert ok and detail.startswith("WSL, Linux notification daemon: notify-send at ")


@pytest.mark.parametrize(
    ("installed", "says"),
    [
        (("powershell.exe", "wsl-notify-send.exe"), "WSL, Windows toast through "),
        (("wsl-notify-send.exe",), "WSL, wsl-notify-send.exe at "),
        ((), "WSL: no Linux notification daemon, no wsl-notify-send.exe, no powershell.exe"),
    ],
)
def test_doctor_says_which_path(
    installed: tuple[str, ...], says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    standins(tmp_path, monkeypatch, "wsl", *installed)
    monkeypatch.setenv("PATH", str(tmp_path / "standin-bin"))
    ok, detail = desktop.notifier()
    assert ok is bool(installed) and detail.startswith(says)
