"""The state machine against every captured payload and against ordered scenarios
(docs/state-model.md, row by row and rule by rule)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from lookout import events, hookspec, machine
from tests.helpers import PAYLOADS, payload

SID = "11111111-2222-3333-4444-555555555555"
_clock = itertools.count(1_800_000_000_000, 1000)


def ev(name: str, ts: int | None = None, env: dict[str, str] | None = None, **fields: Any) -> Any:
    """An event as a hook would parse it; each call is a distinct delivery one second later."""
    body: dict[str, Any] = {
        "session_id": SID,
        "transcript_path": "/t.jsonl",
        "cwd": "/home/dev/projects/demo",
        "hook_event_name": name,
        **fields,
    }
    ts = next(_clock) if ts is None else ts
    return events.parse(body, env or {}, ts, f"d{ts}-{name}", None)


class Run:
    """Feeds events into one session and keeps what came out."""

    def __init__(self) -> None:
        self.session: dict[str, Any] | None = None
        self.records: list[dict[str, Any]] = []
        self.intents: list[dict[str, Any]] = []

    def __call__(self, event: Any) -> list[dict[str, Any]]:
        self.session, record, intents = machine.apply(self.session, event)
        self.records.append(record)
        self.intents.extend(intents)
        return intents

    @property
    def status(self) -> tuple[str, str | None]:
        assert self.session is not None
        return self.session["status"], self.session["reason"]

    @property
    def detail(self) -> str | None:
        assert self.session is not None
        return self.session["detail"]

    def kinds(self) -> list[str]:
        return [i["kind"] for i in self.intents]


def started(prompt: str = "fix the build") -> Run:
    run = Run()
    run(ev("SessionStart", source="startup"))
    run(ev("UserPromptSubmit", prompt=prompt, prompt_id="p1"))
    return run


def bash(command: str, use_id: str = "toolu_1", **extra: Any) -> dict[str, Any]:
    return {
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "d"},
        "tool_use_id": use_id,
        **extra,
    }


# -- every captured payload --------------------------------------------------------------------

# What each captured payload does to a session that is busy with a turn (status, reason, detail).
EXPECTED: dict[str, tuple[str, str | None, str | None]] = {
    "ConfigChange": ("working", None, None),
    "ConfigChange-user_settings": ("working", None, None),
    "CwdChanged": ("working", None, None),
    "DirectoryAdded": ("working", None, None),
    "InstructionsLoaded": ("working", None, None),
    "InstructionsLoaded-session_start": ("working", None, None),
    "MessageDisplay": ("working", None, None),
    "Notification": ("attention", "input", None),
    "Notification-agent_needs_input": ("attention", "input", None),
    "Notification-idle_prompt": ("idle", None, None),
    "Notification-permission_prompt": ("attention", "permission", None),
    "PermissionDenied": ("working", None, "Thinking"),
    "PermissionRequest": ("attention", "permission", "Bash"),
    "PermissionRequest-Bash": ("attention", "permission", "Bash"),
    "PostCompact": ("working", None, None),
    "PostCompact-manual": ("working", None, None),
    "PostModelSwitch": ("working", None, None),
    "PostToolBatch": ("working", None, "Thinking"),
    "PostToolUse": ("working", None, "Thinking"),
    "PostToolUse-Agent": ("working", None, "Thinking"),
    "PostToolUse-Bash": ("working", None, "Thinking"),
    "PostToolUse-Write": ("working", None, "Thinking"),
    "PostToolUseFailure": ("working", None, "Thinking"),
    "PostToolUseFailure-Bash": ("working", None, "Thinking"),
    "PreCompact": ("working", None, "Compacting"),
    "PreCompact-manual": ("working", None, "Compacting"),
    "PreModelSwitch": ("working", None, None),
    "PreSkillShellCommand": ("working", None, None),
    "PreToolUse": ("working", None, "Write"),
    "PreToolUse-Agent": ("working", None, "Agent"),
    "PreToolUse-Bash": ("working", None, "Bash"),
    "PreToolUse-Write": ("working", None, "Write"),
    "SessionEnd": ("ended", "other", None),
    "SessionEnd-clear": ("ended", "clear", None),
    "SessionEnd-other": ("ended", "other", None),
    "SessionEnd-prompt_input_exit": ("ended", "prompt_input_exit", None),
    "SessionStart": ("idle", None, None),
    "SessionStart-clear": ("idle", None, None),
    "SessionStart-compact": ("working", None, None),
    "SessionStart-resume": ("idle", None, None),
    "SessionStart-startup": ("idle", None, None),
    "Setup": ("working", None, "Setup"),
    "Stop": ("idle", None, None),
    "StopFailure": ("attention", "error", "rate_limit"),
    "StopFailure-rate_limit": ("attention", "error", "rate_limit"),
    "StopFailure-usage_limit": ("attention", "error", "rate_limit"),
    "SubagentStart": ("working", None, None),
    "SubagentStart-general-purpose": ("working", None, None),
    "SubagentStop": ("working", None, None),
    "SubagentStop-general-purpose": ("working", None, None),
    "UserPromptExpansion": ("working", None, None),
    "UserPromptSubmit": ("working", None, None),
}

FILES = sorted(p.stem for p in PAYLOADS.glob("*.json"))


def test_every_captured_payload_has_an_expectation() -> None:
    assert set(FILES) == set(EXPECTED)


@pytest.mark.parametrize("stem", FILES)
def test_captured_payload(stem: str) -> None:
    run = started()
    body = payload(stem)
    body["session_id"] = SID
    run(events.parse(body, {}, next(_clock), f"fixture-{stem}", None))
    assert run.session is not None
    session = run.session
    status, reason, detail = EXPECTED[stem]
    assert (session["status"], session["reason"]) == (status, reason)
    if detail is not None:
        assert detail in (session["detail"] or "")
    record = run.records[-1]
    assert record["event"] == body["hook_event_name"]
    assert record["status"] == status
    for key in ("seq", "session_id", "event", "status", "reason", "detail", "agent_id", "cwd"):
        assert key in record
    for key in ("project", "tool_name", "notification_type", "pid", "tmux_pane", "duplicate"):
        assert key in record
    assert len(record["summary"]) <= 200
    # The record never carries whole tool input/response or prompt text.
    assert "tool_input" not in record and "tool_response" not in record and "prompt" not in record


@pytest.mark.parametrize("stem", FILES)
def test_captured_payload_on_a_new_session(stem: str) -> None:
    session, record, _ = machine.apply(None, events.parse(payload(stem), {}, 1, "x", None))
    assert session["status"] in ("working", "attention", "idle", "ended")
    assert record["seq"] == 1


# -- permission episodes -----------------------------------------------------------------------


def test_permission_request_then_notification_is_one_episode() -> None:
    run = started()
    run(ev("PreToolUse", **bash("touch t.txt")))
    request = {k: v for k, v in bash("touch t.txt").items() if k != "tool_use_id"}
    assert [i["kind"] for i in run(ev("PermissionRequest", **request))] == ["permission"]
    assert run.status == ("attention", "permission")
    assert run.intents[-1]["kind"] == "permission"
    assert run.intents[-1]["summary"] == "touch t.txt"
    assert run.intents[-1]["tool_name"] == "Bash"
    assert (
        run(
            ev(
                "Notification",
                notification_type="permission_prompt",
                message="Claude needs your permission",
            )
        )
        == []
    )
    assert run.status == ("attention", "permission")
    out = run(ev("PostToolUse", **bash("touch t.txt"), tool_response={"stdout": ""}))
    assert [i["kind"] for i in out] == ["resolved"]
    assert out[0]["reason"] == "permission"
    assert out[0]["episode"] == run.intents[-2]["episode"]
    assert run.status == ("working", None)
    assert run.kinds().count("permission") == 1


def _asked() -> Run:
    run = started()
    run(ev("PreToolUse", **bash("touch t.txt")))
    request = {k: v for k, v in bash("touch t.txt").items() if k != "tool_use_id"}
    run(ev("PermissionRequest", **request))
    return run


def test_the_handled_update_knows_who_answered_from_afar() -> None:
    run = _asked()
    remote = {"request_id": "r1", "decision": "deny", "by": "root@vm (lookout answer)"}
    request = {k: v for k, v in bash("touch t.txt").items() if k != "tool_use_id"}
    (out,) = run(ev("RemoteDecision", **request, remote=remote))
    assert (out["kind"], out["answer"], out["by"]) == (
        "resolved",
        "denied",
        "by root@vm (lookout answer)",
    )


def test_a_command_allowed_from_afar_runs_and_a_denied_one_is_thought_over() -> None:
    # Allowed: the command runs now (a long one shows as running it, not as thinking).
    request = {k: v for k, v in bash("sleep 40").items() if k != "tool_use_id"}
    for decision, shown in (("allow", ("Bash", "sleep 40")), ("deny", ("Thinking", None))):
        run = started()
        run(ev("PreToolUse", **bash("sleep 40")))
        run(ev("PermissionRequest", **request))
        remote = {"request_id": "r1", "decision": decision, "by": "root@vm (lookout answer)"}
        run(ev("RemoteDecision", **request, remote=remote))
        assert run.session is not None
        main = run.session["main"]
        assert main["status"] == "working"
        assert (main["detail"], main["summary"] if decision == "allow" else None) == shown


def test_the_handled_update_says_allowed_when_the_tool_ran() -> None:
    run = _asked()
    (out,) = run(ev("PostToolUse", **bash("touch t.txt"), tool_response={"stdout": ""}))
    assert (out["answer"], "by" in out) == ("allowed", False)  # by whom: not known


def test_the_handled_update_says_denied_in_the_terminal_after_esc() -> None:
    run = _asked()
    assert run.session is not None
    episode = run.session["episode"]
    seen = events.observed(
        "Reconciled",
        SID,
        next(_clock),
        source="transcript",
        outcome="rejected",
        agent_id=None,
        episode=episode,
        observed_ms=next(_clock),
    )
    (out,) = run(seen)
    assert (out["answer"], out["by"]) == ("denied", "in the terminal")


def test_the_record_that_ends_a_permission_says_how_it_was_answered() -> None:
    # `lookout tail` shows it: what the alerts' update says, on the line of the proof.
    run = _asked()
    assert run.session is not None
    seen = events.observed(
        "Reconciled",
        SID,
        next(_clock),
        source="transcript",
        outcome="rejected",
        agent_id=None,
        episode=run.session["episode"],
        observed_ms=next(_clock),
    )
    run(seen)
    assert run.records[-1]["answer"] == "denied in the terminal"
    run = _asked()
    run(ev("PostToolUse", **bash("touch t.txt")))
    assert run.records[-1]["answer"] == "allowed"
    run = _asked()
    remote = {"request_id": "r1", "decision": "allow", "by": "Telegram user 42"}
    request = {k: v for k, v in bash("touch t.txt").items() if k != "tool_use_id"}
    run(ev("RemoteDecision", **request, remote=remote))
    assert run.records[-1]["answer"] == "allowed by Telegram user 42"


def test_an_approved_call_s_late_post_tool_use_still_says_allowed() -> None:
    """At load the batch's sync PostToolBatch is recorded before the call's async PostToolUse
    (started first, so late): the batch ends the dialog without saying how; the late hook then
    says it ran, for the deciding hook to read (lookout.remote.local)."""
    run = _asked()
    started_first = next(_clock)
    call = bash("touch t.txt")
    batch = {k: call[k] for k in ("tool_name", "tool_input", "tool_use_id")}
    run(ev("PostToolBatch", tool_calls=[batch]))
    assert run.session is not None
    said = run.session["main"]["answered"]
    assert (said["answer"], said["tool_use_id"]) == (None, "toolu_1")
    run(ev("PostToolUse", ts=started_first, **call))
    assert run.records[-1]["late"] is True
    assert run.session["main"]["answered"]["answer"] == "allowed"
    run(ev("PostToolUse", **bash("touch other.txt", "toolu_2")))  # another call: no word of it
    assert run.session["main"]["answered"]["tool_use_id"] == "toolu_1"


def test_a_question_raised_by_its_pre_tool_use_names_its_request() -> None:
    # The alert finds the request its PermissionRequest records, whichever hook came first.
    run = started()
    (intent,) = run(
        ev(
            "PreToolUse",
            tool_name="AskUserQuestion",
            tool_input=QUESTION,
            tool_use_id="toolu_q",
            prompt_id="p1",
        )
    )
    assert intent["kind"] == "question"
    assert intent["request"] == [None, "p1", events.tool_key("AskUserQuestion", QUESTION)]


QUESTION = {"questions": [{"question": "Which?", "options": [{"label": "A"}, {"label": "B"}]}]}


def test_permission_request_matches_its_pending_tool_use() -> None:
    run = started()
    run(ev("PreToolUse", **bash("touch t.txt", "toolu_A")))
    run(ev("PreToolUse", **bash("ls", "toolu_B")))
    run(
        ev(
            "PermissionRequest",
            tool_name="Bash",
            tool_input={"command": "touch t.txt", "description": "d"},
        )
    )
    assert run.session is not None
    assert run.session["main"]["episode"]["tool_use_id"] == "toolu_A"
    # The parallel tool finishing does not end the other tool's episode.
    run(ev("PostToolUse", **bash("ls", "toolu_B")))
    assert run.status == ("attention", "permission")
    run(ev("PostToolUseFailure", **bash("touch t.txt", "toolu_A"), error="denied"))
    assert run.status == ("working", None)


def test_notification_permission_prompt_alone_opens_an_episode() -> None:
    run = started()
    run(ev("PreToolUse", **bash("rm -rf build/")))
    run(
        ev(
            "Notification",
            notification_type="permission_prompt",
            message="Claude needs your permission",
        )
    )
    assert run.status == ("attention", "permission")
    assert run.kinds()[-1] == "permission"
    run(ev("PostToolUse", **bash("rm -rf build/")))
    assert run.status == ("working", None)


def test_attention_is_sticky_against_activity_noise() -> None:
    run = started()
    run(ev("PermissionRequest", tool_name="Bash", tool_input={"command": "make"}))
    for noise in (
        ev("PreToolUse", **bash("ls", "toolu_other")),
        ev("MessageDisplay", turn_id="t", message_id="m", index=0, final=False, delta="x"),
        ev(
            "InstructionsLoaded",
            file_path="/x/CLAUDE.md",
            memory_type="Project",
            load_reason="session_start",
        ),
        ev(
            "Notification",
            notification_type="idle_prompt",
            message="Claude is waiting for your input",
        ),
        ev("SessionStart", source="compact"),
        ev("PreCompact", trigger="auto", custom_instructions=None),
        ev("SubagentStart", agent_id="a1", agent_type="Explore"),
    ):
        run(noise)
        assert run.status == ("attention", "permission"), noise["name"]
    assert run.kinds().count("permission") == 1


def test_escape_at_the_dialog_is_cleared_by_the_next_prompt() -> None:
    run = started()
    run(ev("PermissionRequest", tool_name="Write", tool_input={"file_path": "/a", "content": "x"}))
    out = run(ev("UserPromptSubmit", prompt="never mind", prompt_id="p2"))
    assert [i["kind"] for i in out] == ["resolved"]
    assert run.status == ("working", None)


def test_permission_denied_in_auto_mode_keeps_working() -> None:
    run = started()
    run(ev("PreToolUse", **bash("rm -rf /")))
    run(ev("PermissionDenied", **bash("rm -rf /"), reason="Classifier unavailable"))
    assert run.status == ("working", None)


def test_denied_in_print_mode_is_cleared_by_the_batch() -> None:
    run = started()
    run(ev("PreToolUse", **bash("touch x", "toolu_9")))
    run(
        ev(
            "PermissionRequest",
            tool_name="Bash",
            tool_input={"command": "touch x", "description": "d"},
        )
    )
    run(
        ev(
            "PostToolBatch",
            tool_calls=[
                {
                    "tool_name": "Bash",
                    "tool_input": {"command": "touch x", "description": "d"},
                    "tool_use_id": "toolu_9",
                    "tool_response": "denied",
                }
            ],
        )
    )
    assert run.status == ("working", None)
    assert run.kinds()[-1] == "resolved"


# -- questions, plans, elicitations, input -----------------------------------------------------


def test_ask_user_question() -> None:
    run = started()
    question = {"questions": [{"question": "Which database should I use?", "options": []}]}
    tool = {"tool_name": "AskUserQuestion", "tool_input": question, "tool_use_id": "toolu_q"}
    out = run(ev("PreToolUse", **tool))
    assert run.status == ("attention", "question")
    assert out[0]["kind"] == "question"
    assert out[0]["question"] == "Which database should I use?"
    assert out[0]["summary"] == "Which database should I use?"
    # Its permission dialog is the same episode.
    assert run(ev("PermissionRequest", tool_name="AskUserQuestion", tool_input=question)) == []
    assert run(ev("Notification", notification_type="permission_prompt", message="m")) == []
    out = run(ev("PostToolUse", **tool, tool_response={"answers": {}}))
    assert [i["kind"] for i in out] == ["resolved"]
    assert run.status == ("working", None)


def test_exit_plan_mode() -> None:
    run = started()
    plan = "# Plan: migrate the schema\n\n1. add column\n2. backfill"
    out = run(
        ev("PreToolUse", tool_name="ExitPlanMode", tool_input={"plan": plan}, tool_use_id="toolu_p")
    )
    assert run.status == ("attention", "plan")
    assert out[0]["summary"] == "# Plan: migrate the schema"
    assert out[0]["message"].startswith("# Plan")
    run(
        ev(
            "PostToolUse",
            tool_name="ExitPlanMode",
            tool_input={"plan": plan},
            tool_use_id="toolu_p",
        )
    )
    assert run.status == ("working", None)


def test_elicitation() -> None:
    run = started()
    run(ev("Elicitation", mcp_server_name="github", message="Enter a token", mode="form"))
    assert run.status == ("attention", "elicitation")
    assert run(ev("Notification", notification_type="elicitation_dialog", message="m")) == []
    out = run(ev("ElicitationResult", mcp_server_name="github", action="accept"))
    assert [i["kind"] for i in out] == ["resolved"]
    assert run.status == ("working", None)


def test_agent_needs_input_is_cleared_when_a_tool_completes() -> None:
    run = started()
    run(ev("PreToolUse", **bash("git push")))
    run(ev("Notification", notification_type="agent_needs_input", message="needs your choice"))
    assert run.status == ("attention", "input")
    run(ev("PostToolUse", **bash("git push")))
    assert run.status == ("working", None)


def test_push_notification_is_a_message_and_changes_nothing() -> None:
    run = started()
    out = run(ev("Notification", notification_type="push_notification", message="Deploy finished"))
    assert [i["kind"] for i in out] == ["message"]
    assert out[0]["message"] == "Deploy finished"
    assert run.status == ("working", None)


@pytest.mark.parametrize(
    "kind", ["auth_success", "agent_completed", "computer_use_enter", "brand_new_type"]
)
def test_other_notifications_change_nothing(kind: str) -> None:
    run = started()
    assert run(ev("Notification", notification_type=kind, message="x")) == []
    assert run.status == ("working", None)
    assert run.records[-1]["notification_type"] == kind


# -- turns -------------------------------------------------------------------------------------


def test_turn_outcome_done_once_with_duration() -> None:
    run = Run()
    run(ev("SessionStart", source="startup", ts=1000))
    run(ev("UserPromptSubmit", prompt="go", prompt_id="p1", ts=2000))
    out = run(
        ev(
            "Stop",
            last_assistant_message="All **done**.",
            prompt_id="p1",
            ts=194000,
            background_tasks=[],
            stop_hook_active=False,
        )
    )
    assert [i["kind"] for i in out] == ["done"]
    assert out[0]["duration_ms"] == 192000
    assert run.records[-1]["duration_ms"] == 192000
    assert run.status == ("idle", None)
    # A repeated Stop of the same turn, and the idle reminder, do not make a second "done".
    assert run(ev("Stop", last_assistant_message="All done again", prompt_id="p1", ts=195000)) == []
    out = run(ev("Notification", notification_type="idle_prompt", message="waiting", ts=254000))
    assert [i["kind"] for i in out] == ["idle"]
    assert (
        run(ev("Notification", notification_type="idle_prompt", message="waiting", ts=314000)) == []
    )
    assert run.status == ("idle", None)


def test_a_message_that_asks_makes_the_outcome_a_question() -> None:
    run = started()
    out = run(
        ev(
            "Stop",
            last_assistant_message="I found two options.\n\nShould I **delete** them?\n",
            background_tasks=[],
        )
    )
    assert [i["kind"] for i in out] == ["question"]
    assert "Should I" in out[0]["question"]


def test_asks_user() -> None:
    assert machine.asks_user("Want me to continue?")
    assert machine.asks_user("Done.\n\n**Shall I push?**\n\n")
    assert not machine.asks_user("Done. Why? Because it works.")
    assert not machine.asks_user("")


def test_stop_failure_is_attention_error_and_the_outcome() -> None:
    run = started()
    out = run(
        ev(
            "StopFailure",
            error="rate_limit",
            last_assistant_message="API Error: Request rejected (429)",
        )
    )
    assert run.status == ("attention", "error")
    assert [i["kind"] for i in out] == ["error"]
    assert out[0]["summary"] == "rate or usage limit reached: API Error: Request rejected (429)"
    assert run.detail == "rate_limit"  # the error's code, what a rule or script reads
    assert "429" in out[0]["message"]
    assert out[0]["episode"]
    out = run(ev("UserPromptSubmit", prompt="try again", prompt_id="p2"))
    assert [i["kind"] for i in out] == ["resolved"]
    assert run.status == ("working", None)


def test_expansion_and_submit_of_one_prompt_are_one_turn() -> None:
    run = Run()
    run(ev("SessionStart", source="startup", ts=0))
    run(ev("UserPromptExpansion", prompt="/hello", prompt_id="p1", command_name="hello", ts=1000))
    run(ev("UserPromptSubmit", prompt="/hello", prompt_id="p1", ts=5000))
    out = run(ev("Stop", last_assistant_message="hi", prompt_id="p1", ts=11000))
    assert out[0]["duration_ms"] == 10000


# -- subagents ---------------------------------------------------------------------------------


def test_async_subagent_keeps_the_parent_working_until_it_finishes() -> None:
    run = Run()
    run(ev("SessionStart", source="startup", ts=0))
    run(ev("UserPromptSubmit", prompt="research", prompt_id="p1", ts=1000))
    run(
        ev(
            "PreToolUse",
            tool_name="Agent",
            tool_input={
                "description": "sub task",
                "prompt": "x",
                "subagent_type": "general-purpose",
            },
            tool_use_id="toolu_ag",
            ts=2000,
        )
    )
    run(ev("SubagentStart", agent_id="a1", agent_type="general-purpose", ts=3000))
    run(ev("PostToolUse", tool_name="Agent", tool_input={}, tool_use_id="toolu_ag", ts=4000))
    running = [{"id": "a1", "type": "subagent", "status": "running", "description": "sub task"}]
    out = run(ev("Stop", last_assistant_message="Started it.", background_tasks=running, ts=5000))
    assert out == []  # not done: its agent still runs
    assert run.status == ("working", None)
    assert run.detail == "1 background agent"
    run(
        ev(
            "PreToolUse",
            agent_id="a1",
            agent_type="general-purpose",
            **bash("grep -r x", "toolu_c"),
            ts=6000,
        )
    )
    assert run.session is not None
    assert run.session["agents"]["a1"]["status"] == "working"
    assert run.session["agents"]["a1"]["detail"] == "Bash"
    assert run.records[-1]["agent_id"] == "a1"
    assert run.records[-1]["agent_status"] == "working"
    out = run(
        ev(
            "SubagentStop",
            agent_id="a1",
            agent_type="general-purpose",
            last_assistant_message="found it",
            background_tasks=[],
            ts=9000,
        )
    )
    assert [i["kind"] for i in out] == ["subagent_done"]
    assert out[0]["agent_id"] == "a1"
    assert out[0]["duration_ms"] == 6000
    assert run.session["agents"]["a1"]["status"] == "done"
    # Not idle: the client wakes the parent with a task-notification turn next.
    assert run.status == ("working", None)
    run(
        ev(
            "UserPromptSubmit",
            prompt='<task-notification>\n<summary>Agent "sub task" finished</summary>',
            prompt_id="p2",
            ts=9500,
        )
    )
    assert run.session["main"]["summary"] == 'Agent "sub task" finished'
    out = run(
        ev("Stop", last_assistant_message="The agent found it.", background_tasks=[], ts=12000)
    )
    assert [i["kind"] for i in out] == ["done"]
    assert out[0]["duration_ms"] == 11000  # from the user's prompt, not the wake-up


def test_attention_inside_a_subagent_is_the_parents_attention() -> None:
    run = started()
    run(ev("SubagentStart", agent_id="a1", agent_type="Explore"))
    out = run(
        ev(
            "PermissionRequest",
            agent_id="a1",
            agent_type="Explore",
            tool_name="Bash",
            tool_input={"command": "curl example.test"},
        )
    )
    assert run.status == ("attention", "permission")
    assert run.detail == "Explore: Bash"
    assert out[0]["kind"] == "permission"
    assert out[0]["agent_id"] is None  # session attention, never filtered as a subagent event
    assert out[0]["agent_type"] == "Explore"
    # The main thread's own activity does not hide it.
    run(ev("PreToolUse", **bash("ls", "toolu_main")))
    assert run.status == ("attention", "permission")
    out = run(
        ev(
            "PostToolUse",
            agent_id="a1",
            agent_type="Explore",
            tool_name="Bash",
            tool_input={"command": "curl example.test"},
            tool_use_id="toolu_x",
        )
    )
    assert [i["kind"] for i in out] == ["resolved"]
    assert run.status == ("working", None)


def test_a_subagent_finishing_before_the_parents_stop_leaves_one_outcome() -> None:
    run = started()
    run(ev("SubagentStart", agent_id="a1", agent_type="general-purpose"))
    run(ev("SubagentStop", agent_id="a1", agent_type="general-purpose", last_assistant_message="x"))
    assert run.status == ("working", None)
    run(ev("UserPromptSubmit", prompt="<task-notification><summary>done</summary>", prompt_id="p2"))
    out = run(ev("Stop", last_assistant_message="All done.", background_tasks=[]))
    assert [i["kind"] for i in out] == ["done"]
    assert run.status == ("idle", None)


def test_permission_dialog_of_a_question_is_the_question() -> None:
    # PreToolUse is registered async: its record may come after the dialog's PermissionRequest.
    run = started()
    question = {"questions": [{"question": "Ship it?"}]}
    out = run(ev("PermissionRequest", tool_name="AskUserQuestion", tool_input=question))
    assert run.status == ("attention", "question")
    assert out[0]["kind"] == "question" and out[0]["summary"] == "Ship it?"
    late = ev(
        "PreToolUse",
        tool_name="AskUserQuestion",
        tool_input=question,
        tool_use_id="q",
        ts=run.records[-1]["seq"],
    )  # started long before
    assert run(late) == []
    assert run.status == ("attention", "question")


def test_a_late_question_still_opens_its_episode_unless_it_was_answered() -> None:
    # PreToolUse is async: a parallel tool's records can land before the question's.
    question = {"questions": [{"question": "Which one?"}]}
    ask = {"tool_name": "AskUserQuestion", "tool_input": question, "tool_use_id": "toolu_q"}
    run = Run()
    run(ev("SessionStart", source="startup", ts=1000))
    run(ev("UserPromptSubmit", prompt="go", prompt_id="p1", ts=2000))
    run(ev("PreToolUse", **bash("ls", "toolu_ls"), ts=3001))
    out = run(ev("PreToolUse", **ask, ts=3000))
    assert [i["kind"] for i in out] == ["question"]
    assert run.status == ("attention", "question")
    # Answered before its PreToolUse record arrived: nothing to open any more.
    run2 = Run()
    run2(ev("SessionStart", source="startup", ts=1000))
    run2(ev("UserPromptSubmit", prompt="go", prompt_id="p1", ts=2000))
    run2(ev("PostToolUse", **ask, tool_response={}, ts=9000))
    assert run2(ev("PreToolUse", **ask, ts=3000)) == []
    assert run2.records[-1]["late"] is True
    assert run2.status == ("working", None)
    # Or its turn ended.
    run3 = Run()
    run3(ev("UserPromptSubmit", prompt="go", prompt_id="p1", ts=2000))
    run3(ev("Stop", last_assistant_message="ok", ts=9000))
    assert run3(ev("PreToolUse", **ask, ts=3000)) == []
    assert run3.status == ("idle", None)


def test_internal_agents_are_not_children() -> None:
    run = started()
    run(ev("SubagentStop", agent_id="internal", agent_type="", last_assistant_message="summary"))
    assert run.session is not None
    assert run.session["agents"] == {}
    assert run.kinds().count("subagent_done") == 0


def test_subagents_not_running_at_stop_are_finished() -> None:
    run = started()
    run(ev("SubagentStart", agent_id="a1", agent_type="Explore"))
    run(ev("Stop", last_assistant_message="ok", background_tasks=[]))
    assert run.session is not None
    assert run.session["agents"]["a1"]["status"] == "done"
    assert run.status == ("idle", None)


def test_teammate_idle() -> None:
    run = started()
    run(ev("TeammateIdle", teammate_name="researcher", team_name="t"))
    assert run.session is not None
    assert run.session["agents"]["teammate:researcher"]["status"] == "idle"


# -- compaction, cwd, session lifecycle --------------------------------------------------------


def test_compaction_returns_to_the_status_before() -> None:
    run = started()
    run(ev("Stop", last_assistant_message="ok", background_tasks=[]))
    run(ev("PreCompact", trigger="manual", custom_instructions=None))
    assert (run.status, run.detail) == (("working", None), "Compacting")
    run(ev("SubagentStop", agent_id="c1", agent_type="", last_assistant_message="s"))
    run(ev("SessionStart", source="compact"))
    run(ev("PostCompact", trigger="manual", compact_summary="s"))
    assert run.status == ("idle", None)


def test_cwd_changed_updates_the_cwd_not_the_project() -> None:
    run = started()
    run(ev("CwdChanged", old_cwd="/home/dev/projects/demo", new_cwd="/home/dev/projects/demo/sub"))
    assert run.session is not None
    assert run.session["cwd"] == "/home/dev/projects/demo/sub"
    assert run.session["project"] == "demo"
    assert run.status == ("working", None)


def test_project_comes_from_claude_project_dir() -> None:
    session, _, _ = machine.apply(
        None,
        ev(
            "SessionStart", source="startup", cwd="/w/api/src", env={"CLAUDE_PROJECT_DIR": "/w/api"}
        ),
    )
    assert session["project"] == "api"


def test_session_records_pid_and_pane() -> None:
    session, record, _ = machine.apply(
        None, ev("SessionStart", source="startup", env={"CLAUDE_PID": "4242", "TMUX_PANE": "%3"})
    )
    assert (session["pid"], session["tmux_pane"]) == (4242, "%3")
    assert (record["pid"], record["tmux_pane"]) == (4242, "%3")


def test_the_location_is_kept_until_an_event_from_somewhere_else_replaces_it() -> None:
    first = {"TMUX": "/tmp/tmux-0/a,1,0", "TMUX_PANE": "%3"}
    session, record, _ = machine.apply(None, ev("SessionStart", source="startup", env=first))
    assert session["where"] == {"tmux_socket": "/tmp/tmux-0/a", "tmux_pane": "%3"}
    assert "where" not in record  # the snapshot holds it; events.jsonl keeps only tmux_pane
    session, _, _ = machine.apply(session, ev("UserPromptSubmit", prompt="hi"))  # no env
    assert session["where"] == {"tmux_socket": "/tmp/tmux-0/a", "tmux_pane": "%3"}
    resumed = {"TMUX": "/tmp/tmux-0/b,1,0", "TMUX_PANE": "%9", "TERM_PROGRAM": "tmux"}
    session, _, _ = machine.apply(session, ev("Stop", env=resumed))
    assert session["where"] == {
        "tmux_socket": "/tmp/tmux-0/b",
        "tmux_pane": "%9",
        "term_program": "tmux",
    }
    assert session["tmux_pane"] == "%9"


def test_nothing_resurrects_an_ended_session_but_session_start() -> None:
    run = started()
    out = run(ev("SessionEnd", reason="prompt_input_exit"))
    assert [i["kind"] for i in out] == ["session_end"]
    for late in (
        ev("PostToolUse", **bash("ls")),
        ev("Notification", notification_type="permission_prompt", message="m"),
        ev("Stop", last_assistant_message="x"),
        ev("UserPromptSubmit", prompt="x"),
    ):
        assert run(late) == []
        assert run.status == ("ended", "prompt_input_exit")
    out = run(ev("SessionStart", source="resume"))
    assert run.status == ("idle", None)
    assert [i["kind"] for i in out] == ["session_start"]


def test_session_end_resolves_open_attention() -> None:
    run = started()
    run(ev("PermissionRequest", tool_name="Bash", tool_input={"command": "x"}))
    out = run(ev("SessionEnd", reason="other"))
    assert [i["kind"] for i in out] == ["resolved", "session_end"]


def test_clear_resolves_and_starts_over() -> None:
    run = started()
    run(ev("StopFailure", error="server_error", last_assistant_message="API Error"))
    run(ev("SessionEnd", reason="clear"))
    out = run(ev("SessionStart", source="clear"))
    assert run.status == ("idle", None)
    assert [i["kind"] for i in out] == ["session_start"]


# -- delivery quirks ---------------------------------------------------------------------------


def test_duplicate_deliveries_are_recorded_but_inert() -> None:
    run = started()
    body = {
        "session_id": SID,
        "cwd": "/p",
        "hook_event_name": "PermissionRequest",
        "tool_name": "Bash",
        "tool_input": {"command": "make"},
    }
    first = events.parse(body, {}, 5_000_000, "same-bytes", None)
    again = events.parse(body, {}, 5_001_500, "same-bytes", None)
    much_later = events.parse(body, {}, 5_010_000, "same-bytes", None)
    assert [i["kind"] for i in run(first)] == ["permission"]
    assert run(again) == []
    assert run.records[-1]["duplicate"] is True
    assert run.records[-1]["seq"] == run.records[-2]["seq"] + 1
    run(much_later)
    assert run.records[-1]["duplicate"] is False
    assert run.kinds().count("permission") == 1


def test_the_same_dialog_asked_again_after_an_answer_is_not_a_duplicate() -> None:
    # Found by issue 26's real-client recording: one prompt asked for the same command twice
    # within 1.3 s; the second dialog was taken for a duplicate delivery, the status said
    # working while the dialog was open, and no alert went out.
    run = started()
    body = {
        "session_id": SID,
        "cwd": "/p",
        "hook_event_name": "PermissionRequest",
        "tool_name": "Bash",
        "tool_input": {"command": "npm test"},
    }
    t0 = next(_clock)
    assert [i["kind"] for i in run(events.parse(body, {}, t0, "same", None))] == ["permission"]
    run(ev("PostToolUse", tool_name="Bash", tool_input={"command": "npm test"}, ts=t0 + 600))
    assert run.session is not None and run.session["status"] == "working"
    asked_again = run(events.parse(body, {}, t0 + 1300, "same", None))
    assert run.records[-1]["duplicate"] is False
    assert [i["kind"] for i in asked_again] == ["permission"]
    assert run.status == ("attention", "permission")


def test_a_late_async_notification_cannot_undo_a_newer_status() -> None:
    run = Run()
    run(ev("SessionStart", source="startup", ts=1000))
    run(ev("UserPromptSubmit", prompt="go", prompt_id="p1", ts=2000))
    run(ev("Stop", last_assistant_message="ok", ts=3000))
    run(ev("UserPromptSubmit", prompt="next", prompt_id="p2", ts=70000))
    # The idle reminder's hook started before the new prompt but arrived after it.
    out = run(ev("Notification", notification_type="idle_prompt", message="waiting", ts=63000))
    assert out == []
    assert run.records[-1]["late"] is True
    assert run.status == ("working", None)


def test_arrival_order_of_async_hooks_does_not_change_the_statuses() -> None:
    """The same deliveries with async ones arriving late end in the same state."""
    timeline = [
        ev("SessionStart", source="startup", ts=1000),
        ev("UserPromptSubmit", prompt="go", prompt_id="p1", ts=2000),
        ev("PreToolUse", **bash("make"), ts=3000),
        ev(
            "PermissionRequest",
            tool_name="Bash",
            tool_input={"command": "make", "description": "d"},
            ts=3100,
        ),
        ev("Notification", notification_type="permission_prompt", message="m", ts=9100),
        ev("PostToolUse", **bash("make"), ts=12000),
        ev("Stop", last_assistant_message="built", ts=15000),
        ev("Notification", notification_type="idle_prompt", message="waiting", ts=75000),
        ev("SessionEnd", reason="other", ts=80000),
    ]
    in_order = Run()
    for e in timeline:
        in_order(e)
    shuffled = Run()
    for i in (0, 1, 2, 3, 5, 4, 6, 8, 7):  # both Notifications arrive after later events
        shuffled(timeline[i])
    assert shuffled.status == in_order.status == ("ended", "other")
    assert shuffled.kinds() == ["session_start", "permission", "resolved", "done", "session_end"]
    assert in_order.kinds() == [
        "session_start",
        "permission",
        "resolved",
        "done",
        "idle",
        "session_end",
    ]


def test_unknown_events_and_fields_are_recorded_and_harmless() -> None:
    run = started()
    out = run(ev("FutureEvent", brand_new_field={"x": [1, 2]}))
    assert out == []
    assert run.status == ("working", None)
    assert run.records[-1]["event"] == "FutureEvent"
    out = run(ev("PreToolUse", tool_name="Bash", tool_input="not an object", tool_use_id=7))
    assert run.status == ("working", None)


def test_summaries_are_short_single_lines() -> None:
    run = started()
    run(ev("PreToolUse", **bash("echo " + "x" * 500 + "\nsecond line")))
    summary = run.records[-1]["summary"]
    assert len(summary) == 200 and summary.endswith("…") and "\n" not in summary


# -- issue 10: truthful attention ----------------------------------------------------------------


def observed(run: Run, name: str, outcome: str, **fields: Any) -> list[dict[str, Any]]:
    # As lookout.reconcile records it: at the time of the proof.
    ts = fields.get("observed_ms") or next(_clock)
    return run(events.observed(name, SID, ts, source="transcript", outcome=outcome, **fields))


def asking(command: str = "touch x") -> Run:
    run = started()
    run(ev("PreToolUse", **bash(command)))
    run(ev("PermissionRequest", **{k: v for k, v in bash(command).items() if k != "tool_use_id"}))
    assert run.status == ("attention", "permission")
    return run


def test_reconciled_rejection_ends_the_episode_and_the_turn_without_a_done() -> None:
    run = asking()
    episode = run.session["episode"] if run.session else None
    intents = observed(run, "Reconciled", "rejected", episode=episode)
    assert run.status == ("idle", None)
    assert [(i["kind"], i["outcome"]) for i in intents] == [("resolved", "rejected")]
    assert run.records[-1]["event"] == "Reconciled"
    assert run.records[-1]["outcome"] == "rejected"
    assert run.records[-1]["source"] == "transcript"
    # The turn was interrupted: its late idle reminder is not a "done".
    run(ev("Notification", notification_type="idle_prompt", message="waiting"))
    assert "done" not in run.kinds()


def test_reconciled_approval_shows_the_running_tool() -> None:
    run = asking("make -j8")
    episode = run.session["episode"] if run.session else None
    observed(run, "Reconciled", "approved", episode=episode)
    assert run.status == ("working", None)
    assert run.detail == "Bash"
    assert run.session and run.session["summary"] == "make -j8"
    # Its PostToolUse later changes nothing but the detail, and sends nothing more.
    before = len(run.intents)
    run(ev("PostToolUse", **bash("make -j8")))
    assert run.status == ("working", None) and len(run.intents) == before


def test_reconciled_for_another_episode_changes_nothing() -> None:
    run = asking()
    intents = observed(run, "Reconciled", "rejected", episode="some-older-episode")
    assert intents == [] and run.status == ("attention", "permission")


def test_reconciled_interrupt_counts_only_after_the_status_it_corrects() -> None:
    run = started()
    run(ev("PreToolUse", **bash("ls")))
    status_ms = run.session["status_ms"] if run.session else 0
    observed(run, "Reconciled", "interrupted", observed_ms=status_ms - 10)
    assert run.status == ("working", None)
    observed(run, "Reconciled", "interrupted", observed_ms=status_ms + 10)
    assert run.status == ("idle", None)


def test_a_turn_lookout_interrupted_stays_over_when_its_cancelled_call_reports_back() -> None:
    # Issue 38: Gemini CLI fires no hook for a cancelled turn, then AfterTool (PostToolUse) for
    # the cancelled call. `lookout interrupt` recorded the stop (source steer): the turn stays
    # over, never working again to be called stuck; a new call or prompt works again.
    run = started()
    run(ev("PreToolUse", **bash("sleep 12")))
    at = next(_clock)
    run(
        events.observed(
            "Reconciled", SID, at, source="steer", outcome="interrupted", observed_ms=at
        )
    )
    assert run.status == ("idle", None) and run.session and run.session["evidence"] == "steer"
    assert run.session["turn"]["outcome"] == "interrupted"
    run(ev("PostToolUse", **bash("sleep 12")))
    assert run.status == ("idle", None) and run.session["evidence"] == "steer"
    run(ev("PreToolUse", **bash("ls", "toolu_2")))  # it does run a tool after all: working
    assert run.status == ("working", None)
    # A stop another reader proved (Claude Code's transcript) keeps the old rule.
    other = started()
    other(ev("PreToolUse", **bash("sleep 12")))
    observed(other, "Reconciled", "interrupted")
    other(ev("PostToolUse", **bash("sleep 12")))
    assert other.status == ("working", None)


def test_process_gone_ends_the_session_and_says_so_in_the_resolved_intent() -> None:
    run = asking()
    intents = observed(run, "Reconciled", "process_gone")
    assert run.status == ("ended", "process_gone")
    assert [(i["kind"], i.get("outcome")) for i in intents] == [
        ("resolved", "ended"),
        ("session_end", None),
    ]
    assert observed(run, "Reconciled", "process_gone") == []  # once


def test_ack_clears_attention_by_hand() -> None:
    run = asking()
    intents = observed(run, "Ack", "ack")
    assert run.status == ("idle", None)
    assert [(i["kind"], i["outcome"]) for i in intents] == [("resolved", "ack")]
    assert run.records[-1]["event"] == "Ack"


def test_the_parents_stop_leaves_a_running_subagents_dialog_open() -> None:
    run = started()
    run(ev("SubagentStart", agent_id="a1", agent_type="general-purpose"))
    run(ev("PreToolUse", agent_id="a1", agent_type="general-purpose", **bash("touch s")))
    run(
        ev(
            "PermissionRequest",
            agent_id="a1",
            agent_type="general-purpose",
            tool_name="Bash",
            tool_input={"command": "touch s", "description": "d"},
        )
    )
    background = [{"id": "a1", "type": "subagent", "status": "running"}]
    run(ev("Stop", last_assistant_message="started", background_tasks=background))
    assert run.status == ("attention", "permission")
    assert "resolved" not in run.kinds()


def test_the_fallback_dialogs_notification_names_the_pending_command() -> None:
    run = started()
    run(ev("PreToolUse", **bash("touch a_long_name")))
    intents = run(
        ev(
            "Notification",
            notification_type="permission_prompt",
            message="Claude needs your permission",
        )
    )
    assert run.status == ("attention", "permission")
    assert run.detail == "Bash"
    assert [(i["kind"], i["summary"], i["tool_name"]) for i in intents] == [
        ("permission", "touch a_long_name", "Bash")
    ]


def test_the_plan_without_its_text_reads_like_a_sentence() -> None:
    run = started()
    intents = run(ev("PreToolUse", tool_name="ExitPlanMode", tool_input={}, tool_use_id="t1"))
    assert [(i["kind"], i["summary"]) for i in intents] == [("plan", events.PLAN_READY)]


def test_age_of_an_episode_is_kept_through_its_late_notification() -> None:
    run = asking()
    since = run.session["since_ms"] if run.session else None
    run(ev("Notification", notification_type="permission_prompt", message="m"))
    assert run.session and run.session["since_ms"] == since and since is not None


def test_a_second_failure_while_in_error_notifies_and_sends_no_handled() -> None:
    run = started()
    run(ev("StopFailure", error="rate_limit", last_assistant_message="API Error: 429"))
    assert run.kinds() == ["session_start", "error"]
    run(ev("PreCompact", trigger="manual", custom_instructions=None))
    run(ev("StopFailure", error="rate_limit", last_assistant_message="compaction failed 429"))
    assert run.kinds() == ["session_start", "error", "error"]
    assert run.status == ("attention", "error")


def test_finished_agents_leave_with_the_next_prompt() -> None:
    run = started()
    run(ev("SubagentStart", agent_id="a1", agent_type="general-purpose"))
    run(ev("SubagentStop", agent_id="a1", agent_type="general-purpose"))
    run(ev("Stop", last_assistant_message="ok", background_tasks=[]))
    assert run.session and "a1" in run.session["agents"]
    run(ev("UserPromptSubmit", prompt="next", prompt_id="p2"))
    assert run.session and run.session["agents"] == {}


def test_print_mode_is_on_every_intent() -> None:
    run = Run()
    env = {"CLAUDE_CODE_ENTRYPOINT": "sdk-cli"}
    run(ev("SessionStart", source="startup", env=env))
    run(ev("UserPromptSubmit", prompt="p", prompt_id="p1", env=env))
    intents = run(ev("PermissionRequest", tool_name="Bash", tool_input={"command": "x"}, env=env))
    assert [(i["kind"], i["print_mode"]) for i in intents] == [("permission", True)]
    assert asking().intents[-1]["print_mode"] is False


def test_a_late_pre_tool_use_tells_the_open_episode_its_call() -> None:
    # PreToolUse is async: its record can land after the PermissionRequest of the same call.
    run = started()
    call = bash("touch late")
    run(ev("PermissionRequest", **{k: v for k, v in call.items() if k != "tool_use_id"}))
    assert run.session and run.session["main"]["episode"]["tool_use_id"] is None
    run(ev("PreToolUse", **call))
    assert run.session["main"]["episode"]["tool_use_id"] == "toolu_1"
    assert run.status == ("attention", "permission")


def test_a_pre_tool_use_recorded_late_still_binds_the_episode() -> None:
    run = started()
    call = bash("touch later")
    t = next(_clock)
    run(ev("PermissionRequest", ts=t + 20, **{k: v for k, v in call.items() if k != "tool_use_id"}))
    late = run(ev("PreToolUse", ts=t, **call))  # started first, finished after
    assert late == [] and run.records[-1]["late"] is True
    assert run.session and run.session["main"]["episode"]["tool_use_id"] == "toolu_1"
    assert run.status == ("attention", "permission")


def _asked_again_after_esc(pre_first: bool) -> tuple[Run, str]:
    """`touch x` asked, Esc at its dialog (no hook), a prompt, then the same command asked again
    (its PreToolUse recorded before or after its PermissionRequest): the first episode's key."""
    run = asking("touch x")
    assert run.session is not None
    first = run.session["episode"]
    run(ev("UserPromptSubmit", prompt="hello", prompt_id="p2"))
    run(ev("Stop"))
    run(ev("UserPromptSubmit", prompt="again", prompt_id="p3"))
    call = bash("touch x", "toolu_2")
    asked = {k: v for k, v in call.items() if k != "tool_use_id"}
    if pre_first:
        run(ev("PreToolUse", **call))
        run(ev("PermissionRequest", prompt_id="p3", **asked))
    else:
        t = next(_clock)
        run(ev("PermissionRequest", ts=t + 20, prompt_id="p3", **asked))
        run(ev("PreToolUse", ts=t, **call))
    assert run.status == ("attention", "permission")
    return run, first


