"""The one masker for text that leaves the machine (notifications at every content level, the
fleet bus, Telegram and Home Assistant): a credential-looking part is shown by its shape,
`\u2039secret, 24 chars\u203a`, never by any of its characters. Stdlib only, pure, never
raises; it never makes a text longer than a constant per match.

`masked` also says what it hid (the secrets, in order): a view that offers Allow must not hide
code behind a shape, so lookout.remote.shown refuses Allow when a hidden span holds more than
the secret itself (`harmless`). Every pattern is bounded, so the cost stays linear in the text.
It is a net under a promise, not the promise: the content levels decide *what* text leaves,
this removes the secrets that a command line or a message commonly carries
(tests/fixtures/secrets/).
"""

from __future__ import annotations

import re
from typing import NamedTuple

MASK = "…"  # what a text cut short ends with; the masks of older versions were this alone
SHAPE_OPEN, SHAPE_CLOSE = "\u2039", "\u203a"  # ‹secret, 24 chars›  # noqa: RUF003
# A masked value is replaced by a placeholder while the rules run (so that no later rule reads
# into it, and masking twice changes nothing), then by its shape: U+FDD0, its index as one
# character above U+FFFF, U+FDD1. Noncharacters: no text means them, and any the input holds
# are written as `\ufdd0` first, as every view escapes them anyway.
_PH_BASE = 0x10000
_PLACEHOLDER = re.compile("\ufdd0([\U00010000-\U0010ffff]+)\ufdd1")
_NONCHARACTERS = re.compile("[\ufdd0-\ufdef\ufffe\uffff]")
# What a secret never needs and code always does: a masked span holding one of these may hide a
# command (`PASSWORD="`curl x|sh`"`), so no view that offers Allow may mask it.
_PASSES = 4  # the most secrets one command's rule masks (the same rule, again, after each)
_CODE = frozenset(" \t\n\r\x0b\x0c'\"`$|;&()<>\\")

# A value after a name: a quoted string (closed or cut off by truncation) or one bare word.
_VALUE = r"(\"[^\"]*\"?|'[^']*'?|[^\s'\"]+)"
# Words that make a name secret: API_KEY, db_password, X-Auth-Token, client-secret, ...
_NAME = (
    r"(?:secret|token|passw(?:or)?d|passphrase|pwd|api[_-]?key|apikey|access[_-]?key|"
    r"private[_-]?key|credentials?|auth[_-]?key|session[_-]?key|signature)"
)
# A command's other arguments before the one that is secret: bounded, on one command.
_ARGS = r"(?:\s+[^\s;|&]+){0,12}?"
# A command's secret that is not masked yet (a shape, a placeholder, an older …): the rule then
# looks for the command's next one.
_ARG_VALUE = r"(?![\"']?[\u2026\u2039\ufdd0])" + _VALUE

