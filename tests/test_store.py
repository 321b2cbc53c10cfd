"""The state directory: private modes, an flock that interoperates with filelock, whole lines
under concurrency and SIGKILL, rotation under the lock (followed by `lookout tail -f`), session
file names that cannot escape, atomic snapshots, an error log that never raises."""

from __future__ import annotations

import fcntl
import json
import os
import posix
import queue
import random
import signal
import stat
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import filelock
import pytest

from lookout import sessions, store
from tests.helpers import PAYLOADS, ROOT, SHORT_TMP


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _lines(path: Path) -> list[bytes]:
    data = path.read_bytes()
    assert data.endswith(b"\n"), "the last append must end its line"
    return data[:-1].split(b"\n")


def _hook(script: str, stdin: bytes) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-I", "-S", str(ROOT / "hooks" / script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    proc.stdin.write(stdin)
    proc.stdin.close()
    return proc


def _python(code: str, *args: str) -> list[str]:
    """argv for a child interpreter that can import lookout from this checkout."""
    prelude = f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
    return [sys.executable, "-I", "-S", "-c", prelude + code, *args]


# -- modes ---------------------------------------------------------------------------------------


def test_directory_0700_and_files_0600_even_with_umask_0(state_dir: Path) -> None:
    old = os.umask(0)
    try:
        with store.Locked(str(state_dir)) as st:
            st.append(store.EVENTS, {"seq": 1})
            st.write_session({"session_id": "abc", "status": "idle"})
        store.log_error(str(state_dir), "something")
    finally:
        os.umask(old)
    assert _mode(state_dir) == 0o700
    assert _mode(state_dir / store.SESSIONS) == 0o700
    for name in (store.EVENTS, store.LOCK, store.ERRORS, f"{store.SESSIONS}/abc.json"):
        assert _mode(state_dir / name) == 0o600, name


def test_missing_parents_are_created_and_an_open_directory_is_tightened(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b" / "state"
    store.ensure_dir(str(deep))
    assert _mode(deep) == 0o700
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o755)
    os.chmod(loose, 0o755)
    store.ensure_dir(str(loose))
    assert _mode(loose) == 0o700


