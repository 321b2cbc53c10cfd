"""Every command line README.md and docs/*.md show, and every subcommand's --help, run through the
real entry points in-process (`lookout` -> commands.main.main, `python3 install.py` ->
install.main), in the isolated HOME of conftest. A line that exits 2 (a usage error) or 3 (a crash)
fails. Every relative link in them (and its #anchor) leads somewhere."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lookout.commands import main as cli
from lookout.install import cli as install_cli
from lookout.install import runtime
from tests.helpers import ROOT, preinstall_runtime

# The front door and the manual behind it.
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# `lookout status --watch` / `tail -f` run until Ctrl-C; the test presses it after a moment.
RUNS_UNTIL_CTRL_C = ("--watch", " -f", "--follow")
# Not lookout's command lines (they are tested elsewhere): the test command itself, benchmarks,
# the plugin's `claude ...` lines, shell pipelines.
OURS = re.compile(r"^(?:[A-Z_]+=\S+ )*(?:lookout|python3 install\.py)(?: |$)")
PLACEHOLDER = re.compile(r"\[|\.\.\.|<|\b[A-Z]{2,}\b(?!=)|\|")


def readme_commands() -> list[str]:
    found: list[str] = []
    for page in PAGES:
        page_commands(page.read_text(encoding="utf-8"), found)
    return found


def page_commands(text: str, found: list[str]) -> None:
    in_block = False
    lang = ""
    for line in text.splitlines():
        if line.startswith("```"):
            in_block = not in_block
            lang = line[3:].strip()
            continue
        if in_block:
            if lang:  # toml, json: not command lines
                continue
            text = line.removeprefix("$ ").split("  #")[0].strip()
            candidates = [text]
        else:
            candidates = re.findall(r"`([^`]+)`", line)
        for text in candidates:
            runnable = OURS.match(text) and not PLACEHOLDER.search(text.split(" ", 1)[-1])
            if runnable and text not in found:
                found.append(text)


COMMANDS = readme_commands()


def test_the_readme_shows_the_commands_this_test_runs() -> None:
    # A sanity floor: the extractor must keep finding the README's commands.
    assert "lookout status" in COMMANDS
    assert "python3 install.py" in COMMANDS
    assert any(c.startswith("lookout doctor") for c in COMMANDS)
    assert "lookout tmux-setup --remove" in COMMANDS  # from docs/jump.md
    assert len(relative_links()) > 30


LINK = re.compile(r"\]\(([^)\s]+)\)|\bsrc=\"([^\"]+)\"")


def anchors(page: Path) -> set[str]:
    """The #anchors GitHub gives a page's headings (lower case, punctuation dropped, - for
    spaces, -1, -2... for repeats)."""
    seen: set[str] = set()
    in_block = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_block = not in_block
        if in_block or not line.startswith("#"):
            continue
        slug = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        base, n = slug, 0
        while slug in seen:
            n += 1
            slug = f"{base}-{n}"
        seen.add(slug)
    return seen


def relative_links() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        for match in LINK.finditer(page.read_text(encoding="utf-8")):
            target = match.group(1) or match.group(2)
            if not re.match(r"^[a-z]+:", target):  # http:, https:, mailto: are not ours
                found.append((str(page.relative_to(ROOT)), target))
    return found


def test_the_docs_index_lists_every_page() -> None:
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    for page in PAGES[1:]:
        if page.name != "README.md":
            assert f"]({page.name})" in index, page.name


@pytest.mark.parametrize(("page", "target"), relative_links())
def test_every_relative_link_resolves(page: str, target: str) -> None:
    path, _, anchor = target.partition("#")
    file = (ROOT / page).parent / path if path else ROOT / page
    assert file.exists(), f"{page}: {target}: no such file"
    if anchor:
        assert anchor in anchors(file), f"{page}: {target}: no such heading"


def _press_ctrl_c_soon(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"n": 0}
    real_sleep = __import__("time").sleep

    def sleep(seconds: float) -> None:
        calls["n"] += 1
        if calls["n"] > 2:
            raise KeyboardInterrupt
        real_sleep(min(seconds, 0.01))

    monkeypatch.setattr("time.sleep", sleep)


def _fleet_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fleet's lines run against a real Mosquitto (tests/mosquitto.py) with a [fleet]."""
    from tests.mosquitto import PASSWORD, USER, Broker

    (tmp_path / "broker").mkdir()
    broker = Broker(tmp_path / "broker")
    broker.start()
    request_cleanup.append(broker.kill)
    config = Path(os.environ["LOOKOUT_CONFIG"])
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        f'[fleet]\nmqtt = "{broker.tls_url}"\nca_file = "{broker.ca}"\nusername = "{USER}"\n'
        'password_env = "README_MQTT_PASSWORD"\nhost = "readme"\nhome_assistant = true\n'
    )
    monkeypatch.setenv("README_MQTT_PASSWORD", PASSWORD)


