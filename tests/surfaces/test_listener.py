"""One bot for the fleet (issue 42) through the real processes: with `[fleet] hub` named, a host
that is not the hub sends its alerts with buttons that name it and edits them to their outcome,
but never polls the shared bot; the hub takes every press and reply, and sends those for
another host to it (lookout.fleet.hub; here no broker answers, so the hub says so)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from lookout import store
from lookout.surfaces import listener
from lookout.surfaces import telegram as poller
from tests.commands.test_main import lookout
from tests.helpers import lock_free, wait_for, write_config
from tests.remote.test_decide import finish
from tests.surfaces.test_telegram import ask, poller_gone
from tests.telegram_api import BotApi, channel_table

pytestmark = pytest.mark.real

TOKEN = "123456:AAH-test-token-for-the-double"
CHAT, OWNER = 1001, 42
TOK = "A" * 22  # the shape of answers.mint's tokens


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch, state_dir: Path) -> Iterator[BotApi]:
    monkeypatch.setenv("LOOKOUT_TG_TOKEN", TOKEN)
    with BotApi(TOKEN, chats=(CHAT,)) as double:
        yield double
        write_config("# steering off: the poller leaves\n")
        wait_for(lambda: lock_free(state_dir / poller.LOCK), 30, "the poller gone")


def configure(api: BotApi, host: str, hub: str = "hosta", steer: bool = True) -> None:
    write_config(
        f"""
