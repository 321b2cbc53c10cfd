"""One function per channel type that delivers one message and says how it went.

Runs only in the background sender or `lookout test`, never in a hook. Commands run without a
shell; no URL or token ever appears in a returned detail."""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import time
import urllib.error
import urllib.request

from lookout import templates
from lookout.config.notify import redact_url
from lookout.platform import current as platform
from lookout.platform.base import PlatformError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Outcome = tuple[str, str, str | None]  # (sent | failed | skipped, detail, ref for updates)

NTFY_PRIORITY = {"min": 1, "low": 2, "default": 3, "high": 4, "max": 5, "urgent": 5}
DISCORD_LIMIT = 2000
USER_AGENT = "lookout-notify/0.1"


class ChannelError(Exception):
    """A delivery failed for a reason worth showing as is."""


def by_kind(value: object, kind: str, fallback: object) -> object:
    if isinstance(value, dict):
        return value.get(kind, value.get("default", fallback))
    return fallback if value is None else value


def send(ch: dict[str, Any], msg: dict[str, Any], timeout_s: float) -> Outcome:
    """Deliver `msg` ({title, body, kind, values, ref?, sequence_id?, update?}) through `ch`."""
    secrets = [
        s
        for s in (
            ch.get("url"),
            ch.get("token"),
            _env(ch.get("url_env")),
            _env(ch.get("token_env")),
            *(ch.get("urls") or []),
            *(ch.get("headers") or {}).values(),
        )
        if isinstance(s, str) and s
    ]
    try:
        result, detail, ref = _SENDERS[ch["type"]](ch, msg, timeout_s)
    except (ChannelError, PlatformError) as exc:
        result, detail, ref = "failed", str(exc), None
    except subprocess.TimeoutExpired:
        result, detail, ref = "failed", f"timed out after {timeout_s:g}s", None
    except Exception as exc:  # one channel's bug must not cost the others their delivery
        result, detail, ref = "failed", f"{type(exc).__name__}: {exc}", None
    return result, redact(detail, secrets), ref


def redact(text: str, secrets: list[str]) -> str:
    """`text` without any secret, nor any piece of one: an exception may quote a token cut at
    a newline, inside a repr, or only a URL's path."""
    pieces: set[str] = set()
    for secret in secrets:
        pieces.add(secret)
        if "://" in secret:
            pieces.add(secret.split("://", 1)[1].split("/", 1)[-1])  # the path holds the secret
        pieces.update(p for p in secret.replace("\\", " ").split() if len(p) >= 6)
        pieces.update(repr(secret)[1:-1].split("\\"))
    for piece in sorted((p for p in pieces if len(p) >= 6), key=len, reverse=True):
        if piece in text:
            text = text.replace(piece, redact_url(piece) if "://" in piece else "…")
    return text


def _clean(value: str, what: str, spaces: bool = True) -> str:
    """A header, token or URL must be one line of printable text. Checked before use, so no
    library error can quote it (urllib's would, with the secret in it)."""
    for c in value:
        if ord(c) < 0x20 or ord(c) == 0x7F or (c.isspace() and not (spaces and c == " ")):
            raise ChannelError(f"{what} holds whitespace or control characters")
    return value


def _env(var: object) -> str | None:
    return os.environ.get(var) if isinstance(var, str) and var else None


# -- desktop ---------------------------------------------------------------------------------


def desktop_text(text: str, markup: bool = True) -> str:
    """Text for a notification daemon: no NUL (which would drop the alert) or other control
    characters, and `& < >` escaped where the body is markup (notify-send), so a link or image
    in a message is shown as text, never rendered."""
    text = "".join(" " if (ord(c) < 0x20 and c != "\n") or ord(c) == 0x7F else c for c in text)
    if markup:
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text


