"""`lookout answer|say|interrupt|start HOST:...` on the fleet's hub (issue 42): the same commands
for another host's request or session, through the broker (lookout.fleet.hub). The owning host
checks and runs it with its own config and says what came of it; this prints that, or an
error and a hint (no fleet, no hub named, not the hub, no answer)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from lookout.errors import LookoutError

if TYPE_CHECKING:
    from lookout.config.fleet import FleetConfig

STEER_TIMEOUT_S = 10.0  # say and interrupt: the owning host waits up to 3 s for the agent
WAIT_TIMEOUT_S = 5.0


def remote(ref: str | None) -> tuple[FleetConfig, str, str] | None:
    """(this host's [fleet], the host, the rest) when `ref` (`HOST:ID`) names another host's
    request or session; None when it names none or this host's own. Raises LookoutError when
    this host cannot reach another's: no [fleet], no hub named, not the hub."""
    from lookout.config import fleet
    from lookout.fleet import hub

    host, rest = hub.owner(ref or "")
    if not host:
        return None
    try:
        cfg = fleet.load()
    except fleet.NotConfigured:
        raise LookoutError(
            f"{ref!r} names host {host}, but this host has no [fleet]",
            hint="answering and steering another host go through the fleet's hub"
            " (docs/fleet.md); a local session whose name has ':': give its id (lookout status)",
        ) from None
    if host == cfg.host:
        return None
    if not cfg.hub:
        raise LookoutError(
            f"{ref!r} names host {host}, but [fleet] hub is not set: each host answers and"
            " steers only its own",
            hint=f'name the hub in every host\'s [fleet]: hub = "{cfg.host}" (docs/fleet.md),'
            f" or run it on {host}",
        )
    if cfg.hub != cfg.host:
        raise LookoutError(
            f"this host ({cfg.host}) is not the fleet's hub ({cfg.hub}): only the hub answers"
            f" and steers another host",
            hint=f"run it on {cfg.hub}, or on {host} itself",
        )
    return cfg, host, rest


def _who() -> str:
    """Who answered or steered, as the owning host records it: the user here, on this host."""
    import getpass
    import os
    import socket

    try:
        user = getpass.getuser()
    except Exception:
        user = str(os.getuid())
    ssh = os.environ.get("SSH_CLIENT", "").split()
    return f"{user}@{socket.gethostname()} (lookout" + (f", ssh {ssh[0]})" if ssh else ")")


def answer(
    cfg: FleetConfig, host: str, rid: str, decision: str, *, as_json: bool, message: str | None
) -> int:
    """Answer request `rid` of `host` with one of the answer tokens it published for the hub."""
    from lookout.fleet import hub

    if decision not in ("allow", "deny"):
        raise LookoutError(
            f"{decision} is not offered for another host's request",
            hint=f"lookout answer {host}:{rid} allow  (or deny)",
        )
    try:
        found = hub.waiting(cfg, WAIT_TIMEOUT_S)
    except LookoutError as exc:
        raise LookoutError(f"cannot read the fleet's requests: {exc}", hint=exc.hint) from None
    rec = next((r for r in found if r["host"] == host and r["id"] == rid), None)
    if rec is None:
        raise LookoutError(
            f"no request {rid} waits on {host}",
            hint=f"the hub sees a host's requests while its bridge runs and its [fleet] names"
            f" this hub ({cfg.host}): lookout doctor on {host} says whether it does",
        )
    if decision == "allow" and not rec["allow"]:
        raise LookoutError(
            f"request {host}:{rid} cannot be allowed from here: {rec['why'] or 'not offered'}",
            hint=f"nothing was sent; answer it in its terminal, or: lookout answer {host}:{rid}"
            " deny",
        )
    sent = hub.press(
        cfg,
        host,
        rec["tokens"][decision],
        surface="terminal",
        by=_who(),
        timeout_s=STEER_TIMEOUT_S,
        message=message or "",
    )
    if as_json:
        print(json.dumps({"host": host, "id": rid, "ok": sent.ok, "text": sent.text}))
        return 0 if sent.ok else 1
    if not sent.ok:
        raise LookoutError(
            f"request {host}:{rid} not answered: {sent.text}",
            hint=f"lookout answer {host}:{rid} {decision} again, or answer it on {host}",
        )
    print(f"{sent.text}: {host}:{rid} {rec['tool_name'] or '?'} ({rec['project'] or '?'})")
    return 0


def steer(
    cfg: FleetConfig,
    host: str,
    action: str,
    *,
    as_json: bool,
    timeout_s: float = STEER_TIMEOUT_S,
    session: str = "",
    project: str = "",
    text: str = "",
    agent: str = "",
) -> int:
    """Steer a session of `host` as the terminal would there; print the lines it shows."""
    from lookout.fleet import hub

    done = hub.steer(
        cfg,
        host,
        action,
        session=session,
        project=project,
        text=text,
        agent=agent,
        source="terminal",
        by=_who(),
        timeout_s=timeout_s,
    )
    if as_json:
        print(json.dumps({"host": host, "ok": done.ok, "lines": list(done.lines)}))
        return 0 if done.ok else 1
    if not done.ok:
        said = [line.split(": ", 1)[-1] for line in done.lines] or ["refused"]
        raise LookoutError(f"{host}: {said[0]}", hint=said[1] if len(said) > 1 else None)
    for line in done.lines:
        print(line)
    return 0
