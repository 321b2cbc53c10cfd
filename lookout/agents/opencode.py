"""OpenCode: lookout's plugin, ${XDG_CONFIG_HOME:-~/.config}/opencode/plugin/lookout.js (a file of
lookout's own), forwards trimmed bus events to hooks/opencode.py, stamped in bus order."""

from __future__ import annotations

from lookout import events
from lookout.words import OPENCODE_RUN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from lookout.agents.base import Commentary, Facts, Payload
    from lookout.install import hookfiles
    from lookout.install.checks import Report
    from lookout.steer.agents import Steering

NAME = "opencode"
TITLE = "OpenCode"
SCRIPT = "opencode.py"  # in hooks/: what the plugin runs, for every event
# The plugin stamps each bus event (strictly increasing) and starts one process per event without
# waiting: records are ordered by that stamp, not by when a hook ran (see runner.record_agent).
STAMPED = True
CHILD_HOOKS = True  # its plugin spawns the interpreter itself (procs.CHILD_HOOKS)
# What Allow approves (issue 38): its bash tool's schema is `{command, timeout?, workdir?,
# description}`, the description "what this command does in 5-10 words".
COMMENTARY: dict[str, Commentary] = {
    "bash": {"runs": "command", "fields": frozenset({"description"})},
}


def translate(data: Payload, name: str | None) -> Payload | None:
    """The plugin already tracked what needs memory (turn edges, the last assistant text, which
    tool a permission or question belongs to); this maps its `type` to lookout's events."""
    out = _event(data, name)
    if out is not None and data.get("run") is True:
        # `opencode run`: nobody sits at it; it rejects every dialog itself, at once.
        out["lookout_entrypoint"] = OPENCODE_RUN
    return out


def _event(data: Payload, name: str | None) -> Payload | None:
    kind = events.nonempty(data.get("type")) or name or ""
    session = data.get("sessionID")
    cwd = data.get("directory")
    base = events.base_payload
    tool: Payload = {"tool_name": data.get("tool"), "tool_input": data.get("input")}
    if data.get("callID") is not None:
        tool["tool_use_id"] = data.get("callID")
    if kind == "session.created":
        return {**base("SessionStart", session, cwd), "source": "startup"}
    if kind == "lookout.resume":
        return {**base("SessionStart", session, cwd), "source": "resume"}
    if kind == "lookout.exit":
        return {**base("SessionEnd", session, cwd), "source": "exit"}
    if kind == "turn.start":
        return {**base("UserPromptSubmit", session, cwd), "prompt": data.get("prompt")}
    if kind == "turn.end":
        return {**base("Stop", session, cwd), "last_assistant_message": data.get("text")}
    if kind == "session.error":
        out = base("StopFailure", session, cwd)
        out["error"] = events.nonempty(data.get("error")) or "error"
        out["last_assistant_message"] = data.get("message")
        return out
    if kind == "tool.start":
        return {**base("PreToolUse", session, cwd), **tool}
    if kind in ("tool.end", "tool.error"):
        name = "PostToolUse" if kind == "tool.end" else "PostToolUseFailure"
        return {**base(name, session, cwd), **tool}
    if kind in ("permission.asked", "question.asked"):
        return {**base("PermissionRequest", session, cwd), **tool}
    if kind in ("permission.replied", "question.replied", "question.rejected"):
        return {**base("PermissionReplied", session, cwd), **tool}
    return None


def answer(raw: bytes) -> bytes:
    return b""


# -- its screen (steering: lookout.steer.core reads its input box before typing) ---------------

_BORDER = "\u2503"  # its input box's left border (and a message's in the transcript)
_BOTTOM = "\u2579"  # the box's bottom corner, under its agent and model line
_PLACEHOLDER = "Ask anything\u2026 "  # what its empty box shows while idle (1.18.33)
_FOOTER_LINES = 3  # below the box: its status lines (2 while idle), at most


def _box_rows(screen: str) -> list[str | None] | None:
    """The lines above its box's bottom corner, cut to the box's columns (a sidebar may stand to
    its right): each one's text inside its border, None where it has no border. None when the
    screen does not end with its box."""
    from lookout.steer.screen import styled_lines

    plain = [line.rstrip() for line, _ in styled_lines(screen)]
    filled = [i for i, line in enumerate(plain) if line.strip()]
    bottom = next((i for i in reversed(filled) if plain[i].lstrip().startswith(_BOTTOM)), None)
    if bottom is None or len([i for i in filled if i > bottom]) > _FOOTER_LINES or bottom < 4:
        return None
    left = plain[bottom].index(_BOTTOM)
    right = left + len(plain[bottom][left:].split(" ", 1)[0])
    boxed = [line[left:right] for line in plain[:bottom]]
    return [row[1:].strip() if row.startswith(_BORDER) else None for row in boxed]


