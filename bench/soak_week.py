"""The synthetic week bench/soak.py replays: sessions of three agents in five projects, each a
list of steps (hook deliveries in the agents' real payload shapes, and the dialogs' answers),
and what that script must produce: the dialogs (report's episodes) and the alerts the
configured rules send. Pure and deterministic for a seed: no I/O but the fixtures it reads."""

from __future__ import annotations

import copy
import json
import random
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
PROJECTS = ("api", "web", "cli", "docs", "infra")
AGENTS = ("claude", "codex", "gemini")
WEEK_S = 7 * 86400
WEEK_EVENTS = 200_000
WEEK_SESSIONS = 50
CONCURRENT = 7  # sessions open at once, on average

# The rules of the soak's config (bench/soak.py writes them): which alerts a dialog or a finished
# turn must cause, per channel.
ATTENTION = ("permission", "question", "plan", "elicitation", "input", "error")
DONE_PROJECTS = ("api", "web")  # [[rules]] when = ["done"], projects = these -> cmd
TG_AGENTS = ("claude",)  # [[rules]] when = ["permission"], agents = these -> tg

# How a Claude Code permission dialog ([remote] on, a Bash command) is answered.
ANSWERS = ("telegram", "dashboard", "terminal", "denied")
ANSWER_WEIGHTS = (3, 1, 4, 1)


@dataclass
class Dialog:
    token: str  # in the dialog's text (command, question, message): what each alert carries
    sid: str
    agent: str
    project: str
    reason: str
    answer: str | None = None  # a remote permission's answer (ANSWERS), else None
    subagent: bool = False


@dataclass
class Step:
    at: float  # simulated seconds since the week began
    event: str  # the agent's own event name ("BeforeTool" for Gemini)
    payload: dict[str, Any]
    # A Claude Code PermissionRequest that [remote]'s deciding hook waits on: its answer, and
    # the events that follow it in that order (the Notification ~6 s in, the tool's result).
    dialog: Dialog | None = None
    notify: dict[str, Any] | None = None
    resolve: dict[str, Any] | None = None
    answer_after: float = 0.0  # simulated seconds from the request to its answer


@dataclass
class Session:
    sid: str
    agent: str
    project: str
    cwd: str
    steps: list[Step] = field(default_factory=list)


@dataclass
class Week:
    sessions: list[Session]
    dialogs: list[Dialog]
    done: list[tuple[str, str, str, str]]  # (token, session id, agent, project) of done turns
    events: int  # hook deliveries (the deciding hook not counted: it records no delivery)
    seconds: float  # simulated length

    def expected_alerts(self) -> dict[tuple[str, str], int]:
        """(channel, token) -> 1 for every alert the rules send."""
        out: dict[tuple[str, str], int] = {}
        for d in self.dialogs:
            out[("hook", d.token)] = 1
            out[("cmd", d.token)] = 1
            if d.reason == "permission" and d.agent in TG_AGENTS:
                out[("tg", d.token)] = 1
        for token, _sid, _agent, project in self.done:
            if project in DONE_PROJECTS:
                out[("cmd", token)] = 1
        return out

    def episodes(self) -> dict[tuple[str, str], int]:
        """(project, reason) -> dialogs: what `lookout report` must count."""
        out: dict[tuple[str, str], int] = {}
        for d in self.dialogs:
            out[(d.project, d.reason)] = out.get((d.project, d.reason), 0) + 1
        return out


def _fixture(path: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / path).read_text())
    return data


