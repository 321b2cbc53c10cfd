"""Turns a hook's stdin payload into a normalized event: the few fields the state machine needs,
plus a short human summary. Pure and lenient: every field but the session id may be missing or of
the wrong type. Never keeps a full tool_input, tool_response or prompt."""

from __future__ import annotations

from lookout import _jsonfast

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import TypedDict

    class Texts(TypedDict):
        """What parse() gathers from the payload's text fields, event by event."""

        summary: str
        message: str
        source: str | None
        error: str | None
        background: list[list[str]] | None
        batch: list[list[str | None]]

    class Event(TypedDict):
        name: str
        session_id: str
        agent: str
        agent_id: str | None
        agent_type: str | None
        cwd: str
        project: str
        prompt_id: str | None
        ts_ms: int
        pid: int | None
        pid_start: int | None  # its start time (procs.stat): a reused pid is not the agent
        tmux_pane: str | None
        where: dict[str, str] | None
        digest: str
        tool_name: str | None
        tool_use_id: str | None
        tool_key: str | None
        runs_key: str | None  # tool_key of what runs: the input less the model's commentary
        notification_type: str | None
        source: str | None
        error: str | None
        model: str | None
        summary: str
        message: str
        background: list[list[str]] | None
        batch: list[list[str | None]]
        new_cwd: str | None
        remote: dict[str, object] | None
        transcript: str | None
        entrypoint: str | None
        outcome: str | None
        episode: str | None
        observed_ms: int | None
        # A reader's finding about a time: `stuck`'s last sign of life, `limit`'s lift time.
        at_ms: int | None
        rule: str | None


SUMMARY_MAX = 200
# Tools that ask the user a question: Claude Code's, Copilot CLI's and OpenCode's.
QUESTION_TOOLS = ("AskUserQuestion", "ask_user", "question", "request_user_input")
MESSAGE_MAX = 2000
# 2.1.332 sends ExitPlanMode with `tool_input: {}` (the plan is in a file): say what it is.
PLAN_READY = "plan ready for your approval"
_PLAN_FALLBACK = {"ExitPlanMode": PLAN_READY, "EnterPlanMode": "Claude wants to plan first"}


def one_line(text: object, limit: int = SUMMARY_MAX) -> str:
    """Whitespace folded to single spaces, cut to `limit` characters with an ellipsis."""
    if not isinstance(text, str):
        return ""
    folded = " ".join(text.split())
    return folded if len(folded) <= limit else folded[: limit - 1] + "…"


def first_line(text: object, limit: int = SUMMARY_MAX) -> str:
    if not isinstance(text, str):
        return ""
    for line in text.splitlines():
        if line.strip():
            return one_line(line, limit)
    return ""


def clip(text: object, limit: int = MESSAGE_MAX) -> str:
    if not isinstance(text, str):
        return ""
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


# -- for the agent modules' translate (lookout.agents.*): shaping a Claude-like payload ---------


def nonempty(value: object) -> str | None:
    """A non-empty string, else None."""
    return _str(value)


def first(data: dict[str, object], *keys: str) -> object:
    """The value of the first of `keys` that is present and not null."""
    for key in keys:
        if key in data and data[key] is not None:
            return data[key]
    return None


def tool_args(value: object) -> object:
    """Tool arguments: an object, or a JSON string of one (Copilot's toolArgs, Cursor's MCP)."""
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            return _jsonfast.loads(value)
        except ValueError:
            return {}
    return value


def base_payload(name: str, session_id: object, cwd: object) -> dict[str, object]:
    """The start of a translated payload: its event, session and project."""
    return {"hook_event_name": name, "session_id": _str(session_id) or "", "cwd": _str(cwd) or ""}


def _strip_url(url: str) -> str:
    # Query strings and fragments often carry tokens: keep scheme, host and path only.
    for sep in ("?", "#"):
        url = url.split(sep, 1)[0]
    return url


