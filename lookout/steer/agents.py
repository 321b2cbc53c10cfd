"""How to type into, interrupt and start each agent, as checked with its real client (docs/steer.md
has the table): whether typing during a turn is queued for the agent (else `say` refuses while it
works), the key that interrupts a turn, whether a newline typed into its input box stays in the
message, how its own program is found and given a first prompt (as data, never through a shell),
and for Claude Code how its screen shows an open dialog or a draft. Pure."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


@dataclass(frozen=True)
class Keys:
    name: str
    title: str
    checked: str  # the client version the facts below were checked with
    # Typing while a turn runs: True where the client queues it for the agent (at its next step
    # or the turn's end), None where it was not checked (then `say` waits for idle).
    queues_while_working: bool | None
    interrupt: tuple[str, ...] | None  # the tmux keys that stop a turn (None: not checked)
    multiline: bool  # a newline typed (send-keys -l) stays in the message, Enter sends it
    # The prompt as data: the argv after the program that starts a session with it.
    prompt_argv: Callable[[str], list[str]]
    program: str  # the executable's name on PATH
    # Whether its hooks report a stopped turn (else the status says working after interrupt
    # until the next prompt).
    reports_interrupt: bool
    # How long after the pane shows the text Enter comes: an input box that reads keys arriving
    # together as a paste takes an Enter among them for a newline (Gemini CLI: ~40 ms).
    enter_after_s: float = 0.3
    socket: bool = False  # Claude Code's inbox socket (messagingSocketPath)
    # Its interrupt key in an open dialog answers it as No, as checked with the real client
    # (`interrupt` then presses it and says so); False: not checked, `interrupt` refuses there.
    esc_denies: bool = False


def _after_options(prompt: str) -> list[str]:
    return ["--", prompt]  # past `--`, a prompt starting with "-" is no option


def _gemini(prompt: str) -> list[str]:
    return [f"--prompt-interactive={prompt}"]


def _opencode(prompt: str) -> list[str]:
    return [f"--prompt={prompt}"]


KEYS: dict[str, Keys] = {
    "claude": Keys(
        "claude",
        "Claude Code",
        "2.1.332",
        queues_while_working=True,  # given to the model at its next tool call, as the user's
        interrupt=("Escape",),
        multiline=True,  # LF (C-j) inserts a newline in its input box
        prompt_argv=_after_options,
        program="claude",
        reports_interrupt=True,  # its registry turns idle; lookout reconciles from it
        enter_after_s=0.05,
        socket=True,
        esc_denies=True,  # a permission dialog: "User rejected", the turn stops (tests/e2e)
    ),
    "gemini": Keys(
        "gemini",
        "Gemini CLI",
        "0.61.0",
        # "Queued (press ↑ to edit)", sent when the turn ends (tests/e2e/test_steer.py)
        queues_while_working=True,
        interrupt=("Escape",),  # "Request cancelled."
        multiline=False,
        prompt_argv=_gemini,
        program="gemini",
        reports_interrupt=False,  # no hook fires for a cancelled request
    ),
    "codex": Keys(
        "codex",
        "OpenAI Codex",
        "0.169.0",
        # Its screen says "Messages to be submitted after next tool call", but that was never
        # checked against an approval prompt that is drawn before its hook is recorded (it takes
        # single letters: `y`, `a`): not checked, so `say` waits for idle.
        queues_while_working=None,
        interrupt=("Escape",),  # "Conversation interrupted" (and sends what was queued)
        multiline=True,  # a typed LF stays a newline in its input box
        prompt_argv=_after_options,
        program="codex",
        reports_interrupt=True,  # its Interrupt hook (0.169.0): the session shows idle
    ),
    "opencode": Keys(
        "opencode",
        "OpenCode",
        "1.18.33",
        # Its screen shows "QUEUED", but a permission dialog drawn before its hook is recorded
        # was not checked with the real client: not checked, so `say` waits for idle.
        queues_while_working=None,
        interrupt=("Escape", "Escape"),  # "esc again to interrupt"
        multiline=False,
        prompt_argv=_opencode,
        program="opencode",
        reports_interrupt=True,  # as a failed turn (StopFailure: attention error)
    ),
}


def keys(agent: str) -> Keys | None:
    return KEYS.get(agent)


def program(agent: Keys) -> str | None:
    """The agent's own executable, found as the installer finds it: $LOOKOUT_CODEX for Codex,
    else its name on PATH. None when there is none."""
    if agent.name == "codex":
        named = os.environ.get("LOOKOUT_CODEX")
        if named is not None:
            return named or None
    found = shutil.which(agent.program)
    return os.path.abspath(found) if found else None


# -- Claude Code's screen ----------------------------------------------------------------------

_RULE = "─"
_PROMPT = "\u276f"  # its input box's mark (HEAVY RIGHT-POINTING ANGLE QUOTATION MARK ORNAMENT)
# What its input box shows while empty (not a draft of the user's).
_PLACEHOLDERS = ("Press up to edit queued messages",)


def _rule(line: str) -> bool:
    text = line.strip()
    return len(text) >= 10 and set(text) == {_RULE}


def claude_input(screen: str) -> str | None:
    """The text in Claude Code's input box ("" when empty), or None when the screen shows no
    input box (a dialog is open, or it is not Claude Code's prompt). The box is the last block
    between two rules that starts with its prompt mark in the first column."""
    lines = screen.rstrip("\n").split("\n")
    rules = [i for i, line in enumerate(lines) if _rule(line)]
    if len(rules) < 2:
        return None
    top, bottom = rules[-2], rules[-1]
    box = lines[top + 1 : bottom]
    if not box or not box[0].startswith(_PROMPT):
        return None
    text = "\n".join([box[0][1:].strip(), *(line.strip() for line in box[1:])]).strip()
    return "" if text in _PLACEHOLDERS else text