@pytest.mark.parametrize("pre_first", [True, False])
def test_the_same_command_asked_again_after_esc_is_a_new_dialog(pre_first: bool) -> None:
    run, first = _asked_again_after_esc(pre_first)
    assert run.session is not None
    episode = run.session["main"]["episode"]
    # Its own call, never the one refused with Esc (whose transcript says "rejected").
    assert episode["tool_use_id"] == "toolu_2"
    # Its own key: what was proved about the first dialog never ends this one.
    assert episode["key"] != first
    observed(run, "Reconciled", "rejected", episode=first)
    assert run.status == ("attention", "permission")


def test_the_async_events_are_hookspecs() -> None:
    # machine writes them out (a hook does not load hookspec); SessionEnd is async but ends all.
    registered = {name for name, _, is_async in hookspec.EVENTS if is_async}
    assert registered - {"SessionEnd"} == machine.ASYNC_EVENTS


# -- time passing with no event (issue 32: stuck sessions and usage limits) ------------------------


# Later than every time the module's clock hands out: these tests place their events themselves.
T = 1_900_000_000_000


def found(outcome: str, ts: int, **fields: Any) -> Any:
    """A reader's Reconciled finding, as lookout.reconcile builds it."""
    return events.observed(
        "Reconciled",
        SID,
        ts,
        source=fields.pop("source", "silence"),
        outcome=outcome,
        observed_ms=fields.pop("observed_ms", ts),
        **fields,
    )


