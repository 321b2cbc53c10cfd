"""`lookout jump` against a real tmux server: two tmux sessions, windows, split panes, clients
attached from pseudo-terminals, agent sessions recorded by the real hooks run inside the panes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from lookout import runner
from lookout.errors import LookoutError
from lookout.jump import locate as places
from tests.helpers import payload, short_tmpdir, wait_for, write_config
from tests.jump.world import World, lookout
from tests.receivers import TmuxServer, require

pytestmark = pytest.mark.usefixtures("no_notifications")

API = "aaaa1111-0000-4000-8000-000000000001"
WEB = "bbbb2222-0000-4000-8000-000000000002"
DOC = "cccc3333-0000-4000-8000-000000000003"


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with World() as w:
        w.panes_by_name = {
            "api": w.pane("beta:1.1"),
            "web": w.pane("alpha:1.0"),
            "doc": w.pane("alpha:0.0"),
        }
        # api waits on a permission (first), web is idle, doc works: each from its own pane.
        w.hook(
            w.panes_by_name["api"], tmp_path, "PermissionRequest-Bash", session_id=API, cwd="/w/api"
        )
        w.hook(w.panes_by_name["web"], tmp_path, "Stop", session_id=WEB, cwd="/w/web")
        w.hook(w.panes_by_name["doc"], tmp_path, "PreToolUse-Bash", session_id=DOC, cwd="/w/doc")
        yield w


def fail(out: object) -> tuple[int, list[str]]:
    assert hasattr(out, "returncode") and hasattr(out, "stderr")
    return out.returncode, out.stderr.splitlines()  # type: ignore[union-attr]


def test_hooks_in_panes_record_socket_and_pane(world: World) -> None:
    out = lookout("status", "--json")
    sessions = {s["project"]: s for s in json.loads(out.stdout)["sessions"]}
    api = world.panes_by_name["api"]
    assert sessions["api"]["tmux_pane"] == api
    assert sessions["api"]["tmux"] == {
        "socket": world.socket,
        "pane": api,
        "session": "beta",
        "window": 1,
    }
    assert sessions["web"]["tmux"]["session"] == "alpha"


def test_jump_lands_on_the_exact_pane_across_tmux_sessions(world: World) -> None:
    client = world.attach("alpha")
    assert world.where(client).startswith("alpha:")
    out = lookout("jump", "api")
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")
    assert world.where(client) == f"beta:1.{world.panes_by_name['api']}"
    out = lookout("jump", WEB[:6], "--client", client)
    assert out.returncode == 0, out.stderr
    assert world.where(client) == f"alpha:1.{world.panes_by_name['web']}"


def test_jump_without_a_session_goes_to_the_longest_waiting_then_on(world: World) -> None:
    client = world.attach("alpha")
    assert lookout("jump").returncode == 0
    assert world.where(client) == f"beta:1.{world.panes_by_name['api']}"
    # Again, already there: on to the next one (the most recently idle), then back.
    assert lookout("jump").returncode == 0
    assert world.where(client) == f"alpha:1.{world.panes_by_name['web']}"
    assert lookout("jump").returncode == 0
    assert world.where(client) == f"beta:1.{world.panes_by_name['api']}"


DOCS = "dddd4444-0000-4000-8000-000000000004"
OLD = "eeee5555-0000-4000-8000-000000000005"


@pytest.mark.real
def test_prefix_a_goes_to_the_longest_waiting_from_any_pane_and_cycles_only_the_waiting(
    tmp_path: Path,
) -> None:
    """newuser-3 defect 3: `prefix a` (the binding `tmux-setup --apply` writes) pressed in an
    idle session's pane went on to the next idle session while `jump --print` named the one
    waiting longest. Only a pane of a session that waits on you cycles on."""
    with World() as world:
        api, docs = world.pane("beta:1.1"), world.pane("beta:1.0")  # they wait on you
        web, old = world.pane("alpha:1.0"), world.pane("alpha:1.1")  # idle
        world.hook(old, tmp_path, "Stop", session_id=OLD, cwd="/w/old")
        world.hook(api, tmp_path, "PermissionRequest-Bash", session_id=API, cwd="/w/api")
        world.hook(docs, tmp_path, "PermissionRequest-Bash", session_id=DOCS, cwd="/w/docs")
        world.hook(web, tmp_path, "Stop", session_id=WEB, cwd="/w/web")  # the latest idle
        assert lookout("tmux-setup", "--apply").returncode == 0
        world.tmux("source-file", str(Path.home() / ".tmux.conf"))
        client = world.attach("alpha")

        def press_a(then: str) -> None:
            world.press(client, b"\x02a")  # C-b a
            wait_for(lambda: world.where(client).endswith(f".{then}"), what=f"prefix a to {then}")

        # On the pane of the most recently idle session, the first in the idle order.
        world.tmux("switch-client", "-c", client, "-t", web)
        wait_for(lambda: world.where(client).endswith(f".{web}"), what="the client on web")
        assert lookout("jump", "--print").stdout == f"beta:1.{api}\n"
        press_a(api)
        # On a session that waits: the next one that waits, then round again.
        assert lookout("jump", "--print").stdout == f"beta:1.{docs}\n"  # the same answer
        press_a(docs)
        press_a(api)
        # From the last idle one, from a pane no session runs in: the longest waiting again.
        for elsewhere in (old, world.pane("alpha:0.0")):
            world.tmux("switch-client", "-c", client, "-t", elsewhere)
            wait_for(lambda: world.where(client).endswith(f".{elsewhere}"), what="the switch")
            press_a(api)


def _next_second(world: World, client: str) -> None:
    """Wait until a client attached now is more recently active than `client` (tmux's
    client_activity counts whole seconds)."""
    fmt = "#{client_name} #{client_activity}"
    lines = world.tmux("list-clients", "-F", fmt).splitlines()
    activity = next(int(line.split()[1]) for line in lines if line.split()[0] == client)
    wait_for(lambda: time.time() >= activity + 1, what="the next second")


def test_the_most_recently_active_client_moves_unless_told(world: World) -> None:
    old = world.attach("beta")
    _next_second(world, old)  # client_activity has a one-second resolution
    new = world.attach("alpha")
    world.tmux("select-window", "-t", "beta:0")
    before = world.where(old)
    assert lookout("jump", "web").returncode == 0
    assert world.where(new) == f"alpha:1.{world.panes_by_name['web']}"
    assert world.where(old) == before
    assert lookout("jump", "api", "-c", old).returncode == 0
    assert world.where(old) == f"beta:1.{world.panes_by_name['api']}"


def test_inside_tmux_the_calling_terminals_client_moves(world: World, tmp_path: Path) -> None:
    mine = world.attach("alpha")  # shows alpha:0, where the command runs
    _next_second(world, mine)
    other = world.attach("beta")  # more recently active, but not this terminal's
    other_before = world.where(other)
    caller = world.pane("alpha:0.0")
    world.run_in(
        caller, f"{sys.executable} -m lookout jump api > {tmp_path}/out 2>&1", tmp_path / "j"
    )
    assert (tmp_path / "out").read_text() == ""
    assert world.where(mine) == f"beta:1.{world.panes_by_name['api']}"
    assert world.where(other) == other_before


def test_print_shows_the_target_and_switches_nothing(world: World) -> None:
    client = world.attach("alpha")
    before = world.where(client)
    out = lookout("jump", "--print", "api")
    assert (out.returncode, out.stdout) == (0, f"beta:1.{world.panes_by_name['api']}\n")
    out = lookout("jump", "--print", "--json", "web")
    assert json.loads(out.stdout) == {
        "session_id": WEB,
        "title": "web",
        "project": "web",
        "via": "tmux",
        "target": f"alpha:1.{world.panes_by_name['web']}",
        "socket": world.socket,
    }
    assert world.where(client) == before


def test_jump_names_the_session_by_its_title(world: World) -> None:
    # newuser-3 defect 7: `jump --print --json` had no title; Claude Code's derived name (its
    # registry's `name`) is what `lookout status` shows, and what jump answers to at once.
    from tests.test_client_sessions import capture, write_entry

    write_entry(capture("idle", sessionId=WEB, name="web-0f", nameSource="derived"))
    out = lookout("jump", "--print", "--json", "web-0f")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["title"] == "web-0f"
    assert json.loads(lookout("jump", "--print", "--json", "api").stdout)["title"] == "api"


def test_print_needs_no_client(world: World) -> None:
    out = lookout("jump", "--print")
    assert out.returncode == 0 and out.stdout.startswith("beta:1.%")


# -- every error: `error:` + `hint:`, exit 1, nothing switched ----------------------------------


def test_unknown_session(world: World) -> None:
    assert fail(lookout("jump", "nosuch")) == (
        1,
        [
            "error: no session 'nosuch' is recorded",
            "hint: give the start of a session id (the ID column of `lookout status --all`),"
            " a project or a title",
        ],
    )


def test_ambiguous_prefix(state_dir: Path) -> None:
    now = int(time.time() * 1000)
    for i, sid in enumerate(("abc-1", "abc-2")):  # a second apart: the order is recency's
        runner.record(
            json.dumps(dict(payload("Stop"), session_id=sid)).encode(),
            None,
            now - 1000 + 1000 * i,
            str(state_dir),
            {},
        )
    code, lines = fail(lookout("jump", "abc-"))
    assert code == 1
    assert lines == [
        "error: 'abc-' names 2 sessions: demo (id) — abc-2, idle; demo (id) — abc-1, idle",
        "hint: name one by its id: lookout jump abc-2",
    ]


def test_no_pane_recorded(state_dir: Path) -> None:
    runner.record(
        json.dumps(payload("Stop")).encode(), None, int(time.time() * 1000), str(state_dir), {}
    )
    assert fail(lookout("jump", "demo")) == (
        1,
        [
            "error: demo (cf0b6c18) was not started inside tmux (no pane recorded)",
            "hint: start your agents inside tmux (or kitty/WezTerm with remote control) to jump"
            " to them",
        ],
    )


def test_nothing_to_jump_to(state_dir: Path) -> None:
    assert fail(lookout("jump")) == (
        1,
        [
            "error: no session needs you and none is idle",
            "hint: `lookout status` lists them all; name one: lookout jump SESSION",
        ],
    )


def test_pane_gone(world: World) -> None:
    world.attach("alpha")
    pane = world.panes_by_name["api"]
    world.tmux("kill-pane", "-t", pane)
    assert fail(lookout("jump", "api")) == (
        1,
        [
            f"error: api ({API[:8]}): tmux pane {pane} is gone",
            "hint: its pane was closed; `lookout status` shows where the others are",
        ],
    )
    assert json.loads(lookout("status", "--json").stdout)["sessions"][0]["tmux"] is None


def test_server_gone(world: World) -> None:
    world.tmux("kill-server")
    code, lines = fail(lookout("jump", "api"))
    assert code == 1
    assert lines[0].startswith(f"error: api ({API[:8]}): its tmux server is not running (")
    assert lines[1].startswith("hint: the tmux server it ran in has exited")


def test_no_client_attached(world: World) -> None:
    code, lines = fail(lookout("jump", "api"))
    assert code == 1
    assert lines[0].startswith("error: no tmux client is attached to the server at ")
    assert lines[1].startswith("hint: attach one first: tmux -S ")


def test_a_client_that_is_not_attached(world: World) -> None:
    world.attach("alpha")
    code, lines = fail(lookout("jump", "api", "--client", "/dev/pts/999"))
    assert code == 1
    assert lines[0].startswith("error: tmux client /dev/pts/999 is not attached to the server at")
    assert "list-clients" in lines[1]


def test_json_needs_print() -> None:
    out = lookout("jump", "--json")
    assert out.returncode == 2 and "--json goes with --print" in out.stderr


# -- kitty and WezTerm, through their CLIs (stub binaries: neither GUI can run here) -------------


def stub(tmp_path: Path, name: str, code: int = 0) -> Path:
    """A stand-in for the terminal's CLI that logs its argv and exits with `code`."""
    log = tmp_path / f"{name}.log"
    prog = tmp_path / "bin" / name
    prog.parent.mkdir(exist_ok=True)
    prog.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
        f"if {code}: print('remote control is disabled', file=sys.stderr)\n"
        f"sys.exit({code})\n"
    )
    prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    return log


