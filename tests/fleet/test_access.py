"""What `lookout doctor` and the hub say when the broker's probes cannot tell who else may read
or write this host's topics: the error names what is unknown and why, the hint what to grant."""

from __future__ import annotations

from lookout.config.fleet import FleetConfig
from lookout.fleet import access


def config(username: str | None) -> FleetConfig:
    return FleetConfig(
        url="mqtts://broker:8883",
        tls=True,
        broker_host="broker",
        port=8883,
        ca_file=None,
        username=username,
        password_env=None,
        host="laptop",
        topic_prefix="lk",
        keepalive_s=60,
        content="summary",
        home_assistant=True,
        home_assistant_prefix="homeassistant",
        hub="hub",
    )


def test_an_unknown_write_grant_keeps_the_hub_away() -> None:
    found = access.Exposure(unknown="no answer to the probe")
    assert access.hub_text(found, config("laptop")) == (
        "the broker at mqtts://broker:8883: cannot tell whether other hosts may write this"
        " host's press and steer topics (no answer to the probe), so it takes nothing from"
        " the hub hub",
        "its ACL must let user 'laptop' write lk/!sync/# and answer each publish"
        " (docs/fleet.md: the broker ACL)",
    )


def test_an_unknown_read_grant_turns_home_assistant_answers_off() -> None:
    found = access.Exposure(unknown="no answer to the probe")
    assert access.exposure_text(found, config(None)) == (
        "the broker at mqtts://broker:8883: cannot tell whether other hosts may read this"
        " host's press tokens (no answer to the probe), so Home Assistant answers are off",
        "its ACL must let an anonymous client write lk/!sync/# (docs/fleet.md: the broker ACL)",
    )


def test_a_known_exposure_names_the_areas_and_the_login() -> None:
    found = access.Exposure(kinds=["requests"])
    error, hint = access.exposure_text(found, config("laptop"))
    assert "lets user 'laptop' read other hosts' lk/+/requests/..." in error
    assert hint.startswith("in its ACL no host may read lk/# or lk/+/requests/#")
