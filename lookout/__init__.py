"""lookout: which of your coding-agent sessions needs you, and getting you there."""

__version__ = "0.1.0"
