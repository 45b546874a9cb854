"""Refinement: the tools an agent's model may call in a session (the toolbox, over `changes`),
and which agents are due for a session."""
