"""N7 (security-2.md): no credential from a command or a message leaves the machine in a
notification, at any content level, through any channel type (lookout.mask is the one masker)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lookout.sender import sender
from tests.helpers import calls, recorder, shape, write_config
from tests.notify.jobs import intent, make_job
from tests.receivers import ntfy_receiver, webhook_receiver

COMMAND = 'curl -H "Authorization: Bearer sk-live-PRIVATEKEY123" https://api.internal/x'
SECRETS = ("sk-live-PRIVATEKEY123", "hunter2", "S3cretPass")
MESSAGE = "deploy with sshpass -p hunter2 ssh prod and curl -u admin:S3cretPass https://x"


def test_the_reviews_webhook_at_the_default_level_gets_no_bearer_token(state_dir: Path) -> None:
    with webhook_receiver() as rx:
        write_config(
            f'[channels.hook]\ntype = "webhook"\nurl = "{rx.url}"\n'
            '[[rules]]\nwhen = ["permission"]\nchannels = ["hook"]\n'
        )
        sender.run_job(make_job(state_dir, [intent(summary=COMMAND)]), str(state_dir))
        (req,) = rx.wait_for(1)
    body = req.body.decode()
    assert "Authorization: Bearer \u2039secret, 21 chars\u203a" in json.loads(body)["message"]
    assert "sk-live" not in body


@pytest.mark.parametrize("content", ["full", "summary", "none"])
def test_ntfy_at_every_level_gets_no_secret(state_dir: Path, content: str) -> None:
    with ntfy_receiver() as rx:
        write_config(
            f'[channels.phone]\ntype = "ntfy"\nurl = "{rx.url}/topic"\ncontent = "{content}"\n'
            '[[rules]]\nwhen = ["permission", "done"]\nchannels = ["phone"]\n'
        )
        job = make_job(
            state_dir,
            [intent(summary=COMMAND), intent("done", message=MESSAGE, duration_ms=65_000)],
        )
        sender.run_job(job, str(state_dir))
        reqs = rx.wait_for(2)
    sent = "".join(r.body.decode() + json.dumps(r.headers) for r in reqs)
    for secret in SECRETS:
        assert secret not in sent


def test_a_command_channel_gets_masked_argv_and_env(state_dir: Path, tmp_path: Path) -> None:
    prog, log = recorder(tmp_path)
    write_config(
        f'[channels.cmd]\ntype = "command"\ncontent = "full"\n'
        f'argv = ["{prog}", "{{title}}", "{{body}}", "{{summary}}", "{{message}}"]\n'
        '[[rules]]\nwhen = ["done"]\nchannels = ["cmd"]\n'
    )
    job = make_job(state_dir, [intent("done", message=MESSAGE + "\n" + COMMAND, duration_ms=1)])
    sender.run_job(job, str(state_dir))
    (argv,) = calls(log)
    text = "\n".join(argv)
    assert f"sshpass -p {shape(7)}" in text and f"admin:{shape(10)}" in text
    for secret in SECRETS:
        assert secret not in text