_PRIVATE_KEY = re.compile(
    r"-----BEGIN [A-Z ]{0,20}PRIVATE KEY-----"
    r"(?:.{0,20000}?-----END [A-Z ]{0,20}PRIVATE KEY-----|.*)",
    re.S,
)
# Each rule: group 1 is kept (the name, the user), group 2 is the secret. Order matters: the
# specific shapes run before the generic ones.
_RULES: list[re.Pattern[str]] = [
    # scheme://user:password@host (git, postgres, redis, amqp, https ...): keep the user.
    re.compile(r"(://[^/\s:@'\"]{0,256}:)([^/\s@'\"]{1,256})@"),
    # scheme://LONGTOKEN@host: a token used as the user name.
    re.compile(r"(://)([^/\s:@'\"]{16,256})@"),
    # Authorization: Bearer|Basic|Token|Digest X, Proxy-Authorization too.
    re.compile(r"(?i)(\bauthorization\s*[:=]\s*(?:(?:bearer|basic|token|digest)\s+)?)([^\s'\"]+)"),
    re.compile(r"(?i)(\bbearer\s+)([A-Za-z0-9._~+/=-]{6,})"),
    # Cookie: a=b; c=d (up to the closing quote or the end of the line).
    re.compile(r"(?i)(\b(?:set-)?cookie\s*:\s*)([^'\"\n]+)"),
    # X-Auth-Token abc, X-Api-Key: abc (with or without a colon).
    re.compile(
        r"(?i)(\bx-[a-z0-9-]{0,64}?(?:token|key|secret|auth|password)[a-z0-9-]{0,64}\s*[:=]?\s*)"
        + _VALUE
    ),
    # sshpass -p PASSWORD (options may come first).
    re.compile(r"(\bsshpass\s+(?:-[A-Za-oq-z]\S*\s+){0,4}-p\s*)" + _VALUE),
    # docker login -p X, podman login -p X (--password is a flag like any other, below).
    re.compile(
        r"(\b(?:docker|podman|buildah|skopeo)\s+login\b" + _ARGS + r"\s+-p(?:=|\s+))" + _ARG_VALUE
    ),
    # redis-cli -a PASSWORD.
    re.compile(r"(\bredis-cli\b" + _ARGS + r"\s+-a(?:=|\s+))" + _ARG_VALUE),
    # htpasswd -b [-c] FILE USER PASSWORD, htpasswd -nb USER PASSWORD.
    re.compile(
        r"(\bhtpasswd(?:\s+-[A-Za-mo-z]+){0,4}?\s+-[A-Za-mo-z]*b[A-Za-mo-z]*(?:\s+-[A-Za-mo-z]+)"
        r"{0,4}\s+[^\s'\"-]\S*\s+[^\s'\"-]\S*\s+)" + _VALUE
    ),
    re.compile(
        r"(\bhtpasswd(?:\s+-[A-Za-z]+){0,4}?\s+-[A-Za-z]*(?:nb|bn|n[A-Za-z]*b|b[A-Za-z]*n)[A-Za-z]*"
        r"(?:\s+-[A-Za-z]+){0,4}\s+[^\s'\"-]\S*\s+)" + _VALUE
    ),
    # openssl ... -k PASSWORD, -pass/-passin/-passout pass:PASSWORD.
    re.compile(r"(\bopenssl\b" + _ARGS + r"\s+-k\s+)" + _ARG_VALUE),
    re.compile(r"((?:\s|^)-pass(?:in|out)?\s+[\"']?pass:)([^\s'\"]+)"),
    # ssh-keygen -N NEW_PASSPHRASE, -P OLD_PASSPHRASE.
    re.compile(r"(\bssh-keygen\b" + _ARGS + r"\s+-[NP]\s*)" + _ARG_VALUE),
    # smbclient -U user%password (and the other Samba tools): keep the user.
    re.compile(r"((?:\s|^)(?:-U|--user)(?:=|\s+)?[\"']?[^\s%:'\"]+%)([^\s'\"]+)"),
    # curl -u user:password, --user user:password, --proxy-user: keep the user.
    re.compile(r"((?:\s|^)(?:-u|--user|--proxy-user|-U)(?:=|\s+)?[\"']?[^\s:'\"]+:)([^\s'\"]+)"),
    # aws configure set aws_secret_access_key VALUE (any key, secret or token setting).
    re.compile(
        r"(?i)(\baws\s+configure\s+set\s+[^\s=]{0,64}?(?:key|secret|token)[^\s=]{0,64}\s+)" + _VALUE
    ),
    # "my password is hunter2", "passphrase: x".
    re.compile(r"(?i)(\bpass(?:word|phrase|wd)?\s+(?:is|was|=|:)\s+)" + _VALUE),
    # --password=x, --password x, --token x, --client-secret x, --api-key x.
    re.compile(
        r"(?i)((?:\s|^)--?[a-z0-9-]{0,64}?(?:password|passwd|pass|token|secret|api-?key|access-?key)"
        r"(?:=|\s+))" + _VALUE
    ),
    # mysql -pSECRET, -p'SECRET', -p"SECRET" (a bare -p with a space asks for the password).
    re.compile(r"((?:\s|^)-p(?!ass(?:in|out|word|wd)?\b))(\"[^\"]*\"?|'[^']*'?|[^\s'\"]{3,})"),
    # NAME=VALUE, NAME: VALUE, "name": "value" for a secret-looking name (env, JSON, query).
    re.compile(
        r"(?i)(\b[A-Za-z0-9_.-]{0,64}?" + _NAME + r"[A-Za-z0-9_]{0,64}[\"']?\s*[=:]\s*)" + _VALUE
    ),
]
# Tokens recognisable on their own, wherever they stand.
_TOKENS = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{16,}|[sr]k_(?:live|test)_[A-Za-z0-9]{10,}|"
    r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|"
    r"xox[abeoprs]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}|"
    r"(?:AKIA|ASIA)[0-9A-Z]{16}|tk_[A-Za-z0-9]{20,}|glpat-[A-Za-z0-9_-]{20,}|"
    r"AIza[0-9A-Za-z_-]{35}|npm_[A-Za-z0-9]{36}|pypi-[A-Za-z0-9_-]{40,}|"
    r"hf_[A-Za-z0-9]{30,}|dop_v1_[a-f0-9]{64}|hv[sbr]\.[A-Za-z0-9_-]{24,}|"
    r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})"
    # A legacy Vault token: `s.` and exactly 24 base62 characters, mixed like a random one (so
    # `s.` in ordinary text, `this.s.foo`, stays).
    r"|(?<![\w./-])s\.(?=[A-Za-z0-9]{0,23}[A-Z])(?=[A-Za-z0-9]{0,23}[a-z])(?=[A-Za-z0-9]{0,23}[0-9])"
    r"[A-Za-z0-9]{24}(?![\w.-])"
)
# What is left of a secret at the end of a text cut with … (events.one_line, templates.truncate):
# a token's known prefix, a URL's password or token user name.
_CUT = [
    re.compile(
        r"(\b)((?:sk-|[sr]k_(?:live|test)_|gh[pousr]_|github_pat_|xox[abeoprs]-|xapp-|AKIA|ASIA|"
        r"glpat-|AIza|npm_|pypi-|hf_|dop_v1_|hv[sbr]\.|eyJ|tk_)[^\s'\"…]{0,256})(?=…$)"
    ),
    re.compile(r"((?<![\w./-]))(s\.[A-Za-z0-9]{4,23})(?=…$)"),
    re.compile(r"(://[^/\s:@'\"]{0,256}:)([^/\s@'\"…]{1,256})(?=…$)"),
    re.compile(r"(://)([^/\s:@'\"…]{8,256})(?=…$)"),
]
# Webhook URLs whose path is the secret (Slack, Discord).
_SECRET_PATHS = re.compile(
    r"(https?://(?:hooks\.slack\.com/services|(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks)/)"
    r"([^\s'\"]+)"
)


