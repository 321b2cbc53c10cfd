"""What lookout reads off Claude Code's screen before it types (its STEER's read_input; screens
captured from the real 2.1.332 in tmux: tests/fixtures/steer/)."""

from __future__ import annotations

import pytest

from lookout.steer import agents, screen
from tests.helpers import FIXTURES

SCREENS = FIXTURES / "steer"


def claude_input(text: str) -> str | None:
    keys = agents.keys("claude")
    assert keys is not None and keys.read_input is not None
    return keys.read_input(text)


@pytest.mark.parametrize(
    ("screen", "shown"),
    [
        ("idle", ""),
        ("working", ""),
        ("queued", ""),  # the queue's hint is no draft
        ("draft", "a draft\nof two lines"),
        ("permission", None),  # a dialog: no input box at all
    ],
)
def test_claude_input_box(screen: str, shown: str | None) -> None:
    text = (SCREENS / f"claude-2.1.332-{screen}.txt").read_text()
    assert claude_input(text) == shown


def test_dim_text_in_the_box_is_a_placeholder_not_a_draft() -> None:
    # After a failed turn (a 429), as `capture-pane -e` gives it: the cursor drawn reverse over
    # the placeholder's "R", the rest dim (ESC[0;2m). Read without escapes it looks typed.
    styled = (SCREENS / "claude-2.1.332-after-429-styled.txt").read_text()
    assert "\x1b[7mR\x1b[0;2m" in styled
    assert claude_input(styled) == ""
    plain = "".join(text + "\n" for text, _ in screen.styled_lines(styled))
    assert claude_input(plain) == "Resend your message to try again"


@pytest.mark.parametrize(
    ("box", "shown"),
    [
        ("hello\x1b[7m \x1b[0m", "hello"),  # a draft, the cursor after it
        ("hel\x1b[7ml\x1b[0mo", "hello"),  # the cursor inside it
        ("\x1b[38;2;2;2;2mred\x1b[39m \x1b[38;5;2mtext", "red text"),  # colours, no dim
        ("\x1b[2mdim\x1b[22m typed", "typed"),
        ("\x1b]8;;http://x\x07link\x1b]8;;\x07 \x1b[1;2mhint\x1b[m ok", "link  ok"),
    ],
)
def test_only_dim_text_is_left_out(box: str, shown: str) -> None:
    rule = "\u2500" * 20
    assert claude_input(f"{rule}\n\u276f {box}\n{rule}\n") == shown


def test_no_rules_no_box() -> None:
    assert claude_input("") is None
    assert claude_input("\u276f hello\n") is None
