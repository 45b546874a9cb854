"""Bearer-token authentication and the per-request plumbing of the agent API.

The caller's agent is taken from its token and nothing else. Tokens are stored as SHA-256 hashes;
a rotated token stops working at once, and so does every token of a deactivated agent. Failures
are 401 with `WWW-Authenticate: Bearer` and say nothing about which agent a token might belong to.
"""

from __future__ import annotations

import atexit

from flask import current_app, g, jsonify, request
from werkzeug.exceptions import MethodNotAllowed

from infra.batching import flush_all, flush_due, start_flusher
from models import Agent
from models.memories.categories import CategoryConfig, load_config

from .blueprint import bp

MAX_BODY_BYTES = 256 * 1024  # 10,000 characters of content is at most ~120 KB even fully \u-escaped
MAX_CHECKPOINT_BODY_BYTES = 2 * 1024 * 1024  # the checkpoint itself is capped at 1 MiB of compact JSON
# LangGraph checkpoints carry whole graph states as base64 blobs (docs/how-to/langgraph.md).
MAX_LANGGRAPH_BODY_BYTES = 16 * 1024 * 1024
LARGE_BODY_ENDPOINTS = {
    "api.put_checkpoint": MAX_CHECKPOINT_BODY_BYTES,
    "api.langgraph_put_checkpoint": MAX_LANGGRAPH_BODY_BYTES,
    "api.langgraph_put_writes": MAX_LANGGRAPH_BODY_BYTES,
}
PUBLIC_ENDPOINTS = frozenset({"api.openapi_document"})


def _unauthorized(message: str):
    response = jsonify(error="unauthorized", message=message)
    response.status_code = 401
    response.headers["WWW-Authenticate"] = 'Bearer realm="agent-api"'
    return response


@bp.before_request
def authenticate():
    request.max_content_length = LARGE_BODY_ENDPOINTS.get(request.endpoint, MAX_BODY_BYTES)
    if request.endpoint in PUBLIC_ENDPOINTS:
        return None
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return _unauthorized("send your agent token as 'Authorization: Bearer <token>'")
    agent = Agent.by_token(token)
    if agent is None:
        return _unauthorized("the token is invalid, revoked or belongs to an inactive agent")
    g.agent = agent
    return None


@bp.after_request
def flush_bookkeeping(response):
    """Buffered access times and search events are written in batches: by a flusher thread per process
    in production, here (when due) under test, where requests run one at a time."""
    interval = current_app.config["API_FLUSH_SECONDS"]
    if current_app.testing:
        flush_due(interval)
    else:
        start_flusher(current_app._get_current_object(), interval)
    return response


@bp.after_app_request
def allow_header(response):
    """A 405 on an API path names the allowed methods (the JSON error handler drops Werkzeug's header)."""
    error = request.routing_exception
    if (
        response.status_code == 405
        and isinstance(error, MethodNotAllowed)
        and request.path.startswith("/api/")
    ):
        response.headers["Allow"] = ", ".join(sorted(error.valid_methods or []))
    return response


@bp.record_once
def _flush_at_exit(state) -> None:
    app = state.app
    if app.testing:
        return

    def flush() -> None:
        with app.app_context():
            flush_all()

    atexit.register(flush)


def current_agent() -> Agent:
    return g.agent


def category_config() -> CategoryConfig:
    return load_config()


def allowed_categories() -> list[str]:
    return list(category_config().allowed_for(g.agent.role))
