"""The one answering path of every alert surface: bound to the request shown, taken once."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from lookout.remote import answers, requests
from tests.helpers import payload

QUESTION = {
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
                "options": [{"label": "Red"}, {"label": "Blue"}],
            }
        ]
    },
}


def new(state: Path, name: str = "PermissionRequest-Bash", **kw: Any) -> dict[str, Any]:
    now = int(time.time() * 1000)
    p = QUESTION if name == "question" else payload(name)
    rec = requests.new_record(p, {}, now, 300, False)
    rec["pid"] = os.getpid()  # "the deciding hook" is alive while the test runs
    rec.update(kw)
    requests.save_new(str(state), rec, now)
    return rec


def load(state: Path, rec: dict[str, Any]) -> dict[str, Any]:
    found = requests.load(str(state), rec["id"])
    assert found is not None
    return found


def intent_for(rec: dict[str, Any]) -> dict[str, Any]:
    key = rec["tool_key"]
    return {
        "session_id": rec["session_id"],
        "tool_name": rec["tool_name"],
        "request": [rec["agent_id"], rec["prompt_id"], key],
    }


REMOTE = {"enabled": True, "tools": ["*"]}


def test_an_alert_finds_its_open_request_and_only_when_remote_may_answer(state_dir: Path) -> None:
    rec = new(state_dir)
    found = answers.request_for(str(state_dir), intent_for(rec), REMOTE, wait_s=0)
    assert found is not None and found["nonce"] == rec["nonce"]
    off = answers.request_for(str(state_dir), intent_for(rec), {"enabled": False}, wait_s=0)
    other = answers.request_for(
        str(state_dir), intent_for(rec), {"enabled": True, "tools": ["Edit"]}, wait_s=0
    )
    assert off is None and other is None
    requests.resolve(str(state_dir), rec["id"], requests.ANSWERED_LOCALLY, rec["created_ms"] + 1)
    assert answers.request_for(str(state_dir), intent_for(rec), REMOTE, wait_s=0) is None


def test_answer_names_its_surface_as_the_decisions_source(state_dir: Path) -> None:
    rec = new(state_dir)
    done = answers.answer(
        str(state_dir), rec["id"], rec["nonce"], "allow", surface="desktop", by="the desktop alert"
    )
    assert done["status"] == requests.ALLOWED
    assert done["decision"]["source"] == "desktop"
    assert done["decision"]["by"] == "the desktop alert"
    assert answers.outcome_text(done) == "Allowed by the desktop alert"
    with pytest.raises(requests.Refused) as again:
        answers.answer(str(state_dir), rec["id"], rec["nonce"], "deny", surface="desktop", by="x")
    assert again.value.status == 409  # the second press changes nothing
    assert load(state_dir, rec)["status"] == requests.ALLOWED


def test_a_replaced_request_refuses_the_old_alerts_nonce(state_dir: Path) -> None:
    old = new(state_dir)
    requests.resolve(str(state_dir), old["id"], requests.ANSWERED_LOCALLY, old["created_ms"] + 1)
    fresh = new(state_dir)  # the same call asked again: same id, new nonce
    assert fresh["id"] == old["id"] and fresh["nonce"] != old["nonce"]
    with pytest.raises(requests.Refused) as exc:
        answers.answer(str(state_dir), old["id"], old["nonce"], "allow", surface="desktop", by="x")
    assert exc.value.status == 403
    assert load(state_dir, fresh)["status"] == requests.PENDING


def test_tokens_are_opaque_single_use_and_bound_to_surface_and_scope(state_dir: Path) -> None:
    rec = new(state_dir)
    allow, deny = answers.mint(
        str(state_dir), rec, "telegram", [("allow", None), ("deny", None)], scope="phone"
    )
    assert rec["nonce"] not in allow and len(allow) <= 64 and allow != deny
    table = (state_dir / answers.TOKENS).read_text()
    assert (os.stat(state_dir / answers.TOKENS).st_mode & 0o777) == 0o600
    assert json.loads(table)[allow]["decision"] == "allow"
    for surface, scope in (("home_assistant", "phone"), ("telegram", "other-bot")):
        with pytest.raises(requests.Refused):
            answers.answer_token(str(state_dir), allow, surface=surface, by="x", scope=scope)
    assert load(state_dir, rec)["status"] == requests.PENDING
    done = answers.answer_token(str(state_dir), deny, surface="telegram", by="bob", scope="phone")
    assert done["status"] == requests.DENIED and done["decision"]["source"] == "telegram"
    for token in (deny, allow):  # a replay, or the other button of an answered request
        with pytest.raises(requests.Refused):
            answers.answer_token(str(state_dir), token, surface="telegram", by="x", scope="phone")
    assert load(state_dir, rec)["status"] == requests.DENIED
    assert json.loads((state_dir / answers.TOKENS).read_text()) == {}


def test_a_token_for_an_ended_request_changes_nothing(state_dir: Path) -> None:
    rec = new(state_dir)
    (allow,) = answers.mint(str(state_dir), rec, "telegram", [("allow", None)])
    requests.resolve(str(state_dir), rec["id"], requests.ENDED, rec["created_ms"] + 1)
    with pytest.raises(requests.Refused) as exc:
        answers.answer_token(str(state_dir), allow, surface="telegram", by="x")
    assert exc.value.status == 409
    assert load(state_dir, rec)["status"] == requests.ENDED
    assert answers.outcome_text(load(state_dir, rec)) == "The session ended"


def test_a_question_gets_one_button_per_option(state_dir: Path) -> None:
    rec = new(state_dir, "question")
    picks = answers.choices(rec)
    q = rec["questions"][0]
    assert [p[0] for p in picks] == [*q["options"], "Deny"]
    label, decision, picked = picks[0]
    (token,) = answers.mint(str(state_dir), rec, "telegram", [(decision, picked)])
    done = answers.answer_token(str(state_dir), token, surface="telegram", by="bob")
    assert done["decision"]["answers"] == {q["question"]: label}
