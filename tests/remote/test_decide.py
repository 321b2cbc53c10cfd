"""The deciding hook, run as the client runs it: it prints one decision object or nothing, never
a byte on stderr, and always exits 0."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lookout.remote import answers, decide, local, requests
from tests.helpers import ROOT, payload, wait_for, write_config

ON = "[remote]\nenabled = true\nwait_s = 30\n"


def start(
    data: dict[str, Any] | bytes, env: dict[str, str] | None = None, late_s: float = 0
) -> subprocess.Popen[bytes]:
    """The deciding hook, as the client starts it; `late_s`: its interpreter comes up that much
    later, as on a busy machine (the shell that execs it waits first)."""
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    argv = [sys.executable, "-I", "-S", str(ROOT / "hooks" / "remote_answer.py")]
    if late_s:
        argv = ["/bin/sh", "-c", f'sleep {late_s}; exec "$@"', "sh", *argv]
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env or os.environ.copy(),
    )
    assert proc.stdin is not None
    proc.stdin.write(raw)
    proc.stdin.close()
    proc.stdin = None  # communicate() must not flush it again
    return proc


def finish(proc: subprocess.Popen[bytes], timeout: float = 15) -> bytes:
    out, err = proc.communicate(timeout=timeout)
    assert (proc.returncode, err) == (0, b"")
    return out


def waiting(state: Path, timeout: float = 10) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        recs = [r for r in requests.load_all(str(state)) if r["status"] == "pending"]
        if recs:
            return recs[0]
        time.sleep(0.02)
    raise AssertionError("no pending request recorded")


def polling(proc: subprocess.Popen[bytes]) -> None:
    """Wait until the deciding hook sleeps between two looks at its request: it has looked at
    the session (and seen its episode open) at least once. The kernel says where a process
    sleeps (/proc/PID/wchan); one that hides it ("0") gets a pause instead."""
    wchan = Path(f"/proc/{proc.pid}/wchan")

    def asleep() -> bool:
        try:
            where = wchan.read_text()
        except OSError:
            return False
        if where == "0":
            time.sleep(0.3)
            return True
        return "nanosleep" in where

    wait_for(asleep, what="the deciding hook in its poll")


def record_hook(script: str, data: dict[str, Any]) -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(ROOT / "hooks" / script)],
        input=json.dumps(data).encode(),
        capture_output=True,
        timeout=20,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def events(state: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (state / "events.jsonl").read_text().splitlines()]


def test_off_by_default_it_prints_nothing_and_records_nothing(state_dir: Path) -> None:
    write_config("# no [remote]\n")
    started = time.monotonic()
    assert finish(start(payload("PermissionRequest-Bash"))) == b""
    assert time.monotonic() - started < 5
    assert not (state_dir / "requests").exists()


@pytest.mark.parametrize("stdin", [b"", b"not json", b"[1,2]", json.dumps({"x": 1}).encode()])
def test_garbage_in_nothing_out(state_dir: Path, stdin: bytes) -> None:
    write_config(ON)
    assert finish(start(stdin)) == b""


def test_tools_outside_the_globs_fall_through(state_dir: Path) -> None:
    write_config(ON + 'tools = ["Edit", "Write", "mcp__*"]\n')
    assert finish(start(payload("PermissionRequest-Bash"))) == b""
    assert requests.load_all(str(state_dir)) == []


@pytest.mark.parametrize("entrypoint", ["sdk-cli", "sdk-ts"])
def test_print_mode_falls_through_at_once(state_dir: Path, entrypoint: str) -> None:
    """`claude -p`: nobody can answer its dialog (no alert goes out), so no remote wait either:
    the client denies it at once."""
    write_config(ON)
    started = time.monotonic()
    env = {**os.environ, "CLAUDE_CODE_ENTRYPOINT": entrypoint}
    assert finish(start(payload("PermissionRequest-Bash"), env), timeout=5) == b""
    assert time.monotonic() - started < 5
    assert requests.load_all(str(state_dir)) == []


def test_allowed_from_afar_prints_the_allow_json_and_records_who(state_dir: Path) -> None:
    write_config(ON)
    p = payload("PermissionRequest-Bash")
    record_hook("permission_request.py", p)
    proc = start(p)
    rec = waiting(state_dir)
    assert rec["pid"] == proc.pid and rec["session_id"] == p["session_id"]
    answer(
        state_dir,
        rec,
        by="the dashboard (192.0.2.7)",
        source="192.0.2.7",
        user_agent="Mobile Safari",
    )
    out = finish(proc)
    assert json.loads(out) == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"},
        }
    }
    last = events(state_dir)[-1]
    assert last["event"] == "RemoteDecision"
    assert last["remote"] == {
        "request_id": rec["id"],
        "decision": "allow",
        "by": "the dashboard (192.0.2.7)",
        "source": "192.0.2.7",
        "user_agent": "Mobile Safari",
    }
    assert last["summary"] == "allow by the dashboard (192.0.2.7): touch t.txt"
    assert rec["nonce"] not in (state_dir / "events.jsonl").read_text()
    # The answer ends the attention the PermissionRequest raised.
    assert (last["status"], last["notify"]) == ("working", ["resolved"])


def test_denied_from_afar_names_who_denied(state_dir: Path) -> None:
    write_config(ON)
    proc = start(payload("PermissionRequest-Bash"))
    rec = waiting(state_dir)
    answer(
        state_dir,
        rec,
        "deny",
        by="alice@laptop (lookout answer)",
        source="local shell",
        user_agent="lookout answer",
    )
    decision = json.loads(finish(proc))["hookSpecificOutput"]["decision"]
    assert decision == {
        "behavior": "deny",
        "message": "Denied from lookout by alice@laptop (lookout answer).",
    }


def test_sigterm_from_the_client_means_answered_in_the_terminal(state_dir: Path) -> None:
    write_config(ON)
    proc = start(payload("PermissionRequest-Bash"))
    rec = waiting(state_dir)
    proc.send_signal(signal.SIGTERM)  # what the client does on No / Esc at the dialog
    assert finish(proc, timeout=3) == b""
    done = requests.load(str(state_dir), rec["id"])
    assert (done["status"], done["answered"]) == ("answered_locally", "denied")
    public = requests.public(done, int(time.time() * 1000))
    assert public["reason"] == "denied in the terminal"
    assert answers.outcome_text(done) == "Denied in the terminal"


def test_a_local_yes_seen_in_the_record_ends_the_wait(state_dir: Path) -> None:
    write_config(ON)
    p = payload("PermissionRequest-Bash")
    record_hook("permission_request.py", p)
    proc = start(p)
    rec = waiting(state_dir)
    polling(proc)  # the hook has seen the episode open
    post = dict(payload("PostToolUse-Bash"), session_id=p["session_id"], tool_input=p["tool_input"])
    record_hook("post_tool_use.py", post)  # "1. Yes" at the keyboard: the tool ran
    assert finish(proc, timeout=5) == b""
    assert requests.load(str(state_dir), rec["id"])["status"] == "answered_locally"
    with pytest.raises(requests.Refused) as late:
        answer(state_dir, rec)
    # The tool ran: every surface says it was allowed there, not only "answered".
    assert (late.value.status, str(late.value)) == (409, "allowed in the terminal")
    done = requests.load(str(state_dir), rec["id"])
    assert answers.outcome_text(done) == "Allowed in the terminal"


def test_a_yes_over_before_the_hook_first_looked_is_still_allowed_in_the_terminal(
    state_dir: Path,
) -> None:
    """A deciding hook starved until the dialog was answered and the turn ended (seen in CI at
    load): it never saw its episode open, yet the session says how it ended: allowed, not only
    "answered"."""
    write_config(ON)
    p = payload("PermissionRequest-Bash")
    record_hook("permission_request.py", p)
    post = dict(payload("PostToolUse-Bash"), session_id=p["session_id"], tool_input=p["tool_input"])
    record_hook("post_tool_use.py", post)  # "1. Yes", before the deciding hook looked
    proc = start(p)
    rec = waiting(state_dir)
    stop = {"session_id": p["session_id"], "cwd": p["cwd"], "hook_event_name": "Stop"}
    record_hook("stop.py", stop)  # the turn edge that settles a request never seen open
    assert finish(proc, timeout=5) == b""
    done = requests.load(str(state_dir), rec["id"])
    assert (done["status"], done.get("answered")) == ("answered_locally", "allowed")
    assert answers.outcome_text(done) == "Allowed in the terminal"


def _asked_and_polling(state_dir: Path, use_id: str) -> tuple[Any, Any, dict[str, Any]]:
    """A Bash dialog whose deciding hook has seen it open: (payload, hook, its request)."""
    write_config(ON)
    p = payload("PermissionRequest-Bash")
    record_hook("permission_request.py", p)
    pre = {**p, "hook_event_name": "PreToolUse", "tool_use_id": use_id}
    record_hook("pre_tool_use.py", pre)
    proc = start(p)
    rec = waiting(state_dir)
    polling(proc)
    return p, proc, rec


def _batch(p: dict[str, Any], use_id: str) -> dict[str, Any]:
    call = {"tool_name": "Bash", "tool_input": p["tool_input"], "tool_use_id": use_id}
    return {**_base(p), "hook_event_name": "PostToolBatch", "tool_calls": [call]}


def _base(p: dict[str, Any]) -> dict[str, Any]:
    return {k: p[k] for k in ("session_id", "transcript_path", "cwd")}


def test_a_yes_whose_batch_hook_came_before_its_post_tool_use_is_allowed_in_the_terminal(
    state_dir: Path,
) -> None:
    """At load the approved call's async PostToolUse (started first) is recorded after the
    batch's sync PostToolBatch, which ends the dialog without saying how (a CI failure: the
    alert said only "Answered in the terminal"). The hook waits for it; a press from afar
    meanwhile is refused, not taken for a dialog already answered."""
    use_id = "toolu_late_post"
    p, proc, rec = _asked_and_polling(state_dir, use_id)
    post = {**p, "hook_event_name": "PostToolUse", "tool_use_id": use_id, "tool_response": {}}
    # Started first (its time stamp is its shell's start), its interpreter up only once the
    # batch's hook was recorded: the client's order at load.
    go = state_dir / "go"
    late = subprocess.Popen(
        [
            *("/bin/sh", "-c", f'while [ ! -e "{go}" ]; do sleep 0.02; done; exec "$@"', "sh"),
            *(sys.executable, "-I", "-S", str(ROOT / "hooks" / "post_tool_use.py")),
        ],
        stdin=subprocess.PIPE,
    )
    assert late.stdin is not None
    late.stdin.write(json.dumps(post).encode())
    late.stdin.close()
    record_hook("post_tool_batch.py", _batch(p, use_id))
    wait_for(lambda: requests.load(str(state_dir), rec["id"]).get("over"), 5, "the hook to wait")
    with pytest.raises(requests.Refused) as refused:
        answer(state_dir, rec)
    assert (refused.value.status, str(refused.value)) == (409, "answered in the terminal")
    go.touch()
    assert late.wait(timeout=20) == 0
    assert finish(proc, timeout=10) == b""
    recorded = [e["event"] for e in events(state_dir) if e["event"].startswith("PostTool")]
    assert recorded == ["PostToolBatch", "PostToolUse"]  # the order this test is about
    done = requests.load(str(state_dir), rec["id"])
    assert (done["status"], done.get("answered")) == ("answered_locally", "allowed")
    assert answers.outcome_text(done) == "Allowed in the terminal"


def test_a_batch_hook_alone_is_told_by_the_transcript(state_dir: Path, tmp_path: Path) -> None:
    """The call's result in the transcript says how without its PostToolUse: the user's refusal
    (the client's `toolDenialKind`) is denied; a result that is no error, allowed."""
    for use_id, said in (("toolu_refused", "denied"), ("toolu_ran", "allowed")):
        transcript = tmp_path / f"{use_id}.jsonl"
        p, proc, rec = _asked_and_polling(state_dir, use_id)
        result = {"type": "tool_result", "tool_use_id": use_id, "is_error": said == "denied"}
        line = {"type": "user", "message": {"content": [result]}}
        if said == "denied":
            line["toolDenialKind"] = "user-rejected"
        transcript.write_text(json.dumps(line, separators=(",", ":")) + "\n")
        record_hook("post_tool_batch.py", {**_batch(p, use_id), "transcript_path": str(transcript)})
        assert finish(proc, timeout=10) == b""
        done = requests.load(str(state_dir), rec["id"])
        assert (done["status"], done.get("answered")) == ("answered_locally", said)


def test_a_dialog_over_without_a_word_of_how_is_answered_in_the_terminal(state_dir: Path) -> None:
    """Neither a PostToolUse nor the transcript ever says how: after its wait, the request is
    "answered in the terminal", no more (a "No" with a message to Claude ends this way)."""
    use_id = "toolu_unsaid"
    p, proc, rec = _asked_and_polling(state_dir, use_id)
    record_hook("post_tool_batch.py", _batch(p, use_id))
    began = time.monotonic()
    assert finish(proc, timeout=10) == b""
    assert time.monotonic() - began >= local.ANSWER_WAIT_S - 0.2  # it waited, then said so
    done = requests.load(str(state_dir), rec["id"])
    assert (done["status"], done.get("answered")) == ("answered_locally", None)
    assert answers.outcome_text(done) == "Answered in the terminal"


def answer(
    state_dir: Path, rec: dict[str, Any], decision: str = "allow", **given: Any
) -> dict[str, Any]:
    """Request `rec` answered now from afar, with its nonce (who: `by`, `source`, `user_agent`)."""
    said = {"by": "x", "source": "x", "user_agent": "x", **given}
    now_ms = int(time.time() * 1000)
    return requests.answer(str(state_dir), rec["id"], decision, rec["nonce"], now_ms=now_ms, **said)


def test_the_deadline_falls_through_to_the_dialog(state_dir: Path) -> None:
    rec = requests.new_record(
        payload("PermissionRequest-Bash"), {}, int(time.time() * 1000), 10, False
    )
    rec["expires_ms"] = int(time.time() * 1000) + 300
    requests.save_new(str(state_dir), rec, rec["created_ms"])
    started = time.monotonic()
    final = decide.wait(str(state_dir), rec)
    assert final is not None and final["status"] == "expired"
    assert 0.25 < time.monotonic() - started < 3


def test_a_question_answered_from_afar_goes_back_as_updated_input(state_dir: Path) -> None:
    write_config(ON)
    p = {
        "session_id": "s-question",
        "cwd": "/tmp",
        "hook_event_name": "PermissionRequest",
        "tool_name": "AskUserQuestion",
        "tool_input": {
            "questions": [
                {
                    "question": "Which colour?",
                    "header": "Choice",
                    "multiSelect": False,
                    "options": [
                        {"label": "Red", "description": "r"},
                        {"label": "Blue", "description": "b"},
                    ],
                }
            ]
        },
    }
    proc = start(p)
    rec = waiting(state_dir)
    answer(state_dir, rec, answers={"Which colour?": "Blue"})
    decision = json.loads(finish(proc))["hookSpecificOutput"]["decision"]
    assert decision == {
        "behavior": "allow",
        "updatedInput": {**p["tool_input"], "answers": {"Which colour?": "Blue"}},
    }


def test_a_project_file_cannot_turn_it_on(state_dir: Path, tmp_path: Path) -> None:
    write_config("# nothing remote\n")
    project = tmp_path / "repo"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "lookout.toml").write_text("[remote]\nenabled = true\n")
    p = dict(payload("PermissionRequest-Bash"), cwd=str(project))
    assert finish(start(p)) == b""
    assert requests.load_all(str(state_dir)) == []


