"""`install.py --bridge` on macOS (LOOKOUT_PLATFORM=macos): the launchd agent's plist written,
loaded through the launchctl stand-in, reloaded on a second run, and removed exactly by
--uninstall; a plist that is not lookout's is left alone."""

from __future__ import annotations

import os
import plistlib
import sys
from pathlib import Path

import pytest

from lookout import paths
from lookout.install import plan as installer
from lookout.platform import launchd
from tests.helpers import preinstall_runtime, write_config
from tests.platform.standins import standins

FLEET = '[fleet]\nmqtt = "mqtt://127.0.0.1:1883"\nhost = "laptop"\n'


@pytest.fixture(autouse=True)
def no_running_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proc = tmp_path / "proc"
    proc.mkdir()
    monkeypatch.setenv("LOOKOUT_PROC_DIR", str(proc))


def run(*argv: str) -> tuple[int, list[str]]:
    from lookout.install import cli

    lines: list[str] = []
    parser = cli.build_parser()
    opts = cli.request(parser, parser.parse_args(["--python", sys.executable, *argv]))
    try:
        rc = (installer.do_uninstall if "--uninstall" in argv else installer.do_install)(
            opts, lines.append
        )
    except Exception as exc:  # the CLI's boundary prints these; here the message is the point
        lines.append(f"error: {exc}")
        rc = 1
    return rc, lines


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_writes_loads_reloads_and_removes_the_plist_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_env: Path
) -> None:
    write_config(FLEET)
    preinstall_runtime()  # the runtime an earlier install.py left: not what is tested here
    box = standins(tmp_path, monkeypatch, "macos", "launchctl")
    agents = isolated_env / "Library" / "LaunchAgents"
    agents.mkdir(parents=True)
    (agents / "com.example.other.plist").write_bytes(b"<plist>someone else's</plist>\n")
    before = tree(agents)

    rc, lines = run("--bridge")
    assert rc == 0, lines
    target = agents / f"{launchd.LABEL}.plist"
    text = target.read_text()
    assert launchd.MARK in text
    job = plistlib.loads(target.read_bytes())
    home = paths.runtime_home()
    assert job["Label"] == "io.lookout.bridge"
    assert job["ProgramArguments"] == [sys.executable, "-I", f"{home}/bin/lookout", "bridge"]
    assert job["EnvironmentVariables"] == {
        "LOOKOUT_STATE_DIR": paths.state_dir(),
        "LOOKOUT_CONFIG": paths.config_path(),
    }
    assert job["KeepAlive"] == {"SuccessfulExit": False} and job["RunAtLoad"] is True
    uid = os.getuid()
    assert box.argvs("launchctl") == [["bootstrap", f"gui/{uid}", str(target)]]
    assert f"wrote launchd agent ~/Library/LaunchAgents/{launchd.LABEL}.plist" in lines
    assert f"started io.lookout.bridge (launchctl print gui/{uid}/io.lookout.bridge)" in lines
    assert not (isolated_env / ".config" / "systemd").exists()

    rc, lines = run("--bridge")  # again: booted out and in, the file unchanged
    assert rc == 0, lines
    assert box.argvs("launchctl")[1:] == [
        ["bootout", f"gui/{uid}/io.lookout.bridge"],
        ["bootstrap", f"gui/{uid}", str(target)],
    ]
    assert not any(x.startswith("wrote") for x in lines)

    rc, lines = run("--uninstall")
    assert rc == 0, lines
    assert box.argvs("launchctl")[3:] == [["bootout", f"gui/{uid}/io.lookout.bridge"]]
    assert tree(agents) == before  # exactly undone: only lookout's plist went
    assert f"removed launchd agent ~/Library/LaunchAgents/{launchd.LABEL}.plist (stopped)" in lines


def test_a_plist_that_is_not_lookouts_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_env: Path
) -> None:
    write_config(FLEET)
    preinstall_runtime()  # the runtime an earlier install.py left: not what is tested here
    box = standins(tmp_path, monkeypatch, "macos", "launchctl")
    target = isolated_env / "Library" / "LaunchAgents" / f"{launchd.LABEL}.plist"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"<plist>mine</plist>\n")
    rc, lines = run("--bridge")
    assert rc == 0, lines
    assert (
        f"warning: ~/Library/LaunchAgents/{launchd.LABEL}.plist exists and is not lookout's:"
        " left alone" in lines
    )
    rc, _ = run("--uninstall")
    assert rc == 0
    assert target.read_bytes() == b"<plist>mine</plist>\n"
    assert box.argvs("launchctl") == []


def test_a_path_with_xml_characters_stays_a_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOKOUT_STATE_DIR", "/tmp/a&b<c>/state")
    job = plistlib.loads(launchd.plist_text("/opt/py & co/bin/python", Path("/h")).encode())
    assert job["ProgramArguments"][0] == "/opt/py & co/bin/python"
    assert job["EnvironmentVariables"]["LOOKOUT_STATE_DIR"] == "/tmp/a&b<c>/state"
