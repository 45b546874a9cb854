"""The doors (docs/explanation/security.md): throttled sign-in, constant-time refusal, sessions that end on
the server, the optional second factor, per-agent storage quotas, the API rate limit and one parser for
untrusted values.

Rate limits are ON in every test of the suite (the defaults: `5/minute;30/hour` failed sign-ins,
`600/minute` API calls); each app counts on its own (console/limits.py), in the suite's Redis when it
is a redis:// URL and in memory with the embedded one. Successful sign-ins are never counted, which
is why the rest of the suite, signing in hundreds of times, never meets the limit.
"""

from __future__ import annotations

import re
import statistics
import time
from datetime import datetime, timedelta, timezone

import pyotp
import pytest
import sqlalchemy as sa

from models import AgentMemory, RefinementSession, SignInEvent, SupervisorCheckpoint, User, db
from models.agents.quotas import QuotaExceeded
from models.changes.mutations import create_memory, soft_delete_memories
from models.parsing import MAX_ID, BadInput, clean_text, parse_id, parse_int, parse_utc, to_utc
from tests.api_support import bearer
from tests.browser.support import ADMIN_EMAIL, ADMIN_PASSWORD, client_for, csrf_from, make_admin, signed_in

UNKNOWN_EMAIL = "stranger-7f3a@example.org"


@pytest.fixture
def admin(app, redis_conn):  # redis_conn: the suite's Redis DB is flushed before and after
    return make_admin()


def attempt(client, email: str, password: str, address: str = "10.0.0.1", path: str = "/login"):
    token = csrf_from(client.get("/login", environ_base={"REMOTE_ADDR": address}).text)
    return client.post(
        path,
        data={"email": email, "password": password, "csrf_token": token},
        environ_base={"REMOTE_ADDR": address},
    )


def events() -> list[tuple[str, int | None, str | None]]:
    db.session.expire_all()
    return [
        (e.kind, e.user_id, e.address)
        for e in db.session.scalars(sa.select(SignInEvent).order_by(SignInEvent.id))
    ]


# ----- the login rate limit -----


def test_the_sixth_wrong_password_in_a_minute_gets_429_with_retry_after(app, admin):
    client = client_for(app)
    for _ in range(5):
        assert attempt(client, ADMIN_EMAIL, "wrong password!").status_code == 401
    locked = attempt(client, ADMIN_EMAIL, "wrong password!")
    assert locked.status_code == 429
    assert 0 < int(locked.headers["Retry-After"]) <= 60
    assert "Too many failed sign-in attempts" in locked.text and "<form" not in locked.text
    # Locked out means locked out: the right password is refused too until the window passes.
    assert attempt(client, ADMIN_EMAIL, ADMIN_PASSWORD).status_code == 429
    kinds = [kind for kind, _, _ in events()]
    assert kinds == ["failed"] * 5 + ["locked_out"]  # one lockout event a minute, not one per request
    assert {user_id for _, user_id, _ in events()} == {admin.id}


def test_the_limit_follows_the_email_across_addresses_and_the_address_across_emails(app, admin):
    client = client_for(app)
    for n in range(5):
        assert attempt(client, ADMIN_EMAIL, "wrong password!", address=f"10.0.1.{n}").status_code == 401
    assert attempt(client, ADMIN_EMAIL, ADMIN_PASSWORD, address="10.0.1.99").status_code == 429
    for n in range(5):
        assert (
            attempt(client, f"nobody{n}@example.org", "wrong password!", address="10.0.2.1").status_code
            == 401
        )
    assert attempt(client, "someone-else@example.org", "x" * 12, address="10.0.2.1").status_code == 429
    # Another address and another email are untouched.
    assert attempt(client_for(app), "x@example.org", "x" * 12, address="10.0.3.1").status_code == 401


def test_successful_sign_ins_are_not_counted_against_the_limit(app, admin):
    for _ in range(8):
        client = client_for(app)
        assert attempt(client, ADMIN_EMAIL, ADMIN_PASSWORD).status_code == 302
    assert [kind for kind, _, _ in events()] == ["signed_in"] * 8


def test_the_login_limit_is_configurable(app, admin):
    app.config["LOGIN_RATE_LIMIT"] = "2/minute"
    client = client_for(app)
    assert [attempt(client, ADMIN_EMAIL, "wrong password!").status_code for _ in range(3)] == [401, 401, 429]


