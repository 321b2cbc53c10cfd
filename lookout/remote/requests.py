"""Permission requests that may be answered from afar: one record per request in
`<state>/requests/<id>.json` (0600), changed only under `requests.lock` by compare-and-set.

A record is created `pending` by the deciding hook (lookout.remote.decide) and leaves that state
once: `allowed` / `denied` (the dashboard or `lookout answer`, with the request's nonce, before it
expires), or `answered_locally` / `ended` / `expired` / `abandoned` (the deciding hook saw the
dialog answered in the terminal, the session end, its deadline, or the hook is gone). The nonce is
a fresh secret per request: it binds an answer to the request it was shown for, and it never
leaves the state directory except through the dashboard's authenticated API.

Stdlib only (it runs inside a hook); all writes go through lookout.store."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets

from lookout import _jsonfast, events, store, words
from lookout.hookspec import request_id

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TypedDict

    from lookout.agents.base import Agent, Commentary

    Record = dict[str, Any]

    class Approved(TypedDict):
        """A request's input as Allow sees it (issue 38)."""

        runs: str  # what Allow approves: the detail without the commentary
        notes: dict[str, str]  # the model's commentary: field -> its text, never approved
        missing: str  # the field that says what runs, when the input lacks it ("" when not)


PENDING = "pending"
ALLOWED = "allowed"
DENIED = "denied"
ANSWERED_LOCALLY = "answered_locally"
ENDED = "ended"
EXPIRED = "expired"
ABANDONED = "abandoned"
# Away turned off while it waited (an agent that waits only while away: lookout.away): handed
# back to the agent's own prompt.
RELEASED = "released"
DECISIONS = ("allow", "deny", "allow_always")
# Why a request no longer takes an answer, as the API and `lookout answer` say it.
NOT_PENDING = {
    ALLOWED: "already answered: allowed",
    DENIED: "already answered: denied",
    ANSWERED_LOCALLY: "answered in the terminal",
    ENDED: "the session ended",
    EXPIRED: "expired: the terminal's dialog decides now",
    ABANDONED: "no longer waiting (the agent stopped asking)",
    RELEASED: "back at the terminal (away turned off): its own prompt decides",
}
# A deny's message to the agent (`lookout answer ID deny --message TEXT`): one line the agent
# shows and the model reads.
MESSAGE_MAX = 1000
# The largest input an Allow is taken for (its JSON): beyond it the request is shown clipped, with
# that said, and only the terminal's dialog may allow it.
INPUT_MAX = 256 * 1024
# Input switches that widen what a tool call may do: highlighted wherever a request is shown.
RISKY_FLAGS = frozenset(
    ("dangerouslyDisableSandbox", "replace_all", "run_in_background", "force", "recursive")
)
# How a dialog answered in the terminal ended, when lookout can tell (the API's `reason`).
LOCAL_ANSWERS = {"allowed": "allowed in the terminal", "denied": "denied in the terminal"}
TOO_LARGE = "too large to show in full here: answer it in the terminal"
KEEP_DONE_S = 24 * 3600  # finished records stay a day (the page shows how they ended)
KEEP_MAX = 500


def _detail(
    tool_name: str, tool_input: object, asked: bool = False, leave: frozenset[str] = frozenset()
) -> str:
    """What to show before someone approves: every field of the input, in full. The command,
    the edit or the file written first, then each other field as `key: value` (an MCP tool's
    arguments, not only its model-written description; flags; timeouts). Nothing is clipped: a
    request too large to show is refused an Allow instead (INPUT_MAX). `asked`: the questions
    are shown as such (`questions`), each with its options; the detail is what else it holds.
    `leave`: fields left out (the model's commentary, which Allow does not approve)."""
    if not isinstance(tool_input, dict):
        return "" if tool_input is None else _jsonfast.dumps(tool_input)
    parts: list[str] = []
    shown: set[str] = set(leave)
    if tool_name == "AskUserQuestion":
        if not asked:
            parts.append(events.question_text(tool_input))
        shown.add("questions")
    for key in ("command", "file_path", "notebook_path", "url", "pattern", "plan"):
        value = tool_input.get(key)
        if key not in shown and isinstance(value, str) and value.strip():
            parts.append(value)
            shown.add(key)
    old, new = tool_input.get("old_string"), tool_input.get("new_string")
    if isinstance(old, str) and isinstance(new, str) and not {"old_string", "new_string"} & leave:
        parts += ["".join("- " + line for line in old.splitlines(True)).rstrip("\n")]
        parts += ["".join("+ " + line for line in new.splitlines(True)).rstrip("\n")]
        shown.update(("old_string", "new_string"))
    content = tool_input.get("content")
    if isinstance(content, str) and "content" not in shown:
        parts.append(content)
        shown.add("content")
    for key, value in tool_input.items():
        if key in shown:
            continue
        text = value if isinstance(value, str) else _jsonfast.dumps(value)
        parts.append(f"{key}: {text}")
    return "\n".join(parts)


