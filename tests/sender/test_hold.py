"""Grace and digests end to end: the real hook (hooks/event.py), the real detached sender and a
real channel receiver (tests/receivers.py) on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lookout import store
from lookout.notify import rules
from lookout.notify.outbox import LATER
from tests.helpers import PAYLOADS, ROOT, build_intent, calls, recorder, wait_for, write_config
from tests.receivers import ntfy_receiver, webhook_receiver

ATTENTION = '["permission", "question", "plan"]'


def _hook(name: str, session: str, cwd: str, **fields: Any) -> None:
    body = json.loads((PAYLOADS / f"{name}.json").read_text())
    body.update(session_id=session, cwd=cwd, transcript_path=f"/nonexistent/{session}.jsonl")
    body.update(fields)
    # Started like Claude Code starts it: SIGTERM ignored, the hook's own interpreter flags.
    argv = ["/bin/sh", "-c", f"trap '' TERM; exec {sys.executable} -I -S {ROOT}/hooks/event.py"]
    done = subprocess.run(
        argv, input=json.dumps(body).encode(), capture_output=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def _tool(kind: str, command: str) -> tuple[str, dict[str, Any]]:
    if kind == "question":
        return "AskUserQuestion", {"questions": [{"question": "Which database?", "options": []}]}
    if kind == "plan":
        return "ExitPlanMode", {"plan": "1. do it"}
    return "Bash", {"command": command}


def ask(session: str, project: str, kind: str = "permission", command: str = "npm test") -> None:
    tool, tool_input = _tool(kind, command)
    _hook("PermissionRequest-Bash", session, f"/w/{project}", tool_name=tool, tool_input=tool_input)


def answer(session: str, project: str, kind: str = "permission", command: str = "npm test") -> None:
    tool, tool_input = _tool(kind, command)
    _hook("PostToolUse-Bash", session, f"/w/{project}", tool_name=tool, tool_input=tool_input)


def lines(state_dir: Path) -> list[dict[str, Any]]:
    path = state_dir / store.DELIVERIES
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def _sender_running(state_dir: Path) -> bool:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"lookout.sender.sender" in b" ".join(argv) and any(
            a.startswith(str(state_dir).encode()) for a in argv
        ):
            return True
    return False


def settled(state_dir: Path) -> None:
    """The sender exited: nothing due, waiting or in flight is left."""
    wait_for(lambda: not _sender_running(state_dir), what="the sender to exit")
    assert not list((state_dir / "outbox").glob("*.json"))


def held(state_dir: Path) -> list[Path]:
    return sorted((state_dir / "outbox").glob(f"{LATER}*.json"))


def fast_forward(state_dir: Path) -> None:
    """Make the held files due now, as if their time had passed: the sender reads the due time
    from the name (outbox.due_ms), so a test need not wait out a window it cannot shorten
    without racing the hooks."""
    for path in held(state_dir):
        rest = path.name[len(LATER) :].split("-", 1)[1]
        path.rename(path.with_name(f"{LATER}{0:013d}-{rest}"))


def explain(session: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "lookout", "explain", session],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=os.environ,
    )
    assert done.returncode == 0, done.stderr
    return " ".join(done.stdout.split())  # columns padded: compare words


# -- grace_s -------------------------------------------------------------------------------------


def test_grace_drops_the_phone_alert_answered_at_the_desk(state_dir: Path, tmp_path: Path) -> None:
    prog, log = recorder(tmp_path)
    with ntfy_receiver() as rx:
        write_config(
            f'[channels.desk]\ntype = "command"\nargv = ["{prog}", "{{title}}"]\n'
            f'[channels.phone]\ntype = "ntfy"\nurl = "{rx.url}/t"\n'
            f'[[rules]]\nwhen = {ATTENTION}\nchannels = ["desk", "phone"]\ngrace_s = 600\n'
        )
        ask("g1", "api")
        wait_for(lambda: calls(log) == [["api · needs permission"]], what="the desk alert")
        wait_for(lambda: held(state_dir), what="the phone's alert held in the outbox")
        answer("g1", "api")
        settled(state_dir)  # long before 600 s: the answer ended the hold at once
        assert rx.messages == []
    phone = [x for x in lines(state_dir) if x["channel"] == "phone"]
    assert [(x["result"], x["rule"], x["reason"], x["detail"]) for x in phone] == [
        ("skipped", 0, "grace_s", "rules[0]: grace_s = 600: answered within grace")
    ]
    out = explain("g1")
    assert "phone skipped rules[0]: grace_s = 600: answered within grace" in out


def test_grace_rechecks_a_channel_that_cannot_update(state_dir: Path) -> None:
    # A webhook gets no resolve (nothing to update): the sender's own re-check drops the alert.
    with webhook_receiver() as rx:
        write_config(
            f'[channels.team]\ntype = "webhook"\nurl = "{rx.url}/hook"\n'
            f'[[rules]]\nwhen = {ATTENTION}\nchannels = ["team"]\ngrace_s = 600\n'
        )
        ask("g2", "api")
        wait_for(lambda: held(state_dir), what="the alert held in the outbox")
        answer("g2", "api")
        settled(state_dir)
        assert rx.requests == []
    assert [(x["result"], x["reason"]) for x in lines(state_dir)] == [("skipped", "grace_s")]


def test_grace_sends_what_still_waits_and_updates_it(state_dir: Path) -> None:
    with ntfy_receiver() as rx:
        write_config(
            f'[channels.phone]\ntype = "ntfy"\nurl = "{rx.url}/t"\n'
            f'[[rules]]\nwhen = {ATTENTION}\nchannels = ["phone"]\ngrace_s = 600\n'
        )
        ask("g3", "api")
        wait_for(lambda: held(state_dir), what="the alert held in the outbox")
        fast_forward(state_dir)
        wait_for(lambda: rx.messages, what="the alert once grace ended")
        answer("g3", "api")
        wait_for(lambda: len(rx.messages) == 2, what="the update")
        settled(state_dir)
        sent = [(m["title"], m["sequence_id"]) for m in rx.messages]
    assert sent[0][0] == "api · needs permission"
    assert sent[1] == ("api · permission allowed", sent[0][1])  # the tool ran
    first = next(x for x in lines(state_dir) if x["channel"] == "phone")
    assert first["result"] == "sent"
    assert first["detail"].startswith("after grace_s = 600: ")


# -- digest_s ------------------------------------------------------------------------------------


def test_digest_lists_every_session_in_one_message(state_dir: Path) -> None:
    with webhook_receiver() as rx:
        write_config(
            f'[channels.team]\ntype = "webhook"\nurl = "{rx.url}/hook"\n'
            f'[[rules]]\nwhen = {ATTENTION}\nchannels = ["team"]\ndigest_s = 600\n'
        )
        ask("d-api", "api")
        ask("d-web", "web", "question")
        ask("d-demo", "demo", "plan")
        merged = lambda: [x for x in lines(state_dir) if x["result"] == "merged"]  # noqa: E731
        wait_for(lambda: len(merged()) == 3, what="three alerts merged")
        assert len(held(state_dir)) == 1  # one digest for the channel
        fast_forward(state_dir)
        wait_for(lambda: rx.requests, what="the digest")
        settled(state_dir)
        bodies = [r.json() for r in rx.requests]
    assert [(b["title"], b["message"]) for b in bodies] == [
        ("3 sessions need you", "api (permission: npm test), web (question), demo (plan)")
    ]
    assert [(x["session_id"], x["detail"]) for x in merged()] == [
        ("d-api", "rules[0]: digest_s = 600: opened a digest"),
        ("d-web", "rules[0]: digest_s = 600: merged into the digest with 1 other alert(s)"),
        ("d-demo", "rules[0]: digest_s = 600: merged into the digest with 2 other alert(s)"),
    ]
    sent = [x for x in lines(state_dir) if x["result"] == "sent"]
    assert sorted(x["session_id"] for x in sent) == ["d-api", "d-demo", "d-web"]
    assert all(x["detail"].startswith("a digest of 3: ") for x in sent)
    assert "team merged rules[0]: digest_s = 600: merged into" in explain("d-web")


def test_digest_drops_the_answered_and_replaces_itself_on_resolve(state_dir: Path) -> None:
    with ntfy_receiver() as rx:
        write_config(
            f'[channels.phone]\ntype = "ntfy"\nurl = "{rx.url}/t"\n'
            f'[[rules]]\nwhen = {ATTENTION}\nchannels = ["phone"]\ndigest_s = 600\n'
        )
        ask("r-api", "api")
        ask("r-web", "web", "question")
        ask("r-demo", "demo", "plan")
        answer("r-web", "web", "question")  # before the digest: never in it
        wait_for(
            lambda: any(x["result"] == "skipped" for x in lines(state_dir)),
            what="web dropped from the digest",
        )
        fast_forward(state_dir)
        wait_for(lambda: rx.messages, what="the digest")
        answer("r-api", "api")
        wait_for(lambda: len(rx.messages) == 2, what="the digest replaced")
        answer("r-demo", "demo", "plan")
        wait_for(lambda: len(rx.messages) == 3, what="the digest handled")
        settled(state_dir)
        got = [(m["title"], m["message"], m["sequence_id"]) for m in rx.messages]
    seq = got[0][2]
    assert got == [
        ("2 sessions need you", "api (permission: npm test), demo (plan)", seq),
        ("1 session needs you", "demo (plan)", seq),
        ("demo · plan handled", got[2][1], seq),
    ]
    web = [x for x in lines(state_dir) if x["session_id"] == "r-web"]
    assert [(x["result"], x["detail"]) for x in web] == [
        ("merged", "rules[0]: digest_s = 600: merged into the digest with 1 other alert(s)"),
        ("skipped", "rules[0]: digest_s = 600: answered before the digest was sent"),
    ]


# -- the decision ---------------------------------------------------------------------------------


def test_grace_holds_only_remote_channels_and_digest_every_channel() -> None:
    from lookout.config import files

    cfg = files.validate(
        {
            "channels": {
                "desk": {"type": "desktop"},
                "phone": {"type": "ntfy", "url": "https://ntfy.sh/t"},
            },
            "rules": [
                {"when": ["permission"], "channels": ["desk", "phone"], "grace_s": 30},
                {"when": ["question"], "channels": ["desk", "phone"], "digest_s": 60},
                {"when": ["done"], "channels": ["phone"], "grace_s": 30},
            ],
        }
    )
    intents = [
        build_intent(k, {"ts_ms": 1, "episode": f"s1:{k}:1" if k != "done" else None}, {})
        for k in ("permission", "question", "done")
    ]
    out, _ = rules.decide(intents, cfg, 1, 0, None)
    got = [(d["channels"], [(h["key"], h["channels"]) for h in d.get("hold", [])]) for d in out]
    assert got == [
        (["desk"], [("grace_s", ["phone"])]),
        ([], [("digest_s", ["desk", "phone"])]),
        (["phone"], []),  # nothing to answer: a `done` is never held
    ]


@pytest.mark.parametrize("key", ["grace_s", "digest_s"])
def test_a_channel_sent_at_once_by_another_rule_is_not_held(key: str) -> None:
    from lookout.config import files

    cfg = files.validate(
        {
            "channels": {"phone": {"type": "ntfy", "url": "https://ntfy.sh/t"}},
            "rules": [
                {"when": ["permission"], "channels": ["phone"], key: 30},
                {"when": ["permission"], "channels": ["phone"]},
            ],
        }
    )
    intent = build_intent("permission", {"ts_ms": 1, "episode": "s1:permission:1"}, {})
    ((d,), _) = rules.decide([intent], cfg, 1, 0, None)
    assert (d["channels"], d.get("hold")) == (["phone"], None)


def test_alerts_from_hooks_at_once_are_each_in_exactly_one_digest(state_dir: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with webhook_receiver() as rx:
        write_config(
            f'[channels.team]\ntype = "webhook"\nurl = "{rx.url}/hook"\n'
            f'[[rules]]\nwhen = {ATTENTION}\nchannels = ["team"]\ndigest_s = 600\n'
        )
        projects = [f"p{i}" for i in range(6)]
        with ThreadPoolExecutor(6) as pool:
            list(pool.map(lambda p: ask(f"c-{p}", p), projects))
        wait_for(
            lambda: len([x for x in lines(state_dir) if x["result"] == "merged"]) == 6,
            what="six alerts merged",
        )
        assert len(held(state_dir)) == 1
        fast_forward(state_dir)
        wait_for(lambda: rx.requests, what="the digest")
        settled(state_dir)
        (body,) = [r.json() for r in rx.requests]
    assert body["title"] == "6 sessions need you"
    listed = body["message"].split(", ")
    assert sorted(listed) == sorted(f"{p} (permission: npm test)" for p in projects)


def test_a_digest_names_each_session_by_its_title() -> None:
    # newuser-3 defect 7: two sessions of project api, titled api-10 and api-85 by the client,
    # both read `api` in the digest.
    from lookout.sender import hold

    items = [
        {"intent": build_intent(kind, {"ts_ms": 1}, {"project": "api", "title": title, **more})}
        for kind, title, more in (
            ("permission", "api-10", {"summary": "npm test"}),
            ("question", "api-85", {}),
            ("plan", "", {"project": "web"}),  # no title: the project names it
        )
    ]
    msg = hold.digest_message(items, "summary", "lookout-digest-x")
    assert msg["body"] == "api-10 (permission: npm test), api-85 (question), web (plan)"
    assert (msg["values"]["session"], msg["values"]["project"]) == (
        "api-10, api-85, web",
        "api, web",
    )
