"""lookout.ledger: episodes and idle gaps read back from what the real runner recorded, for the
cases the recorded week does not hold (torn lines, subagents, the window's edge)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from lookout import client_sessions, events, ledger, machine, reconcile, runner, store, suggest
from tests.conftest import write_config
from tests.fixtures.ledger import build


def test_a_torn_line_and_a_subagent_dialog(state_dir: Path) -> None:
    """A torn line is skipped; a subagent's dialog is the subagent's episode, closed by its own
    tool's completion while the main thread's stays open."""
    sid = "f0000000-0000-4000-8000-000000000001"
    base = build.BASE_MS

    def hook(t: float, name: str, **fields: object) -> None:
        data = {**build.payload("api1", name, dict(fields), 1), "session_id": sid}
        runner.record(json.dumps(data).encode(), name, base + int(t * 1000), str(state_dir), {})

    (state_dir).mkdir(parents=True, exist_ok=True)
    hook(0, "UserPromptSubmit", prompt="go")
    hook(1, "PermissionRequest", **build.bash("npm test"))
    hook(2, "PermissionRequest", agent_id="a1", agent_type="Explore", **build.bash("ls src"))
    with open(state_dir / "events.jsonl", "ab") as fh:
        fh.write(b'{"ts":"2026-11-16T09:00:02.500Z","seq":9,"notify":["resol')
    hook(
        5,
        "PostToolUse",
        agent_id="a1",
        agent_type="Explore",
        tool_use_id="t1",
        **build.bash("ls src"),
    )
    hook(9, "PostToolUse", tool_use_id="t2", **build.bash("npm test"))
    waits = ledger.read(str(state_dir)).waits
    assert [(w.tool, w.summary, w.wait_ms, w.answer) for w in waits] == [
        ("Bash", "ls src", 3000, "approved"),
        ("Bash", "npm test", 8000, "approved"),
    ]


def test_an_episode_open_when_the_window_starts_is_followed_not_counted(state_dir: Path) -> None:
    sid = "f0000000-0000-4000-8000-000000000002"
    base = build.BASE_MS

    def hook(t: float, name: str, **fields: object) -> None:
        data = {**build.payload("api1", name, dict(fields), 1), "session_id": sid}
        runner.record(json.dumps(data).encode(), name, base + int(t * 1000), str(state_dir), {})

    hook(0, "UserPromptSubmit", prompt="go")
    hook(1, "PermissionRequest", **build.bash("npm test"))  # before the window
    hook(10, "PermissionRequest", agent_id="a1", agent_type="Explore", **build.bash("ls src"))
    hook(15, "PostToolUse", tool_use_id="t2", **build.bash("npm test"))  # ends the main one
    hook(
        30,
        "PostToolUse",
        agent_id="a1",
        agent_type="Explore",
        tool_use_id="t1",
        **build.bash("ls src"),
    )
    waits = ledger.read(str(state_dir), base + 5000).waits
    assert [(w.summary, w.wait_ms) for w in waits] == [("ls src", 20000)]


def test_timestamps_are_the_stores_own() -> None:
    for ms in (0, 1_795_424_400_123, 1_795_478_399_999):
        assert ledger.ts_ms(store.rfc3339(ms).encode()) == ms
    assert ledger.ts_ms(b"2026-11-26 06:36:55.123Z") is None
    assert ledger.ts_ms(b"garbage") is None


# -- a reader recorded the client's registry first (issue 32 item 1) ------------------------------

REGISTRY = Path(__file__).parent / "fixtures" / "registry"
SID = "465dbd21-e140-442d-b7ad-02de9ad26c29"  # the captured registry files' session
READER = Path(__file__).parent / "fixtures" / "ledger-reader" / "state"


def registry_says(status: str, at: int) -> None:
    """Claude Code's registry file for this (live) process, as 2.1.332 writes it, with status
    `busy`, `idle`, `waiting-permission`..., changed at `at`."""
    data = json.loads((REGISTRY / f"2.1.332-{status}.json").read_text())
    pid = os.getpid()
    data.update(pid=pid, procStart=client_sessions.proc_start(pid), sessionId=SID)
    host = Path("/etc/machine-id").read_text().strip()
    data["pidDomain"] = f"linux:{host}:{os.readlink('/proc/self/ns/pid')}"
    data["statusUpdatedAt"] = at
    directory = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "sessions"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{pid}.json").write_text(json.dumps(data))


def hook(state: Path, name: str, at: int, **fields: object) -> None:
    """One hook event of this process's session through the real parser, machine and store."""
    body = {"session_id": SID, "cwd": "/home/dev/api", "hook_event_name": name, **fields}
    env = {"CLAUDE_PID": str(os.getpid()), "CLAUDE_CODE_ENTRYPOINT": "cli"}
    event = events.parse(body, env, at, f"{name}{at}", None)
    with store.Locked(str(state)) as st:
        snap, line, _ = machine.apply(st.read_session(SID), event)
        st.write_session(snap)
        st.append(store.EVENTS, {"ts": store.rfc3339(at), **line})


