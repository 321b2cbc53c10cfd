"""lookout's config.toml (+ a project's `.claude/lookout.toml`): files, trust, check, and one
module per section (notify, remote, fleet, steer); `cache` is the hook's view and the only part
a hook imports."""