request_cleanup: list[Callable[[], None]] = []


@pytest.fixture(autouse=True)
def _stop_brokers() -> Iterator[None]:
    yield
    while request_cleanup:
        request_cleanup.pop()()


def _needs_broker(line: str) -> bool:
    return any(word in shlex.split(line) for word in ("--fleet", "bridge", "--bridge"))


@pytest.mark.parametrize(
    "line", [pytest.param(c, marks=pytest.mark.real) if _needs_broker(c) else c for c in COMMANDS]
)
def test_readme_command_line_runs(
    line: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    words = shlex.split(line)
    while "=" in words[0] and not words[0].startswith("-"):
        name, value = words.pop(0).split("=", 1)
        monkeypatch.setenv(name, value if not value.startswith("/tmp/") else str(tmp_path / "x"))
    # Creating a virtual environment and pip-installing into it is tested end to end in
    # tests/install/test_install.py; here the runtime uses this interpreter.
    monkeypatch.setattr(runtime, "ensure_interpreter", lambda home, given, out: sys.executable)
    monkeypatch.chdir(tmp_path)
    if _needs_broker(line):
        _fleet_config(tmp_path, monkeypatch)
    if any(flag in line for flag in RUNS_UNTIL_CTRL_C) or (
        words[:2] == ["lookout", "bridge"] and ("--once" not in words)
    ):
        _press_ctrl_c_soon(monkeypatch)
    if words[:2] == ["lookout", "serve"] and "--url" not in words:
        # The server starts for real (it binds, says where); Ctrl-C comes instead of requests.
        from lookout.web import server

        def ctrl_c(self: object) -> None:
            raise KeyboardInterrupt

        monkeypatch.setattr(server.Dashboard, "serve_forever", ctrl_c)
    if words[0] == "lookout":
        rc = cli.main(words[1:])
    else:
        assert words[:2] == ["python3", "install.py"]
        if words[2:]:  # the plain line builds the runtime from nothing; the others run over it
            preinstall_runtime()
        rc = install_cli.main(words[2:])
    out, err = capsys.readouterr()
    assert rc in (0, 1), f"{line!r} exited {rc}\nstdout:\n{out}\nstderr:\n{err}"
    assert "Traceback" not in out + err
    for text in err.splitlines():
        assert text.startswith(("error:", "hint:", "warning:", "note:", "  ")), text
    if "--json" in words:
        json.loads(out)


def subcommands() -> list[str]:
    parser = cli.build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    return sorted(action.choices)  # type: ignore[arg-type]


@pytest.mark.parametrize("command", subcommands())
def test_every_subcommand_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main([command, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: lookout {command}")
    assert "options:" in out


def test_install_py_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        install_cli.main(["--help"])
    assert done.value.code == 0
    assert "python3 install.py --dry-run" in capsys.readouterr().out


def test_an_unexpected_error_is_one_line_and_a_log_entry(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], state_dir: Path
) -> None:
    def boom(*args: object, **kwargs: object) -> int:
        raise ZeroDivisionError("the bug")

    monkeypatch.setattr("lookout.commands.status.status", boom)
    assert cli.main(["status"]) == 3
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "error: unexpected ZeroDivisionError: the bug"
    assert err[1].startswith("hint: the details are in ")
    log = (state_dir / "errors.log").read_text()
    assert "Traceback" in log and "ZeroDivisionError: the bug" in log


def test_ctrl_c_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: object, **kwargs: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr("lookout.commands.status.status", interrupted)
    assert cli.main(["status"]) == 130


def test_forwarded_options_reach_their_command(capsys: pytest.CaptureFixture[str]) -> None:
    # The bug that one parser fixes: these once exited 2 with "unrecognized arguments".
    assert cli.main(["doctor", "--json"]) in (0, 1)
    assert json.loads(capsys.readouterr().out)["checks"]
    assert cli.main(["check-config", "--project", "."]) == 0
    assert "using the built-in default" in capsys.readouterr().out
