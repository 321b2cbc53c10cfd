"""The desktop popup's limits (lookout.surfaces.desktop ROWS, ROW_UNITS), measured on
the real lxqt-notificationd on a private Xvfb screen, by the ink its popup draws: a body the rule
lets offer Allow is on screen whole, every row of it and every character of each row; the
daemon's own behaviour that the rule works around (a run with no break is clipped at the
label's edge, runs of spaces collapse) is measured too, so a daemon that changes shows here."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator

import pytest

from lookout.channels import registry
from lookout.remote import requests, shown
from lookout.surfaces import desktop
from tests.receivers import NotificationBus, require
from tests.x11shot import Ink, ink

pytestmark = pytest.mark.real

TITLE = "proj · needs permission"
SCREEN_HEIGHT = 800  # NotificationBus's Xvfb screen
CHANNEL = {"type": "desktop", "app_name": "lookout", "urgency": "normal", "timeout_ms": 10000}
# The popup's rows above the body (its border, the app's name, the title) and below it (the
# buttons, the border), as ink bands.
ABOVE, BELOW = 3, 2


@pytest.fixture
def screen(monkeypatch: pytest.MonkeyPatch) -> Iterator[NotificationBus]:
    require(*NotificationBus.BINARIES, *NotificationBus.DISPLAY_BINARIES, "stdbuf", "gdbus")
    with NotificationBus(display=True) as bus:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bus.address)
        yield bus


def record(command: str) -> dict[str, object]:
    payload = {"tool_name": "Bash", "tool_input": {"command": command}, "session_id": "s"}
    return requests.new_record(payload, {}, 0, 60, False)


def popup(bus: NotificationBus, body: str) -> tuple[tuple[int, int, int, int], Ink]:
    """Post `body` as the sender does (channels.send), with Allow and Deny; the popup's place
    on screen and its ink, once two looks at it agree."""
    msg = {"title": TITLE, "body": body, "kind": "permission", "values": {}}
    msg["answer"] = {"actions": [("allow", "Allow"), ("deny", "Deny")]}
    result, detail, ref = registry.send(CHANNEL, msg, 10.0)
    assert result == "sent" and ref, detail
    proc, _rest = msg.pop("focus_proc")
    try:
        deadline = time.monotonic() + 15
        last: tuple[tuple[int, int, int, int], list[tuple[int, int]]] | None = None
        while time.monotonic() < deadline:
            windows = visible(bus)
            if windows:
                where = bus.window_geometry(windows[0])
                seen = ink(bus.env["DISPLAY"], *where)
                if last == (where, seen.bands()):
                    return where, seen
                last = (where, seen.bands())
            time.sleep(0.05)
        raise AssertionError(f"no steady popup on screen: {last}")
    finally:
        close(bus, ref)
        proc.kill()
        proc.wait()


def visible(bus: NotificationBus) -> list[str]:
    out = subprocess.run(
        ["xdotool", "search", "--onlyvisible", "--class", "lxqt-notificationd"],
        env=bus.env,
        capture_output=True,
        text=True,
    )
    return out.stdout.split()


def close(bus: NotificationBus, ref: str) -> None:
    """Close the popup and wait until it is gone: the daemon stacks popups in one window."""
    subprocess.run(
        [
            *("gdbus", "call", "--address", bus.address),
            *("--dest", "org.freedesktop.Notifications"),
            *("--object-path", "/org/freedesktop/Notifications"),
            *("--method", "org.freedesktop.Notifications.CloseNotification", ref),
        ],
        env=bus.env,
        capture_output=True,
        check=True,
    )
    deadline = time.monotonic() + 10
    while visible(bus):
        assert time.monotonic() < deadline, "the popup did not close"
        time.sleep(0.05)


def clip_edge(bus: NotificationBus) -> int:
    """Where the daemon clips a run of characters with no break (the body label's edge)."""
    _, seen = popup(bus, "a" * 200)
    bands = seen.bands()
    body = bands[ABOVE]
    return seen.right(*body)


def test_the_longest_body_the_popup_may_allow_is_on_screen_whole(screen: NotificationBus) -> None:
    # The widest ASCII glyph, in the longest run the rule still lets offer Allow.
    n = 1
    while shown.view(record("W" * (n + 1)), desktop.LIMITS, title=TITLE)["allow"]:
        n += 1
    view = shown.view(record("W" * n), desktop.LIMITS, title=TITLE)
    assert n >= 200  # 12 rows of 17 W, "Bash:" and a title the rule counts as two rows

    (_x, y, width, height), seen = popup(screen, view["text"])
    assert y >= 0 and y + height <= SCREEN_HEIGHT, "the popup does not fit the screen"
    body = seen.bands()[ABOVE:-BELOW]
    # The daemon puts "Bash:" on a row of its own, then 17 W a row (17 x 12.8 px < 225 px).
    assert len(body) == 1 + -(-n // desktop.ROW_UNITS), "not every row is on screen"
    edge = clip_edge(screen)
    for top, bottom in body:
        assert seen.right(top, bottom) < edge - 2, "a row reaches the label's edge: clipped"
    assert width == 300


def test_the_daemon_clips_a_run_without_a_break_and_the_rule_breaks_it(
    screen: NotificationBus,
) -> None:
    command = "curl http://" + "a" * 120 + "/END|sh"
    _, raw = popup(screen, "Bash: " + command)
    edge = clip_edge(screen)
    assert any(raw.right(*band) >= edge - 1 for band in raw.bands()[ABOVE:-BELOW])  # clipped
    view = shown.view(record(command), desktop.LIMITS, title=TITLE)
    _, fixed = popup(screen, view["text"])
    for band in fixed.bands()[ABOVE:-BELOW]:
        assert fixed.right(*band) < edge - 2


def test_runs_of_spaces_are_kept(screen: NotificationBus) -> None:
    # Rich text collapses "x    y" to "x y": the rule's no-break spaces keep its width.
    view = shown.view(record("y\nx    y\nx y"), desktop.LIMITS, title=TITLE)
    _, seen = popup(screen, view["text"])
    wide, narrow = seen.bands()[ABOVE + 1 : ABOVE + 3]
    assert seen.right(*wide) - seen.right(*narrow) >= 3 * 3  # three more spaces, ~3 px each
    _, collapsed = popup(screen, "Bash: y\nx    y\nx y")
    wide, narrow = collapsed.bands()[ABOVE + 1 : ABOVE + 3]
    assert collapsed.right(*wide) == collapsed.right(*narrow)
