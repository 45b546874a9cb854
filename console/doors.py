"""Checks every request passes before any view reads it (docs/explanation/security.md): the URL path is UTF-8,
and an API body over its endpoint's limit is 413 however it is sent.

Werkzeug enforces the limit on a body that declares its length; a chunked body (no Content-Length,
the server terminating the stream) it reads only up to the limit, so a view would see the body cut
short and answer 400 for JSON that was never malformed. Such a body is read here, to one byte past
the limit, and either refused or handed on whole.
"""

from __future__ import annotations

import contextlib
import io
from urllib.parse import unquote_to_bytes

from flask import Flask, request
from werkzeug.exceptions import RequestEntityTooLarge

from models import ValidationFailed

from .api.auth import LARGE_BODY_ENDPOINTS, MAX_BODY_BYTES


class InvalidPath(ValidationFailed):
    code = "invalid_path"
    http_status = 400


def path_is_utf8() -> None:
    """Werkzeug decodes invalid UTF-8 in a path to U+FFFD, so `t%FFx` and `t%FEx` would name the same
    thread: refused instead, as the same bytes in a body are. Both forms the server hands over are read:
    the raw request line (RAW_URI or REQUEST_URI, percent-encoded) and PATH_INFO (its bytes as latin-1)."""
    environ = request.environ
    raw_uri = environ.get("RAW_URI") or environ.get("REQUEST_URI") or ""
    path_bytes = [unquote_to_bytes(raw_uri.split("?", 1)[0])]
    # A PATH_INFO beyond latin-1 is not bytes at all (a server's own decoding): the raw URI is checked.
    with contextlib.suppress(UnicodeEncodeError):
        path_bytes.append(environ.get("PATH_INFO", "").encode("latin-1"))
    for raw in path_bytes:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidPath(
                "the URL path is not valid UTF-8; percent-encode each segment's UTF-8 bytes"
            ) from None


def body_within_limit() -> None:
    if not request.path.startswith("/api/"):
        return
    limit = LARGE_BODY_ENDPOINTS.get(request.endpoint or "", MAX_BODY_BYTES)
    environ = request.environ
    length = request.content_length
    if length is None and "wsgi.input_terminated" in environ:  # chunked: no length declared up front
        raw = environ["wsgi.input"].read(limit + 1)
        length = len(raw)
        environ["wsgi.input"] = io.BytesIO(raw)
    if length is not None and length > limit:
        raise RequestEntityTooLarge(f"the request body is over this endpoint's limit of {limit:,} bytes")


def init_app(app: Flask) -> None:
    app.before_request(path_is_utf8)
    app.before_request(body_within_limit)
