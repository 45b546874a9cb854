"""Typed errors: every API refusal carries the API's own code and message."""

from __future__ import annotations

from typing import Any


class MemconsoleError(Exception):
    """Base of every error this package raises."""


class TransportError(MemconsoleError):
    """The server could not be reached or the connection failed (no API answer at all)."""


class ApiError(MemconsoleError):
    """The API answered with an error: `status` (HTTP), `code` (e.g. `constitutional`,
    `category_not_allowed`, `not_found`), `message` (safe to show; never quotes memory content) and
    any further fields of the error body in `details` (e.g. `field` and `rule` on a 422)."""

    def __init__(self, status: int, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details or {}


class BadRequest(ApiError):
    """400 or 415: the body is not JSON, or not sent as JSON."""


class Unauthorized(ApiError):
    """401: missing, invalid or revoked token."""


class Forbidden(ApiError):
    """403: e.g. a category outside the agent's allowlist (`category_not_allowed`)."""


class NotFound(ApiError):
    """404: not found (another agent's ids look exactly like missing ones), or a feature switched off."""


class Conflict(ApiError):
    """409: a locked memory (`constitutional`, `immutable`), a decided patch, a rollback conflict."""


class ConstitutionalLocked(Conflict):
    """409 `constitutional`: agents cannot change this memory."""


class PayloadTooLarge(ApiError):
    """413: the request body is over the endpoint's limit."""


class ValidationFailed(ApiError):
    """422: the request was refused; `details["field"]` and `details["rule"]` say why."""


class RateLimited(ApiError):
    """429: too many requests; `retry_after` in seconds when the server said."""

    retry_after: float | None = None


class ServerError(ApiError):
    """5xx: the server failed or a dependency (the job queue) is down."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    415: BadRequest,
    422: ValidationFailed,
    429: RateLimited,
}


def error_for(status: int, body: Any, headers: Any = None) -> ApiError:
    """The typed error for an error answer (its JSON body `{error, message, ...}` when it has one)."""
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        code = body["error"]
        message = str(body.get("message", ""))
        details = {k: v for k, v in body.items() if k not in ("error", "message")}
    else:
        code, message, details = f"http_{status}", f"HTTP {status}", {}
    if code == "constitutional":
        cls: type[ApiError] = ConstitutionalLocked
    elif status >= 500:
        cls = ServerError
    else:
        cls = _BY_STATUS.get(status, ApiError)
    error = cls(status, code, message, details)
    if isinstance(error, RateLimited) and headers is not None:
        try:
            error.retry_after = float(headers.get("Retry-After"))
        except (TypeError, ValueError):
            error.retry_after = None
    return error
