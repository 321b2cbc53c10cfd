"""`install.py --bridge`: the MQTT client in lookout's runtime, and `lookout bridge` as a systemd
user service where systemd --user runs (else: how to run it), a launchd agent on macOS
(platform/launchd.py). `--uninstall` removes the unit."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from lookout import paths
from lookout.errors import LookoutError
from lookout.install.files import Out
from lookout.paths import tilde
from lookout.platform import base
from lookout.platform import current as platform
from lookout.platform.base import capture, last_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lookout.config.fleet import FleetConfig

UNIT = "lookout-bridge.service"
UNIT_MARK = "# lookout bridge, written by lookout's install.py --bridge (removed by --uninstall)"
FLEET_DEPS = ("paho-mqtt>=2.1",)


def unit_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "systemd" / "user" / UNIT


def env_file() -> Path:
    """Where the unit reads the broker password variable from (KEY=value lines, 0600)."""
    return Path(paths.config_path()).parent / "fleet.env"


def check_config() -> str | None:
    """The [fleet] the bridge will use, checked before anything is installed; its description.
    None when there is no [fleet] yet (a fresh host): the rest is installed, and what to add is
    said at the end (say_what_to_add)."""
    from lookout.config import fleet

    try:
        cfg = fleet.load()
    except fleet.NotConfigured:
        return None
    return f"{cfg.url} as host {cfg.host}"


def say_what_to_add(dry_run: bool, out: Out) -> None:
    """--bridge without [fleet]: the MQTT client is in (or would be); the table to add, then run
    it again (newuser-5: a fresh host failed here until a plain install had run)."""
    from lookout.config import fleet

    config = tilde(paths.config_path())
    host = fleet.default_host()
    out(
        f"bridge: {'would install' if dry_run else 'installed'} the MQTT client; no [fleet] in"
        f" {config} yet, so no bridge runs. Add (docs/fleet-setup.md):"
    )
    for line in (
        "[fleet]",
        'mqtt = "mqtts://BROKER:8883"',
        'ca_file = "~/.config/lookout/broker-ca.crt"',
        f'username = "{host}"',
        'password_env = "LOOKOUT_MQTT_PASSWORD"',
        f'host = "{host}"',
    ):
        out(f"  {line}")
    out("then: lookout check-config && python3 install.py --bridge")


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
        say_run_it_yourself(out)
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


def say_run_it_yourself(out: Out) -> None:
    """Without systemd --user: how to run the bridge, with the password in its environment
    (cron's has neither it nor ~/.local/bin; newuser-5 defect 9)."""
    from lookout.config import fleet

    command = tilde(paths.bin_dir() / "lookout")
    try:
        var = fleet.load().password_env
    except LookoutError:
        var = None
    out("no systemd --user here: run the bridge yourself, e.g. in tmux or a login script:")
    if var is None:
        out(f"  {command} bridge")
        out(f"  (or from cron: * * * * * {command} bridge --once)")
        return
    env = tilde(env_file())
    out(f"  export {var}=...; {command} bridge")
    out(
        f"  ({var}, named by fleet.password_env, must be in the bridge's environment; cron's has"
        f" neither it nor ~/.local/bin: keep {var}=... in {env} (chmod 600) and use"
        f" * * * * * set -a; . {env}; {command} bridge --once)"
    )


def forget_self(dry_run: bool, out: Out) -> None:
    """--purge: clear this host's own retained topics (its ACL lets it write its own subtree), so
    a removed host leaves every other host's view without an admin. Runs after its bridge was
    stopped (a running one would publish it all again)."""
    from lookout.config import fleet
    from lookout.fleet import bridge as fleet_bridge

    try:
        cfg = fleet.load()
    except LookoutError:
        return  # no [fleet] (or a broken one): nothing this host published that we can name
    if fleet_bridge.running_pid(paths.state_dir()) is not None and not dry_run:
        return  # it did not stop (said above): clearing now, it would publish it all again
    if dry_run:
        out(f"would clear host {cfg.host}'s retained topics on {cfg.url}")
        return
    try:
        with _password_from_env_file(cfg.password_env):
            cleared = _forget(cfg)
    except LookoutError as exc:
        out(
            f"warning: could not clear host {cfg.host}'s retained topics on {cfg.url}: {exc}"
            + (f" ({exc.hint})" if exc.hint else "")
        )
        out(
            f"note: other hosts keep showing {cfg.host} as offline; `lookout fleet forget"
            f" {cfg.host}` as a broker user that may write it (docs/fleet.md: admin) clears it"
        )
        return
    if cleared:
        out(
            f"cleared host {cfg.host}'s {cleared} retained topics on {cfg.url}: the other hosts"
            " no longer show it"
        )


def _forget(cfg: FleetConfig) -> int:
    """How many of cfg.host's retained topics were cleared (0: the broker held none). In this
    interpreter when it has the MQTT client, else through the installed `lookout` command, whose
    runtime has it (`install.py --bridge` put it there; a system python3 seldom has it)."""
    from lookout.fleet import forget, mqtt

    try:
        mqtt.require()
    except LookoutError:
        command = paths.bin_dir() / "lookout"
        if not command.is_file():
            raise
        return _forget_with(str(command), cfg.host)
    try:
        return len(forget.forget(cfg, cfg.host, force=True))
    except forget.NothingHeld:
        return 0


def _forget_with(command: str, host: str) -> int:
    done = capture([command, "fleet", "forget", "--force", host], timeout=60)
    if done.returncode == 0:
        words = done.stdout.split()  # forgot host HOST: cleared N retained topics ...
        return int(words[4]) if len(words) > 4 and words[4].isdigit() else 0
    error = done.stderr.strip().splitlines()
    text = error[0].removeprefix("error: ") if error else f"exit {done.returncode}"
    if "holds nothing for host" in text:
        return 0
    hint = error[1].removeprefix("hint: ") if len(error) > 1 else None
    raise LookoutError(text, hint=hint)


@contextlib.contextmanager
def _password_from_env_file(var: str | None) -> Iterator[None]:
    """The broker password for the purge's own connection: from the environment, else from
    fleet.env (where the systemd unit reads it), for this call only."""
    if not var or os.environ.get(var):
        yield
        return
    try:
        lines = env_file().read_text(encoding="utf-8").splitlines()
    except OSError:
        yield
        return
    value = next((ln.split("=", 1)[1].strip() for ln in lines if ln.startswith(f"{var}=")), "")
    if not value:
        yield
        return
    os.environ[var] = value.strip("\"'")
    try:
        yield
    finally:
        os.environ.pop(var, None)


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
