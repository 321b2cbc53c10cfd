"""What every channel type provides (as pre-commit's lang_base.Language), with the defaults and
helpers the types share (as pre-commit's lang_base helpers: a type assigns one, e.g.
`withdraw = base.cannot_withdraw`).

A channel type is a module, lookout/channels/<name>.py, listed in registry.py: its name, keys and
secret keys, what it can do (leave the machine, replace an alert it sent when its episode
resolves, make a sound, carry the buttons that answer a request, offer Focus), and its functions:
check its [channels.NAME] table, send, replace or withdraw an alert where it can, what doctor and
check-config say about it, and its `lookout channel add` flags.

Loaded where a channel is checked, sent to, tested or doctored: the sender, `lookout test`,
doctor, `channel add`, and a hook's config check, which runs only when a config file changed (a
hook that reads the cached config loads no channel module: the rules read the traits the check
stamped into each channel: `remote`, `updatable`, `loud`). So nothing here or in a type's module
imports typing, json, subprocess or urllib at load: a type imports what it sends with inside
`send`. The interface itself is for the type checker only."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, NotRequired, Protocol, TypedDict

    from lookout.config.check import Checker, KeyPath
    from lookout.shapes import Channel

    Outcome = tuple[str, str, str | None]  # (sent | failed | skipped, detail, ref for updates)
    # {title, body, kind, intent, values, update; ref, sequence_id, focus, answer, buttons, ...;
    # test: sent by `lookout test`}
    Message = dict[str, Any]
    # One doctor line: (the channel it is about, None for the type as a whole; ok | info | warn;
    # what it found; a hint or None).
    Finding = tuple[str | None, str, str, str | None]

    class Option(TypedDict):
        """One `lookout channel add` flag of a type. Types that share a flag agree on everything
        but `key` and `help` (tests/channels/test_registry.py)."""

        flag: str  # --url
        key: str  # the key it sets in [channels.NAME]: url, urls, api_url
        help: str  # what it means for this type
        dest: NotRequired[str]  # argparse's dest, where it is not the flag's name
        metavar: NotRequired[str]
        type: NotRequired[Callable[[str], object]]
        action: NotRequired[str]
        choices: NotRequired[tuple[str, ...]]
        default: NotRequired[None]  # a store_true flag not given writes no key (None)
        many: NotRequired[bool]  # the key takes a list: the flag's value is its one item
        required: NotRequired[bool]  # `channel add` refuses the type without it

    class Doctor(TypedDict):
        """What doctor tells a type's check."""

        answers: bool  # [remote] is on: a button on an alert may answer a request
        # The newest delivery a hook's sender recorded for one of these channels (or None).
        last: Callable[[list[str]], dict[str, Any] | None]
        # errors.log's entries as (epoch ms, text), oldest first: what a type's poller logged.
        errors: Callable[[], list[tuple[int, str]]]

    class ChannelType(Protocol):
        """A module (lookout/channels/<name>.py). Its table's own TypedDict is in the module."""

        @property
        def NAME(self) -> str: ...  # the `type` of [channels.NAME]

        @property
        def KEYS(self) -> tuple[str, ...]: ...  # its own keys, beside COMMON_KEYS

        @property
        def SECRETS(self) -> tuple[str, ...]: ...  # its keys that may hold a secret (below)

        @property
        def TIMEOUT_MS(self) -> int: ...  # timeout_ms when the table does not say

        @property
        def REMOTE(self) -> bool: ...  # it leaves the machine (see below)

        @property
        def UPDATABLE(self) -> bool: ...  # an alert it sent is replaced in place on a resolve

        @property
        def LOUD(self) -> bool: ...  # it makes a sound: a rule's quiet hours mute it (see below)

        @property
        def ANSWERS(self) -> str | None: ...  # the answer surface of its buttons, None: none

        @property
        def STEERS(self) -> bool: ...  # replies in its chat steer (a listener while [steer] is on)

        @property
        def FOCUS(self) -> bool: ...  # its alert offers Focus (a click switches to the session)

        @property
        def OPTIONS(self) -> tuple[Option, ...]: ...  # its `lookout channel add` flags

        @property
        def EXAMPLE(self) -> str: ...  # a `lookout channel add` line that adds one

        def check(self, c: Checker, path: KeyPath, raw: dict[str, Any], ch: Any) -> None:
            """Check the table's own keys (`raw`), every problem into `c`; fill `ch` (the
            validated table, common keys already in it) with each key or its default."""
            ...

        def send(self, ch: Any, msg: Message, timeout_s: float) -> Outcome:
            """Deliver `msg` (msg["update"] with msg["ref"]: replace that alert in place). Raise
            ChannelError (or PlatformError) for a failure worth showing as is."""
            ...

        def replace(self, ch: Any, ref: str, title: str, body: str, timeout_s: float) -> Outcome:
            """Show alert `ref` as a note without buttons (its request's outcome)."""
            ...

        def withdraw(self, ch: Any, ref: str, timeout_s: float) -> bool:
            """Take alert `ref` away; False where it cannot."""
            ...

        def add_buttons(
            self, ch: Any, ref: str, buttons: list[tuple[str, str]], timeout_s: float
        ) -> tuple[str, str]:
            """Put answer buttons under alert `ref`, sent before its request was recorded:
            (sent | failed | skipped, detail)."""
            ...

        def inspect(self, c: Checker, path: KeyPath, ch: Any) -> None:
            """`lookout check-config`'s deeper look at what a valid table names (files on
            disk: a sound pack), every problem into `c`. Never where a hook validates the
            config: `check` is what runs there."""
            ...

        def warnings(self, name: str, ch: Any, answers: bool) -> list[str]:
            """What only shows at send time (`lookout check-config`): a variable not set, a
            package not installed, a risk; `answers`: [remote] is on."""
            ...

        def doctor(self, used: dict[str, Any], ctx: Doctor) -> list[Finding]:
            """doctor's lines for this type: `used` holds its enabled channels some rule sends
            to (maybe none)."""
            ...


