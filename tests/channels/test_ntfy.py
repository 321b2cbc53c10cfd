"""The ntfy channel's answering side (issue 40) against the loopback ntfy double
(tests/ntfy_api.py): the actions an alert carries, the 4,096-byte limit, the outcome that
replaces it, the keys only the user's own file may set, and what `channel add`, `check-config`
and `doctor` say about who can press its buttons."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from lookout.channels import ntfy, registry
from lookout.commands.main import main
from lookout.config import check, files
from tests.helpers import write_config
from tests.ntfy_api import LIMIT, NtfyServer

TOKEN = "tk_ownertoken0123456789abcdefghij"


def channel(raw: dict[str, Any]) -> dict[str, Any]:
    return files.validate({"channels": {"phone": raw}})["channels"]["phone"]


def alert(**extra: Any) -> dict[str, Any]:
    return {"title": "demo · needs permission", "body": "Bash: ls", "kind": "permission",
            "intent": {}, "values": {}, "update": False, **extra}  # fmt: skip


BUTTONS = [("Allow", "tokA"), ("Deny", "tokD")]


def test_a_request_alert_carries_allow_deny_and_show_all_as_ntfys_actions() -> None:
    with NtfyServer() as srv:
        ch = channel({"type": "ntfy", "url": f"{srv.url}/alerts", "answers": True})
        link = "https://lookout.example.net/r/abc"
        msg = alert(buttons=BUTTONS, reply_url=f"{srv.url}/alerts-r", intent={"url": link},
                    sequence_id="lookout-1")  # fmt: skip
        result, detail, ref = registry.send(ch, msg, 5)
        assert (result, ref) == ("sent", "lookout-1") and detail.endswith("with answer buttons")
        (sent,) = srv.on("alerts")
        assert sent["actions"] == [
            {"action": "http", "label": "Allow", "url": f"{srv.url}/alerts-r", "method": "POST",
             "body": "lookout-press:tokA", "clear": True},
            {"action": "http", "label": "Deny", "url": f"{srv.url}/alerts-r", "method": "POST",
             "body": "lookout-press:tokD", "clear": True},
            {"action": "view", "label": "Show all", "url": link, "clear": False},
        ]  # fmt: skip


def test_a_question_whose_options_do_not_all_fit_offers_none_of_them() -> None:
    with NtfyServer() as srv:
        ch = channel({"type": "ntfy", "url": f"{srv.url}/alerts", "answers": True})
        picks = [("Red", "t1"), ("Blue", "t2"), ("Deny", "t3")]
        msg = alert(buttons=picks, reply_url=f"{srv.url}/r", intent={"url": "https://x.test/r"})
        registry.send(ch, msg, 5)
        assert [a["label"] for a in srv.on("alerts")[0]["actions"]] == ["Deny", "Show all"]
        registry.send(ch, alert(buttons=picks, reply_url=f"{srv.url}/r"), 5)  # no card: room
        assert [a["label"] for a in srv.on("alerts")[1]["actions"]] == ["Red", "Blue", "Deny"]


def test_a_message_is_cut_to_4096_bytes_of_utf8_never_an_attachment() -> None:
    with NtfyServer() as srv:
        ch = channel({"type": "ntfy", "url": f"{srv.url}/alerts"})
        body = "é" * 3000  # 6000 bytes, 3000 characters
        assert registry.send(ch, alert(body=body), 5)[0] == "sent"
        (sent,) = srv.on("alerts")
        assert "attachment" not in sent
        size = len(sent["title"].encode()) + len(sent["message"].encode())
        assert LIMIT - 4 <= size <= LIMIT and sent["message"].endswith("é…")


def test_the_outcome_replaces_the_alert_without_actions_with_the_token() -> None:
    with NtfyServer(token=TOKEN) as srv:
        ch = channel({"type": "ntfy", "url": f"{srv.url}/alerts", "token": TOKEN})
        registry.send(ch, alert(buttons=BUTTONS, reply_url=f"{srv.url}/r"), 5)
        ref = srv.on("alerts")[0]["sequence_id"]
        assert ref.startswith("lookout-")  # an alert with buttons always gets one
        assert ntfy.replace(ch, ref, "demo", "Bash: ls\n\nAllowed", 5)[0] == "sent"
        (shown,) = srv.shown("alerts")
        assert (shown["message"], shown.get("actions")) == ("Bash: ls\n\nAllowed", None)
        assert shown["priority"] == 2  # replacing it does not buzz the phone again
        bad = channel({"type": "ntfy", "url": f"{srv.url}/alerts", "token": "tk_wrong"})
        result, detail, _ = registry.send(bad, alert(), 5)
        assert (result, detail) == ("failed", "HTTP 403: forbidden (code 40301)")


def test_only_the_users_own_file_makes_a_channel_answer() -> None:
    user = {"channels": {"phone": {"type": "ntfy", "url": "https://n.example/t", "answers": True}}}
    for over in (
        {"channels": {"phone": {"url": "https://evil.example/t"}}},  # redirect the alerts
        {"channels": {"phone": {"reply_topic": "mine"}}},  # or the presses
        {"channels": {"pager": {"type": "ntfy", "url": "https://n.example/u", "answers": True}}},
    ):
        merged = json.loads(json.dumps(user))
        for name, table in over["channels"].items():
            merged["channels"].setdefault(name, {}).update(table)
        with pytest.raises(check.ConfigError) as err:
            files.validate(merged, "config.toml", over, "proj/.claude/lookout.toml")
        assert "read only from your own config file" in str(err.value.errors)
    # Without answers a project file may still change a channel it is trusted for.
    plain = {"channels": {"phone": {"type": "ntfy", "url": "https://n.example/t"}}}
    over = {"channels": {"phone": {"tags": ["x"]}}}
    files.validate(plain, "config.toml", over, "proj/.claude/lookout.toml")


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ({"answers": "yes"}, "channels.phone.answers: expected true or false, got string"),
        ({"reply_topic": "a/b"}, "channels.phone.reply_topic: expected a topic of letters"),
    ],
)
def test_bad_answer_keys_are_config_errors(raw: dict[str, Any], problem: str) -> None:
    with pytest.raises(check.ConfigError) as err:
        channel({"type": "ntfy", "url": "https://n.example/t", **raw})
    assert problem in err.value.errors[0]


def test_the_reply_topic_is_made_once_and_kept(state_dir: Path) -> None:
    ch = channel({"type": "ntfy", "url": "https://n.example/" + "t" * 64, "answers": True})
    first = ntfy.reply_topic(str(state_dir), "phone", ch)
    assert first == ntfy.reply_topic(str(state_dir), "phone", ch)
    assert len(first) == 64 and ntfy.topic_problem(first) is None
    assert first != ntfy.reply_topic(str(state_dir), "pager", ch)
    assert ntfy.reply_topic(str(state_dir), "phone", {**ch, "reply_topic": "mine"}) == "mine"


def test_channel_add_answers_says_who_can_press(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["channel", "add", "phone", "--type", "ntfy", "--url", "https://ntfy.sh/s3cr3t-t0pic",
            "--answers"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Anyone who can read the alert topic can press its buttons" in out
    assert "the public ntfy.sh" in out
    assert main(["channel", "add", "quiet", "--type", "ntfy", "--url", "https://n.example/t"]) == 0
    assert "press" not in capsys.readouterr().out
    path = Path(files.paths.config_path())
    tables = tomllib.loads(path.read_text())["channels"]
    assert tables["phone"]["answers"] is True and "answers" not in tables["quiet"]


def test_check_config_shows_the_reply_topic_and_warns_on_ntfy_sh(
    capsys: pytest.CaptureFixture[str], state_dir: Path
) -> None:
    write_config(
        '[remote]\nenabled = true\n[channels.phone]\ntype = "ntfy"\n'
        'url = "https://ntfy.sh/s3cr3t-t0pic"\nanswers = true\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["phone"]\n'
    )
    assert main(["check-config"]) == 0
    out = capsys.readouterr().out
    suffix = json.loads((state_dir / ntfy.REPLY_TOPICS).read_text())["phone"]
    assert f"the reply topic 's3cr3t-t0pic-{suffix}' on https://ntfy.sh/" in out
    assert "Anyone who can read the alert topic can press its buttons" in out
    assert "channels.phone.url: the public ntfy.sh" in out


@pytest.mark.parametrize("open_reply", [True, False])
def test_doctor_probes_whether_the_reply_topic_takes_anonymous_posts(
    capsys: pytest.CaptureFixture[str], state_dir: Path, open_reply: bool
) -> None:
    with NtfyServer(token=TOKEN) as srv:
        ch = channel({"type": "ntfy", "url": f"{srv.url}/alerts", "answers": True})
        reply = ntfy.reply_topic(str(state_dir), "phone", ch)
        srv.open_topics = {reply} if open_reply else set()
        write_config(
            f'[remote]\nenabled = true\n[channels.phone]\ntype = "ntfy"\n'
            f'url = "{srv.url}/alerts"\nanswers = true\ntoken = "{TOKEN}"\n'
            '[[rules]]\nwhen = ["permission"]\nchannels = ["phone"]\n'
        )
        main(["doctor", "--json"])
        doc = json.loads(capsys.readouterr().out)
        said = [(c["status"], c["message"]) for c in doc["checks"] if "reply topic" in c["message"]]
        if open_reply:
            assert said == [("warn", "ntfy's reply topic accepts anonymous posts: anyone"
                             " who knows its name can post to it (a press still needs a token"
                             " from the alert)")]  # fmt: skip
            assert srv.on(reply)[0]["message"] == ntfy.PROBE  # the probe, unauthenticated
            assert "Authorization" not in srv.calls[-1][2]
        else:
            assert said == [("ok", "ntfy's reply topic refuses anonymous posts (HTTP 403)")]


def test_check_config_says_answers_needs_remote(capsys: pytest.CaptureFixture[str]) -> None:
    write_config(
        '[channels.phone]\ntype = "ntfy"\nurl = "https://n.example/t"\nanswers = true\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["phone"]\n'
    )
    assert main(["check-config"]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [
        "warning: channels.phone.answers: [remote] is off: its alerts carry no buttons"
    ]
