"""One HTTP POST for the channels that publish over HTTP (ntfy, webhook): no redirect followed, no
secret in what it says; and the opener that follows no redirect, for every channel's calls.
Imported inside a type's `send` (it loads urllib)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from lookout.channels.base import ChannelError, clean, redact_url

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

USER_AGENT = "lookout-notify/0.1"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # urllib then raises HTTPError with the 3xx code


# Every HTTP call of a channel that carries a secret (ntfy, webhook, telegram, matrix) goes
# through it: a redirect would carry the token (in the URL or a header) wherever it points.
OPENER = urllib.request.build_opener(_NoRedirect)


def post(url: str, body: bytes, headers: dict[str, str], timeout_s: float) -> tuple[int, str]:
    """(status, the start of the answer's body); ChannelError when no answer came."""
    if not url.startswith(("http://", "https://")):
        raise ChannelError(f"not an http(s) URL: {redact_url(url)}")
    clean(url, "the URL", spaces=False)
    for name, value in headers.items():
        clean(value, f"header {name}")
    req = urllib.request.Request(  # noqa: S310 - http(s) checked above
        url,
        data=body,
        method="POST",
        headers={"User-Agent": USER_AGENT, **headers},
    )
    try:
        with OPENER.open(req, timeout=timeout_s) as resp:
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


def failure(status: int, text: str) -> str:
    """What a refusing server said: its status, and its error (JSON) or first line."""
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