def stuck_run() -> tuple[Run, int]:
    """A turn thinking since its last hook, then found silent for 10 minutes."""
    run = started()
    run(ev("PreToolUse", ts=T + 50_000, **bash("make")))
    run(ev("PostToolUse", ts=T + 60_000, **bash("make")))
    assert (run.status, run.detail) == (("working", None), "Thinking")
    out = run(
        found("stuck", T + 660_000, at_ms=T + 60_000, summary="silent since 10:01 (10m): no hook")
    )
    assert [i["kind"] for i in out] == ["stuck"]
    assert (out[0]["reason"], out[0]["message"]) == ("stuck", "silent since 10:01 (10m): no hook")
    return run, T + 660_000


def test_a_silent_turn_is_stuck_once_with_its_evidence() -> None:
    run, at = stuck_run()
    assert run.status == ("attention", "stuck")
    assert run.detail == "Thinking"  # what it was doing when it went quiet
    assert run.session is not None
    assert run.session["evidence"] == "silence"
    assert run.session["since_ms"] == T + 60_000  # its AGE: how long it has been silent
    assert run.session["summary"] == "silent since 10:01 (10m): no hook"
    # The same finding again (another reader, the sender) changes nothing and sends nothing.
    assert run(found("stuck", at + 5000, at_ms=T + 60_000, summary="again")) == []
    assert run.status == ("attention", "stuck")


