"""`lookout suggest` through the real entry point over the recorded week (tests/fixtures/ledger),
and `--apply ID` / `--revert ID` on real settings files: the installer's guarantees."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from lookout import suggest as rules
from lookout import words
from lookout.commands import main as cli
from lookout.install import registry
from tests.fixtures.ledger import build
from tests.helpers import FIXTURES

WEEK = FIXTURES / "ledger" / "state"
UNTIL_MS = build.BASE_MS + 7 * 86400 * 1000
NPM_TEST = rules.rule_id("Bash(npm test)")  # runs code from the repository: the project's only
GITHUB = rules.rule_id("mcp__github__search_repositories")
SETTINGS = """{
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(ls)"
    ],
    "deny": [
      "Read(./.env)"
    ]
  },
  "env": {
    "X": "\u00e9"
  }
}
"""


@pytest.fixture
def week(state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(WEEK, state_dir)
    monkeypatch.setattr(words, "now_ms", lambda: UNTIL_MS)  # the one clock
    return state_dir


@pytest.fixture
def user_settings(isolated_env: Path) -> Path:
    path = isolated_env / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(SETTINGS, encoding="utf-8")
    return path


def test_the_week_suggests_exactly_these(week: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["suggest", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data == {
        "suggestions": [
            {
                "id": NPM_TEST,
                "rule": "Bash(npm test)",
                "count": 4,  # 3 in the week, 1 the day before (30 days back)
                "wait_s": 110.0,
                "examples": ["npm test"],
                "projects": ["api"],
                "runs_repo_code": True,
            },
            {
                "id": rules.rule_id("mcp__github__search_repositories"),
                "rule": "mcp__github__search_repositories",
                "count": 2,
                "wait_s": 40.0,
                "examples": ["lookout"],
                "projects": ["web"],
                "runs_repo_code": False,
            },
            {
                "id": rules.rule_id("Bash(npm run lint:*)"),
                "rule": "Bash(npm run lint:*)",
                "count": 3,
                "wait_s": 20.0,
                "examples": ["npm run lint", "npm run lint -- --fix", "npm run lint src"],
                "projects": ["api"],
                "runs_repo_code": True,
            },
            {
                "id": rules.rule_id("WebFetch(domain:docs.python.org)"),
                "rule": "WebFetch(domain:docs.python.org)",
                "count": 2,
                "wait_s": 18.0,
                "examples": [
                    "https://docs.python.org/3/library/json.html",
                    "https://docs.python.org/3/library/os.html",
                ],
                "projects": ["web"],
                "runs_repo_code": False,
            },
        ]
    }
    # Shorter window: the day before the week drops out of the replay.
    assert cli.main(["suggest", "--json", "--since", "7d"]) == 0
    first = json.loads(capsys.readouterr().out)["suggestions"][0]
    assert (first["rule"], first["count"], first["wait_s"]) == ("Bash(npm test)", 3, 60.0)


def test_the_list_in_words(week: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["suggest"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{NPM_TEST}  Bash(npm test)  (4 asks, 110s waited; api)"
    assert out[1] == "        runs code from this repository: for this project only"
    assert out[2] == "        e.g. npm test"
    assert f"{GITHUB}  mcp__github__search_repositories  (2 asks, 40s waited; web)" in out
    assert (
        out[out.index(f"{GITHUB}  mcp__github__search_repositories  (2 asks, 40s waited; web)") + 1]
        == "        e.g. lookout"
    )
    assert out[-1] == "apply one: lookout suggest --apply ID [--scope local|project|user]"


def test_apply_then_revert_restores_every_byte(
    week: Path, user_settings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = user_settings.read_bytes()
    assert cli.main(["suggest", "--apply", GITHUB, "--scope", "user"]) == 0
    out = capsys.readouterr().out
    rule = "mcp__github__search_repositories"
    assert out.startswith(f"added {rule} to permissions.allow of ~/.claude/settings.json")
    assert out.rstrip().endswith(f"undo: lookout suggest --revert {GITHUB}")
    after = json.loads(user_settings.read_text(encoding="utf-8"))
    assert after["permissions"]["allow"] == ["Bash(ls)", rule]
    assert user_settings.read_text(encoding="utf-8") == SETTINGS.replace(
        '"Bash(ls)"\n', f'"Bash(ls)",\n      "{rule}"\n'
    )
    # The private, bounded backup holds the original bytes.
    backups = registry.backups_of(user_settings)
    assert backups and backups[-1].read_bytes() == before
    assert oct(backups[-1].stat().st_mode & 0o777) in ("0o600", "0o644")
    # Applying it again changes nothing.
    assert cli.main(["suggest", "--apply", GITHUB, "--scope", "user"]) == 0
    assert "already allowed" in capsys.readouterr().out
    assert cli.main(["suggest"]) == 0
    assert (
        "(2 asks, 40s waited; web) [applied to ~/.claude/settings.json]" in capsys.readouterr().out
    )
    assert cli.main(["suggest", "--revert", GITHUB]) == 0
    assert user_settings.read_bytes() == before
    assert cli.main(["suggest", "--revert", GITHUB]) == 1
    assert "no rule" in capsys.readouterr().err


def test_apply_creates_what_is_missing_and_revert_takes_it_away(
    week: Path, isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.chdir(project)
    # Without --scope: this project's own settings, the file Claude Code keeps out of git.
    local = project / ".claude" / "settings.local.json"
    assert cli.main(["suggest", "--apply", NPM_TEST]) == 0
    assert json.loads(local.read_text()) == {"permissions": {"allow": ["Bash(npm test)"]}}
    assert cli.main(["suggest", "--revert", NPM_TEST]) == 0
    assert not local.exists()
    assert not (project / ".claude").exists()  # the folder --apply made goes with the file
    assert list(project.iterdir()) == []
    settings = project / ".claude" / "settings.json"
    assert cli.main(["suggest", "--apply", NPM_TEST, "--scope", "project"]) == 0
    assert json.loads(settings.read_text()) == {"permissions": {"allow": ["Bash(npm test)"]}}
    assert cli.main(["suggest", "--revert", NPM_TEST]) == 0
    assert not settings.exists() and not (project / ".claude").exists()
    # A file with other keys: only the keys it created go.
    settings.parent.mkdir()
    settings.write_text('{\n  "model": "opus"\n}\n')
    assert cli.main(["suggest", "--apply", NPM_TEST, "--scope", "project"]) == 0
    assert cli.main(["suggest", "--revert", NPM_TEST]) == 0
    assert settings.read_text() == '{\n  "model": "opus"\n}\n'


def test_apply_writes_through_a_symlink(week: Path, isolated_env: Path, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text(SETTINGS)
    link = isolated_env / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(real)
    assert cli.main(["suggest", "--apply", GITHUB, "--scope", "user"]) == 0
    assert link.is_symlink() and "mcp__github__search_repositories" in real.read_text()
    assert cli.main(["suggest", "--revert", GITHUB]) == 0
    assert link.is_symlink() and real.read_text() == SETTINGS


def test_revert_removes_only_that_rule_when_the_file_changed_since(
    week: Path, user_settings: Path
) -> None:
    assert cli.main(["suggest", "--apply", GITHUB, "--scope", "user"]) == 0
    data = json.loads(user_settings.read_text())
    data["permissions"]["allow"].append("Bash(make)")
    user_settings.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    assert cli.main(["suggest", "--revert", GITHUB]) == 0
    assert json.loads(user_settings.read_text())["permissions"]["allow"] == [
        "Bash(ls)",
        "Bash(make)",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"permissions": {"allow": "Bash(ls)"}', "invalid JSON"),
        (
            '{"permissions": {"allow": "Bash(ls)"}}',
            "permissions.allow: expected an array of strings",
        ),
        ('{"permissions": []}', "permissions: expected an object"),
        ('{"a": 1, "a": 2}', "duplicate key"),
    ],
)
def test_apply_refuses_what_it_cannot_keep(
    week: Path,
    user_settings: Path,
    text: str,
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    user_settings.write_text(text)
    assert cli.main(["suggest", "--apply", GITHUB, "--scope", "user"]) == 1
    err = capsys.readouterr().err
    assert message in err and "hint:" in err
    assert user_settings.read_text() == text


def test_apply_refuses_a_file_changed_while_it_writes(
    week: Path,
    user_settings: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from lookout.install import files

    real_backup = registry.backup

    def racing_backup(*args: object, **kwargs: object) -> object:
        user_settings.write_text(SETTINGS.replace("opus", "haiku"))  # Claude Code wrote it
        return real_backup(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(files.registry, "backup", racing_backup)
    assert cli.main(["suggest", "--apply", GITHUB, "--scope", "user"]) == 1
    assert "changed while lookout was writing it" in capsys.readouterr().err
    assert user_settings.read_text() == SETTINGS.replace("opus", "haiku")


def test_an_unknown_id_is_a_clear_error(week: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["suggest", "--apply", "zzzzzz"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: no suggestion 'zzzzzz' in the last 30 days")
    assert "hint: lookout suggest lists them" in err
    assert not os.path.exists(Path(os.environ["HOME"]) / ".claude" / "settings.json")


@pytest.mark.parametrize("rule", ["Bash(npm test)", "Bash(npm run lint:*)"])
def test_a_rule_that_runs_repository_code_is_never_applied_for_the_user(
    week: Path, user_settings: Path, rule: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """S4: at user scope `Bash(npm test)` would run any clone's test script without a dialog."""
    before = user_settings.read_bytes()
    assert cli.main(["suggest", "--apply", rules.rule_id(rule), "--scope", "user"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {rule} runs code from the repository")
    assert (
        f"hint: apply it to this project only: lookout suggest --apply {rules.rule_id(rule)}" in err
    )
    assert user_settings.read_bytes() == before
    assert not (week / "suggest-applied.json").exists()


HAND_WRITTEN = """{
    "model": "opus",
    "env": {"X": "\\u00e9", "Y": "2"},
    "permissions": {"allow": ["Bash(ls)"], "deny": ["Read(./.env)"]},
    "statusLine": {
        "type":    "command",
        "command": "echo hi"
    }
}"""


def test_apply_rewrites_a_hand_formatted_file_and_revert_gives_its_bytes_back(
    week: Path,
    isolated_env: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """4-space indent, inline objects, aligned values, an escape, no final newline: the
    installer's own rewrite (a backup first), and --revert gives back every byte and the mode."""
    project = tmp_path / "web"
    (project / ".claude").mkdir(parents=True)
    monkeypatch.chdir(project)
    local = project / ".claude" / "settings.local.json"
    local.write_text(HAND_WRITTEN)
    local.chmod(0o640)
    assert cli.main(["suggest", "--apply", NPM_TEST]) == 0
    out = capsys.readouterr().out
    assert "(reformatted; backup: " in out
    data = json.loads(local.read_text())
    assert data["permissions"]["allow"] == ["Bash(ls)", "Bash(npm test)"]
    assert data["env"] == {"X": "\u00e9", "Y": "2"} and data["statusLine"]["command"] == "echo hi"
    assert local.read_text().startswith('{\n    "model": "opus",\n')  # its indent kept
    assert registry.backups_of(local)[-1].read_text() == HAND_WRITTEN
    assert cli.main(["suggest", "--revert", NPM_TEST]) == 0
    assert local.read_text() == HAND_WRITTEN
    assert local.stat().st_mode & 0o777 == 0o640
    assert (project / ".claude").is_dir()  # it was there before: it stays


def test_revert_after_someone_else_changed_the_file_takes_out_only_the_rule(
    week: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "web"
    (project / ".claude").mkdir(parents=True)
    monkeypatch.chdir(project)
    local = project / ".claude" / "settings.local.json"
    local.write_text(HAND_WRITTEN)
    assert cli.main(["suggest", "--apply", NPM_TEST]) == 0
    data = json.loads(local.read_text())
    data["model"] = "haiku"  # Claude Code's /model wrote it
    local.write_text(json.dumps(data, indent=4) + "\n")
    assert cli.main(["suggest", "--revert", NPM_TEST]) == 0
    after = json.loads(local.read_text())
    assert after["model"] == "haiku" and after["permissions"]["allow"] == ["Bash(ls)"]


def _approve_twice(state_dir: Path, *commands: str) -> None:
    """Each command approved twice in a dialog of a Claude Code session in api, recorded by the
    real hook runner (as tests/fixtures/ledger/build.py records the week)."""
    from lookout import runner

    steps: list[object] = []
    for n, command in enumerate(commands):
        for k in range(2):
            steps += build.approved(
                100 + 60 * n + 20 * k, "api1", build.bash(command), 5, 2 * n + k
            )
    events = [(0, "api1", "SessionStart", {})]
    events += build.turn(50, "api1", "go", steps, 100 + 60 * len(commands) + 30)
    for t, who, name, fields in events:
        raw = json.dumps(build.payload(who, name, fields, 1)).encode()
        runner.record(raw, name, build.BASE_MS + int(t * 1000), str(state_dir), {})


@pytest.mark.parametrize(
    ("command", "effect"),
    [
        ("xargs make", "runs code from the repository"),
        ("xargs -n 1 make", "runs code from the repository"),
        ("env -u HOME make test", "runs code from the repository"),
        ("nice -n 5 make check", "runs code from the repository"),
        ("terraform plan", "runs code from the repository"),
        ("direnv allow", "runs code from the repository"),
        ("ansible-playbook site.yml", "acts beyond the repository as its files say"),
        ("helm install web ./chart", "acts beyond the repository as its files say"),
        ("kubectl apply -f .", "acts beyond the repository as its files say"),
    ],
)
def test_user_scope_is_refused_for_what_runs_the_repository_or_acts_beyond_it(
    state_dir: Path,
    user_settings: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
    effect: str,
) -> None:
    """T6 (security-4): through wrappers (`xargs`, `env -u X`, `nice -n 5`) and for tools that
    run the checkout's code or apply its files elsewhere, `--scope user` would let any clone do
    it without a dialog; the listing says so and --apply refuses it, changing nothing."""
    _approve_twice(state_dir, command)
    monkeypatch.setattr(words, "now_ms", lambda: build.BASE_MS + 86400 * 1000)
    rule = f"Bash({command})"
    assert cli.main(["suggest", "--json"]) == 0
    (found,) = json.loads(capsys.readouterr().out)["suggestions"]
    assert (found["rule"], found["runs_repo_code"]) == (rule, True)
    assert cli.main(["suggest"]) == 0
    listing = capsys.readouterr().out.splitlines()
    here = effect.replace("the repository", "this repository")
    assert listing[1].strip().startswith(f"{here}") and "for this project only" in listing[1]
    before = user_settings.read_bytes()
    assert cli.main(["suggest", "--apply", rules.rule_id(rule), "--scope", "user"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {rule} {effect}"), err
    assert "--scope user is refused" in err
    assert f"hint: apply it to this project only: lookout suggest --apply {found['id']}" in err
    assert user_settings.read_bytes() == before
    # This project's own settings take it.
    monkeypatch.chdir(state_dir.parent)
    assert cli.main(["suggest", "--apply", found["id"]]) == 0
    local = json.loads((state_dir.parent / ".claude" / "settings.local.json").read_text())
    assert local["permissions"]["allow"] == [rule]


def test_escalating_wrappers_are_never_suggested(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`sudo`/`doas` escalate: never suggested at all (and what they run is classified)."""
    _approve_twice(state_dir, "sudo make install", "doas make install", "sudo -u me make")
    monkeypatch.setattr(words, "now_ms", lambda: build.BASE_MS + 86400 * 1000)
    assert cli.main(["suggest", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"suggestions": []}
