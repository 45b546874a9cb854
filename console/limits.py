"""Rate limits with Flask-Limiter (docs/explanation/security.md).

- `LOGIN_RATE_LIMIT` (default `5/minute;30/hour`) counts *failed* sign-in attempts (a wrong password,
  email or code: the 401 answers), twice: per client address and per email tried. Once either count
  is spent, every attempt — the right password too — gets 429 with `Retry-After` until the window
  passes. Successful sign-ins cost nothing.
- `API_RATE_LIMIT` (default `600/minute`) counts every agent API call per bearer token (per address
  when there is none), answered JSON 429 `rate_limited` with `Retry-After`.

Counters live in Redis so every gunicorn worker shares them: `RATELIMIT_STORAGE_URI` when set, else
the app's Redis (the embedded one too, through its unix socket), with REDIS_TIMEOUT_SECONDS as its
connect and read timeouts. Should Redis stop answering, Flask-Limiter keeps counting in each process's
memory until it is back.

One limiter per app (not a module global): tests build several apps, and Flask-Limiter keeps its
storage and settings on the instance.
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid

from flask import Flask, current_app, jsonify, request
from flask_limiter import Limiter, RateLimitExceeded
from flask_limiter.util import get_remote_address

from infra import embedded_redis
from infra.queues import LOCAL_REDIS, parse_sentinels


def _digest(value: str) -> str:
    # Keys in Redis never hold a token or an email in clear.
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def address_key() -> str:
    return "addr:" + (get_remote_address() or "unknown")


def email_key() -> str:
    """The email a sign-in attempt names (the pending admin's, on the code step)."""
    from flask import session

    email = request.form.get("email") or (session.get("pending_2fa") or {}).get("email") or ""
    return "email:" + _digest(email.strip().lower())


def agent_key() -> str:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return "token:" + _digest(token.strip())
    return address_key()


def failed_attempt(response) -> bool:
    return response.status_code == 401


def storage_uri(app: Flask) -> str:
    """RATELIMIT_STORAGE_URI, else the Redis the queues use, so every process shares the counts: a
    redis:// URL as is, a unix socket (the embedded server) as redis+unix://; unset REDIS_URL means the
    Redis on 127.0.0.1:6379. Whenever that Redis does not answer, each process counts in memory."""
    explicit = app.config.get("RATELIMIT_STORAGE_URI")
    if explicit:
        return explicit
    sentinels = parse_sentinels(app.config.get("REDIS_SENTINELS"))
    if sentinels:  # the master the Sentinels name, in the same database as the queues
        app.config.setdefault(
            "RATELIMIT_STORAGE_OPTIONS", {"db": int(app.config.get("REDIS_SENTINEL_DB") or 0)}
        )
        hosts = ",".join(f"[{h}]:{p}" if ":" in h else f"{h}:{p}" for h, p in sentinels)
        return f"redis+sentinel://{hosts}/{app.config.get('REDIS_SENTINEL_MASTER') or 'mymaster'}"
    url = app.config.get("REDIS_URL")
    if url is None:
        return LOCAL_REDIS
    if url == "embedded":
        directory = app.config.get("EMBEDDED_REDIS_DIR") or os.path.join(app.instance_path, "redis")
        return "redis+unix://" + embedded_redis.socket_path(directory)
    if url.startswith("unix://"):
        return "redis+" + url
    return url


def init_app(app: Flask) -> None:
    """After every blueprint is registered: the limits attach to the sign-in views and the API."""
    # When the counters' Redis does not answer within REDIS_TIMEOUT_SECONDS, this process counts in memory
    # (Flask-Limiter's fallback) and asks Redis again after a backoff: a frozen Redis delays the request
    # that finds it so by at most that timeout, and is never the reason a call that queues nothing fails.
    app.config.setdefault("RATELIMIT_IN_MEMORY_FALLBACK_ENABLED", True)
    uri = storage_uri(app)  # first: a Sentinel URI sets its own storage options
    timeout = float(app.config["REDIS_TIMEOUT_SECONDS"])
    options = dict(app.config.get("RATELIMIT_STORAGE_OPTIONS") or {})
    options.setdefault("socket_timeout", timeout)
    options.setdefault("socket_connect_timeout", timeout)
    app.config["RATELIMIT_STORAGE_OPTIONS"] = options
    if app.testing and not app.config.get("RATELIMIT_KEY_PREFIX"):
        # Tests share one Redis database: each app counts on its own.
        app.config["RATELIMIT_KEY_PREFIX"] = f"test-{uuid.uuid4().hex[:8]}"
    app.config.setdefault("RATELIMIT_KEY_PREFIX", "memconsole")
    limiter = Limiter(key_func=get_remote_address, storage_uri=uri)
    limiter.init_app(app)
    app.extensions["memconsole_limiter"] = limiter

    login_limit = lambda: current_app.config["LOGIN_RATE_LIMIT"]  # noqa: E731 - read per request
    for endpoint in ("auth.login", "auth.login_code"):
        view = app.view_functions[endpoint]
        for key in (address_key, email_key):
            view = limiter.shared_limit(
                login_limit,
                "sign-in",  # the password and the code steps share one count
                key_func=key,
                methods=["POST"],
                deduct_when=failed_attempt,
                error_message="Too many failed sign-in attempts",
            )(view)
        app.view_functions[endpoint] = view

    from .api import bp as api_bp

    limiter.shared_limit(
        lambda: current_app.config["API_RATE_LIMIT"],
        "api",  # one count per token across every endpoint
        key_func=agent_key,
        error_message="Too many API calls",
    )(api_bp)
    app.register_error_handler(RateLimitExceeded, _too_many)


def _too_many(err: RateLimitExceeded):
    """429 with the limit named and Retry-After: the seconds until the window that was spent ends."""
    wait = retry_after()
    if request.path.startswith("/api/"):
        response = jsonify(
            error="rate_limited",
            message=f"too many API calls: the limit is {err.limit.limit} per token (API_RATE_LIMIT); "
            "retry after the number of seconds in Retry-After",
        )
        response.status_code = 429
    elif request.blueprint == "auth":
        from .auth.routes import locked_out

        response = current_app.make_response(locked_out(err, wait))
    else:
        response = current_app.make_response((err.description or "Too many requests", 429))
        response.mimetype = "text/plain"
    response.headers["Retry-After"] = str(wait)
    return response


def retry_after() -> int:
    """Seconds until the limit this request broke lets it through again (at least 1; 60 when the counter
    cannot be read). Set here, not by Flask-Limiter: its headers are off by default (RATELIMIT_HEADERS_ENABLED), and the
    one read of the window this takes is paid on a refused call only."""
    limit = current_app.extensions["memconsole_limiter"].current_limit
    try:
        return max(1, int(limit.reset_at - time.time())) if limit is not None else 60
    except Exception:  # the limiter's storage went away meanwhile: a safe, round figure
        return 60
