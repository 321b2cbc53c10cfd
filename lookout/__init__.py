"""lookout: Claude Code hooks that tell you which agent session needs you."""

__version__ = "0.1.0"
