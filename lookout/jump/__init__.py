"""Getting the user to a session: `locate` (which session, where it lives now, the switch) and
`tmux` (the tmux calls). Never imported by a hook."""

# notify/sender's Focus action still reaches these through the package; issue 20's sender split
# gives Focus its own module, which imports lookout.jump.locate directly, and then these go.
from lookout.jump.locate import jump_to as jump_to
from lookout.jump.locate import reachable as reachable
