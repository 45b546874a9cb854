"""CSRF: every state-changing console route refuses a request without a valid token, and changes nothing.

The agent JSON API under /api/ authenticates each request with the agent's bearer token, not a cookie,
so cross-site request forgery does not apply to it; every other route is covered here, found from the
url map so a new route cannot slip by.
"""

from __future__ import annotations

import re

import pytest
import sqlalchemy as sa

from models import AuditLog, MechanicGrant, RefinementSession, db
from models.admins.mechanic import decide_grant, request_grant
from tests.browser.support import make_admin, signed_in

STATE_CHANGING = {"POST", "PUT", "PATCH", "DELETE"}


def _fill(rule: str, ids: dict[str, object]) -> str:
    def value(match: re.Match) -> str:
        name = match.group(1)
        assert name in ids, f"the CSRF test does not know how to fill <{name}> in {rule}"
        return str(ids[name])

    return re.sub(r"<(?:\w+:)?(\w+)>", value, rule)


def _counts() -> tuple:
    return tuple(
        db.session.scalar(sa.select(sa.func.count()).select_from(model))
        for model in (AuditLog, RefinementSession, MechanicGrant)
    )


@pytest.fixture
def ids(app, make_agent, make_memory):
    admin = make_admin()
    agent = make_agent()
    memory = make_memory(agent, "a memory")
    session = RefinementSession(agent_id=agent.id, trigger="t", status="completed")
    db.session.add(session)
    db.session.commit()
    grant = request_grant(agent.id, admin.id, "A purpose that is long enough", "all", [], 5)
    decide_grant(grant.id, True, decided_by="pre-consent")
    op_id = db.session.scalar(sa.select(AuditLog.op_id).where(AuditLog.memory_id == memory.id))
    return {
        "agent_id": agent.id,
        "memory_id": memory.id,
        "session_id": session.id,
        "grant_id": grant.id,
        "patch_id": 1,  # refused before any patch is looked up
        "op_id": op_id,
        "job_id": "refine-1",  # the jobs page's actions: refused before any job is looked up
        "name": "mechanic-expiry",
    }


def test_every_state_changing_route_refuses_a_request_without_the_token(app, ids):
    client = signed_in(app)
    routes = [
        (rule, method)
        for rule in app.url_map.iter_rules()
        for method in sorted(rule.methods & STATE_CHANGING)
        if not rule.rule.startswith("/api/")
    ]
    assert len(routes) >= 10
    before = _counts()
    for rule, method in routes:
        url = _fill(rule.rule, ids)
        form = {
            "value": "true",
            "to": "2020-01-01T00:00:00",
            "core_token_budget": "900",
            "purpose": "x" * 20,
            "scope": "all",
            "minutes": "5",
        }
        for headers in (
            {},
            {"HX-Request": "true"},
            {"X-CSRFToken": "forged"},
            {"X-CSRFToken": client.csrf + "x"},
        ):
            response = client.open(url, method=method, data=form, headers=headers)
            assert response.status_code == 400, (
                f"{method} {rule.rule} with {headers} answered {response.status_code}"
            )
            assert "CSRF" in response.get_data(as_text=True)
    assert _counts() == before
    assert client.get("/").status_code == 200  # still signed in: the refusals logged nobody out


def test_the_token_comes_from_the_page_and_works_as_the_htmx_header(app, ids):
    client = signed_in(app)
    page = client.get(f"/agents/{ids['agent_id']}").text
    token = re.search(r"hx-headers='\{\"X-CSRFToken\": \"([^\"]+)\"\}'", page).group(1)
    response = client.post(
        f"/agents/{ids['agent_id']}/settings",
        data={"core_token_budget": "900"},
        headers={"X-CSRFToken": token, "HX-Request": "true"},
    )
    assert response.status_code == 200
