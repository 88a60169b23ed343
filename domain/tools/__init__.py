"""Tools: what a model may call and the failure policy, client tools, and ReAct output parsing."""
