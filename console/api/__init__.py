"""The agent JSON API under /api/v1: each agent reaches its own memory with its own bearer token.

Routes are declared with `api.route` (console/api/spec.py), which validates requests with the
pydantic models of console/api/schemas.py and builds the OpenAPI document from the same models.
"""

from . import (  # registers the routes on the blueprint
    auth,
    routes_agent,
    routes_capture,
    routes_context,
    routes_langgraph,
    routes_memory,
    routes_query,
    routes_restorable,
    routes_store,
    routes_turns,
)
from .blueprint import api, bp

__all__ = ["bp", "api"]
