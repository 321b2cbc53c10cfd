"""lookout.agents.registry: exactly the six agents, each a module behind agents.base.Agent, and
the facts each declares are the ones docs/agents.md shows."""

from __future__ import annotations

import re
from typing import get_type_hints

import pytest

from lookout import events, machine, procs, words
from lookout.agents import base, registry
from tests.helpers import ROOT

SIX = ["claude", "codex", "gemini", "copilot", "cursor", "opencode"]


def test_the_registry_lists_exactly_the_six_agents_in_install_order() -> None:
    assert list(registry.AGENTS) == SIX
    assert tuple(SIX) == registry.NAMES
    for name, agent in registry.AGENTS.items():
        assert name == agent.NAME
        assert agent.__name__ == f"lookout.agents.{name}"  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", SIX)
def test_each_agent_implements_the_interface(name: str) -> None:
    agent = registry.AGENTS[name]
    members = [m for m in vars(base.Agent) if not m.startswith("_")]
    assert set(members) == {
        "NAME",
        "TITLE",
        "SCRIPT",
        "STAMPED",
        "CHILD_HOOKS",
        "FACTS",
        "COMMENTARY",
        "STEER",
        "translate",
        "answer",
        "home",
        "installer",
    }
    for member in members:
        assert hasattr(agent, member), f"{name} lacks {member}"
    assert isinstance(agent.TITLE, str) and agent.TITLE
    assert agent.SCRIPT is None or f"{name}.py" == agent.SCRIPT
    assert isinstance(agent.STAMPED, bool)
    assert isinstance(agent.CHILD_HOOKS, bool)
    for fn in ("translate", "answer", "home", "installer"):
        assert callable(getattr(agent, fn))
    installer = agent.installer()
    for fn in [m for m in vars(base.Installer) if not m.startswith("_")]:
        assert callable(getattr(installer, fn)), f"{name}'s installer lacks {fn}"
    if agent.FACTS is not None:
        assert set(agent.FACTS) == set(get_type_hints(base.Facts))
    for tool, aside in agent.COMMENTARY.items():  # what runs is never commentary (issue 38)
        assert set(aside) == set(get_type_hints(base.Commentary)), tool
        assert aside["runs"] and aside["runs"] not in aside["fields"], tool
    assert isinstance(agent.answer(b"{}"), bytes)


def test_each_script_runs_its_own_agent() -> None:
    for script in registry.SCRIPTS:
        text = (ROOT / "hooks" / script).read_text()
        assert f'run_agent("{script[:-3]}", sys.argv[1:])' in text


def test_the_hook_paths_copies_of_the_agent_list_match_the_registry() -> None:
    # A hook must not import the registry (it imports every agent): these stay in step by test.
    assert set(events.AGENTS) == set(registry.NAMES)
    stamped = {name for name, agent in registry.AGENTS.items() if agent.STAMPED}
    assert stamped == machine.STAMPED_AGENTS
    # What runs, as episodes match one call's hooks by it (events.runs_key): the plug-ins'
    # commentary tables, field for field.
    commentary = {
        name: {tool: tuple(sorted(c["fields"])) for tool, c in agent.COMMENTARY.items()}
        for name, agent in registry.AGENTS.items()
    }
    assert commentary == events.COMMENTARY
    children = {name for name, agent in registry.AGENTS.items() if agent.CHILD_HOOKS}
    assert children == procs.CHILD_HOOKS


_ROWS = {
    "checked against": "checked_against",
    "`attention permission`": "permission",
    "`attention question`": "question",
    "`attention elicitation`": "elicitation",
    "`attention error` (failed turn)": "failed_turn",
    "outcome `question` (the reply ends with a question)": "outcome_question",
    "`ended`": "ended",
    "subagents": "subagents",
}
_COLUMNS = {"Gemini CLI": "gemini", "Copilot CLI": "copilot", "OpenCode": "opencode",
            "Cursor": "cursor"}  # fmt: skip


def test_the_facts_are_docs_agents_table() -> None:
    lines = (ROOT / "docs" / "agents.md").read_text().splitlines()
    header = next(i for i, ln in enumerate(lines) if ln.startswith("| | "))
    columns = [c.strip() for c in lines[header].strip("|").split("|")][1:]
    table: dict[str, dict[str, object]] = {_COLUMNS[c]: {} for c in columns}
    for line in lines[header + 2 :]:
        if not line.startswith("|"):
            break
        row, *cells = [c.strip() for c in line.strip("|").split("|")]
        if row not in _ROWS:
            continue
        for column, cell in zip(columns, cells, strict=True):
            text = re.sub(r"\*\*", "", cell)
            key = _ROWS[row]
            table[_COLUMNS[column]][key] = (
                text if key == "checked_against" else (not text.startswith("no"))
            )
    for name, facts in table.items():
        assert facts == registry.AGENTS[name].FACTS, name
    assert {n for n, a in registry.AGENTS.items() if a.FACTS is not None} == set(table)


def test_who_is_answered_from_afar_is_docs_agents_table() -> None:
    """Issue 41: docs/agents.md's "Answered from afar" says what the deciding hook does for each
    agent (words.ANSWERED_ALWAYS, words.ANSWERED_WHEN_AWAY), and names every agent."""
    text = (ROOT / "docs" / "agents.md").read_text()
    section = text.split("## Answered from afar", 1)[1].split("\n## ", 1)[0]
    rows = {
        cells[0]: cells[1]
        for line in section.splitlines()
        if line.startswith("| ") and not line.startswith("| agent")
        for cells in [[c.strip().replace("**", "") for c in line.strip("|").split("|")]]
    }
    titles = {a.TITLE: name for name, a in registry.AGENTS.items()}
    assert set(rows) == set(titles)
    said = {titles[title]: answer.split(" (")[0] for title, answer in rows.items()}
    assert {n for n, a in said.items() if a == "yes, always"} == set(words.ANSWERED_ALWAYS)
    assert {n for n, a in said.items() if a == "yes, while away"} == set(words.ANSWERED_WHEN_AWAY)
    assert {n for n, a in said.items() if a == "no"} == (
        set(registry.NAMES) - set(words.ANSWERED_ALWAYS) - set(words.ANSWERED_WHEN_AWAY)
    )