[fleet]
mqtt = "mqtt://127.0.0.1:1"
host = "{host}"
{f'hub = "{hub}"' if hub else ""}
[steer]
enabled = {str(steer).lower()}
[remote]
enabled = true
wait_s = 60
{channel_table(api.url, CHAT, OWNER)}[[rules]]
when = ["permission", "question", "done"]
channels = ["chat"]
"""
    )


def polls(api: BotApi) -> int:
    return sum(1 for _, method, _ in api.calls if method == "getUpdates")


def test_a_host_that_is_not_the_hub_never_polls_yet_edits_its_own_alert(
    api: BotApi, state_dir: Path
) -> None:
    configure(api, host="hostb")
    lookout("status")  # a command starts the poller when it is wanted: here it is not
    assert not (state_dir / store.TELEGRAM_WANTED).exists()
    deciding, _rec, message = ask(api, state_dir)
    mid = message["message_id"]
    buttons = api.buttons(CHAT, mid)
    assert [label for label, _ in buttons] == ["Allow", "Deny"]
    for _, data in buttons:  # the hub routes a press by the host its button names
        assert data.startswith("lk:hostb:") and len(data.encode()) <= 64
    wait_for(lambda: not poller_gone(state_dir), 5)  # it runs: to edit, not to poll
    deciding.send_signal(signal.SIGTERM)  # answered at the terminal
    assert finish(deciding) == b""
    wait_for(lambda: "reply_markup" not in api.messages[(CHAT, mid)], 10)
    assert api.messages[(CHAT, mid)]["text"].endswith("\n\nDenied in the terminal")
    wait_for(lambda: poller_gone(state_dir), 10)
    assert polls(api) == 0
    assert not (state_dir / store.TELEGRAM_WANTED).exists()


def test_the_hub_sends_a_press_of_another_hosts_button_to_that_host(
    api: BotApi, state_dir: Path
) -> None:
    configure(api, host="hosta")
    lookout("status")
    assert (state_dir / store.TELEGRAM_WANTED).exists()
    poller.ensure_poller(str(state_dir))
    errors = state_dir / "errors.log"
    wait_for(lambda: polls(api) > 0 or errors.exists(), 10, "the hub's poller polling")
    assert not errors.exists(), errors.read_text()
    mid = 9000
    api.messages[(CHAT, mid)] = {
        "message_id": mid,
        "from": api.bot,
        "chat": {"id": CHAT, "type": "private"},
        "date": 0,
        "text": "hostb · needs permission\nBash: ls",
    }
    query = api.press(mid, f"lk:hostb:{TOK}", OWNER)
    wait_for(lambda: api.queries[query] is not None, 10, "the press acknowledged")
    said = api.queries[query] or ""
    # No broker answers here: the hub says the press did not reach hostb (never answers it
    # itself, never says "not a lookout button").
    assert said.startswith("Not answered: hostb: cannot reach the broker"), said
    # A reply to hostb's alert goes to hostb too; one to a bot message naming no host is
    # refused with how to name it.
    reply = api.message("go on", OWNER, reply_to=mid)
    wait_for(lambda: api.replies(reply), 15, "the reply's answer")
    (text,) = api.replies(reply)
    assert text.startswith("error: cannot reach the broker at mqtt://127.0.0.1:1"), text
    api.messages[(CHAT, mid + 1)] = {**api.messages[(CHAT, mid)], "message_id": mid + 1}
    api.messages[(CHAT, mid + 1)]["text"] = "needs permission\nBash: ls"
    other = api.message("go on", OWNER, reply_to=mid + 1)
    wait_for(lambda: api.replies(other), 15, "the refusal")
    assert api.replies(other)[0].startswith("error: cannot tell which host sent")
    # The hub named as the others are is the hub itself: its own session, never the broker.
    own = api.message("/stop hosta:nosuch", OWNER)
    wait_for(lambda: api.replies(own), 15, "the hub's own refusal")
    said = api.replies(own)[0]
    assert said.startswith("error: ") and "hosta:" not in said and "broker" not in said, said


def test_the_hub_polls_without_steering_and_a_host_alone_only_with_it(
    api: BotApi, state_dir: Path
) -> None:
    """Any host's buttons may wait at the hub: its poller is wanted with [steer] off too; a host
    with no hub named keeps today's rule (wanted with [steer] on only)."""
    configure(api, host="hosta", steer=False)
    lookout("status")
    assert (state_dir / store.TELEGRAM_WANTED).exists()
    configure(api, host="hosta", hub="", steer=False)
    lookout("status")
    assert not (state_dir / store.TELEGRAM_WANTED).exists()
    configure(api, host="hosta", hub="")
    lookout("status")
    assert (state_dir / store.TELEGRAM_WANTED).exists()
    configure(api, host="hosta", hub="", steer=False)  # and with no [fleet] at all
    config = Path(os.environ["LOOKOUT_CONFIG"])
    config.write_text("[steer]" + config.read_text().split("[steer]", 1)[1])
    assert "[fleet]" not in config.read_text()
    lookout("status")
    assert not (state_dir / store.TELEGRAM_WANTED).exists()


def test_callback_data_names_its_host_within_64_bytes() -> None:
    assert listener.hosted_data("b" * 38, TOK) is not None
    assert listener.hosted_data("b" * 39, TOK) is None  # the alert keeps the host-less form
    assert listener.split_hosted(f"hostb:{TOK}") == ("hostb", TOK)
    assert listener.host_of_text("hostb · done\nmore") == "hostb"
    assert listener.host_of_text("done\nhostb · x") == ""


def test_a_slack_parent_message_names_its_host_by_its_buttons_or_its_title() -> None:
    from lookout.channels import slack

    with_buttons = {"text": "done", "blocks": slack.blocks("t", "b", [("Allow", f"hostb:{TOK}")])}
    assert listener.host_of_slack(with_buttons) == "hostb"
    titled = {"text": "hostc · done", "blocks": slack.blocks("hostc · done", "body")}
    assert listener.host_of_slack(titled) == "hostc"
    assert listener.host_of_slack({"blocks": slack.blocks("hostc · done", "body")}) == "hostc"
    assert listener.host_of_slack({"text": "done", "blocks": slack.blocks("done", "")}) == ""
    assert (
        listener.host_of_slack({"blocks": [{"type": "actions", "elements": [{"value": TOK}]}]})
        == ""
    )
    assert listener.host_of_slack(None) == ""
