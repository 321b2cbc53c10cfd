"""Every file lookout writes has a format (words.FORMATS); a file of a later format than this
lookout writes there is a newer lookout's: it is never misread, rewritten or removed here, the
hooks still record, and `lookout doctor` names it (issue 35)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lookout import store, words
from lookout.commands.main import main as cli_main
from lookout.config import trust
from lookout.fleet import bridge
from lookout.remote import requests
from lookout.sender import sender
from tests.helpers import PAYLOADS, ROOT

NEWER = {"v": 99, "shape": "something this version does not know"}


def newer_bytes() -> bytes:
    return (json.dumps(NEWER) + "\n").encode()


def hook(script: str, payload: str, session: str) -> subprocess.CompletedProcess[bytes]:
    body = json.loads((PAYLOADS / f"{payload}.json").read_text())
    return subprocess.run(
        [sys.executable, "-I", "-S", str(ROOT / "hooks" / script)],
        input=json.dumps({**body, "session_id": session}).encode(),
        capture_output=True,
        timeout=60,
        env=dict(os.environ),
        check=False,
    )


def doctor_warning(capsys: pytest.CaptureFixture[str]) -> str:
    cli_main(["doctor", "--json"])
    doc = json.loads(capsys.readouterr().out)
    (found,) = [c for c in doc["checks"] if c["check"] == "formats"]
    assert found["status"] == "warn"
    return str(found["message"])


def test_a_newer_snapshot_is_recorded_past_and_left_as_it_is(
    state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert hook("stop.py", "Stop", "s-old").returncode == 0
    snapshot = state_dir / "sessions" / "s-new.json"
    snapshot.write_bytes(newer_bytes())
    done = hook("stop.py", "Stop", "s-new")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert snapshot.read_bytes() == newer_bytes()
    lines = (state_dir / "events.jsonl").read_text().splitlines()
    assert [json.loads(line)["session_id"] for line in lines] == ["s-old", "s-new"]  # recorded
    assert cli_main(["status", "--json", "--all"]) == 0
    shown = [s["session_id"] for s in json.loads(capsys.readouterr().out)["sessions"]]
    assert shown == ["s-old"]  # not misread as this version's
    with pytest.raises(store.NewerFormatError):
        store.remove_session(str(state_dir), "s-new")
    assert snapshot.exists()
    assert "sessions/s-new.json (format 99; this version reads 1)" in doctor_warning(capsys)


@pytest.mark.parametrize(
    "name", [n for n in words.FORMATS if "*" not in n and not n.endswith(".jsonl")]
)
def test_no_state_file_of_a_newer_format_is_replaced(state_dir: Path, name: str) -> None:
    state_dir.mkdir()
    path = state_dir / name
    path.write_bytes(newer_bytes())
    with pytest.raises(store.NewerFormatError, match="written by a newer lookout"):
        store.write_json_atomic(str(path), {"v": 1})
    assert path.read_bytes() == newer_bytes()
    # The same or an older format is this version's to replace.
    path.write_text('{"v": 1}')
    store.write_json_atomic(str(path), {"v": 1, "ok": True})
    path.write_text("[]")  # format 1 of a file that carries no version
    store.write_json_atomic(str(path), [])


def test_the_version_is_read_from_the_first_bytes(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    for text, version in [
        ('{"v":2,"x":1}', 2),
        ('{\n  "v": 12,\n  "files": []\n}\n', 12),
        ('{"version":3,"offset":0}', 3),
        ('{"x":1,"v":2}', None),  # the version comes first in every later format
        ("[]", None),
        ('{"v":"2"}', None),
    ]:
        path.write_text(text)
        assert store.file_version(str(path)) == version, text
    assert store.file_version(str(tmp_path / "missing.json")) is None


def test_a_newer_trust_file_trusts_nothing_and_is_not_rewritten(
    state_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "app"
    (project / ".claude").mkdir(parents=True)
    toml = project / ".claude" / "lookout.toml"
    toml.write_text('[channels.x]\ntype = "command"\nargv = ["true"]\n')
    toml.chmod(0o600)
    state_dir.mkdir(mode=0o700)
    table = {"v": 2, "files": {str(toml): {"sha256": "0" * 64}}}
    (state_dir / "trust.json").write_text(json.dumps(table))
    (state_dir / "trust.json").chmod(0o600)
    assert trust.trusted_hash(str(state_dir / "trust.json"), str(toml)) is None
    assert cli_main(["trust", str(project), "--yes"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("error: ") and "trust.json: written by a newer lookout" in err[0]
    assert err[1].startswith("hint: a newer lookout wrote it")
    assert json.loads((state_dir / "trust.json").read_text()) == table


def test_the_sender_leaves_a_newer_job_to_its_lookout(state_dir: Path) -> None:
    outbox = state_dir / "outbox"
    outbox.mkdir(parents=True)
    job = outbox / "1000-1.json"
    job.write_bytes(newer_bytes())
    os.utime(job, (1000, 1000))  # long stale, as far as this version can tell
    sender.sweep(str(outbox), str(state_dir))
    sender.run_job(str(job), str(state_dir))
    sender.serve(str(state_dir), poll_s=0.01, watch_s=None)  # returns: nothing of its own to do
    assert job.read_bytes() == newer_bytes()
    older = outbox / "1001-1.json"
    older.write_text(json.dumps({"v": 0}))
    sender.serve(str(state_dir), poll_s=0.01, watch_s=None)
    assert not older.exists()  # an older version's job: dropped unread, as before


def test_a_newer_request_is_neither_listed_nor_answered(
    state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = state_dir / "requests"
    directory.mkdir(parents=True)
    record: dict[str, Any] = {**NEWER, "id": "abc123", "status": "pending"}
    (directory / "abc123.json").write_text(json.dumps(record))
    assert requests.load(str(state_dir), "abc123") is None
    assert requests.load_all(str(state_dir)) == []
    assert "requests/abc123.json (format 99" in doctor_warning(capsys)


def test_a_newer_bridge_cursor_stops_the_bridge_before_it_publishes(state_dir: Path) -> None:
    state_dir.mkdir()
    (state_dir / "bridge-cursor.json").write_text('{"version": 2, "offset": 7}')
    with pytest.raises(store.NewerFormatError):
        bridge.Cursor.load(str(state_dir))


def test_records_of_a_newer_format_in_the_log_are_named(
    state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert hook("stop.py", "Stop", "s1").returncode == 0
    with (state_dir / "events.jsonl").open("a") as fh:
        fh.write(json.dumps({"v": 2, "session_id": "s2"}) + "\n")
    assert hook("stop.py", "Stop", "s1").returncode == 0  # older records go on after it
    assert "records in events.jsonl (format 2; this version reads 1)" in doctor_warning(capsys)
