"""`lookout answer`, through the real entry point, against a real deciding hook."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT, payload, write_config
from tests.remote.test_decide import finish, start, waiting


def lookout(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lookout", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=30,
        check=False,
        env=env,
    )


def test_nothing_waiting() -> None:
    done = lookout("answer")
    assert (done.returncode, done.stdout) == (0, "no permission request is waiting for an answer\n")
    done = lookout("answer", "--json")
    assert json.loads(done.stdout) == {"requests": []}


def test_list_then_allow_by_session_prefix(state_dir: Path) -> None:
    write_config("[remote]\nenabled = true\n")
    p = payload("PermissionRequest-Bash")
    hook = start(p)
    waiting(state_dir)
    listed = lookout("answer")
    assert listed.returncode == 0
    assert listed.stdout.startswith(f"{p['session_id'][:8]}  Bash touch t.txt (session ")
    assert "s left)" in listed.stdout
    (shown,) = json.loads(lookout("answer", "--json").stdout)["requests"]
    assert shown["tool_name"] == "Bash" and shown["status"] == "pending"
    for key in ("id", "nonce", "session_id", "tool_name", "summary", "expires_at"):
        assert shown[key], key
    done = lookout("answer", p["session_id"][:6], "allow")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("allowed: Bash touch t.txt")
    decision = json.loads(finish(hook))["hookSpecificOutput"]["decision"]
    assert decision == {"behavior": "allow"}
    again = lookout("answer", p["session_id"][:6], "deny")
    assert again.returncode == 1
    assert again.stderr == (
        f"error: the last request in '{p['session_id'][:6]}' (Bash) is already answered: allowed\n"
        "hint: lookout answer lists what is still waiting\n"
    )


def test_deny_over_ssh_says_from_where(state_dir: Path) -> None:
    import os

    write_config("[remote]\nenabled = true\n")
    p = payload("PermissionRequest-Bash")
    hook = start(p)
    waiting(state_dir)
    env = {**os.environ, "SSH_CLIENT": "198.51.100.9 52000 22"}
    assert lookout("answer", p["session_id"], "deny", env=env).returncode == 0
    message = json.loads(finish(hook))["hookSpecificOutput"]["decision"]["message"]
    assert message.startswith("Denied from lookout by ") and "(lookout answer)" in message
    rows = [json.loads(x) for x in (state_dir / "events.jsonl").read_text().splitlines()]
    assert rows[-1]["remote"]["source"] == "ssh 198.51.100.9"


def test_user_errors_are_error_and_hint() -> None:
    done = lookout("answer", "nosuchsession", "allow")
    assert done.returncode == 1
    assert done.stderr.startswith("error: no permission request is waiting in session")
    assert "\nhint: " in done.stderr
    done = lookout("answer", "abc")
    assert done.returncode == 1 and done.stderr.startswith("error: say allow or deny")
    assert lookout("answer", "abc", "maybe").returncode == 2  # argparse: not a choice


def test_a_question_takes_one_option_per_question(state_dir: Path) -> None:
    write_config("[remote]\nenabled = true\n")
    p = {
        "session_id": "q-session",
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
    hook = start(p)
    waiting(state_dir)
    assert "options: Red | Blue" in lookout("answer").stdout
    missing = lookout("answer", "q-session", "allow")
    assert missing.returncode == 1 and "asks 1 question(s)" in missing.stderr
    wrong = lookout("answer", "q-session", "allow", "--option", "Green")
    assert wrong.returncode == 1 and "'Green' is not an option" in wrong.stderr
    assert lookout("answer", "q-session", "allow", "--option", "Blue").returncode == 0
    decision = json.loads(finish(hook))["hookSpecificOutput"]["decision"]
    assert decision["updatedInput"]["answers"] == {"Which colour?": "Blue"}
