"""Admin-only access, sign-in redirects that work for htmx, and response headers.

Every console page is for signed-in, active admins. Pages may carry memory text only inside a
live Mechanic's grant, so nothing the console serves may be cached or framed.
"""

from __future__ import annotations

import time

from flask import Flask, abort, current_app, flash, request, session, url_for
from flask_login import current_user, logout_user
from werkzeug.wrappers import Response

from console.extensions import login_manager
from models.admins import sign_ins
from models.admins.user import user_by_session_token

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


SEEN_EVERY_SECONDS = 30  # how often the idle clock is written back to the cookie


def end_stale_session() -> None:
    """`before_request`: a session older than PERMANENT_SESSION_LIFETIME, or idle for longer than
    SESSION_IDLE_MINUTES, is signed out here; the page then asks for sign-in. Both times travel in the
    signed cookie, so a replayed old cookie carries its old times and is refused too."""
    if "_user_id" not in session or request.endpoint == "static" or request.path.startswith("/api/"):
        return
    now = time.time()
    started, seen = session.get("signed_in_at"), session.get("seen_at")
    lifetime = current_app.permanent_session_lifetime.total_seconds()
    idle = float(current_app.config["SESSION_IDLE_MINUTES"]) * 60
    if (
        not isinstance(started, int | float)
        or not isinstance(seen, int | float)
        or now - started > lifetime
        or now - seen > idle
    ):
        user = user_by_session_token(session.get("_user_id", ""))
        if user is not None:
            sign_ins.record("expired", user.id, request.remote_addr)
        logout_user()
        session.clear()
        flash("Your session ended; please sign in again.", "info")
        return
    if now - seen > SEEN_EVERY_SECONDS:
        session["seen_at"] = now


def init_app(app: Flask) -> None:
    app.before_request(end_stale_session)
    login_manager.login_view = "auth.login"
    login_manager.session_protection = "strong"
    login_manager.unauthorized_handler(_unauthorized)
    app.after_request(_headers)
