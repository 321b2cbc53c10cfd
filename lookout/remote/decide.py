"""The deciding hook's decision (hooks/remote_answer.py, through runner.run_remote), registered
for PermissionRequest only when `[remote] enabled = true`: record the request, wait for an
answer from the dashboard or `lookout answer`, and say the client's decision JSON.

Claude Code runs it beside its own dialog: it always waits (the first answer wins). Codex runs
it before its prompt and shows the prompt only once it returns (words.ANSWERED_WHEN_AWAY): it
waits only while the away switch is on (lookout.away), returns at once with nothing while the
user is present, and hands the request back to the prompt (nothing printed) as soon as the
switch goes off. Codex takes `behavior` and a deny's `message` only: its `updatedInput`,
`updatedPermissions` and `interrupt` fail closed, so it never gets them.

In print mode (`claude -p`) it prints nothing at once: nobody can answer that dialog.
Fail-open: on a local answer, the session's end, the deadline, SIGTERM or any error it prints
nothing (the client's own dialog decides), writes nothing to stderr and exits 0. It never denies
on its own. stdout carries exactly one decision object or nothing at all."""

from __future__ import annotations

import os
import time

from lookout import _jsonfast, store, words

# Heavier modules (hashlib, secrets, reconcile) load only once a request is to be recorded: a
# tool outside [remote] tools costs this hook no more than the config check.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from lookout import away

    # What one deciding hook does: the bytes to print (b"": let the dialog decide), and the
    # RemoteDecision event to record once they are out (None: nothing was answered from here).
    Decision = tuple[bytes, dict[str, Any] | None]

POLL_S = 0.1


class _Term:
    """SIGTERM from the client: the user said No or Esc at the dialog, or the session is going."""

    got = False

    @classmethod
    def handler(cls, signum: int, frame: object) -> None:
        cls.got = True


def listen() -> None:
    """Take the client's SIGTERM as news (the user answered at the terminal, or the session is
    going), not as the end: the wait then settles the request and exits 0."""
    try:
        import _signal  # type: ignore[import-not-found]  # C module; `signal` imports enum

        _signal.signal(_signal.SIGTERM, _Term.handler)
    except (ImportError, OSError, ValueError):
        pass


LET_THE_DIALOG_DECIDE: Decision = (b"", None)


def decide(
    payload: Mapping[str, Any] | None, ts_ms: int, state_dir: str, env: Mapping[str, str]
) -> Decision:
    """The decision for one PermissionRequest payload (None: stdin held no JSON object)."""
    if print_mode(env):
        return LET_THE_DIALOG_DECIDE  # nobody can answer: the client denies it at once
    if payload is None or payload.get("hook_event_name") != "PermissionRequest":
        return LET_THE_DIALOG_DECIDE
    settings = remote_settings(state_dir, payload.get("cwd"))
    if not settings.get("enabled"):
        return LET_THE_DIALOG_DECIDE
    tool_name = payload.get("tool_name")
    if not isinstance(tool_name, str) or not tool_matches(tool_name, settings["tools"]):
        return LET_THE_DIALOG_DECIDE
    if not isinstance(payload.get("session_id"), str) or not payload["session_id"]:
        return LET_THE_DIALOG_DECIDE
    from lookout import events

    agent = events.agent_of(dict(payload), env)
    switch = None
    if agent in words.ANSWERED_WHEN_AWAY:
        from lookout import away

        switch = away.Switch(state_dir)
        if not switch.on(words.now_ms()):
            return LET_THE_DIALOG_DECIDE  # the user is here: the agent's own prompt, at once
    elif agent not in words.ANSWERED_ALWAYS:
        return LET_THE_DIALOG_DECIDE
    from lookout.remote import requests

    # Claude Code's extras (Codex's fail closed; OpenCode's plugin gives once or reject only).
    whole = agent == "claude"
    allow_always = whole and bool(settings["allow_always"])
    rec = requests.new_record(payload, env, ts_ms, int(settings["wait_s"]), allow_always)
    try:
        requests.save_new(state_dir, rec, ts_ms)
    except FileExistsError:
        return LET_THE_DIALOG_DECIDE  # another deciding hook already waits on this dialog
    final = wait(state_dir, rec, switch)
    if final is None or final.get("status") not in (requests.ALLOWED, requests.DENIED):
        return LET_THE_DIALOG_DECIDE
    return output(payload, final["decision"], whole), decision_event(payload, final)


def print_mode(env: Mapping[str, str]) -> bool:
    """`claude -p` (and SDK programs): CLAUDE_CODE_ENTRYPOINT sdk-*, as events.py records it.
    The notification rules send nothing for its dialogs; a remote wait would hold the run for
    up to wait_s with nobody told."""
    from lookout.words import print_mode as is_print_mode

    return is_print_mode(env.get("CLAUDE_CODE_ENTRYPOINT"))


