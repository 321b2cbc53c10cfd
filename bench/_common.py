"""What the benchmarks share: a quiet environment for the hooks they run, and the verdict line."""

from __future__ import annotations

import os


def quiet_config(tmp: str) -> str:
    path = os.path.join(tmp, "config.toml")
    with open(path, "w", encoding="utf-8") as f:
        # No rules: no notifications. Stuck judged but never reached while a bench runs (its
        # sessions are minutes old: one could turn stuck between two runs, changing the status).
        f.write("# no rules: no notifications\n[sessions]\nstuck_after_s = 86400\n")
    return path


def child_env(tmp: str, state_dir: str | None = None) -> dict[str, str]:
    """The caller's environment minus anything that would skew or leak: no bytecode switch-off,
    state (unless given) and config in `tmp`, no Claude session variables."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTHON", "LOOKOUT_", "CLAUDE_")) and k not in ("TMUX", "TMUX_PANE")
    }
    env["LOOKOUT_STATE_DIR"] = state_dir or os.path.join(tmp, "state")
    # An empty config file has no rules: a benchmark never sends a notification.
    env["LOOKOUT_CONFIG"] = quiet_config(tmp)
    env["XDG_CONFIG_HOME"] = os.path.join(tmp, "config")
    return env


def verdict(ratio: float, max_ratio: float | None) -> int:
    """Print the last line (`ok` or `FAIL: ...`) and return the exit status."""
    if max_ratio is not None and ratio > max_ratio:
        print(f"FAIL: {ratio:.2f}x > {max_ratio:.2f}x")
        return 1
    print("ok" if max_ratio is None else f"ok: {ratio:.2f}x <= {max_ratio:.2f}x")
    return 0


def children_cpu_s() -> float:
    """CPU time (user + system) of every child process waited for so far. Unlike wall time it
    hardly moves with the machine's load: a second view of the same runs on a busy machine."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())
