"""Notifications: `handle` (the hook's side: rules -> one job file -> a detached sender), the
sender process (`sender`, `lanes`, `focus`, `escalate`) and the channels it sends through."""