def tool_summary(tool_name: str | None, tool_input: object) -> str:
    """What a person needs to recognise a tool call: the command, the file, the question."""
    if not isinstance(tool_input, dict):
        return ""
    if tool_name in QUESTION_TOOLS:
        return one_line(question_text(tool_input))
    if tool_name in ("ExitPlanMode", "EnterPlanMode"):
        return first_line(tool_input.get("plan")) or _PLAN_FALLBACK[tool_name]
    for key in (
        "command",
        "file_path",
        "filePath",  # OpenCode
        "notebook_path",
        "pattern",
        "query",
        "description",
    ):
        value = tool_input.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            value = " ".join(value)  # Codex's shell tool takes an argv
        if isinstance(value, str) and value.strip():
            return first_line(value)
    url = tool_input.get("url")
    if isinstance(url, str):
        return one_line(_strip_url(url))
    return ""


def question_text(tool_input: object) -> str:
    """The question(s) of an AskUserQuestion call, one per line."""
    if not isinstance(tool_input, dict):
        return ""
    questions = tool_input.get("questions")
    texts: list[str] = []
    if isinstance(questions, list):
        for q in questions:
            if isinstance(q, dict) and isinstance(q.get("question"), str):
                texts.append(q["question"].strip())
    elif isinstance(tool_input.get("question"), str):
        texts.append(tool_input["question"].strip())
    return "\n".join(t for t in texts if t)


# The largest prime below 2**64: the bytes, read as one number, modulo it.
_DIGEST_PRIME = 2**64 - 59


def digest(data: bytes) -> str:
    """A short fingerprint for equality checks (not security), 16 hex digits: a polynomial hash
    computed by int's C arithmetic, so that the hook loads no zlib (a shared library, ~0.3 ms)."""
    value = int.from_bytes(data, "little") % _DIGEST_PRIME
    # Trailing zero bytes add nothing to that number: the length tells such inputs apart.
    return f"{value ^ (len(data) & 0xFFFFFF) << 40:016x}"


def _digest(value: object) -> str:
    return digest(_jsonfast.dumps(value).encode("utf-8", "surrogatepass"))


def tool_key(tool_name: str | None, tool_input: object) -> str | None:
    """Identifies one tool call by what it does, for events that carry no tool_use_id."""
    if tool_name is None:
        return None
    return f"{tool_name}:{_digest(tool_input)}"


# Each agent's tools' commentary fields (the model's words beside what runs), as its plug-in's
# COMMENTARY names them (lookout.agents.<name>; a hook may not import them: a test keeps the two
# equal).
COMMENTARY: dict[str, dict[str, tuple[str, ...]]] = {
    "claude": {"Bash": ("description",), "Agent": ("description",), "Task": ("description",)},
    "codex": {"Bash": ("description",)},
    "copilot": {"bash": ("description",)},
    "gemini": {"run_shell_command": ("description",)},
    "opencode": {"bash": ("description",)},
    "cursor": {},
}


def runs_key(agent: str, tool_name: str | None, tool_input: object) -> str | None:
    """tool_key of what runs: the input less its commentary text (Codex sends the model's
    justification in PermissionRequest's input, not in PreToolUse's or PostToolUse's), so that
    every hook of one call names the same call."""
    fields = COMMENTARY.get(agent, {}).get(tool_name or "")
    if fields and isinstance(tool_input, dict):
        # Only text is commentary (as Allow judges it): any other value there counts.
        tool_input = {
            k: v for k, v in tool_input.items() if not (k in fields and isinstance(v, str))
        }
    return tool_key(tool_name, tool_input)


# Where a session lives, from the hook's environment: these ids and nothing else. Each is checked
# for its shape (ids are digits, paths absolute, names printable) so that nothing odd is kept.
_ID_VARS = (
    ("kitty_window", "KITTY_WINDOW_ID"),
    ("wezterm_pane", "WEZTERM_PANE"),
    ("zellij_pane", "ZELLIJ_PANE_ID"),
)
_NAME_VARS = (
    ("kitty_listen_on", "KITTY_LISTEN_ON"),
    ("zellij_session", "ZELLIJ_SESSION_NAME"),
    ("term_program", "TERM_PROGRAM"),
)
_NAME_MAX = 512