def test_failures_for_unknown_emails_store_no_email_and_the_log_shows_them(app, admin, redis_conn):
    client = client_for(app)
    assert attempt(client, UNKNOWN_EMAIL, "guess number one", address="10.9.9.9").status_code == 401
    assert attempt(client, ADMIN_EMAIL, "wrong password!", address="10.9.9.9").status_code == 401
    assert events() == [("failed", None, "10.9.9.9"), ("failed", admin.id, "10.9.9.9")]
    with db.engine.connect() as conn:
        dumped = repr(conn.execute(sa.text("SELECT * FROM sign_in_events")).all())
    assert UNKNOWN_EMAIL not in dumped and "guess" not in dumped and "wrong password" not in dumped
    # Nor do the rate-limit counters in Redis name it (they hash the email).
    keys = b" ".join(redis_conn.keys("*"))
    assert b"sign-in" in keys and UNKNOWN_EMAIL.encode() not in keys and ADMIN_EMAIL.encode() not in keys
    page = signed_in(app).get("/sign-ins")
    assert page.status_code == 200
    assert UNKNOWN_EMAIL not in page.text and "(no such admin)" in page.text and ADMIN_EMAIL in page.text
    assert 'data-kind="failed">failed 2' in re.sub(r"\s+", " ", page.text).replace("failed 2 ", "failed 2")


def test_the_sign_in_log_is_for_admins_only(app, admin):
    response = client_for(app).get("/sign-ins")
    assert response.status_code == 302 and "/login" in response.headers["Location"]


# ----- constant-time refusal -----


def test_a_known_and_an_unknown_email_take_the_same_time_to_refuse(app, admin):
    app.config["LOGIN_RATE_LIMIT"] = "1000/minute"  # this test fails on purpose, many times
    client = client_for(app)
    token = csrf_from(client.get("/login").text)

    def timed(email: str) -> float:
        start = time.perf_counter()
        response = client.post(
            "/login", data={"email": email, "password": "not the password", "csrf_token": token}
        )
        elapsed = time.perf_counter() - start
        assert response.status_code == 401
        return elapsed

    timed(UNKNOWN_EMAIL)  # warm the dummy hash (made once per process)
    known, unknown = [], []
    for _ in range(10):
        known.append(timed(ADMIN_EMAIL))
        unknown.append(timed(UNKNOWN_EMAIL))
    ratio = statistics.median(known) / statistics.median(unknown)
    assert 0.5 <= ratio <= 2.0, (statistics.median(known), statistics.median(unknown))


# ----- sessions that end on the server -----


def test_a_cookie_replayed_after_sign_out_is_sent_to_sign_in(app, admin):
    client = signed_in(app)
    saved = client.get_cookie("session").value
    assert client.get("/").status_code == 200
    assert client.post("/logout", data={"csrf_token": client.csrf}).status_code == 302
    client.set_cookie("session", saved)  # the attacker's copy, taken before sign-out
    replay = client.get("/")
    assert replay.status_code == 302 and "/login" in replay.headers["Location"]
    assert [kind for kind, _, _ in events()] == ["signed_in", "signed_out"]


def test_the_session_cookie_names_a_token_not_the_admin_id(app, admin):
    client = signed_in(app)
    with client.session_transaction() as session:
        assert session["_user_id"] == db.session.get(User, admin.id).session_token
        assert session["_user_id"] != str(admin.id) and len(session["_user_id"]) >= 40


def test_a_password_change_ends_every_session(app, admin, runner):
    client = signed_in(app)
    saved = client.get_cookie("session").value
    result = runner.invoke(args=["admin", "set-password", ADMIN_EMAIL], input="a brand new passphrase\n")
    assert result.exit_code == 0, result.output
    assert '"sessions_ended": true' in result.output
    assert client.get("/").status_code == 302
    client.set_cookie("session", saved)
    assert client.get("/").status_code == 302
    assert attempt(client_for(app), ADMIN_EMAIL, ADMIN_PASSWORD).status_code == 401
    assert attempt(client_for(app), ADMIN_EMAIL, "a brand new passphrase").status_code == 302
    db.session.expire_all()
    assert db.session.get(User, admin.id).password_changed_at is not None


