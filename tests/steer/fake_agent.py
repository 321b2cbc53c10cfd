"""A stand-in agent for tests/steer/test_pane.py, run as a tmux pane's own process: it reports
one hook event as an agent does (the real hook script, as its child, so the hook records this
process and the pane it runs in), then reads its terminal raw and appends every byte it gets to
a log, echoing what it shows. `claude-*` modes draw Claude Code's input box (empty, with a
draft, or with the dim placeholder it shows after a failed turn) or a permission dialog first;
`claude-prompts` also reports its prompt hook for what Enter sends, as Claude Code does (while
it works too: it queues the message and fires UserPromptSubmit at once).

usage: fake_agent.py LOG MODE HOOK_SCRIPT PAYLOAD_JSON (an object, or a list of them)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tty

RULE = "\u2500" * 40
# Claude Code 2.1.332 after a failed turn, as it draws it: the cursor (reverse) over the
# placeholder's first letter, the rest dim (fixtures/steer/claude-2.1.332-after-429-styled.txt).
PLACEHOLDER = "\x1b[7mR\x1b[0;2m\x1b[39m\x1b[49mesend your message to try again\x1b[0m"


def main() -> None:
    log, mode, script, payload = sys.argv[1:5]
    # As the real clients: Claude Code names its process to its hooks, Codex's `notify` program
    # gets the payload as its last argument. A list: one hook each (a process serving several
    # sessions). FAKE_PYTHON: the interpreter, when this one runs under another argv[0].
    env = {**os.environ, "CLAUDE_PID": str(os.getpid())}
    python = os.environ.get("FAKE_PYTHON") or sys.executable
    for one in json.loads(payload) if payload.startswith("[") else [json.loads(payload)]:
        body = json.dumps(one)
        if script.endswith("codex_notify.py"):
            subprocess.run([python, "-I", "-S", script, body], env=env, check=True)
        else:
            subprocess.run([python, "-I", "-S", script], input=body.encode(), env=env, check=True)
    tty.setraw(0)
    box = "my draft" if mode == "claude-draft" else ""
    if mode == "plain":
        show("ready> ")
    elif mode == "claude-dialog":
        show(
            f"{RULE}\r\n Bash command\r\n Do you want to proceed?\r\n \u276f 1. Yes\r\n   2. No\r\n"
        )
    elif mode == "claude-placeholder":
        show(f"\x1b[H\x1b[J{RULE}\r\n\u276f\u00a0{PLACEHOLDER}\r\n{RULE}\r\n")
    else:
        draw(box)
    with open(log, "ab", buffering=0) as f:
        while chunk := os.read(0, 4096):
            f.write(chunk)
            text = chunk.decode("utf-8", "replace")
            if mode in ("claude-empty", "claude-draft", "claude-placeholder", "claude-prompts"):
                # As Claude Code: LF is a newline in the box, CR sends what it holds.
                if "\r" in text and mode == "claude-prompts":
                    prompt(script, payload, box + text.split("\r")[0])
                box = "" if "\r" in text else box + text
                draw(box)
            else:
                show(text.replace("\r", "\r\n").replace("\x1b", "^["))


def prompt(script: str, payload: str, text: str) -> None:
    """Its UserPromptSubmit, through the real hook script next to the one it started with."""
    body = {**json.loads(payload), "hook_event_name": "UserPromptSubmit", "prompt": text}
    hook = os.path.join(os.path.dirname(script), "user_prompt_submit.py")
    subprocess.run([sys.executable, "-I", "-S", hook], input=json.dumps(body).encode(), check=True)


def draw(box: str) -> None:
    """Claude Code's input box, drawn again whole: rule, the prompt mark and the text, rule."""
    body = "\r\n  ".join(box.split("\n"))
    show(f"\x1b[H\x1b[J{RULE}\r\n\u276f {body}\r\n{RULE}\r\n")


def show(text: str) -> None:
    os.write(1, text.encode())


if __name__ == "__main__":
    main()
