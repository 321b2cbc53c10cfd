"""`lookout answer [[REQUEST_ID] allow|deny|always]`: answer a permission request from a shell (over
SSH, say) the way the dashboard's buttons do. Without arguments it lists the requests still
waiting, each with its id and everything that would run.

An answer is bound to what was shown: REQUEST_ID names one request (its id depends on the session
and the whole tool input), and one that has ended is refused. A session id (or prefix) or a
project name, or no key at all when exactly one request waits, is taken only on a terminal,
after the full request was shown and confirmed; a key
is never matched against another session's request ids. Every text goes through the same
escaping as `status` (plus invisible format characters): a command cannot redraw the screen.

Whoever can run this can read the state directory, so the nonce is taken from the record as it
was shown; the answer goes through the same compare-and-set as the dashboard's."""

from __future__ import annotations

import argparse
import getpass
import json
import os
import socket
import sys
from typing import Any

from lookout import paths, words
from lookout.commands import args, hubcli
from lookout.errors import LookoutError
from lookout.remote import requests
from lookout.remote import shown as seen
from lookout.sessions import STALE_AFTER_S, Row, load_sessions, matching, present, resolve

DECISIONS = {"allow": "allow", "deny": "deny", "always": "allow_always"}


def declare(p: argparse.ArgumentParser) -> None:
    """Answer a permission request that waits for a remote answer, as the dashboard's buttons do.
    Without arguments: list the requests still waiting, each with its id and everything that
    would run."""
    p.add_argument(
        "session",
        nargs="?",
        metavar="REQUEST_ID",
        help="the request's id as listed; on a terminal also a SESSION (an id or its start, a"
        " project or a title), after showing the request and asking",
    )
    p.add_argument(
        "decision",
        nargs="?",
        choices=("allow", "deny", "always"),
        help="allow, deny, or always (allow and don't ask again; needs [remote] allow_always)",
    )
    p.add_argument(
        "--option",
        dest="options",
        action="append",
        default=[],
        metavar="LABEL",
        help="a question's answer: one option label per question, in order",
    )
    p.add_argument(
        "--message",
        metavar="TEXT",
        help="with deny: why, one line the agent shows and its model reads (Claude Code, Codex)",
    )
    args.json_flag(p, "machine-readable: a list with each full tool input", dest="as_json")


def run(ns: argparse.Namespace) -> int:
    return args.call(answer, ns)


def answer(
    *,
    session: str | None,
    decision: str | None,
    options: list[str],
    as_json: bool,
    message: str | None = None,
) -> int:
    if message is not None and "deny" not in (session, decision):
        raise args.UsageError(
            "--message goes with deny: lookout answer REQUEST_ID deny --message TEXT"
        )
    other = hubcli.remote(session)
    if other is not None:  # HOST:REQUEST_ID on the fleet's hub
        return _on_host(other, decision, options, as_json, message)
    state_dir = paths.state_dir()
    now_ms = words.now_ms()
    records = requests.load_all(state_dir)
    waiting = [r for r in records if requests.is_open(r, now_ms)]
    if session is None:
        return _list(waiting, now_ms, as_json)
    if decision is None and session in DECISIONS and not any(r["id"] == session for r in records):
        # `lookout answer allow`: the one request waiting, shown and confirmed on a terminal.
        only = _only(waiting, session)
        answers = _answers(only, options) if session != "deny" else None
        _confirm(only, session, now_ms)
        return _send(state_dir, only, session, answers, now_ms, as_json, message)
    if decision is None:
        raise LookoutError("say allow or deny", hint=f"lookout answer {session} allow  (or deny)")
    rec = next((r for r in records if r["id"] == session), None)
    if rec is not None:
        if not requests.is_open(rec, now_ms):
            reason = requests.public(rec, now_ms)["reason"] or "not waiting"
            raise LookoutError(
                f"request {rec['id']} is {reason}; nothing was answered",
                hint="lookout answer lists what is still waiting",
            )
        answers = _answers(rec, options) if decision != "deny" else None
    else:
        rec = _by_session(state_dir, waiting, records, session, now_ms)
        answers = _answers(rec, options) if decision != "deny" else None
        _confirm(rec, decision, now_ms)
    return _send(state_dir, rec, decision, answers, now_ms, as_json, message)


