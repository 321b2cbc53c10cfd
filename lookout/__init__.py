"""lookout: which of your coding-agent sessions needs you, and getting you there."""
