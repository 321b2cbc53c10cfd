"""`install.py --bridge` on macOS: `lookout bridge` as a launchd agent,
~/Library/LaunchAgents/<LABEL>.plist, loaded with launchctl (bootstrap, or load on an old
launchctl); --uninstall and --purge boot it out and remove exactly that file."""

from __future__ import annotations

import os
import plistlib
from pathlib import Path

from lookout import paths
from lookout.errors import LookoutError
from lookout.paths import tilde
from lookout.platform import base
from lookout.platform.base import Service, capture, last_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lookout.platform.base import Out

LABEL = "io.lookout.bridge"
# No "--" inside an XML comment: the options are named without their dashes.
MARK = "<!-- lookout bridge, written by lookout's install.py (bridge; removed by uninstall) -->"


def plist_text(python: str, home: Path) -> str:
    entry = home / "bin" / "lookout"
    job = {
        "Label": LABEL,
        "ProgramArguments": [python, "-I", str(entry), "bridge"],
        # The same state and config as the hooks and the `lookout` command of this install.
        "EnvironmentVariables": {
            "LOOKOUT_STATE_DIR": paths.state_dir(),
            "LOOKOUT_CONFIG": paths.config_path(),
        },
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},  # restart on failure, like Restart=on-failure
        "ThrottleInterval": 10,
        "ProcessType": "Background",
        "StandardErrorPath": os.path.join(paths.state_dir(), "bridge.launchd.log"),
    }
    # plistlib escapes every string as XML: a path with & or < stays a path.
    text = plistlib.dumps(job, sort_keys=False).decode("utf-8")
    head, _, rest = text.partition("\n")
    return f"{head}\n{MARK}\n{rest}"


def _launchctl(*argv: str) -> tuple[int, str]:
    done = capture(["launchctl", *argv], timeout=30)
    return done.returncode, last_line(done)


class LaunchAgent(Service):
    name = "launchd"

    def path(self) -> Path:
        return Path(os.path.expanduser("~")) / "Library" / "LaunchAgents" / f"{LABEL}.plist"

    def install(self, python: str, home: Path, dry_run: bool, out: Out) -> None:
        import shutil

        target = self.path()
        text = plist_text(python, home)
        if shutil.which("launchctl") is None:
            base.no_service("launchctl", out)
            return
        write, current = base.service_file(target, MARK, dry_run, "load it (launchctl)", out)
        if not write:
            return
        if current is not None:
            self._unload(target)  # reload: launchd reads a plist only as it loads it
        base.write_service_file(target, current, text, "launchd agent", out)
        code, why = _launchctl("bootstrap", f"gui/{os.getuid()}", str(target))
        if code != 0:
            code, why = _launchctl("load", "-w", str(target))  # launchctl before 10.10
        if code != 0:
            raise LookoutError(
                f"launchctl bootstrap gui/{os.getuid()} {tilde(target)} failed: {why}",
                hint=f"launchctl print gui/{os.getuid()}/{LABEL} shows why",
            )
        out(f"started {LABEL} (launchctl print gui/{os.getuid()}/{LABEL})")

    def uninstall(self, dry_run: bool, out: Out) -> None:
        import shutil

        target = self.path()
        if not base.service_to_remove(target, MARK, dry_run, "launchd agent", out):
            return
        running = shutil.which("launchctl") is not None
        if running:
            self._unload(target)
        target.unlink()
        out(f"removed launchd agent {tilde(target)}" + (" (stopped)" if running else ""))

    def _unload(self, target: Path) -> None:
        code, _ = _launchctl("bootout", f"gui/{os.getuid()}/{LABEL}")
        if code != 0:
            _launchctl("unload", "-w", str(target))