def _on_host(
    other: tuple[Any, str, str],
    decision: str | None,
    options: list[str],
    as_json: bool,
    message: str | None,
) -> int:
    """`lookout answer HOST:REQUEST_ID allow|deny` on the fleet's hub."""
    cfg, host, rid = other
    if decision is None:
        raise LookoutError(
            "say allow or deny", hint=f"lookout answer {host}:{rid} allow  (or deny)"
        )
    if options:
        raise LookoutError("--option is for a question of this host", hint="answer it on its host")
    return hubcli.answer(cfg, host, rid, decision, as_json=as_json, message=message)


def _send(
    state_dir: str,
    rec: dict[str, Any],
    decision: str,
    answers: dict[str, Any] | None,
    now_ms: int,
    as_json: bool,
    message: str | None = None,
) -> int:
    if decision != "deny" and seen.whole(rec):
        raise LookoutError(
            f"request {rec['id']} cannot be allowed from here: {seen.whole(rec)}",
            hint="nothing was sent; "
            f"answer it in its terminal, or: lookout answer {rec['id']} deny",
        )
    try:
        done = requests.answer(
            state_dir,
            rec["id"],
            DECISIONS[decision],
            rec["nonce"],  # the nonce of the record shown: a replaced request is refused
            by=_who(),
            source=_source(),
            user_agent="lookout answer",
            now_ms=words.now_ms(),
            answers=answers,
            message=message,
        )
    except requests.Refused as exc:
        why = "it was replaced since it was shown" if exc.status == 403 else str(exc)
        raise LookoutError(
            f"request {rec['id']} not answered: {why}",
            hint="lookout answer lists what is still waiting",
        ) from None
    if as_json:
        print(json.dumps(_public(done, now_ms)))
    else:
        said = (done.get("decision") or {}).get("answers")
        if done["status"] == requests.ALLOWED and said:
            print(shown(f"answered {'; '.join(requests.chosen(said))}: ") + _label(done))
        else:
            word = "allowed" if done["status"] == requests.ALLOWED else "denied"
            print(f"{word}: {_label(done)}")
    return 0


def _public(rec: dict[str, Any], now_ms: int) -> dict[str, Any]:
    """A request as `--json` lists it: the dashboard API's view with the rule's verdict, without
    its nonce (the dashboard's page needs it to answer; this command answers with the record it
    reads, so the nonce never reaches a terminal, a script or a log that saved this output)."""
    why = seen.whole(rec)
    out = {**requests.public(rec, now_ms), "offers_allow": not why, "why_no_allow": why or None}
    out.pop("nonce", None)
    return out


def shown(text: object, keep_newlines: bool = False) -> str:
    """`text` safe for a terminal: `status`'s escaping, and invisible characters (zero-width,
    bidi marks and isolates) as `\\uXXXX` too: the one escaping of every surface that shows a
    request (lookout.remote.shown.escape)."""
    return seen.escape(text, keep_newlines)


def _label(rec: dict[str, Any]) -> str:
    where = f"session {rec['session_id'][:8]}, {rec.get('project') or '?'}"
    return shown(f"{rec['id']} {rec.get('tool_name') or '?'} ({where})")


