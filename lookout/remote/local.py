"""Has the dialog a request is waiting on been answered without us? The deciding hook asks this a
few times a second. The client tells it nothing when the user presses "Yes" at the keyboard (the
hook keeps running; "No", Esc and a closed terminal send it SIGTERM instead), so the proof is what
lookout recorded since: the request's attention episode is over, a later turn began or ended, the
session ended, or the agent's process is gone."""

from __future__ import annotations

import os

from lookout import store
from lookout.remote import requests

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Watch:
    """Follows one request's session snapshot; remembers whether its episode was ever seen."""

    def __init__(self, state_dir: str, rec: dict[str, Any]) -> None:
        self.state_dir = state_dir
        self.rec = rec
        self.seen = False
        self._stamp: tuple[int, int] | None = None

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
        if stamp == self._stamp:
            return None  # the snapshot is replaced atomically: same inode and time, same content
        self._stamp = stamp
        session = store.read_session(self.state_dir, self.rec["session_id"])
        return None if session is None else self.judge(session)

    def judge(self, session: dict[str, Any]) -> str | None:
        if session.get("status") == "ended":
            return requests.ENDED
        agent_id = self.rec.get("agent_id")
        actor = session.get("agents", {}).get(agent_id) if agent_id else session.get("main")
        episode = actor.get("episode") if isinstance(actor, dict) else None
        if isinstance(episode, dict) and episode.get("tool_key") == self.rec["tool_key"]:
            self.seen = True
            return None
        if self.seen:
            return requests.ANSWERED_LOCALLY  # our episode was open and is over
        # Never saw it open (its record may still be on the way): a turn edge after the request
        # (the prompt was answered and the turn ended, or a new prompt) settles it as well.
        if int(session.get("turn_edge_ms") or 0) > int(self.rec["created_ms"]):
            return requests.ANSWERED_LOCALLY
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