def reader_looks(state: Path) -> list[str]:
    """What a reader (`lookout status`, the dashboard) records now: the real reconcile."""
    return [f"{r['outcome']} {r['notify']}" for r in reconcile.reconcile(str(state))]


def bash_call(command: str, use_id: str = "toolu_1", **extra: object) -> dict[str, object]:
    return {"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": use_id, **extra}


@pytest.fixture
def quiet() -> None:
    write_config("# no rules\n")


def test_the_registrys_waiting_first_then_its_busy_is_one_approved_dialog(
    state_dir: Path, quiet: None
) -> None:
    """The registry says `waiting` before any hook of the call (so the reader opens the episode
    without a tool, and the PermissionRequest's own record ends it and opens another), then
    `busy` before the PostToolUse: one dialog, approved, with its rule, from the registry's
    start to the end the reader saw."""
    t = int(time.time() * 1000) - 60_000
    hook(state_dir, "SessionStart", t, source="startup")
    hook(state_dir, "UserPromptSubmit", t + 100, prompt="go")
    registry_says("waiting-permission", t + 200)
    assert reader_looks(state_dir) == ["waiting ['permission']"]
    call = bash_call("npm test")
    hook(
        state_dir,
        "PermissionRequest",
        t + 300,
        **{k: v for k, v in call.items() if k != "tool_use_id"},
    )
    hook(state_dir, "PreToolUse", t + 320, **call)
    registry_says("busy", t + 2000)
    assert reader_looks(state_dir) == ["busy ['resolved']"]
    hook(state_dir, "PostToolUse", t + 2100, tool_response={"stdout": ""}, **call)
    hook(state_dir, "Stop", t + 2500, last_assistant_message="done")
    (wait,) = ledger.read(str(state_dir)).waits
    assert (wait.rule, wait.answer, wait.summary, wait.tool) == (
        "Bash(npm test)",
        "approved",
        "npm test",
        "Bash",
    )
    assert (wait.start_ms, wait.end_ms) == (t + 200, t + 2000)


def test_a_busy_end_is_an_approval_only_when_that_call_ran(state_dir: Path, quiet: None) -> None:
    """The registry's `busy` ends the episode: approved once the call's own PostToolUse comes;
    not when another call ran, nor when the turn ended without it."""
    t = int(time.time() * 1000) - 60_000
    hook(state_dir, "SessionStart", t, source="startup")
    hook(state_dir, "UserPromptSubmit", t + 100, prompt="go")
    for n, ran in enumerate(("npm test", "npm run build", None)):
        at = t + 1000 + n * 10_000
        call = bash_call("npm test", f"toolu_{n}")
        hook(state_dir, "PreToolUse", at, **call)
        hook(
            state_dir,
            "PermissionRequest",
            at + 50,
            **{k: v for k, v in call.items() if k != "tool_use_id"},
        )
        registry_says("busy", at + 1000)
        assert reader_looks(state_dir) == ["busy ['resolved']"]
        if ran is not None:
            other = bash_call(ran, f"toolu_{n}" if ran == "npm test" else f"toolu_x{n}")
            hook(state_dir, "PostToolUse", at + 1100, tool_response={"stdout": ""}, **other)
    hook(state_dir, "Stop", t + 40_000, last_assistant_message="done")
    waits = ledger.read(str(state_dir)).waits
    assert [w.answer for w in waits] == ["approved", "unknown", "unknown"]