def test_a_deciding_hook_started_late_still_sees_the_turn_end_before_it(state_dir: Path) -> None:
    """A busy machine brings the deciding hook's interpreter up after the user answered at the
    keyboard and the turn ended: it never sees its dialog open, and the turn's end (recorded
    with the time the client fired its hook) still comes after the request, which is as old as
    the client's firing of the deciding hook, not as its interpreter: settled at once, instead
    of a request pending (and the hook running) for wait_s."""
    write_config(ON)
    p = payload("PermissionRequest-Bash")
    record_hook("permission_request.py", p)
    proc = start(p, late_s=1.5)
    time.sleep(0.05)  # the user's answer comes later than the client's firing of the hook
    record_hook("stop.py", {**payload("Stop"), "session_id": p["session_id"]})
    assert finish(proc, timeout=10) == b""
    (rec,) = requests.load_all(str(state_dir))
    assert rec["status"] == "answered_locally", rec


def test_the_session_ending_ends_the_wait_silently(state_dir: Path) -> None:
    write_config(ON)
    p = payload("PermissionRequest-Bash")
    record_hook("permission_request.py", p)
    proc = start(p)
    rec = waiting(state_dir)
    record_hook("session_end.py", {**payload("SessionEnd"), "session_id": p["session_id"]})
    assert finish(proc, timeout=5) == b""
    assert requests.load(str(state_dir), rec["id"])["status"] == "ended"


