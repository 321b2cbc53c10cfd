"""The one error type the CLI and the installer raise; caught once at the top and printed as
`error: ...` (+ `hint: ...`). Never raised on the hook path, which fails open instead."""

from __future__ import annotations


class LookoutError(Exception):
    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class ConfigError(LookoutError):
    """A config file with problems: every one found, one per line."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("\n".join(errors), hint="see config.example.toml for every key")
        self.errors = errors