def test_any_hook_brings_a_stuck_session_back_to_work() -> None:
    run, at = stuck_run()
    out = run(ev("PreToolUse", ts=at + 1000, **bash("make test", "toolu_2")))
    assert out == []  # no `resolved`: nobody answered anything
    assert (run.status, run.detail) == (("working", None), "Bash")
    assert run.session is not None and run.session["evidence"] == "hook"


def test_a_late_async_hook_still_proves_it_lives() -> None:
    # An async PostToolUse that started before the stuck finding and landed after it: late (its
    # meaning is stale), but a hook ran, so the session is not stuck.
    run, at = stuck_run()
    record_count = len(run.records)
    run(ev("PostToolUse", ts=at - 1000, **bash("make")))
    assert run.records[record_count]["late"] is True
    assert run.status == ("working", None)


def test_a_readers_sign_of_life_brings_it_back_and_an_older_one_does_not() -> None:
    run, at = stuck_run()
    run(
        found("alive", at + 10, source="transcript", observed_ms=T + 30_000)
    )  # before it went quiet
    assert run.status == ("attention", "stuck")
    run(found("alive", T + 700_000, source="transcript"))
    assert (run.status, run.detail) == (("working", None), "Thinking")
    assert run.session is not None and run.session["evidence"] == "transcript"


