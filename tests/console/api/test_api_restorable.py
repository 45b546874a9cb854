"""What an agent can still restore (docs/spec/003-memory-system.md §7): GET /api/v1/memories/restorable lists
its soft-deleted memories (never purged) and its TTL-expired ones until their purge date, with content (its
own), paged, within its allowlist; the console's memories page lists the same rows, metadata only, with a
Restore button, and the agent page links to it."""

from __future__ import annotations

import re
from datetime import timedelta

from models.changes.mutations import create_memory, soft_delete_memories
from models.changes.ttl import expire_memory
from models.db import utcnow
from tests.api_support import bearer
from tests.browser.support import make_admin, post, signed_in

URL = "/api/v1/memories/restorable"


def _memory(agent_id: int, text: str, **fields) -> int:
    fields.setdefault("category", "preferences")
    fields.setdefault("memory_type", "semantic")
    return create_memory(agent_id, text, actor="agent", **fields).id


def test_the_restorable_list_holds_deleted_and_expired_memories_with_purge_dates_and_nothing_else(
    app, client, make_agent
):
    agent, other = make_agent(role="supervisor"), make_agent(role="supervisor")
    headers = bearer(agent)
    active = _memory(agent.id, "Maya likes jasmine tea")
    deleted = _memory(agent.id, "Maya likes oolong tea")
    expired = _memory(agent.id, "Maya once tried matcha", memory_type="episodic")
    purge_due = _memory(agent.id, "Maya once tried rooibos", memory_type="episodic")
    outside = _memory(agent.id, "Maya's tone is warm", category="tone")  # not in a supervisor's allowlist
    theirs = _memory(other.id, "Tom likes coffee")
    assert client.delete(f"/api/v1/memory/{deleted}", headers=headers).status_code == 200
    expiry = expire_memory(agent.id, expired)
    expire_memory(agent.id, purge_due, now=utcnow() - timedelta(days=31))
    soft_delete_memories(agent.id, [outside], actor="agent")
    soft_delete_memories(other.id, [theirs], actor="agent")

    response = client.get(URL, headers=headers)
    assert response.status_code == 200
    body = response.get_json()
    assert [m["id"] for m in body["memories"]] == [expired, deleted]  # the most recent deletion first
    first, second = body["memories"]
    assert first["state"] == "expired" and first["purge_at"] is not None
    assert first["purge_at"].startswith(expiry.purge_at.strftime("%Y-%m-%dT%H:%M"))
    assert second["state"] == "deleted" and second["purge_at"] is None
    assert second["content"] == "Maya likes oolong tea" and second["category"] == "preferences"
    assert body["next_cursor"] is None
    assert active not in [m["id"] for m in body["memories"]]


def test_the_restorable_list_pages_each_memory_once_and_a_restored_memory_leaves_it(app, client, make_agent):
    agent = make_agent(role="supervisor")
    headers = bearer(agent)
    ids = [_memory(agent.id, f"Maya visited museum number {n}") for n in range(5)]
    soft_delete_memories(agent.id, ids, actor="agent")  # one deletion time: the id orders them
    seen, cursor = [], None
    while True:
        page = client.get(
            URL, query_string={"limit": 2, **({"cursor": cursor} if cursor else {})}, headers=headers
        )
        assert page.status_code == 200
        body = page.get_json()
        assert len(body["memories"]) <= 2
        seen += [m["id"] for m in body["memories"]]
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert seen == sorted(ids, reverse=True)

    assert client.post(f"/api/v1/memory/{ids[0]}/restore", headers=headers).status_code == 200
    after = client.get(URL, headers=headers).get_json()
    assert [m["id"] for m in after["memories"]] == sorted(ids[1:], reverse=True)


def test_a_bad_restorable_cursor_or_limit_is_a_422_naming_it(app, client, make_agent):
    headers = bearer(make_agent(role="supervisor"))
    for query, field in (
        ({"cursor": "bm90LWEtY3Vyc29y"}, "cursor"),
        ({"limit": 0}, "limit"),
        ({"limit": 201}, "limit"),
    ):
        response = client.get(URL, query_string=query, headers=headers)
        assert response.status_code == 422, query
        assert field in response.get_data(as_text=True)


def test_the_restorable_list_needs_the_agents_token(app, client):
    assert client.get(URL).status_code == 401


def test_the_console_lists_restorable_memories_with_purge_dates_metadata_only_and_restores_one(
    app, make_agent, redis_conn
):
    make_admin()
    web = signed_in(app)
    agent = make_agent(role="supervisor")
    agent_id = agent.id
    deleted = _memory(agent_id, "Maya likes oolong tea")
    expired = _memory(agent_id, "Maya once tried matcha", memory_type="episodic")
    soft_delete_memories(agent_id, [deleted], actor="agent")
    expiry = expire_memory(agent_id, expired)

    overview = web.get(f"/agents/{agent_id}").text
    assert f"/agents/{agent_id}/memories?state=deleted" in overview  # the agent page links to the list
    listed = web.get(f"/agents/{agent_id}/memories?state=deleted").text
    assert f'id="memory-{deleted}"' in listed and f'id="memory-{expired}"' in listed
    purge = expiry.purge_at.strftime("%Y-%m-%dT%H:%M")
    assert re.search(rf'purge <time datetime="{purge}', listed)  # the expired one's purge date
    assert "oolong" not in listed and "matcha" not in listed  # metadata only
    assert listed.count(">Restore</button>") == 2

    restored = post(web, f"/agents/{agent_id}/memories/{expired}/restore")
    assert restored.status_code == 200
    gone = [m["id"] for m in _restorable(app, agent_id)]
    assert gone == [deleted]


def _restorable(app, agent_id: int) -> list[dict]:
    from models.retrieval.restorable import restorable

    return [m._asdict() for m in restorable(agent_id, ["preferences", None], limit=10)[0]]
