"""lookout.remote.ignored: ignored presses said at most once a second per reason, with a count
(issue 31: 10,000 bogus presses were 10,056 lines on the bridge)."""

from __future__ import annotations

import threading

from lookout.remote.ignored import Ignored


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_flood_is_one_line_a_second_per_reason_with_its_count() -> None:
    lines: list[str] = []
    clock = Clock()
    say = Ignored(lines.append, clock=clock)
    for i in range(10_000):
        clock.now = 100.0 + i * 0.0003  # 10,000 presses in 3 s
        say("unknown", f"a press for request {i}: ignored")
    say("payload", "a press with payload 'x': ignored")  # another reason is said at once
    clock.now = 104.0
    say.flush()
    assert lines[0] == "a press for request 0: ignored"
    held = [x for x in lines[1:] if "presses ignored" in x]
    assert len(held) == 3 and len(lines) == 5
    assert held[0] == "3334 presses ignored in 1.0 s, the last: a press for request 3334: ignored"
    assert held[-1].endswith("the last: a press for request 9999: ignored")
    # Nothing is lost: the first line and the counts add up to every press.
    assert 1 + sum(int(x.split()[0]) for x in held) == 10_000
    assert "a press with payload 'x': ignored" in lines


def test_a_quiet_reason_is_said_at_once_and_flush_says_what_is_held() -> None:
    lines: list[str] = []
    clock = Clock()
    say = Ignored(lines.append, clock=clock)
    say("retained", "a retained press (stale): ignored")
    clock.now += 0.2
    say("retained", "a retained press (stale): ignored")
    say.flush()  # its second has not passed: still held
    assert lines == ["a retained press (stale): ignored"]
    clock.now += 5
    say.flush()
    assert lines[1] == "1 press ignored in 5.2 s, the last: a retained press (stale): ignored"
    clock.now += 1.0
    say("retained", "a retained press (stale): ignored")  # a second later: said at once again
    say("retained", "a retained press (stale): ignored")
    say.flush(force=True)  # before exiting, whatever is held
    assert lines[2:] == [
        "a retained press (stale): ignored",
        "1 press ignored in 0.0 s, the last: a retained press (stale): ignored",
    ]


def test_threads_lose_no_press() -> None:
    lines: list[str] = []
    say = Ignored(lines.append, interval_s=3600)

    def flood() -> None:
        for _ in range(2_000):
            say("unknown", "x")

    threads = [threading.Thread(target=flood) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    say.flush(force=True)
    assert lines == ["x", "7999 presses ignored in " + lines[1].split(" in ")[1]]