class Builder:
    """Writes one session's steps; counts events; numbers dialogs and turns across the week."""

    def __init__(self, week: WeekBuilder, session: Session, start: float, gap: float) -> None:
        self.w = week
        self.s = session
        self.t = start
        self.gap = gap
        self.prompt_id = ""
        self.home = week.home

    # -- time and steps ------------------------------------------------------------------------

    def tick(self, scale: float = 1.0) -> float:
        self.t += self.w.rng.expovariate(1.0 / (self.gap * scale))
        return self.t

    def add(self, event: str, payload: dict[str, Any], scale: float = 1.0, **more: Any) -> Step:
        step = Step(self.tick(scale), event, payload, **more)
        self.s.steps.append(step)
        self.w.events += 1 + (1 if step.notify else 0) + (1 if step.resolve else 0)
        return step

    def base(self, name: str) -> dict[str, Any]:
        agent = self.s.agent
        if agent == "gemini":
            body = copy.deepcopy(self.w.gemini.get(name) or {"hook_event_name": name})
            body["transcript_path"] = (
                f"{self.home}/.gemini/tmp/{self.s.project}/chats/{self.s.sid}.jsonl"
            )
        elif agent == "codex":
            body = copy.deepcopy(self.w.codex.get(name) or self.w.claude[name])
            body["transcript_path"] = f"{self.home}/.codex/sessions/rollout-{self.s.sid}.jsonl"
            if self.prompt_id:
                body["turn_id"] = self.prompt_id
        else:
            body = copy.deepcopy(self.w.claude[name])
            slug = self.s.cwd.replace("/", "-")
            body["transcript_path"] = f"{self.home}/.claude/projects/{slug}/{self.s.sid}.jsonl"
            if name != "SessionStart":
                body["prompt_id"] = self.prompt_id
        body["session_id"] = self.s.sid
        body["cwd"] = self.s.cwd
        body["hook_event_name"] = name
        for stale in ("agent_id", "agent_type", "agent_transcript_path"):
            body.pop(stale, None)
        return body

    # -- what a session does --------------------------------------------------------------------

    def tool(self, name: str, tool_input: dict[str, Any], agent_id: str | None = None) -> None:
        use = f"toolu_soak_{self.w.next_id()}"
        pre = "BeforeTool" if self.s.agent == "gemini" else "PreToolUse"
        post = "AfterTool" if self.s.agent == "gemini" else "PostToolUse"
        for event, extra in ((pre, {}), (post, {"tool_response": {"stdout": "ok", "stderr": ""}})):
            body = self.base(event)
            body.update(tool_name=name, tool_input=tool_input, tool_use_id=use, **extra)
            if self.s.agent == "gemini":
                body.pop("tool_use_id")
            self._as_agent(body, agent_id)
            self.add(event, body, scale=0.3)

    def ordinary_tool(self, agent_id: str | None = None) -> None:
        n = self.w.next_id()
        kind = self.w.rng.randrange(4)
        if self.s.agent == "gemini":
            self.tool("run_shell_command", {"command": f"ls src/part{n}"})
        elif kind == 0:
            self.tool(
                "Bash",
                {"command": f"pytest -q tests/test_part{n}.py", "description": "run"},
                agent_id,
            )
        elif kind == 1:
            self.tool("Read", {"file_path": f"{self.s.cwd}/src/part{n}.py"}, agent_id)
        elif kind == 2:
            self.tool("Grep", {"pattern": f"def part{n}", "path": self.s.cwd}, agent_id)
        else:
            edit = {
                "file_path": f"{self.s.cwd}/src/part{n}.py",
                "old_string": "a",
                "new_string": "b",
            }
            self.tool("Edit", edit, agent_id)

    def _as_agent(self, body: dict[str, Any], agent_id: str | None) -> None:
        if agent_id:
            body["agent_id"] = agent_id
            body["agent_type"] = "general-purpose"

    def dialog(self, reason: str, **more: Any) -> Dialog:
        d = Dialog(
            f"soak-d{len(self.w.dialogs) + 1}",
            self.s.sid,
            self.s.agent,
            self.s.project,
            reason,
            **more,
        )
        self.w.dialogs.append(d)
        return d

    def permission(self, agent_id: str | None = None) -> None:
        agent = self.s.agent
        d = self.dialog("permission", subagent=agent_id is not None)
        command = f"make deploy-{d.token}"
        if agent == "gemini":
            pre = self.base("BeforeTool")
            pre.update(tool_name="run_shell_command", tool_input={"command": command})
            self.add("BeforeTool", pre, scale=0.3)
            note = self.base("Notification")
            note.update(
                notification_type="ToolPermission",
                message="Tool requires execution",
                details={
                    "type": "exec",
                    "title": "Confirm Shell Command",
                    "command": command,
                    "rootCommand": "make",
                },
            )
            self.add("Notification", note, scale=0.3)
            post = self.base("AfterTool")
            post.update(
                tool_name="run_shell_command",
                tool_input={"command": command},
                tool_response={"llmContent": "ok"},
            )
            self.add("AfterTool", post, scale=3)
            return
        use = f"toolu_soak_{self.w.next_id()}"
        tool_input = {"command": command, "description": "deploy"}
        pre = self.base("PreToolUse")
        pre.update(tool_name="Bash", tool_input=tool_input, tool_use_id=use)
        self._as_agent(pre, agent_id)
        self.add("PreToolUse", pre, scale=0.3)
        req = self.base("PermissionRequest")
        req.update(tool_name="Bash", tool_input=tool_input)
        req.pop("tool_use_id", None)
        self._as_agent(req, agent_id)
        post = self.base("PostToolUse")
        post.update(
            tool_name="Bash",
            tool_input=tool_input,
            tool_use_id=use,
            tool_response={"stdout": "deployed", "stderr": ""},
        )
        self._as_agent(post, agent_id)
        if agent == "codex":  # no deciding hook: answered at the terminal
            self.add("PermissionRequest", req, scale=0.3)
            self.add("PostToolUse", post, scale=3)
            return
        d.answer = self.w.rng.choices(ANSWERS, ANSWER_WEIGHTS)[0]
        wait = self.w.rng.expovariate(1.0 / (self.gap * 3))
        note = None
        if wait > 6:  # the client's permission Notification comes ~6 s after the dialog
            note = self.base("Notification")
            note.update(
                notification_type="permission_prompt",
                message="Claude needs your permission to use Bash",
            )
            self._as_agent(note, agent_id)
        self.add(
            "PermissionRequest",
            req,
            scale=0.3,
            dialog=d,
            notify=note,
            resolve=None if d.answer == "denied" else post,
            answer_after=wait,
        )
        self.t += wait

    def claude_dialog(self) -> None:
        reason = self.w.rng.choices(
            ("permission", "subagent", "question", "plan", "elicitation", "input"),
            (5, 1, 1, 1, 1, 1),
        )[0]
        if reason == "permission":
            self.permission()
        elif reason == "subagent":
            agent_id = f"a{uuid.UUID(int=self.w.rng.getrandbits(128)).hex[:16]}"
            start = self.base("SubagentStart")
            start.update(agent_id=agent_id, agent_type="general-purpose")
            self.add("SubagentStart", start, scale=0.3)
            self.ordinary_tool(agent_id)
            self.permission(agent_id)
            self.ordinary_tool(agent_id)
            stop = self.base("SubagentStop")
            stop.update(
                agent_id=agent_id,
                agent_type="general-purpose",
                background_tasks=[],
                last_assistant_message="Subtask finished.",
            )
            self.add("SubagentStop", stop, scale=0.3)
        elif reason == "question":
            d = self.dialog("question")
            tool_input = {
                "questions": [
                    {
                        "question": f"Which layout for {d.token}?",
                        "header": "Layout",
                        "options": [
                            {"label": "Flat", "description": "one level"},
                            {"label": "Nested", "description": "by module"},
                        ],
                        "multiSelect": False,
                    }
                ]
            }
            self.tool("AskUserQuestion", tool_input)
        elif reason == "plan":
            d = self.dialog("plan")
            self.tool("ExitPlanMode", {"plan": f"Plan {d.token}: split the module, then test"})
        elif reason == "elicitation":
            d = self.dialog("elicitation")
            ask = self.base("Elicitation")
            ask.update(
                mcp_server_name="tracker",
                message=f"Sign in to the tracker for {d.token}",
                requested_schema={"type": "object", "properties": {}},
            )
            self.add("Elicitation", ask, scale=0.3)
            done = self.base("ElicitationResult")
            done.update(mcp_server_name="tracker", action="accept", content={})
            self.add("ElicitationResult", done, scale=3)
        else:
            d = self.dialog("input")
            note = self.base("Notification")
            note.update(
                notification_type="agent_needs_input",
                message=f"Auto mode needs your choice for {d.token}",
            )
            self.add("Notification", note, scale=0.3)
            self.ordinary_tool()  # the choice made, the turn goes on (its Stop ends the episode)

    def turn(self, last: bool) -> None:
        """One prompt to its end: tools, maybe a dialog, then Stop (or a failed turn)."""
        rng = self.w.rng
        self.t += rng.expovariate(1.0 / (self.gap * 8))  # the user reads, thinks, types
        self.prompt_id = str(uuid.UUID(int=rng.getrandbits(128)))
        n = self.w.next_id()
        if self.s.agent == "gemini":
            body = self.base("BeforeAgent")
            body["prompt"] = f"soak task {n}"
            self.add("BeforeAgent", body)
        else:
            body = self.base("UserPromptSubmit")
            body["prompt"] = f"soak task {n}: tidy part {n}"
            self.add("UserPromptSubmit", body)
        calls = rng.randint(3, 12)
        dialog_at = rng.randrange(calls) if rng.random() < self.w.dialog_rate else -1
        for i in range(calls):
            self.ordinary_tool()
            if i % 4 == 3 and self.s.agent == "claude":
                batch = self.base("PostToolBatch")
                # Each batch its own (as the client's: its calls' ids and inputs differ); two
                # alike in a row with no change between are a duplicate delivery to lookout.
                read = {"file_path": f"{self.s.cwd}/src/part{self.w.next_id()}.py"}
                batch["tool_calls"] = [{"tool_name": "Read", "tool_input": read}]
                self.add("PostToolBatch", batch, scale=0.3)
            if i == dialog_at:
                if self.s.agent == "claude":
                    self.claude_dialog()
                else:
                    self.permission()
        # Claude Code fires StopFailure; Gemini CLI and Codex 0.169.0 never do (Codex's hooks
        # do not register it).
        failed = self.s.agent == "claude" and not last and rng.random() < self.w.error_rate
        if failed:  # the turn ends on an API error: its episode ends with the next prompt
            d = self.dialog("error")
            body = self.base("StopFailure")
            body["error"] = "rate_limit"
            body["last_assistant_message"] = f"API Error: Request rejected (429) {d.token}"
            self.add("StopFailure", body)
            return
        token = f"soak-t{len(self.w.done) + 1}"
        self.w.done.append((token, self.s.sid, self.s.agent, self.s.project))
        text = f"Tidied {token}, the tests pass."
        if self.s.agent == "gemini":
            body = self.base("AfterAgent")
            body.update(prompt=f"soak task {n}", prompt_response=text)
            self.add("AfterAgent", body)
        else:
            body = self.base("Stop")
            body["last_assistant_message"] = text
            body["background_tasks"] = []
            self.add("Stop", body)
        if self.s.agent == "claude" and rng.random() < 0.2:
            note = self.base("Notification")
            note.update(notification_type="idle_prompt", message="Claude is waiting for your input")
            self.add("Notification", note, scale=20)

    def session(self, budget: int) -> None:
        start = self.base("SessionStart")
        start["source"] = "startup"
        start.pop("prompt_id", None)
        self.add("SessionStart", start)
        until = self.w.events + budget
        while True:
            last = self.w.events + 40 >= until
            self.turn(last)
            if last:
                break
            if self.s.agent == "claude" and self.w.rng.random() < 0.03:
                for name in ("PreCompact", "PostCompact"):
                    body = self.base(name)
                    body["trigger"] = "auto"
                    self.add(name, body, scale=0.3)
        if self.s.agent != "codex":  # Codex fires no SessionEnd (lookout/agents/codex.py)
            end = self.base("SessionEnd")
            end["reason"] = "other"
            self.add("SessionEnd", end)


