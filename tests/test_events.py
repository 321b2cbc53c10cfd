"""Payload normalization: summaries people can read, nothing more of the payload than needed."""

from __future__ import annotations

from typing import Any

import pytest

from lookout import events
from tests.helpers import payload


def parse(body: dict[str, Any], env: dict[str, str] | None = None) -> Any:
    return events.parse({"session_id": "s", "cwd": "/w/demo", **body}, env or {}, 1, "d", None)


@pytest.mark.parametrize(
    ("tool", "tool_input", "summary"),
    [
        ("Bash", {"command": "rm -rf build/\necho done"}, "rm -rf build/"),
        ("Write", {"file_path": "/w/demo/a.py", "content": "secret"}, "/w/demo/a.py"),
        ("Edit", {"file_path": "/w/x.py", "old_string": "a", "new_string": "b"}, "/w/x.py"),
        ("Grep", {"pattern": "TODO", "path": "/w"}, "TODO"),
        ("WebSearch", {"query": "ntfy headers"}, "ntfy headers"),
        (
            "WebFetch",
            {"url": "https://example.test/a?token=abc#x", "prompt": "p"},
            "https://example.test/a",
        ),
        ("Agent", {"description": "sub task", "prompt": "long", "subagent_type": "x"}, "sub task"),
        (
            "AskUserQuestion",
            {"questions": [{"question": "Which DB?"}, {"question": "Why?"}]},
            "Which DB? Why?",
        ),
        ("ExitPlanMode", {"plan": "\n# Plan\n1. a"}, "# Plan"),
        ("mcp__srv__tool", {"x": 1}, ""),
        ("Bash", "not an object", ""),
    ],
)
def test_tool_summary(tool: str, tool_input: object, summary: str) -> None:
    event = parse({"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input})
    assert event["summary"] == summary


def test_question_and_plan_keep_their_full_text_for_notifications() -> None:
    q = parse(
        {
            "hook_event_name": "PreToolUse",
            "tool_name": "AskUserQuestion",
            "tool_input": {"questions": [{"question": "A?"}, {"question": "B?"}]},
        }
    )
    assert q["message"] == "A?\nB?"
    p = parse(
        {
            "hook_event_name": "PreToolUse",
            "tool_name": "ExitPlanMode",
            "tool_input": {"plan": "# Plan\n\nstep " * 10},
        }
    )
    assert p["message"].startswith("# Plan") and "\n" in p["message"]


def test_the_same_tool_call_has_the_same_key_without_a_tool_use_id() -> None:
    pre = events.parse(payload("PreToolUse-Bash"), {}, 1, "a", None)
    body = payload("PreToolUse-Bash")
    body.pop("tool_use_id")
    body["hook_event_name"] = "PermissionRequest"
    request = events.parse(body, {}, 2, "b", None)
    assert pre["tool_key"] == request["tool_key"] is not None
    other = dict(body, tool_input={"command": "something else"})
    assert events.parse(other, {}, 3, "c", None)["tool_key"] != pre["tool_key"]


@pytest.mark.parametrize(
    ("agent", "tool"),
    [("claude", "Bash"), ("codex", "Bash"), ("gemini", "run_shell_command"), ("opencode", "bash")],
)
def test_one_call_is_named_by_what_runs_not_by_the_models_commentary(agent: str, tool: str) -> None:
    """Codex's PermissionRequest carries the justification its PreToolUse lacks (0.169.0)."""
    env = {"LOOKOUT_AGENT": agent}

    def key(tool_input: object) -> str | None:
        body = {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input}
        return events.parse(body, env, 1, "a", None)["runs_key"]

    bare = key({"command": "make"})
    assert bare == key({"command": "make", "description": "it builds"}) is not None
    assert bare != key({"command": "make install", "description": "it builds"})
    assert bare != key({"command": "make", "timeout": 5})  # any other field is what runs
    assert bare != key({"command": "make", "description": ["not", "text"]})  # only text is words


def test_another_agents_tool_of_the_same_name_keeps_every_field() -> None:
    body = {
        "hook_event_name": "PreToolUse",
        "tool_name": "Agent",
        "tool_input": {"prompt": "p", "description": "d"},
    }
    codex = events.parse(body, {"LOOKOUT_AGENT": "codex"}, 1, "a", None)
    assert codex["runs_key"] == codex["tool_key"]  # Codex's table has no Agent tool
    claude = events.parse(body, {"LOOKOUT_AGENT": "claude"}, 1, "a", None)
    assert claude["runs_key"] != claude["tool_key"]


def test_stop_carries_the_last_message_and_running_background_tasks() -> None:
    stop = events.parse(payload("SubagentStop-general-purpose"), {}, 1, "d", None)
    assert stop["message"] == "OK from mock"
    assert stop["background"] == [["aa5514f2dd0ef79c1", "subagent"]]
    assert stop["agent_id"] == "aa5514f2dd0ef79c1"


def test_stop_failure_summary_names_the_error() -> None:
    event = events.parse(payload("StopFailure-rate_limit"), {}, 1, "d", None)
    assert event["error"] == "rate_limit"
    assert event["summary"] == (
        "rate or usage limit reached: API Error: Request rejected (429) · mock error 429"
    )


@pytest.mark.parametrize(
    ("error", "said"),
    [
        ("authentication_failed", "the API key or login was refused"),
        ("billing_error", "billing: no credit left or a payment problem"),
        ("overloaded", "the API is overloaded"),
        ("server_error", "the API failed (server error)"),
        ("max_output_tokens", "the reply hit the output token limit"),
        ("something_new", "something_new"),  # a value this lookout does not know: as it came
    ],
)
def test_every_stop_failure_error_reads_as_words(error: str, said: str) -> None:
    body = {"session_id": "s", "hook_event_name": "StopFailure", "error": error}
    assert events.parse(body, {}, 1, "d", None)["summary"] == said
    body["last_assistant_message"] = "API Error: 401 invalid x-api-key"
    assert (
        events.parse(body, {}, 1, "d", None)["summary"]
        == f"{said}: API Error: 401 invalid x-api-key"
    )


def test_every_documented_stop_failure_error_has_words() -> None:
    # claude-code-hooks.md's StopFailure `error` values (2.1.332)
    documented = [
        *("rate_limit", "overloaded", "authentication_failed", "oauth_org_not_allowed"),
        *("account_on_hold", "verification_required", "billing_error", "invalid_request"),
        *("model_not_found", "server_error", "max_output_tokens", "cloud_credential_error"),
        "unknown",
    ]
    assert sorted(events.FAILURES) == sorted(documented)


def test_prompt_summary_is_its_first_line_and_task_notifications_are_named() -> None:
    assert (
        parse({"hook_event_name": "UserPromptSubmit", "prompt": "\n fix the\tbuild \nplease"})[
            "summary"
        ]
        == "fix the build"
    )
    wake = parse(
        {
            "hook_event_name": "UserPromptSubmit",
            "prompt": '<task-notification>\n<summary>Agent "x" finished</summary>',
        }
    )
    assert wake["summary"] == 'Agent "x" finished'
    assert wake["source"] == "task-notification"


def test_environment_gives_pid_pane_and_project() -> None:
    env = {"CLAUDE_PID": "123", "TMUX_PANE": "%1", "CLAUDE_PROJECT_DIR": "/w/api/"}
    event = parse({"hook_event_name": "Stop"}, env)
    assert (event["pid"], event["tmux_pane"], event["project"]) == (123, "%1", "api")
    assert parse({"hook_event_name": "Stop"}, {"CLAUDE_PID": "nope"})["pid"] is None
    assert parse({"hook_event_name": "Stop"})["project"] == "demo"


def test_missing_and_mistyped_fields_are_tolerated() -> None:
    event = events.parse({"session_id": "s", "hook_event_name": 5, "cwd": None}, {}, 1, "d", "Stop")
    assert event["name"] == "Stop"
    assert event["cwd"] == ""
    event = events.parse({"session_id": "s"}, {}, 1, "d", None)
    assert event["name"] == "Unknown"


def test_codex_payloads_are_recognised() -> None:
    codex = {
        "session_id": "c",
        "transcript_path": None,
        "cwd": "/w",
        "hook_event_name": "Stop",
        "model": "gpt-5",
        "turn_id": "t1",
        "last_assistant_message": "ok",
    }
    assert parse(codex)["agent"] == "codex"
    start = {
        "hook_event_name": "SessionStart",
        "model": "gpt-5",
        "permission_mode": "default",
        "source": "startup",
        "transcript_path": "/x.jsonl",
    }
    assert parse(start)["agent"] == "codex"
    assert parse({"hook_event_name": "Stop"}, {"LOOKOUT_AGENT": "codex"})["agent"] == "codex"
    for stem in ("Stop", "SessionStart-startup", "PreToolUse-Bash", "Notification"):
        assert events.parse(payload(stem), {}, 1, "d", None)["agent"] == "claude"


def test_one_line_and_clip() -> None:
    assert events.one_line("a\n b\t c") == "a b c"
    assert len(events.one_line("x" * 300)) == 200
    assert events.clip("  y  ") == "y"
    assert len(events.clip("z" * 5000)) == 2000


def test_where_keeps_the_terminal_ids_and_nothing_else() -> None:
    env = {
        "TMUX": "/tmp/tmux-1000/work,4242,3",
        "TMUX_PANE": "%12",
        "KITTY_WINDOW_ID": "7",
        "KITTY_LISTEN_ON": "unix:/tmp/kitty-99",
        "WEZTERM_PANE": "3",
        "ZELLIJ_SESSION_NAME": "dev",
        "ZELLIJ_PANE_ID": "2",
        "TERM_PROGRAM": "WezTerm",
        "ANTHROPIC_API_KEY": "sk-secret",
        "HOME": "/home/u",
    }
    event = parse({"hook_event_name": "Stop"}, env)
    assert event["tmux_pane"] == "%12"
    assert event["where"] == {
        "tmux_socket": "/tmp/tmux-1000/work",
        "tmux_pane": "%12",
        "kitty_window": "7",
        "kitty_listen_on": "unix:/tmp/kitty-99",
        "wezterm_pane": "3",
        "zellij_session": "dev",
        "zellij_pane": "2",
        "term_program": "WezTerm",
    }


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"TMUX_PANE": "%1"},  # no server socket: nowhere to send tmux commands
        {"TMUX": "relative,1,0", "TMUX_PANE": "%1"},
        {"TMUX": "/tmp/s,1,0", "TMUX_PANE": "1"},
        {"TMUX": "/tmp/s,1,0", "TMUX_PANE": "%1;kill"},
        {"TMUX": "/tmp/s\x1b[2J,1,0", "TMUX_PANE": "%1"},
        {"KITTY_WINDOW_ID": "1 2", "WEZTERM_PANE": "²", "TERM_PROGRAM": "a\x07b"},
    ],
)
def test_where_drops_ids_of_the_wrong_shape(env: dict[str, str]) -> None:
    assert parse({"hook_event_name": "Stop"}, env)["where"] is None
