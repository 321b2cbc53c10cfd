"""One bot for the fleet (issue 42), set up for real: a private Mosquitto with the shipped ACL
(tests/fixtures/mosquitto/acl), three hosts (the hub, hostb, and hostc, which is no hub), each with
its own state directory and config naming the hub, and one Telegram bot (tests/telegram_api.py)
or one Slack app (tests/slack_api.py) for all of them. Used by tests/e2e/test_remote_fleet.py
and `bench/remote_answer.py --fleet`."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

from lookout import store
from tests.fleet.conftest import Host
from tests.helpers import ROOT, lock_free, wait_for
from tests.mosquitto import Broker
from tests.telegram_api import BotApi, channel_table

HUB, B, C = "hub", "hostb", "hostc"
ACL = ROOT / "tests" / "fixtures" / "mosquitto" / "acl"
TG_TOKEN = "123456:AAH-fleet-bot-for-the-double"
CHAT, OWNER = 1001, 42
SLACK_BOT, SLACK_APP = "xoxb-fleet-bot", "xapp-fleet-app"
SLACK_CHANNEL, SLACK_OWNER = "C0FLEET", "U0OWNER"
READY = "takes presses and steering from the hub"  # the bridge's line once its proof held


def password(user: str) -> str:
    return f"pw-{user}-not-a-real-one"


class CountingBot(BotApi):
    """The Bot API double, counting the getUpdates outstanding at once (the fleet's pollers)."""

    def __init__(self, token: str = TG_TOKEN) -> None:
        super().__init__(token, chats=(CHAT,))
        self.polling = 0
        self.most_polling = 0
        self.pollers: set[str] = set()  # whose getUpdates came (the caller's User-Agent is none)
        self._count = threading.Lock()

    def m_getUpdates(self, p: dict[str, Any]) -> Any:
        with self._count:
            self.polling += 1
            self.most_polling = max(self.most_polling, self.polling)
        try:
            return super().m_getUpdates(p)
        finally:
            with self._count:
                self.polling -= 1

    def pressed(self, message_id: int, data: str) -> tuple[str, float]:
        """The owner presses: (the query's id, when, on this machine's clock in ms)."""
        at = time.time() * 1000
        return self.press(message_id, data, OWNER), at


class ChatHost(Host):
    """A fleet host whose environment has the chat's secrets too."""

    extra: ClassVar[dict[str, str]] = {}

    @property
    def env(self) -> dict[str, str]:
        return {**super().env, **self.extra}

    def bridge_ready(self, timeout: float = 30) -> subprocess.Popen[str]:
        """Its `lookout bridge`, once it proved the hub alone may press and steer it."""
        proc = self.bridge()
        lines: list[str] = []

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.append(line)

        threading.Thread(target=read, daemon=True).start()
        wait_for(lambda: any(READY in x for x in lines), timeout, f"{self.name}'s bridge: {lines}")
        self.lines = lines
        return proc


def telegram_channel(api_url: str) -> str:
    return channel_table(api_url, CHAT, OWNER)


def slack_channel(api_url: str) -> str:
    return (
        '[channels.chat]\ntype = "slack"\nbot_token_env = "LOOKOUT_SLACK_BOT"\n'
        f'app_token_env = "LOOKOUT_SLACK_APP"\nchannel = "{SLACK_CHANNEL}"\n'
        f'allowed_user_ids = ["{SLACK_OWNER}"]\napi_url = "{api_url}"\ncontent = "full"\n'
    )


class Fleet:
    """The broker and the three hosts; `channel`: the chat channel's table, the same on all."""

    def __init__(self, root: Path, channel: str, steer: str = "[steer]\nenabled = true\n") -> None:
        directory = root / "broker"
        directory.mkdir(parents=True)
        users = {u: password(u) for u in (HUB, B, C)}
        self.broker = Broker(directory, acl=ACL, users=users)  # its hub block: user `hub`
        self.broker.start()
        extra = {
            "LOOKOUT_TG_TOKEN": TG_TOKEN,
            "LOOKOUT_SLACK_BOT": SLACK_BOT,
            "LOOKOUT_SLACK_APP": SLACK_APP,
        }
        self.hosts: dict[str, ChatHost] = {}
        for name in (HUB, B, C):
            h = ChatHost(root, name, self.broker, name, password(name))
            h.extra = extra
            h.write_config(hub=HUB)
            # Each host names the one bot's channel as it likes: hostb's is `phone`.
            own = self.channel_name(name)
            rules = f'[[rules]]\nwhen = ["permission", "question", "done"]\nchannels = ["{own}"]\n'
            remote = "[remote]\nenabled = true\nwait_s = 60\n"
            table = channel.replace("[channels.chat]", f"[channels.{own}]")
            with h.config.open("a") as f:
                f.write(f"{steer}{remote}{table}{rules}")
            h.state.mkdir(parents=True)
            self.hosts[name] = h

    @staticmethod
    def channel_name(host: str) -> str:
        return "phone" if host == B else "chat"

    def __getitem__(self, name: str) -> ChatHost:
        return self.hosts[name]

    def start_poller(self, name: str = HUB) -> None:
        """The host's Telegram poller, as a hook or command starts it when it is wanted."""
        h = self.hosts[name]
        code = "import sys; from lookout import spawn; spawn.start_poller(sys.argv[1])"
        subprocess.run(
            [sys.executable, "-c", code, str(h.state)], env=h.env, cwd=ROOT, check=True, timeout=30
        )

    def start_listener(self, name: str = HUB) -> None:
        """The host's Slack listener, as its sender starts it."""
        h = self.hosts[name]
        code = "import sys; from lookout.surfaces import slack; slack.ensure_listener(sys.argv[1])"
        subprocess.run(
            [sys.executable, "-c", code, str(h.state)], env=h.env, cwd=ROOT, check=True, timeout=30
        )

    def close(self) -> None:
        for h in self.hosts.values():
            # steering off, nothing left to listen for: the pollers and listeners leave
            h.config.write_text(f'[fleet]\nmqtt = "{self.broker.url}"\nhost = "{h.name}"\n')
            h.stop()
        self.broker.kill()
        # Before the directories go: every sender, poller and listener has left (each writes
        # its state directory until then).
        for h in self.hosts.values():
            for lock in (store.TELEGRAM_LOCK, "slack.lock", store.SENDER_LOCK):
                wait_for(lambda h=h, lock=lock: lock_free(h.state / lock), 60, f"{h.name}'s {lock}")
