"""`lookout bridge [--once]`: this host's sessions on the MQTT broker named in [fleet]."""

from __future__ import annotations

import argparse
import signal
import sys

from lookout import paths


def declare(p: argparse.ArgumentParser) -> None:
    """Follow the state directory and publish each session's state to the MQTT broker named in
    [fleet] (retained, one topic per session; `online` with a Last Will), so `lookout status
    --fleet` on any host shows them. Runs until stopped; one bridge per state directory. Needs
    paho-mqtt (python3 install.py --bridge installs it)."""
    p.add_argument(
        "--once", action="store_true", help="publish the current state and exit (cron, CI)"
    )


def run(args: argparse.Namespace) -> int:
    return bridge(once=args.once)


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