def test_a_batch_record_first_then_the_calls_own(state_dir: Path, quiet: None) -> None:
    """The client runs PostToolUse and PostToolBatch at once: when the batch's record ends the
    episode, the call's own PostToolUse after it still says it was approved."""
    t = int(time.time() * 1000) - 60_000
    hook(state_dir, "SessionStart", t, source="startup")
    hook(state_dir, "UserPromptSubmit", t + 100, prompt="go")
    call = bash_call("npm test")
    hook(state_dir, "PreToolUse", t + 200, **call)
    hook(
        state_dir,
        "PermissionRequest",
        t + 250,
        **{k: v for k, v in call.items() if k != "tool_use_id"},
    )
    hook(state_dir, "PostToolBatch", t + 1000, tool_calls=[{**call, "tool_response": ""}])
    hook(state_dir, "PostToolUse", t + 1001, tool_response={"stdout": ""}, **call)
    (wait,) = ledger.read(str(state_dir)).waits
    assert (wait.answer, wait.rule, wait.end_ms) == ("approved", "Bash(npm test)", t + 1000)


def test_the_registrys_waiting_for_a_subagents_dialog_is_that_dialog(
    state_dir: Path, quiet: None
) -> None:
    """A subagent asks: the registry's `waiting` opens an episode of the main thread (about the
    Agent call), then the subagent's PermissionRequest opens its own. One dialog, one episode:
    the subagent's, from the registry's start, approved by its PostToolUse."""
    t = int(time.time() * 1000) - 60_000
    hook(state_dir, "SessionStart", t, source="startup")
    hook(state_dir, "UserPromptSubmit", t + 100, prompt="go")
    agent = {"tool_name": "Agent", "tool_input": {"prompt": "x"}, "tool_use_id": "toolu_agent"}
    hook(state_dir, "PreToolUse", t + 200, **agent)
    hook(state_dir, "SubagentStart", t + 300, agent_id="a1", agent_type="general-purpose")
    sub = {"agent_id": "a1", "agent_type": "general-purpose"}
    call = bash_call("npm test", "toolu_sub", **sub)
    hook(state_dir, "PreToolUse", t + 400, **call)
    registry_says("waiting-permission", t + 450)
    assert reader_looks(state_dir) == ["waiting ['permission']"]
    hook(
        state_dir,
        "PermissionRequest",
        t + 500,
        **{k: v for k, v in call.items() if k != "tool_use_id"},
    )
    registry_says("busy", t + 3000)
    assert reader_looks(state_dir) == ["busy ['resolved', 'resolved']"]
    hook(state_dir, "PostToolUse", t + 3100, tool_response={"stdout": ""}, **call)
    (wait,) = ledger.read(str(state_dir)).waits
    assert (wait.rule, wait.answer, wait.start_ms, wait.end_ms) == (
        "Bash(npm test)",
        "approved",
        t + 450,
        t + 3000,
    )


def test_twenty_real_approvals_with_a_reader_polling(state_dir: Path) -> None:
    """tests/fixtures/ledger-reader: 20 real approvals (4 commands, 5 each) while a reader polled
    `lookout status --json` every 0.2 s; its README counts the lines the reader wrote first."""
    waits = ledger.read(str(READER)).waits
    assert len(waits) == 20
    assert round(sum(w.wait_ms for w in waits) / 1000, 3) == 18.236
    assert {w.answer for w in waits} == {"approved"}
    found = {s.rule: s.count for s in suggest.suggest(waits)}
    assert found == {f"Bash(touch r-{x}.txt)": 5 for x in "abcd"}


