"""The one way an alert answers a permission request (issue 25): the desktop popup's Allow/Deny,
a Telegram button, a Home Assistant button all call `answer` or `answer_token` here.

An answer binds to the request the alert showed: by its nonce (desktop, which keeps it in the
sender's memory) or by an opaque token minted for one button (`mint`: Telegram's callback_data,
a Home Assistant payload), which maps to the request's id, nonce, decision and surface in
`<state>/answer-tokens.json` (0600, under requests.lock). A token never carries the nonce, is
taken once, and names one surface. Everything else (ended, replaced, replayed, foreign) is
refused by lookout.remote.requests.answer and changes nothing. The deciding hook turns the
accepted decision into the RemoteDecision event; its `source` is the surface named here.

Never called by a hook: runs in the notification sender and the Telegram poller."""

from __future__ import annotations

import os
import secrets
import time
from fnmatch import fnmatchcase

from lookout import hookspec, store, words
from lookout.channels import registry
from lookout.remote import requests

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from lookout.remote.requests import Record

# The channel types' surfaces, and Home Assistant's buttons (lookout.fleet.answers), the one that
# is no channel type's (lookout.surfaces.registry.NAMES, kept equal by tests/surfaces).
SURFACES = (*registry.ANSWERING, "home_assistant")
# The fleet's hub (issue 42): tokens this host's bridge mints for the hub's `lookout answer` and
# dashboard, published with the request (lookout.fleet.steering.hub_part). No surface of its own.
HUB = "hub"
MINTED = (*SURFACES, HUB)
TOKENS = "answer-tokens.json"
TOKEN_BYTES = 16  # 22 characters: fits Telegram's 64-byte callback_data with room for a prefix
# The deciding hook records its request a moment after the recording hook raised the alert:
# an alert waits this long for the request to appear before it goes out without buttons.
FIND_WAIT_S = 2.0
FIND_POLL_S = 0.05
# What an alert shows once its request no longer takes an answer.
OUTCOME = {
    requests.ALLOWED: "Allowed",
    requests.DENIED: "Denied",
    requests.ANSWERED_LOCALLY: "Answered in the terminal",
    requests.ENDED: "The session ended",
    requests.EXPIRED: "Expired: the terminal's dialog decides now",
    requests.ABANDONED: "No longer waiting",
    requests.RELEASED: "Back at the terminal: its own prompt decides",
}


def _now_ms() -> int:
    return words.now_ms()


def request_id_for(intent: Mapping[str, Any], remote: Mapping[str, Any]) -> str | None:
    """The id of the request an alert is about, when [remote] may answer it (else None)."""
    request = intent.get("request")
    tool = intent.get("tool_name")
    if not remote.get("enabled") or not (isinstance(request, list) and len(request) == 3):
        return None
    if not isinstance(tool, str) or not any(
        isinstance(g, str) and fnmatchcase(tool, g) for g in remote.get("tools") or []
    ):
        return None
    agent_id, prompt_id, key = request
    return hookspec.request_id(
        str(intent.get("session_id") or ""), agent_id, prompt_id, str(key or "")
    )


def request_for(
    state_dir: str,
    intent: Mapping[str, Any],
    remote: Mapping[str, Any],
    wait_s: float = FIND_WAIT_S,
) -> Record | None:
    """The open request an alert is about, waited for a moment (the deciding hook records it in
    parallel with the alert); None when there is none to answer from this alert."""
    rid = request_id_for(intent, remote)
    if rid is None or not waits(state_dir, intent):
        return None
    deadline = time.monotonic() + wait_s
    while True:
        rec = requests.load(state_dir, rid)
        if rec is not None and requests.is_open(rec, _now_ms()):
            return rec
        # Absent, or a finished record of an earlier identical call: wait for this one's.
        if time.monotonic() >= deadline:
            return None
        time.sleep(FIND_POLL_S)


def waits(state_dir: str, intent: Mapping[str, Any]) -> bool:
    """Whether the alert's agent has a deciding hook waiting now: Codex's waits only while away
    (lookout.away), so while the user is present no request is coming to look for."""
    from lookout import away

    return intent.get("agent") not in words.ANSWERED_WHEN_AWAY or away.read(state_dir)["away"]


def answerable(rec: Record) -> bool:
    """Allow/Deny fit this request: not a question (its options are buttons of their own)."""
    return not rec.get("questions")


def choices(rec: Record) -> list[tuple[str, str, dict[str, str] | None]]:
    """(label, decision, answers) for each button: Allow / Deny, or for a question with one
    question one button per option (and Deny); nothing for a request Allow cannot take."""
    questions = rec.get("questions")
    out: list[tuple[str, str, dict[str, str] | None]] = []
    if questions:
        if len(questions) == 1 and not questions[0].get("multi_select"):
            q = questions[0]
            out += [(label, "allow", {q["question"]: label}) for label in q["options"]]
    elif not rec.get("too_large"):
        out.append(("Allow", "allow", None))
    out.append(("Deny", "deny", None))
    return out