def test_missing_parents_are_not_world_writable_even_with_umask_0(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        store.ensure_dir(str(tmp_path / "xdg-state" / "lookout"))
    finally:
        os.umask(old)
    assert _mode(tmp_path / "xdg-state") & 0o022 == 0


def test_append_refuses_to_write_through_a_symlink(state_dir: Path, tmp_path: Path) -> None:
    # Someone else's file linked in as events.jsonl must not be appended to.
    state_dir.mkdir(mode=0o700)
    target = tmp_path / "victim"
    target.write_text("precious\n")
    (state_dir / store.EVENTS).symlink_to(target)
    with pytest.raises(OSError), store.Locked(str(state_dir)) as st:
        st.append(store.EVENTS, {"seq": 1})
    assert target.read_text() == "precious\n"


# -- the lock ------------------------------------------------------------------------------------


def test_a_hook_waits_for_a_filelock_holder(state_dir: Path) -> None:
    state_dir.mkdir(mode=0o700)
    lock = filelock.FileLock(str(state_dir / store.LOCK))
    events = state_dir / store.EVENTS
    with lock:
        proc = _hook("pre_tool_use.py", (PAYLOADS / "PreToolUse-Bash.json").read_bytes())
        time.sleep(1.0)
        assert proc.poll() is None, "the hook did not wait for the filelock holder"
        assert not events.exists()
    assert proc.wait(timeout=10) == 0
    assert len(_lines(events)) == 1


def test_filelock_waits_for_the_store_lock(state_dir: Path) -> None:
    with store.Locked(str(state_dir)), pytest.raises(filelock.Timeout):
        filelock.FileLock(str(state_dir / store.LOCK), timeout=0.2).acquire()
    with filelock.FileLock(str(state_dir / store.LOCK), timeout=1):
        pass


def test_the_lock_is_released_when_the_holder_is_killed(state_dir: Path) -> None:
    child = subprocess.Popen(
        _python(
            "from lookout import store\n"
            "with store.Locked(sys.argv[1]):\n"
            "    print('locked', flush=True)\n"
            "    import time; time.sleep(60)\n",
            str(state_dir),
        ),
        stdout=subprocess.PIPE,
    )
    assert child.stdout is not None
    assert child.stdout.readline() == b"locked\n"
    with pytest.raises(filelock.Timeout):
        filelock.FileLock(str(state_dir / store.LOCK), timeout=0.2).acquire()
    child.kill()
    child.wait()
    with filelock.FileLock(str(state_dir / store.LOCK), timeout=5):
        pass


# -- concurrency ---------------------------------------------------------------------------------

_WRITER = """
from lookout import runner
import time
w, n, state = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
for i in range(n):
    raw = ('{"session_id":"s%d","hook_event_name":"PreToolUse","cwd":"/tmp/p",'
           '"tool_name":"Bash","tool_input":{"command":"echo %d-%d"},'
           '"tool_use_id":"t%d-%d"}' % (w % 4, w, i, w, i)).encode()
    runner.record(raw, "PreToolUse", int(time.time() * 1000), state, {})
"""


@pytest.mark.slow
def test_16_writers_x_250_appends_lose_nothing(state_dir: Path) -> None:
    writers, per = 16, 250
    procs = [
        subprocess.Popen(_python(_WRITER, str(w), str(per), str(state_dir))) for w in range(writers)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0] * writers
    lines = _lines(state_dir / store.EVENTS)
    assert len(lines) == writers * per
    records = [json.loads(line) for line in lines]
    per_writer: dict[str, int] = defaultdict(int)
    seqs: dict[str, list[int]] = defaultdict(list)
    for r in records:
        seqs[r["session_id"]].append(r["seq"])
        per_writer[r["summary"].split("-")[0]] += 1
        assert r["duplicate"] is False
    assert per_writer == {f"echo {w}": per for w in range(writers)}
    for session_id, got in seqs.items():
        # File order is lock order: each session's seq must be exactly 1..n.
        assert got == list(range(1, len(got) + 1)), session_id
    assert sum(len(v) for v in seqs.values()) == writers * per
    assert not (state_dir / store.ERRORS).exists()


# -- a writer killed mid-append ------------------------------------------------------------------


def test_a_line_torn_by_sigkill_is_isolated(state_dir: Path) -> None:
    with store.Locked(str(state_dir)) as st:
        for i in range(3):
            st.append(store.EVENTS, {"seq": i})
    # The child takes the lock, writes half a line and dies holding it.
    child = subprocess.Popen(
        _python(
            "import os\n"
            "from lookout import store\n"
            "with store.Locked(sys.argv[1]):\n"
            "    fd = os.open(sys.argv[1] + '/events.jsonl', os.O_WRONLY | os.O_APPEND)\n"
            '    os.write(fd, b\'{"seq": 99, "summary": "half a li\')\n'
            "    print('torn', flush=True)\n"
            "    import time; time.sleep(60)\n",
            str(state_dir),
        ),
        stdout=subprocess.PIPE,
    )
    assert child.stdout is not None
    assert child.stdout.readline() == b"torn\n"
    child.send_signal(signal.SIGKILL)
    child.wait()
    with store.Locked(str(state_dir)) as st:
        st.append(store.EVENTS, {"seq": 3})
    lines = _lines(state_dir / store.EVENTS)
    assert len(lines) == 5
    parsed = [sessions.parse_line(line) for line in lines]
    assert parsed[:3] == [{"seq": 0}, {"seq": 1}, {"seq": 2}]
    assert parsed[3] is None  # the fragment, alone on its line, skipped by readers
    assert parsed[4] == {"seq": 3}


@pytest.mark.slow
def test_writers_killed_at_random_leave_every_other_line_whole(state_dir: Path) -> None:
    rng = random.Random(1234)
    loop = _WRITER.replace("for i in range(n):", "for i in range(10**9):")
    kills = 8
    for k in range(kills):
        child = subprocess.Popen(_python(loop, str(k), "0", str(state_dir)))
        time.sleep(0.15 + rng.random() * 0.25)
        child.send_signal(signal.SIGKILL)
        child.wait()
    with store.Locked(str(state_dir)) as st:
        st.append(store.EVENTS, {"seq": "last"})
    lines = _lines(state_dir / store.EVENTS)
    parsed = [sessions.parse_line(line) for line in lines]
    torn = [line for line, p in zip(lines, parsed, strict=True) if p is None]
    assert len(lines) - len(torn) > kills * 5, "the writers barely wrote anything"
    assert len(torn) <= kills  # at most one fragment per kill, never a neighbour damaged
    assert parsed[-1] == {"seq": "last"}
    for p in parsed[:-1]:
        assert p is None or p["event"] == "PreToolUse"


def test_append_after_a_file_without_final_newline_starts_a_new_line(state_dir: Path) -> None:
    state_dir.mkdir(mode=0o700)
    (state_dir / store.EVENTS).write_bytes(b'{"seq": 1}\n{"seq": 2, "tor')
    with store.Locked(str(state_dir)) as st:
        st.append(store.EVENTS, {"seq": 3})
    assert (state_dir / store.EVENTS).read_bytes() == b'{"seq": 1}\n{"seq": 2, "tor\n{"seq":3}\n'


# -- rotation ------------------------------------------------------------------------------------


def _fixed_record(i: int, size: int = 100) -> dict[str, object]:
    """A record whose line is exactly `size` bytes, newline included."""
    base = len(json.dumps({"i": i, "pad": ""}, separators=(",", ":"))) + 1
    return {"i": i, "pad": "x" * (size - base)}


def test_rotation_keeps_seven_files_and_loses_nothing_in_them(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOKOUT_ROTATE_BYTES", "1000")
    with store.Locked(str(state_dir)) as st:
        for i in range(115):
            st.append(store.EVENTS, _fixed_record(i), store.rotate_bytes())
    names = sorted(p.name for p in state_dir.iterdir() if p.name.startswith("events.jsonl"))
    assert names == ["events.jsonl", *(f"events.jsonl.{n}" for n in range(1, 8))]
    kept: list[int] = []
    for name in [*(f"events.jsonl.{n}" for n in range(7, 0, -1)), "events.jsonl"]:
        path = state_dir / name
        assert path.stat().st_size <= 1000
        assert _mode(path) == 0o600
        kept += [json.loads(line)["i"] for line in _lines(path)]
    # 115 records, rotated every 10: 40..109 in the rotated files, 110..114 in the live one.
    assert kept == list(range(40, 115))


def test_rotation_happens_under_the_lock(state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOKOUT_ROTATE_BYTES", "300")
    held: list[bool] = []
    real_replace = os.replace

    def probing_replace(src: str, dst: str) -> None:
        fd = os.open(str(state_dir / store.LOCK), os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            held.append(True)
        else:
            held.append(False)
        finally:
            os.close(fd)
        real_replace(src, dst)

    monkeypatch.setattr(posix, "replace", probing_replace)  # what store calls (it never loads os)
    with store.Locked(str(state_dir)) as st:
        for i in range(20):
            st.append(store.EVENTS, _fixed_record(i), store.rotate_bytes())
    assert held and all(held)


def test_rotate_bytes_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOOKOUT_ROTATE_BYTES", raising=False)
    assert store.rotate_bytes() == store.DEFAULT_ROTATE_BYTES == 20 * 1024 * 1024
    monkeypatch.setenv("LOOKOUT_ROTATE_BYTES", "4096")
    assert store.rotate_bytes() == 4096
    for junk in ("0", "-5", "lots", "1e6", ""):
        monkeypatch.setenv("LOOKOUT_ROTATE_BYTES", junk)
        assert store.rotate_bytes() == store.DEFAULT_ROTATE_BYTES, junk


@pytest.mark.slow
def test_tail_follow_keeps_following_across_rotations(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOKOUT_ROTATE_BYTES", "1000")
    with store.Locked(str(state_dir)) as st:
        st.append(store.EVENTS, _fixed_record(0), store.rotate_bytes())
    tail = subprocess.Popen(
        [sys.executable, "-m", "lookout", "tail", "-f", "--json", "-n", "1000"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    seen: queue.Queue[int] = queue.Queue()

    def read() -> None:
        assert tail.stdout is not None
        for line in tail.stdout:
            seen.put(json.loads(line)["i"])

    threading.Thread(target=read, daemon=True).start()
    try:
        assert seen.get(timeout=10) == 0  # the follower is running and positioned
        total = 1
        got: list[int] = []
        for _batch in range(4):  # each batch of 10 fills a file and rotates it once
            with store.Locked(str(state_dir)) as st:
                for _ in range(10):
                    st.append(store.EVENTS, _fixed_record(total), store.rotate_bytes())
                    total += 1
            # The follower shows the whole batch before the next one rotates again (one rotation
            # between two of its looks, however late a busy machine lets it look).
            got += [seen.get(timeout=20) for _ in range(10)]
    finally:
        tail.kill()
        tail.wait()
    assert got == list(range(1, total))
    assert (state_dir / "events.jsonl.3").exists()


# -- store.Tail: the one follower of a log ------------------------------------------------------


def _append(state_dir: Path, *numbers: int, size: int = 100) -> None:
    with store.Locked(str(state_dir)) as st:
        for i in numbers:
            st.append(store.EVENTS, _fixed_record(i, size), store.rotate_bytes())


def _numbers(lines: list[bytes] | None) -> list[int] | None:
    return None if lines is None else [json.loads(line)["i"] for line in lines]


def test_tail_follows_across_every_kept_rotation_and_says_when_it_lost_lines(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOKOUT_ROTATE_BYTES", "1000")  # 10 records a file
    _append(state_dir, 0)
    tail = store.Tail(str(state_dir / store.EVENTS))
    tail.to_end()
    assert _numbers(tail.poll()) == []
    _append(state_dir, *range(1, 4))
    assert _numbers(tail.poll()) == [1, 2, 3]
    # Rotated five times between two polls: the marked file is found as .5 and read on.
    _append(state_dir, *range(4, 55))
    assert (state_dir / "events.jsonl.5").exists()
    assert _numbers(tail.poll()) == list(range(4, 55))
    # Rotated past the seven kept files: the lines are gone, and it says so (None), then
    # follows from the end.
    _append(state_dir, *range(55, 155))
    assert tail.poll() is None
    _append(state_dir, 155)
    assert _numbers(tail.poll()) == [155]
    # Its mark is a durable cursor: a new Tail from (ino, offset) goes on where it was.
    _append(state_dir, 156, 157)
    again = store.Tail(str(state_dir / store.EVENTS), tail.ino, tail.offset)
    assert _numbers(again.poll()) == [156, 157]


def test_tail_reads_a_line_once_its_writer_ended_it(state_dir: Path) -> None:
    path = state_dir / store.EVENTS
    _append(state_dir, 1)
    tail = store.Tail(str(path))
    with path.open("ab") as f:
        f.write(b'{"i":2,"pad":"half')  # a writer mid-append
    tail.to_end()  # the mark stays before the line not ended
    assert tail.offset == 100
    assert _numbers(tail.poll()) == []
    with path.open("ab") as f:
        f.write(b'"}\n{"i":3}\n')
    assert _numbers(tail.poll()) == [2, 3]
    assert tail.offset == path.stat().st_size


def test_tail_says_when_its_file_was_truncated(state_dir: Path) -> None:
    path = state_dir / store.EVENTS
    _append(state_dir, 1, 2, 3)
    tail = store.Tail(str(path))
    tail.to_end()
    with path.open("r+b") as f:
        f.truncate(100)
    assert tail.poll() is None
    assert tail.offset == 100  # at the end of what is left, from where it follows
    _append(state_dir, 4)
    assert _numbers(tail.poll()) == [4]


def test_tail_from_no_file_reads_the_file_that_comes(state_dir: Path) -> None:
    tail = store.Tail(str(state_dir / store.EVENTS))
    tail.to_end()
    assert (tail.ino, tail.offset) == (0, 0)
    assert _numbers(tail.poll()) == []
    _append(state_dir, 1, 2)
    assert _numbers(tail.poll()) == [1, 2]


def test_tail_has_the_spool_recorded_before_it_reads(state_dir: Path) -> None:
    _append(state_dir, 1)
    drained: list[int] = []

    def drain() -> None:  # what reconcile.drain does: record what waits, under the lock
        drained.append(1)
        _append(state_dir, 2)
        (state_dir / store.SPOOL).rmdir()

    tail = store.Tail(str(state_dir / store.EVENTS), drain=drain)
    tail.to_end()
    assert _numbers(tail.poll()) == [] and drained == []  # nothing waits: one access()
    (state_dir / store.SPOOL).mkdir()
    assert _numbers(tail.poll()) == [2] and drained == [1]


def test_tail_reads_back_before_its_mark_across_rotation(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOKOUT_ROTATE_BYTES", "1000")
    _append(state_dir, *range(25))
    path = state_dir / store.EVENTS
    with path.open("ab") as f:
        f.write(b'{"i":25,"pad":"torn')  # a torn last line is never read back
    tail = store.Tail(str(path))
    tail.to_end()
    assert [json.loads(line)["i"] for line in tail.before()] == list(range(24, -1, -1))
    # One line longer than a block is read whole, in linear time.
    big = state_dir / "big.jsonl"
    big.write_bytes(b'{"i":1,"pad":"' + b"y" * (3 * store.TAIL_BLOCK) + b'"}\n{"i":2}\n')
    tail = store.Tail(str(big))
    tail.to_end()
    assert [json.loads(line)["i"] for line in tail.before()] == [2, 1]


def test_ring_never_blocks_and_writes_only_into_a_waiting_fifo(state_dir: Path) -> None:
    state_dir.mkdir(parents=True)
    bell = state_dir / store.SENDER_BELL
    store.ring(str(state_dir))  # no bell: nothing
    bell.write_bytes(b"mine")
    store.ring(str(state_dir))
    assert bell.read_bytes() == b"mine"  # a file is never written to
    bell.unlink()
    os.mkfifo(bell, 0o600)
    store.ring(str(state_dir))  # no sender reads it: nothing, at once
    read = os.open(bell, os.O_RDONLY | os.O_NONBLOCK)
    try:
        fcntl.fcntl(read, fcntl.F_SETPIPE_SZ, 4096)  # one page: filled by a few thousand
        for _ in range(5000):  # past the pipe's capacity: never blocks
            store.ring(str(state_dir))
        assert os.read(read, 10) == b"!" * 10
    finally:
        os.close(read)


# -- session files -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "session_id",
    [
        "../escape",
        "../../etc/passwd",
        "/abs/path",
        "a/b",
        "..",
        ".",
        "",
        ".hidden",
        "a\x00b",
        "..\\..\\win",
        "x" * 1000,
        "\u00e9/\u2603",
    ],
    ids=repr,
)
def test_session_ids_never_escape_sessions(state_dir: Path, session_id: str) -> None:
    path = Path(store.session_file(str(state_dir), session_id))
    sessions = state_dir / store.SESSIONS
    assert path.parent == sessions
    assert not path.name.startswith(".")  # dotfiles are temp files, skipped by readers
    assert len(path.name) <= 255
    with store.Locked(str(state_dir)) as st:
        st.write_session({"session_id": session_id, "status": "idle"})
    assert store.read_session(str(state_dir), session_id) == {
        "session_id": session_id,
        "status": "idle",
    }
    outside = [p for p in state_dir.parent.rglob("*") if p.is_file()]
    assert all(sessions in p.parents or p.parent == state_dir for p in outside), outside


def test_real_session_ids_keep_their_name(state_dir: Path) -> None:
    sid = "3f6a5ad5-3fa2-4ad1-9be5-4480a11614d1"
    assert Path(store.session_file(str(state_dir), sid)).name == f"{sid}.json"


# -- snapshots -----------------------------------------------------------------------------------


def test_write_json_atomic_replaces_and_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "snap.json"
    for i in range(5):
        store.write_json_atomic(str(target), {"n": i, "s": "é"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "snap.json"]
    assert store.read_json(str(target)) == {"n": 4, "s": "é"}
    assert _mode(target) == 0o600


def test_a_snapshot_with_a_lone_surrogate_reads_back(state_dir: Path) -> None:
    with store.Locked(str(state_dir)) as st:
        st.write_session({"session_id": "s", "summary": "echo \udc80"})
    assert store.read_session(str(state_dir), "s") == {"session_id": "s", "summary": "echo \udc80"}


@pytest.mark.parametrize("bad", [{"x": object()}, {"x": float("nan")}], ids=["object", "nan"])
def test_a_failed_write_keeps_the_old_file_and_no_temp(tmp_path: Path, bad: object) -> None:
    target = tmp_path / "snap.json"
    store.write_json_atomic(str(target), {"ok": True})
    with pytest.raises((TypeError, ValueError)):
        store.write_json_atomic(str(target), bad)
    assert json.loads(target.read_text()) == {"ok": True}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "snap.json"]


def test_read_json_treats_damage_as_missing(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    assert store.read_json(str(path)) is None
    path.write_bytes(b'{"half": ')
    assert store.read_json(str(path)) is None
    path.write_bytes(b"\xff\xfe")
    assert store.read_json(str(path)) is None
    path.write_text('{"a": 1}')
    assert store.read_json(str(path)) == {"a": 1}


def test_remove_session_is_idempotent(state_dir: Path) -> None:
    with store.Locked(str(state_dir)) as st:
        st.write_session({"session_id": "gone"})
    store.remove_session(str(state_dir), "gone")
    store.remove_session(str(state_dir), "gone")
    assert store.read_session(str(state_dir), "gone") is None


# -- the error log -------------------------------------------------------------------------------


def test_log_error_appends_stamped_lines(state_dir: Path) -> None:
    store.log_error(str(state_dir), "first\n")
    store.log_error(str(state_dir), "second \udc80 surrogate")
    lines = (state_dir / store.ERRORS).read_text(errors="replace").splitlines()
    assert len(lines) == 2
    assert lines[0].endswith(f"pid={os.getpid()} first")
    assert lines[0][:4].isdigit() and "Z pid=" in lines[0]


def test_log_error_rotates_past_its_cap(state_dir: Path) -> None:
    state_dir.mkdir(mode=0o700)
    (state_dir / store.ERRORS).write_bytes(b"x" * (store.ERRORS_MAX_BYTES + 1))
    store.log_error(str(state_dir), "fresh")
    assert (state_dir / f"{store.ERRORS}.1").stat().st_size == store.ERRORS_MAX_BYTES + 1
    assert (state_dir / store.ERRORS).read_text().rstrip().endswith("fresh")


def test_log_error_never_raises(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    store.log_error(str(blocker / "state"), "under a regular file")
    store.log_error(str(blocker), "the state dir is a file")
    errors_as_dir = tmp_path / "s"
    (errors_as_dir / store.ERRORS).mkdir(parents=True)
    store.log_error(str(errors_as_dir), "errors.log is a directory")
    store.log_error("", "empty path")
    store.log_error(str(tmp_path / "ok"), "\x00 nul and \udcff")
    assert (tmp_path / "ok" / store.ERRORS).exists()


def test_a_lock_held_forever_costs_one_record_not_a_stuck_hook(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    monkeypatch.setattr(store, "LOCK_WAIT_S", 0.2)
    monkeypatch.setattr(store, "LOCK_WAIT_MAX_S", 0.5)
    store.ensure_dir(str(state_dir))
    holder = os.open(state_dir / "events.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        started = time.monotonic()
        with (
            pytest.raises(TimeoutError, match=r"events\.lock held by another process"),
            store.Locked(str(state_dir)),
        ):
            pass
        assert time.monotonic() - started < 2
    finally:
        os.close(holder)
    with store.Locked(str(state_dir)):  # free again
        pass


def test_a_busy_machine_slows_the_holder_and_the_wait_counts_tries_not_wall_time(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every pause the waiter asks for runs five times long (a starved scheduler), and the
    holder lets go after three times LOCK_WAIT_S of wall time: slow, not stuck. The record gets
    in (16 hooks next to two CPU hogs lost records at 5 s of wall time)."""
    import fcntl
    import threading

    monkeypatch.setattr(store, "LOCK_WAIT_S", 0.2)
    real_sleep = time.sleep
    monkeypatch.setattr(store.time, "sleep", lambda s: real_sleep(s * 5))
    store.ensure_dir(str(state_dir))
    holder = os.open(state_dir / "events.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(holder, fcntl.LOCK_EX)
    threading.Timer(0.6, os.close, (holder,)).start()  # closing it lets go
    with store.Locked(str(state_dir)) as st:
        st.append(store.EVENTS, {"seq": 1})
    assert _lines(state_dir / store.EVENTS) == [b'{"seq":1}']


def test_a_full_disk_never_truncates_a_snapshot_and_seq_never_restarts(state_dir: Path) -> None:
    # RLIMIT_FSIZE gives exactly what a full disk gives: a short write, then an error (M2).
    import resource

    def hook(body: dict[str, object], limit: int | None = None) -> None:
        def limited() -> None:
            if limit is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

        done = subprocess.run(
            [sys.executable, "-I", "-S", str(ROOT / "hooks" / "event.py")],
            input=json.dumps(body).encode(),
            capture_output=True,
            preexec_fn=limited,
            timeout=30,
            check=False,
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")

    def tool(i: int) -> dict[str, object]:
        return {
            "session_id": "big",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": f"echo {i} " + "x" * 200},
            "tool_use_id": f"t{i}",
            "cwd": "/w",
        }

    for i in range(3):
        hook(tool(i))
    snapshot = state_dir / "sessions" / "big.json"
    before = snapshot.read_bytes()
    hook(tool(3), limit=len(before) // 2)  # the new snapshot cannot be written whole
    assert snapshot.read_bytes() == before  # the good one stays
    assert not [p for p in snapshot.parent.iterdir() if p.name.endswith(".tmp")]
    hook(tool(4))  # space is back
    seqs = [
        json.loads(line)["seq"] for line in (state_dir / "events.jsonl").read_text().splitlines()
    ]
    assert seqs == sorted(set(seqs)), seqs  # never a repeated seq
    assert json.loads(snapshot.read_text())["seq"] == seqs[-1] == 4


# -- a state directory someone else controls (M6) ---------------------------------------------

ATTACKER, VICTIM = 2002, 2001
cross_user = pytest.mark.skipif(
    os.geteuid() != 0, reason="needs root to act as two other users (setuid in the child)"
)


def _prompt_hook(
    state: Path, home: Path, uid: int | None = None
) -> subprocess.CompletedProcess[bytes]:
    env = {"HOME": str(home), "LOOKOUT_STATE_DIR": str(state), "PATH": "/usr/bin:/bin"}
    body = {"session_id": "victim", "hook_event_name": "UserPromptSubmit", "prompt": "secret"}
    python, root = sys.executable, ROOT
    if uid is not None:
        python, root = _system_python(), _readable_copy(state.parent)
    return subprocess.run(
        [python, "-I", "-S", str(root / "hooks" / "user_prompt_submit.py")],
        input=json.dumps(body).encode(),
        env=env,
        capture_output=True,
        timeout=30,
        check=False,
        **({"user": uid, "group": uid, "extra_groups": []} if uid is not None else {}),
    )


def _readable_copy(where: Path) -> Path:
    """The hook and the package copied where another uid can read them: the checkout itself may
    sit in a private (0700) folder, as CI's fresh clone does."""
    import shutil

    copy = where / "code"
    if not copy.exists():
        skip = shutil.ignore_patterns("__pycache__")
        shutil.copytree(ROOT / "lookout", copy / "lookout", ignore=skip)
        (copy / "hooks").mkdir()
        shutil.copy(ROOT / "hooks" / "user_prompt_submit.py", copy / "hooks")
        for path in (copy, *copy.rglob("*")):
            path.chmod(0o755 if path.is_dir() else 0o644)
    return copy


def _system_python() -> str:
    # Another uid cannot reach an interpreter under /root (pyenv): use the system's.
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.access(candidate, os.X_OK):
            return candidate
    pytest.skip("no system python3 another user can run")


@pytest.fixture
def shared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A world-writable sticky directory that both users can reach: in /tmp itself, never under
    $TMPDIR or the basetemp (a private 0700 folder, as CI's fresh clone may be)."""
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="lookout-m6-", dir=SHORT_TMP))
    root.chmod(0o1777)
    yield root  # type: ignore[misc]
    shutil.rmtree(root, ignore_errors=True)


@cross_user
def test_a_symlink_planted_by_another_user_is_refused_and_logged(shared: Path) -> None:
    victim_home = shared / "victim"
    victim_home.mkdir()
    precious = victim_home / "www"
    precious.mkdir(mode=0o755)
    precious.chmod(0o755)
    for p in (victim_home, precious):
        os.chown(p, VICTIM, VICTIM)
    link = shared / "lookout-state"
    os.symlink(precious, link)
    os.lchown(link, ATTACKER, ATTACKER)
    done = _prompt_hook(link, victim_home, VICTIM)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert _mode(precious) == 0o755 and os.listdir(precious) == []  # untouched
    log = victim_home / ".local" / "state" / "lookout" / "errors.log"
    assert f"refused state directory: {link} is a symlink owned by uid {ATTACKER}" in (
        log.read_text()
    )


@cross_user
def test_root_never_writes_into_a_state_dir_another_user_prepared(shared: Path) -> None:
    trap = shared / "lookout-state"
    trap.mkdir()
    sysdir = shared / "sysdir"
    sysdir.mkdir(mode=0o755)
    sysdir.chmod(0o755)
    (trap / "events.jsonl").write_text("")
    (trap / "events.jsonl").chmod(0o666)
    os.symlink(sysdir, trap / "sessions")
    for p in (trap, trap / "events.jsonl"):
        os.chown(p, ATTACKER, ATTACKER)
    os.lchown(trap / "sessions", ATTACKER, ATTACKER)
    trap.chmod(0o777)
    home = shared / "roothome"
    home.mkdir()
    done = _prompt_hook(trap, home)  # as root
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert (trap / "events.jsonl").read_text() == ""  # the attacker reads nothing
    assert _mode(sysdir) == 0o755 and os.listdir(sysdir) == []
    assert "is owned by uid 2002" in (home / ".local/state/lookout/errors.log").read_text()


def test_a_state_dir_behind_the_users_own_symlink_works(tmp_path: Path) -> None:
    real = tmp_path / "real-state"
    real.mkdir()
    link = tmp_path / "state-link"
    os.symlink(real, link)
    done = _prompt_hook(link, tmp_path / "home")
    assert done.returncode == 0
    assert (real / "events.jsonl").exists()


def test_status_and_doctor_refuse_a_state_dir_that_is_not_a_directory(tmp_path: Path) -> None:
    assert store.unsafe_reason(str(tmp_path / "missing")) is None
    plain = tmp_path / "plain"
    plain.write_text("")
    assert store.unsafe_reason(str(plain)) == f"{plain} is not a directory"
    with pytest.raises(store.UnsafeStateError):
        store.ensure_dir(str(plain))


def test_long_session_ids_that_share_a_prefix_keep_their_own_snapshots(state_dir: Path) -> None:
    one, two = "A" * 200 + "-one", "A" * 200 + "-two"  # L6
    assert store.session_file(str(state_dir), one) != store.session_file(str(state_dir), two)
    assert len(os.path.basename(store.session_file(str(state_dir), one))) <= 205
    with store.Locked(str(state_dir)) as st:
        st.write_session({"session_id": one, "cwd": "/w/one"})
        st.write_session({"session_id": two, "cwd": "/w/two"})
    assert store.read_session(str(state_dir), one) == {"session_id": one, "cwd": "/w/one"}
    assert store.read_session(str(state_dir), two) == {"session_id": two, "cwd": "/w/two"}


def test_a_spooled_delivery_is_a_private_file_named_by_its_time_stamp(state_dir: Path) -> None:
    from lookout import machine

    event: dict[str, object] = {"session_id": "s1", "name": "Stop", "digest": "d"}
    event["ts_ms"] = 1_790_000_000_000
    name = store.spool(str(state_dir), event)  # type: ignore[arg-type]
    assert name.startswith(f"1790000000000-{os.getpid()}-") and name.endswith(".json")
    path = state_dir / store.SPOOL / name
    assert json.loads(path.read_text()) == {"v": 1, "event": event}
    assert (path.stat().st_mode & 0o777, path.parent.stat().st_mode & 0o777) == (0o600, 0o700)
    assert store.spooled(str(state_dir)) == 1
    # A spool file's tmp a killed hook left, a minute old, goes with the directory.
    path.unlink()
    stale = state_dir / store.SPOOL / f".{name}.1.tmp"
    stale.write_text("{")
    os.utime(stale, (time.time() - 120, time.time() - 120))
    with store.Locked(str(state_dir)) as st:
        assert st.record(None, machine.apply) == []
    assert not (state_dir / store.SPOOL).exists()
    assert issubclass(store.LockTimeout, TimeoutError)
