"""Suggested allow rules: the Claude Code permission rules that would have spared the user the
dialogs they approved again and again, each replayed against the history it came from.

Pure: waits in (lookout.ledger), suggestions out. Never wider than what was approved, never
for what destroys, escalates or fetches and runs (DENY_WORDS, DENY_PREFIXES: docs/report.md),
never from a denied or auto-approved request (auto-approved ones open no dialog at all). A rule
whose command runs code from the repository (a package script, a recipe, a file handed to an
interpreter) or acts beyond it as its files say (a cluster, a cloud, other hosts: runs_repo_code)
is marked so, and belongs to that project alone."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from lookout.ledger import Wait

MIN_COUNT = 2  # approvals of the very same request before its exact rule is suggested
MIN_DISTINCT = 3  # distinct approved commands that must share a prefix rule (`Bash(p:*)`)
EXAMPLES = 3
# Agents whose permission rules this module writes: Claude Code's syntax (docs/agents.md).
AGENTS = frozenset({"claude"})

# A command holding any of these is never suggested: it chains, pipes, redirects or expands
# (Claude Code checks each part of a compound command on its own; a rule for the whole string
# would promise what it does not do).
SHELL_SYNTAX = frozenset(";&|<>`$\n\r")
# Words that destroy, escalate or run what was fetched: a command with one of them anywhere is
# never suggested (so `xargs rm`, `docker rm`, `find -delete` are out with `rm` itself).
DENY_WORDS = frozenset(
    {
        # destroy
        "rm", "rmdir", "shred", "unlink", "dd", "mkfs", "fdisk", "parted", "wipefs", "truncate",
        "-delete", "prune", "destroy", "dropdb", "kill", "killall", "pkill", "shutdown",
        "reboot", "halt", "poweroff",
        # escalate
        "sudo", "su", "doas", "pkexec", "runas", "chmod", "chown", "chgrp", "chattr", "setcap",
        # run what is not on the line
        "eval", "exec", "source", "-exec", "-execdir", "iex",
    }
)  # fmt: skip
# Shells: run what is not on the line anywhere but as the command itself running a script file
# (`bash build.sh`, a file of the repository like `python3 build.py`: runs_repo_code); never
# with code or stdin of their own (`-c`, `-s`, `-i`), never handed to another command.
SHELLS = frozenset({"sh", "bash", "zsh", "fish", "dash", "ksh", "pwsh", "powershell"})
# Word sequences that destroy or rewrite history; a command starting with one is never
# suggested, and neither is a prefix that one could extend (`git:*`, `git push:*`).
DENY_PREFIXES = (
    ("git", "push", "--force"),
    ("git", "push", "-f"),
    ("git", "push", "--force-with-lease"),
    ("git", "push", "--delete"),
    ("git", "push", "--mirror"),
    ("git", "reset", "--hard"),
    ("git", "clean"),
    ("git", "checkout", "--"),
    ("git", "restore"),
    ("git", "branch", "-D"),
    ("git", "branch", "--delete"),
    ("git", "stash", "drop"),
    ("git", "stash", "clear"),
    ("git", "filter-branch"),
    ("git", "filter-repo"),
    ("git", "reflog", "expire"),
    ("git", "update-ref", "-d"),
    ("curl",),  # fetches: piping it into a shell is already out (SHELL_SYNTAX); a prefix never
    ("wget",),
    ("npm", "publish"),
    ("npm", "unpublish"),
    ("docker", "system"),
    ("kubectl", "delete"),
    ("terraform", "apply"),
)
# A prefix made of these alone would run anything: shells, interpreters, package runners.
RUNNERS = frozenset(
    {
        ("sh",), ("bash",), ("zsh",), ("fish",), ("dash",), ("ksh",), ("pwsh",), ("cmd",),
        ("python",), ("python3",), ("python2",), ("node",), ("deno",), ("bun",), ("ruby",),
        ("perl",), ("php",), ("lua",), ("java",), ("Rscript",),
        ("npx",), ("pnpx",), ("bunx",), ("uvx",), ("pipx",), ("npm",), ("pnpm",), ("yarn",),
        ("uv",), ("make",), ("just",), ("env",), ("xargs",), ("time",), ("nohup",), ("nice",),
        ("timeout",), ("watch",), ("command",), ("git",), ("docker",), ("kubectl",),
        ("npm", "run"), ("npm", "exec"), ("npm", "run-script"), ("pnpm", "run"),
        ("pnpm", "exec"), ("pnpm", "dlx"), ("yarn", "run"), ("yarn", "exec"), ("yarn", "dlx"),
        ("bun", "run"), ("bun", "x"), ("uv", "run"), ("uv", "tool"), ("poetry", "run"),
        ("pipenv", "run"), ("pdm", "run"), ("hatch", "run"), ("cargo", "run"), ("go", "run"),
        ("bundle", "exec"), ("python", "-m"), ("python3", "-m"), ("docker", "run"),
        ("docker", "exec"), ("docker", "compose"), ("kubectl", "exec"), ("deno", "run"),
        ("deno", "task"),
    }
)  # fmt: skip
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@+,-")


@dataclass
class Suggestion:
    id: str
    rule: str
    count: int = 0
    wait_ms: int = 0
    examples: list[str] = field(default_factory=list)
    projects: list[str] = field(default_factory=list)

    @property
    def repo_code(self) -> bool:
        """It runs code from the repository: for that project only (runs_repo_code)."""
        return runs_repo_code(self.rule)

    def as_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "rule": self.rule,
            "count": self.count,
            "wait_s": round(self.wait_ms / 1000, 3),
            "examples": self.examples,
            "projects": self.projects,
            "runs_repo_code": self.repo_code,
        }


def rule_id(rule: str) -> str:
    """A short id that stays the same for the same rule (so --apply ID works a day later)."""
    return hashlib.sha256(rule.encode("utf-8")).hexdigest()[:6]


def bash_command(rule: str | None) -> str | None:
    if rule is not None and rule.startswith("Bash(") and rule.endswith(")"):
        return rule[5:-1]
    return None


def is_simple(command: str) -> bool:
    """One plain command: nothing chained, piped, redirected or expanded."""
    return bool(command) and not any(c in SHELL_SYNTAX for c in command)


def is_denied_command(command: str) -> bool:
    """Whether a command destroys, escalates or fetches and runs (the documented lists)."""
    if not is_simple(command):
        return True
    words = command.split()
    names = [w.rsplit("/", 1)[-1] for w in words]
    if not DENY_WORDS.isdisjoint(names) or any(n.startswith("mkfs.") for n in names):
        return True
    if words[0] == "." or _command(words)[:1] == ["."]:
        return True  # `.` sources a file only as the command (`go run .` names a folder)
    if any(n in SHELLS for n in names[1:]) or (names[0] in SHELLS and not _runs_file(words)):
        return True
    return any(tuple(words[: len(p)]) == p for p in DENY_PREFIXES)


# -- what runs code from the repository ---------------------------------------------------------

# Programs that run what the checkout defines: package scripts and lifecycle scripts, recipes,
# build files, test suites, project tools (a rule names the program, the repository the code).
REPO_PROGRAMS = frozenset(
    {
        "npm", "npx", "yarn", "pnpm", "pnpx", "bun", "bunx", "corepack", "make", "gmake", "just",
        "rake", "ninja", "scons", "cmake", "meson", "bazel", "bazelisk", "tox", "nox", "pytest",
        "py.test", "jest", "vitest", "mocha", "rspec", "phpunit", "mvn", "mvnw", "gradle",
        "gradlew", "ant", "sbt", "lein", "cargo", "composer", "mix", "dotnet", "swift",
        "docker-compose", "pre-commit", "invoke", "task",
        # infrastructure as code: its providers, external data sources and modules run
        "terraform", "tofu", "terragrunt", "pulumi", "vagrant", "packer",
    }
)  # fmt: skip
# ... and subcommands of otherwise general tools that do (`direnv allow` trusts the checkout's
# .envrc, which then runs on every `cd` into it).
REPO_SUBCOMMANDS = frozenset(
    {
        ("go", "run"), ("go", "test"), ("go", "generate"), ("uv", "run"), ("poetry", "run"),
        ("pipenv", "run"), ("pdm", "run"), ("hatch", "run"), ("bundle", "exec"),
        ("deno", "run"), ("deno", "task"), ("deno", "test"), ("docker", "compose"),
        ("docker", "build"), ("git", "submodule"), ("direnv", "allow"), ("direnv", "permit"),
        ("direnv", "grant"), ("direnv", "exec"), ("direnv", "reload"),
    }
)  # fmt: skip
# Programs and subcommands that act beyond the repository as its files say: they apply the
# checkout's manifests, charts or playbooks to a cluster, a cloud or other hosts (a hostile
# clone's `kubectl apply -f .` changes your cluster).
BEYOND_PROGRAMS = frozenset({"ansible", "ansible-playbook", "ansible-pull", "helmfile", "skaffold"})
BEYOND_SUBCOMMANDS = frozenset(
    {
        ("kubectl", "apply"), ("kubectl", "create"), ("kubectl", "replace"), ("oc", "apply"),
        ("oc", "create"), ("oc", "replace"), ("helm", "install"), ("helm", "upgrade"),
        ("helm", "template"), ("kustomize", "build"),
    }
)  # fmt: skip
# Interpreters: with a file or a module to run (not code on the line: INLINE), the file's code.
INTERPRETERS = frozenset(
    {
        "python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "ruby",
        "perl", "php", "lua", "luajit", "Rscript", "tclsh", "groovy", "java", "kotlin", "scala",
        "elixir", "julia", "osascript", *SHELLS,
    }
)  # fmt: skip
INLINE = frozenset({"-c", "-e", "-E", "-p", "--eval", "--print", "--command"})
# Commands that run the rest of the line as a command: what they run is what is classified
# (`sudo make install` runs the Makefile as root; `xargs make` runs make). Each with its options
# that take a value as the next word (`sudo -u me make`, `nice -n 5 make`, `xargs -n 1 make`).
WRAPPERS: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "nohup": frozenset(),
    "nice": frozenset({"-n", "--adjustment"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "command": frozenset(),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "setsid": frozenset(),
    "ionice": frozenset({"-c", "--class", "-n", "--classdata"}),
    "sudo": frozenset(
        {
            "-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir", "-p",
            "--prompt", "-r", "--role", "-t", "--type", "-U", "--other-user", "-T",
            "--command-timeout", "-R", "--chroot", "--host",
        }
    ),
    "doas": frozenset({"-u", "-C"}),
    "pkexec": frozenset({"--user"}),
    "xargs": frozenset(
        {
            "-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "-n", "--max-args",
            "-P", "--max-procs", "-s", "--max-chars", "--process-slot-var",
        }
    ),
}  # fmt: skip
_VERSIONED = re.compile(r"(python|pypy|ruby|perl|php|lua)[0-9.]+")


def _runs_file(words: list[str]) -> bool:
    """An interpreter's words: it runs a file or a module (a plain argument besides the code an
    INLINE option gives), not only code given on the line, nor stdin. A shell only ever with a
    plain script: never with an option that reads code, stdin or a terminal (`-c`, `-lc`, `-s`,
    `-i`, `--rcfile`...)."""
    shell = words[0].rsplit("/", 1)[-1] in SHELLS
    code = False
    for word in words[1:]:
        if code:
            code = False  # the code on the line
        elif shell and word.startswith("-") and (word.startswith("--") or set(word) & set("csi")):
            return False
        elif word in INLINE and not shell:
            code = True
        elif word == "-":
            return False  # stdin
        elif not word.startswith("-"):
            return True
    return False


def _past_options(name: str, words: list[str], i: int) -> int:
    """The index of the first word after a wrapper's options (and their values, `--`, and a
    `timeout`'s duration)."""
    while i < len(words) and words[i].startswith("-"):
        option = words[i]
        i += 1
        if option == "--":
            break
        if option in WRAPPERS[name]:
            i += 1  # its value
    if name == "timeout" and i < len(words) and words[i][:1].isdigit():
        i += 1
    return i