def _digits(value: str) -> bool:
    return value.isascii() and value.isdigit() and len(value) < 20


def _printable(value: str | None) -> str | None:
    if value and len(value) <= _NAME_MAX and value.isprintable():
        return value
    return None


def tmux_pane(env: Mapping[str, str]) -> str | None:
    pane = env.get("TMUX_PANE")
    return pane if pane and pane[:1] == "%" and _digits(pane[1:]) else None


def where(env: Mapping[str, str]) -> dict[str, str] | None:
    """The terminal location ids of the hook's environment: the tmux server socket (first field
    of $TMUX) and pane, kitty's window and remote-control address, WezTerm's and zellij's panes,
    TERM_PROGRAM. None when there is none."""
    found: dict[str, str] = {}
    pane = tmux_pane(env)
    socket = _printable(env.get("TMUX", "").split(",", 1)[0])
    if pane and socket and socket[:1] == "/":
        found["tmux_socket"] = socket
        found["tmux_pane"] = pane
    for key, var in _ID_VARS:
        value = env.get(var)
        if value and _digits(value):
            found[key] = value
    for key, var in _NAME_VARS:
        value = _printable(env.get(var))
        if value:
            found[key] = value
    return found or None


def _pid(value: str | None) -> int | None:
    if value and value.isdigit():
        pid = int(value)
        return pid if pid > 0 else None
    return None


def _task_prompt_summary(prompt: str) -> str:
    # Machine-injected turns carry XML; its <summary> is the human part.
    start = prompt.find("<summary>")
    end = prompt.find("</summary>")
    if start != -1 and end > start:
        return one_line(prompt[start + 9 : end])
    return "background task finished"


def parse(
    payload: dict[str, object],
    env: Mapping[str, str],
    ts_ms: int,
    digest: str,
    fallback_name: str | None = None,
) -> Event:
    """Normalize one payload. `digest` identifies the raw delivery (for duplicate detection)."""
    name = _str(payload.get("hook_event_name")) or fallback_name or "Unknown"
    session_id = _str(payload.get("session_id")) or _str(env.get("CLAUDE_CODE_SESSION_ID")) or ""
    cwd = _str(payload.get("cwd")) or ""
    project_dir = _str(env.get("CLAUDE_PROJECT_DIR")) or cwd
    tool_name = _str(payload.get("tool_name"))
    tool_input = payload.get("tool_input")
    t: Texts = {
        "summary": "",
        "message": "",
        "source": None,
        "error": None,
        "background": None,
        "batch": [],
    }
    if tool_name is not None:
        _tool_texts(tool_name, tool_input, t)
    for extract in _EXTRACTORS.get(name, ()):
        extract(payload, t)
    summary = t["summary"]
    agent = agent_of(payload, env)
    remote = None
    if name == "RemoteDecision":
        remote = _remote(payload)
        summary = _answered(remote, summary)
    return {
        "name": name,
        "session_id": session_id,
        "agent": agent,
        "agent_id": _agent_id(name, payload),
        "agent_type": _str(payload.get("agent_type")) or _str(payload.get("teammate_name")),
        "cwd": cwd,
        "project": project_dir.rstrip("/").rpartition("/")[2] or project_dir,
        "prompt_id": _str(payload.get("prompt_id")) or _str(payload.get("turn_id")),
        "ts_ms": ts_ms,
        "pid": _pid(env.get("CLAUDE_PID")),
        "pid_start": None,  # the runner reads it from /proc
        "tmux_pane": tmux_pane(env),
        "where": where(env),
        "digest": digest,
        "tool_name": tool_name,
        "tool_use_id": _str(payload.get("tool_use_id")),
        "tool_key": tool_key(tool_name, tool_input),
        "runs_key": runs_key(agent, tool_name, tool_input),
        "notification_type": _str(payload.get("notification_type")),
        "source": t["source"],
        "error": t["error"],
        "model": _str(payload.get("model")),
        "summary": summary,
        "message": t["message"],
        "background": t["background"],
        "batch": t["batch"],
        "new_cwd": _str(payload.get("new_cwd")),
        # RemoteDecision (lookout's own event, lookout.remote.decide): who answered, from where.
        "remote": remote,
        # Where the client writes the conversation: readers reconcile open episodes against it.
        "transcript": _str(payload.get("transcript_path")),
        # `cli` interactive; `sdk-cli` for `claude -p`, where nobody can answer a dialog; another
        # agent's translate may name its own (words.OPENCODE_RUN).
        "entrypoint": _str(payload.get("lookout_entrypoint"))
        or _str(env.get("CLAUDE_CODE_ENTRYPOINT")),
        "outcome": None,
        "episode": None,
        "observed_ms": None,
        "at_ms": None,
        # `lookout suggest` replays approvals against rules: the exact one this dialog needed.
        "rule": permission_rule(tool_name, tool_input) if name == "PermissionRequest" else None,
    }


