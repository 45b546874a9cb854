"""Helpers shared by the console's test-client tests and its browser tests."""

from __future__ import annotations

import re

from flask import Flask, g
from flask.testing import FlaskClient

from models import User, create_admin, db

ADMIN_EMAIL = "admin@example.com"
ADMIN_PASSWORD = "correct horse battery staple"
_CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)"')


def make_admin(email: str = ADMIN_EMAIL, password: str = ADMIN_PASSWORD) -> User:
    return create_admin(email, password)


def csrf_from(html: str) -> str:
    match = _CSRF.search(html)
    assert match, "every console page carries its CSRF token in a meta tag"
    return match.group(1)


class ConsoleClient(FlaskClient):
    """A test client whose every request starts clean, as on a real server.

    The `app` fixture keeps one app context pushed for the whole test, and test requests reuse it, so
    `g` outlives a request: Flask-WTF's cached CSRF token and Flask-Login's cached user would leak from
    one request (or one client) into the next. Each request here forgets them first.
    """

    def open(self, *args, **kwargs):
        g.pop("csrf_token", None)
        g.pop("_login_user", None)
        return super().open(*args, **kwargs)


def client_for(app: Flask) -> ConsoleClient:
    return ConsoleClient(app, app.response_class, use_cookies=True)


def signed_in(app: Flask, email: str = ADMIN_EMAIL, password: str = ADMIN_PASSWORD) -> ConsoleClient:
    """A test client signed in as the given admin; `client.csrf` holds a token for POSTs."""
    client = client_for(app)
    token = csrf_from(client.get("/login").text)
    response = client.post("/login", data={"email": email, "password": password, "csrf_token": token})
    assert response.status_code == 302, response.text[:500]
    client.csrf = csrf_from(client.get("/").text)
    return client


def post(client: FlaskClient, url: str, data: dict | None = None, htmx: bool = True, **kw):
    """A POST as the page's htmx would send it: the CSRF token in the X-CSRFToken header."""
    headers = {"X-CSRFToken": client.csrf}
    if htmx:
        headers["HX-Request"] = "true"
    return client.post(url, data=data or {}, headers=headers, **kw)


def fresh() -> None:
    """Let the test thread see what a server thread or a worker process committed since its last read."""
    db.session.rollback()
    db.session.expire_all()
