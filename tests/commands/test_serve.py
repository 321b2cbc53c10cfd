"""`lookout serve` through the real entry point: the login URL, the flags' errors, TLS, and the
warning when the dashboard is reachable from the network without it."""

from __future__ import annotations

import http.client
import json
import re
import signal
import socket
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout.commands import main
from lookout.web import server
from tests.helpers import ROOT, require_binary
from tests.web.conftest import Page, Served, start_serve


@pytest.fixture
def running(state_dir: Path, no_notifications: None) -> Iterator[Served]:
    served = start_serve()
    yield served
    served.stop()


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main.main(["serve", *args])
    out, err = capsys.readouterr()
    return code, out, err


def sign_in(base: str, code: str) -> tuple[int, dict[str, Any]]:
    port = int(base.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(
            "POST", "/api/login", body=json.dumps({"code": code}).encode(),
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def get(base: str, path: str, bearer: str) -> int:
    port = int(base.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {bearer}"})
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def test_url_without_a_running_dashboard_is_an_error(
    capsys: pytest.CaptureFixture[str], state_dir: Path
) -> None:
    # Issue 31 item 3: a link works only on a dashboard already running when it was made (one
    # opened while another user held the port signs no one in later), so none running is an
    # error, not a link for the default address.
    code, out, err = run(capsys, "--url")
    assert (code, out) == (1, "")
    assert err == (
        "error: no `lookout serve` runs here, and a sign-in link works only on a dashboard that"
        " was already running when it was made\nhint: start it: `lookout serve` prints a sign-in"
        " link (--port and --bind name one that runs elsewhere)\n"
    )
    assert not (state_dir / "serve.codes").exists()


def test_url_prints_a_one_time_sign_in_link_without_the_token(
    capsys: pytest.CaptureFixture[str], state_dir: Path
) -> None:
    code, out, err = run(capsys, "--url", "--port", "8787")
    token = (state_dir / "serve.token").read_text().strip()
    assert (code, err) == (0, "")
    assert re.fullmatch(r"http://127\.0\.0\.1:8787/login#code=[A-Za-z0-9_-]{32}\n", out)
    assert token not in out
    other = run(capsys, "--url", "--bind", "::1", "--port", "9000")[1]
    assert other.startswith("http://[::1]:9000/login#code=") and other != out


def test_url_is_the_running_servers(
    capsys: pytest.CaptureFixture[str], running: Served, state_dir: Path
) -> None:
    # issue 22 item 13: `--url` printed the default port while the server ran on another.
    code, out, err = run(capsys, "--url")
    assert code == 0 and out.startswith(f"{running.base}/login#code=")
    assert running.base != "http://127.0.0.1:8787"
    pid = running.process.pid
    assert err == f"note: for the dashboard running at {running.base}/ (pid {pid})\n"
    assert sign_in(running.base, out.strip().split("#code=")[1])[0] == 200  # it works there
    recorded = json.loads((state_dir / "serve.json").read_text())
    assert recorded == {"pid": pid, "url": running.base, "port": recorded["port"], "fleet": False}
    assert (state_dir / "serve.json").stat().st_mode & 0o777 == 0o600
    running.process.send_signal(signal.SIGINT)  # how a server stops: it forgets serve.json
    assert running.process.wait(10) == 0
    assert not (state_dir / "serve.json").exists()
    assert run(capsys, "--url")[0] == 1  # none runs now


def test_a_dead_servers_record_is_not_believed(
    capsys: pytest.CaptureFixture[str], state_dir: Path
) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # SIGKILLed servers leave serve.json behind
    state_dir.mkdir(mode=0o700, exist_ok=True)
    record = {"pid": gone.pid, "url": "http://127.0.0.1:9999", "port": 9999, "fleet": False}
    (state_dir / "serve.json").write_text(json.dumps(record))
    code, out, err = run(capsys, "--url")
    assert (code, out) == (1, "")
    assert err.startswith("error: no `lookout serve` runs here")


def test_token_prints_the_api_token(capsys: pytest.CaptureFixture[str], state_dir: Path) -> None:
    code, out, err = run(capsys, "--token")
    assert (code, out, err) == (0, (state_dir / "serve.token").read_text(), "")


def test_url_of_a_wildcard_bind_names_this_host(capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "--url", "--bind", "0.0.0.0")[1]
    assert out.startswith(f"http://{socket.gethostname()}:8787/login#code=")


def test_rotate_signs_out_every_browser_link_and_script(running: Served) -> None:
    # N1: the dashboard's authority can be revoked, in a server that keeps running.
    port = int(running.base.rsplit(":", 1)[1])
    page = Page.sign_in(port, running.new_login().split("#code=")[1])
    unused = running.new_login().split("#code=")[1]
    assert page.json("/api/sessions")[0] == 200
    assert get(running.base, "/api/sessions", running.token) == 200
    done = subprocess.run(
        [sys.executable, "-m", "lookout", "serve", "--rotate"],
        cwd=ROOT, capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "rotated the dashboard token: every signed-in browser, sign-in link and script token no"
        " longer works\nhint: `lookout serve --url` for a new sign-in link, `--token` for scripts\n"
    )
    assert page.json("/api/sessions")[0] == 401
    status, body = page.hello()
    assert (status, body["reason"]) == (401, "revoked")  # the page says `--rotate` signed it out
    assert get(running.base, "/api/sessions", running.token) == 401
    assert sign_in(running.base, unused)[0] == 401
    assert sign_in(running.base, running.login.split("#code=")[1])[0] == 401
    fresh = Page.sign_in(port, running.new_login().split("#code=")[1])
    assert fresh.json("/api/sessions")[0] == 200
    token = subprocess.run(
        [sys.executable, "-m", "lookout", "serve", "--token"],
        cwd=ROOT, capture_output=True, text=True, timeout=30, check=True,
    ).stdout.strip()  # fmt: skip
    assert token != running.token and get(running.base, "/api/sessions", token) == 200


def test_fleet_without_a_fleet_config_says_how_to_add_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "--fleet")
    assert code == 1 and out == ""
    assert err.startswith("error: no config file ~/.config/lookout/config.toml, so no [fleet]")
    assert 'hint: add [fleet] with mqtt = "mqtt://BROKER:1883"' in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tls-cert", "c.pem"], "error: --tls-cert and --tls-key go together\n"),
        (["--tls-key", "k.pem"], "error: --tls-cert and --tls-key go together\n"),
        (["--port", "70000"], "error: --port 70000 is not a TCP port\n"),
        (["--url", "--port", "0"], "error: --url needs the port the dashboard runs on\n"),
        (["--bind", "192.0.2.1"], "error: cannot listen on 192.0.2.1:8787: no such address here\n"),
    ],
)
def test_bad_flags_are_errors_with_a_hint(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out, err = run(capsys, *args)
    assert code == 1 and out == ""
    assert err.startswith(message) and "\nhint: " in err


def test_an_unloadable_certificate_is_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "c.pem").write_text("not a certificate")
    code, _, err = run(capsys, "--tls-cert", str(tmp_path / "c.pem"), "--tls-key", "/nope.pem")
    assert code == 1
    assert err.startswith(f"error: cannot load the TLS certificate {tmp_path / 'c.pem'}")


