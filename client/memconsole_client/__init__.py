"""Client for the memory console's agent API (docs/reference/client.md).

`Client` / `AsyncClient` cover every endpoint of /api/v1 with typed answers (`memconsole_client.models`)
and typed errors (`memconsole_client.errors`). `memconsole_client.langgraph` (extra `[langgraph]`)
holds the LangGraph checkpointer and store; `memconsole-mcp` (extra `[mcp]`) is the MCP server.
"""

from . import errors, models
from .client import OPERATIONS, AsyncClient, Client
from .errors import (
    ApiError,
    ConstitutionalLocked,
    Forbidden,
    MemconsoleError,
    NotFound,
    TransportError,
    ValidationFailed,
)

__all__ = [
    "OPERATIONS",
    "ApiError",
    "AsyncClient",
    "Client",
    "ConstitutionalLocked",
    "Forbidden",
    "MemconsoleError",
    "NotFound",
    "TransportError",
    "ValidationFailed",
    "errors",
    "models",
]