def flags(tool_input: object) -> list[dict[str, Any]]:
    """The input's switches that are on (true booleans), risky ones marked: the page and the CLI
    show them apart, so `dangerouslyDisableSandbox` is never a line lost in a long input."""
    if not isinstance(tool_input, dict):
        return []
    return [
        {"name": str(key), "risky": key in RISKY_FLAGS}
        for key, value in tool_input.items()
        if value is True
    ]


def approved(rec: Mapping[str, Any]) -> Approved:
    """What Allow approves of `rec`: every field but the model's commentary, as its agent's
    plug-in names it from the tool's published schema (lookout.agents.<agent>.COMMENTARY). An
    unknown agent or tool, or an input no longer kept: the recorded detail, every field of it.
    Not for a hook: it loads the agent's module."""
    detail = rec.get("detail")
    runs = detail if isinstance(detail, str) else ""
    whole: Approved = {"runs": runs, "notes": {}, "missing": ""}
    tool_input, tool_name = rec.get("tool_input"), rec.get("tool_name")
    table = _commentary(rec.get("agent"), tool_name)
    if table is None or not isinstance(tool_input, dict) or rec.get("too_large"):
        return whole
    # Only text is commentary: any other value in such a field counts, as an unknown one does.
    notes = {k: v for k, v in tool_input.items() if k in table["fields"] and isinstance(v, str)}
    asked = rec.get("questions") is not None
    runs = _detail(str(tool_name), tool_input, asked, frozenset(notes))
    said = tool_input.get(table["runs"])
    missing = "" if isinstance(said, str) and said.strip() else table["runs"]
    return {"runs": runs, "notes": notes, "missing": missing}


def _commentary(agent: object, tool_name: object) -> Commentary | None:
    """The tool's commentary by its agent's table, None when either is unknown. The module is
    loaded by name, as runner loads a hook's own agent: never the registry, never the
    installer it stands on."""
    if agent not in events.AGENTS or not isinstance(tool_name, str):
        return None
    import importlib

    module: Agent = importlib.import_module(f"lookout.agents.{agent}")
    return module.COMMENTARY.get(tool_name)


def note_lines(notes: Mapping[str, str]) -> list[str]:
    """The commentary as shown after what runs: `key: text`, one line each, its line breaks
    and control characters escaped, so that no part of it reads as a line of the command."""
    from lookout.boundary import visible

    return [f"{key}: {visible(text)}" for key, text in notes.items()]


def _questions(tool_input: object) -> list[dict[str, Any]] | None:
    """AskUserQuestion's questions, option labels and their descriptions (`descriptions`, one
    per option, "" for none): the page offers them as buttons, `lookout answer` lists them."""
    if not isinstance(tool_input, dict) or not isinstance(tool_input.get("questions"), list):
        return None
    out = []
    for q in tool_input["questions"]:
        if not isinstance(q, dict) or not isinstance(q.get("question"), str):
            return None
        options = [
            o
            for o in q.get("options") or []
            if isinstance(o, dict) and isinstance(o.get("label"), str)
        ]
        out.append(
            {
                "question": q["question"],
                "header": q.get("header") if isinstance(q.get("header"), str) else "",
                "options": [o["label"] for o in options],
                "descriptions": [
                    o["description"] if isinstance(o.get("description"), str) else ""
                    for o in options
                ],
                "multi_select": q.get("multiSelect") is True,
            }
        )
    return out or None


