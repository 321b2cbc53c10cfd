"""Escalations: scheduled files the sender re-checks, verified before anyone is paged."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lookout import store
from lookout.sender import deliver, sender
from tests.helpers import calls, recorder, wait_for, write_config
from tests.notify.jobs import (
    deliveries,
    hook_payload,
    intent,
    make_job,
    run_hooks,
    senders,
    wait_until,
)
from tests.receivers import ntfy_receiver


def write_snapshot(state_dir: Path, status: str, episode: str | None) -> None:
    (state_dir / "sessions").mkdir(parents=True, exist_ok=True)
    store.write_json_atomic(
        store.session_file(str(state_dir), "s1"),
        {"session_id": "s1", "status": status, "episode": episode},
    )


def _escalating_config(prog: Path, after_s: float) -> None:
    write_config(
        f'[channels.cmd]\ntype = "command"\nargv = ["{prog}", "{{title}}"]\n'
        f'[channels.pager]\ntype = "command"\nargv = ["{prog}", "pager", "{{title}}"]\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["cmd"]\n'
        f'escalate_after_s = {after_s}\nescalate_to = ["pager"]\n'
    )


# -- escalation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "episode", "escalated"),
    [
        ("attention", "s1:permission:1", True),
        ("working", None, False),
        ("attention", "s1:permission:2", False),
    ],
    ids=["still-waiting", "answered", "another-episode"],
)
def test_escalation_rechecks_the_session(
    state_dir: Path, tmp_path: Path, status: str, episode: str | None, escalated: bool
) -> None:
    prog, log = recorder(tmp_path)
    write_config(
        f'[channels.cmd]\ntype = "command"\nargv = ["{prog}", "{{title}}"]\n'
        f'[channels.pager]\ntype = "command"\nargv = ["{prog}", "pager", "{{title}}"]\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["cmd"]\n'
        'escalate_after_s = 0.3\nescalate_to = ["pager"]\n'
    )
    job = make_job(state_dir, [intent()])
    write_snapshot(state_dir, "attention", "s1:permission:1")
    sender.run_job(job, str(state_dir))  # the alert; the escalation becomes a scheduled file
    (scheduled,) = (state_dir / "outbox").glob("esc-*.json")
    write_snapshot(state_dir, status, episode)  # what happens while it waits
    sender.serve(str(state_dir), poll_s=0.05)  # returns once nothing is left
    assert not scheduled.exists()
    expected = [["demo · needs permission"]]
    if escalated:
        expected.append(["pager", "Still waiting: demo · needs permission"])
    assert calls(log) == expected
    last = deliveries(state_dir)[-1]
    assert last["channel"] == "pager"
    if escalated:
        assert (last["result"], last["detail"]) == ("sent", "escalated after 0.3s: record exited 0")
    else:
        assert (last["result"], last["detail"]) == (
            "skipped",
            "escalation after 0.3s: no longer waiting",
        )


def test_escalation_can_be_updated_when_the_episode_ends(state_dir: Path, tmp_path: Path) -> None:
    with ntfy_receiver() as rx:
        prog, _ = recorder(tmp_path)
        write_config(
            f'[channels.cmd]\ntype = "command"\nargv = ["{prog}"]\n'
            f'[channels.phone]\ntype = "ntfy"\nurl = "{rx.url}/t"\n'
            '[[rules]]\nwhen = ["permission"]\nchannels = ["cmd"]\n'
            'escalate_after_s = 0.1\nescalate_to = ["phone"]\n'
        )
        job = make_job(state_dir, [intent()])
        write_snapshot(state_dir, "attention", "s1:permission:1")
        sender.run_job(job, str(state_dir))
        sender.serve(str(state_dir), poll_s=0.02)  # the escalation, once due
        resolved = intent(
            "resolved", reason="permission", duration_ms=3000, episode="s1:permission:1"
        )
        sender.run_job(make_job(state_dir, [resolved]), str(state_dir))
        titles = [(m["title"], m["sequence_id"]) for m in rx.messages]
    seq = deliver.sequence_id("s1:permission:1")
    assert titles == [
        ("Still waiting: demo · needs permission", seq),
        ("demo · permission handled", seq),
    ]


# -- verify before paging (issue 10) ------------------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "kill"),
    [("permission-esc.jsonl", False), ("permission-approved-running.jsonl", True)],
    ids=["escaped-in-the-terminal", "process-killed"],
)
def test_escalation_verifies_before_paging_and_stops_waiting_at_once(
    state_dir: Path, tmp_path: Path, fixture: str, kill: bool
) -> None:
    from tests.test_reconcile import SID, Session

    prog, log = recorder(tmp_path)
    s = Session(tmp_path, state_dir, fixture)
    snap = s.snapshot
    if kill:  # kill -9 of the client at the dialog: no hook ever says so
        dead = subprocess.Popen(["true"])
        dead.wait()
        snap["pid"] = dead.pid
        with store.Locked(str(state_dir)) as st:
            st.write_session(snap)
    _escalating_config(prog, 30)
    episode = intent(session_id=SID, episode=snap["episode"])
    job = make_job(state_dir, [episode])
    sender.run_job(job, str(state_dir))  # the alert; the escalation waits in outbox/
    started = time.monotonic()
    sender.serve(str(state_dir), poll_s=0.02)
    assert time.monotonic() - started < 5  # not 30 s: the first look ended the wait
    assert calls(log) == [["demo · needs permission"]]  # the alert, never the escalation
    last = deliveries(state_dir)[-1]
    assert (last["channel"], last["result"]) == ("pager", "skipped")
    outcome = "process_gone" if kill else "rejected"
    assert [r["outcome"] for r in s.records() if r["event"] == "Reconciled"] == [outcome]


def test_escalation_still_pages_while_the_dialog_is_open(state_dir: Path, tmp_path: Path) -> None:
    from tests.test_reconcile import SID, Session

    prog, log = recorder(tmp_path)
    s = Session(tmp_path, state_dir, "permission-approved-running.jsonl")
    _escalating_config(prog, 0.3)
    job = make_job(state_dir, [intent(session_id=SID, episode=s.snapshot["episode"])])
    sender.run_job(job, str(state_dir))
    # Pages once due; the dialog stays open, so without watch_s=None it would keep watching it.
    sender.serve(str(state_dir), poll_s=0.02, watch_s=None)
    assert calls(log) == [
        ["demo · needs permission"],
        ["pager", "Still waiting: demo · needs permission"],
    ]


def test_an_answered_escalation_frees_the_sender_at_once(state_dir: Path, tmp_path: Path) -> None:
    prog, log = recorder(tmp_path)
    write_config(
        f'[channels.cmd]\ntype = "command"\nargv = ["{prog}", "{{title}}"]\n'
        f'[channels.pager]\ntype = "command"\nargv = ["{prog}", "pager"]\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["cmd"]\n'
        'escalate_after_s = 3600\nescalate_to = ["pager"]\n'
    )
    sessions = [f"esc-{i}" for i in range(10)]
    run_hooks([hook_payload("PermissionRequest-Bash", s) for s in sessions])
    assert wait_until(lambda: len(calls(log)) == 10, 15)
    (pid,) = wait_until(lambda: senders(state_dir), 5)  # one process waits for all ten
    status = Path(f"/proc/{pid}/status").read_text()
    ignored = int(next(ln for ln in status.splitlines() if ln.startswith("SigIgn:")).split()[1], 16)
    assert not ignored & (1 << 14), "the sender inherited the hook's ignored SIGTERM"  # L1
    run_hooks([hook_payload("PostToolUse-Bash", s) for s in sessions])  # every one answered
    started = time.monotonic()
    assert wait_until(lambda: not senders(state_dir), 5), "a sender still sleeps on an escalation"
    assert time.monotonic() - started < 3
    skipped = [d for d in deliveries(state_dir) if d["channel"] == "pager"]
    assert [(d["result"], d["detail"]) for d in skipped] == [
        ("skipped", "escalation after 3600s: no longer waiting")
    ] * 10
    assert not list((state_dir / "outbox").glob("*.json"))
    assert ["pager"] not in calls(log)


# -- the watch over alerts that are out (issue 22) ----------------------------------------------


def test_an_answer_after_the_alert_is_sent_as_handled_by_the_sender_within_2s(
    state_dir: Path, tmp_path: Path
) -> None:
    """The alert is out, no escalation, no reader runs: Esc in the terminal (the transcript says
    so, no hook does) reaches the phone as "handled" within 2 s, sent by the sender itself, and
    the state file says the truth."""
    from lookout import spawn
    from tests.test_reconcile import SID, Session

    with ntfy_receiver() as rx:
        write_config(
            f'[channels.phone]\ntype = "ntfy"\nurl = "{rx.url}/t"\n'
            '[[rules]]\nwhen = ["permission"]\nchannels = ["phone"]\n'
        )
        s = Session(tmp_path, state_dir, "permission-esc.jsonl")
        lines = s.transcript.read_text().splitlines(keepends=True)
        answer = next(i for i, ln in enumerate(lines) if '"tool_result"' in ln)
        s.transcript.write_text("".join(lines[:answer]))  # the dialog is open
        episode = s.snapshot["episode"]
        job = make_job(state_dir, [intent(session_id=SID, episode=episode, project="project")])
        spawn.spawn(str(state_dir), job)  # a real sender, as a hook starts it
        rx.wait_for(1)
        assert senders(state_dir), "the sender left while the alert is out"
        with s.transcript.open("a") as f:
            f.write("".join(lines[answer:]))  # Esc
        answered = time.monotonic()
        rx.wait_for(2, timeout_s=10)
        took = time.monotonic() - answered
        titles = [(m["title"], m["sequence_id"]) for m in rx.messages]
    assert took < 2, took
    seq = deliver.sequence_id(episode)  # the alert, updated in place
    assert titles == [
        ("project · needs permission", seq),
        ("project · permission denied", seq),  # Esc: denied in the terminal
    ], titles
    assert s.snapshot["status"] != "attention"
    assert [r["outcome"] for r in s.records() if r["event"] == "Reconciled"] == ["rejected"]
    assert wait_until(lambda: not senders(state_dir), 5), "the sender stays after the update"


def test_the_update_goes_out_from_the_senders_environment_not_a_readers(
    state_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader run from a shell without the desktop (`lookout status` over SSH) may be the one
    that notices the answer; the update still goes out from the sender, which has the
    environment of the session that raised the alert (its D-Bus address, say)."""
    from lookout import spawn
    from tests.test_reconcile import SID, Session

    log = tmp_path / "sent.log"
    prog = tmp_path / "record-env"
    prog.write_text(f'#!/bin/sh\necho "$WHERE $1" >> {log}\n')
    prog.chmod(0o755)
    write_config(
        f'[channels.cmd]\ntype = "command"\nargv = ["{prog}", "{{title}}"]\n'
        '[[rules]]\nwhen = ["permission", "resolved"]\nchannels = ["cmd"]\n'
    )
    s = Session(tmp_path, state_dir, "permission-esc.jsonl")
    lines = s.transcript.read_text().splitlines(keepends=True)
    answer = next(i for i, ln in enumerate(lines) if '"tool_result"' in ln)
    s.transcript.write_text("".join(lines[:answer]))
    job = make_job(state_dir, [intent(session_id=SID, episode=s.snapshot["episode"])])
    monkeypatch.setenv("WHERE", "desktop")
    spawn.spawn(str(state_dir), job)
    # The alert is out before the answer comes (it was not awaited: on a loaded machine the
    # answer came first, and what went out was the dialog's alert racing its update).
    wait_for(lambda: log.exists() and log.read_text().endswith("\n"), 60, "the alert")
    with s.transcript.open("a") as f:
        f.write("".join(lines[answer:]))  # Esc
    reader = subprocess.run(
        [sys.executable, "-m", "lookout", "status"],
        env={**os.environ, "WHERE": "ssh"},
        capture_output=True,
        timeout=60,
    )
    assert reader.returncode == 0, reader.stderr
    wait_for(lambda: len(log.read_text().splitlines()) >= 2, 60, "the update")
    assert log.read_text().splitlines() == [
        "desktop demo · needs permission",
        "desktop project · permission denied",
    ]
