"""[remote]: answering a permission from the dashboard or `lookout answer` (issue 15). Pure."""

from __future__ import annotations

from lookout.config.trust import PROJECT_FILE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from lookout.config.check import Checker, KeyPath

# Off unless the user's own config turns it on: a repository's .claude/lookout.toml is text the
# user did not write, so it may never enable it, widen `tools` or allow "always".
REMOTE_DEFAULTS: dict[str, Any] = {
    "enabled": False,
    "wait_s": 300,
    "tools": ["*"],
    "allow_always": False,
    "url": "",
}
REMOTE_WAIT_RANGE = (10, 86400)


def check_remote(c: Checker, raw: object) -> dict[str, Any]:
    out = dict(REMOTE_DEFAULTS, tools=list(REMOTE_DEFAULTS["tools"]))
    path: KeyPath = ("remote",)
    why = f"{PROJECT_FILE} (a repository must not turn on answering from afar)"
    raw = c.own_table("remote", raw, tuple(REMOTE_DEFAULTS), why)
    if raw is None:
        return out
    for key in ("enabled", "allow_always"):
        if key in raw and c.expect((*path, key), raw[key], bool, "true or false"):
            out[key] = raw[key]
    if "wait_s" in raw and c.expect((*path, "wait_s"), raw["wait_s"], int, "a whole number"):
        low, high = REMOTE_WAIT_RANGE
        if low <= raw["wait_s"] <= high:
            out["wait_s"] = raw["wait_s"]
        else:
            c.error((*path, "wait_s"), f"expected {low} to {high} seconds, got {raw['wait_s']}")
    if "tools" in raw:
        tools = c.string_list((*path, "tools"), raw["tools"], nonempty=True)
        if tools:
            out["tools"] = tools
    if "url" in raw and c.expect((*path, "url"), raw["url"], str, "a string"):
        url = raw["url"].strip().rstrip("/")
        bad = any(ch in '?#@"\\<>' or ch.isspace() for ch in url)
        if url and (bad or not url.startswith(("http://", "https://"))):
            c.error(
                (*path, "url"),
                "expected the dashboard's address, e.g."
                " https://laptop.tailnet.ts.net:8787 (no query, no token)",
            )
        else:
            out["url"] = url
    return out