def _command(words: list[str]) -> list[str]:
    """The command the words run: past `NAME=value` assignments and WRAPPERS (and their
    options)."""
    i = 0
    while i < len(words):
        name = words[i].rsplit("/", 1)[-1]
        if "=" in words[i] and words[i].split("=", 1)[0].isidentifier():
            i += 1
        elif name in WRAPPERS:
            i = _past_options(name, words, i + 1)
        else:
            break
    return words[i:]


RUNS_CODE = "runs code from the repository"
ACTS_BEYOND = "acts beyond the repository as its files say (a cluster, a cloud, other hosts)"


def repo_effect(rule: str) -> str | None:
    """What a Bash rule (exact, or a prefix `X:*`: its words) does that the repository decides:
    RUNS_CODE (a package script, a recipe or build file, a test suite, a program by its path, a
    file or module handed to an interpreter), ACTS_BEYOND (its manifests, charts or playbooks
    applied elsewhere), or None. Allowed everywhere, the same words would do that for any
    checkout (a hostile clone's `npm test`, its `kubectl apply -f .`) without a dialog."""
    command = bash_command(rule)
    if command is None:
        return None
    command = command.removesuffix(":*")
    words = _command(command.split())
    if not words:
        return None
    first = words[0]
    name = first.rsplit("/", 1)[-1]
    head = (name, *words[1:2])
    if name in BEYOND_PROGRAMS or head in BEYOND_SUBCOMMANDS:
        return ACTS_BEYOND
    if "/" in first or name in REPO_PROGRAMS or head in REPO_SUBCOMMANDS:
        return RUNS_CODE
    if name in ("pip", "pip3") and words[1:2] == ["install"]:
        local = any(w in (".", "-e", "--editable", "-r") or w.startswith("./") for w in words)
        return RUNS_CODE if local else None
    interpreter = name in INTERPRETERS or bool(_VERSIONED.fullmatch(name))
    return RUNS_CODE if interpreter and _runs_file(words) else None