def new_record(
    payload: Mapping[str, Any],
    env: Mapping[str, str],
    now_ms: int,
    wait_s: int,
    allow_always: bool,
) -> Record:
    """A pending record for one PermissionRequest payload (not yet saved)."""
    name = payload.get("tool_name")
    tool_name = name if isinstance(name, str) else ""
    tool_input = payload.get("tool_input")
    session_id = str(payload.get("session_id") or "")
    agent_id = payload.get("agent_id") if isinstance(payload.get("agent_id"), str) else None
    # As the recording hook's event names its turn (events.parse: Codex's turn_id), so that its
    # alert finds this request by the same id.
    prompt_id = next(
        (v for v in (payload.get("prompt_id"), payload.get("turn_id")) if isinstance(v, str) and v),
        None,
    )
    key = events.tool_key(tool_name, tool_input) or ""
    raw_input = _jsonfast.dumps(tool_input)
    digest = hashlib.sha256(raw_input.encode("utf-8", "surrogatepass"))
    too_large = len(raw_input) > INPUT_MAX
    questions = _questions(tool_input) if tool_name == "AskUserQuestion" else None
    detail = _detail(tool_name, tool_input, asked=questions is not None)
    if too_large:
        detail = detail[:INPUT_MAX] + f"\n[{TOO_LARGE}]"
    cwd = str(payload["cwd"]) if isinstance(payload.get("cwd"), str) else ""
    claude_pid = env.get("CLAUDE_PID", "")
    return {
        "v": 1,
        "id": request_id(session_id, agent_id, prompt_id, key),
        "session_id": session_id,
        "agent_id": agent_id,
        "prompt_id": prompt_id,
        "project": os.path.basename(cwd.rstrip("/")) or cwd,
        "cwd": cwd,
        "tool_name": tool_name,
        # Whose tool: its plug-in says which fields are the model's commentary (issue 38).
        "agent": events.agent_of(dict(payload), env),
        "tool_key": key,
        "summary": events.tool_summary(tool_name, tool_input),
        "detail": detail,
        "tool_input": None if too_large else tool_input,
        "flags": flags(tool_input),
        "too_large": too_large,
        "questions": questions,
        "input_hash": digest.hexdigest(),
        "allow_always": bool(allow_always and always_rules(tool_name, tool_input)),
        "created_ms": now_ms,
        "expires_ms": now_ms + wait_s * 1000,
        "nonce": secrets.token_urlsafe(24),
        "status": PENDING,
        "decision": None,
        "pid": os.getpid(),
        "claude_pid": int(claude_pid) if claude_pid.isdigit() else None,
        "resolved_ms": None,
    }


def always_rules(tool_name: object, tool_input: object) -> list[dict[str, Any]]:
    """ "Allow always", as narrow as it can be said: a session rule that allows this exact Bash
    command again (measured with 2.1.332: the same command then runs without a dialog, any other
    still asks). Nothing for a command with `*` (a rule's wildcard would allow more than was
    shown) nor for other tools. Never the client's setMode suggestion."""
    if tool_name != "Bash" or not isinstance(tool_input, dict):
        return []
    command = tool_input.get("command")
    if not isinstance(command, str) or not command.strip() or "*" in command:
        return []
    if any(ch in command for ch in "\n\r()"):
        return []  # one line, no parenthesis that could end the rule's Bash(...) early
    return [
        {
            "type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": command}],
            "behavior": "allow",
            "destination": "session",
        }
    ]


# -- files -------------------------------------------------------------------------------------


def _dir(state_dir: str) -> str:
    return os.path.join(state_dir, store.REQUESTS)


def _path(state_dir: str, rid: str) -> str:
    if not (rid and len(rid) <= 64 and rid.isascii() and rid.isalnum()):
        raise KeyError(rid)  # ids are hex: anything else names no file
    return os.path.join(_dir(state_dir), rid + ".json")


def load(state_dir: str, rid: str) -> Record | None:
    try:
        value = store.read_json(_path(state_dir, rid))
    except KeyError:
        return None
    return value if isinstance(value, dict) and not _newer(value) else None


def _newer(value: object) -> bool:
    """A newer lookout's request: not answered, rewritten or removed here (doctor says so)."""
    return store.newer(value, words.FORMATS["requests/*.json"])


def load_all(state_dir: str) -> list[Record]:
    try:
        names = os.listdir(_dir(state_dir))
    except OSError:
        return []
    out = []
    for name in names:
        if name.endswith(".json") and not name.startswith("."):
            value = store.read_json(os.path.join(_dir(state_dir), name))
            if isinstance(value, dict) and isinstance(value.get("id"), str) and not _newer(value):
                out.append(value)
    out.sort(key=lambda r: int(r.get("created_ms") or 0))
    return out


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, another user's: not ours to judge
    return True


def is_open(rec: Record, now_ms: int) -> bool:
    """Still taking an answer: pending, not expired, and its deciding hook still waiting."""
    return (
        rec.get("status") == PENDING
        and now_ms < int(rec.get("expires_ms") or 0)
        and _alive(rec.get("pid"))
    )


def save_new(state_dir: str, rec: Record, now_ms: int) -> None:
    """Save a new pending record (replacing a finished one with the same id: the same call
    asked again), and forget finished records older than a day."""
    store.ensure_dir(_dir(state_dir))
    with store.Locked(state_dir, store.REQUESTS_LOCK):
        old = load(state_dir, rec["id"])
        if old is not None and is_open(old, now_ms) and old.get("pid") != rec["pid"]:
            # Two hooks for one dialog (a settings file and a plugin): the first one answers.
            raise FileExistsError(rec["id"])
        store.write_json_atomic(_path(state_dir, rec["id"]), rec)
        _prune(state_dir, now_ms)