def test_set_password_refuses_a_short_password_and_an_unknown_admin(app, admin, runner):
    short = runner.invoke(args=["admin", "set-password", ADMIN_EMAIL], input="short\n")
    assert short.exit_code == 1 and "at least 10 characters" in short.output
    unknown = runner.invoke(args=["admin", "set-password", UNKNOWN_EMAIL], input="long enough password\n")
    assert unknown.exit_code == 1 and "no admin with email" in unknown.output


def test_an_idle_session_and_an_old_session_end(app, admin):
    client = signed_in(app)
    assert client.get_cookie("session").expires is not None  # permanent: the cookie itself expires
    with client.session_transaction() as session:
        session["seen_at"] -= 31 * 60  # SESSION_IDLE_MINUTES is 30
    idle = client.get("/")
    assert idle.status_code == 302 and "/login" in idle.headers["Location"]
    assert "Your session ended" in client.get("/login").text

    client = signed_in(app)
    with client.session_transaction() as session:
        session["signed_in_at"] -= 12 * 3600 + 1  # PERMANENT_SESSION_LIFETIME is 12 h
        session["seen_at"] = time.time()
    assert client.get("/").status_code == 302
    assert app.permanent_session_lifetime.total_seconds() == 12 * 3600
    assert [kind for kind, _, _ in events()] == ["signed_in", "expired", "signed_in", "expired"]


def test_rate_limits_can_be_switched_off(database_url, redis_url, tmp_path, make_agent):
    from console import create_app

    config = {"TESTING": True, "DATABASE_URL": database_url, "REDIS_URL": redis_url, "SECRET_KEY": "t"}
    relaxed = create_app({**config, "RATELIMIT_ENABLED": False, "API_RATE_LIMIT": "1/minute"})
    with relaxed.app_context():
        headers = bearer(make_agent())
        client = relaxed.test_client()
        assert [client.get("/api/v1/agent", headers=headers).status_code for _ in range(3)] == [200] * 3
        db.session.remove()
        db.engine.dispose()  # its own pool: close it, not the garbage collector


# ----- the second factor -----


def _enrol(runner, email: str = ADMIN_EMAIL) -> str:
    result = runner.invoke(args=["admin", "totp", email])
    assert result.exit_code == 0, result.output
    uri = re.search(r'"provisioning_uri": "([^"]+)"', result.stdout).group(1)
    assert "\u2580" in result.stderr or "\u2584" in result.stderr or "█" in result.stderr  # the QR code
    return pyotp.parse_uri(uri).secret


def test_an_enrolled_admin_must_give_a_current_code_once(app, admin, runner):
    secret = _enrol(runner)
    client = client_for(app)
    first = attempt(client, ADMIN_EMAIL, ADMIN_PASSWORD)
    assert first.status_code == 302 and first.headers["Location"] == "/login/code"
    assert client.get("/").status_code == 302  # the password alone opens nothing
    page = client.get("/login/code")
    assert page.status_code == 200 and "six-digit code" in page.text
    token = csrf_from(page.text)
    wrong = client.post(
        "/login/code",
        data={"code": "000000" if pyotp.TOTP(secret).now() != "000000" else "111111", "csrf_token": token},
    )
    assert wrong.status_code == 401
    code = pyotp.TOTP(secret).now()
    right = client.post("/login/code", data={"code": code, "csrf_token": token})
    assert right.status_code == 302 and right.headers["Location"] == "/"
    assert client.get("/").status_code == 200
    # The same code cannot be used again, by anyone.
    other = client_for(app)
    attempt(other, ADMIN_EMAIL, ADMIN_PASSWORD)
    replay = other.post(
        "/login/code", data={"code": code, "csrf_token": csrf_from(other.get("/login/code").text)}
    )
    assert replay.status_code == 401
    assert [k for k, _, _ in events()] == ["code_failed", "signed_in", "code_failed"]


def test_wrong_codes_count_against_the_sign_in_limit(app, admin, runner):
    _enrol(runner)
    app.config["LOGIN_RATE_LIMIT"] = "3/minute"
    client = client_for(app)
    assert attempt(client, ADMIN_EMAIL, ADMIN_PASSWORD).status_code == 302
    token = csrf_from(client.get("/login/code").text)
    answers = [
        client.post("/login/code", data={"code": "12345x", "csrf_token": token}).status_code for _ in range(4)
    ]
    assert answers == [401, 401, 401, 429]


