"""Notifications, the hook's side: `handle` (a transition that asks for an alert: `rules` decide
where, `outbox` writes one job file, a detached sender is started). The sender is
lookout.sender."""
