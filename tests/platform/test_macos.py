"""The macOS module against recording stand-ins (tests/fixtures/platforms): alerter's Focus
action and its printed click, terminal-notifier's -activate/-execute, osascript's plain alert,
replacement by group id, and process truth through kill(pid, 0) and ps."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lookout import reconcile
from lookout.channels import registry
from lookout.jump import focus
from lookout.platform import current, macos
from lookout.platform.base import CLICKS, WORD_JOINER
from lookout.surfaces import desktop
from tests.helpers import wait_for
from tests.platform.standins import Standins, standins

CH = {"type": "desktop", "enabled": True}


def ran(box: Standins, prog: str, count: int = 1) -> list[list[str]]:
    """The argv of `count` runs of a stand-in, once they have recorded them: a notifier started
    in the background (alerter stays up) records when its interpreter is up, maybe after
    channels.send returned."""

    def probe() -> list[list[str]] | None:
        found = box.argvs(prog)
        return found if len(found) >= count else None

    return wait_for(probe, what=f"{count} run(s) of {prog}")


def msg(title: str = "demo · needs permission", body: str = "Bash: ls", **more: object) -> dict:
    return {
        "title": title,
        "body": body,
        "kind": "permission",
        "values": {},
        "intent": {"session_id": "s-1", "kind": "permission"},
        "sequence_id": "lookout-0123456789abcdef0123456789abcdef",
        **more,
    }


def test_alerter_offers_focus_and_reports_the_click(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = standins(tmp_path, monkeypatch, "macos", "alerter", "terminal-notifier", "osascript")
    click = tmp_path / "click"
    monkeypatch.setenv("LOOKOUT_STANDIN_CLICK", str(click))
    m = msg(focus=True)
    assert registry.send(CH, m, 5) == (
        "sent",
        "alerter group lookout-0123456789abcdef0123456789abcdef, Focus action",
        "lookout-0123456789abcdef0123456789abcdef",
    )
    proc, rest = m.pop("focus_proc")
    (argv,) = ran(box, "alerter")
    assert argv == [
        "-title", "demo · needs permission", "-message", "Bash: ls",
        "-group", "lookout-0123456789abcdef0123456789abcdef",
        "-actions", "Focus", "-closeLabel", "Close", "-timeout", "1800",
    ]  # fmt: skip
    click.write_text("Focus\n")  # the user clicks Focus
    monkeypatch.setattr(focus, "resolved", lambda *a: False)
    action, _ = desktop.wait_click(proc, rest, {"kind": "permission"}, str(tmp_path), None, 20)  # type: ignore[typeddict-item]
    assert action == "Focus" and action in CLICKS
    assert box.argvs("terminal-notifier") == [] and box.argvs("osascript") == []


def test_alerter_update_replaces_by_group_and_withdraw_removes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = standins(tmp_path, monkeypatch, "macos", "alerter")
    monkeypatch.setenv("LOOKOUT_STANDIN_STAY", "1")
    first = registry.send(CH, msg(), 5)
    ref = first[2]
    update = msg("demo · handled", "answered in the terminal", update=True, ref=ref)
    update.pop("sequence_id")
    assert registry.send(CH, update, 5) == ("sent", f"alerter group {ref}", ref)
    assert current.get().withdraw(str(ref), 5) is True
    # The alerts stay up in the background: each records its argv once its interpreter is up,
    # in whatever order a busy machine starts them.
    argvs = ran(box, "alerter", 3)
    groups = [a[a.index("-group") + 1] if "-group" in a else a[-1] for a in argvs]
    assert groups == [ref, ref, ref]
    tails = [a[-2:] for a in argvs]
    assert ["-timeout", "30"] in tails and ["-remove", ref] in tails, argvs


def test_terminal_notifier_focus_activates_the_terminal_and_jumps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = standins(tmp_path, monkeypatch, "macos", "terminal-notifier", "osascript")
    monkeypatch.setenv("TERM_PROGRAM", "iTerm.app")
    monkeypatch.delenv("__CFBundleIdentifier", raising=False)
    m = msg(focus=True)
    m["intent"]["session_id"] = "0b7a-4c1e"
    ref = "lookout-0123456789abcdef0123456789abcdef"
    assert registry.send(CH, m, 5) == ("sent", f"terminal-notifier group {ref}", ref)
    (argv,) = box.argvs("terminal-notifier")
    assert argv[:6] == ["-title", "demo · needs permission", "-message", "Bash: ls", "-group", ref]
    assert argv[6:8] == ["-activate", "com.googlecode.iterm2"]
    assert argv[8] == "-execute"
    words = shlex.split(argv[9])
    assert words[0] == "env" and words[1] == f"LOOKOUT_STATE_DIR={os.environ['LOOKOUT_STATE_DIR']}"
    assert words[-2:] == ["jump", "0b7a-4c1e"]


def test_a_session_id_with_shell_characters_gets_no_execute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = standins(tmp_path, monkeypatch, "macos", "terminal-notifier")
    m = msg(focus=True)
    m["intent"]["session_id"] = "x; touch /tmp/pwned $(id)"
    registry.send(CH, m, 5)
    (argv,) = box.argvs("terminal-notifier")
    assert "-execute" not in argv


def test_payload_text_stays_argv_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = standins(tmp_path, monkeypatch, "macos", "terminal-notifier")
    title = "-remove ALL"
    body = '(evil) "quoted" $(id) `id` \x1b]52;c;x\x07'
    registry.send(CH, msg(title, body), 5)
    (argv,) = box.argvs("terminal-notifier")
    # A value an option parser would read as an option or a plist is shown behind a word joiner;
    # control characters are gone.
    assert argv[1] == WORD_JOINER + "-remove ALL"
    assert argv[3] == WORD_JOINER + '(evil) "quoted" $(id) `id`  ]52;c;x '


def test_osascript_has_no_actions_and_doctor_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = standins(tmp_path, monkeypatch, "macos", "osascript")
    assert registry.send(CH, msg(focus=True), 5) == ("sent", "osascript (no actions)", None)
    (argv,) = box.argvs("osascript")
    assert argv[-2:] == ["demo · needs permission", "Bash: ls"]
    assert "Bash: ls" not in " ".join(argv[:-2])  # never inside the script
    ok, detail = current.get().notifier()
    assert ok and "plain alerts only, no actions and no replacement" in detail


@pytest.mark.parametrize(
    ("installed", "says"),
    [
        (("alerter", "terminal-notifier", "osascript"), "alerter at "),
        (("terminal-notifier", "osascript"), "terminal-notifier at "),
    ],
)
def test_doctor_names_the_notifier(
    installed: tuple[str, ...], says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    standins(tmp_path, monkeypatch, "macos", *installed)
    from lookout.channels import desktop

    ok, detail = desktop.notifier()
    assert ok and detail.startswith(says) and "replaces by group id" in detail


def test_no_notifier_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    standins(tmp_path, monkeypatch, "macos")
    monkeypatch.setenv("PATH", str(tmp_path / "standin-bin"))
    assert registry.send(CH, msg(), 5)[:2] == (
        "failed",
        "no notifier found: alerter, terminal-notifier or osascript",
    )


# -- process truth without /proc -------------------------------------------------------------


def test_lstart_parses_ps_format() -> None:
    want = int(time.mktime((2026, 11, 26, 7, 51, 13, 0, 0, -1)))
    assert macos.parse_lstart("Thu Nov 26 07:51:13 2026") == want
    assert macos.parse_lstart("Mon Nov  2 07:51:13 2026") is not None
    assert macos.parse_lstart("garbage") is None


def test_kill_9_is_seen_through_ps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = standins(tmp_path, monkeypatch, "macos", "ps")
    plat = current.get()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        since = int(time.time() * 1000)
        assert plat.alive(child.pid, None, since) is True
        started = plat.start_time(child.pid)
        assert started is not None and abs(started - since / 1000) < 5
        os.kill(child.pid, signal.SIGKILL)
        # Killed, not yet reaped: kill(pid, 0) still succeeds; ps says Z.
        wait_for(lambda: plat.alive(child.pid, None, since) is False, what="ps to say Z")
        assert ["-o", "stat=,lstart=", "-p", str(child.pid)] in box.argvs("ps")
    finally:
        child.kill()
        child.wait()
    assert plat.alive(child.pid, None, since) is False


def test_a_reused_pid_is_not_the_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    standins(tmp_path, monkeypatch, "macos", "ps")
    # The session's first event came before this process started: whatever runs under the
    # recorded pid now is younger than the session, so it is not the session's agent.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        long_ago = int(time.time() * 1000) - 3_600_000
        assert current.get().alive(child.pid, None, long_ago) is False
        assert current.get().alive(child.pid, None, None) is True
    finally:
        child.kill()
        child.wait()


def test_children_from_ps_give_the_same_reconcile_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = tmp_path / "shell-snapshots" / "snapshot-bash-1.sh"
    snapshot.parent.mkdir()
    snapshot.write_text("true\n")
    script = (
        f"source {snapshot} && eval 'sleep 30"
        " && echo '\\''hi'\\''' < /dev/null && pwd -P >| /dev/null"
    )
    child = subprocess.Popen(["bash", "-c", script])
    try:
        current.reset()
        on_linux = wait_for(lambda: reconcile.running_commands(os.getpid()), what="/proc child")
        box = standins(tmp_path, monkeypatch, "macos", "ps")
        on_macos = reconcile.running_commands(os.getpid())
        assert on_macos == on_linux == ["sleep 30 && echo 'hi'"]
        assert box.argvs("ps") == [["-ww", "-A", "-o", "pid=,ppid=,command="]]
    finally:
        child.kill()
        child.wait()


def test_alerter_shows_a_callers_actions_and_prints_the_clicked_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = standins(tmp_path, monkeypatch, "macos", "alerter")
    click = tmp_path / "click"
    click.write_text("Deny\n")
    monkeypatch.setenv("LOOKOUT_STANDIN_CLICK", str(click))
    m = msg(focus=True, actions=["Allow", "Deny", "x,y"])  # not a label: dropped
    assert registry.send(CH, m, 5)[1].endswith("Allow, Deny, Focus action")
    (argv,) = ran(box, "alerter")
    assert argv[argv.index("-actions") + 1] == "Allow,Deny,Focus"
    proc, rest = m.pop("focus_proc")
    monkeypatch.setattr(focus, "resolved", lambda *a: False)
    action, _ = desktop.wait_click(proc, rest, {"kind": "permission"}, str(tmp_path), None, 20)  # type: ignore[typeddict-item]
    assert action == "Deny"


def test_a_process_parent_comes_from_ps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Steering follows the agent up to its tmux pane's process (steer.pane.runs_in): on macOS,
    # with no /proc, each parent comes from `ps -o ppid= -p PID`, and an unknown pid is None.
    child = subprocess.Popen(["sleep", "30"])
    try:
        box = standins(tmp_path, monkeypatch, "macos", "ps")
        assert current.get().parent(child.pid) == os.getpid()
        assert box.argvs("ps") == [["-o", "ppid=", "-p", str(child.pid)]]
        child.kill()
        child.wait()
        assert current.get().parent(child.pid) is None
    finally:
        child.kill()
        child.wait()
