"""Placeholder templates: plain text only, strict placeholders, readable content per level."""

from __future__ import annotations

from typing import Any

import pytest

from lookout import templates


def intent(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "kind": "permission",
        "session_id": "s1",
        "agent": "claude",
        "agent_id": None,
        "project": "demo",
        "cwd": "/work/demo",
        "reason": "permission",
        "tool_name": "Bash",
        "summary": "rm -rf build/",
        "message": "Claude needs your permission to use Bash",
        "duration_ms": None,
        "episode": "s1:permission:x",
        "ts_ms": 0,
    }
    base.update(fields)
    return base


def test_parse_splits_literals_and_fields() -> None:
    assert templates.parse("{project} · {kind}!") == [
        (True, "project"),
        (False, " · "),
        (True, "kind"),
        (False, "!"),
    ]


def test_double_braces_are_literal() -> None:
    assert templates.render("{{x}} {project}", {"project": "demo"}) == "{x} demo"


@pytest.mark.parametrize(
    ("template", "message"),
    [
        (
            "{nope}",
            "unknown placeholder {nope} (expected one of {cwd}, {duration}, {kind}, "
            "{message}, {project}, {question}, {reason}, {session}, {session_id}, {summary}, "
            "{tool_name}, {until})",
        ),
        ("{project.__class__}", "unknown placeholder {project.__class__}"),
        ("{project!r}", "unknown placeholder {project!r}"),
        ("{project:>99999}", "unknown placeholder {project:>99999}"),
        ("{0}", "unknown placeholder {0}"),
        ("{}", "unknown placeholder {}"),
        ("open {project", "unclosed '{' at position 5 (write {{ for a literal brace)"),
        ("a } b", "single '}' at position 2 (write }} for a literal brace)"),
    ],
    ids=[
        "unknown",
        "attribute",
        "conversion",
        "format-spec",
        "index",
        "empty",
        "unclosed",
        "single-close",
    ],
)
def test_bad_templates_are_errors(template: str, message: str) -> None:
    with pytest.raises(ValueError) as exc:
        templates.parse(template)
    assert str(exc.value).startswith(message)


def test_values_are_inserted_verbatim_never_expanded() -> None:
    vals = templates.values(intent(summary="{cwd} {{x}} %s", tool_name=""), "full")
    assert templates.render("{summary}", vals) == "{cwd} {{x}} %s"


def test_argv_placeholders_add_title_and_body() -> None:
    templates.parse("{title}: {body}", templates.ARGV_PLACEHOLDERS)
    with pytest.raises(ValueError):
        templates.parse("{title}")


@pytest.mark.parametrize(
    ("ms", "text"),
    [(None, ""), (-1, ""), (0, "0s"), (45_900, "45s"), (192_000, "3m12s"), (3_725_000, "1h02m")],
)
def test_format_duration(ms: Any, text: str) -> None:
    assert templates.format_duration(ms) == text


def test_strip_markdown() -> None:
    md = (
        "# Summary\n\nI **fixed** the `build` and [docs](https://x.example/a).\n\n"
        "```python\nprint(1)\n```\n- one\n* two\n> quoted\n![img](http://i)"
    )
    assert templates.strip_markdown(md) == (
        "Summary\n\nI fixed the build and docs.\n\nprint(1)\n• one\n• two\nquoted\nimg"
    )


def test_truncate_on_a_word() -> None:
    assert templates.truncate("alpha beta gamma delta", 12) == "alpha beta…"
    assert templates.truncate("short", 12) == "short"


def test_permission_default_texts() -> None:
    title, body = templates.render_texts(intent(), templates.DEFAULTS)
    assert (title, body) == ("demo · needs permission", "Bash: rm -rf build/")


def test_done_texts_carry_duration_and_stripped_message() -> None:
    long = "**Done.** " + "word " * 300
    title, body = templates.render_texts(
        intent(
            kind="done", reason=None, tool_name=None, summary="", message=long, duration_ms=192_000
        ),
        templates.DEFAULTS,
    )
    assert title == "demo · done in 3m12s"
    assert body.startswith("Done. word word")
    assert body.endswith("…") and len(body) <= templates.FULL_CHARS


