"""The notification sender: the detached process a hook's job starts (`sender`), which renders and
delivers each alert on its channel's lane (`deliver`, `lanes`), holds some back (`hold`: grace,
digest), pages an escalation that came due (`escalate`) and fires what only time passing sends
(`timers`). Never imported by a hook; the hook's side is lookout.notify."""