def test_the_decision_goes_out_even_when_recording_it_fails(state_dir: Path) -> None:
    write_config(ON)
    proc = start(payload("PermissionRequest-Bash"))
    rec = waiting(state_dir)
    (state_dir / "events.jsonl").mkdir()  # the RemoteDecision line cannot be appended
    answer(state_dir, rec)
    decision = json.loads(finish(proc))["hookSpecificOutput"]["decision"]
    assert decision == {"behavior": "allow"}
    assert "remote answer (record)" in (state_dir / "errors.log").read_text()


# -- Codex: waits only while away (issue 41) ----------------------------------------------------

CODEX = ROOT / "tests" / "fixtures" / "codex" / "payloads"


def codex_request(**changes: Any) -> dict[str, Any]:
    """Codex 0.169.0's PermissionRequest (the TUI's, with the model's justification as
    `description`), as its hooks get it."""
    return {**json.loads((CODEX / "PermissionRequest.json").read_text()), **changes}


def codex_env() -> dict[str, str]:
    """The environment of the command install.py puts in Codex's hooks.json (it declares the
    agent)."""
    return {**os.environ, "LOOKOUT_AGENT": "codex"}


def codex_record(data: dict[str, Any]) -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(ROOT / "hooks" / "permission_request.py")],
        input=json.dumps(data).encode(),
        capture_output=True,
        timeout=20,
        env=codex_env(),
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def lookout(*argv: str) -> str:
    """The `lookout` command, as the user types it."""
    done = subprocess.run(
        [sys.executable, "-m", "lookout", *argv], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def away_events(state: Path) -> list[dict[str, Any]]:
    return [e for e in events(state) if e["event"] == "Away"]


def test_codex_while_present_returns_at_once_with_nothing(state_dir: Path) -> None:
    """Codex shows its prompt only once the hook returns: with the user at the screen, the hook
    says nothing and records no request, however long wait_s is."""
    write_config(ON)
    p = codex_request()
    codex_record(p)
    assert finish(start(p, codex_env()), timeout=10) == b""
    assert requests.load_all(str(state_dir)) == []
    lookout("away", "on")
    lookout("away", "off")  # back again: the same
    assert finish(start(p, codex_env()), timeout=10) == b""
    assert requests.load_all(str(state_dir)) == []


def test_codex_while_away_waits_and_answers_allow_in_its_format(state_dir: Path) -> None:
    write_config(ON + "allow_always = true\n")
    lookout("away", "on")
    p = codex_request()
    codex_record(p)
    proc = start(p, codex_env())
    rec = waiting(state_dir)
    assert (rec["agent"], rec["allow_always"]) == ("codex", False)  # no updatedPermissions
    listed = json.loads(lookout("answer", "--json"))
    # The Allow rule: the justification is commentary, shown, never what is approved.
    assert listed[0]["detail"] == "touch made_by_q1\ndescription: probe needs it"
    assert listed[0]["offers_allow"] is True
    last = allowed_with_lookout_answer(state_dir, proc, rec, "codex")
    assert (last["status"], last["notify"]) == ("working", ["resolved"])


def allowed_with_lookout_answer(
    state_dir: Path, proc: subprocess.Popen[bytes], rec: dict[str, Any], agent: str
) -> dict[str, Any]:
    """`lookout answer ID allow`: the agent's hook says allow, and the RemoteDecision recorded
    names the agent (the line, returned)."""
    assert "allowed: " in lookout("answer", rec["id"], "allow")
    assert json.loads(finish(proc)) == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"},
        }
    }
    last = events(state_dir)[-1]
    assert (last["event"], last["agent"], last["remote"]["decision"]) == (
        "RemoteDecision",
        agent,
        "allow",
    )
    return last


