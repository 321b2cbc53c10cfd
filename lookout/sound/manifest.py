"""The fields of a pack's openpeon.json (CESP 1.0, section 2 and its JSON schema), checked as
untrusted input: every problem is said with its key path. Pure: the pack's files are pack.py's.

A pack of CESP 1.0 is held to the schema (no unknown field or category); a later 1.x may add
optional fields and categories (section 8.1), which are then passed over."""

from __future__ import annotations

from lookout.sound.categories import CATEGORIES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypedDict

    class Entry(TypedDict):
        file: str  # as the manifest writes it: relative, forward slashes
        label: str
        sha256: str | None

    class Manifest(TypedDict):
        cesp_version: str
        name: str
        display_name: str
        version: str
        categories: dict[str, list[Entry]]
        aliases: dict[str, str]
        preview: str | None


REQUIRED = ("cesp_version", "name", "display_name", "version", "categories")
OPTIONAL = ("description", "author", "license", "language", "homepage", "tags", "preview",
            "min_player_version", "category_aliases")  # fmt: skip
AUDIO_EXTENSIONS = {".wav": "wav", ".mp3": "mp3", ".ogg": "ogg"}
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ") | _LOWER
_FILE_CHARS = _ALNUM | frozenset("._-")
_HEX = frozenset("0123456789abcdef")


class Problems:
    """The problems found in one manifest, each `key.path: what is wrong`."""

    def __init__(self) -> None:
        self.found: list[str] = []

    def add(self, path: str, text: str) -> None:
        self.found.append(f"{path}: {text}" if path else text)

    def string(self, data: dict[str, object], key: str, path: str, most: int = 0) -> str | None:
        value = data.get(key)
        if not isinstance(value, str):
            self.add(path, f"expected a string, got {kind_of(value)}")
            return None
        if most and len(value) > most:
            self.add(path, f"at most {most} characters, got {len(value)}")
            return None
        return value


def kind_of(value: object) -> str:
    names = {bool: "a bool", int: "a number", float: "a number", str: "a string",
             list: "an array", dict: "an object", type(None): "null"}  # fmt: skip
    return names.get(type(value), type(value).__name__)


def shown(value: str, most: int = 60) -> str:
    """A manifest's string as an error quotes it: cut, and repr'd so no control character
    reaches a terminal."""
    return repr(value if len(value) <= most else value[: most - 1] + "…")


def is_pack_name(text: str) -> bool:
    return 0 < len(text) <= 64 and text[0] in _LOWER and all(c in _LOWER or c in "_-" for c in text)


def _number(part: str) -> bool:
    return part.isascii() and part.isdigit() and (part == "0" or not part.startswith("0"))


def _identifiers(text: str, numeric: bool) -> bool:
    for ident in text.split("."):
        if not ident or not all(c in _ALNUM or c == "-" for c in ident):
            return False
        if numeric and ident.isdigit() and not _number(ident):
            return False
    return True


def is_semver(text: str) -> bool:
    """Semantic Versioning 2.0: MAJOR.MINOR.PATCH[-pre.release][+build]."""
    core, plus, build = text.partition("+")
    if plus and not _identifiers(build, numeric=False):
        return False
    core, dash, pre = core.partition("-")
    if dash and not _identifiers(pre, numeric=True):
        return False
    parts = core.split(".")
    return len(parts) == 3 and all(_number(p) for p in parts)


def is_github_user(text: str) -> bool:
    return (
        0 < len(text) <= 39
        and all(c in _ALNUM or c == "-" for c in text)
        and not text.startswith("-")
        and not text.endswith("-")
        and "--" not in text
    )


def is_language(text: str) -> bool:
    """A BCP 47 tag of the schema's shape: `en`, `zh-Hant`, `pt-BR`, `zh-Hant-TW`."""
    parts = text.split("-")
    lang, rest = parts[0], parts[1:]
    if not (2 <= len(lang) <= 3 and lang.isascii() and lang.isalpha() and lang.islower()):
        return False
    if rest and len(rest[0]) == 4:
        script = rest.pop(0)
        if not (script.isascii() and script.isalpha() and script.istitle()):
            return False
    if rest:
        region = rest.pop(0)
        if not (len(region) == 2 and region.isascii() and region.isalpha() and region.isupper()):
            return False
    return not rest


