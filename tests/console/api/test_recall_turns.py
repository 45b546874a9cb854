"""On-demand recall's accounting (docs/spec/003-memory-system.md §11): POST /api/v1/turns notes a turn,
recalled or not, as a content-free event; GET /api/v1/agent and the console's agent page show the share
of turns that recalled; memory.query is not touched."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from infra.batching import flush_all
from models import db
from models.history.events import RECALL_TURN, OpEvent
from tests.browser.support import make_admin, signed_in


def _reissued(make_agent):
    agent = make_agent()
    token = agent.issue_token()
    db.session.commit()
    return agent, {"Authorization": f"Bearer {token}"}


def test_noted_turns_give_the_share_that_recalled_on_get_agent(client, make_agent):
    agent, auth = _reissued(make_agent)
    for recalled in (True, False, False, False):
        response = client.post("/api/v1/turns", json={"recalled": recalled, "thread_id": "t-1"}, headers=auth)
        assert response.status_code == 202 and response.json == {"recalled": recalled, "noted": True}
    flush_all()
    figures = {row["window"]: row for row in client.get("/api/v1/agent", headers=auth).json["recall"]}
    assert figures["last_24h"] == {"window": "last_24h", "turns": 4, "recalled": 1, "share": 0.25}
    assert figures["last_7d"]["turns"] == 4 and figures["last_7d"]["share"] == 0.25
    statuses = db.session.scalars(
        select(OpEvent.status).where(OpEvent.agent_id == agent.id, OpEvent.op == RECALL_TURN)
    ).all()
    assert sorted(statuses) == ["recalled", "skipped", "skipped", "skipped"]


def test_an_agent_with_no_noted_turns_has_no_share(client, make_agent):
    _, auth = _reissued(make_agent)
    recall = client.get("/api/v1/agent", headers=auth).json["recall"]
    assert [(r["turns"], r["share"]) for r in recall] == [(0, None), (0, None)]


def test_another_agents_turns_are_not_counted(client, make_agent):
    _, mine = _reissued(make_agent)
    _, theirs = _reissued(make_agent)
    client.post("/api/v1/turns", json={"recalled": True}, headers=theirs)
    flush_all()
    assert client.get("/api/v1/agent", headers=mine).json["recall"][1]["turns"] == 0


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"recalled": "yes"},
        {"recalled": 1},
        {"recalled": True, "extra": 1},
        {"recalled": True, "thread_id": 5},
    ],
)
def test_a_malformed_turn_is_refused_and_notes_nothing(client, make_agent, body):
    agent, auth = _reissued(make_agent)
    response = client.post("/api/v1/turns", json=body, headers=auth)
    assert response.status_code == 422 and response.json["error"] == "invalid"
    flush_all()
    assert db.session.scalar(select(OpEvent.id).where(OpEvent.agent_id == agent.id)) is None


def test_the_agent_page_shows_the_share_of_turns_that_recalled(app, client, make_agent, redis_conn):
    agent, auth = _reissued(make_agent)
    for recalled in (True, False, False, False, False, False, False, False, False, False):
        client.post("/api/v1/turns", json={"recalled": recalled}, headers=auth)
    flush_all()
    make_admin()
    page = signed_in(app).get(f"/agents/{agent.id}").get_data(as_text=True)
    assert "1 of 10 (10.0%; the goal is under 10%)" in page
