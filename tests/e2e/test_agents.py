"""What every other agent's real client does alike with lookout (Codex, Gemini CLI, OpenCode;
Claude Code's print mode is tests/e2e/test_print_mode.py): `install.py --agent NAME` says what it
installed, one headless turn against the client's loopback mock shows up in the installed
`lookout status --json` as that agent's session in the project, ended once the client exits,
with nothing in errors.log; `--uninstall` gives the user's own config file back byte for byte.
What only one agent does stays in its own file (test_codex.py, test_gemini.py, test_opencode.py),
with its mock API and its AgentMachine."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from . import npm_client, test_codex, test_gemini, test_opencode
from .agent_machine import AgentMachine

pytestmark = pytest.mark.e2e


def codex(root: Path, stack: ExitStack) -> AgentMachine:
    binary = npm_client.ensure(test_codex.PACKAGE, test_codex.CODEX_VERSION, "codex", "codex")
    return test_codex.Machine(root, binary, stack.enter_context(test_codex.ResponsesAPI()))


def gemini(root: Path, stack: ExitStack) -> AgentMachine:
    api = stack.enter_context(test_gemini.GeminiAPI("true"))
    return test_gemini.Machine(root, test_gemini.binary(), api)


def opencode(root: Path, stack: ExitStack) -> AgentMachine:
    api = stack.enter_context(test_opencode.ChatAPI())
    return test_opencode.Machine(root, test_opencode.binary(), api)


# agent -> (its machine with its mock API running, the line install.py says)
AGENTS: dict[str, tuple[Callable[[Path, ExitStack], AgentMachine], str]] = {
    "codex": (codex, "installed 13 hooks into ~/.codex/hooks.json (new file)"),
    "gemini": (
        gemini,
        "installed 7 hooks for Gemini CLI into ~/.gemini/settings.json (backup: ",
    ),
    "opencode": (
        opencode,
        "installed the plugin for OpenCode into ~/.config/opencode/plugin/lookout.js",
    ),
}


@pytest.fixture(params=list(AGENTS))
def machine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[AgentMachine]:
    make, _ = AGENTS[request.param]
    with ExitStack() as stack:
        # tmp_path/home belongs to the autouse isolated_env: this user lives beside it.
        yield make(tmp_path / "user", stack)


def test_a_headless_turn_is_the_agents_session_until_uninstall(machine: AgentMachine) -> None:
    original = machine.user_file.read_bytes()
    assert AGENTS[machine.agent][1] in machine.install()
    machine.turn("say hello")
    shown = machine.wait("ended")
    assert (shown["agent"], shown["cwd"]) == (machine.agent, str(machine.project))
    assert machine.errors() == ""
    machine.uninstall()
    assert machine.user_file.read_bytes() == original
