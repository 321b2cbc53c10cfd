"""The outbox's one format (lookout/notify/outbox.py): a job names its kind, one parser reads
every kind, and an upgrade mixes nothing up: the jobs the previous version left are read by this
sender as that version's sender read them, and this version's jobs by a sender of the previous
version still running through the upgrade (the real code of both, from this repository's
history)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lookout import store, words
from lookout.notify import outbox
from tests.helpers import IN_CI, ROOT, recorder, write_config

# The main before jobs named their kind (this change's parent): its jobs are what an upgrade
# leaves behind, and its sender is what runs on through one.
BEFORE_KINDS = "8cd7fca"

DELIVERY: dict[str, Any] = {
    "intent": {"kind": "permission", "session_id": "s1", "episode": "s1:permission:1"},
    "channels": ["rec"],
    "updates": [],
    "escalate": [{"after_s": 60.0, "channels": ["rec"]}],
}
HOLD = {"rule": 0, "after_s": 90.0, "channels": ["rec"]}


def test_each_kind_is_named_and_read_back(state_dir: Path) -> None:
    box = str(state_dir / "outbox")
    path = outbox.write_alert(str(state_dir), outbox.alert(5, "/w", [DELIVERY]))  # type: ignore[list-item]
    outbox.escalate(box, 7, "/w", DELIVERY, {"after_s": 1.0, "channels": ["rec"]})  # type: ignore[arg-type]
    outbox.grace(box, 8, None, DELIVERY, {**HOLD, "key": "grace_s"})  # type: ignore[arg-type]
    item = {"intent": DELIVERY["intent"], "texts": {}}
    outbox.open_digest(box, 9, None, {**HOLD, "key": "digest_s"}, item)  # type: ignore[arg-type]
    assert outbox.join_digest(box, "rec", item) == 1  # type: ignore[arg-type]
    names = outbox.names(box)
    assert [outbox.due_ms(n) for n in names] == [0, 7, 8, 9]
    jobs = [outbox.read(os.path.join(box, n))[0] for n in names]
    assert [j["kind"] for j in jobs if j] == ["alert", "escalation", "grace", "digest"]
    for name in names:  # "v" first (a newer lookout's file is told by its head), then the kind
        assert list(json.loads((Path(box) / name).read_text()))[:2] == ["v", "kind"]
    assert path == os.path.join(box, names[0])
    assert len(jobs[3]["items"]) == 2  # type: ignore[index,typeddict-item]
    assert [p for p, _ in outbox.later(box)] == [os.path.join(box, n) for n in names[1:]]


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        ({"v": 1, "created_ms": 5, "cwd": None, "deliveries": []}, "alert"),
        ({"v": 1, "cwd": None, "delivery": {}, "escalation": {}}, "escalation"),
        ({"v": 1, "cwd": None, "delivery": {}, "grace": {}}, "grace"),
        ({"v": 1, "cwd": None, "digest": {}, "items": []}, "digest"),
    ],
)
def test_a_job_from_before_kinds_is_read_by_its_keys(raw: dict[str, Any], kind: str) -> None:
    job = outbox.parse(raw)
    assert job is not None and job["kind"] == kind
    assert {k: v for k, v in job.items() if k != "kind"} == raw


@pytest.mark.parametrize(
    "raw",
    [
        None,
        [],
        {"v": 1},  # no kind, no keys that tell one
        {"v": 1, "kind": "alert", "created_ms": 5},  # its deliveries missing
        {"v": 1, "kind": "page", "deliveries": []},  # a kind this version does not know
        {"v": 1, "kind": "digest", "digest": {}, "items": {}},  # items not a list
        {"v": 2, "kind": "alert", "created_ms": 5, "cwd": None, "deliveries": []},  # newer
        {"created_ms": 5, "cwd": None, "deliveries": []},  # no version
    ],
)
def test_anything_else_is_not_a_job(raw: object) -> None:
    assert outbox.parse(raw) is None


def test_a_newer_lookouts_job_is_left_alone(state_dir: Path) -> None:
    box = state_dir / "outbox"
    box.mkdir(parents=True)
    newer = box / "5-1.json"
    newer.write_text('{"v": 2, "kind": "alert", "deliveries": []}')
    assert outbox.read(str(newer)) == (None, True)
    assert outbox.names(str(box)) == []
    assert outbox.read(str(box / "gone.json")) == (None, False)


# -- an upgrade: the previous version's code and this one's, both ways ---------------------------

WRITE = """
import os, sys
sys.path.insert(0, sys.argv[1])
from lookout.config import files
from lookout.notify import handle
try:
    from lookout.sender import escalate, hold
