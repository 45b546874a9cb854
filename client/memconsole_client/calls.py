"""One request and how to read its answer (`Call`), and the readers the endpoints use."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from pydantic import TypeAdapter


@dataclass
class Call:
    """One request and how to read its answer: `parse(status, body)` -> result."""

    method: str
    path: str
    parse: Callable[[int, Any], Any]
    json: Any = None
    params: dict[str, Any] | None = None
    ndjson: bool = False
    none_on_404: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] | None = None  # besides the client's own (e.g. If-None-Match)
    # Reads the whole response instead of `parse` (a 304, a text body, a header): GET /context.
    on_response: Callable[[httpx.Response], Any] | None = None


def _model(model: Any) -> Callable[[int, Any], Any]:
    adapter = TypeAdapter(model)
    return lambda status, body: adapter.validate_python(body)


def _by_status(models: dict[int, Any]) -> Callable[[int, Any], Any]:
    adapters = {status: TypeAdapter(model) for status, model in models.items()}
    return lambda status, body: adapters[status].validate_python(body)


def _raw(status: int, body: Any) -> Any:
    return body


def _field(name: str, model: Any) -> Callable[[int, Any], Any]:
    adapter = TypeAdapter(model)
    return lambda status, body: adapter.validate_python(body[name])


def _clean(payload: dict[str, Any]) -> dict[str, Any]:
    """Drop arguments left at None, so the server's defaults apply."""
    return {k: v for k, v in payload.items() if v is not None}


def _body(response: httpx.Response, ndjson: bool) -> Any:
    if not response.content:
        return None
    if ndjson and response.status_code < 400:
        return [json.loads(line) for line in response.text.splitlines() if line.strip()]
    try:
        return response.json()
    except ValueError:
        return None