def _show(rec: dict[str, Any], now_ms: int) -> None:
    """One request in full: its id, tool, session and project, every input field, its flags."""
    left = max(0, (int(rec["expires_ms"]) - now_ms) // 1000)
    where = f"session {rec['session_id'][:8]}, {rec.get('project') or '?'}"
    print(shown(f"{rec['id']}  {rec.get('tool_name') or '?'}  {where}  ({left} s left)"))
    # Every field, its switches, a question with its options: what every surface shows of it
    # (lookout.remote.shown), here in full and unmasked.
    view = seen.view(rec, None)  # no limit: all of it, unmasked
    for line in view["text"].split("\n"):
        print("    " + line)
    if not view["allow"]:
        print("    allow: not from here, " + view["why"])


def _list(waiting: list[dict[str, Any]], now_ms: int, as_json: bool) -> int:
    if as_json:
        print(json.dumps([_public(r, now_ms) for r in waiting], indent=2))
        return 0
    if not waiting:
        print("no permission request is waiting for an answer")
        return 0
    for rec in waiting:
        _show(rec, now_ms)
    if any(not r.get("questions") for r in waiting):
        print("answer with: lookout answer REQUEST_ID allow|deny")
    if any(r.get("questions") for r in waiting):
        print(
            "answer a question with: lookout answer REQUEST_ID allow --option LABEL"
            "  (one --option per question; deny declines it)"
        )
    return 0


def _only(waiting: list[dict[str, Any]], decision: str) -> dict[str, Any]:
    """The request `lookout answer allow|deny` (no session) means: the only one waiting."""
    if len(waiting) == 1:
        return waiting[0]
    if not waiting:
        raise LookoutError("no permission request is waiting for an answer", hint=_why_none())
    ids = ", ".join(shown(f"{r['id']} ({r.get('tool_name')})") for r in waiting)
    raise LookoutError(
        f"{len(waiting)} requests are waiting: {ids}",
        hint=f"say which: lookout answer REQUEST_ID {decision}  (lookout answer lists them)",
    )


def _by_session(
    state_dir: str,
    waiting: list[dict[str, Any]],
    records: list[dict[str, Any]],
    key: str,
    now_ms: int,
) -> dict[str, Any]:
    """The one request waiting in the session `key` names, as every command names a session
    (sessions.resolve: an id or its start, a project, a title). Request ids are never matched
    here."""
    rows = _sessions_with_requests(state_dir, waiting, records, now_ms)
    if not key:
        resolve(rows, key, "lookout answer")  # says the name is empty
    asking = {str(r.get("session_id")) for r in waiting}
    with_requests = [s for s in rows if s["session_id"] in asking]
    if matching(with_requests, key):
        return _the_one_waiting(waiting, resolve(with_requests, key, "lookout answer"))
    if not matching(rows, key):
        raise _nothing_named(key, records)
    chosen = resolve(rows, key, "lookout answer")  # several sessions: says which
    raise _why_not_waiting(chosen, records, now_ms)


def _sessions_with_requests(
    state_dir: str, waiting: list[dict[str, Any]], records: list[dict[str, Any]], now_ms: int
) -> list[Row]:
    """The sessions as every command sees them, and those known only by their requests (their
    snapshot was pruned)."""
    rows = load_sessions(state_dir, now_ms)
    asking = {str(r.get("session_id")) for r in waiting}
    known = {s["session_id"] for s in rows}
    for rec in records:
        sid = str(rec.get("session_id") or "")
        if sid and sid not in known:
            known.add(sid)
            snapshot = {
                "session_id": sid,
                "project": rec.get("project") or "",
                "status": "attention" if sid in asking else "idle",
                "updated_ms": int(rec.get("created_ms") or 0),
            }
            rows.append(present(snapshot, now_ms, STALE_AFTER_S))
    return rows


def _the_one_waiting(waiting: list[dict[str, Any]], chosen: Row) -> dict[str, Any]:
    """Of the requests waiting in the chosen session: the one, or an error that lists them."""
    found = [r for r in waiting if r.get("session_id") == chosen["session_id"]]
    if len(found) == 1:
        return found[0]
    ids = ", ".join(shown(f"{r['id']} ({r.get('tool_name')})") for r in found)
    raise LookoutError(
        f"{len(found)} requests wait in {_name(chosen)}: {ids}",
        hint="give the request id: lookout answer REQUEST_ID allow|deny",
    )


def _nothing_named(key: str, records: list[dict[str, Any]]) -> LookoutError:
    if any(str(r.get("id") or "").startswith(key) for r in records):
        return LookoutError(
            f"{shown(key)!r} is the start of a request id: give the full id (an answer names"
            " its request whole, never by a prefix)",
            hint="lookout answer lists each waiting request with its full id",
        )
    return LookoutError(
        f"no request and no session {shown(key)!r}",
        hint="lookout answer lists the waiting requests, each with its id",
    )


def _why_not_waiting(chosen: Row, records: list[dict[str, Any]], now_ms: int) -> LookoutError:
    """Why the named session has nothing to answer: its last request's end, or its status."""
    for rec in reversed(records):
        if rec.get("session_id") == chosen["session_id"]:
            reason = requests.public(rec, now_ms)["reason"] or "not waiting"
            return LookoutError(
                f"the last request in {_name(chosen)} ({shown(rec.get('tool_name'))}) is {reason}",
                hint="lookout answer lists what is still waiting",
            )
    if chosen.get("agent", "claude") != "claude":
        # Codex shows its own prompt only once its PermissionRequest hooks return: a hook
        # waiting for an answer from afar would hold it (docs/remote.md). Not [remote]'s fault.
        from lookout.agents.registry import AGENTS

        agent = AGENTS.get(str(chosen["agent"]))
        title = agent.TITLE if agent is not None else str(chosen["agent"])
        return LookoutError(
            f"{_name(chosen)} is a {title} session: its dialogs cannot be answered from afar"
            f" yet (only Claude Code's can); it is {chosen['status']}",
            hint="answer it in its terminal (lookout jump)",
        )
    return LookoutError(
        f"no permission request is waiting in {_name(chosen)}: it is {chosen['status']}",
        hint=_why_none(),
    )


def _name(session: Row) -> str:
    short = session.get("short_id") or session["session_id"][:8]
    return shown(f"{session['project'] or '?'} ({short})")


def _why_none() -> str:
    """Why a session has no request to answer: [remote] is off, or its dialog never was one."""
    from lookout.config import check, files

    try:
        remote = files.load(None)["remote"]  # [remote] is read from your own config only
    except check.ConfigError:
        return "your config is invalid (lookout check-config), so [remote] is off"
    if not remote.get("enabled"):
        return "remote answers need [remote] enabled = true in your config"
    return (
        "only a Claude Code permission dialog that began while [remote] was on can be answered"
        " from here (not yet Codex's or another agent's); answer it in its terminal"
        " (lookout jump)"
    )


def _confirm(rec: dict[str, Any], decision: str, now_ms: int) -> None:
    """Answering by session, or the only request: only on a terminal, after the whole request
    was shown, with y."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise LookoutError(
            "answering without a request id needs a terminal, to show the request and ask",
            hint="lookout answer lists each request's id; then: lookout answer REQUEST_ID "
            + decision,
        )
    _show(rec, now_ms)
    word = {"allow": "allow", "deny": "deny", "always": "always allow"}[decision]
    try:
        reply = input(f"{word} this request? [y/N] ")
    except EOFError:
        reply = ""
    if reply.strip().lower() not in ("y", "yes"):
        raise LookoutError(
            "not answered", hint=f"nothing was sent; request {rec['id']} still waits"
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
            f"this request asks {len(questions)} question(s): {shown(listing)}",
            hint="give one --option LABEL per question, in order (a,b for several)",
        )
    out: dict[str, Any] = {}
    for q, given in zip(questions, options, strict=True):
        labels = [x.strip() for x in given.split(",")] if q.get("multi_select") else [given]
        out[q["question"]] = labels if q.get("multi_select") else given
        for label in labels:
            if label not in q["options"]:
                raise LookoutError(
                    f"{shown(label)!r} is not an option of {shown(q['question'])!r}",
                    hint="options: " + shown(" | ".join(q["options"])),
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