def runs_repo_code(rule: str) -> bool:
    """Whether a Bash rule runs the repository's code or acts beyond it as its files say
    (repo_effect): for that project alone, never the user's every project."""
    return repo_effect(rule) is not None


def prefix_allowed(words: tuple[str, ...]) -> bool:
    """A prefix rule `Bash(<words>:*)` may be suggested: two words at least, plain words only,
    not a runner on its own (nor a runner and an option: `python -c`), and no deny-listed
    command starts with it."""
    if len(words) < 2 or any(not set(w) <= _WORD for w in words):
        return False
    for n in range(len(words), 0, -1):
        if words[:n] in RUNNERS:
            rest = words[n:]
            if not rest or rest[0].startswith("-"):
                return False
            break
    if any(p[: len(words)] == words or words[: len(p)] == p for p in DENY_PREFIXES):
        return False
    return not is_denied_command(" ".join(words))


def prefix_matches(prefix: str, command: str) -> bool:
    """`Bash(prefix:*)` as lookout counts it: the prefix itself, or it and more words."""
    return command == prefix or command.startswith(prefix + " ")


def suggest(waits: Iterable[Wait]) -> list[Suggestion]:
    """The suggestions for these episodes, most waiting saved first."""
    approved: list[Wait] = []
    refused: list[str] = []  # the rules of requests the user said No to
    for w in waits:
        if w.reason != "permission" or w.rule is None or w.agent not in AGENTS:
            continue
        if w.answer == "approved":
            approved.append(w)
        elif w.answer == "denied":
            refused.append(w.rule)
    refused_commands = [c for c in map(bash_command, refused) if c is not None]
    candidates: dict[str, list[Wait]] = {}
    for w in approved:
        command = bash_command(w.rule)
        if command is not None and is_denied_command(command):
            continue
        candidates.setdefault(w.rule or "", []).append(w)
    out = [
        _suggestion(rule, hits)
        for rule, hits in candidates.items()
        if len(hits) >= MIN_COUNT and rule not in refused
    ]
    out += _prefixes(candidates, refused_commands)
    out.sort(key=lambda s: (-s.wait_ms, -s.count, s.rule))
    return out