def file_problem(value: str) -> str | None:
    """Why a manifest's file path is refused before the disk is asked: CESP 3.1 and 4.3."""
    if value.startswith("/"):
        return "must be relative to the manifest (no leading /)"
    parts = value.split("/")
    if ".." in parts:
        return "leaves the pack directory (no ../)"
    if "\\" in value:
        return "uses a backslash (paths use forward slashes)"
    if any(not all(c in _FILE_CHARS for c in part) for part in parts):
        return "file names use letters, digits, '.', '_' and '-' only (CESP 4.3)"
    if any(part in ("", ".") for part in parts):
        return "has an empty or '.' path component"
    ext = "." + parts[-1].rpartition(".")[2].lower() if "." in parts[-1] else ""
    if ext not in AUDIO_EXTENSIONS:
        return "is not .wav, .mp3 or .ogg (the audio formats of CESP 4.1)"
    return None


def check(data: object) -> tuple[Manifest | None, list[str]]:
    """Every problem found, and the manifest's meaning with the sound entries that are well
    formed (for their files to be checked as well), or None without its name, display name
    and versions."""
    p = Problems()
    if not isinstance(data, dict):
        p.add("", f"expected a JSON object, got {kind_of(data)}")
        return None, p.found
    for key in REQUIRED:
        if key not in data:
            p.add("", f"missing field {key!r}")
    version = _cesp_version(p, data)
    strict = version == "1.0"
    if strict:
        for key in data:
            if key not in REQUIRED + OPTIONAL:
                p.add("", f"unknown field {shown(str(key))} (CESP 1.0 has no such field)")
    name = _name(p, data)
    display = (
        p.string(data, "display_name", "display_name", 128) if "display_name" in data else None
    )
    if display == "":
        p.add("display_name", "expected 1-128 characters, got an empty string")
    pack_version = p.string(data, "version", "version") if "version" in data else None
    if pack_version is not None and not is_semver(pack_version):
        p.add("version", f"expected a semantic version (1.0.0), got {shown(pack_version)}")
    categories = _categories(p, data.get("categories"), strict) if "categories" in data else {}
    aliases = _aliases(p, data.get("category_aliases", {}))
    preview = _preview(p, data)
    _optional(p, data)
    if version is None or name is None or not display or pack_version is None:
        return None, p.found  # the pack is unnamed: its files are not looked at
    manifest: Manifest = {
        "cesp_version": version,
        "name": name,
        "display_name": display,
        "version": pack_version,
        "categories": categories,
        "aliases": aliases,
        "preview": preview,
    }
    return manifest, p.found


def _cesp_version(p: Problems, data: dict[str, object]) -> str | None:
    if "cesp_version" not in data:
        return None
    value = p.string(data, "cesp_version", "cesp_version")
    if value is None:
        return None
    major, dot, minor = value.partition(".")
    if major != "1" or not dot or not _number(minor):
        p.add("cesp_version", f'expected "1.0" (lookout plays CESP 1.x packs), got {shown(value)}')
        return None
    return value


def _name(p: Problems, data: dict[str, object]) -> str | None:
    if "name" not in data:
        return None
    value = p.string(data, "name", "name")
    if value is not None and not is_pack_name(value):
        p.add(
            "name",
            "expected 1-64 characters of a-z, 0-9, '_' and '-', starting with a letter or digit,"
            f" got {shown(value)}",
        )
        return None
    return value


def _categories(p: Problems, raw: object, strict: bool) -> dict[str, list[Entry]]:
    if not isinstance(raw, dict):
        p.add("categories", f"expected an object, got {kind_of(raw)}")
        return {}
    out: dict[str, list[Entry]] = {}
    for category, value in raw.items():
        path = f"categories[{shown(str(category))}]"
        if category not in CATEGORIES:
            if strict:
                p.add(path, f"not a CESP 1.0 category (expected one of {', '.join(CATEGORIES)})")
            continue
        if not isinstance(value, dict) or not isinstance(value.get("sounds"), list):
            p.add(path, 'expected an object with a "sounds" array')
            continue
        if strict:
            for key in value:
                if key != "sounds":
                    p.add(path, f"unknown field {shown(str(key))}")
        out[category] = [
            entry
            for i, sound in enumerate(value["sounds"])
            if (entry := _entry(p, f"{path}.sounds[{i}]", sound, strict)) is not None
        ]
    return out


