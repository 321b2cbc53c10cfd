"""The answers domain: a permission answered from afar (opt-in, `[remote] enabled = true`).

requests.py  the pending-request records: nonces, compare-and-set answers (stdlib only; the id
             is lookout.hookspec.request_id, which the recording hook computes too)
answers.py   the one way a surface answers (a nonce, or a token minted for one button)
decide.py    the deciding PermissionRequest hook (hooks/remote_answer.py): record, wait, answer
local.py     how the deciding hook learns the dialog was answered in the terminal
shown.py     what a surface shows of a request, and whether it may offer Allow
ignored.py   refused presses and messages, said in errors.log as a few lines with counts

The surfaces themselves (the popup's buttons, Telegram's, its poller and chat) are
lookout.surfaces.

The deciding hook is registered only when enabled, as its own entry next to the recording hook
(which stays fast and async-safe). Nothing here is imported by a recording hook."""
