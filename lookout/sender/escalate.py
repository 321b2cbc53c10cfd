"""Escalations as jobs due later (notify/outbox.py: kind `escalation`), the one check of whether an
escalation is still due, and the watch over alerts that are out (an answered dialog gets its
"handled" update from the sender, within WATCH_S). The only part of the sender that imports
reconcile."""

from __future__ import annotations

import os

from lookout import store, words
from lookout.notify import outbox

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lookout.shapes import Delivery, Intent


ESCALATION_PREFIX = "Still waiting: "


def schedule_escalations(
    created_ms: int, cwd: str | None, deliveries: list[Delivery], outbox_dir: str
) -> None:
    """Each escalation of a job becomes a job of its own (kind `escalation`), due `after_s`
    after the job was made: the sender waits for it, re-checking it, instead of a process
    sleeping for each one."""
    for d in deliveries:
        for e in d.get("escalate", []):
            outbox.escalate(outbox_dir, int(created_ms + e["after_s"] * 1000), cwd, d, e)


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


def still_open(state_dir: str, intent: Intent) -> bool:
    """The intent's episode is open in the snapshot as the hooks and readers left it (no
    reconcile: cheap enough to ask several times a second)."""
    from lookout import reconcile

    episode = intent.get("episode")
    snap = store.read_session(state_dir, str(intent.get("session_id")))
    return isinstance(episode, str) and snap is not None and reconcile.episode_open(snap, episode)


# How often the sender looks whether a dialog whose alert is out was answered (issue 22: the
# "handled" update within 2 s, with no reader running).
WATCH_S = 1.0


def open_alerts(state_dir: str) -> list[str]:
    """Sessions with an alert out (notify-state.json remembers the episode) for an episode the
    snapshot still shows open, and something reconcile can read to prove an answer (a transcript
    or a process): what the sender keeps watching."""
    from lookout import reconcile
    from lookout.sessions import STALE_AFTER_S

    now_ms = words.now_ms()
    state = store.read_json(os.path.join(state_dir, store.NOTIFY_STATE))
    episodes = state.get("episodes") if isinstance(state, dict) else None
    if not isinstance(episodes, dict):
        return []
    found: list[str] = []
    for key, alerted in episodes.items():
        if not isinstance(alerted, dict):
            continue
        if now_ms - int(alerted.get("ts_ms") or 0) > STALE_AFTER_S * 1000:
            continue  # a dialog open this long is shown as stale: no longer watched
        session_id = alerted.get("session_id")
        if not isinstance(session_id, str):
            session_id = str(key).split(":", 1)[0]  # an episode key starts with its session id
        if session_id in found:
            continue
        snap = store.read_session(state_dir, session_id)
        if snap is None or snap.get("status") != words.ATTENTION:
            continue
        transcript = snap.get("transcript")
        readable = isinstance(transcript, str) and os.path.isfile(transcript)
        if not (readable or isinstance(snap.get("pid"), int)):
            continue  # nothing to prove an answer with: the hooks alone will say it
        if reconcile.episode_open(snap, str(key)):
            found.append(session_id)
    return found


def limit_until(state_dir: str, intent: Intent) -> None:
    """A failed turn's alert on a usage limit says until when (`until_ms`, the `{until}` of its
    texts): the limit is read first, as the sender's timers would (a `limit` record), and kept
    only while the failure the alert is about is still the one open. Read before the client
    wrote its exact time, what its message said is shown, and nothing is recorded."""
    from lookout import silence

    if intent.get("kind") != "error" or not intent.get("episode"):
        return
    watch(state_dir, [intent["session_id"]])
    snapshot = store.read_session(state_dir, intent["session_id"])
    main = snapshot.get("main") if snapshot is not None else None
    episode = main.get("episode") if isinstance(main, dict) else None
    if snapshot is None or not isinstance(episode, dict) or not silence.limited(snapshot, episode):
        return
    if episode.get("key") != intent["episode"]:
        return
    until = episode.get("until_ms")
    if "until_ms" not in episode and snapshot.get("limit_read") != episode.get("key"):
        # Its transcript line (the exact time) not written yet: the text says what the message
        # did (a minute is what it shows); the lift waits for the exact time (silence.read_limit).
        until, _ = silence.read_limit(snapshot, episode)
    if isinstance(until, int) and until > 0:
        intent["until_ms"] = until


def watch(state_dir: str, session_ids: list[str]) -> None:
    """Reconcile the watched sessions: an answer found is recorded, and its `resolved` job goes
    into outbox/ for this very sender (it holds sender.lock), sent from its environment."""
    from lookout import reconcile

    try:
        reconcile.reconcile(state_dir, session_ids)
    except (OSError, TimeoutError):
        pass  # the next look tries again