def _entry(p: Problems, path: str, raw: object, strict: bool) -> Entry | None:
    if not isinstance(raw, dict):
        p.add(path, f'expected an object with "file" and "label", got {kind_of(raw)}')
        return None
    before = len(p.found)
    for key in ("file", "label"):
        if key not in raw:
            p.add(path, f"missing field {key!r}")
    if strict:
        for key in raw:
            if key not in ("file", "label", "sha256"):
                p.add(path, f"unknown field {shown(str(key))}")
    file = p.string(raw, "file", f"{path}.file") if "file" in raw else None
    if file is not None and (why := file_problem(file)) is not None:
        p.add(f"{path}.file", f"{shown(file)} {why}")
    label = p.string(raw, "label", f"{path}.label", 256) if "label" in raw else None
    digest = None
    if "sha256" in raw:
        digest = p.string(raw, "sha256", f"{path}.sha256")
        if digest is not None and not (len(digest) == 64 and set(digest) <= _HEX):
            p.add(f"{path}.sha256", "expected 64 lowercase hex digits")
    if len(p.found) > before or file is None or label is None:
        return None
    return {"file": file, "label": label, "sha256": digest}


def _aliases(p: Problems, raw: object) -> dict[str, str]:
    if not isinstance(raw, dict):
        p.add("category_aliases", f"expected an object, got {kind_of(raw)}")
        return {}
    out = {}
    for alias, target in raw.items():
        if not isinstance(target, str) or target not in CATEGORIES:
            shown_target = shown(target) if isinstance(target, str) else kind_of(target)
            p.add(
                f"category_aliases[{shown(str(alias))}]",
                f"expected a CESP category, got {shown_target}",
            )
        else:
            out[str(alias)] = target
    return out


def _preview(p: Problems, data: dict[str, object]) -> str | None:
    if "preview" not in data:
        return None
    value = p.string(data, "preview", "preview")
    if value is not None and (why := file_problem(value)) is not None:
        p.add("preview", f"{shown(value)} {why}")
        return None
    return value


def _optional(p: Problems, data: dict[str, object]) -> None:
    """The recommended and optional fields: never used by lookout, checked for their shape."""
    if "description" in data:
        p.string(data, "description", "description", 256)
    for key in ("license", "homepage", "min_player_version"):
        if key in data:
            p.string(data, key, key)
    if "language" in data:
        lang = p.string(data, "language", "language")
        if lang is not None and not is_language(lang):
            p.add("language", f"expected a BCP 47 tag such as en or pt-BR, got {shown(lang)}")
    if "author" in data:
        _author(p, data["author"])
    if "tags" in data:
        _tags(p, data["tags"])


def _author(p: Problems, raw: object) -> None:
    if not isinstance(raw, dict):
        p.add("author", f"expected an object, got {kind_of(raw)}")
        return
    if "name" not in raw:
        p.add("author", "missing field 'name'")
    else:
        p.string(raw, "name", "author.name")
    for key in raw:
        if key not in ("name", "github"):
            p.add("author", f"unknown field {shown(str(key))}")
    if "github" in raw:
        user = p.string(raw, "github", "author.github")
        if user is not None and not is_github_user(user):
            p.add("author.github", f"expected a GitHub user name, got {shown(user)}")


def _tags(p: Problems, raw: object) -> None:
    if not isinstance(raw, list) or not all(isinstance(t, str) for t in raw):
        p.add("tags", "expected an array of strings")
        return
    if len(raw) > 10:
        p.add("tags", f"at most 10 tags, got {len(raw)}")
    if len(set(raw)) != len(raw):
        p.add("tags", "a tag is listed twice")
    for i, tag in enumerate(raw):
        if len(tag) > 32:
            p.add(f"tags[{i}]", f"at most 32 characters, got {len(tag)}")