def test_totp_can_be_removed_and_sign_in_is_one_step_again(app, admin, runner):
    assert _enrol(runner) != _enrol(runner)  # enrolling again replaces the secret
    result = runner.invoke(args=["admin", "totp", ADMIN_EMAIL, "--off"])
    assert result.exit_code == 0 and '"totp": false' in result.output
    assert attempt(client_for(app), ADMIN_EMAIL, ADMIN_PASSWORD).headers["Location"] == "/"


# ----- the API rate limit -----


def test_the_601st_api_call_in_a_minute_gets_429_with_retry_after(app, client, make_agent):
    headers = bearer(make_agent())
    other = bearer(make_agent())
    for n in range(600):
        response = client.get("/api/v1/agent", headers=headers)
        assert response.status_code == 200, (n, response.get_json())
    limited = client.get("/api/v1/agent", headers=headers)
    assert limited.status_code == 429
    body = limited.get_json()
    assert body["error"] == "rate_limited" and "API_RATE_LIMIT" in body["message"]
    assert 0 < int(limited.headers["Retry-After"]) <= 60
    # Counted per token: another agent is not held back.
    assert client.get("/api/v1/agent", headers=other).status_code == 200


def test_the_limit_headers_are_sent_only_when_asked_for_and_a_429_always_says_when_to_retry(
    database_url, redis_url, make_agent
):
    """RATELIMIT_HEADERS_ENABLED (off by default: two Redis round trips a call) adds X-RateLimit-*; the
    429's Retry-After comes from console/limits.py either way."""
    from console import create_app

    config = {"TESTING": True, "DATABASE_URL": database_url, "REDIS_URL": redis_url, "SECRET_KEY": "t"}
    for enabled in (False, True):
        asked = {"RATELIMIT_HEADERS_ENABLED": True} if enabled else {}  # off unless asked for
        app = create_app({**config, **asked, "API_RATE_LIMIT": "2/minute"})
        with app.app_context():
            headers = bearer(make_agent())
            client = app.test_client()
            first = client.get("/api/v1/agent", headers=headers)
            assert first.status_code == 200
            assert ("X-RateLimit-Remaining" in first.headers) is enabled
            if enabled:
                assert (
                    first.headers["X-RateLimit-Limit"] == "2"
                    and first.headers["X-RateLimit-Remaining"] == "1"
                )
            client.get("/api/v1/agent", headers=headers)
            limited = client.get("/api/v1/agent", headers=headers)
            assert limited.status_code == 429 and 0 < int(limited.headers["Retry-After"]) <= 60
            db.session.remove()
            db.engine.dispose()


def test_the_api_limit_is_configurable_and_shared_across_endpoints(app, client, make_agent):
    app.config["API_RATE_LIMIT"] = "3/minute"
    headers = bearer(make_agent())
    assert client.get("/api/v1/agent", headers=headers).status_code == 200
    assert client.get("/api/v1/patches", headers=headers).status_code == 200
    assert client.get("/api/v1/agent/refinement-prompt", headers=headers).status_code == 200
    assert client.post("/api/v1/memory/query", json={}, headers=headers).status_code == 429


# ----- storage quotas -----


