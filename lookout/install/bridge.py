"""`install.py --bridge`: the MQTT client in lookout's runtime, and `lookout bridge` as a systemd
user service where systemd --user runs (else: how to run it), a launchd agent on macOS
(platform/launchd.py). `--uninstall` removes the unit."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from lookout import paths
from lookout.errors import LookoutError
from lookout.install import files
from lookout.install.files import Out
from lookout.paths import tilde
from lookout.platform import base
from lookout.platform import current as platform
from lookout.platform.base import capture, last_line

UNIT = "lookout-bridge.service"
UNIT_MARK = "# lookout bridge, written by lookout's install.py --bridge (removed by --uninstall)"
FLEET_DEPS = ("paho-mqtt>=2.1",)


def unit_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "systemd" / "user" / UNIT


def env_file() -> Path:
    """Where the unit reads the broker password variable from (KEY=value lines, 0600)."""
    return Path(paths.config_path()).parent / "fleet.env"


def check_config() -> str:
    """The [fleet] the bridge will use, checked before anything is installed; its description."""
    from lookout.config import fleet

    try:
        cfg = fleet.load()
    except fleet.NotConfigured as exc:
        raise LookoutError(
            f"--bridge: {exc}",
            hint=f'add to {tilde(paths.config_path())}:  [fleet]  mqtt = "mqtt://BROKER:1883"'
            f"  (README: Every machine in one view); {files.NOTHING_CHANGED}",
        ) from None
    return f"{cfg.url} as host {cfg.host}"


def ensure_client(python: str, venv: bool, out: Out) -> None:
    """paho-mqtt in the interpreter the runtime uses: pip-installed into lookout's own venv, a
    clear error for an interpreter given with --python."""
    from lookout.install import packages

    packages.ensure(python, FLEET_DEPS, "paho.mqtt.client", venv, out, "--bridge")


def systemd_user() -> bool:
    """Whether a systemd user manager runs for this user (the unit can be started now)."""
    if shutil.which("systemctl") is None:
        return False
    try:
        done = capture(["systemctl", "--user", "show-environment"], timeout=10)
    except OSError:
        return False
    return done.returncode == 0


def _quote(arg: str) -> str:
    # systemd's own quoting: double quotes, backslash escapes; % must be doubled.
    arg = arg.replace("%", "%%")
    if arg and all(c.isalnum() or c in "/._-+=:@" for c in arg):
        return arg
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'


def unit_text(python: str, home: Path) -> str:
    entry = home / "bin" / "lookout"
    return "\n".join(
        [
            UNIT_MARK,
            "[Unit]",
            "Description=lookout bridge: this host's agent sessions on the MQTT broker of [fleet]",
            "After=network-online.target",
            "Wants=network-online.target",
            "",
            "[Service]",
            "Type=simple",
            f"ExecStart={_quote(python)} -I {_quote(str(entry))} bridge",
            # The same state and config as the hooks and the `lookout` command of this install.
            f"Environment={_quote('LOOKOUT_STATE_DIR=' + paths.state_dir())}",
            f"Environment={_quote('LOOKOUT_CONFIG=' + paths.config_path())}",
            f"EnvironmentFile=-{_quote(str(env_file()))}",
            "Restart=on-failure",
            "RestartSec=10",
            "",
            "[Install]",
            "WantedBy=default.target",
            "",
        ]
    )


def install(python: str, home: Path, dry_run: bool, out: Out) -> None:
    service = platform.get().bridge_service()  # macOS: a launchd agent
    if service is not None:
        service.install(python, home, dry_run, out)
        return
    target = unit_path()
    text = unit_text(python, home)
    if not systemd_user():
        base.no_service("systemd --user", out)
        out("  (or from cron: * * * * * lookout bridge --once)")
        return
    write, current = base.service_file(
        target, UNIT_MARK, dry_run, "enable it (systemctl --user)", out
    )
    if not write:
        return
    base.write_service_file(target, current, text, "systemd user unit", out)
    for argv in (["daemon-reload"], ["enable", UNIT], ["restart", UNIT]):
        done = capture(["systemctl", "--user", *argv], timeout=30)
        if done.returncode != 0:
            raise LookoutError(
                f"systemctl --user {' '.join(argv)} failed: {last_line(done)}",
                hint=f"journalctl --user -u {UNIT} shows why",
            )
    out(f"started {UNIT} (systemctl --user status {UNIT}; logs: journalctl --user -u {UNIT})")
    if not env_file().exists():
        out(
            f"note: a password variable named by fleet.password_env goes in {tilde(env_file())}"
            " (NAME=value, chmod 600)"
        )
    out("note: to keep it running while you are logged out: loginctl enable-linger")


def restart_service(out: Out) -> bool:
    """After the runtime changed: restart the bridge's systemd unit if it is lookout's and runs
    (it would run the previous code until then). True when it was restarted."""
    if platform.get().bridge_service() is not None:
        return False  # launchd: install.py --bridge again reloads it; said with the others
    try:
        ours = UNIT_MARK in unit_path().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if not ours or not systemd_user():
        return False
    active = capture(["systemctl", "--user", "is-active", "--quiet", UNIT], timeout=10)
    if active.returncode != 0:
        return False
    done = capture(["systemctl", "--user", "try-restart", UNIT], timeout=30)
    if done.returncode != 0:
        out(f"warning: systemctl --user try-restart {UNIT} failed: {last_line(done)}")
        return False
    out(f"restarted {UNIT}: the bridge runs the new version")
    return True


def uninstall(dry_run: bool, out: Out) -> None:
    service = platform.get().bridge_service()
    if service is not None:
        service.uninstall(dry_run, out)
        return
    target = unit_path()
    if not base.service_to_remove(target, UNIT_MARK, dry_run, "systemd user unit", out):
        return
    running = systemd_user()
    if running:
        capture(["systemctl", "--user", "disable", "--now", UNIT], timeout=30)
    target.unlink()
    if running:
        capture(["systemctl", "--user", "daemon-reload"], timeout=30)
    out(f"removed systemd user unit {tilde(target)}" + (" (stopped)" if running else ""))


def stop_running(dry_run: bool, out: Out) -> None:
    """--purge: a bridge started by hand would keep publishing from a state directory (and a
    runtime) that is about to go: stop it, or say that it runs."""
    from lookout.fleet import bridge

    state = paths.state_dir()
    pid = bridge.running_pid(state)
    if pid is None:
        return
    if dry_run:
        out(f"would stop the bridge (pid {pid}) that runs for {tilde(state)}")
        return
    try:
        bridge.stop_running(state)
    except LookoutError as exc:
        out(f"warning: {exc}" + (f" ({exc.hint})" if exc.hint else ""))
        return
    out(f"stopped the bridge (pid {pid}) that ran for {tilde(state)} (host shown offline)")
    try:
        from lookout.config import fleet as config

        host = config.load().host
    except LookoutError:
        return
    out(
        f"note: other hosts keep showing {host} as offline; `lookout fleet forget {host}` on"
        " one of them clears it"
    )