def test_codex_deny_carries_the_message(state_dir: Path) -> None:
    write_config(ON)
    lookout("away", "on")
    p = codex_request()
    proc = start(p, codex_env())
    rec = waiting(state_dir)
    said = lookout("answer", rec["id"], "deny", "--message", "use the staging database")
    assert said.startswith("denied: ")
    decision = json.loads(finish(proc))["hookSpecificOutput"]["decision"]
    assert decision["behavior"] == "deny"
    assert decision["message"].endswith("(lookout answer): use the staging database")
    assert set(decision) == {"behavior", "message"}  # nothing Codex fails closed on
    assert requests.load(str(state_dir), rec["id"])["decision"]["message"] == (
        "use the staging database"
    )


def test_away_off_releases_a_waiting_codex_hook_within_a_second(state_dir: Path) -> None:
    write_config(ON)
    lookout("away", "on")
    p = codex_request()
    codex_record(p)
    proc = start(p, codex_env())
    rec = waiting(state_dir)
    polling(proc)
    lookout("away", "off")
    assert finish(proc, timeout=10) == b""  # no decision: Codex's own prompt asks
    off_ms = away_events(state_dir)[-1]["away"]["since_ms"]
    done = requests.load(str(state_dir), rec["id"])
    assert done["status"] == "released"
    # The hook's own stamp of when it let go, against the switch's: within 1 s.
    assert 0 <= done["resolved_ms"] - off_ms <= 1000
    assert requests.public(done, done["resolved_ms"])["reason"].startswith("back at the terminal")
    assert answers.outcome_text(done) == "Back at the terminal: its own prompt decides"