class Masked(NamedTuple):
    """A masked text and what it hid: each secret as it stood in the text, in order."""

    text: str
    secrets: tuple[str, ...]


def mask(text: str) -> str:
    """`text` with every credential-looking part replaced by its shape."""
    return masked(text).text


def masked(text: str) -> Masked:
    """`text` masked, and the secrets it held (for `harmless`)."""
    if not text:
        return Masked(text, ())
    hidden: list[str] = []
    text = _NONCHARACTERS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)

    def keep(secret: str) -> str:
        hidden.append(secret)
        return "\ufdd0" + _index(len(hidden) - 1) + "\ufdd1"

    def hide(m: re.Match[str]) -> str:
        # Keep a quoted value's quotes (the text stays well-formed JSON or shell) and leave what
        # is masked already alone, so that masking twice changes nothing.
        value = m.group(2)
        if value.lstrip("\"'").startswith((MASK, SHAPE_OPEN, "\ufdd0")):
            return m.group(0)
        rest = m.group(0)[m.end(2) - m.start(0) :]
        if value[0] in "\"'":
            end = value[0] if len(value) > 1 and value.endswith(value[0]) else ""
            inner = value[1 : len(value) - len(end)]
            if not inner:
                return m.group(0)  # -N "": nothing secret in an empty string
            return m.group(1) + value[0] + keep(inner) + end + rest
        return m.group(1) + keep(value) + rest

    text = _PRIVATE_KEY.sub(lambda m: keep(m.group(0)), text)
    text = _SECRET_PATHS.sub(hide, text)
    for pattern in _RULES:
        # `ssh-keygen -P old -N new`: a command's rule masks one value per pass.
        for _ in range(_PASSES if _ARGS in pattern.pattern else 1):
            text, found = pattern.subn(hide, text)
            if not found:
                break
    if text.endswith("…"):
        for pattern in _CUT:
            text = pattern.sub(hide, text)
    text = _TOKENS.sub(lambda m: keep(m.group(0)), text)
    return Masked(
        _PLACEHOLDER.sub(lambda m: _shape(hidden[_number(m.group(1))]), text), tuple(hidden)
    )


def harmless(secret: str) -> bool:
    """The masked span is a secret and nothing else: no whitespace, quote, `$`, backtick, pipe,
    `;`, `&`, parenthesis, redirection or backslash that could hide a command behind it."""
    return not any(c in _CODE or c.isspace() for c in secret)


def _shape(secret: str) -> str:
    what = "private key" if secret.startswith("-----BEGIN") else "secret"
    if secret.endswith("…"):
        return f"{SHAPE_OPEN}{what}, cut{SHAPE_CLOSE}…"
    return f"{SHAPE_OPEN}{what}, {len(secret)} chars{SHAPE_CLOSE}"


def _index(n: int) -> str:
    return chr(_PH_BASE + n)  # one character: up to a million secrets in one text


def _number(s: str) -> int:
    return ord(s) - _PH_BASE
