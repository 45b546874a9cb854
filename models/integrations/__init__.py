"""Agent frameworks' own data models on our tables: supervisor checkpoints, LangGraph's
checkpointer and store."""