def _prune(state_dir: str, now_ms: int) -> None:
    records = load_all(state_dir)
    done = [r for r in records if r.get("status") != PENDING]
    stale = [r for r in done if now_ms - int(r.get("resolved_ms") or 0) > KEEP_DONE_S * 1000]
    stale += done[: max(0, len(records) - KEEP_MAX)]
    for r in stale:
        try:
            os.unlink(_path(state_dir, r["id"]))
        except (OSError, KeyError):
            pass


def resolve(
    state_dir: str, rid: str, status: str, now_ms: int, answer: str | None = None
) -> Record | None:
    """pending -> `status`, unless an answer got there first: the record as it now stands.
    `answer` (allowed | denied): how the terminal answered, for ANSWERED_LOCALLY, when known."""
    with store.Locked(state_dir, store.REQUESTS_LOCK):
        rec = load(state_dir, rid)
        if rec is None or rec.get("status") != PENDING:
            return rec
        _close(rec, status, now_ms)
        if status == ANSWERED_LOCALLY and answer in LOCAL_ANSWERS:
            rec["answered"] = answer
        store.write_json_atomic(_path(state_dir, rid), rec)
        return rec


def mark_over(state_dir: str, rid: str) -> None:
    """The dialog is over in the terminal; its hook still learns how (lookout.remote.local): no
    answer from afar is taken meanwhile."""
    with store.Locked(state_dir, store.REQUESTS_LOCK):
        rec = load(state_dir, rid)
        if rec is not None and rec.get("status") == PENDING and "over" not in rec:
            rec["over"] = True
            store.write_json_atomic(_path(state_dir, rid), rec)


def _close(rec: Record, status: str, now_ms: int) -> None:
    """pending -> `status`. The full input is kept only while it may be approved: a finished
    record keeps what the page showed (`detail`), not a second copy of every field."""
    rec["status"] = status
    rec["resolved_ms"] = now_ms
    rec.pop("tool_input", None)


class Refused(Exception):
    """An answer that was not taken: `status` is the HTTP status the API answers with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def answer(
    state_dir: str,
    rid: str,
    decision: object,
    nonce: object,
    *,
    by: str,
    source: str,
    user_agent: str,
    now_ms: int,
    answers: object = None,
    message: object = None,
) -> Record:
    """Take one decision for request `rid`: once, only with its nonce, only while it is open.
    `message`: a deny's words to the agent (None: lookout's own). Returns the updated record;
    raises Refused (404, 403, 409, 400) otherwise."""
    with store.Locked(state_dir, store.REQUESTS_LOCK):
        rec = load(state_dir, rid)
        if rec is None:
            raise Refused(404, "no such request")
        expected = str(rec.get("nonce") or "")
        given = nonce if isinstance(nonce, str) else ""
        # Constant time: the comparison must not tell how much of a guess was right.
        if not (
            expected
            and hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode())
        ):
            raise Refused(403, "wrong nonce for this request")
        status = _standing(rec, now_ms)
        if status != PENDING:
            if rec.get("status") == PENDING:
                _close(rec, status, now_ms)
                store.write_json_atomic(_path(state_dir, rid), rec)
            said = (rec.get("decision") or {}).get("answers")
            raise Refused(409, _reason(status, said, rec.get("answered")) or status)
        behavior, picked = _check_decision(rec, decision, answers)
        said = _check_message(behavior, message)
        if behavior.startswith("allow") and rec.get("too_large"):
            raise Refused(409, TOO_LARGE)
        _close(rec, ALLOWED if behavior.startswith("allow") else DENIED, now_ms)
        rec["decision"] = {
            "behavior": behavior,
            "answers": picked,
            "by": by,
            "source": source,
            "user_agent": user_agent[:200],
            "ts_ms": now_ms,
        }
        if said is not None:
            rec["decision"]["message"] = said
        store.write_json_atomic(_path(state_dir, rid), rec)
        return rec


def _standing(rec: Record, now_ms: int) -> str:
    """The record's status as an answer finds it: a pending one past its deadline is expired,
    without its hook abandoned. Refused (409) while its hook learns how the terminal answered."""
    status = str(rec.get("status"))
    if status == PENDING and now_ms >= int(rec.get("expires_ms") or 0):
        return EXPIRED
    if status == PENDING and not _alive(rec.get("pid")):
        return ABANDONED
    if status == PENDING and rec.get("over"):
        raise Refused(409, NOT_PENDING[ANSWERED_LOCALLY])
    return status


def _check_message(behavior: str, message: object) -> str | None:
    """A deny's message, checked: one line of printable text (the agent shows it as it is)."""
    if message is None:
        return None
    if behavior != "deny":
        raise Refused(400, "a message goes with deny only")
    if not isinstance(message, str) or not message.strip():
        raise Refused(400, "a message is text")
    text = message.strip()
    if len(text) > MESSAGE_MAX:
        raise Refused(400, f"a message is at most {MESSAGE_MAX} characters")
    if not text.isprintable():
        raise Refused(400, "a message is one line of printable text")
    return text


