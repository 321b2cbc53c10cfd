"""`lookout tmux-setup`: the block in ~/.tmux.conf (a file the user owns) is added once, kept in
place, parsed by a real tmux, and taken out leaving the file byte for byte as it was."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lookout import paths
from lookout.commands import tmux_setup
from tests.helpers import short_tmpdir
from tests.jump.world import lookout
from tests.receivers import require

USER_CONF = b"# my tmux\nset -g mouse on\nbind r source-file ~/.tmux.conf\n"


def conf(home: Path) -> Path:
    return home / ".tmux.conf"


def backups(home: Path) -> list[Path]:
    # Private backups in the runtime (install.registry), never next to the user's file.
    from lookout.install import registry

    assert not list(home.glob(".tmux.conf.bak-*"))
    return registry.backups_of(home / ".tmux.conf")


def test_without_apply_it_prints_and_writes_nothing(isolated_env: Path) -> None:
    out = lookout("tmux-setup")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == tmux_setup.BEGIN
    assert any(
        line.startswith("bind-key a run-shell -b ") and " jump --client '#{client_name}'" in line
        for line in lines
    )
    assert any(
        line.startswith("bind-key A run-shell -b ") and " pick --client" in line for line in lines
    )
    assert any(
        "status --line)" in line and line.startswith("set -ag status-right") for line in lines
    )
    assert lines[-1] == "# add it to ~/.tmux.conf: lookout tmux-setup --apply (a backup is kept)"
    assert not conf(isolated_env).exists()


def test_apply_twice_is_idempotent_and_remove_restores_every_byte(isolated_env: Path) -> None:
    # Through a symlink, as dotfile managers keep it.
    dotfiles = isolated_env / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "tmux.conf").write_bytes(USER_CONF)
    (dotfiles / "tmux.conf").chmod(0o640)
    conf(isolated_env).symlink_to(dotfiles / "tmux.conf")

    out = lookout("tmux-setup", "--apply")
    assert out.returncode == 0, out.stderr
    (backup,) = backups(isolated_env)
    assert out.stdout.splitlines() == [
        "added lookout's tmux block to ~/.tmux.conf (prefix a: jump, prefix A: pick;"
        f" backup: {paths.tilde(backup)})",
        "reload tmux: tmux source-file ~/.tmux.conf",
    ]
    assert backup.read_bytes() == USER_CONF
    text = conf(isolated_env).read_bytes()
    assert text.startswith(USER_CONF) and text.count(tmux_setup.BEGIN.encode()) == 1
    assert conf(isolated_env).is_symlink()
    assert (dotfiles / "tmux.conf").stat().st_mode & 0o777 == 0o640

    again = lookout("tmux-setup", "--apply")
    assert again.stdout == "already set up: ~/.tmux.conf\n"
    assert conf(isolated_env).read_bytes() == text and len(backups(isolated_env)) == 1

    out = lookout("tmux-setup", "--remove")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("removed lookout's tmux block from ~/.tmux.conf (backup: ")
    assert (dotfiles / "tmux.conf").read_bytes() == USER_CONF
    assert conf(isolated_env).is_symlink()
    assert lookout("tmux-setup", "--remove").stdout == (
        "nothing to remove: ~/.tmux.conf has no lookout block\n"
    )


def test_a_file_without_a_final_newline_comes_back_exactly(isolated_env: Path) -> None:
    conf(isolated_env).write_bytes(b"set -g mouse on")
    assert lookout("tmux-setup", "--apply").returncode == 0
    text = conf(isolated_env).read_text()
    assert text.startswith("set -g mouse on\n" + tmux_setup.BEGIN + tmux_setup.NEWLINE_NOTE)
    assert lookout("tmux-setup", "--remove").returncode == 0
    assert conf(isolated_env).read_bytes() == b"set -g mouse on"


def test_a_file_lookout_created_goes_away_again(isolated_env: Path) -> None:
    assert lookout("tmux-setup", "--apply").returncode == 0
    assert conf(isolated_env).read_text().startswith(tmux_setup.BEGIN + tmux_setup.CREATED_NOTE)
    out = lookout("tmux-setup", "--remove")
    assert out.stdout.startswith("removed ~/.tmux.conf, which lookout had created (backup: ")
    assert not conf(isolated_env).exists()


def test_a_long_tmpdir_still_lets_tmux_read_the_block(isolated_env: Path, tmp_path: Path) -> None:
    # tmux checks the block on a private server whose socket lives under TMUX_TMPDIR: a socket's
    # path holds 107 bytes, and $TMPDIR can be a long private folder's.
    require("tmux")
    long = tmp_path / ("t" * 60) / ("u" * 60)
    long.mkdir(parents=True, mode=0o700)
    out = lookout("tmux-setup", "--apply", env={**os.environ, "TMPDIR": str(long)})
    assert (out.returncode, out.stderr) == (0, "")
    assert conf(isolated_env).read_text().startswith(tmux_setup.BEGIN)


def test_new_keys_update_the_block_in_place(isolated_env: Path) -> None:
    conf(isolated_env).write_bytes(USER_CONF)
    lookout("tmux-setup", "--apply")
    with conf(isolated_env).open("ab") as fh:
        fh.write(b"set -g history-limit 5000\n")  # the user's line after the block
    out = lookout("tmux-setup", "--apply", "--jump-key", "j", "--pick-key", "J")
    assert out.stdout.startswith("updated lookout's tmux block in ~/.tmux.conf (prefix j: jump")
    text = conf(isolated_env).read_text()
    assert "bind-key j run-shell" in text and "bind-key a run-shell" not in text
    assert text.endswith("# <<< lookout <<<\nset -g history-limit 5000\n")
    lookout("tmux-setup", "--remove")
    assert conf(isolated_env).read_bytes() == USER_CONF + b"set -g history-limit 5000\n"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            b"# >>> lookout >>>\nbind a x\n",
            "lookout's block is damaged (1 start and 0 end marker(s))",
        ),
        (b"bind x \\\n", "its last line continues onto the next (ends with a backslash)"),
        (b"%if #{x}\nset -g mouse on\n", "its %if and %endif lines do not pair up"),
        (b"set -g status-left '\xff'\n", "not UTF-8 text (byte 20)"),
    ],
    ids=["damaged-block", "continuation", "open-if", "not-utf8"],
)
def test_what_it_cannot_read_safely_it_refuses(
    isolated_env: Path, content: bytes, message: str
) -> None:
    conf(isolated_env).write_bytes(content)
    out = lookout("tmux-setup", "--apply")
    assert out.returncode == 1
    error, hint = out.stderr.splitlines()
    assert error == f"error: ~/.tmux.conf: {message}"
    assert hint.startswith("hint: ") and hint.endswith("lookout changed nothing")
    assert conf(isolated_env).read_bytes() == content and not backups(isolated_env)


def test_a_bad_key_is_refused() -> None:
    out = lookout("tmux-setup", "--jump-key", "a;kill-server")
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        "error: invalid key 'a;kill-server'",
        "hint: a tmux key name such as a, A, C-j or F5",
    ]


def test_real_tmux_reads_the_block_and_sourcing_twice_adds_the_status_once(
    isolated_env: Path,
) -> None:
    require("tmux")
    conf(isolated_env).write_bytes(USER_CONF.replace(b"bind r source-file ~/.tmux.conf\n", b""))
    assert lookout("tmux-setup", "--apply").returncode == 0
    tmp = str(short_tmpdir("lookout-tmux-"))  # the socket's folder: a short path
    env = {**os.environ, "TMUX_TMPDIR": tmp}
    env.pop("TMUX", None)

    def tmux(*args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", "setup", *args],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout

    try:
        tmux("-f", str(conf(isolated_env)), "new-session", "-d", "-s", "s")
        tmux("set", "-g", "status-right", "mine")
        tmux("source-file", str(conf(isolated_env)))
        tmux("source-file", str(conf(isolated_env)))
        keys = tmux("list-keys", "-T", "prefix")
        status = tmux("show", "-gv", "status-right")
    finally:
        subprocess.run(["tmux", "-L", "setup", "kill-server"], env=env, check=False)
        shutil.rmtree(tmp, ignore_errors=True)
    bound = [line for line in keys.splitlines() if line.split()[3] in ("a", "A")]
    assert len(bound) == 2 and all("run-shell -b" in line for line in bound)
    assert " jump --client '#{client_name}'" in bound[-1] or " jump --client" in bound[0]
    assert status.count("status --line)") == 1 and status.startswith("mine #(")


@pytest.mark.parametrize("theirs", [USER_CONF, None], ids=["their-file", "created"])
def test_purge_takes_the_block_out_exactly(isolated_env: Path, theirs: bytes | None) -> None:
    # issue 22 #20: `uninstall --purge` left the block, binding a command it had just removed.
    if theirs is not None:
        conf(isolated_env).write_bytes(theirs)
    assert lookout("tmux-setup", "--apply").returncode == 0
    assert tmux_setup.BEGIN.encode() in conf(isolated_env).read_bytes()
    done = lookout("uninstall", "--purge")
    assert done.returncode == 0, done.stderr
    assert "lookout's tmux block" in done.stdout or "which lookout had created" in done.stdout
    # newuser-3: it named the block's backup, then removed every backup a line later.
    assert "backup: " not in done.stdout
    if theirs is None:
        assert not conf(isolated_env).exists()
    else:
        assert conf(isolated_env).read_bytes() == theirs
    assert not (isolated_env / ".local" / "share" / "lookout").exists()  # no backup left behind


def test_purge_refuses_a_damaged_block_before_changing_anything(isolated_env: Path) -> None:
    text = USER_CONF + tmux_setup.BEGIN.encode() + b"\nbind-key a run-shell true\n"
    conf(isolated_env).write_bytes(text)
    config = Path(paths.config_path())
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("# mine\n")
    done = lookout("uninstall", "--purge")
    assert done.returncode == 1
    assert "lookout's block is damaged" in done.stderr and "hint: " in done.stderr
    assert conf(isolated_env).read_bytes() == text
    assert config.read_text() == "# mine\n"  # nothing else went either


@pytest.mark.real
def test_what_the_block_binds_runs_under_the_installed_command(
    isolated_env: Path, tmp_path: Path
) -> None:
    """install.py's layout: ~/.local/bin/lookout (the wrapper) runs the runtime's inner entry
    file, which is no program. The block must bind the wrapper: press prefix a in a real client
    and the client lands on the waiting pane; the pick binding and the status segment run."""
    from lookout.install import runtime
    from tests.helpers import wait_for
    from tests.jump.world import World

    runtime.install_code(paths.runtime_home(), sys.executable)
    runtime.install_wrapper(sys.executable, paths.runtime_home(), lambda line: None)
    wrapper = paths.bin_dir() / "lookout"
    out = subprocess.run(
        [str(wrapper), "tmux-setup", "--apply"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    block = conf(isolated_env).read_text()
    assert f"{wrapper} jump --client" in block
    with World() as world:
        api = world.pane("beta:1.1")
        world.hook(api, tmp_path, "PermissionRequest-Bash", session_id=API, cwd="/w/api")
        world.tmux("source-file", str(conf(isolated_env)))
        client = world.attach("alpha")
        world.press(client, b"\x02a")  # C-b a
        wait_for(lambda: world.where(client) == f"beta:1.{api}", what="prefix a to jump")
        # prefix A opens the menu (its command runs until a choice): 1 is api.
        world.tmux("switch-client", "-c", client, "-t", "alpha:0")
        world.press(client, b"\x02A")
        tries = itertools.count(1)

        def chosen() -> bool:
            world.press(client, b"1")  # typed into the shell until the menu is up
            if world.where(client) == f"beta:1.{api}":
                return True
            if next(tries) % 10 == 0:  # a prefix key lost while the client was switching
                world.press(client, b"\x02A")
            return False

        wait_for(chosen, what="prefix A, 1 to pick api", every=0.2)
        # The status segment, as tmux's status job runs it: through the shell.
        status = world.tmux("show", "-gv", "status-right")
        command = status.split("#(", 1)[1].rsplit(")", 1)[0]
        done = subprocess.run(
            ["sh", "-c", command], env=world.env, capture_output=True, text=True, timeout=30
        )
        assert (done.returncode, done.stderr) == (0, "")
        assert done.stdout.startswith("! api:permission"), done.stdout


API = "aaaa1111-0000-4000-8000-000000000001"


@pytest.mark.real
def test_the_status_bar_shows_the_whole_segment_and_remove_gives_the_bytes_back(
    isolated_env: Path, tmp_path: Path
) -> None:
    """newuser-3 defect 4: tmux's default status-right-length (40) cut lookout's segment to
    `! s6-a7:`. The client's status line, drawn by a real tmux client and read back from the
    pane of another tmux it runs in, shows all of it; --remove gives back the file's bytes."""
    from tests.helpers import wait_for
    from tests.jump.world import World
    from tests.receivers import TmuxServer

    require("tmux", "script")
    conf(isolated_env).write_bytes(USER_CONF)
    assert lookout("tmux-setup", "--apply").returncode == 0
    with World() as world, TmuxServer() as outer:
        world.hook(world.pane("beta:1.1"), tmp_path, "PermissionRequest-Bash", cwd="/w/s6-a7",
                   session_id=API)  # fmt: skip
        world.hook(world.pane("beta:1.0"), tmp_path, "PermissionRequest-Bash", cwd="/w/s7-70",
                   session_id=WEB)  # fmt: skip
        world.hook(world.pane("alpha:1.0"), tmp_path, "Stop", cwd="/w/api2", session_id=DOC)
        world.tmux("source-file", str(conf(isolated_env)))  # as `tmux source-file` after --apply
        segment = "! s6-a7:permission s7-70:permission · 1 idle"
        assert lookout("status", "--line").stdout == segment + "\n"
        # The user's client, in a pane of another tmux wide enough not to cut anything itself.
        client = f"env -u TMUX TERM=xterm tmux -S {world.socket} attach -t alpha"
        outer.tmux("new-session", "-d", "-s", "view", "-x", "200", "-y", "8", client)

        def status_line() -> str | None:
            screen = outer.tmux("capture-pane", "-p", "-t", "view").splitlines()
            return screen[-1] if screen and segment in screen[-1] else None

        wait_for(status_line, what=f"{segment!r} on the client's status line", every=0.2)
        assert world.tmux("show", "-gv", "status-right-length") == "120"
    assert lookout("tmux-setup", "--remove").returncode == 0
    assert conf(isolated_env).read_bytes() == USER_CONF


DOC = "cccc3333-0000-4000-8000-000000000003"
WEB = "bbbb2222-0000-4000-8000-000000000002"
