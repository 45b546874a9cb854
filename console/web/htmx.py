"""One helper decides fragment or full page from the HX-Request header (STYLE.md, HTMX)."""

from __future__ import annotations

from flask import make_response, render_template, request
from werkzeug.wrappers import Response


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


def page_number(value: str | None, last: int | None = None) -> int:
    """A 1-based page number from a query string; anything odd is page 1."""
    try:
        number = int(value or 1)
    except ValueError:
        return 1
    number = max(number, 1)
    return min(number, last) if last else number
