"""One module per coding agent lookout watches, behind base.Agent; registry.AGENTS lists them.

A hook imports only its own agent's module (never the registry, which imports them all)."""
