"""What steering knows of an agent, read from its plug-in (lookout/agents/<name>.py's STEER, as
checked with its real client; docs/steer.md has the table): whether typing during a turn is
queued for the agent (else `say` refuses while it works), the key that interrupts a turn,
whether a newline typed into its input box stays in the message, how its own program is found
and given a first prompt (as data, never through a shell), and how its screen shows an open
dialog or a draft. Pure, but for loading the agent's module by name."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

from lookout import events

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def after_options(prompt: str) -> list[str]:
    return ["--", prompt]  # past `--`, a prompt starting with "-" is no option


class Steering(TypedDict):
    """What an agent's plug-in declares as its STEER: Keys' fields but its name (its NAME) and,
    unless given, its title (its TITLE)."""

    checked: str
    queues_while_working: bool | None
    interrupt: tuple[str, ...] | None
    multiline: bool
    program: str
    reports_interrupt: bool
    prompt_argv: NotRequired[Callable[[str], list[str]]]
    program_env: NotRequired[str | None]
    enter_after_s: NotRequired[float]
    socket: NotRequired[bool]
    registry: NotRequired[bool]
    esc_denies: NotRequired[bool]
    processes: NotRequired[tuple[str, ...]]
    prompt_hook_when_queued: NotRequired[bool]
    read_input: NotRequired[Callable[[str], str | None] | None]
    title: NotRequired[str]


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
    program: str  # the executable's name on PATH
    # Whether its hooks report a stopped turn (else `interrupt` records the stop itself: idle,
    # evidence steer, until its next hook).
    reports_interrupt: bool
    # The prompt as data: the argv after the program that starts a session with it.
    prompt_argv: Callable[[str], list[str]] = after_options
    # The variable that names its executable as the installer finds it (empty: none), before PATH.
    program_env: str | None = None
    # How long after the pane shows the text Enter comes: an input box that reads keys arriving
    # together as a paste takes an Enter among them for a newline (Gemini CLI: ~40 ms).
    enter_after_s: float = 0.3
    socket: bool = False  # Claude Code's inbox socket (messagingSocketPath)
    # It keeps a registry of its sessions lookout reads (client_sessions): their status now, and
    # the name it gives a new session.
    registry: bool = False
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
    # The text in its input box ("" when empty), None when the screen shows none (a dialog is
    # open); the screen may hold capture-pane -e's escapes. None: lookout cannot read its box.
    read_input: Callable[[str], str | None] | None = None


# What runs an agent installed from npm (`node .../bin/codex.js`, `#!/usr/bin/env node`): the
# pane shows the interpreter, and its script names the agent.
INTERPRETERS = frozenset({"node", "nodejs", "bun", "deno"})


def keys(agent: str) -> Keys | None:
    """The agent's STEER, None for an agent lookout cannot steer. Its module is loaded by name,
    as runner loads a hook's own agent: never the registry, never the installer it stands on."""
    if agent not in events.AGENTS:
        return None
    import importlib

    module = importlib.import_module(f"lookout.agents.{agent}")
    steer: Steering | None = module.STEER
    if steer is None:
        return None
    fields: dict[str, Any] = {"name": module.NAME, "title": module.TITLE, **steer}
    return Keys(**fields)


def program(agent: Keys) -> str | None:
    """The agent's own executable, found as the installer finds it: its program_env
    ($LOOKOUT_CODEX) when set, else its name on PATH. None when there is none."""
    if agent.program_env is not None:
        named = os.environ.get(agent.program_env)
        if named is not None:
            return named or None
    found = shutil.which(agent.program)
    return os.path.abspath(found) if found else None
