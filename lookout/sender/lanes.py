"""Sends grouped by channel: at most IN_FLIGHT at once per channel and QUEUED waiting, so a
hanging channel delays only its own messages and a flood costs threads, never processes."""

from __future__ import annotations

import threading
import time
import traceback

from lookout import store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from concurrent.futures import ThreadPoolExecutor
    from typing import Any


IN_FLIGHT = 8
QUEUED = 64


class Lanes:
    """Sends grouped by channel: at most IN_FLIGHT at once per channel and QUEUED waiting. A
    hanging channel delays only its own messages; a flood costs threads, never processes."""

    def __init__(self, state_dir: str) -> None:
        self.state_dir = state_dir
        self._pools: dict[str, ThreadPoolExecutor] = {}
        self._pending: dict[str, int] = {}
        self._waiters: list[threading.Thread] = []
        self._lock = threading.Lock()

    def submit(self, channel: str, work: Callable[[], None]) -> bool:
        """Queue `work` for `channel`; False (nothing queued) when its backlog is full."""
        from concurrent.futures import ThreadPoolExecutor

        with self._lock:
            if self._pending.get(channel, 0) >= QUEUED:
                return False
            pool = self._pools.get(channel)
            if pool is None:
                pool = self._pools[channel] = ThreadPoolExecutor(IN_FLIGHT)
            self._pending[channel] = self._pending.get(channel, 0) + 1
        pool.submit(self._work, channel, work)
        return True

    def _work(self, channel: str, work: Callable[[], None]) -> None:
        try:
            work()
        except Exception:
            store.log_error(self.state_dir, f"notification sender: {traceback.format_exc()}")
        finally:
            with self._lock:
                self._pending[channel] -= 1

    def watch(self, wait: Callable[..., object], *args: Any) -> None:
        """Run `wait(*args)` in a thread of its own (a Focus click's bounded wait): the sender
        stays up while it runs, and it holds no lane slot."""
        waiter = threading.Thread(target=wait, args=args, daemon=True)
        with self._lock:
            self._waiters = [w for w in self._waiters if w.is_alive()] + [waiter]
        waiter.start()

    def busy(self) -> bool:
        with self._lock:
            return any(self._pending.values()) or any(w.is_alive() for w in self._waiters)

    def wait(self) -> None:
        while self.busy():
            time.sleep(0.01)

    def close(self) -> None:
        for pool in self._pools.values():
            pool.shutdown(wait=False)


# How long a sender with no bell sleeps at most (it cannot be woken).
NO_BELL_S = 1.0


class Bell:
    """What wakes the sender before its next deadline: the state directory's FIFO
    (store.SENDER_BELL), into which a hook that leaves a job writes a byte (store.ring). The
    sender holds its write end open too, so the read end never sees end-of-file. Where no FIFO
    can be made, a wait is a plain sleep of at most NO_BELL_S, and always counts as a ring: a
    hook's change is then seen that late, never lost."""

    def __init__(self, state_dir: str) -> None:
        import os
        import stat

        self._fds: tuple[int, int] | None = None
        path = os.path.join(state_dir, store.SENDER_BELL)
        flags = os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
        try:
            try:
                os.mkfifo(path, 0o600)
            except FileExistsError:
                pass
            read = os.open(path, os.O_RDONLY | flags)
            st = os.fstat(read)
            if not stat.S_ISFIFO(st.st_mode) or st.st_uid != os.geteuid():
                os.close(read)
                return
            self._fds = (read, os.open(path, os.O_WRONLY | flags))
        except OSError:
            return

    def wait(self, timeout_s: float) -> bool:
        """Until a ring or `timeout_s`; every ring waiting is taken. Whether it rang (a hook
        changed something the sender must look at now: with no FIFO, always True)."""
        import os
        import select

        if self._fds is None:
            time.sleep(max(0.0, min(timeout_s, NO_BELL_S)))
            return True
        read = self._fds[0]
        select.select([read], [], [], max(0.0, timeout_s))
        rung = False
        try:
            while os.read(read, 4096):
                rung = True
        except BlockingIOError:
            pass
        return rung

    def close(self) -> None:
        import os

        if self._fds is not None:
            for fd in self._fds:
                os.close(fd)
            self._fds = None
