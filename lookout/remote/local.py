"""Has the dialog a request is waiting on been answered without us? The deciding hook asks this a
few times a second. The client tells it nothing when the user presses "Yes" at the keyboard (the
hook keeps running; "No", Esc and a closed terminal send it SIGTERM instead), so the proof is what
lookout knows since: the request's attention episode is over in the snapshot, or
reconcile.still_waiting (issue 10: the transcript's tool_result, the approved command running as
a child of the client) says it no longer waits; a later turn edge, the session's end, or the
agent's process gone settle it too."""

from __future__ import annotations

import os
import time

from lookout import reconcile, store
from lookout.remote import requests

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from lookout.shapes import Session


RECONCILE_S = 0.3
# A dialog over without saying how (the batch's sync PostToolBatch recorded before the approved
# call's async PostToolUse, at load): how long the hook waits for that PostToolUse or the
# transcript's result to say it. Remote answers are refused meanwhile (requests.mark_over).
ANSWER_WAIT_S = 3.0


class Watch:
    """Follows one request's session snapshot; remembers whether its episode was ever seen."""

    def __init__(self, state_dir: str, rec: dict[str, Any]) -> None:
        self.state_dir = state_dir
        self.rec = rec
        self.seen = False
        self.episode: str | None = None
        # How the dialog was answered in the terminal, as the episode's end says it (allowed |
        # denied), once outcome() said ANSWERED_LOCALLY; None when lookout cannot tell.
        self.answer: str | None = None
        self._stamp: tuple[int, int] | None = None
        self._checked = 0.0
        self._over_at: float | None = None  # seen over, how not said yet (ANSWER_WAIT_S)

    def outcome(self) -> str | None:
        """ANSWERED_LOCALLY or ENDED once the terminal or the session settled it, else None."""
        pid = self.rec.get("claude_pid")
        if isinstance(pid, int) and not _alive(pid):
            return requests.ENDED
        path = store.session_file(self.state_dir, self.rec["session_id"])
        try:
            st = os.stat(path)
        except OSError:
            return None
        stamp = (st.st_ino, st.st_mtime_ns)
        if stamp != self._stamp:  # replaced atomically: same inode and time, same content
            self._stamp = stamp
            session = store.read_session(self.state_dir, self.rec["session_id"])
            settled = None if session is None else self.judge(session)
            if settled is not None or self._over_at is not None:
                return settled  # over, how not said yet: judged on this very snapshot
        if self._over_at is not None:
            session = store.read_session(self.state_dir, self.rec["session_id"])
            return requests.ANSWERED_LOCALLY if session is None else self._settle(session)
        return self._reconciled()

    def _reconciled(self) -> str | None:
        """What the transcript and the process table say, checked every RECONCILE_S."""
        now = time.monotonic()
        if self.episode is None or now - self._checked < RECONCILE_S:
            return None
        self._checked = now
        if reconcile.still_waiting(self.state_dir, self.rec["session_id"], self.episode):
            return None
        session = store.read_session(self.state_dir, self.rec["session_id"])
        if session is not None and session.get("status") == "ended":
            return requests.ENDED
        return requests.ANSWERED_LOCALLY if session is None else self._settle(session)

    def _actor(self, session: Session) -> Any:
        agent_id = self.rec.get("agent_id")
        return session.get("agents", {}).get(agent_id) if agent_id else session.get("main")

    def judge(self, session: Session) -> str | None:
        if session.get("status") == "ended":
            return requests.ENDED
        actor = self._actor(session)
        episode = actor.get("episode") if isinstance(actor, dict) else None
        if (
            isinstance(episode, dict)
            and episode.get("tool_key") == self.rec["tool_key"]
            and self.episode in (None, episode.get("key"))
        ):
            self.seen = True
            self.episode = episode.get("key")
            return None
        if self.seen:
            return self._settle(session)  # our episode was open and is over
        # Never saw it open (its record may still be on the way): a turn edge after the request
        # (the prompt was answered and the turn ended, or a new prompt) settles it as well.
        if int(session.get("turn_edge_ms") or 0) > int(self.rec["created_ms"]):
            return self._settle(session)
        return None

    def _settle(self, session: Session) -> str | None:
        """ANSWERED_LOCALLY, with how (`answer`) as the session or the call's transcript result
        says it; None for up to ANSWER_WAIT_S while neither says it yet but may."""
        said = self._said(session)
        answer = said.get("answer") if said is not None else None
        self.answer = answer if answer in ("allowed", "denied") else None
        use_id = said.get("tool_use_id") if said is not None else None
        if self.answer is not None or not use_id:
            return requests.ANSWERED_LOCALLY
        self.answer = self._in_transcript(session, use_id)
        now = time.monotonic()
        if self._over_at is None:
            self._over_at = now
            requests.mark_over(self.state_dir, self.rec["id"])
        if self.answer is None and now - self._over_at < ANSWER_WAIT_S:
            return None
        return requests.ANSWERED_LOCALLY

    def _said(self, session: Session) -> dict[str, Any] | None:
        """How the state machine saw our episode end (lookout.machine's `answered`); an episode
        never seen open is known by the request's tool_key."""
        actor = self._actor(session)
        said = actor.get("answered") if isinstance(actor, dict) else None
        if not isinstance(said, dict):
            return None
        if self.episode is not None:
            ours = said.get("episode") == self.episode
        else:
            ours = said.get("tool_key") == self.rec.get("tool_key")
        return said if ours else None

    def _in_transcript(self, session: Session, use_id: str) -> str | None:
        """The call's result in the transcript: allowed (it ran), denied (the user refused it),
        or None (none yet, or an error that says neither)."""
        path = reconcile.transcript_of(session, self.rec.get("agent_id"))
        result = reconcile.scan_transcript(path, use_id)["result"] if path else None
        if result is None or (result["error"] and not result["rejected"]):
            return None
        return "denied" if result["rejected"] else "allowed"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
