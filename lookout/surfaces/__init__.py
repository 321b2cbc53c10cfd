"""The answer surfaces: where an alert's buttons or replies answer a request or steer a session,
one module each beside the channel type that sends the alert (channels/<x>.py sends, surfaces/<x>.py
answers), found by the type's ANSWERS in registry.py."""