def _desktop(ch: dict[str, Any], msg: dict[str, Any], timeout_s: float) -> Outcome:
    # macOS and WSL's Windows toasts are the platform layer's (lookout/platform/); None: here.
    outcome = platform.get().alert(ch, msg, timeout_s)
    if outcome is not None:
        return outcome
    title = desktop_text(msg["title"], markup=False)
    body = desktop_text(msg["body"])
    urgency = "low" if msg.get("update") else str(by_kind(ch.get("urgency"), msg["kind"], "normal"))
    argv = ["notify-send", "-a", ch.get("app_name") or "lookout", "-u", urgency, "-p"]
    if msg.get("update"):
        argv.append("-e")  # the "handled" note should not pile up in the history
        # An alert with buttons is closed first, then the note posted: a daemon that keeps the
        # old actions on a replace (lxqt-notificationd) would show buttons that do nothing.
        ref = str(msg["ref"]) if msg.get("ref") else None
        if ref and not (msg.get("close_first") and desktop_close(ref, timeout_s)):
            argv += ["-r", ref]
    elif msg.get("answer"):
        # Never expires while its request waits (the spec's 0; LXQt's default is 10 s): it is
        # closed when the request ends, and posted again if the daemon closes it anyway.
        argv += ["-t", "0"]
    argv += ["--", title]
    if body:
        argv.append(body)
    if (msg.get("focus") or msg.get("answer")) and not msg.get("update"):
        outcome = _desktop_focus(argv, msg, timeout_s)
        if outcome is not None:
            return outcome
    out = _run(argv, timeout_s)
    ref = out.strip().splitlines()[-1] if out.strip() else None
    ref = ref if ref and ref.isdigit() else None
    return "sent", f"notify-send id {ref}" if ref else "notify-send", ref


FOCUS_ACTION = "--action=default=Focus"  # "default": the body click everywhere, a button in LXQt
NO_ACTIONS = "Actions are not supported"  # notify-send's words when the daemon has none


def answer_actions(msg: dict[str, Any]) -> list[str]:
    """notify-send options for the buttons that answer the alert's request (issue 25): Allow and
    Deny, or a question's options and Deny. Their keys are what notify-send prints on a click."""
    return [
        f"--action={key}={desktop_text(label, markup=False)}"
        for key, label in (msg.get("answer") or {}).get("actions", [])
    ]


def _desktop_focus(argv: list[str], msg: dict[str, Any], timeout_s: float) -> Outcome | None:
    """notify-send with a Focus action and/or the buttons that answer a request. It keeps
    running to report a click, so it is handed over (msg["focus_proc"]: the process and what it
    printed after the id) to the sender, which waits for it. None: no action possible here (no
    stdbuf, or a notify-send without --action); send the plain alert instead."""
    stdbuf = shutil.which("stdbuf")
    if stdbuf is None:
        return None  # notify-send 0.8.1 would hold the id in its buffer until it exits
    split = argv.index("--")
    actions = [FOCUS_ACTION] if msg.get("focus") else []
    actions += answer_actions(msg)
    cmd = [stdbuf, "-oL", *argv[:split], *actions, *argv[split:]]
    try:
        proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    except OSError as exc:
        raise ChannelError(f"cannot run notify-send: {exc.strerror or exc}") from None
    assert proc.stdout is not None and proc.stderr is not None
    line, rest = read_line(proc.stdout.fileno(), time.monotonic() + timeout_s)
    if line is None:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
            raise ChannelError(f"timed out after {timeout_s:g}s")
        err = proc.stderr.read().decode("utf-8", "replace").strip()
        if "Unknown option" in err:
            return None  # libnotify older than 0.7.10
        tail = f": {err.splitlines()[-1][:200]}" if err else ""
        raise ChannelError(f"notify-send exited with {proc.returncode}{tail}")
    ref = line if line.isdigit() else None
    # A daemon without actions: notify-send shows the alert and exits at once. Its stdout's
    # end tells, not wait(): a reaped-elsewhere child would look like an exit with status 0.
    rest, ended = _until_eof(proc.stdout.fileno(), rest, time.monotonic() + 0.5)
    if not ended or b"\n" in rest:  # still waiting, or already clicked: the sender takes over
        msg["focus_proc"] = (proc, rest)
        what = " and ".join(
            n for n, on in (("Focus", msg.get("focus")), ("answer", msg.get("answer"))) if on
        )
        return "sent", f"notify-send id {ref}, {what} action{'s' if 'answer' in what else ''}", ref
    code = proc.wait()
    err = proc.stderr.read().decode("utf-8", "replace")
    if NO_ACTIONS in err:
        msg.pop("answer", None)  # no buttons were shown: nothing to withdraw
        return "sent", f"notify-send id {ref} (the notification daemon has no actions)", ref
    if code != 0:
        raise ChannelError(f"notify-send exited with {code}: {err.strip()[-200:]}")
    return "sent", f"notify-send id {ref}", ref


