"""A host whose clock is wrong: its bridge puts its clock on its `online` message, the broker
says how long it held it (MQTT 5 message expiry), and the viewer measures the skew, shows it and
puts that host's times on its own clock. Hooks and bridge run here with a shifted time.time()."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable

import pytest

from tests.fleet.conftest import Host
from tests.helpers import PAYLOADS, ROOT
from tests.mosquitto import Broker

# A real broker, real sender/poller processes or a real hook sequence: the full suite, not --fast.
pytestmark = pytest.mark.real

# time.time() shifted by argv[1] seconds, then the script argv[2] (a hook) or `-m lookout`.
SHIFT = (
    "import sys, time\n"
    "real = time.time\n"
    "offset = float(sys.argv[1])\n"
    "time.time = lambda: real() + offset\n"
    "time.time_ns = lambda: int((real() + offset) * 1e9)\n"
    "import runpy\n"
    "if sys.argv[2] == '-m':\n"
    "    sys.argv = ['lookout', *sys.argv[3:]]\n"
    "    runpy.run_module('lookout', run_name='__main__', alter_sys=True)\n"
    "else:\n"
    "    sys.argv = sys.argv[2:]\n"
    "    runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


def shifted_hook(h: Host, offset: float, script: str, fixture: str, sid: str) -> None:
    body = {**json.loads((PAYLOADS / f"{fixture}.json").read_text()), "session_id": sid}
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-c", SHIFT, str(offset), str(ROOT / "hooks" / script)],
        input=json.dumps(body), capture_output=True, text=True, env=h.env, timeout=30,
        check=False,
    )  # fmt: skip
    assert out.returncode == 0 and out.stdout == "", out


def shifted_bridge_once(h: Host, offset: float) -> None:
    out = subprocess.run(
        [sys.executable, "-c", SHIFT, str(offset), "-m", "bridge", "--once"],
        capture_output=True, text=True, env=h.env, cwd=ROOT, timeout=30, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr


def waiting_host(h: Host, clock: float, waited: float) -> None:
    """A permission on `h` (clock off by `clock` s) that opened `waited` s ago, published."""
    for script, fixture in (
        ("session_start.py", "SessionStart-startup"),
        ("permission_request.py", "PermissionRequest-Bash"),
    ):
        shifted_hook(h, clock - waited, script, fixture, f"{h.name}-session")
    shifted_bridge_once(h, clock)


def test_a_skewed_host_is_shown_and_its_ages_are_corrected(
    hosts: Callable[[str], Host], broker: Broker
) -> None:
    ahead, behind, right = hosts("ahead"), hosts("behind"), hosts("right")
    viewer = hosts("viewer")
    waiting_host(ahead, 600, 150)  # 10 minutes fast; waiting for 2m30s
    waiting_host(behind, -9 * 3600, 90)  # 9 hours slow; waiting for 1m30s
    waiting_host(right, 0, 0)

    fleet = viewer.fleet()
    skew = {h["host"]: h["clock_skew_s"] for h in fleet["hosts"]}
    assert skew["right"] is None  # within a few seconds: not a skew
    assert abs(skew["ahead"] - 600) <= 3 and abs(skew["behind"] + 9 * 3600) <= 3
    assert [s["stale"] for s in fleet["sessions"]] == [False, False, False]
    # The waiting ones in the order of how long they really waited (either way round): a fast
    # clock does not make a session the newest, a slow one does not make it the oldest.
    order = [s["host"] for s in fleet["sessions"]]
    assert order in (["right", "behind", "ahead"], ["ahead", "behind", "right"])

    out = viewer.lookout("status", "--fleet")
    assert out.returncode == 0, out.stderr
    age = {line.split()[0]: line.split()[6] for line in out.stdout.splitlines()[1:4]}
    assert age["ahead"] == "2m" and age["behind"] == "1m" and age["right"] in ("0s", "1s", "2s")
    assert out.stdout.rstrip().endswith(
        "clock skew: ahead +10m, behind -9h00m (against this host's clock);"
        " their ages are corrected"
    )