def test_the_registry_going_idle_wakes_it_and_ends_the_turn() -> None:
    run, _ = stuck_run()
    run(found("idle", T + 700_000, source="client"))
    assert run.status == ("idle", None)


def test_ack_clears_a_stuck_session() -> None:
    run, at = stuck_run()
    out = run(events.observed("Ack", SID, at + 5000, source="user", outcome="ack"))
    assert [i["kind"] for i in out] == ["resolved"]
    assert run.status == ("idle", None)


def test_a_stale_stuck_finding_changes_nothing() -> None:
    run = started()
    run(ev("PreToolUse", ts=T + 900_000, **bash("make")))  # a hook after the quiet point it names
    assert run(found("stuck", T + 660_000, at_ms=T + 60_000, summary="x")) == []
    assert run.status == ("working", None)
    idle = started()
    idle(ev("Stop", ts=T + 70_000, last_assistant_message="done"))
    assert idle(found("stuck", T + 660_000, at_ms=T + 60_000, summary="x")) == []
    assert idle.status == ("idle", None)


def test_a_session_working_only_for_its_background_agent_wakes_to_that() -> None:
    run = started()
    run(ev("SubagentStart", ts=T + 50_000, agent_id="a1", agent_type="general-purpose"))
    stop = {"background_tasks": [{"id": "a1", "type": "subagent", "status": "running"}]}
    run(ev("Stop", ts=T + 60_000, last_assistant_message="started it", **stop))
    assert (run.status, run.detail) == (("working", None), "1 background agent")
    run(found("stuck", T + 660_000, at_ms=T + 60_000, summary="x"))
    assert run.status == ("attention", "stuck")
    run(ev("PostToolUse", ts=T + 700_000, agent_id="a1", **bash("ls")))
    assert run.status == ("working", None)
    assert run.session is not None and run.session["main"]["status"] == "idle"


