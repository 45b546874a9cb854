"""The consent policy of docs/spec/003-memory-system.md §10 as built (docs/explanation/governance.md,
"Consent"): a benign user-context field applies only when two independent signals agree (a mention per thread,
the user's chat acknowledgement, a confident theory-of-mind insight); a sensitive field waits for the user's
consent whoever writes it."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from jobs.insights import tom_for_agent
from models import AgentMemory, AuditLog, db
from models.changes.mutations import create_memory
from models.changes.patch_tables import ProposedPatch
from tests import scripted_llm as s

TONE = "The user prefers short, direct replies."


@pytest.fixture
def api(client, make_agent):
    agent = make_agent(role="supervisor")
    token = agent.issue_token()
    db.session.commit()
    headers = {"Authorization": f"Bearer {token}"}

    def post(path: str, body: dict | None = None):
        return client.post(f"/api/v1{path}", json=body, headers=headers)

    def save(**body):
        body.setdefault("category", "preferences")
        return post("/memory", body)

    return agent, save, post, client, headers


def memories(agent_id: int) -> list[AgentMemory]:
    db.session.expire_all()
    return db.session.scalars(sa.select(AgentMemory).where(AgentMemory.agent_id == agent_id)).all()


def test_a_benign_field_waits_for_a_second_mention_in_another_thread(api):
    agent, save, _, _, _ = api

    first = save(content=TONE, field="tone", thread_id="t1")
    assert first.status_code == 202
    patch = first.get_json()["patch"]
    assert (patch["policy"], patch["signals"], patch["status"]) == ("signals", ["mention"], "pending")
    assert memories(agent.id) == []

    again = save(content=TONE, field="tone", thread_id="t1")  # the same thread again: the same signal
    assert again.status_code == 202 and again.get_json()["patch"]["id"] == patch["id"]
    assert again.get_json()["patch"]["signals"] == ["mention"] and memories(agent.id) == []

    other = save(content=TONE, field="tone", thread_id="t2")  # the same value in another conversation
    other_wording = save(content="The user prefers short direct replies", field="tone", thread_id="t3")
    assert other.status_code == 201 and other.get_json()["memory"]["tags"] == ["field:tone"]
    assert other_wording.status_code == 202  # a new proposal: case and punctuation aside only
    (applied,) = memories(agent.id)
    decided = db.session.get(ProposedPatch, patch["id"])
    assert (decided.status, decided.decided_by, decided.result_memory_id) == (
        "confirmed",
        "signals",
        applied.id,
    )
    record = db.session.scalar(sa.select(AuditLog).where(AuditLog.action == "consent_corroborated"))
    assert record.data["signals"] == ["mention", "mention"] and record.data["result_memory_id"] == applied.id
    assert TONE not in json.dumps(record.data)


def test_the_users_chat_acknowledgement_is_the_second_signal(api):
    agent, save, post, client, headers = api

    acknowledged = save(content=TONE, field="tone", thread_id="t1", user_ack=True)
    assert acknowledged.status_code == 201

    pending = save(content="The user wants weekly progress summaries.", field="goals", thread_id="t1")
    assert pending.status_code == 202
    confirmed = post(
        f"/patches/{pending.get_json()['patch']['id']}/confirm", {"source": "chat_ack", "user_turn": "m2"}
    )
    assert confirmed.status_code == 200
    assert confirmed.get_json()["patch"]["signals"] == ["mention", "chat_ack"]
    assert {m.content for m in memories(agent.id)} == {TONE, "The user wants weekly progress summaries."}

    # An update of the field's value needs its own two signals; its importance is not a context change.
    memory_id = acknowledged.get_json()["memory"]["id"]
    held = client.patch(
        f"/api/v1/memory/{memory_id}", json={"content": "The user prefers long replies."}, headers=headers
    )
    assert held.status_code == 202 and held.get_json()["patch"]["op"] == "update"
    assert (
        client.patch(f"/api/v1/memory/{memory_id}", json={"importance": 4}, headers=headers).status_code
        == 200
    )
    assert db.session.get(AgentMemory, memory_id).content == TONE


def test_a_sensitive_field_waits_for_consent_even_with_an_acknowledgement_on_the_write(api):
    agent, save, _, _, _ = api
    response = save(
        content="The user's preferred name is Ana.",
        category="profile",
        field="preferred_name",
        user_ack=True,
        thread_id="t1",
    )
    again = save(
        content="The user's preferred name is Ana.",
        category="profile",
        field="preferred_name",
        thread_id="t2",
    )
    assert response.status_code == 202 and again.status_code == 202
    assert response.get_json()["patch"]["policy"] == "consent" and memories(agent.id) == []


@pytest.fixture
def tom_agent(app, make_agent, llm, monkeypatch):
    monkeypatch.setitem(app.config, "OPENAI_API_KEY", "test-key")
    agent = make_agent(model_id="scripted-model", base_url=llm.url, role="supervisor")
    create_memory(
        agent.id, "Maya asked for shorter answers twice today", actor="agent", memory_type="episodic"
    )
    return agent


def insight(field: str | None, confidence: float) -> s.Step:
    return s.text(
        json.dumps(
            {
                "insights": [
                    {"summary": "Maya values brevity in replies.", "field": field, "confidence": confidence}
                ]
            }
        )
    )


def test_a_confident_tom_insight_corroborates_the_pending_benign_proposal(tom_agent, llm):
    from models.changes.patches import write_context

    agent = tom_agent
    patch, memory = write_context(
        agent.id,
        "create",
        "tone",
        {"content": TONE, "memory_type": "semantic", "category": "preferences", "tags": ["field:tone"]},
        signals=[("mention", "t1")],
    )
    assert memory is None
    llm.script = [insight("tone", 0.9)]

    result = tom_for_agent(agent.id)

    assert result["corroborated"] == [patch.id]
    db.session.expire_all()
    applied = db.session.get(ProposedPatch, patch.id)
    assert applied.status == "confirmed" and applied.decided_by == "signals"
    assert db.session.get(AgentMemory, applied.result_memory_id).content == TONE


@pytest.mark.parametrize(
    ("field", "confidence", "competing"),
    [("tone", 0.5, False), ("city", 0.95, False), ("tone", 0.95, True)],
    ids=["low confidence", "sensitive field", "two competing proposals"],
)
def test_an_insight_never_corroborates_when_unsure_sensitive_or_ambiguous(
    tom_agent, llm, field, confidence, competing
):
    from models.changes.patches import write_context

    agent = tom_agent
    texts = [TONE, "The user prefers long, detailed replies."][: 2 if competing else 1]
    for text in texts:
        write_context(
            agent.id,
            "create",
            field,
            {
                "content": text,
                "memory_type": "semantic",
                "category": "preferences",
                "tags": [f"field:{field}"],
            },
            signals=[("mention", "t1")],
        )
    llm.script = [insight(field, confidence)]

    result = tom_for_agent(agent.id)

    assert result["created"] and result["corroborated"] == []
    assert {p.status for p in db.session.scalars(sa.select(ProposedPatch))} == {"pending"}