def _tool_texts(tool_name: str, tool_input: object, t: Texts) -> None:
    """A tool call's summary, and its message: the question asked, the plan shown, else the
    summary."""
    t["summary"] = tool_summary(tool_name, tool_input)
    if tool_name in QUESTION_TOOLS:
        t["message"] = clip(question_text(tool_input))
    elif tool_name in _PLAN_FALLBACK and isinstance(tool_input, dict):
        t["message"] = clip(tool_input.get("plan")) or _PLAN_FALLBACK[tool_name]
    else:
        t["message"] = t["summary"]


def _answered(remote: dict[str, object] | None, summary: str) -> str:
    """A RemoteDecision's summary says who answered what, for tail and the timeline: "allow by
    the dashboard (…): <command>"."""
    if not remote:
        return summary
    said = f"{remote.get('decision', '?')} by {remote.get('by') or '?'}"
    return one_line(f"{said}: {summary}" if summary else said)


def _agent_id(name: str, payload: dict[str, object]) -> str | None:
    """The subagent an event is about; an agent team's idle teammate is one by its name."""
    agent_id = _str(payload.get("agent_id"))
    if name == "TeammateIdle" and agent_id is None and _str(payload.get("teammate_name")):
        return f"teammate:{payload['teammate_name']}"
    return agent_id


# Characters a Bash rule's specifier cannot hold literally: `*` is a wildcard, `\` its escape,
# parentheses end the rule; control characters have no business in a rule.
_RULE_UNSAFE = frozenset("*()\\") | frozenset(chr(c) for c in (*range(0x20), 0x7F))
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789.-")


def permission_rule(tool_name: str | None, tool_input: object) -> str | None:
    """The exact Claude Code permission rule that allows this call and nothing else, or None
    when there is none (docs/report.md). A Bash command is kept only when it is no longer than
    a summary (a record holds no more of it than its summary does) and a rule states it
    literally."""
    if tool_name is None or not isinstance(tool_input, dict):
        return None
    if tool_name == "Bash":
        return _bash_rule(tool_input.get("command"))
    if tool_name == "WebFetch":
        return _domain_rule(tool_input.get("url"))
    return _mcp_rule(tool_name)


def _bash_rule(command: object) -> str | None:
    """Bash(<command>), when the rule can state the command literally."""
    if (
        not isinstance(command, str)
        or not command
        or len(command) > SUMMARY_MAX
        or command != command.strip()
        or "  " in command
        or any(c in _RULE_UNSAFE for c in command)
    ):
        return None
    return f"Bash({command})"


