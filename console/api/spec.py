"""Routes declared once: the same pydantic models parse the request, shape the response and make
the OpenAPI 3.1 document (served at /api/v1/openapi.json).

`api.route(...)` registers a view on the blueprint with its body model, query-string model and
responses. The wrapper parses and validates the request (400 for a body that is not JSON, 415
for one that is not sent as JSON, 422 naming the field and rule for anything the models refuse),
calls the view, and serialises the model it returns.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flask import Blueprint, Response, jsonify, request
from pydantic import BaseModel, ValidationError
from pydantic.json_schema import models_json_schema

from models import NotFound, ValidationFailed
from models.parsing import validation_problems

from .schemas import MAX_ID, NO_NUL, ErrorOut

REF = "#/components/schemas/{model}"
STATUS_TEXT = {
    200: "OK",
    201: "Created",
    202: "Accepted: held for the user's consent, or queued for a worker",
    304: "Not modified: the ETag sent in If-None-Match is current; no body",
    400: "The body is not valid JSON",
    401: "Missing, invalid or revoked bearer token",
    403: "Forbidden: a category outside your allowlist, or another agent's scope",
    404: "Not found (another agent's ids are reported exactly like missing ones), or a feature switched off",
    409: "Conflict: a locked (constitutional or immutable) memory, a decided patch, or a memory past its purge date",
    413: "Request body too large",
    415: "The body must be sent as application/json",
    422: "Validation failed; `field` and `rule` name what",
    429: "Too many calls for this token (API_RATE_LIMIT); retry after Retry-After seconds",
    503: "The database or the job queue is unavailable; nothing was changed. Retry after Retry-After seconds",
}
PATH_PARAMS = {
    "int": {"type": "integer", "minimum": 1, "maximum": MAX_ID},
    "string": {"type": "string", "minLength": 1, "maxLength": 128, "pattern": r"^[^/\x00]+$"},
}


class BadRequestBody(ValidationFailed):
    code = "invalid_json"
    http_status = 400


class UnsupportedMediaType(ValidationFailed):
    code = "unsupported_media_type"
    http_status = 415


class RequestInvalid(ValidationFailed):
    """A request the models refuse: 422 naming the first field and rule, with the full list."""


def _invalid(err: ValidationError, where: str) -> ValidationFailed:
    problems = validation_problems(err, where)
    if any(p["rule"] == "json_invalid" for p in problems):
        return BadRequestBody("the request body is not valid JSON (UTF-8, no lone surrogates)")
    first = problems[0]
    return RequestInvalid(
        f"{first['field']}: {first['message']}", field=first["field"], rule=first["rule"], errors=problems
    )


def parse_body(model: type[BaseModel], *, optional: bool = False) -> BaseModel:
    raw = request.get_data(cache=True)
    if not raw.strip():
        if optional:
            return model()
        raise BadRequestBody("a JSON request body is required")
    if not request.is_json:
        raise UnsupportedMediaType("send the body as application/json")
    try:
        return model.model_validate_json(raw)
    except ValidationError as err:
        raise _invalid(err, "body") from None


def parse_args(model: type[BaseModel]) -> BaseModel:
    try:
        return model.model_validate(request.args.to_dict(flat=True))
    except ValidationError as err:
        raise _invalid(err, "query") from None


def check_path(values: dict[str, Any]) -> None:
    """Path ids beyond the id range are simply not found; path strings follow the declared pattern."""
    for name, value in values.items():
        if isinstance(value, int) and not 1 <= value <= MAX_ID:
            raise NotFound(f"{name} {value} not found")
        if isinstance(value, str) and (len(value) > 128 or not re.match(NO_NUL, value)):
            raise RequestInvalid(f"{name} must be 1-128 characters without NUL", field=name, rule="path")


@dataclass
class Operation:
    method: str
    rule: str
    summary: str
    description: str
    tag: str
    body: type[BaseModel] | None
    body_optional: bool
    args: type[BaseModel] | None
    responses: dict[int, type[BaseModel] | None]
    media_type: str = "application/json"
    text_too: bool = False  # the 2xx answer may also be text/plain (a `format=text` argument)
    auth: bool = True
    extra_errors: tuple[int, ...] = ()
    name: str = ""

    @property
    def path(self) -> str:
        return re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", self.rule)

    @property
    def path_params(self) -> list[tuple[str, str]]:
        return [(name, conv or "string") for conv, name in re.findall(r"<(?:(\w+):)?(\w+)>", self.rule)]


@dataclass
class Api:
    bp: Blueprint
    title: str
    version: str
    operations: list[Operation] = field(default_factory=list)

    def route(
        self,
        rule: str,
        method: str,
        *,
        summary: str,
        tag: str,
        responses: dict[int, type[BaseModel] | None],
        body: type[BaseModel] | None = None,
        body_optional: bool = False,
        args: type[BaseModel] | None = None,
        errors: tuple[int, ...] = (),
        media_type: str = "application/json",
        text_too: bool = False,
    ) -> Callable:
        """Register a view. It receives path values plus `body` / `args` (parsed models) and returns a
        model (status: the first declared), a (model, status) pair, or a ready Response."""

        def decorator(view: Callable) -> Callable:
            op = Operation(
                method=method.upper(),
                rule=rule,
                summary=summary,
                description=(view.__doc__ or "").strip(),
                tag=tag,
                body=body,
                body_optional=body_optional,
                args=args,
                responses=responses,
                media_type=media_type,
                text_too=text_too,
                extra_errors=errors,
                name=view.__name__,
            )
            default_status = next(iter(responses))

            @functools.wraps(view)
            def endpoint(**path_values: Any):
                check_path(path_values)
                kwargs = dict(path_values)
                if body is not None:
                    kwargs["body"] = parse_body(body, optional=body_optional)
                if args is not None:
                    kwargs["args"] = parse_args(args)
                result = view(**kwargs)
                if isinstance(result, Response):
                    return result
                status = default_status
                if isinstance(result, tuple):
                    result, status = result
                return jsonify(result.model_dump(mode="json", by_alias=True)), status

            self.bp.add_url_rule(rule, endpoint=view.__name__, view_func=endpoint, methods=[op.method])
            self.operations.append(op)
            return view

        return decorator

    # ----- the OpenAPI document -----

    def document(self, server_url: str = "/api/v1") -> dict[str, Any]:
        pairs: list[tuple[type[BaseModel], str]] = [(ErrorOut, "serialization")]
        for op in self.operations:
            if op.body is not None:
                pairs.append((op.body, "validation"))
            pairs += [(m, "serialization") for m in op.responses.values() if m is not None]
        refs, defs = models_json_schema(list(dict.fromkeys(pairs)), ref_template=REF)
        paths: dict[str, dict[str, Any]] = {}
        for op in self.operations:
            paths.setdefault(op.path, {})[op.method.lower()] = self._operation(op, refs)
        return {
            "openapi": "3.1.0",
            "info": {
                "title": self.title,
                "version": self.version,
                "description": "The agent memory API. Every call is authenticated with the agent's own "
                "token (`Authorization: Bearer <token>`); errors are JSON `{error, message}`.",
            },
            "servers": [{"url": server_url}],
            "security": [{"bearerAuth": []}],
            "paths": paths,
            "components": {
                "schemas": defs.get("$defs", {}),
                "securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer"}},
            },
        }

    def _operation(self, op: Operation, refs: dict) -> dict[str, Any]:
        error_ref = refs[(ErrorOut, "serialization")]
        params = [
            {
                "name": name,
                "in": "path",
                "required": True,
                "schema": PATH_PARAMS["int" if conv == "int" else "string"],
            }
            for name, conv in op.path_params
        ]
        if op.args is not None:
            schema = op.args.model_json_schema()
            required = set(schema.get("required", []))
            for name, prop in schema.get("properties", {}).items():
                prop = {k: v for k, v in prop.items() if k != "title"}
                params.append({"name": name, "in": "query", "required": name in required, "schema": prop})
        responses: dict[str, Any] = {}
        for status, model in op.responses.items():
            entry: dict[str, Any] = {"description": STATUS_TEXT.get(status, "OK")}
            if model is not None:
                entry["content"] = {
                    op.media_type if status < 300 else "application/json": {
                        "schema": refs[(model, "serialization")]
                    }
                }
                if op.text_too and status < 300:
                    entry["content"]["text/plain"] = {"schema": {"type": "string"}}
            responses[str(status)] = entry
        errors = {401, 404, 422, 429, 503, *op.extra_errors}  # 429, 503: docs/explanation/security.md
        if op.body is not None:
            errors |= {400, 413, 415}
        for status in sorted(errors):
            entry = {
                "description": STATUS_TEXT[status],
                "content": {"application/json": {"schema": error_ref}},
            }
            if status == 401:
                entry["headers"] = {
                    "WWW-Authenticate": {
                        "required": True,
                        "schema": {"type": "string"},
                        "description": "Bearer",
                    }
                }
            if status in (429, 503):
                entry["headers"] = {
                    "Retry-After": {
                        "required": status == 429,
                        "schema": {"type": "integer"},
                        "description": "Seconds",
                    }
                }
            responses[str(status)] = entry
        spec: dict[str, Any] = {
            "operationId": op.name,
            "summary": op.summary,
            "tags": [op.tag],
            "responses": responses,
        }
        if op.description:
            spec["description"] = op.description
        if params:
            spec["parameters"] = params
        if op.body is not None:
            spec["requestBody"] = {
                "required": not op.body_optional,
                "content": {"application/json": {"schema": refs[(op.body, "validation")]}},
            }
        return spec