def input_box(screen: str) -> str | None:
    """The text in OpenCode's input box ("" when empty), or None when the screen shows none (its
    permission or question dialog takes the box's place). As 1.18.33 draws it: at the bottom, a
    border column of a blank line, the text, a blank line, the agent and model line, then its
    bottom corner; a queued message right above it ends at its own blank line."""
    rows = _box_rows(screen)
    if rows is None or None in rows[-3:] or not rows[-1] or rows[-2]:
        return None  # not its box: no agent line, or no blank line above it
    text: list[str] = []
    for row in reversed(rows[:-2]):
        if row is None:
            return None  # its border ends before the blank line at the box's top
        if not row:
            break
        text.insert(0, row)
    shown = "\n".join(text)
    return "" if shown.startswith(_PLACEHOLDER) else shown


# How lookout types into it, interrupts it and starts it (lookout.steer.agents.Keys).
STEER: Steering | None = {
    "checked": "1.18.33",
    # Typed during a turn it shows "QUEUED", and the model gets it in the same busy stretch
    # (tests/e2e/test_opencode.py). Its permission dialog may be drawn before its detached hook
    # is recorded, so `say` reads its input box (a dialog takes its place) before every key.
    "queues_while_working": True,
    "read_input": input_box,
    "interrupt": ("Escape", "Escape"),  # "esc again to interrupt"
    "multiline": False,
    "prompt_argv": lambda prompt: [f"--prompt={prompt}"],
    "program": "opencode",
    "processes": ("opencode",),
    "reports_interrupt": True,  # as a failed turn (StopFailure: attention error)
}


# -- install and doctor ---------------------------------------------------------------------------

FACTS: Facts = {
    "checked_against": "real client 1.18.33",
    "permission": True,
    "question": True,
    "elicitation": False,
    "failed_turn": True,
    "outcome_question": True,
    "ended": True,  # `opencode run`; a quit TUI fires nothing, its process is then gone
    "subagents": True,  # their dialogs count for the parent
}
# Where the plugin's body is (the runtime ships lookout/agents/*.js).
PLUGIN_BODY = "opencode_plugin.js"


def home() -> Path:
    from pathlib import Path

    from lookout import paths

    return Path(paths.config_home()) / "opencode"


def config_path() -> Path:
    """lookout's plugin among OpenCode's global plugins."""
    return home() / "plugin" / "lookout.js"


def plugin_text(python: str, runtime: Path) -> str:
    import json
    from pathlib import Path

    from lookout import hookspec
    from lookout.install import hookfiles, hooks

    script = str(runtime / "hooks" / SCRIPT)
    # With [remote] on, the deciding hook its plugin starts beside the dialog (as Claude Code
    # runs it): reinstalling after turning [remote] on or off writes it in or out, as for them.
    on = bool(hooks.remote_config().get("enabled"))
    decide = str(runtime / "hooks" / hookspec.REMOTE_SCRIPT) if on else ""
    body = Path(__file__).with_name(PLUGIN_BODY).read_text(encoding="utf-8")
    # json.dumps: a valid JS string literal (ASCII only, so no U+2028 surprises).
    return (
        f"{hookfiles.plugin_mark(TITLE)}\n"
        f"const PYTHON = {json.dumps(python)};\n"
        f"const SCRIPT = {json.dumps(script)};\n"
        f"const DECIDE = {json.dumps(decide)};\n"
        f"{body}"
    )


def plugin_paths(text: str) -> tuple[str, str]:
    """(interpreter, script) a plugin file written by plugin_text runs; ("", "") if unreadable."""
    found = _constants(text)
    return found.get("PYTHON", ""), found.get("SCRIPT", "")


def _constants(text: str) -> dict[str, str]:
    """The string constants plugin_text writes at the top of the plugin."""
    import json

    found: dict[str, str] = {}
    for line in text.splitlines()[1:4]:
        for name in ("PYTHON", "SCRIPT", "DECIDE"):
            prefix = f"const {name} = "
            if line.startswith(prefix) and line.endswith(";"):
                try:
                    value = json.loads(line[len(prefix) : -1])
                except ValueError:
                    continue
                if isinstance(value, str):
                    found[name] = value
    return found


def _wanted(python: str, runtime: Path) -> list[tuple[str, dict[str, Any]]]:
    return []  # no hooks file: the plugin is the whole install


def installer() -> hookfiles.Spec:
    from lookout.install import hookfiles

    return hookfiles.Spec(
        NAME,
        TITLE,
        SCRIPT,
        "plugin",
        config_path(),
        home(),
        (),
        _wanted,
        plugin=plugin_text,
        plugin_paths=plugin_paths,
        also_check=_check_remote,
    )


def _check_remote(report: Report) -> None:
    """[remote] in the config against the plugin's deciding hook: turning it on or off needs
    install.py to run again, which is easy to forget."""
    from lookout.install import checks, hooks

    try:
        decide = _constants(config_path().read_text(encoding="utf-8")).get("DECIDE", "")
    except (OSError, UnicodeDecodeError):
        return
    on = bool(hooks.remote_config().get("enabled"))
    if on and not decide:
        said = "[remote] is on, but lookout's plugin starts no deciding hook: nothing waits"
    elif decide and not on:
        said = "lookout's plugin starts the deciding hook but [remote] is off (it exits at once)"
    else:
        return
    report.add(f"hooks ({NAME})", checks.WARN, said, f"re-run python3 install.py --agent {NAME}")