def test_a_port_in_use_is_an_error(capsys: pytest.CaptureFixture[str], running: Served) -> None:
    port = running.base.rsplit(":", 1)[1]
    code, _, err = run(capsys, "--port", port)
    assert code == 1
    assert err == (
        f"error: cannot listen on 127.0.0.1:{port}: the port is in use\n"
        "hint: is another `lookout serve` running? choose another --port\n"
    )


class _Offline:
    """Stands in for the server where the test must not listen beyond loopback."""

    def __init__(self, bind: str, port: int, *args: Any, **kwargs: Any) -> None:
        self.server_address = (bind, port)

    def serve_forever(self) -> None:
        raise KeyboardInterrupt

    def server_close(self) -> None:
        pass


@pytest.mark.parametrize(
    ("bind", "warned"), [("0.0.0.0", True), ("192.0.2.7", True), ("127.0.0.1", False)]
)
def test_a_network_bind_without_tls_warns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, bind: str, warned: bool
) -> None:
    monkeypatch.setattr(server, "Dashboard", _Offline)
    code, out, err = run(capsys, "--bind", bind)
    assert code == 0
    assert out.startswith("serving the dashboard at http://")
    if warned:
        assert err == (
            f"warning: {bind}:8787 is reachable from the network without TLS: the token and"
            " every session's text cross it in clear text\n"
            "hint: add --tls-cert FILE --tls-key FILE, or keep 127.0.0.1 and use an SSH tunnel\n"
        )
    else:
        assert err == ""


def test_serve_runs_until_ctrl_c(running: Served) -> None:
    assert running.login.startswith("http://127.0.0.1:")
    # Ready: `running` returns once serve printed its sign-in line, which it prints inside the
    # try that turns Ctrl-C into exit 0 (no sleep; a request now would race its handler thread).
    running.process.send_signal(signal.SIGINT)
    _, err = running.process.communicate(timeout=20)
    assert (running.process.returncode, err) == (0, "")


def test_tls(tmp_path: Path, state_dir: Path, no_notifications: None) -> None:
    openssl = require_binary("openssl")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
         "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key),
         "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    served = start_serve("--tls-cert", str(cert), "--tls-key", str(key))
    try:
        assert served.login.startswith("https://127.0.0.1:")
        port = int(served.base.rsplit(":", 1)[1])
        context = ssl.create_default_context(cafile=str(cert))
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
        conn.request("GET", "/login")
        response = conn.getresponse()
        response.read()
        assert response.status == 200 and response.getheader("Set-Cookie") is None
        assert response.getheader("Strict-Transport-Security") == "max-age=31536000"
        conn.request("GET", "/api/sessions", headers={"Authorization": f"Bearer {served.token}"})
        response = conn.getresponse()
        assert response.status == 200 and json.loads(response.read())["sessions"] == []
        conn.close()
        # Plain HTTP on the TLS port gets nothing.
        plain = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        with pytest.raises((http.client.RemoteDisconnected, ConnectionResetError)):
            plain.request("GET", "/api/sessions")
            plain.getresponse()
    finally:
        served.stop()
