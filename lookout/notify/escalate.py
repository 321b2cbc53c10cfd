"""Escalations as scheduled files (outbox/esc-<due_ms>-...json) and the one check of whether an
escalation is still due. The only part of notify that imports reconcile."""

from __future__ import annotations

import os

from lookout import store, words

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lookout.shapes import Delivery, Intent, ScheduledEscalation


ESCALATION_FILE_PREFIX = "esc-"
ESCALATION_PREFIX = "Still waiting: "
_escalation_seq = iter(range(1 << 62))


def due_ms(name: str) -> int:
    """When an outbox file is due: an escalation's time from its name, a job's now (0)."""
    if name.startswith(ESCALATION_FILE_PREFIX):
        stamp = name[len(ESCALATION_FILE_PREFIX) :].split("-", 1)[0]
        return int(stamp) if stamp.isdigit() else 0
    return 0  # a job: due now


def schedule_escalations(
    created_ms: int, cwd: str | None, deliveries: list[Delivery], outbox: str
) -> None:
    """Each escalation of a job becomes its own file (shapes.ScheduledEscalation), due
    `after_s` after the job was made: the sender waits for it, re-checking it, instead of a
    process sleeping for each one."""
    for d in deliveries:
        for e in d.get("escalate", []):
            due = int(created_ms + e["after_s"] * 1000)
            name = f"{ESCALATION_FILE_PREFIX}{due:013d}-{os.getpid()}-{next(_escalation_seq)}"
            scheduled: ScheduledEscalation = {
                "v": words.JOB_VERSION,
                "cwd": cwd,
                "delivery": d,
                "escalation": e,
            }
            store.write_json_atomic(os.path.join(outbox, name + ".json"), scheduled)


def escalation_due(state_dir: str, intent: Intent) -> bool:
    """Is this escalation still due? The one check, asked while it waits (every POLL_S) and
    right before it pages anyone: the episode still waits on the user after reconciling it with
    the transcript and the process (not answered, not ended, process alive). When that cannot be
    read, the snapshot as the hooks left it decides."""
    from lookout import reconcile

    session_id = str(intent.get("session_id"))
    episode = intent.get("episode")
    if not isinstance(episode, str):
        return False
    try:
        return reconcile.still_waiting(state_dir, session_id, episode)
    except (OSError, TimeoutError):
        snap = store.read_session(state_dir, session_id)
        if snap is None:
            return False
        return snap.get("status") == words.ATTENTION and snap.get("episode") == episode