def _prefixes(candidates: dict[str, list[Wait]], refused: list[str]) -> list[Suggestion]:
    commands = {c: hits for r, hits in candidates.items() if (c := bash_command(r)) is not None}
    covers = _covers(list(commands), refused)
    out = []
    for prefix, covered in covers.items():
        if len(covered) < MIN_DISTINCT or _narrower_covers_the_same(covers, prefix):
            continue
        hits = [w for c in sorted(covered) for w in commands[c]]
        hits.sort(key=lambda w: w.start_ms)
        out.append(_suggestion(f"Bash({' '.join(prefix)}:*)", hits))
    return out


def _covers(commands: list[str], refused: list[str]) -> dict[tuple[str, ...], frozenset[str]]:
    """Every allowed word prefix of the approved commands (two words or more) -> the approved
    commands it would allow; none that would also allow a refused one."""
    covers: dict[tuple[str, ...], frozenset[str]] = {}
    for command in commands:
        words = tuple(command.split())
        for n in range(2, len(words) + 1):
            prefix = words[:n]
            if prefix in covers or not prefix_allowed(prefix):
                continue
            text = " ".join(prefix)
            # Counted only when every reading of `:*` agrees: a plain string prefix
            # (`npm run lint` of `npm run lint:ci`) would reach an approved or refused command
            # that lookout's word-wise count leaves out.
            loose = [c for c in commands if c.startswith(text)]
            if any(not prefix_matches(text, c) for c in loose):
                continue
            if any(c.startswith(text) for c in refused):
                continue
            covers[prefix] = frozenset(loose)
    return covers