def test_a_tool_its_hooks_saw_start_is_timed_until_it_ends() -> None:
    run = started()
    run(ev("PreToolUse", ts=T + 50_000, **bash("sleep 30")))
    assert run.session is not None
    assert run.session["main"]["tool_ms"] == T + 50_000
    run(ev("PostToolUse", ts=T + 80_000, **bash("sleep 30")))
    assert "tool_ms" not in run.session["main"]
    run(ev("PreToolUse", ts=T + 90_000, tool_name="Agent", tool_use_id="t9", tool_input={}))
    assert "tool_ms" not in run.session["main"]  # a subagent's life shows through its hooks


def limited_run() -> tuple[Run, str]:
    run = started()
    text = "You've hit your 5-hour limit · resets 12:45pm (Europe/Berlin)"
    run(ev("StopFailure", ts=T + 100_000, error="rate_limit", last_assistant_message=text))
    assert run.session is not None
    return run, str(run.session["episode"])


def test_a_usage_limits_time_is_kept_once_and_its_lifting_sent_once() -> None:
    run, key = limited_run()
    assert (
        run(found("limit", T + 100_000, source="transcript", episode=key, at_ms=T + 900_000)) == []
    )
    assert run.session is not None
    assert run.session["main"]["episode"]["until_ms"] == T + 900_000
    run(found("limit", T + 100_000, source="hook", episode=key, at_ms=1))  # read already: kept
    assert run.session["main"]["episode"]["until_ms"] == T + 900_000
    assert run(found("limit_lifted", T + 899_000, source="clock", episode=key)) == []  # not yet
    said = "the limit lifted at 10:15: send a prompt to continue"
    out = run(found("limit_lifted", T + 900_000, source="clock", episode=key, summary=said))
    assert [(i["kind"], i["reason"], i["message"]) for i in out] == [
        ("limit_lifted", "rate_limit", said)
    ]
    assert run.status == ("attention", "error")  # it still waits for a prompt
    assert run(found("limit_lifted", T + 901_000, source="clock", episode=key, summary=said)) == []


def test_a_limit_lifting_after_the_user_moved_on_sends_nothing() -> None:
    run, key = limited_run()
    run(found("limit", T + 100_000, source="transcript", episode=key, at_ms=T + 900_000))
    run(ev("UserPromptSubmit", ts=T + 500_000, prompt="go on", prompt_id="p2"))
    assert run(found("limit_lifted", T + 900_000, source="clock", episode=key, summary="x")) == []
