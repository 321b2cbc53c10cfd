"""`lookout doctor`: report.py runs every check and renders them; state, channels and features
hold the checks by subject (each agent's own are in lookout.agents.<agent>.check)."""
