"""What install.py and `lookout uninstall` were asked to do: a plain record that the agent
plug-ins read without importing the plan that runs them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Options:
    """What install.py and `lookout uninstall` were asked to do (already checked for conflicts)."""

    agent: str = "claude"  # a name in lookout.agents.registry, or "all"
    scope: str = "user"  # user | project | local
    project: str | None = None
    settings: str | None = None
    python: str | None = None
    codex_notify: bool = False  # --codex-notify (its agent module reads it)
    dry_run: bool = False
    purge: bool = False
    bridge: bool = False  # also the MQTT client and `lookout bridge` as a service
