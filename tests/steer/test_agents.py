"""What lookout reads off Claude Code's screen before it types (screens captured from the real
2.1.332 in tmux: tests/fixtures/steer/), and how each agent's program is found and started."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lookout.steer import agents
from tests.helpers import FIXTURES

SCREENS = FIXTURES / "steer"


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
    assert agents.claude_input(text) == shown


def test_dim_text_in_the_box_is_a_placeholder_not_a_draft() -> None:
    # After a failed turn (a 429), as `capture-pane -e` gives it: the cursor drawn reverse over
    # the placeholder's "R", the rest dim (ESC[0;2m). Read without escapes it looks typed.
    styled = (SCREENS / "claude-2.1.332-after-429-styled.txt").read_text()
    assert "\x1b[7mR\x1b[0;2m" in styled
    assert agents.claude_input(styled) == ""
    plain = "".join(text + "\n" for text, _ in agents.styled_lines(styled))
    assert agents.claude_input(plain) == "Resend your message to try again"


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
    assert agents.claude_input(f"{rule}\n\u276f {box}\n{rule}\n") == shown


def test_no_rules_no_box() -> None:
    assert agents.claude_input("") is None
    assert agents.claude_input("\u276f hello\n") is None


def test_each_prompt_is_one_argument_never_an_option() -> None:
    assert agents.KEYS["claude"].prompt_argv("-p rm") == ["--", "-p rm"]
    assert agents.KEYS["codex"].prompt_argv("--x") == ["--", "--x"]
    assert agents.KEYS["gemini"].prompt_argv("-y go") == ["--prompt-interactive=-y go"]
    assert agents.KEYS["opencode"].prompt_argv("a b") == ["--prompt=a b"]


def test_programs_are_found_as_the_installer_finds_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("claude", "codex"):
        (bin_dir / name).write_text("#!/bin/sh\n")
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("LOOKOUT_CODEX", raising=False)
    assert agents.program(agents.KEYS["claude"]) == str(bin_dir / "claude")
    assert agents.program(agents.KEYS["gemini"]) is None
    assert agents.program(agents.KEYS["codex"]) == str(bin_dir / "codex")
    monkeypatch.setenv("LOOKOUT_CODEX", "/opt/codex/bin/codex")  # as install.py reads it
    assert agents.program(agents.KEYS["codex"]) == "/opt/codex/bin/codex"
    monkeypatch.setenv("LOOKOUT_CODEX", "")
    assert agents.program(agents.KEYS["codex"]) is None
    assert os.environ["PATH"] == str(bin_dir)
