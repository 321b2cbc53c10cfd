"""Every agent lookout knows, in install order (like pre-commit's all_languages). Imports them
all: never on a hook's path (a hook imports its own agent's module only)."""

from __future__ import annotations

from lookout.agents import claude, codex, copilot, cursor, gemini, opencode
from lookout.agents.base import Agent

AGENTS: dict[str, Agent] = {
    "claude": claude,
    "codex": codex,
    "gemini": gemini,
    "copilot": copilot,
    "cursor": cursor,
    "opencode": opencode,
}
NAMES = tuple(AGENTS)

# The scripts in hooks/ that an agent's own file runs (one per agent, beside Claude Code's).
SCRIPTS = tuple(agent.SCRIPT for agent in AGENTS.values() if agent.SCRIPT is not None)