def _domain_rule(url: object) -> str | None:
    """WebFetch(domain:<host>): the URL's host, without user, port or a trailing dot."""
    if not isinstance(url, str) or "://" not in url:
        return None
    host = url.split("://", 1)[1]
    for sep in "/?#":
        host = host.split(sep, 1)[0]
    host = host.rsplit("@", 1)[-1].split(":", 1)[0].lower().rstrip(".")
    if not host or not set(host) <= _HOST_CHARS:
        return None
    return f"WebFetch(domain:{host})"


def _mcp_rule(tool_name: str) -> str | None:
    """An MCP tool's rule is its name, when the name is a plain one."""
    named = all(c.isascii() and (c.isalnum() or c in "_-") for c in tool_name)
    if tool_name.startswith("mcp__") and len(tool_name) <= SUMMARY_MAX and named:
        return tool_name
    return None


# -- what each event contributes to the texts (parse runs the steps listed for its name) -------


def _prompt(payload: dict[str, object], t: Texts) -> None:
    prompt = payload.get("prompt")
    if isinstance(prompt, str) and prompt.lstrip().startswith("<task-notification>"):
        t["summary"] = _task_prompt_summary(prompt)
        t["source"] = "task-notification"
    else:
        t["summary"] = first_line(prompt)


def _notification(payload: dict[str, object], t: Texts) -> None:
    t["summary"] = one_line(payload.get("message"))
    t["message"] = clip(payload.get("message"))


def _last_message(payload: dict[str, object], t: Texts) -> None:
    text = payload.get("last_assistant_message")
    t["summary"] = first_line(text)
    t["message"] = clip(text)
    tasks = payload.get("background_tasks")
    if isinstance(tasks, list):
        t["background"] = [
            [str(task.get("id", "")), str(task.get("type", ""))]
            for task in tasks
            if isinstance(task, dict) and task.get("status") == "running"
        ]


# What each StopFailure `error` means, in words (docs/statuses.md; the values of 2.1.332).
FAILURES = {
    "rate_limit": "rate or usage limit reached",
    "overloaded": "the API is overloaded",
    "authentication_failed": "the API key or login was refused",
    "oauth_org_not_allowed": "this organization may not use Claude Code",
    "account_on_hold": "the account is on hold",
    "verification_required": "the account needs verifying",
    "billing_error": "billing: no credit left or a payment problem",
    "invalid_request": "the API refused the request as invalid",
    "model_not_found": "the model was not found",
    "server_error": "the API failed (server error)",
    "max_output_tokens": "the reply hit the output token limit",
    "cloud_credential_error": "the cloud provider refused the credentials",
    "unknown": "the API call failed",
}


def _failure(payload: dict[str, object], t: Texts) -> None:
    error = _str(payload.get("error")) or "unknown"
    t["error"] = error
    said = FAILURES.get(error, error)
    t["summary"] = one_line(f"{said}: {t['summary']}" if t["summary"] else said)


def _batch(payload: dict[str, object], t: Texts) -> None:
    calls = payload.get("tool_calls")
    if isinstance(calls, list):
        for call in calls:
            if isinstance(call, dict):
                call_tool = _str(call.get("tool_name"))
                t["batch"].append(
                    [_str(call.get("tool_use_id")), tool_key(call_tool, call.get("tool_input"))]
                )


def _tool_failure(payload: dict[str, object], t: Texts) -> None:
    t["message"] = clip(payload.get("error"))


def _session_source(payload: dict[str, object], t: Texts) -> None:
    t["source"] = _str(payload.get("source")) or _str(payload.get("reason"))
    t["summary"] = t["summary"] or (t["source"] or "")


def _trigger(payload: dict[str, object], t: Texts) -> None:
    t["source"] = _str(payload.get("trigger"))


def _agent_label(payload: dict[str, object], t: Texts) -> None:
    label = _str(payload.get("agent_type")) or _str(payload.get("teammate_name"))
    t["summary"] = t["summary"] or (label or "")