def test_done_without_duration_reads_well() -> None:
    title, _ = templates.render_texts(intent(kind="done", duration_ms=None), templates.DEFAULTS)
    assert title == "demo · done"


def test_question_uses_question_text() -> None:
    title, body = templates.render_texts(
        intent(
            kind="question",
            reason="question",
            tool_name="AskUserQuestion",
            question="Which database?\nPostgres or SQLite",
            summary="Which database?",
        ),
        templates.DEFAULTS,
    )
    assert (title, body) == ("demo · has a question", "Which database?\nPostgres or SQLite")


def test_summary_level_is_one_line_and_none_is_empty() -> None:
    i = intent(kind="done", message="First line.\n\nSecond line with secrets", duration_ms=5000)
    assert templates.render_texts(i, templates.DEFAULTS, "summary")[1] == "First line."
    assert templates.render_texts(i, templates.DEFAULTS, "none") == ("demo · done in 5s", "")


def test_summary_is_built_from_tool_and_first_line() -> None:
    vals = templates.values(intent(summary="make test\n&& rm -rf /"), "summary")
    assert vals["summary"] == "Bash: make test"


def test_resolved_texts() -> None:
    title, body = templates.render_texts(
        intent(kind="resolved", duration_ms=42_000), templates.DEFAULTS
    )
    assert (title, body) == ("demo · permission handled", "after 42s")


@pytest.mark.parametrize(
    ("answer", "by", "duration_ms", "texts"),
    [
        (
            "allowed",
            "by the dashboard (127.0.0.1)",
            42_000,
            ("demo · permission allowed", "by the dashboard (127.0.0.1), after 42s"),
        ),
        (
            "denied",
            "in the terminal",
            3_000,
            ("demo · permission denied", "in the terminal, after 3s"),
        ),
        ("allowed", None, 5_000, ("demo · permission allowed", "after 5s")),
        (
            "denied",
            "by {odd} (lookout answer)",
            None,
            ("demo · permission denied", "by {odd} (lookout answer)"),
        ),
    ],
)
def test_a_resolved_permission_says_allowed_or_denied_and_by_whom(
    answer: str, by: str | None, duration_ms: int | None, texts: tuple[str, str]
) -> None:
    fields: dict[str, Any] = {"kind": "resolved", "duration_ms": duration_ms, "answer": answer}
    if by is not None:
        fields["by"] = by
    assert templates.render_texts(intent(**fields), templates.DEFAULTS) == texts
    # The user's own template wins.
    tmpl = {"resolved": {"title": "{project} ok", "message": "{duration}"}}
    assert templates.render_texts(intent(**fields), tmpl)[0] == "demo ok"
    # The session's title, as the alert it updates and `lookout status` name it.
    titled = templates.render_texts(intent(**fields, title="demo-fix"), templates.DEFAULTS)
    assert titled == (texts[0].replace("demo ·", "demo-fix ·"), texts[1])


def test_project_falls_back_to_cwd_name() -> None:
    assert templates.values(intent(project="", cwd="/w/api/"))["project"] == "api"


def test_custom_template() -> None:
    tmpl = {"permission": {"title": "[{project}] {tool_name}", "message": "{reason}"}}
    assert templates.render_texts(intent(), tmpl) == ("[demo] Bash", "permission")


def test_a_resolved_episode_says_what_ended_it_when_the_user_did_not() -> None:
    base = {
        "kind": "resolved",
        "project": "api",
        "reason": "permission",
        "duration_ms": 8000,
        "summary": "touch x",
    }
    assert templates.render_texts(base, {}) == ("api · permission handled", "after 8s")
    ended = {**base, "outcome": "ended"}
    assert templates.render_texts(ended, {}) == ("api · session ended", "it was waiting: touch x")
    assert templates.render_texts({**base, "outcome": "ack"}, {}) == (
        "api · permission cleared",
        "by lookout ack",
    )
    # The user's own template wins.
    own = {"resolved": {"title": "{project} ok", "message": ""}}
    assert templates.render_texts(ended, own) == ("api ok", "")
