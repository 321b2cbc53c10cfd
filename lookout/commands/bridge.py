"""`lookout bridge [--once]`: this host's sessions on the MQTT broker named in [fleet]."""

from __future__ import annotations

import signal
import sys

from lookout import paths


def bridge(*, once: bool) -> int:
    from lookout.config import fleet
    from lookout.fleet import bridge as fleet_bridge
    from lookout.fleet import mqtt

    cfg = fleet.load()
    mqtt.require()
    cfg.password()  # an unset password variable is an error now, not a retry loop
    # Its progress is its output (journald keeps it under systemd); failures also go to errors.log.
    runner = fleet_bridge.Bridge(cfg, paths.state_dir(), out=sys.stdout)
    if once:
        return runner.run(once=True)
    previous = runner.install_signals()
    try:
        return runner.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