def test_a_read_keeps_no_time_stamps_after_it(state_dir: Path) -> None:
    """The time stamps' parsed pieces are cached for one read only: a long-lived `lookout serve`
    reporting every minute must not keep every minute and millisecond it ever read."""
    import gc
    import tracemalloc

    start = int(time.time() * 1000) - 2 * 86_400_000
    state_dir.mkdir(parents=True, exist_ok=True)
    with open(state_dir / store.EVENTS, "w", encoding="utf-8") as f:
        for n in range(3000):  # each in a minute and a millisecond of its own
            ts = store.rfc3339(start + n * 61_001)
            f.write(
                f'{{"ts":"{ts}","seq":{n + 1},"session_id":"s{n}","agent":"claude",'
                f'"event":"Stop","notify":["done"]}}\n'
            )
    ledger.read(str(state_dir), start + 3000 * 61_001)  # warm, on none of them
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        waits = ledger.read(str(state_dir), start).waits
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert waits == []
    assert kept < 64 * 1024, f"{kept} bytes kept after the read"


# -- ledger.Kept: lookout serve's minute poll reads only what was appended ----------------------

WEEK = Path(__file__).parent / "fixtures" / "ledger" / "state"


def _rotate(state: Path) -> None:
    """What the store's rotation does (store.Locked._rotate): .1 -> .2 ..., the live file -> .1."""
    base = state / store.EVENTS
    for n in range(store.DEFAULT_KEEP - 1, 0, -1):
        if (state / f"{store.EVENTS}.{n}").exists():
            os.replace(state / f"{store.EVENTS}.{n}", state / f"{store.EVENTS}.{n + 1}")
    os.replace(base, state / f"{store.EVENTS}.1")


def test_a_kept_ledger_reads_only_what_was_appended_and_equals_a_full_read(
    state_dir: Path,
) -> None:
    """The recorded week (tests/fixtures/ledger), appended in pieces with rotations between
    them: after each piece the kept pass gives what a full read gives, and it read everything
    again only when it had to (a new window, two rotations between two reads, a replaced
    file)."""
    week = [
        line
        for name in (f"{store.EVENTS}.2", f"{store.EVENTS}.1", store.EVENTS)
        for line in (WEEK / name).read_bytes().splitlines(keepends=True)
    ]
    state_dir.mkdir(parents=True)
    kept = ledger.Kept(str(state_dir))
    until = build.BASE_MS + 8 * 86_400_000

    def append(lines: list[bytes]) -> None:
        with open(state_dir / store.EVENTS, "ab") as f:
            f.write(b"".join(lines))

    def same(since: int = 0) -> None:
        assert kept.read(since, until) == ledger.read(str(state_dir), since, until)

    pieces = [week[i : i + 12] for i in range(0, len(week), 12)]
    append(pieces[0])
    same()
    append(pieces[1])
    append([pieces[2][0][:40]])  # a line a writer has not ended yet
    same()
    append([pieces[2][0][40:], *pieces[2][1:]])
    _rotate(state_dir)  # once between two reads: its rest, then the new file
    append(pieces[3])
    same()
    assert kept.full_reads == 1
    _rotate(state_dir)
    append(pieces[4])
    _rotate(state_dir)  # twice: read again
    append(pieces[5])
    same()
    assert kept.full_reads == 2
    assert ledger.read(str(state_dir), 0, until).waits, "the week has episodes"
    same(build.BASE_MS + 86_400_000)  # a new window (the next day)
    assert kept.full_reads == 3
    append(pieces[6] + pieces[7])
    same(build.BASE_MS + 86_400_000)
    assert kept.full_reads == 3
    data = (state_dir / store.EVENTS).read_bytes()
    (state_dir / store.EVENTS).unlink()
    (state_dir / store.EVENTS).write_bytes(data[: len(data) // 3].rpartition(b"\n")[0] + b"\n")
    same(build.BASE_MS + 86_400_000)  # another file where events.jsonl was
    assert kept.full_reads == 4