def desktop_replace(
    ch: dict[str, Any], ref: str, title: str, body: str, timeout_s: float
) -> Outcome:
    """Replace alert `ref` with a note without actions (the outcome of its request): a popup
    whose request ended never keeps buttons that can no longer answer it. The alert is closed,
    then the note posted (a replace in place keeps the old buttons on lxqt-notificationd); where
    it cannot be closed, it is replaced in place."""
    closed = desktop_close(ref, timeout_s)
    argv = ["notify-send", "-a", ch.get("app_name") or "lookout", "-u", "low", "-e", "-p"]
    if not closed:
        argv += ["-r", ref]
    argv += ["--", desktop_text(title, markup=False), desktop_text(body)]
    out = _run(argv, timeout_s)
    said = out.strip().splitlines()[-1] if out.strip() else ""
    new = said if said.isdigit() else ref
    if closed:
        return "sent", f"notify-send id {ref} closed, the outcome is id {new}", new
    return "sent", f"notify-send id {new} replaced", new


BUS_NAME = "org.freedesktop.Notifications"
BUS_PATH = "/org/freedesktop/Notifications"


def desktop_close(ref: str, timeout_s: float) -> bool:
    """CloseNotification(ref) on the session bus (gdbus, else dbus-send; no shell, no text from
    the alert): True once the daemon took the call."""
    if not ref.isdigit():
        return False
    gdbus, send = shutil.which("gdbus"), shutil.which("dbus-send")
    if gdbus is not None:
        argv = [gdbus, "call", "--session", "--dest", BUS_NAME, "--object-path", BUS_PATH]
        argv += ["--method", f"{BUS_NAME}.CloseNotification", ref]
    elif send is not None:
        argv = [send, "--session", "--type=method_call", "--print-reply", f"--dest={BUS_NAME}"]
        argv += [BUS_PATH, f"{BUS_NAME}.CloseNotification", f"uint32:{ref}"]
    else:
        return False
    try:
        _run(argv, timeout_s)
    except (ChannelError, subprocess.TimeoutExpired):
        return False
    return True


