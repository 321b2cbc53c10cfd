"""`install.py --bridge`: the MQTT client in the runtime and `lookout bridge` as a systemd user
unit, removed again by --uninstall. systemd --user does not run in this container, so
`systemctl` is a recorder on PATH that answers like a user manager (exit 0) or like a machine
without one (exit 1); what is tested is the unit lookout writes and the systemctl calls it makes."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from lookout import paths
from lookout.install import bridge
from lookout.install import cli as install_cli
from lookout.install import plan as installer
from tests.helpers import calls, preinstall_runtime, write_config

FLEET = '[fleet]\nmqtt = "mqtt://127.0.0.1:1883"\nhost = "laptop"\n'


@pytest.fixture(autouse=True)
def no_running_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proc = tmp_path / "proc"
    proc.mkdir()
    monkeypatch.setenv("LOOKOUT_PROC_DIR", str(proc))


def fake_systemctl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, works: bool) -> Path:
    log = tmp_path / "systemctl.jsonl"
    prog = tmp_path / "bin" / "systemctl"
    prog.parent.mkdir(exist_ok=True)
    prog.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
        f"sys.exit(0 if {works!r} else 1)\n"
    )
    prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{prog.parent}:{os.environ['PATH']}")
    return log


def run(*argv: str) -> tuple[int, list[str]]:
    lines: list[str] = []
    from lookout.install import cli

    opts = cli.request(
        cli.build_parser(),
        cli.build_parser().parse_args(["--python", sys.executable, *argv]),
    )
    try:
        rc = (installer.do_uninstall if "--uninstall" in argv else installer.do_install)(
            opts, lines.append
        )
    except Exception as exc:  # the CLI's boundary prints these; here the message is the point
        lines.append(f"error: {exc}")
        rc = 1
    return rc, lines


def test_on_a_fresh_host_it_installs_and_says_what_to_add(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_env: Path
) -> None:
    """newuser-5 defect 8: on a fresh host `--bridge` failed (no config file, so no [fleet])
    until a plain install had run. Now it installs lookout and the MQTT client, and says what to
    add before a bridge can run."""
    from lookout.config import fleet

    preinstall_runtime()
    log = fake_systemctl(tmp_path, monkeypatch, works=True)
    rc, lines = run("--bridge")
    assert rc == 0, lines
    assert (isolated_env / ".claude" / "settings.json").exists()
    assert paths.runtime_home().exists()
    host = fleet.default_host()
    at = lines.index(
        "bridge: installed the MQTT client; no [fleet] in ~/.config/lookout/config.toml yet, so"
        " no bridge runs. Add (docs/fleet-setup.md):"
    )
    assert lines[at + 1 : at + 8] == [
        "  [fleet]",
        '  mqtt = "mqtts://BROKER:8883"',
        '  ca_file = "~/.config/lookout/broker-ca.crt"',
        f'  username = "{host}"',
        '  password_env = "LOOKOUT_MQTT_PASSWORD"',
        f'  host = "{host}"',
        "then: lookout check-config && python3 install.py --bridge",
    ]
    assert not log.exists()  # no unit without a broker to talk to
    # A broken [fleet] still stops before anything changes.
    write_config('[fleet]\nmqtt = "http://x"\n')
    rc, lines = run("--bridge")
    assert rc == 1 and "fleet.mqtt" in lines[-1], lines


def test_installs_and_uninstalls_a_systemd_user_unit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_env: Path
) -> None:
    write_config(FLEET)
    preinstall_runtime()  # the runtime an earlier install.py left: not what is tested here
    log = fake_systemctl(tmp_path, monkeypatch, works=True)
    rc, lines = run("--bridge")
    assert rc == 0, lines
    assert "bridge: mqtt://127.0.0.1:1883 as host laptop" in lines
    unit = isolated_env / ".config" / "systemd" / "user" / "lookout-bridge.service"
    text = unit.read_text()
    assert text.startswith(bridge.UNIT_MARK)
    home = paths.runtime_home()
    assert f"ExecStart={sys.executable} -I {home}/bin/lookout bridge" in text
    assert f"Environment=LOOKOUT_STATE_DIR={paths.state_dir()}" in text
    assert f"Environment=LOOKOUT_CONFIG={paths.config_path()}" in text
    assert "EnvironmentFile=-" in text and "Restart=on-failure" in text
    assert "WantedBy=default.target" in text
    assert calls(log) == [
        ["--user", "show-environment"],
        ["--user", "daemon-reload"],
        ["--user", "enable", "lookout-bridge.service"],
        ["--user", "restart", "lookout-bridge.service"],
    ]
    assert any(x.startswith("started lookout-bridge.service") for x in lines)

    log.unlink()
    rc, lines = run("--uninstall")
    assert rc == 0
    assert not unit.exists()
    assert ["--user", "disable", "--now", "lookout-bridge.service"] in calls(log)
    assert any(x.startswith("removed systemd user unit") for x in lines)


def test_without_systemd_it_says_how_to_run_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_env: Path
) -> None:
    write_config(FLEET)
    preinstall_runtime()  # the runtime an earlier install.py left: not what is tested here
    fake_systemctl(tmp_path, monkeypatch, works=False)
    rc, lines = run("--bridge")
    assert rc == 0, lines
    assert (
        "no systemd --user here: run the bridge yourself, e.g. in tmux or a login script:" in lines
    )
    assert "  ~/.local/bin/lookout bridge" in lines
    assert not (isolated_env / ".config" / "systemd").exists()
    # The password variable must be in the bridge's environment (cron has none of it).
    write_config(FLEET + 'username = "laptop"\npassword_env = "LOOKOUT_MQTT_PASSWORD"\n')
    rc, lines = run("--bridge")
    assert "  export LOOKOUT_MQTT_PASSWORD=...; ~/.local/bin/lookout bridge" in lines
    assert (
        "  (LOOKOUT_MQTT_PASSWORD, named by fleet.password_env, must be in the bridge's"
        " environment; cron's has neither it nor ~/.local/bin: keep LOOKOUT_MQTT_PASSWORD=... in"
        " ~/.config/lookout/fleet.env (chmod 600) and use * * * * * set -a; ."
        " ~/.config/lookout/fleet.env; ~/.local/bin/lookout bridge --once)"
    ) in lines


def test_a_unit_that_is_not_ours_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_env: Path
) -> None:
    write_config(FLEET)
    preinstall_runtime()  # the runtime an earlier install.py left: not what is tested here
    fake_systemctl(tmp_path, monkeypatch, works=True)
    unit = isolated_env / ".config" / "systemd" / "user" / "lookout-bridge.service"
    unit.parent.mkdir(parents=True)
    unit.write_text("[Service]\nExecStart=/bin/true\n")
    rc, lines = run("--bridge")
    assert rc == 0
    assert any("is not lookout's: left alone" in x for x in lines)
    run("--uninstall")
    assert unit.read_text() == "[Service]\nExecStart=/bin/true\n"


def test_unit_quoting() -> None:
    assert bridge._quote("/opt/my env/python") == '"/opt/my env/python"'
    assert bridge._quote("LOOKOUT_STATE_DIR=/a/50%") == '"LOOKOUT_STATE_DIR=/a/50%%"'
    assert bridge._quote("/usr/bin/python3") == "/usr/bin/python3"


def test_bridge_and_uninstall_do_not_mix(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        install_cli.main(["--uninstall", "--bridge"])
    assert done.value.code == 2
    assert "--uninstall always removes the bridge's unit" in capsys.readouterr().err
