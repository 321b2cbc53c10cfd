"""The deciding hook (hooks/remote_answer.py), registered for PermissionRequest only when
`[remote] enabled = true`: record the request, wait for an answer from the dashboard or
`lookout answer`, and print the client's decision JSON.

In print mode (`claude -p`) it prints nothing at once: nobody can answer that dialog.
Fail-open: on a local answer, the session's end, the deadline, SIGTERM or any error it prints
nothing (the client's own dialog decides), writes nothing to stderr and exits 0. It never denies
on its own. stdout carries exactly one decision object or nothing at all."""

from __future__ import annotations

import os
import sys
import time

from lookout import _jsonfast, procs, runner, store, words

# Heavier modules (hashlib, secrets, reconcile) load only once a request is to be recorded: a
# tool outside [remote] tools costs this hook no more than the config check.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

POLL_S = 0.1
# The installed hook's `timeout` is wait_s plus this: the hook gives up (silently) before the
# client would kill it, and has time left to deliver an answer that came in at the last moment.
TIMEOUT_MARGIN_S = 15


class _Term:
    """SIGTERM from the client: the user said No or Esc at the dialog, or the session is going."""

    got = False

    @classmethod
    def handler(cls, signum: int, frame: object) -> None:
        cls.got = True


def run() -> int:
    # When the client fired the hook, as the recording hooks' records (the request's turn-edge
    # check compares with them): a busy machine may start the interpreter seconds later.
    ts_ms = procs.started_ms(words.now_ms())
    try:
        raw = sys.stdin.buffer.read()  # to EOF first, so the client never sees EPIPE
    except Exception:
        raw = b""
    try:
        import _signal  # type: ignore[import-not-found]  # C module; `signal` imports enum

        _signal.signal(_signal.SIGTERM, _Term.handler)
    except (ImportError, OSError, ValueError):
        pass
    try:
        out = os.dup(1)  # the answer's only way out; fds 1 and 2 go to /dev/null below
    except OSError:
        return 0
    answer: list[bytes] = []
    after: list[Callable[[str], None]] = []
    runner._fail_open(
        "remote answer",
        lambda state_dir: answer.append(decide(raw, ts_ms, state_dir, os.environ, after)),
    )
    try:
        if answer and answer[0]:
            os.write(out, answer[0])
        os.close(out)  # the answer is out before anything else can fail or take time
    except OSError:
        pass
    for task in after:
        runner._fail_open("remote answer (record)", task)
    return 0


def decide(
    raw: bytes,
    ts_ms: int,
    state_dir: str,
    env: Mapping[str, str],
    after: list[Callable[[str], None]] | None = None,
) -> bytes:
    """The bytes to print for one PermissionRequest payload (b"" = let the dialog decide).
    What is left to do once they are printed (the RemoteDecision event) goes into `after`."""
    if print_mode(env):
        return b""  # nobody can answer it: the client denies it at once, and must not wait
    payload = runner._parse(raw)
    if payload is None or payload.get("hook_event_name") != "PermissionRequest":
        return b""
    settings = remote_settings(state_dir, payload.get("cwd"))
    if not settings.get("enabled"):
        return b""
    tool_name = payload.get("tool_name")
    if not isinstance(tool_name, str) or not tool_matches(tool_name, settings["tools"]):
        return b""
    if not isinstance(payload.get("session_id"), str) or not payload["session_id"]:
        return b""
    from lookout.remote import requests

    rec = requests.new_record(
        payload, env, ts_ms, int(settings["wait_s"]), bool(settings["allow_always"])
    )
    try:
        requests.save_new(state_dir, rec, ts_ms)
    except FileExistsError:
        return b""  # another deciding hook already waits on this dialog
    final = wait(state_dir, rec)
    if final is None or final.get("status") not in (requests.ALLOWED, requests.DENIED):
        return b""
    decision = final["decision"]
    text = output(payload, decision)

    def record(sd: str) -> None:
        _record_event(sd, payload, final, env)

    if after is None:
        record(state_dir)
    else:
        after.append(record)
    return text


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


def wait(state_dir: str, rec: dict[str, Any]) -> dict[str, Any] | None:
    """Poll the record until it is answered, the terminal or the session settles it, or the
    deadline; the record as it ends (answered ones are delivered even at the last moment)."""
    from lookout.remote import requests
    from lookout.remote.local import Watch

    watch = Watch(state_dir, rec)
    path = os.path.join(state_dir, store.REQUESTS, rec["id"] + ".json")
    stamp: tuple[int, int] | None = None
    rid = rec["id"]
    while True:
        now_ms = words.now_ms()
        if _Term.got:
            gone = watch.outcome() == requests.ENDED
            return requests.resolve(
                state_dir, rid, requests.ENDED if gone else requests.ANSWERED_LOCALLY, now_ms
            )
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
        settled = watch.outcome()
        if settled is not None:
            return requests.resolve(state_dir, rid, settled, now_ms)
        time.sleep(POLL_S)


def output(payload: Mapping[str, Any], decision: Mapping[str, Any]) -> bytes:
    """The PermissionRequest decision object the client reads on stdout."""
    from lookout.remote import requests

    behavior = decision.get("behavior")
    body: dict[str, Any]
    if behavior == "deny":
        by = decision.get("by") or "someone"
        body = {"behavior": "deny", "message": f"Denied from lookout by {by}."}
    else:
        body = {"behavior": "allow"}
        tool_input = payload.get("tool_input")
        if decision.get("answers") and isinstance(tool_input, dict):
            # AskUserQuestion reads the answers from its input (question text -> label).
            body["updatedInput"] = {**tool_input, "answers": decision["answers"]}
        if behavior == "allow_always":
            rules = requests.always_rules(payload.get("tool_name"), tool_input)
            if rules:
                body["updatedPermissions"] = rules
    doc = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": body}}
    return _jsonfast.dumps(doc).encode("ascii")


def _record_event(
    state_dir: str, payload: Mapping[str, Any], rec: dict[str, Any], env: Mapping[str, str]
) -> None:
    """A RemoteDecision event in events.jsonl (who answered what, from where), through the same
    path as every hook's record: it also ends the request's attention episode."""
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
    raw = _jsonfast.dumps(event).encode("ascii")
    ts_ms = words.now_ms()
    runner.record(raw, "RemoteDecision", ts_ms, state_dir, env)
