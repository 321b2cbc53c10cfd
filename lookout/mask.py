"""The one masker for text that leaves the machine (notifications at every content level, the
fleet bus, anything sent later to Telegram or Home Assistant): credential-looking parts become
`…`. Stdlib only, pure, never raises; it must never make a text longer than a constant per match.

Its input is short (the hook cuts a summary to 200 characters and a message to 2000) and every
pattern is bounded, so the cost stays linear in it. It is a net under a promise, not the promise:
the content levels decide *what* text leaves, this removes the secrets that a command line or a
message commonly carries (tests/fixtures/secrets/).
"""

from __future__ import annotations

import re

MASK = "…"

# A value after a name: a quoted string (closed or cut off by truncation) or one bare word.
_VALUE = r"(\"[^\"]*\"?|'[^']*'?|[^\s'\"]+)"
# Words that make a name secret: API_KEY, db_password, X-Auth-Token, client-secret, ...
_NAME = (
    r"(?:secret|token|passw(?:or)?d|passphrase|pwd|api[_-]?key|apikey|access[_-]?key|"
    r"private[_-]?key|credentials?|auth[_-]?key|session[_-]?key|signature)"
)

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
    re.compile(r"((?:\s|^)-p)(\"[^\"]*\"?|'[^']*'?|[^\s'\"]{3,})"),
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
    r"hf_[A-Za-z0-9]{30,}|dop_v1_[a-f0-9]{64}|"
    r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})"
)
# What is left of a secret at the end of a text cut with … (events.one_line, templates.truncate):
# a token's known prefix, a URL's password or token user name.
_CUT = [
    re.compile(
        r"(\b)((?:sk-|[sr]k_(?:live|test)_|gh[pousr]_|github_pat_|xox[abeoprs]-|xapp-|AKIA|ASIA|"
        r"glpat-|AIza|npm_|pypi-|hf_|dop_v1_|eyJ|tk_)[^\s'\"…]{0,256})(?=…$)"
    ),
    re.compile(r"(://[^/\s:@'\"]{0,256}:)([^/\s@'\"…]{1,256})(?=…$)"),
    re.compile(r"(://)([^/\s:@'\"…]{8,256})(?=…$)"),
]
# Webhook URLs whose path is the secret (Slack, Discord).
_SECRET_PATHS = re.compile(
    r"(https?://(?:hooks\.slack\.com/services|(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks)/)"
    r"([^\s'\"]+)"
)


def mask(text: str) -> str:
    """`text` with every credential-looking part replaced by …"""
    if not text:
        return text
    text = _PRIVATE_KEY.sub(MASK, text)
    text = _SECRET_PATHS.sub(_hide, text)
    for pattern in _RULES:
        text = pattern.sub(_hide, text)
    if text.endswith("…"):
        for pattern in _CUT:
            text = pattern.sub(_hide, text)
    return _TOKENS.sub(MASK, text)


def _hide(m: re.Match[str]) -> str:
    # Keep a quoted value's quotes (the text stays well-formed JSON or shell) and leave what is
    # masked already alone, so that masking twice changes nothing.
    value = m.group(2)
    if value.startswith(MASK):
        return m.group(0)
    if value[0] in "\"'":
        end = value[0] if len(value) > 1 and value.endswith(value[0]) else ""
        hidden = value[0] + MASK + end
    else:
        hidden = MASK
    return m.group(1) + hidden + m.group(0)[m.end(2) - m.start(0) :]
