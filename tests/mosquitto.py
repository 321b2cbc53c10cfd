"""A real Mosquitto broker for the fleet tests: loopback only, a plain listener and a TLS
listener (a CA and server certificate generated here with openssl), password auth, no
persistence (so a restart loses every retained message, as a crashed broker may)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

USER = "fleet-user"
PASSWORD = "fleet-Pa55-not-a-real-one"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def require(tool: str) -> str:
    path = shutil.which(tool) or (
        f"/usr/sbin/{tool}" if os.path.exists(f"/usr/sbin/{tool}") else None
    )
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{tool} is not installed (.ci/run installs mosquitto and openssl)")
        pytest.skip(f"{tool} is not installed (apt-get install mosquitto openssl)")
    return path


def make_ca(directory: Path) -> None:
    """ca.crt and server.crt/key for 127.0.0.1 and localhost, valid for two days."""
    openssl = require("openssl")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    def run(*args: str) -> None:
        subprocess.run([openssl, *args], cwd=directory, check=True, capture_output=True)

    run(
        "req",
        "-x509",
        *ec,
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "2",
        "-subj",
        "/CN=lookout test CA",
    )
    run("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1")
    (directory / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    run(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.crt",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
    )


class Broker:
    """`acl`: an ACL file for the broker; `users`: more logins (name -> password)."""

    def __init__(
        self, directory: Path, acl: Path | None = None, users: dict[str, str] | None = None
    ) -> None:
        self.dir = directory
        self.binary = require("mosquitto")
        self.port = _free_port()
        self.tls_port = _free_port()
        self.ca = directory / "ca.crt"
        self.proc: subprocess.Popen[bytes] | None = None
        make_ca(directory)
        passwd = directory / "passwd"
        subprocess.run(
            [require("mosquitto_passwd"), "-b", "-c", str(passwd), USER, PASSWORD],
            check=True,
            capture_output=True,
        )
        for name, password in (users or {}).items():
            subprocess.run(
                [require("mosquitto_passwd"), "-b", str(passwd), name, password],
                check=True,
                capture_output=True,
            )
        conf = [
            "per_listener_settings false",
            "allow_anonymous false",
            f"password_file {passwd}",
            "persistence false",
            "log_dest stderr",
            "log_type error",
            "log_type warning",
            f"listener {self.port} 127.0.0.1",
            f"listener {self.tls_port} 127.0.0.1",
            f"cafile {self.ca}",
            f"certfile {directory / 'server.crt'}",
            f"keyfile {directory / 'server.key'}",
        ]
        if acl is not None:
            conf.insert(3, f"acl_file {acl}")
        if os.geteuid() == 0:
            conf.insert(0, "user root")  # else it drops to `mosquitto`, who cannot read 0600 files
        self.conf = directory / "mosquitto.conf"
        self.conf.write_text("\n".join(conf) + "\n")
        self.log = directory / "mosquitto.log"

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    @property
    def tls_url(self) -> str:
        return f"mqtts://127.0.0.1:{self.tls_port}"

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [self.binary, "-c", str(self.conf)], stdout=log, stderr=log
            )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            for port in (self.port, self.tls_port):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                except OSError:
                    break
            else:
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"mosquitto exited: {self.log.read_text()}")
            time.sleep(0.02)
        raise RuntimeError(f"mosquitto did not listen: {self.log.read_text()}")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
        self.proc = None

    def restart(self) -> None:
        self.kill()
        self.start()