# Keys every [channels.NAME] table may have, whatever its type (config/notify checks them).
# A remote type's channels carry the `summary` content level unless they say otherwise, a grace
# period (grace_s) holds them back, and a dialog nobody can answer (print mode) never reaches
# them. A loud type's channels (a sound) keep a rule's quiet hours for every kind, whatever
# `quiet_kinds` says. The config check stamps both traits, and `updatable`, into each channel.
COMMON_KEYS = ("type", "enabled", "timeout_ms", "content")
# A type's SECRETS never reach the hooks' config cache, nor so any job file (the sender reads
# the config itself); a string under one, the values of url, token, urls and headers, and the
# variables token_env and url_env name are taken out of every detail of a send.

# The statuses of a doctor line (lookout.install.checks says the same words).
OK, INFO, WARN = "ok", "info", "warn"


class ChannelError(Exception):
    """A delivery failed for a reason worth showing as is."""


# -- defaults a type assigns ---------------------------------------------------------------------


def cannot_replace(ch: Channel, ref: str, title: str, body: str, timeout_s: float) -> Outcome:
    return "skipped", "this channel cannot replace an alert it sent", None


def cannot_withdraw(ch: Channel, ref: str, timeout_s: float) -> bool:
    return False


def cannot_add_buttons(
    ch: Channel, ref: str, buttons: list[tuple[str, str]], timeout_s: float
) -> tuple[str, str]:
    return "skipped", "this channel carries no buttons"


def nothing_to_inspect(c: Checker, path: KeyPath, ch: Channel) -> None:
    return None


def env_warnings(name: str, ch: Mapping[str, Any], answers: bool) -> list[str]:
    """The variables a channel names (token_env, url_env) that are not set here."""
    out = []
    for key in ("token_env", "url_env"):
        var = ch.get(key)
        if isinstance(var, str) and var and not os.environ.get(var):
            out.append(f"channels.{name}.{key}: environment variable {var} is not set")
    return out


def no_findings(used: dict[str, Any], ctx: Doctor) -> list[Finding]:
    return []


def network_findings(
    kind: str, used: dict[str, Any], risks: Callable[[str, Any], list[str]] | None = None
) -> list[Finding]:
    """doctor on a channel reached over the network: its variables set, and its risks."""
    out: list[Finding] = []
    for name, ch in used.items():
        missing = [ch[key] for key in ("token_env", "url_env") if ch.get(key) and not _env(ch[key])]
        found = risks(name, ch) if risks is not None else []
        if missing:
            out.append((name, WARN, f"{kind}: environment variable {missing[0]} is not set", None))
        elif not found:
            out.append((name, OK, f"{kind} configured (reached over the network when sent)", None))
        out += [(name, WARN, risk.removeprefix(f"channels.{name}."), None) for risk in found]
    return out


# -- helpers -------------------------------------------------------------------------------------


def by_kind(value: object, kind: str, fallback: object) -> object:
    """A key's value for a notification kind: the table's entry, its `default`, or `fallback`."""
    if isinstance(value, dict):
        return value.get(kind, value.get("default", fallback))
    return fallback if value is None else value


def _env(var: object) -> str | None:
    return os.environ.get(var) if isinstance(var, str) and var else None


