"""`lookout serve`: the live dashboard for a browser (lookout/web); with --url a one-time sign-in
link, with --token the scripts' API token, with --rotate a new token that signs everyone out.

Binds to loopback unless told otherwise, warns when it is reachable from the network without
TLS, and never writes session state (only its own token and login-code files)."""

from __future__ import annotations

import argparse
import errno
import os
import socket
import ssl
import sys
from typing import Any

from lookout import paths, words
from lookout.commands import args
from lookout.errors import LookoutError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lookout.web.hub import Source

DEFAULT_BIND, DEFAULT_PORT = "127.0.0.1", 8787
RUNNING = "serve.json"  # where a running `lookout serve` says it runs, for `--url`
LOOPBACK = ("127.0.0.1", "::1", "localhost")
WILDCARD = ("0.0.0.0", "::", "")  # noqa: S104 - named to recognise them, not to bind


def declare(p: argparse.ArgumentParser) -> None:
    """Serve a live page of every session (and a small JSON API and event stream) from the state
    directory. Every request needs a sign-in: open a link it prints (or `lookout serve --url`) in
    each browser; a link works once, within 5 minutes."""
    p.add_argument(
        "--bind",
        metavar="ADDRESS",
        help="address to listen on (default 127.0.0.1; 0.0.0.0 for the network: add TLS)",
    )
    p.add_argument("--port", type=int, help="TCP port (default 8787; 0: any free port)")
    p.add_argument(
        "--fleet", action="store_true", help="serve every host of the MQTT fleet (lookout[fleet])"
    )
    p.add_argument(
        "--url",
        action="store_true",
        help="print a one-time sign-in link (5 minutes) to the running dashboard and exit",
    )
    p.add_argument(
        "--token",
        action="store_true",
        dest="token_only",
        help="print the API token for scripts' Bearer header",
    )
    p.add_argument(
        "--rotate", action="store_true", help="new token: sign out every browser, void every link"
    )
    p.add_argument("--tls-cert", metavar="FILE", help="serve HTTPS with this PEM certificate")
    p.add_argument("--tls-key", metavar="FILE", help="... and this PEM private key")


def run(ns: argparse.Namespace) -> int:
    return args.call(serve, ns)


def serve(
    *,
    bind: str | None,
    port: int | None,
    fleet: bool,
    url: bool,
    tls_cert: str | None,
    tls_key: str | None,
    token_only: bool = False,
    rotate: bool = False,
) -> int:
    if port is not None and not 0 <= port <= 65535:
        raise LookoutError(f"--port {port} is not a TCP port", hint="use 1-65535 (0: any free one)")
    from lookout.web import auth

    tls = _tls_context(tls_cert, tls_key)
    state_dir = paths.state_dir()
    if rotate:
        auth.rotate(state_dir)
        print(
            "rotated the dashboard token: every signed-in browser, sign-in link and script token"
            " no longer works"
        )
        print("hint: `lookout serve --url` for a new sign-in link, `--token` for scripts")
        return 0
    token = auth.load_or_create(state_dir)
    if token_only:
        print(token)  # for `Authorization: Bearer`; never part of a URL
        return 0
    scheme = "https" if tls else "http"
    if url:
        print(_login_url(_url_base(bind, port, scheme, state_dir), state_dir))
        return 0
    bind = DEFAULT_BIND if bind is None else bind
    port = DEFAULT_PORT if port is None else port
    return _run(bind, port, fleet, tls, token, state_dir)


def _url_base(bind: str | None, port: int | None, scheme: str, state_dir: str) -> str:
    """Where `--url`'s link points: the dashboard that runs here, or the one --bind and --port
    name."""
    if port == 0:
        raise LookoutError("--url needs the port the dashboard runs on", hint="--port 8787")
    if bind is None and port is None:
        return _running_base(state_dir)
    return f"{scheme}://{_url_host(bind or DEFAULT_BIND)}:{port or DEFAULT_PORT}"


def _run(
    bind: str, port: int, fleet: bool, tls: ssl.SSLContext | None, token: str, state_dir: str
) -> int:
    """Serve the dashboard until Ctrl-C."""
    from lookout import store
    from lookout.commands.status import notifications_off
    from lookout.web.hub import Hub
    from lookout.web.server import Dashboard

    hub = Hub(
        _source(state_dir, fleet),
        notifications_off,
        os.path.join(state_dir, store.REQUESTS),
        state_dir,
    )
    try:
        server = Dashboard(bind, port, hub, token, state_dir, tls=tls)
    except OSError as exc:
        raise _listen_error(bind, port, exc) from None
    port = server.server_address[1]
    base = f"{'https' if tls else 'http'}://{_url_host(bind)}:{port}"
    if bind not in LOOPBACK and not bind.startswith("127.") and tls is None:
        _warn_clear_text(bind, port)
    try:  # Ctrl-C is how a server stops: at any moment from here on, a clean exit 0
        _record_running(state_dir, base, port, fleet)
        hub.start()
        print(f"serving the dashboard at {base}/ (Ctrl-C to stop)")
        print(f"sign in: {_login_url(base, state_dir)}")
        print(
            "(the link works once, within 5 minutes; another: `lookout serve --url`;"
            " sign every browser out: `lookout serve --rotate`)"
        )
        sys.stdout.flush()
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        _forget_running(state_dir)
        hub.stop()
        server.server_close()
    return 0