def with_path(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}


def record(state_dir: Path, env: dict[str, str]) -> None:
    runner.record(
        json.dumps(payload("PermissionRequest-Bash")).encode(),
        None,
        int(time.time() * 1000),
        str(state_dir),
        env,
    )


def test_kitty_window_through_kitty_at(state_dir: Path, tmp_path: Path) -> None:
    record(state_dir, {"KITTY_WINDOW_ID": "7", "KITTY_LISTEN_ON": "unix:/tmp/kitty-42"})
    log = stub(tmp_path, "kitty")
    out = lookout("jump", env=with_path(tmp_path))
    assert out.returncode == 0, out.stderr
    assert json.loads(log.read_text()) == [
        "@",
        "--to",
        "unix:/tmp/kitty-42",
        "focus-window",
        "--match",
        "id:7",
    ]


def test_kitty_without_remote_control_address(state_dir: Path, tmp_path: Path) -> None:
    record(state_dir, {"KITTY_WINDOW_ID": "7"})
    code, lines = fail(lookout("jump", env=with_path(tmp_path)))
    assert code == 1 and "remote control address was not recorded" in lines[0]
    assert lines[1].startswith("hint: set `allow_remote_control yes`")


def test_wezterm_pane_through_wezterm_cli(state_dir: Path, tmp_path: Path) -> None:
    record(state_dir, {"WEZTERM_PANE": "3", "TERM_PROGRAM": "WezTerm"})
    log = stub(tmp_path, "wezterm")
    assert lookout("jump", env=with_path(tmp_path)).returncode == 0
    assert json.loads(log.read_text()) == ["cli", "activate-pane", "--pane-id", "3"]


