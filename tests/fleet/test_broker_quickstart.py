"""docs/fleet-setup.md's broker quick start, run as written (newuser-5 defect 5: the broker was
left to the user): its shell block (the test's own directory, broker name and port substituted;
`sudo` dropped, as the test runs as root; the package install skipped), its mosquitto.conf (the
TLS listener on 127.0.0.1) and its foreground start as root, which drops to the user mosquitto.
A bridge then connects over TLS with the login the block made, and a viewer sees its host."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import PAYLOADS, ROOT, wait_for
from tests.mosquitto import _free_port, require

pytestmark = pytest.mark.real

PAGE = ROOT / "docs" / "fleet-setup.md"
DOC_DIR = "/etc/mosquitto/lookout"


def blocks(lang: str) -> list[str]:
    """The page's fenced blocks of one language, in order."""
    text = PAGE.read_text(encoding="utf-8")
    return re.findall(rf"^```{lang}\n(.*?)^```$", text, re.S | re.M)


@pytest.fixture
def broker_dir() -> Iterator[Path]:
    """A directory the user mosquitto can reach (pytest's own is private to root)."""
    top = Path(tempfile.mkdtemp(prefix="lookout-qs-"))
    top.chmod(0o755)
    try:
        yield top / "broker"
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_the_documented_broker_takes_a_bridge(broker_dir: Path, tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("the quick start runs as root (sudo), dropping to the user mosquitto")
    for tool in ("mosquitto", "mosquitto_passwd", "openssl"):
        require(tool)
    setup, start = blocks("sh")[:2]
    [conf] = blocks("conf")
    port = _free_port()
    script = []
    for line in setup.splitlines():
        if line.startswith("sudo apt-get "):
            continue  # installed already (require above)
        line = line.replace("sudo ", "")
        line = re.sub(r"^BROKER=\S+", "BROKER=localhost", line)
        line = re.sub(r"^DIR=\S+", f"DIR={broker_dir}", line)
        line = line.replace("~/lookout/", f"{ROOT}/")
        script.append(line)
    done = subprocess.run(
        ["bash", "-euc", "\n".join(script)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    logins = dict(re.findall(r"mosquitto_passwd .*-b passwd (\S+) '([^']+)'", setup))
    assert set(logins) == {"laptop", "devbox"}
    # The config as the page shows it: its paths in the test's directory, the listener on
    # loopback at a free port.
    text = conf.replace(DOC_DIR, str(broker_dir))
    text = text.replace("listener 8883", f"listener {port} 127.0.0.1")
    (broker_dir / "mosquitto.conf").write_text(text)
    [run] = [ln for ln in start.splitlines() if ln.strip()]
    argv = run.replace("sudo ", "").replace('"$DIR', f'"{broker_dir}').replace('"', "").split()
    log = tmp_path / "mosquitto.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: proc.poll() is not None or "running" in log.read_text(), timeout=30)
        assert proc.poll() is None, log.read_text()
        said = log.read_text()
        # The warnings the page calls harmless, and no other.
        warnings = [ln for ln in said.splitlines() if "Warning" in ln or "Error" in ln]
        assert warnings and all("does not contain '%c' or '%u'" in w for w in warnings), said
        for w in warnings:
            pattern = re.search(r"ACL pattern '([^']+)'", w)
            page = PAGE.read_text()
            assert pattern and (
                f"`{pattern.group(1)}`" in page or f"pattern '{pattern.group(1)}'" in page
            ), w
        host = tmp_path / "laptop"
        host.mkdir()

        def fleet_config(name: str) -> str:
            path = tmp_path / f"{name}.toml"
            path.write_text(
                "[fleet]\n"
                f'mqtt = "mqtts://localhost:{port}"\n'
                f'ca_file = "{broker_dir / "ca.crt"}"\n'
                f'username = "{name}"\npassword_env = "LOOKOUT_MQTT_PASSWORD"\nhost = "{name}"\n'
            )
            return str(path)

        config = fleet_config("laptop")
        env = {
            **os.environ,
            "LOOKOUT_STATE_DIR": str(host / "state"),
            "LOOKOUT_CONFIG": config,
            "LOOKOUT_MQTT_PASSWORD": logins["laptop"],
        }
        hook = subprocess.run(
            [sys.executable, "-I", "-S", str(ROOT / "hooks" / "session_start.py")],
            input=(PAYLOADS / "SessionStart-startup.json").read_text(),
            capture_output=True, text=True, env=env, timeout=60, check=False,
        )  # fmt: skip
        assert hook.returncode == 0

        def lookout(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "lookout", *args],
                capture_output=True, text=True, env={**env, **extra}, cwd=ROOT, timeout=60,
                check=False,
            )  # fmt: skip

        once = lookout("bridge", "--once")
        assert once.returncode == 0, once.stderr
        # devbox, with its own login, sees laptop through the ACL.
        seen = lookout(
            "status", "--fleet", "--json",
            LOOKOUT_CONFIG=fleet_config("devbox"), LOOKOUT_MQTT_PASSWORD=logins["devbox"],
        )  # fmt: skip
        assert seen.returncode == 0, seen.stderr
        fleet = json.loads(seen.stdout)
        assert [(h["host"], h["online"]) for h in fleet["hosts"]] == [("laptop", True)]
        assert [s["host"] for s in fleet["sessions"]] == ["laptop"]
        # Not anonymous, and not with a wrong password.
        wrong = lookout("bridge", "--once", LOOKOUT_MQTT_PASSWORD="not-it")
        assert wrong.returncode == 1 and "refused the connection" in wrong.stderr
    finally:
        proc.terminate()
        proc.wait(10)