def _cwd_changed(payload: dict[str, object], t: Texts) -> None:
    t["summary"] = one_line(payload.get("new_cwd"))


_EXTRACTORS = {
    "UserPromptSubmit": (_prompt,),
    "UserPromptExpansion": (_prompt,),
    "Notification": (_notification,),
    "Elicitation": (_notification,),
    "Stop": (_last_message,),
    "SubagentStop": (_last_message, _agent_label),
    "StopFailure": (_last_message, _failure),
    "PostToolBatch": (_batch,),
    "PostToolUseFailure": (_tool_failure,),
    "SessionStart": (_session_source,),
    "SessionEnd": (_session_source,),
    "Setup": (_trigger,),
    "PreCompact": (_trigger,),
    "PostCompact": (_trigger,),
    "SubagentStart": (_agent_label,),
    "TeammateIdle": (_agent_label,),
    "CwdChanged": (_cwd_changed,),
}


def _remote(payload: dict[str, object]) -> dict[str, object] | None:
    remote = payload.get("remote")
    if not isinstance(remote, dict):
        return None
    keys = ("request_id", "decision", "by", "source", "user_agent")
    return {k: one_line(remote.get(k)) for k in keys if isinstance(remote.get(k), str)}


# Every agent lookout knows: lookout.agents.registry's names (a hook may not import it; a test
# keeps the two equal).
AGENTS = ("claude", "codex", "gemini", "copilot", "opencode", "cursor")


def is_cursor(payload: dict[str, object]) -> bool:
    """A payload Cursor sent (Claude Code never sends these keys). Cursor also runs the hooks in
    ~/.claude/settings.json when third-party configs are on."""
    return "cursor_version" in payload or (
        "conversation_id" in payload and "workspace_roots" in payload
    )


def agent_of(payload: dict[str, object], env: Mapping[str, str]) -> str:
    """Which coding agent ran the hook: the installer says so in LOOKOUT_AGENT; otherwise Codex
    is recognised by what Claude Code never sends (turn_id without prompt_id, a null
    transcript_path, permission_mode on SessionStart)."""
    declared = env.get("LOOKOUT_AGENT")
    if declared in AGENTS:
        return declared
    if "turn_id" in payload and "prompt_id" not in payload:
        return "codex"
    if "transcript_path" in payload and payload["transcript_path"] is None:
        return "codex"
    if payload.get("hook_event_name") == "SessionStart" and "permission_mode" in payload:
        return "codex"
    return "claude"


def observed(
    name: str,
    session_id: str,
    ts_ms: int,
    *,
    source: str,
    outcome: str,
    agent_id: str | None = None,
    episode: str | None = None,
    observed_ms: int | None = None,
    tool_name: str | None = None,
    summary: str = "",
    at_ms: int | None = None,
) -> Event:
    """An event no hook delivered: what a reader proved (`Reconciled`) or the user said (`Ack`).
    `episode` is the one it ends (the machine ignores it once another is open); `observed_ms` is
    when the proof happened, for facts that only count after the status they correct."""
    return {
        "name": name,
        "session_id": session_id,
        "agent": "claude",
        "agent_id": agent_id,
        "agent_type": None,
        "cwd": "",
        "project": "",
        "prompt_id": None,
        "ts_ms": ts_ms,
        "pid": None,
        "pid_start": None,
        "tmux_pane": None,
        "digest": f"{name}:{episode or ''}:{outcome}:{ts_ms}",
        "tool_name": tool_name,
        "tool_use_id": None,
        "tool_key": None,
        "runs_key": None,
        "where": None,
        "notification_type": None,
        "source": source,
        "error": None,
        "model": None,
        "summary": summary,
        "message": "",
        "background": None,
        "batch": [],
        "new_cwd": None,
        "remote": None,
        "transcript": None,
        "entrypoint": None,
        "outcome": outcome,
        "episode": episode,
        "observed_ms": observed_ms,
        "at_ms": at_ms,
        "rule": None,
    }