def env(ch: Mapping[str, Any], key: str) -> str:
    """The value of the variable `ch[key]` names (token_env, url_env); ChannelError when unset."""
    var = ch.get(key)
    value = _env(var)
    if not value:
        raise ChannelError(f"environment variable {var} is not set")
    return value


def clean(value: str, what: str, spaces: bool = True) -> str:
    """A header, token or URL must be one line of printable text. Checked before use, so no
    library error can quote it (urllib's would, with the secret in it)."""
    for c in value:
        if ord(c) < 0x20 or ord(c) == 0x7F or (c.isspace() and not (spaces and c == " ")):
            raise ChannelError(f"{what} holds whitespace or control characters")
    return value


def link(msg: Message) -> str | None:
    """The page of the request this alert is about (set by notify when [remote] is on)."""
    url = (msg.get("intent") or {}).get("url")
    return url if isinstance(url, str) and url.startswith(("http://", "https://")) else None


def secrets_of(ch: Mapping[str, Any], keys: tuple[str, ...] = ()) -> list[str]:
    """Every value of a channel that may hold a secret (`keys`: its type's SECRETS), its
    variables' values included."""
    return [
        s
        for s in (
            ch.get("url"),
            ch.get("token"),
            _env(ch.get("url_env")),
            _env(ch.get("token_env")),
            *(ch.get("urls") or []),
            *(ch.get("headers") or {}).values(),
            *(ch.get(key) for key in keys),
        )
        if isinstance(s, str) and s
    ]


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


def redact_url(url: str) -> str:
    """`https://hooks.slack.com/…`: scheme and host only, never the path that holds the secret."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return "…"
    host = rest.split("/", 1)[0].rpartition("@")[2]
    return f"{scheme}://{host}/…"


def shown_url(url: str) -> str:
    """A URL as a config error may show it: scheme, user and host as written (a typo there is the
    usual mistake), the password and everything after the host (topics, webhook tokens) hidden."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    host, slash, path = rest.partition("/")
    user, at, hostport = host.rpartition("@")
    if at:
        name, colon, _ = user.partition(":")
        host = f"{name}{':…' if colon else ''}@{hostport}"
    tail = "/…" if path else slash
    return f"{scheme}{sep}{host}{tail}"


def scheme_problem(url: str) -> str:
    scheme, sep, _ = url.partition("://")
    return f"the scheme is {scheme!r}, not http or https" if sep else "no http:// or https://"


def check_http_url(c: Checker, path: KeyPath, url: str | None) -> None:
    """An error unless `url` (when set) is http(s), said without its secret parts."""
    if url is not None and not url.startswith(("http://", "https://")):
        c.error(path, f"expected an http(s) URL, got {shown_url(url)!r} ({scheme_problem(url)})")


def required_strings(
    c: Checker, path: KeyPath, raw: dict[str, Any], key: str, what: str
) -> list[str]:
    """The table's `key`, a non-empty list of strings it must have (`what`: what it holds, said
    when it is missing: then [])."""
    if key not in raw:
        c.error(path, f"missing key {key!r} ({what})")
        return []
    return c.string_list((*path, key), raw[key], nonempty=True)


def cleartext_risk(name: str, key: str, url: str, secret: str) -> list[str]:
    """`url` (the channel's `key`) is plain http to a host off this machine: `secret` travels in
    clear text, and whoever reads it can answer requests. A host name is not resolved: only
    `localhost` and loopback addresses count as this machine."""
    from lookout import net

    if not url.startswith("http://") or net.is_loopback_url(url):
        return []
    return [
        f"channels.{name}.{key}: {shown_url(url)} is not encrypted: {secret} crosses the network"
        " in clear text, and whoever holds it can answer your requests (use https://)"
    ]


def plain_text(
    title: str,
    body: str,
    outcome: str | None,
    limit: int,
    size: Callable[[str], int] = len,
    head: Callable[[str, int], str] | None = None,
) -> str:
    """A chat message: title, body (and the outcome once the request ended), as plain text (no
    markup) with control characters made visible; the body cut with "…" to fit `limit` as the
    service counts it (`size`; `head`: the longest start within a size, default a slice)."""
    from lookout.boundary import visible

    parts = [visible(title)]
    if body:
        parts.append(visible(body, keep_newlines=True))
    tail = f"\n\n{visible(outcome)}" if outcome else ""
    text = "\n".join(parts)
    if size(text) + size(tail) > limit:
        room = limit - size(tail) - size("…")
        text = (head(text, room) if head is not None else text[:room]) + "…"
    return text + tail