def remote_settings(state_dir: str, cwd: object) -> dict[str, Any]:
    """[remote] from the user's own config (never a project file; see lookout.config)."""
    from lookout.config import cache

    cfg = cache.load_cached(state_dir, None)  # cwd None: the global file only
    remote = cfg["remote"] if cfg else None
    return remote if isinstance(remote, dict) else {"enabled": False}


def tool_matches(tool_name: str, globs: object) -> bool:
    from fnmatch import fnmatchcase

    return isinstance(globs, list) and any(
        isinstance(g, str) and fnmatchcase(tool_name, g) for g in globs
    )


def wait(
    state_dir: str, rec: dict[str, Any], switch: away.Switch | None = None
) -> dict[str, Any] | None:
    """Poll the record until it is answered, the terminal or the session settles it, the
    deadline, or (`switch`: an agent that waits only while away) the user is back; the record as
    it ends (answered ones are delivered even at the last moment)."""
    from lookout.remote import requests
    from lookout.remote.local import Watch

    watch = Watch(state_dir, rec)
    path = os.path.join(state_dir, store.REQUESTS, rec["id"] + ".json")
    stamp: tuple[int, int] | None = None
    rid = rec["id"]
    while True:
        now_ms = words.now_ms()
        if _Term.got:
            # "No" or Esc at the dialog (or the session going): the call does not run. From
            # OpenCode's plugin it says its dialog was answered, either way (the episode may say).
            if watch.outcome() == requests.ENDED:
                return requests.resolve(state_dir, rid, requests.ENDED, now_ms)
            said = watch.answer if rec.get("agent") == "opencode" else "denied"
            return requests.resolve(state_dir, rid, requests.ANSWERED_LOCALLY, now_ms, answer=said)
        try:
            st = os.stat(path)
            current = (st.st_ino, st.st_mtime_ns)
        except OSError:
            return None  # removed under us (uninstall --purge): let the dialog decide
        if current != stamp:
            stamp = current
            seen = requests.load(state_dir, rid)
            if seen is None:
                return None
            if seen.get("status") != requests.PENDING:
                return seen
        if now_ms >= int(rec["expires_ms"]):
            return requests.resolve(state_dir, rid, requests.EXPIRED, now_ms)
        if switch is not None and not switch.on(now_ms):
            return requests.resolve(state_dir, rid, requests.RELEASED, now_ms)
        settled = watch.outcome()
        if settled is not None:
            return requests.resolve(state_dir, rid, settled, now_ms, answer=watch.answer)
        time.sleep(POLL_S)


def output(payload: Mapping[str, Any], decision: Mapping[str, Any], whole: bool = True) -> bytes:
    """The PermissionRequest decision object the client reads on stdout. `whole`: with Claude
    Code's extras (a question's answers, Allow always); without them, behavior and a deny's
    message only (Codex: anything else fails closed there)."""
    from lookout.remote import requests

    behavior = decision.get("behavior")
    body: dict[str, Any]
    if behavior == "deny":
        by = decision.get("by") or "someone"
        said = decision.get("message")
        why = f": {said}" if isinstance(said, str) and said else "."
        body = {"behavior": "deny", "message": f"Denied from lookout by {by}{why}"}
    else:
        body = {"behavior": "allow"}
        tool_input = payload.get("tool_input")
        if not whole:
            tool_input = None
        if decision.get("answers") and isinstance(tool_input, dict):
            # AskUserQuestion reads the answers from its input (question text -> label).
            body["updatedInput"] = {**tool_input, "answers": decision["answers"]}
        if behavior == "allow_always" and whole:
            rules = requests.always_rules(payload.get("tool_name"), tool_input)
            if rules:
                body["updatedPermissions"] = rules
    doc = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": body}}
    return _jsonfast.dumps(doc).encode("ascii")


def decision_event(payload: Mapping[str, Any], rec: dict[str, Any]) -> dict[str, Any]:
    """The RemoteDecision event (who answered what, from where) that runner records through the
    same path as every hook's record: it also ends the request's attention episode."""
    decision = rec["decision"]
    event = {
        key: payload[key]
        for key in ("session_id", "agent_id", "agent_type", "prompt_id", "cwd", "tool_name")
        if key in payload
    }
    event["hook_event_name"] = "RemoteDecision"
    event["tool_input"] = payload.get("tool_input")
    event["remote"] = {
        "request_id": rec["id"],
        "decision": decision.get("behavior"),
        "by": decision.get("by"),
        "source": decision.get("source"),
        "user_agent": decision.get("user_agent"),
    }
    return event