def test_away_for_a_while_ends_by_itself(state_dir: Path) -> None:
    write_config(ON)
    lookout("away", "on", "--for", "6s")  # room for a hook that starts late on a busy machine
    proc = start(codex_request(), codex_env())
    until_ms = json.loads((state_dir / "away.json").read_text())["until_ms"]
    rec = waiting(state_dir)
    assert finish(proc, timeout=15) == b""
    done = requests.load(str(state_dir), rec["id"])
    assert done["status"] == "released"
    assert 0 <= done["resolved_ms"] - until_ms <= 1000
    assert json.loads(lookout("away", "--json"))["away"] is False


def test_claude_code_is_the_same_with_away_off(state_dir: Path) -> None:
    """The switch is Codex's: Claude Code's hook waits whatever it says (its dialog races)."""
    write_config(ON)
    lookout("away", "off")
    proc = start(payload("PermissionRequest-Bash"))
    rec = waiting(state_dir)
    lookout("answer", rec["id"], "deny", "--message", "not on Friday")
    decision = json.loads(finish(proc))["hookSpecificOutput"]["decision"]
    assert decision["message"].endswith(": not on Friday")


def opencode_request() -> dict[str, Any]:
    """What lookout's OpenCode plugin hands the deciding hook for a bash permission: the call's
    whole input, as OpenCode 1.18.33's tool part carries it (tests/e2e/test_opencode.py)."""
    return {
        "hook_event_name": "PermissionRequest",
        "session_id": "ses_oc1",
        "cwd": "/tmp/proj",
        "tool_name": "bash",
        "tool_input": {"command": "touch made_by_oc", "description": "Touch a file"},
        "tool_use_id": "call_1",
    }


