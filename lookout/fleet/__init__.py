"""The fleet: every host's sessions on one MQTT broker (`lookout bridge`, `status --fleet`, Home
Assistant discovery). Needs the optional extra `lookout[fleet]` (paho-mqtt) for the network parts;
`config`, `topics` and `payload` are stdlib-only. Never imported on the hook path."""