def test_a_failing_terminal_cli_is_an_error(state_dir: Path, tmp_path: Path) -> None:
    record(state_dir, {"WEZTERM_PANE": "3"})
    stub(tmp_path, "wezterm", code=1)
    assert fail(lookout("jump", env=with_path(tmp_path))) == (
        1,
        [
            "error: wezterm cli activate-pane failed: remote control is disabled",
            "hint: is remote control enabled in WezTerm?",
        ],
    )


def test_zellij_says_how_to_get_there(state_dir: Path) -> None:
    record(state_dir, {"ZELLIJ_SESSION_NAME": "dev", "ZELLIJ_PANE_ID": "2"})
    code, lines = fail(lookout("jump"))
    assert code == 1 and "zellij session 'dev'" in lines[0]
    assert lines[1] == "hint: zellij attach dev"


# -- the API the dashboard and the Focus action call -------------------------------------------


def test_jump_to_a_session_id(world: World, state_dir: Path) -> None:
    client = world.attach("alpha")
    landed = places.jump_to(WEB, state_dir=str(state_dir))
    assert (landed.via, landed.client) == ("tmux", client)
    assert world.where(client) == landed.target
    with pytest.raises(LookoutError, match="no session 'nosuch'"):
        places.jump_to("nosuch", state_dir=str(state_dir))


