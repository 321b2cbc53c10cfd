"""ntfy's buttons (issue 40), through the real processes: the deciding hook waits, the recording
hook raises the alert, the detached sender publishes it to a loopback ntfy double
(tests/ntfy_api.py) and the detached subscriber reads the reply topic's JSON stream; a press is
what the phone's app does for an `http` action (the double's `press`)."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout import store
from lookout.channels import ntfy as channel
from lookout.remote import requests
from lookout.surfaces import ntfy as subscriber
from tests.helpers import payload, wait_for, write_config
from tests.ntfy_api import NtfyServer
from tests.remote.test_decide import events, finish, record_hook, start, waiting

pytestmark = pytest.mark.real  # real sender / subscriber processes and hooks: not --fast

TOPIC = "alerts-7f3a9c"
TOKEN = "tk_ownertoken0123456789abcdefghij"


@pytest.fixture
def srv() -> Iterator[NtfyServer]:
    with NtfyServer() as double:
        yield double


def configure(srv: NtfyServer, extra: str = "", remote: str = "") -> None:
    write_config(
        f"""
[remote]
enabled = true
wait_s = 60
{remote}
[channels.phone]
type = "ntfy"
url = "{srv.url}/{TOPIC}"
answers = true
content = "full"
{extra}
[[rules]]
when = ["permission", "question", "done"]
channels = ["phone"]
"""
    )


def ask(
    srv: NtfyServer, state_dir: Path, body: dict[str, Any] | None = None
) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """The deciding hook waits, the recording hook alerts: (hook, request, the alert)."""
    body = body or payload("PermissionRequest-Bash")
    deciding = start(body)
    rec = waiting(state_dir)
    record_hook("permission_request.py", body)
    wait_for(lambda: srv.on(TOPIC), 10)
    return deciding, rec, srv.on(TOPIC)[0]


def gone(state_dir: Path) -> bool:
    fd = store.try_lock(str(state_dir / subscriber.LOCK))
    if fd is None:
        return False
    os.close(fd)
    return True


def labels(alert: dict[str, Any]) -> list[str]:
    return [a["label"] for a in alert.get("actions") or []]


def reply_topic(state_dir: Path) -> str:
    table = json.loads((state_dir / channel.REPLY_TOPICS).read_text())
    return f"{TOPIC}-{table['phone']}"


def test_allow_from_ntfy_answers_once_and_the_outcome_replaces_the_alert(
    srv: NtfyServer, state_dir: Path
) -> None:
    configure(srv)
    deciding, rec, alert = ask(srv, state_dir)
    assert alert["title"] == "demo · needs permission"
    assert alert["message"] == "Bash: touch t.txt\ndescription: mock-requested command"
    assert labels(alert) == ["Allow", "Deny"]  # no Show all: [remote] url is not set
    reply = reply_topic(state_dir)
    for action in alert["actions"]:
        assert action["action"] == "http" and action["method"] == "POST"
        assert action["url"] == f"{srv.url}/{reply}"  # the same server, the reply topic
        assert action["body"].startswith(channel.PRESS_PREFIX)
        assert rec["nonce"] not in action["body"]  # a press token, never the nonce
        assert "headers" not in action  # no credential for whoever reads the topic
    assert alert["sequence_id"]

    assert srv.press(alert["actions"][0]) == 200
    out = json.loads(finish(deciding))
    assert out["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
    wait_for(lambda: len(srv.on(TOPIC)) >= 2, 10)
    (shown,) = srv.shown(TOPIC)  # replaced in place: one notification on the phone
    assert shown["sequence_id"] == alert["sequence_id"]
    assert shown["message"].endswith("\n\nAllowed by ntfy channel phone")
    assert "actions" not in shown  # nothing left to press
    remote = [e["remote"] for e in events(state_dir) if e.get("event") == "RemoteDecision"]
    assert [(r["decision"], r["source"]) for r in remote] == [("allow", "ntfy")]
    # The same press again (a replay), or the other button: nothing changes.
    assert srv.press(alert["actions"][1]) == 200
    lines = state_dir / store.DELIVERIES
    wait_for(lambda: '"update":true' in lines.read_text(), 10)  # the rule's "handled" update
    update = [json.loads(x) for x in lines.read_text().splitlines() if '"update":true' in x]
    assert [(u["result"], u["detail"]) for u in update] == [
        ("skipped", "replaced by its request's outcome")
    ]
    wait_for(lambda: gone(state_dir), 10)  # nothing waits: the subscriber left
    now = requests.load(str(state_dir), rec["id"])
    assert now is not None and now["status"] == requests.ALLOWED


def test_foreign_forged_replayed_and_garbage_presses_change_nothing(
    srv: NtfyServer, state_dir: Path
) -> None:
    configure(srv)
    deciding, rec, alert = ask(srv, state_dir)
    reply = reply_topic(state_dir)
    allow, deny = alert["actions"]
    wait_for(lambda: srv.streams >= 1, 10)
    for body in (
        channel.PRESS_PREFIX + rec["nonce"],  # the nonce is no token
        channel.PRESS_PREFIX + "A" * 22,  # a guessed token
        "garbage \x1b[31m",
        "",
    ):
        assert srv.publish(reply, body) == 200
    wait_for(lambda: (state_dir / "errors.log").exists(), 10)
    wait_for(lambda: "no such request" in (state_dir / "errors.log").read_text(), 10)
    now = requests.load(str(state_dir), rec["id"])
    assert now is not None and now["status"] == requests.PENDING
    assert labels(srv.shown(TOPIC)[0]) == ["Allow", "Deny"]

    assert srv.press(deny) == 200
    out = json.loads(finish(deciding))["hookSpecificOutput"]["decision"]
    assert out == {"behavior": "deny", "message": "Denied from lookout by ntfy channel phone."}
    wait_for(lambda: gone(state_dir), 10)
    # Replayed once nothing waits: the next request's subscriber reads them (since its alert
    # went out, and before), and they answer neither the old request nor the new one.
    srv.press(allow)
    body = {**payload("PermissionRequest-Bash"), "session_id": "another-session"}
    again = start(body)
    fresh = waiting(state_dir)
    record_hook("permission_request.py", body)
    wait_for(lambda: len(srv.shown(TOPIC)) == 2, 10)
    srv.press(allow)
    wait_for(lambda: srv.streams >= 2, 10)
    old, new = (requests.load(str(state_dir), r["id"]) for r in (rec, fresh))
    assert old is not None and old["status"] == requests.DENIED
    assert new is not None and new["status"] == requests.PENDING
    again.send_signal(signal.SIGTERM)
    assert finish(again) == b""
    wait_for(lambda: gone(state_dir), 10)
    assert not [e for e in events(state_dir) if e.get("event") == "RemoteDecision"][1:]


def test_a_two_line_command_gets_no_allow_and_show_all_opens_its_card(
    srv: NtfyServer, state_dir: Path
) -> None:
    configure(srv, remote='url = "https://lookout.example.net"')
    body = {**payload("PermissionRequest-Bash"), "tool_input": {"command": "ls\nrm -rf x"}}
    deciding, _rec, alert = ask(srv, state_dir, body)
    assert labels(alert) == ["Deny", "Show all"]
    show = alert["actions"][1]
    assert show["action"] == "view" and show["url"].startswith("https://lookout.example.net/")
    deciding.send_signal(signal.SIGTERM)  # answered in the terminal
    assert finish(deciding) == b""
    wait_for(lambda: "actions" not in srv.shown(TOPIC)[0], 5)
    assert srv.shown(TOPIC)[0]["message"].endswith("\n\nDenied in the terminal")
    wait_for(lambda: gone(state_dir), 10)


def test_a_server_with_access_control_gets_the_token_and_an_old_one_a_new_message(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOKOUT_NTFY_TOKEN", TOKEN)
    with NtfyServer(token=TOKEN, in_place=False) as srv:
        configure(srv, extra='token_env = "LOOKOUT_NTFY_TOKEN"')
        deciding, _rec, alert = ask(srv, state_dir)
        wait_for(lambda: srv.streams >= 1, 10)
        assert srv.press(alert["actions"][0]) == 403  # the app has no token for the topic
        assert srv.press(alert["actions"][1], token=TOKEN) == 200
        out = json.loads(finish(deciding))["hookSpecificOutput"]["decision"]
        assert out["behavior"] == "deny"
        wait_for(lambda: len(srv.shown(TOPIC)) == 2, 10)
        first, outcome = srv.shown(TOPIC)  # an older server: the outcome follows the alert
        assert labels(first) == ["Allow", "Deny"] and "actions" not in outcome
        assert outcome["message"].endswith("Denied by ntfy channel phone")
        assert ("GET", f"/{reply_topic(state_dir)}/json") not in srv.refused
        wait_for(lambda: gone(state_dir), 10)


QUESTION = {
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


def test_a_question_alert_sent_before_its_request_gets_its_buttons_when_it_comes(
    srv: NtfyServer, state_dir: Path
) -> None:
    configure(srv)
    asked = {**payload("PreToolUse-Bash"), **QUESTION}
    record_hook("pre_tool_use.py", asked)
    wait_for(lambda: srv.on(TOPIC), 10)
    (alert,) = srv.on(TOPIC)
    assert labels(alert) == []
    body = {k: v for k, v in asked.items() if k != "tool_use_id"}
    deciding = start({**body, "hook_event_name": "PermissionRequest"})
    waiting(state_dir)
    wait_for(lambda: labels(srv.shown(TOPIC)[-1]) == ["Red", "Blue", "Deny"], 10)
    (shown,) = srv.shown(TOPIC)  # the same notification, now with its buttons
    assert shown["sequence_id"] == alert["sequence_id"]
    assert shown["priority"] == 2  # the phone buzzed for the alert already
    srv.press(shown["actions"][1])
    decision = json.loads(finish(deciding))["hookSpecificOutput"]["decision"]
    assert decision["updatedInput"]["answers"] == {"Which colour?": "Blue"}
    wait_for(lambda: "actions" not in srv.shown(TOPIC)[0], 5)
    wait_for(lambda: gone(state_dir), 10)


def test_without_answers_an_alert_carries_no_http_action(srv: NtfyServer, state_dir: Path) -> None:
    configure(srv, remote='url = "https://lookout.example.net"')
    config = Path(os.environ["LOOKOUT_CONFIG"])
    config.write_text(config.read_text().replace("answers = true\n", ""))
    deciding, _rec, alert = ask(srv, state_dir)
    assert [a["action"] for a in alert["actions"]] == ["view"]
    assert not (state_dir / subscriber.TABLE).exists()
    deciding.send_signal(signal.SIGTERM)
    assert finish(deciding) == b""


def test_a_flood_on_the_reply_topic_is_logged_at_most_once_a_second_with_a_count(
    srv: NtfyServer, state_dir: Path
) -> None:
    configure(srv)
    deciding, rec, alert = ask(srv, state_dir)
    reply = reply_topic(state_dir)
    wait_for(lambda: srv.streams >= 1, 10)
    n = 200
    started = time.monotonic()
    for i in range(n):
        srv.publish(reply, f"{channel.PRESS_PREFIX}forged{i}")
    log = state_dir / "errors.log"

    def counted() -> tuple[int, int]:
        lines = [x for x in log.read_text().splitlines() if "ntfy subscriber:" in x]
        total = 0
        for line in lines:
            held = re.search(r"(\d+) press(?:es)? ignored in [\d.]+ s, the last: ", line)
            total += int(held.group(1)) if held else 1
        return total, len(lines)

    wait_for(lambda: log.exists() and counted()[0] == n, 30, "every forged press counted")
    took = time.monotonic() - started
    assert counted()[1] <= 2 + took, (counted(), took)  # a line a second at most, not a press
    now = requests.load(str(state_dir), rec["id"])
    assert now is not None and now["status"] == requests.PENDING
    assert srv.press(alert["actions"][0]) == 200  # the owner's press still answers
    out = json.loads(finish(deciding))["hookSpecificOutput"]["decision"]
    assert out == {"behavior": "allow"}