def _source(state_dir: str, fleet: bool) -> Source:
    """This machine's sessions, or (--fleet) every host's from the broker, connected now: a
    broker that cannot be reached is an error here, with its hint."""
    if not fleet:
        from lookout.web.source import LocalSource

        return LocalSource(state_dir)
    import lookout.config.fleet
    from lookout.fleet import mqtt
    from lookout.web.fleet import FleetSource

    cfg = lookout.config.fleet.load()
    mqtt.require()
    source = FleetSource(cfg)
    source.start()
    return source


def _warn_clear_text(bind: str, port: int) -> None:
    print(
        f"warning: {bind or '*'}:{port} is reachable from the network without TLS: the token"
        " and every session's text cross it in clear text",
        file=sys.stderr,
    )
    print(
        "hint: add --tls-cert FILE --tls-key FILE, or keep 127.0.0.1 and use an SSH tunnel",
        file=sys.stderr,
    )


def _record_running(state_dir: str, base: str, port: int, fleet: bool) -> None:
    """Say where this server runs (its port may be one the system chose), for `--url`."""
    from lookout import store

    running = {"pid": os.getpid(), "url": base, "port": port, "fleet": fleet}
    try:
        store.ensure_dir(state_dir)
        store.write_json_atomic(os.path.join(state_dir, RUNNING), running)
    except OSError as exc:  # the dashboard works without it; `--url` then says it found none
        print(f"note: cannot write {RUNNING}: {exc.strerror or exc}", file=sys.stderr)


def _forget_running(state_dir: str) -> None:
    """Remove serve.json if it is still this server's (a later server's stays)."""
    path = os.path.join(state_dir, RUNNING)
    recorded = _read_running(path)
    if recorded is not None and recorded["pid"] == os.getpid():
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def _read_running(path: str) -> dict[str, Any] | None:
    from lookout import store

    value = store.read_json(path)
    if not isinstance(value, dict):
        return None
    pid, base = value.get("pid"), value.get("url")
    if type(pid) is not int or not isinstance(base, str):
        return None
    if not base.startswith(("http://", "https://")):
        return None
    return value


def _running_base(state_dir: str) -> str:
    """The URL of the `lookout serve` running on this state directory (stderr says which;
    stdout is the link alone, for scripts). None running is an error: a link works only on a
    dashboard that was already running when it was made, so that one opened while someone
    else held the port signs no one in on the dashboard that starts next."""
    from lookout import procs

    recorded = _read_running(os.path.join(state_dir, RUNNING))
    if recorded is None or not procs.alive(recorded["pid"]):
        raise LookoutError(
            "no `lookout serve` runs here, and a sign-in link works only on a dashboard that"
            " was already running when it was made",
            hint="start it: `lookout serve` prints a sign-in link (--port and --bind name one"
            " that runs elsewhere)",
        )
    base = str(recorded["url"])
    print(f"note: for the dashboard running at {base}/ (pid {recorded['pid']})", file=sys.stderr)
    return base


def _login_url(base: str, state_dir: str) -> str:
    """A one-time sign-in link: the code rides in the fragment, which the browser never sends."""

    from lookout.web import auth

    return f"{base}/login#code={auth.new_code(state_dir, words.now_ms())}"


def _tls_context(cert: str | None, key: str | None) -> ssl.SSLContext | None:
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise LookoutError(
            "--tls-cert and --tls-key go together", hint="give the certificate and its key"
        )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        raise LookoutError(
            f"cannot load the TLS certificate {paths.tilde(cert)} with key {paths.tilde(key)}:"
            f" {getattr(exc, 'strerror', None) or exc}",
            hint="both PEM files, readable by you, the key matching the certificate",
        ) from None
    return context


def _url_host(bind: str) -> str:
    """The host part of a URL that reaches `bind` (a wildcard is reached by this host's name)."""
    host = socket.gethostname() if bind in WILDCARD else bind
    return f"[{host}]" if ":" in host else host


def _listen_error(bind: str, port: int, exc: OSError) -> LookoutError:
    where = f"{bind}:{port}"
    if exc.errno == errno.EADDRINUSE:
        return LookoutError(
            f"cannot listen on {where}: the port is in use",
            hint="is another `lookout serve` running? choose another --port",
        )
    if exc.errno == errno.EACCES:
        return LookoutError(
            f"cannot listen on {where}: permission denied", hint="use a port above 1023"
        )
    if isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL:
        return LookoutError(
            f"cannot listen on {where}: no such address here",
            hint="--bind takes an address of this machine, e.g. 127.0.0.1",
        )
    return LookoutError(f"cannot listen on {where}: {exc.strerror or exc}")
