"""What steering reads of each agent's plug-in (its STEER): how its program is found and started,
and which agents it steers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lookout import events, words
from lookout.agents import registry
from lookout.steer import agents


def _keys(name: str) -> agents.Keys:
    found = agents.keys(name)
    assert found is not None
    return found


def test_each_prompt_is_one_argument_never_an_option() -> None:
    claude, codex, gemini, opencode = map(_keys, ("claude", "codex", "gemini", "opencode"))
    assert claude.prompt_argv("-p rm") == ["--", "-p rm"]
    assert codex.prompt_argv("--x") == ["--", "--x"]
    assert gemini.prompt_argv("-y go") == ["--prompt-interactive=-y go"]
    assert opencode.prompt_argv("a b") == ["--prompt=a b"]


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
    claude, codex, gemini = map(_keys, ("claude", "codex", "gemini"))
    assert agents.program(claude) == str(bin_dir / "claude")
    assert agents.program(gemini) is None
    assert agents.program(codex) == str(bin_dir / "codex")
    monkeypatch.setenv("LOOKOUT_CODEX", "/opt/codex/bin/codex")  # as install.py reads it
    assert agents.program(codex) == "/opt/codex/bin/codex"
    monkeypatch.setenv("LOOKOUT_CODEX", "")
    assert agents.program(codex) is None
    assert os.environ["PATH"] == str(bin_dir)


def test_the_steered_agents_are_those_whose_plug_in_declares_steer() -> None:
    # words.STEER_AGENTS is what start --agent, [steer] agents, the dashboard and Telegram's
    # /new offer; config/ (below the plug-ins' floor, read by hooks) cannot load them to ask.
    declared = tuple(name for name, agent in registry.AGENTS.items() if agent.STEER is not None)
    assert declared == words.STEER_AGENTS
    assert [_keys(name).name for name in declared] == list(declared)
    assert all(agents.keys(name) is None for name in events.AGENTS if name not in declared)


@pytest.mark.parametrize("name", ["registry", "base", "codex_config", "claude.os", "", "CLAUDE"])
def test_a_name_that_is_no_agent_steers_nothing(name: str) -> None:
    # A session's `agent` comes from a payload: only an agent lookout knows loads a module.
    assert agents.keys(name) is None
