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
            if settled is not None:
                return settled
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
        if session is not None:
            self.answer = self._answered(session)
        return requests.ANSWERED_LOCALLY

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
            self.answer = self._answered(session)
            return requests.ANSWERED_LOCALLY  # our episode was open and is over
        # Never saw it open (its record may still be on the way): a turn edge after the request
        # (the prompt was answered and the turn ended, or a new prompt) settles it as well.
        if int(session.get("turn_edge_ms") or 0) > int(self.rec["created_ms"]):
            self.answer = self._answered(session)
            return requests.ANSWERED_LOCALLY
        return None

    def _answered(self, session: Session) -> str | None:
        """allowed / denied: how the state machine saw our episode end (lookout.machine); an
        episode never seen open is known by the request's tool_key."""
        actor = self._actor(session)
        said = actor.get("answered") if isinstance(actor, dict) else None
        if not isinstance(said, dict):
            return None
        if self.episode is not None:
            ours = said.get("episode") == self.episode
        else:
            ours = said.get("tool_key") == self.rec.get("tool_key")
        if ours:
            answer = said.get("answer")
            return answer if answer in ("allowed", "denied") else None
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