def _narrower_covers_the_same(
    covers: dict[tuple[str, ...], frozenset[str]], prefix: tuple[str, ...]
) -> bool:
    """A longer prefix allows the same approved commands: suggest that one instead."""
    return any(
        len(q) > len(prefix) and q[: len(prefix)] == prefix and covered == covers[prefix]
        for q, covered in covers.items()
    )


def _suggestion(rule: str, hits: list[Wait]) -> Suggestion:
    s = Suggestion(rule_id(rule), rule)
    for w in hits:
        s.count += 1
        s.wait_ms += w.wait_ms
        example = bash_command(w.rule) or w.summary or w.rule or ""
        if example not in s.examples and len(s.examples) < EXAMPLES:
            s.examples.append(example)
        if w.project not in s.projects:
            s.projects.append(w.project)
    return s


def replay(rule: str, waits: Iterable[Wait]) -> int:
    """How many approved dialogs of `waits` the rule would have allowed (the count's check)."""
    prefix = bash_command(rule)
    n = 0
    for w in waits:
        if w.answer != "approved" or w.reason != "permission" or w.rule is None:
            continue
        if w.agent not in AGENTS:
            continue
        if w.rule == rule:
            n += 1
        elif prefix is not None and prefix.endswith(":*"):
            command = bash_command(w.rule)
            if command is not None and prefix_matches(prefix[:-2], command):
                n += 1
    return n