def test_control_characters_in_a_project_never_reach_the_terminal(state_dir: Path) -> None:
    body = dict(payload("Stop"), cwd="/w/evil\x1b]0;owned\x07")
    runner.record(json.dumps(body).encode(), None, int(time.time() * 1000), str(state_dir), {})
    code, lines = fail(lookout("jump"))
    assert code == 1
    assert (
        lines[0]
        == "error: evil?]0;owned? (cf0b6c18) was not started inside tmux (no pane recorded)"
    )


# -- a tmux socket nobody else can redirect (issue 38, T1) ------------------------------------

ATTACKER = 2002  # another local user (no account needed: setpriv and chown take a bare uid)


def as_attacker(*argv: str) -> str:
    done = subprocess.run(
        ["setpriv", f"--reuid={ATTACKER}", f"--regid={ATTACKER}", "--clear-groups", *argv],
        env={"PATH": os.environ["PATH"], "HOME": "/", "TERM": "xterm"},
        capture_output=True,
        text=True,
        timeout=20,
        check=True,
    )
    return done.stdout.strip()


def attacker_link(directory: Path, target: Path, name: str = "link") -> Path:
    """A symlink at directory/name to `target`, owned by the other user, put in place by one
    rename (as they would flip it)."""
    tmp = directory / f".{name}-{time.monotonic_ns()}"
    tmp.symlink_to(target)
    os.lchown(tmp, ATTACKER, ATTACKER)
    os.replace(tmp, directory / name)
    return directory / name