class WeekBuilder:
    def __init__(self, seed: int, home: str) -> None:
        self.rng = random.Random(seed)
        self.home = home
        self.dialogs: list[Dialog] = []
        self.done: list[tuple[str, str, str, str]] = []
        self.events = 0
        self._ids = 0
        self.dialog_rate = 0.35
        self.error_rate = 0.04
        payloads = FIXTURES / "payloads"
        self.claude = {}
        for name in (
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "PermissionRequest",
            "PostToolBatch",
            "Notification",
            "Stop",
            "StopFailure",
            "SubagentStart",
            "SubagentStop",
            "SessionEnd",
            "PreCompact",
            "PostCompact",
        ):
            self.claude[name] = json.loads((payloads / f"{name}.json").read_text())
        self.claude["PermissionRequest"] = _fixture("payloads/PermissionRequest-Bash.json")
        self.claude["PreToolUse"] = _fixture("payloads/PreToolUse-Bash.json")
        self.claude["PostToolUse"] = _fixture("payloads/PostToolUse-Bash.json")
        self.claude["SessionStart"] = _fixture("payloads/SessionStart-startup.json")
        self.claude["StopFailure"] = _fixture("payloads/StopFailure-rate_limit.json")
        base = {k: v for k, v in self.claude["Notification"].items() if k != "notification_type"}
        self.claude["Elicitation"] = {**base, "hook_event_name": "Elicitation"}
        self.claude["ElicitationResult"] = {**base, "hook_event_name": "ElicitationResult"}
        self.codex = {
            p.stem: json.loads(p.read_text())
            for p in (FIXTURES / "codex" / "payloads").glob("*.json")
        }
        self.gemini = {
            name: _fixture(f"gemini/{name}.json")
            for name in (
                "SessionStart",
                "BeforeAgent",
                "BeforeTool",
                "AfterTool",
                "Notification",
                "AfterAgent",
                "SessionEnd",
            )
        }

    def next_id(self) -> int:
        self._ids += 1
        return self._ids


