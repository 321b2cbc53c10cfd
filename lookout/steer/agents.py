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
    # Whether its hooks report a stopped turn (else `interrupt` records the stop itself: idle,
    # evidence steer, until its next hook).
    reports_interrupt: bool
    # How long after the pane shows the text Enter comes: an input box that reads keys arriving
    # together as a paste takes an Enter among them for a newline (Gemini CLI: ~40 ms).
    enter_after_s: float = 0.3
    socket: bool = False  # Claude Code's inbox socket (messagingSocketPath)
    # Its interrupt key in an open dialog answers it as No, as checked with the real client
    # (`interrupt` then presses it and says so); False: not checked, `interrupt` refuses there.
    esc_denies: bool = False
    # The names its process goes by in a pane (tmux's #{pane_current_command}; or, run by an
    # interpreter below, its script's name): a pane whose session has no recorded pid is typed
    # into only while it runs one of these (steer/pane.not_agent).
    processes: tuple[str, ...] = ()
    # Its prompt hook fires as soon as a message typed during a turn is queued, not when the
    # model takes it (Claude Code 2.1.332: the pane shows "Queued"): then `say` reports queued.
    prompt_hook_when_queued: bool = False


# What runs an agent installed from npm (`node .../bin/codex.js`, `#!/usr/bin/env node`): the
# pane shows the interpreter, and its script names the agent.
INTERPRETERS = frozenset({"node", "nodejs", "bun", "deno"})


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
        processes=("claude",),
        reports_interrupt=True,  # its registry turns idle; lookout reconciles from it
        enter_after_s=0.05,
        socket=True,
        esc_denies=True,  # a permission dialog: "User rejected", the turn stops (tests/e2e)
        prompt_hook_when_queued=True,  # UserPromptSubmit as it shows "Queued" (tests/e2e)
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
        processes=("gemini",),
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
        processes=("codex",),
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
        processes=("opencode",),
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
    between two rules that starts with its prompt mark in the first column. `screen` may hold
    the escapes of `capture-pane -e`: what the box shows dim is its placeholder ("Resend your
    message to try again" after a failed turn), no draft of the user's."""
    lines = styled_lines(screen)
    plain = [line for line, _ in lines]
    rules = [i for i, line in enumerate(plain) if _rule(line)]
    if len(rules) < 2:
        return None
    top, bottom = rules[-2], rules[-1]
    box = lines[top + 1 : bottom]
    if not box or not box[0][0].startswith(_PROMPT):
        return None
    first = box[0][1].strip()
    first = first[1:] if first.startswith(_PROMPT) else first
    text = "\n".join([first.strip(), *(kept.strip() for _, kept in box[1:])]).strip()
    return "" if text in _PLACEHOLDERS else text


# -- what a screen with escapes shows (capture-pane -e) -----------------------------------------

_ESC = "\x1b"
# SGR parameters that take more: 38/48/58 (a colour) then 5;N or 2;R;G;B.
_COLOUR = ("38", "48", "58")


class _Pen:
    """The attributes a `capture-pane -e` screen draws with (tmux carries them across lines)."""

    def __init__(self) -> None:
        self.dim = False
        self.reverse = False

    def sgr(self, params: str) -> None:
        parts = params.split(";") if params else ["0"]
        i = 0
        while i < len(parts):
            p = parts[i]
            if p in _COLOUR and i + 1 < len(parts):
                i += 3 if parts[i + 1] == "5" else 5 if parts[i + 1] == "2" else 1
                continue
            if p in ("", "0"):
                self.dim = self.reverse = False
            elif p == "2":
                self.dim = True
            elif p == "22":
                self.dim = False
            elif p == "7":
                self.reverse = True
            elif p == "27":
                self.reverse = False
            i += 1  # anything else (a colour, bold, "38:2::r:g:b") leaves dim and reverse as is


def _escape(screen: str, i: int, pen: _Pen) -> int:
    """Past the escape sequence at `i` (CSI, OSC, or a two-character one); SGR moves the pen."""
    kind = screen[i + 1 : i + 2]
    if kind == "[":
        j = i + 2
        while j < len(screen) and not "\x40" <= screen[j] <= "\x7e":
            j += 1
        if j < len(screen) and screen[j] == "m":
            pen.sgr(screen[i + 2 : j])
        return j + 1
    if kind == "]":  # OSC (a hyperlink): up to BEL or ST
        bel, st = screen.find("\x07", i), screen.find(_ESC + "\\", i)
        ends = [e + 1 for e in (bel,) if e >= 0] + [e + 2 for e in (st,) if e >= 0]
        return min(ends) if ends else len(screen)
    return i + 2


def styled_lines(screen: str) -> list[tuple[str, str]]:
    """Each line of a screen as (all of its text, the text without what is drawn dim). A cell
    drawn reverse (the cursor) right before dim text is the placeholder's first letter under
    the cursor, and dropped with it. A screen with no escapes is all kept."""
    pen = _Pen()
    out: list[tuple[str, str]] = []
    cells: list[tuple[str, bool, bool]] = []
    i = 0
    while i <= len(screen):
        ch = screen[i] if i < len(screen) else "\n"
        if ch == _ESC:
            i = _escape(screen, i, pen)
            continue
        if ch == "\n":
            text = "".join(c for c, _, _ in cells)
            kept = [
                c
                for n, (c, dim, rev) in enumerate(cells)
                if not dim and not (rev and n + 1 < len(cells) and cells[n + 1][1])
            ]
            out.append((text, "".join(kept)))
            cells = []
        else:
            cells.append((ch, pen.dim, pen.reverse))
        i += 1
    return out