except ImportError:  # a tree from before the sender had its own package (lookout/notify/)
    from lookout.notify import escalate, hold

state, created = sys.argv[2], int(sys.argv[3])
d = {delivery!r}
cfg = files.load(None)
handle.write_job(state, handle.build_job([d], cfg, None, created))
box = os.path.join(state, "outbox")
escalate.schedule_escalations(created, None, [d], box)
for key in ("grace_s", "digest_s"):
    hold.schedule(created, None, {{**d, "escalate": [], "hold": [{{**{hold!r}, "key": key}}]}},
                  box, state)
"""
SEND = """
import sys
sys.path.insert(0, sys.argv[1])
try:
    from lookout.sender import sender
except ImportError:  # a tree from before the sender had its own package (lookout/notify/)
    from lookout.notify import sender

sender.serve(sys.argv[2], watch_s=None)
"""


def checkout_of(commit: str, into: Path) -> Path:
    into.mkdir()
    done = subprocess.run(
        f"git -C {ROOT} archive {commit} lookout | tar -x -C {into}",
        shell=True,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        message = f"commit {commit} is not in this clone: {done.stderr.strip()}"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return into


def run(code: str, tree: Path, *args: str) -> None:
    # -I -S: the tree's own package, never the checkout's editable install.
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, str(tree), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr


def what_was_sent(state: Path) -> list[tuple[Any, ...]]:
    """deliveries.jsonl without its time stamps, in no order (an alert is sent on its channel's
    lane while the sender takes the next job), and outbox/ empty: everything was taken."""
    assert not list((state / "outbox").glob("*.json"))
    lines = [json.loads(x) for x in (state / store.DELIVERIES).read_text().splitlines()]
    return sorted((x["channel"], x["kind"], x["result"], x["detail"]) for x in lines)


@pytest.fixture
def previous(tmp_path: Path) -> Path:
    return checkout_of(BEFORE_KINDS, tmp_path / "previous")


def test_an_upgrade_mixes_up_no_job_either_way(
    previous: Path, tmp_path: Path, isolated_env: Path
) -> None:
    prog, _log = recorder(tmp_path)
    write_config(
        f'[channels.rec]\ntype = "command"\nargv = ["{prog}", "{{title}}"]\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["rec"]\n'
    )
    created = str(words.now_ms() - 120_000)  # every job due already, none stale
    write = WRITE.format(delivery=DELIVERY, hold=HOLD)
    sent = {}
    for writer, reader in [
        (previous, ROOT),  # left by the previous version, taken by this one's sender
        (ROOT, previous),  # written by this version, taken by a sender still running the old
        (ROOT, ROOT),
        (previous, previous),
    ]:
        state = tmp_path / f"state-{len(sent)}"
        state.mkdir()
        run(write, writer, str(state), created)
        kinds = {json.loads(p.read_text()).get("kind") for p in (state / "outbox").glob("*.json")}
        assert kinds == ({None} if writer == previous else set(outbox.KINDS))
        run(SEND, reader, str(state))
        sent[(writer, reader)] = what_was_sent(state)
    assert len({tuple(lines) for lines in sent.values()}) == 1, sent
    # ... and each kind did what it does (no session waits here: the held ones are answered).
    assert {(r, d.split(":")[0]) for _, _, r, d in sent[(ROOT, ROOT)]} == {
        ("sent", "record exited 0"),
        ("skipped", "escalation after 60s"),
        ("skipped", "rules[0]"),
        ("merged", "rules[0]"),
    }


def test_jobs_due_at_the_same_time_never_share_a_file(state_dir: Path) -> None:
    # An escalation and a grace period of the same length, scheduled by one sender: two files
    # (each used to count its own names from 0, so the second replaced the first).
    box = str(state_dir / "outbox")
    os.makedirs(box)
    outbox.escalate(box, 60_000, None, DELIVERY, {"after_s": 60.0, "channels": ["rec"]})  # type: ignore[arg-type]
    outbox.grace(box, 60_000, None, DELIVERY, {**HOLD, "key": "grace_s"})  # type: ignore[arg-type]
    assert sorted(j["kind"] for _, j in outbox.later(box)) == ["escalation", "grace"]
