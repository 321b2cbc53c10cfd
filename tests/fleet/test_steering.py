"""The owning host's side of the hub (lookout.fleet.steering): a message runs only fresh and
never seen, bounded in memory; a press answers with a token minted here (the hub's, or a chat
alert's for its own surface and channel only); a steer message goes through this host's own
steer core and [steer]; every outcome is published for the hub on steered/<nonce>."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

from lookout.config import fleet
from lookout.fleet import steering
from lookout.remote import answers, requests, shown
from tests.helpers import write_config
from tests.remote.test_answers import load, new

NOW = 1_800_000_000_000
CFG = fleet.validate({"mqtt": "mqtt://127.0.0.1", "host": "hostB", "hub": "hub"})


def stamped(**kw: Any) -> dict[str, Any]:
    return {"nonce": secrets.token_hex(16), "ts_ms": NOW, **kw}


def test_a_message_runs_once_and_only_fresh() -> None:
    guard = steering.Guard(started_ms=NOW - 60_000)
    msg = stamped()
    assert guard.check(msg, NOW + 29_000) == ""
    assert guard.check(msg, NOW + 29_001) == "it was seen before (a replay)"
    assert "more than 30 s" in guard.check(stamped(), NOW + 30_001)
    assert "ahead of this host's clock" in guard.check(stamped(ts_ms=NOW + 31_000), NOW)
    assert guard.check({"ts_ms": NOW, "nonce": "short"}, NOW) == "it has no nonce"
    assert guard.check({"nonce": secrets.token_hex(16), "ts_ms": "1"}, NOW) == (
        "it has no time stamp"
    )
    late = steering.Guard(started_ms=NOW + 1)
    assert "before this host's bridge started" in late.check(stamped(), NOW + 2)


def test_the_nonces_kept_are_bounded() -> None:
    guard = steering.Guard(started_ms=0)
    for _ in range(steering.SEEN_MAX):
        assert guard.check(stamped(), NOW) == ""
    # Full of fresh ones: refused (never forgotten early, which would let a replay through).
    assert "more than" in guard.check(stamped(), NOW)
    # A minute later the old ones are dropped (older than any message that may still run).
    assert guard.check(stamped(ts_ms=NOW + 60_001), NOW + 60_001) == ""
    assert len(guard.seen) == 1


def test_a_press_with_a_token_minted_for_the_hub(state_dir: Path) -> None:
    rec = new(state_dir)
    part = steering.hub_part(str(state_dir), CFG, rec)
    assert part["allow"] is True and set(part["tokens"]) == {"allow", "deny"}
    # The whole input, as the dashboard's card shows it (no limit, escaped).
    assert part["text"] == shown.view(rec, None)["text"] and rec["detail"] in part["text"]
    hub_tokens = set(part["tokens"].values())
    data = stamped(surface="dashboard", by="alice")
    done = steering.take_press(str(state_dir), CFG, part["tokens"]["deny"], data, hub_tokens)
    assert done.ok and done.lines[0].startswith("Denied by alice (dashboard at hub)")
    got = load(state_dir, rec)
    assert got["status"] == requests.DENIED and got["decision"]["source"] == answers.HUB
    # Taken once: the other token of the same request is gone too.
    again = steering.take_press(str(state_dir), CFG, part["tokens"]["allow"], data, hub_tokens)
    assert not again.ok and again.reason == "refused"


def test_a_chat_alerts_token_is_taken_only_for_its_surface_and_channel(state_dir: Path) -> None:
    rec = new(state_dir)
    [allow] = answers.mint(str(state_dir), rec, "telegram", [("allow", None)], scope="phone")
    wrong = stamped(surface="telegram", scope="other-bot", by="mallory")
    assert not steering.take_press(str(state_dir), CFG, allow, wrong, set()).ok
    assert load(state_dir, rec)["status"] == requests.PENDING
    right = stamped(surface="telegram", scope="phone", by="bob")
    assert steering.take_press(str(state_dir), CFG, allow, right, set()).ok
    assert load(state_dir, rec)["status"] == requests.ALLOWED
    # No scope (the hub's shared bot cannot tell this host's channel names): any channel of
    # the surface the token was minted for, never another surface.
    other = new(state_dir, prompt_id="p2")
    [token] = answers.mint(str(state_dir), other, "telegram", [("deny", None)], scope="phone")
    as_slack = stamped(surface="slack", by="mallory")
    assert not steering.take_press(str(state_dir), CFG, token, as_slack, set()).ok
    unscoped = stamped(surface="telegram", by="bob")
    assert steering.take_press(str(state_dir), CFG, token, unscoped, set()).ok
    assert load(state_dir, other)["status"] == requests.DENIED


def test_content_none_sends_no_text_and_offers_no_allow(state_dir: Path) -> None:
    rec = new(state_dir)
    cfg = fleet.validate({"mqtt": "mqtt://b", "host": "hostB", "hub": "hub", "content": "none"})
    part = steering.hub_part(str(state_dir), cfg, rec)
    assert (part["text"], part["allow"], list(part["tokens"])) == ("", False, ["deny"])


def test_a_steer_message_runs_through_this_hosts_own_steer_config(state_dir: Path) -> None:
    write_config("# [steer] is off here\n")
    done = steering.run_steer(
        str(state_dir), stamped(action="say", session="api", text="hi", source="telegram")
    )
    assert not done.ok and done.reason == "disabled"
    assert done.lines[0].startswith("error: steering is off")
    assert done.lines[1].startswith("hint: add `[steer]`")
    unknown = steering.run_steer(str(state_dir), stamped(action="rm"))
    assert (unknown.ok, unknown.lines) == (False, ("error: unknown action 'rm'",))


def test_the_inbox_publishes_each_outcome_and_refuses_a_replay(state_dir: Path) -> None:
    write_config("# [steer] is off here\n")
    sent: list[tuple[str, bytes]] = []
    said: list[tuple[str, str]] = []
    inbox = steering.Inbox(
        str(state_dir),
        CFG,
        lambda t, b: sent.append((t, b)),
        lambda r, t: said.append((r, t)),
        set,
        started_ms=0,
    )
    msg = stamped(action="interrupt", session="api", source="terminal")
    body = json.dumps(msg).encode()
    first = inbox.handle("steer", msg["nonce"], body, now_ms=NOW)
    replay = inbox.handle("steer", msg["nonce"], body, now_ms=NOW)
    assert (first.ok, first.reason, replay.reason) == (False, "disabled", "stale")
    topic = f"lookout/hostB/steered/{msg['nonce']}"
    assert [t for t, _ in sent] == [topic, topic]
    assert json.loads(sent[1][1])["lines"] == ["error: refused: it was seen before (a replay)"]
    assert said[-1][0] == "stale"
    assert inbox.handle("steer", "x", b"allow", now_ms=NOW).reason == "payload"
    assert len(sent) == 2  # nothing to answer on without a nonce


def test_a_reply_names_its_alerts_session_through_any_channel_of_its_surface(
    state_dir: Path,
) -> None:
    """The hub's bot is shared, so it cannot name this host's channel: every enabled channel of
    the reply's surface is looked at; a named one only itself."""
    from lookout.surfaces import telegram

    write_config(
        '[channels.phone]\ntype = "telegram"\ntoken_env = "T"\nchat_id = 1\n'
        "allowed_user_ids = [1]\n"
    )
    telegram.remember_alert(str(state_dir), "phone", "42", "s-123")
    assert steering.reply_session(str(state_dir), "telegram", "", "42") == "s-123"
    assert steering.reply_session(str(state_dir), "telegram", "phone", "42") == "s-123"
    assert steering.reply_session(str(state_dir), "telegram", "other", "42") is None
    assert steering.reply_session(str(state_dir), "telegram", "", "43") is None
    assert steering.reply_session(str(state_dir), "terminal", "", "42") is None