def opencode_env() -> dict[str, str]:
    return {**os.environ, "LOOKOUT_AGENT": "opencode"}


def test_opencode_waits_beside_its_dialog_and_answers_allow_or_deny_only(state_dir: Path) -> None:
    """Issue 41: OpenCode's plugin starts the deciding hook beside its own dialog, so it waits
    with away off (the first answer wins, as for Claude Code); its answer carries no extras
    (the plugin gives the dialog once or reject)."""
    write_config(ON + "allow_always = true\n")
    proc = start(opencode_request(), opencode_env())
    rec = waiting(state_dir)
    assert (rec["agent"], rec["allow_always"]) == ("opencode", False)
    listed = json.loads(lookout("answer", "--json"))
    assert listed[0]["detail"] == "touch made_by_oc\ndescription: Touch a file"
    assert listed[0]["offers_allow"] is True  # the description is commentary (issue 38)
    allowed_with_lookout_answer(state_dir, proc, rec, "opencode")


def test_opencode_sigterm_is_answered_in_the_terminal_either_way(state_dir: Path) -> None:
    """The plugin stops its deciding child once the dialog was answered at the terminal, Allow
    or Reject alike: not taken for a No, as Claude Code's SIGTERM is."""
    write_config(ON)
    proc = start(opencode_request(), opencode_env())
    rec = waiting(state_dir)
    proc.send_signal(signal.SIGTERM)
    assert finish(proc, timeout=3) == b""
    done = requests.load(str(state_dir), rec["id"])
    assert (done["status"], done.get("answered")) == ("answered_locally", None)
    public = requests.public(done, int(time.time() * 1000))
    assert public["reason"] == "answered in the terminal"
