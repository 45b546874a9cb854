"""Refinement: the tools an agent's model may call in a session (`tools`) and the toolbox that runs them
(over `changes`), and which agents are due for a session."""