def _check_decision(rec: Record, decision: object, answers: object) -> tuple[str, Any]:
    if decision not in DECISIONS:
        raise Refused(400, 'decision must be "allow" or "deny"')
    assert isinstance(decision, str)
    if decision == "allow_always" and not rec.get("allow_always"):
        raise Refused(400, "allow_always is off for this request ([remote] allow_always)")
    questions = rec.get("questions")
    if decision == "deny" or not questions:
        if answers not in (None, {}):
            raise Refused(400, "answers are only for a question")
        return decision, None
    # A question is answered with one of its options (several, comma-separated, for multi).
    if not isinstance(answers, dict):
        raise Refused(400, "answer the question: answers = {question: option label}")
    picked: dict[str, str] = {}
    for q in questions:
        value = answers.get(q["question"])
        given = value if isinstance(value, list) else [value]
        labels = [v for v in given if isinstance(v, str) and v in q["options"]]
        if not labels or len(labels) != len(given):
            raise Refused(400, f"answer {q['question']!r} with one of its options")
        if len(labels) > 1 and not q.get("multi_select"):
            raise Refused(400, f"{q['question']!r} takes one option")
        picked[q["question"]] = ", ".join(labels)
    if set(answers) - set(picked):
        raise Refused(400, "answers name a question this request does not ask")
    return decision, picked


def public(rec: Record, now_ms: int) -> dict[str, Any]:
    """What the API lists for a request (with its nonce: the API is authenticated)."""
    from lookout.store import rfc3339

    status = rec.get("status")
    if status == PENDING and not is_open(rec, now_ms):
        status = EXPIRED if now_ms >= int(rec.get("expires_ms") or 0) else ABANDONED
    decision = rec.get("decision") or {}
    return {
        "id": rec["id"],
        "nonce": rec.get("nonce") if status == PENDING else None,
        "session_id": rec.get("session_id"),
        "agent_id": rec.get("agent_id"),
        "project": rec.get("project"),
        "tool_name": rec.get("tool_name"),
        "summary": rec.get("summary"),
        "detail": shown_detail(rec),
        "tool_input": rec.get("tool_input"),
        "flags": rec.get("flags") or [],
        "too_large": bool(rec.get("too_large")),
        "questions": rec.get("questions"),
        "allow_always": bool(rec.get("allow_always")),
        "created_at": rfc3339(int(rec.get("created_ms") or 0)),
        "expires_at": rfc3339(int(rec.get("expires_ms") or 0)),
        "status": status,
        "reason": _reason(str(status), decision.get("answers"), rec.get("answered")),
        "decision": decision.get("behavior"),
        "decided_by": decision.get("by"),
        "message": decision.get("message"),
        # A question's answer is the option chosen, not "allowed": {question: label(s)}.
        "answers": decision.get("answers") or None,
    }


def shown_detail(rec: Mapping[str, Any]) -> str:
    """The detail as the pages that show all of it show it (the dashboard, `lookout answer`):
    what runs, then the model's commentary, each a line of its own (note_lines)."""
    seen = approved(rec)
    runs = seen["runs"] or (f"(no {seen['missing']})" if seen["missing"] else "")
    return "\n".join(filter(None, (runs, *note_lines(seen["notes"]))))


def _reason(status: str, answers: object, local: object = None) -> str | None:
    if status == ALLOWED and isinstance(answers, dict) and answers:
        return "already answered: " + "; ".join(chosen(answers))
    if status == ANSWERED_LOCALLY and isinstance(local, str) and local in LOCAL_ANSWERS:
        return LOCAL_ANSWERS[local]
    return NOT_PENDING.get(status)


def chosen(answers: dict[str, Any]) -> list[str]:
    """Each question's answer as said: `SQLite`, or `a, b` for several options."""
    return [", ".join(v) if isinstance(v, list) else str(v) for v in answers.values()]
