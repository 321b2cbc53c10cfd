"""Steering sessions (issue 33): `say` (a message as the user's next prompt), `interrupt` (stop
the turn, as Esc does) and `start` (a new session in a new tmux window). One library that every
surface (the terminal, the dashboard, Telegram) calls: core.py holds every check, so no surface
can skip one. Never imported by a hook."""