def test_memories_past_the_quota_are_refused_naming_the_limit(app, client, make_agent, make_memory):
    app.config["MAX_MEMORIES_PER_AGENT"] = 4
    agent = make_agent(role="supervisor")
    headers = bearer(agent)
    make_memory(agent, "one fact")
    deleted = make_memory(agent, "a fact deleted later")
    for text in ("The user likes tea.", "The user likes green tea."):
        assert (
            client.post(
                "/api/v1/memory", json={"content": text, "category": "preferences"}, headers=headers
            ).status_code
            == 201
        )
    refused = client.post(
        "/api/v1/memory", json={"content": "One more fact.", "category": "preferences"}, headers=headers
    )
    assert refused.status_code == 409
    body = refused.get_json()
    assert (
        body["error"] == "quota_exceeded"
        and body["limit"] == "MAX_MEMORIES_PER_AGENT"
        and body["limit_value"] == 4
    )
    assert "MAX_MEMORIES_PER_AGENT" in body["message"] and "One more" not in body["message"]
    assert (
        db.session.scalar(
            sa.select(sa.func.count()).select_from(AgentMemory).where(AgentMemory.agent_id == agent.id)
        )
        == 4
    )
    # A refinement session's journal line is exempt: sessions only ever shrink memory.
    session = RefinementSession(agent_id=agent.id, trigger="manual", status="running")
    db.session.add(session)
    db.session.commit()
    journal = create_memory(
        agent.id,
        "Refinement session: nothing to do.",
        actor="agent",
        memory_type="journal",
        session_id=session.id,
    )
    with pytest.raises(QuotaExceeded):
        create_memory(agent.id, "An admin's import.", actor="admin:test")
    db.session.rollback()
    soft_delete_memories(agent.id, [journal.id], actor="admin:test")
    # Soft-deleted memories do not count.
    assert client.delete(f"/api/v1/memory/{deleted.id}", headers=headers).status_code == 200
    assert (
        client.post(
            "/api/v1/memory", json={"content": "Now it fits.", "category": "preferences"}, headers=headers
        ).status_code
        == 201
    )


def test_the_memory_quota_reads_the_maintained_count_not_the_agents_rows(app, make_agent, make_memory):
    """One primary-key read of agents.memory_count (migration 0021), whatever the agent holds: counting the
    rows made every create O(memories) (25 ms of a create at 100,000)."""
    from models.agents.quotas import check_memory_count, memory_count

    app.config["MAX_MEMORIES_PER_AGENT"] = 3
    agent = make_agent()
    for n in range(3):
        make_memory(agent, f"fact {n}")
    statements: list[str] = []

    def seen(conn, cursor, statement, parameters, context, executemany):
        statements.append(statement)

    sa.event.listen(db.engine, "before_cursor_execute", seen)
    try:
        assert memory_count(agent.id) == 3
        with pytest.raises(QuotaExceeded):
            check_memory_count(agent.id)
    finally:
        sa.event.remove(db.engine, "before_cursor_execute", seen)
    assert statements and not any("agent_memories" in s for s in statements)


def test_checkpoint_bytes_past_the_quota_are_refused_and_a_replacement_counts_its_new_size(
    app, client, make_agent
):
    app.config["MAX_CHECKPOINT_BYTES_PER_AGENT"] = 3000
    headers = bearer(make_agent())
    blob = {"state": "x" * 1200}
    assert client.put(
        "/api/v1/checkpoints/t1", json={"checkpoint_data": blob}, headers=headers
    ).status_code in (200, 201)
    assert client.put(
        "/api/v1/checkpoints/t2", json={"checkpoint_data": blob}, headers=headers
    ).status_code in (200, 201)
    refused = client.put("/api/v1/checkpoints/t3", json={"checkpoint_data": blob}, headers=headers)
    assert refused.status_code == 413
    body = refused.get_json()
    assert body["error"] == "quota_exceeded" and body["limit"] == "MAX_CHECKPOINT_BYTES_PER_AGENT"
    assert "3,000" in body["message"]
    assert db.session.scalar(sa.select(sa.func.count()).select_from(SupervisorCheckpoint)) == 2
    # Replacing a thread's checkpoint counts its new size, not old + new.
    assert (
        client.put(
            "/api/v1/checkpoints/t2", json={"checkpoint_data": {"state": "y" * 1500}}, headers=headers
        ).status_code
        == 200
    )


def test_the_agent_page_shows_usage_against_the_quotas(app, admin, make_agent, make_memory):
    app.config["MAX_MEMORIES_PER_AGENT"] = 40
    agent = make_agent()
    for n in range(3):
        make_memory(agent, f"fact {n}")
    web = signed_in(app)
    assert f'hx-get="/agents/{agent.id}/quotas"' in web.get(f"/agents/{agent.id}").text
    html = web.get(f"/agents/{agent.id}/quotas").text
    assert 'id="agent-quotas"' in html
    assert re.search(r"3\s*of\s*40\s*memories", html)
    assert "MAX_CHECKPOINT_BYTES_PER_AGENT" in html


# ----- one parser for untrusted values -----


