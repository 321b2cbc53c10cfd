"""Home Assistant as an answer surface (issue 25, `[fleet] answers = true`): its Allow / Deny are
MQTT button entities that the bridge publishes and whose presses it takes (lookout.fleet.answers),
not buttons on a channel type's alert, so the sender never binds one. Listed here so that every
list of surface names holds it; what it shows of a request, and within which limit (one line of
a button's name), is lookout.remote.shown's rule."""

from __future__ import annotations

NAME = "home_assistant"  # the surface answers.answer and RemoteDecision's source name
LABEL = "Home Assistant"  # how the installer names it
