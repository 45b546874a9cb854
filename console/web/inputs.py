"""Untrusted values in URLs, applied to every route at once through models/parsing.py.

- `<int:...>` path segments accept only ids that fit the id columns: `/agents/99999999999` is a
  plain 404 from routing, never a query that overflows PostgreSQL's `integer`.
- A NUL character anywhere in a console request's query string or form is a 400: neither database
  stores it, and PostgreSQL refuses it in a bound parameter. (The agent API refuses it per field, with
  a 422 naming the field: console/api/schemas.py.)
"""

from __future__ import annotations

from flask import Flask, abort, request
from werkzeug.exceptions import NotFound
from werkzeug.routing import IntegerConverter

from models.parsing import MAX_ID, has_nul, parse_id


class IdConverter(IntegerConverter):
    """Werkzeug's `int` converter, bounded to 1..MAX_ID (and cheap on absurdly long digit runs)."""

    def to_python(self, value: str) -> int:
        number = parse_id(value)
        if number is None:
            # NotFound, not ValidationError: Werkzeug records a rule's other methods before it converts,
            # so a skipped rule would turn `PATCH /memory/<too big>` into a 405 instead of a 404.
            raise NotFound(f"No such id: ids are whole numbers from 1 to {MAX_ID:,}.")
        return number


def refuse_nul() -> None:
    """`before_request`: NUL in a console query string or form is a clear 400."""
    if request.path.startswith("/api/"):
        return
    values = [*request.args.keys(), *request.args.values()]
    if request.method in ("POST", "PUT", "PATCH") and request.mimetype in (
        "application/x-www-form-urlencoded",
        "multipart/form-data",
    ):
        values += [*request.form.keys(), *request.form.values()]
    if any(has_nul(value) for value in values) or has_nul(request.path):
        abort(400, description="Text in a request must not contain NUL characters.")


def install_converters(app: Flask) -> None:
    """Before any blueprint is registered: rules pick their converter when they are added."""
    app.url_map.converters["int"] = IdConverter


def init_app(app: Flask) -> None:
    app.before_request(refuse_nul)
