"""What every agent module provides (like pre-commit's lang_base.Language): the hook side (its
payload -> lookout's Claude-shaped payload, its stdout answer), the install side (where its
configuration lives; install, uninstall and doctor), and what it can and cannot express.

Each module puts its hook side first: stdlib only, all that its hook script loads. Its install
and doctor side imports the installer inside each function, so a hook never pays for it.

Imported by the registry, the installer and doctor; never by a hook (typing, dataclasses)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypedDict

if TYPE_CHECKING:
    from lookout.install.checks import Report
    from lookout.install.files import Out
    from lookout.install.options import Options
    from lookout.steer.agents import Steering

Payload = dict[str, object]
# What install runs for one agent once every file has been read: (interpreter, runtime home).
Install = Callable[[str, Path], object]
# What uninstall runs for one agent: (the runtime roots whose hooks are lookout's).
Uninstall = Callable[[list[str]], object]


class Facts(TypedDict):
    """What the agent's events can and cannot express (docs/agents.md's table, as data)."""

    checked_against: str  # "real client 0.61.0", "published schema only"
    permission: bool  # a dialog on screen -> attention permission
    question: bool  # attention question
    elicitation: bool
    failed_turn: bool  # attention error
    outcome_question: bool  # the turn's text can end with a question
    ended: bool  # a session end is signalled
    subagents: bool


class Commentary(TypedDict):
    """One tool's input as Allow sees it, from the tool's published schema (issue 38): `runs`,
    the field that says what runs (a request without it gets no Allow), and `fields`, the
    model's own words beside it (Bash's `description`): shown where there is room, never
    approved, never standing in for what runs. Every other field counts: it is what runs."""

    runs: str
    fields: frozenset[str]


class Installer(Protocol):
    """What install, uninstall, doctor and `lookout status`'s note ask of one agent."""

    def plan_install(self, opts: Options, out: Out) -> Install | None:
        """Read (and so check) every file this agent's install would change: a broken one
        raises before anything changes. None: not chosen, nothing to do."""
        ...

    def plan_uninstall(self, opts: Options, out: Out) -> Uninstall | None:
        """As plan_install, for `lookout uninstall` (with --purge: wherever the runtime is)."""
        ...

    def installed(self, project: str) -> bool:
        """Whether lookout's hooks are in this agent's files (`lookout status`'s note). A file
        it cannot read counts as installed: the note claims nothing it does not know."""
        ...

    def check(self, report: Report, project: str) -> int:
        """doctor: report this agent's hooks; returns how many of lookout's entries it found."""
        ...


class Agent(Protocol):
    """A module (lookout/agents/<name>.py), as pre-commit's languages are."""

    @property
    def NAME(self) -> str: ...  # --agent, LOOKOUT_AGENT, a session's `agent`

    @property
    def TITLE(self) -> str: ...  # how the user knows it

    @property
    def SCRIPT(self) -> str | None: ...  # the one hook script its own file runs (in hooks/)

    @property
    def STAMPED(self) -> bool: ...  # its payloads carry a `ts` to order records by (runner)

    # its hooks run as children of its own process, past at most a shell (the hook finds the
    # agent's pid so: procs.CHILD_HOOKS, the hook path's copy, kept equal by a test)
    @property
    def CHILD_HOOKS(self) -> bool: ...

    @property
    def FACTS(self) -> Facts | None: ...  # None: Claude Code, the shape lookout's events have

    # tool name (as its payloads name it) -> its commentary; a tool not here: every field counts
    @property
    def COMMENTARY(self) -> Mapping[str, Commentary]: ...

    # how lookout types into it, interrupts it, reads its input box and starts it (say,
    # interrupt, start); None: lookout does not steer it (its keys were never checked)
    @property
    def STEER(self) -> Steering | None: ...

    # -- hook side: stdlib only; the module imports nothing at load but lookout.events ---------

    def translate(self, data: Payload, name: str | None) -> Payload | None:
        """The agent's payload (`name`: the event its script was given) -> a Claude-shaped
        payload for events.parse; None for a delivery lookout does not track."""
        ...

    def answer(self, raw: bytes) -> bytes:
        """What the hook writes on stdout, whatever happens (most: nothing)."""
        ...

    # -- install side: imports the installer inside each function ---------------------------

    def home(self) -> Path:
        """The agent's own directory (`--agent all` skips an agent without one)."""
        ...

    def installer(self) -> Installer:
        """Its install side: a hookfiles.Spec where lookout's entries are one file (or plugin)
        of the agent's, else the module itself, with functions of its own."""
        ...