def answer(
    state_dir: str,
    rid: str,
    nonce: str,
    decision: str,
    *,
    surface: str,
    by: str,
    answers: dict[str, str] | None = None,
    now_ms: int | None = None,
    message: str | None = None,
) -> Record:
    """Answer request `rid` from `surface` with the nonce the alert was built with: once, only
    while it is open. Raises requests.Refused otherwise (nothing changes). `message`: a deny's
    reason for the agent."""
    if surface not in MINTED:
        raise ValueError(surface)
    return requests.answer(
        state_dir,
        rid,
        decision,
        nonce,
        by=by,
        source=surface,
        user_agent=f"lookout {surface}",
        now_ms=_now_ms() if now_ms is None else now_ms,
        answers=answers,
        message=message,
    )


# -- tokens ------------------------------------------------------------------------------------


def _tokens_path(state_dir: str) -> str:
    return os.path.join(state_dir, TOKENS)


def _load_tokens(state_dir: str) -> dict[str, dict[str, Any]]:
    data = store.read_json(_tokens_path(state_dir))
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, dict)}


def _live(state_dir: str, table: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Only tokens whose request is still pending: the table stays as small as what waits."""
    status: dict[str, bool] = {}
    out = {}
    for token, entry in table.items():
        rid = str(entry.get("rid") or "")
        if rid not in status:
            rec = requests.load(state_dir, rid)
            status[rid] = rec is not None and rec.get("status") == requests.PENDING
        if status[rid]:
            out[token] = entry
    return out


def mint(
    state_dir: str,
    rec: Record,
    surface: str,
    picks: list[tuple[str, dict[str, str] | None]],
    scope: str = "",
) -> list[str]:
    """One fresh token per (decision, answers) for request `rec`, for `surface` (and `scope`:
    the channel that shows it, so a press through another bot is refused)."""
    if surface not in MINTED:
        raise ValueError(surface)
    out = []
    with store.Locked(state_dir, store.REQUESTS_LOCK):
        table = _live(state_dir, _load_tokens(state_dir))
        for decision, picked in picks:
            token = secrets.token_urlsafe(TOKEN_BYTES)
            table[token] = {
                "rid": rec["id"],
                "nonce": rec["nonce"],
                "decision": decision,
                "answers": picked,
                "surface": surface,
                "scope": scope,
            }
            out.append(token)
        store.write_json_atomic(_tokens_path(state_dir), table)
    return out


def answer_token(
    state_dir: str,
    token: str,
    *,
    surface: str,
    by: str,
    scope: str | None = "",
    message: str | None = None,
) -> Record:
    """Answer with a button's token: taken once (every token of its request is dropped, whatever
    the outcome), only from the surface and scope it was minted for (scope None: any channel of
    that surface, for a press the fleet's hub forwards from the shared bot; `message`: a deny's
    reason, as `lookout answer ID deny --message` gives it)."""
    with store.Locked(state_dir, store.REQUESTS_LOCK):
        table = _load_tokens(state_dir)
        entry = table.get(token) if isinstance(token, str) else None
        scoped = scope is not None and entry is not None and entry.get("scope", "") != scope
        if entry is None or entry.get("surface") != surface or scoped:
            raise requests.Refused(404, "no such request")
        rid = str(entry["rid"])
        table = {k: v for k, v in table.items() if v.get("rid") != rid}
        store.write_json_atomic(_tokens_path(state_dir), table)
    return answer(
        state_dir,
        rid,
        str(entry.get("nonce") or ""),
        str(entry.get("decision")),
        surface=surface,
        by=by,
        answers=entry.get("answers"),
        message=message if entry.get("decision") == "deny" else None,
    )


def forget(state_dir: str, rid: str) -> None:
    """Drop every token of request `rid` (its buttons were withdrawn)."""
    with store.Locked(state_dir, store.REQUESTS_LOCK):
        table = _load_tokens(state_dir)
        kept = {k: v for k, v in table.items() if v.get("rid") != rid}
        if kept != table:
            store.write_json_atomic(_tokens_path(state_dir), kept)


# -- what an alert shows after -----------------------------------------------------------------


def status_of(state_dir: str, rid: str) -> str | None:
    """The request's status as an alert should show it (pending ones past their deadline or
    without their hook count as expired/abandoned); None if it is gone."""
    rec = requests.load(state_dir, rid)
    if rec is None:
        return None
    return str(requests.public(rec, _now_ms())["status"])


def outcome_text(rec: Record | None, refused: str | None = None) -> str:
    """One line for the alert that replaces the buttons: what became of the request."""
    if refused:
        return f"Not answered: {refused}"
    if rec is None:
        return "No longer waiting"
    status = str(requests.public(rec, _now_ms())["status"])
    text = OUTCOME.get(status, status)
    local = rec.get("answered")
    if status == requests.ANSWERED_LOCALLY and local in requests.LOCAL_ANSWERS:
        text = requests.LOCAL_ANSWERS[local].capitalize()  # "Allowed in the terminal"
    decision = rec.get("decision") or {}
    if status in (requests.ALLOWED, requests.DENIED) and decision.get("by"):
        text += f" by {decision['by']}"
        if decision.get("answers"):
            text += ": " + "; ".join(str(v) for v in decision["answers"].values())
    return text
