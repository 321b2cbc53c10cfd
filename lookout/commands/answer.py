"""`lookout answer [SESSION allow|deny]`: answer a permission request from a shell (over SSH, say)
the way the dashboard's buttons do. Without arguments it lists the requests still waiting.

Whoever can run this can read the state directory, so the nonce is taken from the record; the
answer goes through the same compare-and-set as the dashboard's (once, only while it is open)."""

from __future__ import annotations

import getpass
import json
import os
import socket
import time
from typing import Any

from lookout import paths
from lookout.errors import LookoutError
from lookout.remote import requests

DECISIONS = {"allow": "allow", "deny": "deny", "always": "allow_always"}


def answer(*, session: str | None, decision: str | None, options: list[str], as_json: bool) -> int:
    state_dir = paths.state_dir()
    now_ms = int(time.time() * 1000)
    waiting = [r for r in requests.load_all(state_dir) if requests.is_open(r, now_ms)]
    if session is None:
        return _list(waiting, now_ms, as_json)
    if decision is None:
        raise LookoutError("say allow or deny", hint=f"lookout answer {session} allow  (or deny)")
    rec = _pick(waiting, session, state_dir, now_ms)
    answers = _answers(rec, options) if decision != "deny" else None
    try:
        done = requests.answer(
            state_dir,
            rec["id"],
            DECISIONS[decision],
            rec["nonce"],
            by=_who(),
            source=_source(),
            user_agent="lookout answer",
            now_ms=int(time.time() * 1000),
            answers=answers,
        )
    except requests.Refused as exc:
        raise LookoutError(
            f"not answered: {exc}", hint="lookout answer lists what is still waiting"
        ) from None
    if as_json:
        print(json.dumps(requests.public(done, now_ms)))
    else:
        word = "allowed" if done["status"] == requests.ALLOWED else "denied"
        print(f"{word}: {_label(done)}")
    return 0


def _label(rec: dict[str, Any]) -> str:
    what = " ".join(x for x in (rec.get("tool_name"), rec.get("summary")) if x)
    return f"{what} (session {rec['session_id'][:8]}, {rec.get('project') or '?'})"


def _list(waiting: list[dict[str, Any]], now_ms: int, as_json: bool) -> int:
    if as_json:
        print(json.dumps({"requests": [requests.public(r, now_ms) for r in waiting]}, indent=2))
        return 0
    if not waiting:
        print("no permission request is waiting for an answer")
        return 0
    for rec in waiting:
        left = max(0, (int(rec["expires_ms"]) - now_ms) // 1000)
        print(f"{rec['session_id'][:8]}  {_label(rec)}  ({left} s left)")
        for q in rec.get("questions") or []:
            print(f"    {q['question']}  options: {' | '.join(q['options'])}")
    print("answer with: lookout answer SESSION allow|deny")
    return 0


def _pick(waiting: list[dict[str, Any]], key: str, state_dir: str, now_ms: int) -> dict[str, Any]:
    found = [r for r in waiting if r["session_id"].startswith(key) or str(r["id"]).startswith(key)]
    if len(found) == 1:
        return found[0]
    if found:
        ids = ", ".join(f"{r['id'][:10]} ({r.get('tool_name')})" for r in found)
        raise LookoutError(
            f"{len(found)} requests wait in {key!r}: {ids}",
            hint="give the request id (or a longer prefix) instead of the session",
        )
    # Say why, when the request exists but no longer takes an answer.
    for rec in reversed(requests.load_all(state_dir)):
        if rec["session_id"].startswith(key) or str(rec["id"]).startswith(key):
            reason = requests.public(rec, now_ms)["reason"] or "not waiting"
            raise LookoutError(
                f"the last request in {key!r} ({rec.get('tool_name')}) is {reason}",
                hint="lookout answer lists what is still waiting",
            )
    raise LookoutError(
        f"no permission request is waiting in session {key!r}",
        hint="lookout answer lists them; remote answers need [remote] enabled = true",
    )


def _answers(rec: dict[str, Any], options: list[str]) -> dict[str, Any] | None:
    questions = rec.get("questions") or []
    if not questions:
        if options:
            raise LookoutError("--option is for a question", hint="this request is a permission")
        return None
    if len(options) != len(questions):
        listing = "; ".join(f"{q['question']} ({' | '.join(q['options'])})" for q in questions)
        raise LookoutError(
            f"this request asks {len(questions)} question(s): {listing}",
            hint="give one --option LABEL per question, in order (a,b for several)",
        )
    out: dict[str, Any] = {}
    for q, given in zip(questions, options, strict=True):
        labels = [x.strip() for x in given.split(",")] if q.get("multi_select") else [given]
        out[q["question"]] = labels if q.get("multi_select") else given
        for label in labels:
            if label not in q["options"]:
                raise LookoutError(
                    f"{label!r} is not an option of {q['question']!r}",
                    hint="options: " + " | ".join(q["options"]),
                )
    return out


def _who() -> str:
    try:
        user = getpass.getuser()
    except Exception:
        user = str(os.getuid())
    return f"{user}@{socket.gethostname()} (lookout answer)"


def _source() -> str:
    ssh = os.environ.get("SSH_CLIENT", "").split()
    return f"ssh {ssh[0]}" if ssh else "local shell"
