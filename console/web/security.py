"""Admin-only access, sign-in redirects that work for htmx, and response headers.

Every console page is for signed-in, active admins. Pages may carry memory text only inside a
live Mechanic's grant, so nothing the console serves may be cached or framed.
"""

from __future__ import annotations

from flask import Flask, abort, request, url_for
from flask_login import current_user
from werkzeug.wrappers import Response

from console.extensions import login_manager

from .htmx import is_htmx

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
)


def require_admin() -> Response | None:
    """`before_request` of every console blueprint: signed in, active and an admin, or no entry."""
    if not current_user.is_authenticated:
        return login_manager.unauthorized()
    if not getattr(current_user, "is_admin", False):
        abort(403, description="This console is for site admins.")
    return None


def _unauthorized() -> Response:
    """Not signed in: the sign-in page, as a full page load even from an htmx request."""
    target = url_for("auth.login", next=request.full_path.rstrip("?") if request.method == "GET" else None)
    response = Response("", 401 if is_htmx() else 302)
    response.headers["HX-Redirect" if is_htmx() else "Location"] = target
    return response


def _headers(response: Response) -> Response:
    response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("X-Frame-Options", "DENY")
    response.headers.setdefault("Referrer-Policy", "same-origin")
    if request.endpoint != "static":
        # A grant's pages hold memory text: no copy may outlive the grant in a cache or the back button.
        response.headers["Cache-Control"] = "no-store"
    return response


def init_app(app: Flask) -> None:
    login_manager.login_view = "auth.login"
    login_manager.session_protection = "strong"
    login_manager.unauthorized_handler(_unauthorized)
    app.after_request(_headers)
