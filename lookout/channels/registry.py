"""Every channel type lookout knows (as pre-commit's all_languages, agents/registry.py): the
`type` of a [channels.NAME] table names one. A new type is a module and a line here.

Imports every type (each light at load: what it sends with, it imports inside `send`). Loaded by
the config check, the sender, `lookout test`, doctor and `lookout channel add`; a hook that reads
the cached config never loads it."""

from __future__ import annotations

from lookout.channels import (
    apprise,
    base,
    command,
    desktop,
    matrix,
    ntfy,
    slack,
    sound,
    telegram,
    webhook,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from lookout.channels.base import ChannelType, Message, Option, Outcome
    from lookout.shapes import Channel

CHANNELS: dict[str, ChannelType] = {
    "desktop": desktop,
    "ntfy": ntfy,
    "webhook": webhook,
    "command": command,
    "apprise": apprise,
    "telegram": telegram,
    "slack": slack,
    "sound": sound,
    "matrix": matrix,
}
NAMES = tuple(CHANNELS)
# Those that leave the machine; those that replace an alert they sent when its episode resolves.
REMOTE = tuple(name for name, kind in CHANNELS.items() if kind.REMOTE)
UPDATABLE = tuple(name for name, kind in CHANNELS.items() if kind.UPDATABLE)
# The answer surfaces the types' buttons are on (their ANSWERS; lookout.surfaces.registry).
ANSWERING = tuple(dict.fromkeys(kind.ANSWERS for kind in CHANNELS.values() if kind.ANSWERS))


def of(ch: Channel) -> ChannelType:
    """The type of a validated channel."""
    return CHANNELS[ch["type"]]


def send(ch: Channel, msg: Message, timeout_s: float) -> Outcome:
    """Deliver `msg` through `ch` and say how it went: a failure, a timeout and even a bug of one
    channel are a `failed` outcome (never an exception that would cost the others their
    delivery), and no detail holds a secret of the channel, nor a piece of one."""
    import subprocess

    from lookout.platform.base import PlatformError

    kind = of(ch)
    secrets = base.secrets_of(ch, kind.SECRETS)
    try:
        result, detail, ref = kind.send(ch, msg, timeout_s)
    except (base.ChannelError, PlatformError) as exc:
        result, detail, ref = "failed", str(exc), None
    except subprocess.TimeoutExpired:
        result, detail, ref = "failed", f"timed out after {timeout_s:g}s", None
    except Exception as exc:  # one channel's bug must not cost the others their delivery
        result, detail, ref = "failed", f"{type(exc).__name__}: {exc}", None
    return result, base.redact(detail, secrets), ref


# -- `lookout channel add` ---------------------------------------------------------------------

# What argparse takes from an option; a flag's types agree on them (its `key` and `help` differ).
_ARGPARSE = ("dest", "metavar", "type", "action", "choices", "default")


def flags() -> dict[str, dict[str, Any]]:
    """Each `channel add` flag, once, as argparse takes it: its help says what it is for each
    type that takes it (`ntfy: server and topic; webhook: the URL; ...`)."""
    found: dict[str, dict[str, Any]] = {}
    helps: dict[str, list[str]] = {}
    for name, kind in CHANNELS.items():
        for opt in kind.OPTIONS:
            found.setdefault(opt["flag"], {k: v for k, v in opt.items() if k in _ARGPARSE})
            helps.setdefault(opt["flag"], []).append(f"{name}: {opt['help']}")
    return {flag: {**kw, "help": "; ".join(helps[flag])} for flag, kw in found.items()}


def add_options(parser: argparse.ArgumentParser) -> None:
    """`channel add`'s type-specific flags (--url, --token-env, ...)."""
    for flag, kw in flags().items():
        parser.add_argument(flag, **kw)


def dest(opt: Option) -> str:
    """The attribute argparse sets for an option."""
    return opt.get("dest") or opt["flag"].lstrip("-").replace("-", "_")


def takers(flag: str) -> list[str]:
    """The types that take `flag`."""
    return [name for name, kind in CHANNELS.items() if any(o["flag"] == flag for o in kind.OPTIONS)]


def table(name: str, given: dict[str, Any]) -> dict[str, Any]:
    """The keys of a new [channels.NAME] table of type `name` from the flags `given` (by dest;
    None: not given), in the order the type lists them."""
    out: dict[str, Any] = {}
    for opt in CHANNELS[name].OPTIONS:
        value = given.get(dest(opt))
        if value is not None:
            out[opt["key"]] = [value] if opt.get("many") else value
    return out
