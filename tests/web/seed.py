"""A realistic state directory for the dashboard's tests, benchmark and screenshots, recorded
through the hooks' own code path (runner.record), with back-dated timestamps."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

from lookout import runner

XSS = "<img src=x onerror=\"document.body.dataset.pwned='1'\">"


def hook(
    state_dir: Path | str,
    event: str,
    session_id: str,
    cwd: str,
    ago_s: float = 0.0,
    env: Mapping[str, str] | None = None,
    **fields: object,
) -> None:
    """Record one hook delivery as if Claude Code had fired it `ago_s` seconds ago."""
    payload = {"session_id": session_id, "cwd": cwd, "hook_event_name": event, **fields}
    ts_ms = int((time.time() - ago_s) * 1000)
    raw = json.dumps(payload).encode("utf-8")
    runner.record(raw, None, ts_ms, str(state_dir), dict(env or {}))


def bash(command: str, use_id: str) -> dict[str, object]:
    return {"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": use_id}


def demo(state_dir: Path | str) -> dict[str, str]:
    """Eight sessions, one of each kind a user meets. Returns project -> session id."""
    ids = {}

    def sid(project: str) -> str:
        ids[project] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"lookout-demo/{project}"))
        return ids[project]

    api, s = "/home/dev/src/api", sid("api")
    pane = {"TMUX_PANE": "%3"}
    hook(state_dir, "UserPromptSubmit", s, api, 300, pane, prompt="Clean the build and rebuild")
    hook(state_dir, "PreToolUse", s, api, 192, pane, **bash("rm -rf build/ && npm run build", "t1"))
    hook(
        state_dir,
        "PermissionRequest",
        s,
        api,
        192,
        pane,
        tool_name="Bash",
        tool_input={"command": "rm -rf build/ && npm run build"},
    )

    web, s = "/home/dev/src/web", sid("web")
    hook(
        state_dir, "UserPromptSubmit", s, web, 120, {"TMUX_PANE": "%5"}, prompt="Add the migration"
    )
    question = "Which database should the migration target: Postgres 16 or the SQLite dev copy?"
    hook(
        state_dir,
        "PreToolUse",
        s,
        web,
        48,
        {"TMUX_PANE": "%5"},
        tool_name="AskUserQuestion",
        tool_input={
            "questions": [
                {
                    "question": question,
                    "header": "Database",
                    "options": [{"label": "Postgres 16"}, {"label": "SQLite"}],
                }
            ]
        },
        tool_use_id="t2",
    )

    docs, s = "/home/dev/src/docs", sid("docs")
    hook(state_dir, "UserPromptSubmit", s, docs, 600, prompt="Plan the docs restructure")
    plan = "Split the guide into install, configure and troubleshoot pages\n2. Move the FAQ"
    hook(
        state_dir,
        "PreToolUse",
        s,
        docs,
        431,
        tool_name="ExitPlanMode",
        tool_input={"plan": plan},
        tool_use_id="t3",
    )

    demo_dir, s = "/home/dev/src/lookout", sid("lookout")
    pane = {"TMUX_PANE": "%1"}
    hook(state_dir, "UserPromptSubmit", s, demo_dir, 250, pane, prompt="Make the test suite faster")
    hook(
        state_dir,
        "PreToolUse",
        s,
        demo_dir,
        240,
        pane,
        tool_name="Agent",
        tool_input={"description": "profile tests", "subagent_type": "general-purpose"},
        tool_use_id="t4",
    )
    hook(
        state_dir,
        "SubagentStart",
        s,
        demo_dir,
        239,
        pane,
        agent_id="a1",
        agent_type="general-purpose",
    )
    hook(state_dir, "SubagentStart", s, demo_dir, 200, pane, agent_id="a2", agent_type="Explore")
    hook(
        state_dir,
        "PreToolUse",
        s,
        demo_dir,
        21,
        pane,
        agent_id="a1",
        agent_type="general-purpose",
        **bash("pytest -q --durations=10", "t5"),
    )

    infra, s = "/home/dev/src/infra", sid("infra")
    hook(state_dir, "UserPromptSubmit", s, infra, 95, {"TMUX_PANE": "%7"}, prompt="Plan the VPC")
    hook(
        state_dir,
        "PreToolUse",
        s,
        infra,
        35,
        {"TMUX_PANE": "%7"},
        **bash("terraform plan -out=tfplan", "t6"),
    )

    blog, s = "/home/dev/src/blog", sid("blog")
    hook(state_dir, "UserPromptSubmit", s, blog, 1900, prompt="Fix the flaky date test")
    hook(
        state_dir,
        "Stop",
        s,
        blog,
        1500,
        last_assistant_message=(
            "Fixed the flaky date test: the fixture now freezes time at UTC midnight."
        ),
    )

    notes, s = "/home/dev/src/notes", sid("notes")
    codex = {"LOOKOUT_AGENT": "codex"}
    hook(state_dir, "UserPromptSubmit", s, notes, 4000, codex, prompt="Summarise the notes")
    hook(state_dir, "Stop", s, notes, 3700, codex, last_assistant_message="Summary written.")

    old, s = "/home/dev/src/scratch", sid("scratch")
    hook(state_dir, "SessionStart", s, old, 20000, source="startup")
    hook(state_dir, "SessionEnd", s, old, 11000, reason="prompt_input_exit")
    return ids


def many(state_dir: Path | str, count: int) -> list[str]:
    """`count` sessions (for the benchmark): a third of them waiting on a permission."""
    ids = []
    for n in range(count):
        session_id = f"bench-{n:05d}"
        cwd = f"/home/dev/src/project-{n % 40:02d}"
        hook(state_dir, "UserPromptSubmit", session_id, cwd, 60, prompt=f"task {n}")
        if n % 3 == 0:
            hook(
                state_dir,
                "PermissionRequest",
                session_id,
                cwd,
                30,
                tool_name="Bash",
                tool_input={"command": f"make target-{n}"},
            )
        ids.append(session_id)
    return ids
