"""The notification channel types, one module each behind base.ChannelType (as agents/ is, and
pre-commit's languages/): desktop, ntfy, webhook, command, apprise, telegram; registry.py lists
them."""
