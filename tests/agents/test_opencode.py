"""What lookout reads off OpenCode's screen before it types (its STEER's read_input; screens
captured with `capture-pane -e` from the real 1.18.33 in tmux: tests/fixtures/steer/)."""

from __future__ import annotations

import pytest

from lookout.steer import agents
from tests.helpers import FIXTURES

SCREENS = FIXTURES / "steer"


def opencode_input(text: str) -> str | None:
    keys = agents.keys("opencode")
    assert keys is not None and keys.read_input is not None
    assert keys.queues_while_working is True  # so `say` types while it works: read the box
    return keys.read_input(text)


@pytest.mark.parametrize(
    ("screen", "shown"),
    [
        ("idle-styled", ""),  # its placeholder (Ask anything… "…") is no draft
        ("working-styled", ""),
        ("working-sidebar-styled", ""),  # its sidebar's lines stand right of the box
        ("queued", ""),  # a queued message right above the box is not in it
        ("draft-styled", "queued words"),
        ("permission-styled", None),  # its dialog takes the box's place
    ],
)
def test_opencode_input_box(screen: str, shown: str | None) -> None:
    text = (SCREENS / f"opencode-1.18.33-{screen}.txt").read_text()
    assert opencode_input(text) == shown


def test_a_screen_without_its_box_at_the_bottom_is_no_input_box() -> None:
    # Fail closed: a box scrolled up under more lines, or a screen that is not OpenCode's.
    idle = (SCREENS / "opencode-1.18.33-idle-styled.txt").read_text()
    assert opencode_input(idle + "\n".join(["more"] * 4)) is None
    assert opencode_input("$ opencode\nbash: opencode: command not found\n") is None
    assert opencode_input("") is None