@dataclass
class Foreign:
    """Our own tmux server (`server`, its socket's directory `own`), a directory of the other
    user's (`theirs`, 0755, theirs) and a sticky one anyone can write (`sticky`, 1777, root's),
    both reachable by that user; `victim`: a directory only we can write."""

    server: TmuxServer
    own: Path
    name: str  # its socket's name in `own`
    theirs: Path
    sticky: Path
    victim: Path


@pytest.fixture
def foreign(state_dir: Path) -> Iterator[Foreign]:
    if os.geteuid() != 0:
        pytest.skip("needs root: the other user's directory and symlinks are made with chown")
    require("tmux", "setpriv")
    base = short_tmpdir("lk-t1-")
    base.chmod(0o711)  # the other user may pass through, not list or write
    theirs, sticky, victim = base / "theirs", base / "sticky", base / "victim"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, ATTACKER, ATTACKER)
    sticky.mkdir()
    sticky.chmod(0o1777)
    victim.mkdir(mode=0o700)
    try:
        with TmuxServer() as server:
            own = Path(server.env["TMUX"].split(",")[0])
            yield Foreign(server, own.parent, own.name, theirs, sticky, victim)
            server.tmux("kill-server")
    finally:
        shutil.rmtree(base)


def record_in(state_dir: Path, socket: str, pane: str = "%0") -> None:
    """A session whose hooks said TMUX=socket (a repository's settings `env` can set it)."""
    body = dict(payload("Stop"), session_id=API, cwd="/w/api")
    env = {"TMUX": f"{socket},1,0", "TMUX_PANE": pane}
    runner.record(json.dumps(body).encode(), None, int(time.time() * 1000), str(state_dir), env)


