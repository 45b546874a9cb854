"""The agent JSON API under /api/v1: each agent reaches its own memory with its own bearer token.

Routes are declared with `api.route` (console/api/spec.py), which validates requests with the
pydantic models of console/api/schemas.py and builds the OpenAPI document from the same models.
"""

from flask import Blueprint

from .spec import Api

bp = Blueprint("api", __name__, url_prefix="/api/v1")
api = Api(bp, title="Memory console agent API", version="1.0.0")

from . import auth, routes_agent, routes_capture, routes_langgraph, routes_memory, routes_query, routes_store  # noqa: E402,F401