def _fit(session: Session, start: float, length: float) -> None:
    """Stretch or squeeze the session's steps so that it lasts `length` from `start`."""
    span = session.steps[-1].at - start if session.steps else 0.0
    if span <= 0:
        return
    k = length / span
    for step in session.steps:
        step.at = start + (step.at - start) * k
        step.answer_after *= k


def build(seconds: float, events: int, sessions: int, seed: int, home: str) -> Week:
    """A week (or `seconds` of one) of `sessions` sessions and about `events` hook deliveries.
    Session i is agent AGENTS[i % 3] in project PROJECTS[i % 5]: every pairing occurs by 15."""
    w = WeekBuilder(seed, home)
    length = min(seconds * 0.9, seconds * CONCURRENT / sessions)
    out = []
    for i in range(sessions):
        agent, project = AGENTS[i % len(AGENTS)], PROJECTS[i % len(PROJECTS)]
        sid = str(uuid.UUID(int=w.rng.getrandbits(128)))
        start = w.rng.uniform(0, seconds - length) if seconds > length else 0.0
        session = Session(sid, agent, project, f"{home}/src/{project}")
        budget = events // sessions
        # Steps are spread so the session lasts about `length`: a gap's mean per event.
        b = Builder(w, session, start, gap=length / budget / 1.6)
        b.session(budget)
        _fit(session, start, length)
        out.append(session)
    end = max((s.steps[-1].at for s in out if s.steps), default=0.0)
    return Week(out, w.dialogs, w.done, w.events, end)