def test_parse_utc_takes_any_offset_and_clamps_to_the_calendar():
    assert parse_utc("2026-11-22T04:00:00+05:30") == datetime(2026, 11, 21, 22, 30)
    assert parse_utc("2026-11-22T04:00:00Z") == parse_utc("2026-11-22T04:00:00") == datetime(2026, 11, 22, 4)
    assert parse_utc("0001-01-01T00:00:00+14:00") == datetime.min
    assert parse_utc("9999-12-31T23:59:59-14:00") == datetime.max
    assert parse_utc("2026-11-22", end_of_day=True) == datetime(2026, 11, 22, 23, 59, 59, 999999)
    assert parse_utc("") is None and parse_utc(None) is None
    for bad in ("0000-01-01", "10000-01-01", "yesterday", "2026-13-01", "2026-11-22\x00", "9" * 500):
        with pytest.raises(BadInput, match="ISO 8601"):
            parse_utc(bad, field="to")
    assert to_utc(datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=14)))) == datetime.min


def test_parse_id_and_parse_int_keep_values_inside_the_columns():
    assert parse_id("42") == 42 and parse_id(str(MAX_ID)) == MAX_ID
    for bad in ("0", "-1", str(MAX_ID + 1), "9" * 5000, "١٢", "²", "1e3", "", None, " 4 2"):
        assert parse_id(bad) is None, bad
    assert parse_int("9" * 50, default=1, low=1, high=100) == 100
    assert parse_int("x", default=1, low=1, high=100) == 1 and parse_int("0", default=1, low=1, high=100) == 1
    with pytest.raises(BadInput, match="NUL"):
        clean_text("a\x00b", field="q")


def test_the_inputs_that_reached_500_get_clear_answers(app, admin, client, make_agent, make_memory):
    agent = make_agent(role="supervisor")
    make_memory(agent, "The user likes tea.", category="preferences")
    headers = bearer(agent)
    for stamp in ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"):
        for name in ("updated_after", "updated_before"):
            response = client.post(
                "/api/v1/memory/query", json={"query": "tea", "filters": {name: stamp}}, headers=headers
            )
            assert response.status_code == 200, response.get_json()
    web = signed_in(app)
    assert web.get(f"/agents/{agent.id}/rollback?to=0001-01-01T00:00:00%2B14:00").status_code == 200
    bad_time = web.get(f"/agents/{agent.id}/rollback?to=0000-00-00")
    assert bad_time.status_code in (400, 422) and "ISO 8601" in bad_time.text
    nul = web.get("/?q=%00")
    assert nul.status_code == 400 and "NUL" in nul.text
    for url in (f"/agents/{MAX_ID + 1}", "/agents/99999999999999999999999", "/sessions/" + "9" * 5000):
        assert web.get(url).status_code == 404, url
    assert client.get(f"/api/v1/memory/{MAX_ID + 1}", headers=headers).status_code == 404


# ----- real processes -----


@pytest.fixture
def small_api_limit(monkeypatch):
    """Read by the gunicorn started after it (its environment is this process's)."""
    monkeypatch.setenv("API_RATE_LIMIT", "20/minute")


def test_gunicorn_workers_share_the_login_count_and_the_api_count(small_api_limit, admin, server, make_agent):  # noqa: F811
    """gunicorn with 2 workers on the suite's database and Redis: each attempt is a new connection,
    so the workers take turns, and the count is still one count."""
    import httpx

    base = f"http://127.0.0.1:{server}"
    answers = []
    for _ in range(6):
        with httpx.Client(base_url=base, timeout=30) as web:
            token = csrf_from(web.get("/login").text)
            answers.append(
                web.post(
                    "/login", data={"email": ADMIN_EMAIL, "password": "wrong password!", "csrf_token": token}
                ).status_code
            )
    assert answers == [401] * 5 + [429]
    headers = bearer(make_agent())
    with httpx.Client(base_url=base, timeout=30, limits=httpx.Limits(max_keepalive_connections=0)) as api:
        responses = [api.get("/api/v1/agent", headers=headers) for _ in range(21)]
    assert [r.status_code for r in responses] == [200] * 20 + [429]
    assert responses[-1].json()["error"] == "rate_limited" and int(responses[-1].headers["Retry-After"]) > 0