@pytest.mark.real
@pytest.mark.parametrize("kind", ["their_directory", "their_symlink", "not_there"])
def test_a_socket_path_another_user_could_redirect_is_never_used(
    foreign: Foreign, state_dir: Path, kind: str
) -> None:
    # Only the socket and its directory were checked: a symlink higher up that another user
    # owns (or can replace) passed, and could be flipped to their server between the check and
    # tmux's connect. Every component is checked now; a socket not there is checked the same way.
    if kind == "their_directory":
        link = attacker_link(foreign.theirs, foreign.own)
        why = f"{foreign.theirs} is owned by uid {ATTACKER}, not by you or root"
    elif kind == "their_symlink":  # in /tmp-like sticky directory: the link is theirs to replace
        link = attacker_link(foreign.sticky, foreign.own)
        why = f"{link} is a symlink owned by uid {ATTACKER}, not by you or root"
    else:  # nothing there yet, where anyone can make it appear after the check
        link = foreign.sticky / "tmux-0"
        why = (
            f"its tmux socket {link}/{foreign.name}: {link} is not there, and others can write"
            f" {foreign.sticky}"
        )
    record_in(state_dir, f"{link}/{foreign.name}")
    error = f"error: api ({API[:8]}): lookout will not use its tmux server: {why}"
    assert fail(lookout("jump", "api", "--print")) == (
        1,
        [
            error,
            "hint: its hooks recorded that server from $TMUX (a project's settings `env` can"
            " set it): check where TMUX comes from",
        ],
    )
    assert json.loads(lookout("status", "--json").stdout)["sessions"][0]["tmux"] is None
    write_config("[steer]\nenabled = true\n")
    done = lookout("say", "api", "hello")
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == (
        f"error: api ({API[:8]}): lookout will not type into its tmux server: {why}"
    )


@pytest.mark.real
def test_a_symlink_of_ones_own_is_followed_and_tmux_gets_the_path_it_points_to(
    foreign: Foreign, state_dir: Path, tmp_path: Path
) -> None:
    mine = short_tmpdir("lk-own-")
    try:
        (mine / "link").symlink_to(foreign.own)
        record_in(state_dir, f"{mine}/link/{foreign.name}")
        out = lookout("jump", "api", "--print", "--json")
        assert out.returncode == 0, out.stderr
        # The path tmux is given has no symlink left: nothing in it can be swapped afterwards.
        assert json.loads(out.stdout)["socket"] == str(foreign.own / foreign.name)
    finally:
        shutil.rmtree(mine)


@pytest.mark.real
def test_a_symlink_flipped_to_another_users_server_never_reaches_it(
    foreign: Foreign, state_dir: Path
) -> None:
    # The review's reproduction: the other user's server asks any client that lists its panes
    # to write a file (save-buffer from a hook), which the client does as you. A symlink of
    # theirs, flipped every millisecond between your tmux directory and theirs, while lookout
    # looks the session up again and again: it never connects there.
    trap = foreign.theirs / "srv"
    as_attacker("mkdir", str(trap))
    sock = str(trap / foreign.name)
    victim = foreign.victim / "victim_rc"
    server_pid = as_attacker(
        "tmux", "-S", sock, "-f", "/dev/null", "new", "-d", "-P", "-F", "#{pid}", "sleep 600"
    )
    try:
        as_attacker(
            "tmux",
            "-S",
            sock,
            "set-buffer",
            "-b",
            "pwn",
            "PWNED\n",
            ";",
            "set-hook",
            "-g",
            "after-list-panes",
            f"save-buffer -a -b pwn {victim}",
        )
        link = attacker_link(foreign.theirs, foreign.own)
        record_in(state_dir, f"{link}/{foreign.name}")
        stop = threading.Event()

        def flip() -> None:
            targets = (foreign.own, trap)
            i = 0
            while not stop.is_set():
                i += 1
                attacker_link(foreign.theirs, targets[i % 2])
                time.sleep(0.001)

        flipper = threading.Thread(target=flip)
        flipper.start()
        try:
            results = [lookout("jump", "api", "--print").returncode for _ in range(30)]
        finally:
            stop.set()
            flipper.join()
        assert not victim.exists(), victim.read_text()
        assert set(results) == {1}
        # The trap was armed: a client that lists that server's panes writes the file.
        subprocess.run(["tmux", "-S", sock, "list-panes"], capture_output=True, timeout=10)
        wait_for(victim.exists, 10, "the other user's server to write through its client")
    finally:
        os.kill(int(server_pid), signal.SIGTERM)
