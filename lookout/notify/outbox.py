"""The outbox (<state>/outbox/): the notification sender's job files, and the only module that
names, writes, lists or reads one. One format (words.JOB_VERSION, `"v"` first in the file), with
a `kind`:

- alert, `<created_ms>-<pid>.json`: a hook's deliveries (`created_ms`, `deliveries`);
- escalation, `esc-<due_ms>-<pid>-<n>.json`: one delivery's escalation (`delivery`,
  `escalation`);
- grace, `esc-<due_ms>-<pid>-<n>.json`: the channels a rule holds back (`delivery`, `grace`: a
  Hold);
- digest, `esc-<due_ms>-dig-<channel>.json`: a channel's held alerts (`digest`: a Hold, `items`).

Each also has `cwd` (the session's directory: the config the sender reads for it). An alert is
due at once; the rest when their name says (`due_ms`), so the sender waits for one without
reading it. A job without `kind` was written by a lookout from before jobs named their kind: the
same format (same version, same keys), read by its keys, so that a sender started by an upgrade
takes the jobs the previous version left. The keys stay as they were, so a sender of that version
(one still running through an upgrade) takes this version's jobs too.

An alert is written by a hook (handle.write_job: no `os` here, `posix` as on the hook path), the
rest only by the sender, which holds sender.lock: one writer per state directory."""

from __future__ import annotations

import posix

from lookout import paths, store
from lookout.words import JOB_VERSION

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal, TypedDict

    from lookout.shapes import Delivery, Escalation, Hold, Intent

    class AlertJob(TypedDict):
        """A hook's job: what one detached sender sends (no secrets: it re-reads them)."""

        v: int
        kind: Literal["alert"]
        created_ms: int
        cwd: str | None
        deliveries: list[Delivery]

    class EscalationJob(TypedDict):
        """One escalation, sent when due if escalate.escalation_due() still says so."""

        v: int
        kind: Literal["escalation"]
        cwd: str | None
        delivery: Delivery
        escalation: Escalation

    class GraceJob(TypedDict):
        """A rule's remote channels held back: sent when due unless the dialog was answered."""

        v: int
        kind: Literal["grace"]
        cwd: str | None
        delivery: Delivery
        grace: Hold

    class DigestItem(TypedDict):
        intent: Intent
        texts: dict[str, list[str]]

    class DigestJob(TypedDict):
        """A channel's held alerts, merged: one message when due, of those still waiting."""

        v: int
        kind: Literal["digest"]
        cwd: str | None
        digest: Hold  # its `channels` is the one channel
        items: list[DigestItem]

    Job = AlertJob | EscalationJob | GraceJob | DigestJob

KINDS = ("alert", "escalation", "grace", "digest")
# What each kind holds besides v, kind and cwd: a file without them is not a job.
_KEYS = {
    "alert": (("created_ms", int), ("deliveries", list)),
    "escalation": (("delivery", dict), ("escalation", dict)),
    "grace": (("delivery", dict), ("grace", dict)),
    "digest": (("digest", dict), ("items", list)),
}
LATER = "esc-"  # a job due later: `esc-<due_ms>-...` (escalations had it first)
DIGEST_TAG = "-dig-"
_seq = iter(range(1 << 62))


# -- the one parser ------------------------------------------------------------------------------


def parse(raw: object) -> Job | None:
    """A job of this format, its `kind` said (a job written before kinds: read by its keys);
    None for anything else (another version's, torn, not a job)."""
    if not isinstance(raw, dict) or raw.get("v") != JOB_VERSION:
        return None
    kind = raw.get("kind", _kind_by_keys(raw))
    if kind not in _KEYS:
        return None
    if not all(isinstance(raw.get(key), of) for key, of in _KEYS[kind]):
        return None
    return {**raw, "kind": kind}  # type: ignore[return-value]


def _kind_by_keys(raw: dict[str, Any]) -> str | None:
    """The kind of a job written before jobs named it: its keys told."""
    for kind in ("escalation", "grace", "digest"):
        if kind in raw:
            return kind
    return "alert" if "deliveries" in raw else None


def read(path: str) -> tuple[Job | None, bool]:
    """The job at `path` (None: gone, or not a job this version reads), and whether the file is
    a newer lookout's (left as it is: never run, rewritten or removed)."""
    raw = store.read_json(path)
    return parse(raw), store.newer(raw, JOB_VERSION)


def remove(path: str) -> bool:
    """Take the file away; False when it was gone already (another took it)."""
    try:
        posix.unlink(path)
    except FileNotFoundError:
        return False
    return True


