"""One helper decides fragment or full page from the HX-Request header."""

from __future__ import annotations

from flask import make_response, render_template, request
from werkzeug.wrappers import Response

from models.parsing import parse_int


def is_htmx() -> bool:
    """An htmx request that wants a fragment (a history restore wants the whole page)."""
    return (
        request.headers.get("HX-Request") == "true"
        and request.headers.get("HX-History-Restore-Request") != "true"
    )


def render(full: str, partial: str | None = None, /, *, status: int = 200, **context) -> Response:
    """Render the `partial` template for htmx requests and the `full` page otherwise.

    Responses differ by the HX-Request header, so caches must key on it (Vary).
    """
    template = partial if partial and is_htmx() else full
    response = make_response(render_template(template, **context), status)
    response.vary.add("HX-Request")
    return response


def redirect_to(url: str) -> Response:
    """A redirect htmx follows with a full page load (HX-Redirect), or a plain 303 otherwise."""
    if is_htmx():
        response = make_response("", 204)
        response.headers["HX-Redirect"] = url
    else:
        response = make_response("", 303)
        response.headers["Location"] = url
    response.vary.add("HX-Request")
    return response


MAX_PAGE = 1_000_000  # far past any real list, and OFFSET stays well inside SQL's integers


def page_number(value: str | None, last: int | None = None) -> int:
    """A 1-based page number from a query string (models/parsing.py); anything odd is page 1."""
    number = parse_int(value, default=1, low=1, high=MAX_PAGE)
    return min(number, last) if last else number
