"""The hub: one watcher, every open stream told of each change once, in order."""

from __future__ import annotations

from pathlib import Path

from lookout.web.hub import QUEUE_MAX, Hub, Subscription
from lookout.web.source import LocalSource
from tests.web import seed


def messages(sub: object) -> list[tuple[str, dict[str, object]]]:
    found = []
    while not sub.queue.empty():  # type: ignore[attr-defined]
        found.append(sub.queue.get_nowait())  # type: ignore[attr-defined]
    return found


def test_each_change_is_one_message_to_every_stream(
    state_dir: Path, no_notifications: None
) -> None:
    hub = Hub(LocalSource(str(state_dir)), lambda: None)
    hub.refresh(force=True)
    first, second = hub.subscribe(), hub.subscribe()
    seed.hook(state_dir, "UserPromptSubmit", "a", "/w/a", prompt="go")
    hub.refresh()
    hub.refresh()  # nothing new: nothing sent
    for sub in (first, second):
        (only,) = messages(sub)
        assert only[0] == "session" and only[1]["session"]["status"] == "working"  # type: ignore[index]
    hub.unsubscribe(second)
    seed.hook(state_dir, "Stop", "a", "/w/a")
    hub.refresh()
    assert [m[0] for m in messages(first)] == ["session"]
    assert messages(second) == []


def test_a_full_inbox_asks_for_a_snapshot_instead() -> None:
    sub = Subscription()
    for n in range(QUEUE_MAX):
        sub.put(("heartbeat", {"now_ms": n}))
    assert sub.resync is False
    sub.put(("session", {"session": {}}))
    assert sub.resync is True
    sub.drain()
    assert sub.queue.empty()


def test_a_config_that_breaks_resyncs_every_stream(state_dir: Path) -> None:
    errors = [None]
    hub = Hub(LocalSource(str(state_dir)), lambda: errors[-1])
    hub.start()
    try:
        sub = hub.subscribe()
        assert hub.snapshot()["config_error"] is None
        errors.append("config.toml: channels.x.url: expected a string, got int")
        hub._check_config()
        assert sub.resync is True
        assert hub.snapshot()["config_error"] == errors[-1]
    finally:
        hub.stop()


def test_the_snapshot_is_a_copy(state_dir: Path, no_notifications: None) -> None:
    seed.hook(state_dir, "UserPromptSubmit", "a", "/w/a", prompt="go")
    hub = Hub(LocalSource(str(state_dir)), lambda: None)
    sub = hub.subscribe()
    hub.snapshot()["sessions"][0]["tmux"] = None  # what /api/sessions adds
    messages(sub)
    hub.refresh(force=True)
    assert messages(sub) == []  # the cache was not touched: no spurious change


def test_a_new_or_answered_request_is_pushed_at_once(state_dir: Path) -> None:
    """A remote request reaches an open page with the next look (50 ms), not the page's 2 s poll
    (issue 22: the request card came ~1.7 s after the dialog, the status card ~0.4 s)."""
    from lookout import store

    requests_dir = state_dir / store.REQUESTS
    hub = Hub(LocalSource(str(state_dir)), lambda: None, str(requests_dir))
    hub.refresh(force=True)
    sub = hub.subscribe()
    hub.refresh()
    assert messages(sub) == []
    requests_dir.mkdir(parents=True)
    store.write_json_atomic(str(requests_dir / "r1.json"), {"id": "r1"})
    hub.refresh()
    assert [m[0] for m in messages(sub)] == ["requests"]
    hub.refresh()
    assert messages(sub) == []
    store.write_json_atomic(str(requests_dir / "r1.json"), {"id": "r1", "status": "allowed"})
    hub.refresh()
    assert [m[0] for m in messages(sub)] == ["requests"]