def _until_eof(fd: int, buf: bytes, deadline: float) -> tuple[bytes, bool]:
    """What `fd` gives until its end or the deadline; True if it ended."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return buf, False
        chunk = os.read(fd, 4096)
        if not chunk:
            return buf, True
        buf += chunk


def read_line(fd: int, deadline: float) -> tuple[str | None, bytes]:
    """The first line on `fd` (None at EOF or the deadline) and the bytes after it."""
    buf = b""
    while b"\n" not in buf:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None, buf
        chunk = os.read(fd, 4096)
        if not chunk:
            return None, buf
        buf += chunk
    line, _, rest = buf.partition(b"\n")
    return line.decode("utf-8", "replace").strip(), rest


def _run(argv: list[str], timeout_s: float, env: dict[str, str] | None = None) -> str:
    try:
        proc = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout_s,
            env=env,
            cwd="/",  # N2: never a session's directory, also for `lookout test` run in a clone
            check=False,
        )
    except FileNotFoundError:
        raise ChannelError(f"{argv[0]} not found on PATH") from None
    except PermissionError:
        raise ChannelError(f"{argv[0]} is not executable") from None
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        tail = f": {err[-1][:200]}" if err else ""
        raise ChannelError(f"{os.path.basename(argv[0])} exited with {proc.returncode}{tail}")
    return proc.stdout.decode("utf-8", "replace")


# -- HTTP ----------------------------------------------------------------------------------------


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # urllib then raises HTTPError with the 3xx code


_OPENER = urllib.request.build_opener(_NoRedirect)


def _post(url: str, body: bytes, headers: dict[str, str], timeout_s: float) -> tuple[int, str]:
    if not url.startswith(("http://", "https://")):
        raise ChannelError(f"not an http(s) URL: {redact_url(url)}")
    _clean(url, "the URL", spaces=False)
    for name, value in headers.items():
        _clean(value, f"header {name}")
    req = urllib.request.Request(  # noqa: S310 - http(s) checked above
        url,
        data=body,
        method="POST",
        headers={"User-Agent": USER_AGENT, **headers},
    )
    try:
        with _OPENER.open(req, timeout=timeout_s) as resp:
            return resp.status, resp.read(65536).decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        if 300 <= exc.code < 400:
            # Following it would send the token to wherever the server points (and turn the
            # POST into a GET that publishes nothing): refuse, and say so.
            raise ChannelError(
                f"HTTP {exc.code}: redirect refused (set the URL the server redirects to)"
            ) from None
        text = exc.read(65536).decode("utf-8", "replace") if exc.fp else ""
        return exc.code, text
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError) or "timed out" in str(reason):
            raise ChannelError(f"timed out after {timeout_s:g}s") from None
        raise ChannelError(f"cannot connect to {redact_url(url)}: {reason}") from None
    except TimeoutError:
        raise ChannelError(f"timed out after {timeout_s:g}s") from None


def _http_failure(status: int, text: str) -> str:
    detail = f"HTTP {status}"
    try:
        err = json.loads(text)
    except ValueError:
        err = None
    if isinstance(err, dict) and err.get("error"):
        detail += f": {err['error']}"
        if err.get("code"):
            detail += f" (code {err['code']})"
    elif text.strip():
        detail += f": {text.strip().splitlines()[0][:120]}"
    return detail


def _ntfy(ch: dict[str, Any], msg: dict[str, Any], timeout_s: float) -> Outcome:
    server, _, topic = str(ch["url"]).rstrip("/").rpartition("/")
    token = ch.get("token")
    if ch.get("token_env"):
        token = _env(ch["token_env"])
        if not token:
            raise ChannelError(f"environment variable {ch['token_env']} is not set")
        token = _clean(token, f"environment variable {ch['token_env']}")
    priority = by_kind(ch.get("priority"), msg["kind"], 3)
    if msg.get("update"):
        priority = 2  # replacing an alert should not buzz the phone again
    # JSON publish (to the server root): any title, emoji included, without header encoding.
    payload: dict[str, Any] = {
        "topic": topic,
        "title": msg["title"],
        "message": msg["body"] or msg["title"],
        "priority": NTFY_PRIORITY.get(str(priority), priority),
        "tags": list(ch.get("tags") or []),
    }
    if ch.get("click"):
        payload["click"] = ch["click"]
    link = _link(msg)
    if link:
        # A `view` action opens the request's page (which asks for the dashboard's login); never
        # an `http` action that would itself carry a decision through the broker.
        payload.setdefault("click", link)
        payload["actions"] = [{"action": "view", "label": "Answer", "url": link, "clear": True}]
    seq = msg.get("sequence_id")
    if seq:
        payload["sequence_id"] = seq
    headers = {"Content-Type": "application/json"}
    if token:
        if ":" in token:  # user:password
            headers["Authorization"] = "Basic " + base64.b64encode(token.encode()).decode()
        else:
            headers["Authorization"] = f"Bearer {token}"
    status, text = _post(server + "/", json.dumps(payload).encode(), headers, timeout_s)
    if status != 200:
        raise ChannelError(_http_failure(status, text))
    return "sent", f"HTTP 200 {redact_url(server)}", seq


def _link(msg: dict[str, Any]) -> str | None:
    """The page of the request this alert is about (set by notify when [remote] is on)."""
    url = (msg.get("intent") or {}).get("url")
    return url if isinstance(url, str) and url.startswith(("http://", "https://")) else None


def webhook_body(fmt: str, msg: dict[str, Any]) -> dict[str, Any]:
    title, body = msg["title"], msg["body"]
    link = _link(msg)
    if fmt == "slack":

        def esc(s: str) -> str:  # Slack mrkdwn control characters
            return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

        more = f"\n<{esc(link)}|Answer in lookout>" if link else ""
        return {"text": f"*{esc(title)}*" + (f"\n{esc(body)}" if body else "") + more}
    if fmt == "discord":
        text = f"**{title}**" + (f"\n{body}" if body else "")
        text = templates.truncate(text, DISCORD_LIMIT - (len(link) + 1 if link else 0))
        return {
            "content": text + (f"\n{link}" if link else ""),
            "allowed_mentions": {"parse": []},
        }  # no @everyone from a message's text
    intent = msg.get("intent") or {}
    extra = {"url": link} if link else {}
    return {
        **extra,
        "title": title,
        "message": body,
        "kind": msg["kind"],
        "reason": intent.get("reason"),
        "project": msg["values"].get("project"),
        "session_id": intent.get("session_id"),
        "agent": intent.get("agent"),
        "episode": intent.get("episode"),
        "duration_ms": intent.get("duration_ms"),
        "ts": intent.get("ts"),
    }


def _webhook(ch: dict[str, Any], msg: dict[str, Any], timeout_s: float) -> Outcome:
    url = ch.get("url")
    if ch.get("url_env"):
        url = _env(ch["url_env"])
        if not url:
            raise ChannelError(f"environment variable {ch['url_env']} is not set")
        url = _clean(url, f"environment variable {ch['url_env']}", spaces=False)
    fmt = ch.get("format") or "json"
    headers = {"Content-Type": "application/json", **(ch.get("headers") or {})}
    data = json.dumps(webhook_body(fmt, msg), ensure_ascii=False).encode()
    status, text = _post(str(url), data, headers, timeout_s)
    if not 200 <= status < 300:
        raise ChannelError(_http_failure(status, text))
    return "sent", f"HTTP {status} {redact_url(str(url))}", None


# -- command / apprise -----------------------------------------------------------------------


def _command(ch: dict[str, Any], msg: dict[str, Any], timeout_s: float) -> Outcome:
    values = {**msg["values"], "title": msg["title"], "body": msg["body"]}
    # Each argv item is rendered on its own and passed as one argument: no shell ever sees it.
    argv = [templates.render(arg, values, templates.ARGV_PLACEHOLDERS) for arg in ch["argv"]]
    env = {
        **os.environ,
        "LOOKOUT_TITLE": msg["title"],
        "LOOKOUT_BODY": msg["body"],
        "LOOKOUT_KIND": msg["kind"],
    }
    _run(argv, timeout_s, env)
    return "sent", f"{os.path.basename(argv[0])} exited 0", None


def _apprise(ch: dict[str, Any], msg: dict[str, Any], timeout_s: float) -> Outcome:
    try:
        import apprise  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise ChannelError(
            "the optional 'apprise' package is not installed "
            "(pip install apprise into lookout's environment)"
        ) from None
    ap = apprise.Apprise()
    for url in ch["urls"]:
        if not ap.add(url):
            raise ChannelError(f"apprise does not understand {redact_url(url)}")
    if not ap.notify(title=msg["title"], body=msg["body"] or msg["title"]):
        raise ChannelError("apprise reported a failure")
    return "sent", f"apprise ({len(ch['urls'])} url(s))", None


def _telegram(ch: dict[str, Any], msg: dict[str, Any], timeout_s: float) -> Outcome:
    from lookout.channels import telegram

    return telegram.send(ch, msg, timeout_s)


_SENDERS = {
    "desktop": _desktop,
    "ntfy": _ntfy,
    "webhook": _webhook,
    "command": _command,
    "apprise": _apprise,
    "telegram": _telegram,
}
