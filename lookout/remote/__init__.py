"""Answering a permission from afar (opt-in, `[remote] enabled = true`).

requests.py  the pending-request records: ids, nonces, compare-and-set answers (stdlib only)
decide.py    the deciding PermissionRequest hook (hooks/remote_answer.py): record, wait, answer
local.py     how the deciding hook learns the dialog was answered in the terminal

The deciding hook is registered only when enabled, as its own entry next to the recording hook
(which stays fast and async-safe). Nothing here is imported by a recording hook."""
