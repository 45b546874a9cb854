"""Agents, the owners of memories, and the storage quotas they answer to."""