def addressed(job: Job) -> list[tuple[Intent, list[str]]]:
    """Each intent the job would send, with the channels it would send it to."""
    if job["kind"] == "alert":
        return [(d["intent"], d["channels"]) for d in job["deliveries"]]
    if job["kind"] == "escalation":
        return [(job["delivery"]["intent"], job["escalation"]["channels"])]
    if job["kind"] == "grace":
        return [(job["delivery"]["intent"], job["grace"]["channels"])]
    return [(item["intent"], job["digest"]["channels"]) for item in job["items"]]


# -- names ---------------------------------------------------------------------------------------


def due_ms(name: str) -> int:
    """When a job is due, by its name: a later job's time, an alert's now (0)."""
    if name.startswith(LATER):
        stamp = name[len(LATER) :].split("-", 1)[0]
        return int(stamp) if stamp.isdigit() else 0
    return 0


def names(outbox: str) -> list[str]:
    """The job files in due order of writing (a newer lookout's are left to it: not listed)."""
    try:
        found = posix.listdir(outbox)
    except FileNotFoundError:
        return []
    return sorted(
        n
        for n in found
        if n.endswith(".json")
        and not n.startswith(".")
        and not store.file_newer(paths.join(outbox, n), JOB_VERSION)
    )


def later(outbox: str) -> list[tuple[str, Job]]:
    """Each job waiting to be due (escalations, grace and digests), read: (path, job)."""
    try:
        found = sorted(posix.listdir(outbox))
    except FileNotFoundError:
        return []
    out = []
    for name in found:
        if name.startswith(LATER) and name.endswith(".json"):
            path = paths.join(outbox, name)
            job = read(path)[0]
            if job is not None:
                out.append((path, job))
    return out


# -- writing -------------------------------------------------------------------------------------


def alert(created_ms: int, cwd: str | None, deliveries: list[Delivery]) -> AlertJob:
    return {
        "v": JOB_VERSION,
        "kind": "alert",
        "created_ms": created_ms,
        "cwd": cwd,
        "deliveries": deliveries,
    }


def write_alert(state_dir: str, job: AlertJob) -> str:
    """A hook's job into outbox/ (its path): the sender takes it at once."""
    outbox = paths.join(state_dir, store.OUTBOX)
    store.ensure_dir(outbox)
    path = paths.join(outbox, f"{job['created_ms']}-{posix.getpid()}.json")
    store.write_json_atomic(path, job)
    return path


def _later_path(outbox: str, due: int) -> str:
    return paths.join(outbox, f"{LATER}{due:013d}-{posix.getpid()}-{next(_seq)}.json")


def escalate(outbox: str, due: int, cwd: str | None, d: Delivery, e: Escalation) -> None:
    job: EscalationJob = {
        "v": JOB_VERSION,
        "kind": "escalation",
        "cwd": cwd,
        "delivery": d,
        "escalation": e,
    }
    store.write_json_atomic(_later_path(outbox, due), job)


def grace(outbox: str, due: int, cwd: str | None, d: Delivery, h: Hold) -> None:
    job: GraceJob = {"v": JOB_VERSION, "kind": "grace", "cwd": cwd, "delivery": d, "grace": h}
    store.write_json_atomic(_later_path(outbox, due), job)


def digests(outbox: str, channel: str) -> list[str]:
    """The paths of `channel`'s open digests (one, unless the sender was killed mid-way)."""
    suffix = f"{DIGEST_TAG}{channel}.json"
    try:
        found = posix.listdir(outbox)
    except FileNotFoundError:
        return []
    return sorted(
        paths.join(outbox, n) for n in found if n.startswith(LATER) and n.endswith(suffix)
    )


def join_digest(outbox: str, channel: str, item: DigestItem) -> int | None:
    """Add `item` to the channel's open digest: how many it held already; None: none is open."""
    for path in digests(outbox, channel):
        job = read(path)[0]
        if job is not None and job["kind"] == "digest":
            others = len(job["items"])
            job["items"].append(item)
            store.write_json_atomic(path, job)
            return others
    return None


def open_digest(outbox: str, due: int, cwd: str | None, h: Hold, item: DigestItem) -> None:
    """A digest for the one channel of `h`, due at `due`, holding `item`."""
    name = f"{LATER}{due:013d}{DIGEST_TAG}{h['channels'][0]}.json"
    job: DigestJob = {"v": JOB_VERSION, "kind": "digest", "cwd": cwd, "digest": h, "items": [item]}
    store.write_json_atomic(paths.join(outbox, name), job)


def keep_items(path: str, job: DigestJob, items: list[DigestItem]) -> None:
    """A digest with only `items` left (removed when none is)."""
    if items:
        store.write_json_atomic(path, {**job, "items": items})
    else:
        remove(path)
