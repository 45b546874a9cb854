"""The agent JSON API: authentication, isolation, memory.query, writes, history, consent, checkpoints."""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest
import sqlalchemy as sa

from console.api import api
from infra.batching import flush_all
from models import (
    AgentMemory,
    AuditLog,
    ChangeLogEntry,
    OpEvent,
    ProposedPatch,
    SupervisorCheckpoint,
    create_admin,
    db,
    estimate_tokens,
    utcnow,
)
from models.admins.mechanic import decide_grant, request_grant
from models.changes.mutations import create_memory, set_constitutional, update_memory
from models.changes.patches import expire_patches
from models.changes.ttl import expire_memory, purge_memory
from models.retrieval.access import RESOLUTION, flush_access, touch
from tests.api_support import bearer, table_state


@pytest.fixture(autouse=True)
def _no_background_flush(app):
    """Buffered bookkeeping is flushed by the tests themselves, never by surprise mid-test."""
    app.config["API_FLUSH_SECONDS"] = 3600


@pytest.fixture
def supervisor(make_agent):
    agent = make_agent(role="supervisor")
    return agent, bearer(agent)


def save(client, headers, **body):
    body.setdefault("category", "preferences")
    return client.post("/api/v1/memory", json=body, headers=headers)


def query(client, headers, **body):
    response = client.post("/api/v1/memory/query", json=body, headers=headers)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


# ----- authentication -----


def _call(client, op, headers):
    path = (
        op.rule.replace("<int:memory_id>", "1").replace("<int:grant_id>", "1").replace("<int:patch_id>", "1")
    )
    path = "/api/v1" + path.replace("<thread_id>", "t1")
    body = {"checkpoint_data": {}} if "checkpoint" in path else {}
    return client.open(path, method=op.method, json=body if op.body else None, headers=headers)


def test_no_bad_revoked_or_inactive_token_gets_401_on_every_endpoint(client, make_agent):
    agent = make_agent(role="supervisor")
    old = bearer(agent)
    bearer(agent)  # rotated: the old token stops working at once
    inactive = make_agent(role="supervisor", active=False)
    cases = {
        "none": {},
        "not bearer": {"Authorization": "Basic dXNlcjpwYXNz"},
        "empty bearer": {"Authorization": "Bearer "},
        "bad": {"Authorization": "Bearer mgc_not-a-real-token"},
        "revoked": old,
        "inactive agent": bearer(inactive),
    }
    before = table_state()
    for op in api.operations:
        for name, headers in cases.items():
            response = _call(client, op, headers)
            assert response.status_code == 401, (op.method, op.rule, name)
            assert response.headers["WWW-Authenticate"].startswith("Bearer")
            assert response.get_json()["error"] == "unauthorized"
    assert table_state() == before


def test_openapi_document_is_public_openapi_3_1_generated_from_the_models(client):
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    doc = response.get_json()
    assert doc["openapi"] == "3.1.0"
    assert doc["components"]["securitySchemes"]["bearerAuth"] == {"type": "http", "scheme": "bearer"}
    query_op = doc["paths"]["/memory/query"]["post"]
    assert query_op["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/MemoryQuery"
    }
    schema = doc["components"]["schemas"]["MemoryQuery"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["top_k"]["maximum"] == 50
    assert {"401", "403", "404", "422", "400", "413", "415"} <= set(query_op["responses"])
    # Every registered route is documented, and nothing else is.
    documented = {(path, method.upper()) for path, ops in doc["paths"].items() for method in ops}
    assert documented == {(op.path, op.method) for op in api.operations}


# ----- isolation -----


def _isolation_fixture(make_agent, make_memory):
    a, b = make_agent(role="supervisor"), make_agent(role="supervisor")
    ha, hb = bearer(a), bearer(b)
    b_memory = make_memory(
        b,
        "Agent B knows the user likes cycling.",
        category="preferences",
        user_id="u-b",
        thread_id="tb",
        memory_type="semantic",
    )
    admin = create_admin("iso@example.com", "correct horse battery")
    b_grant = request_grant(b.id, admin.id, "Investigating a reported duplicate.", "all", [], 10)
    b_patch = ProposedPatch(
        agent_id=b.id,
        op="create",
        field="city",
        changes={"content": "x"},
        status="pending",
        created_at=utcnow(),
        expires_at=utcnow() + timedelta(days=7),
    )
    db.session.add(b_patch)
    db.session.add(
        SupervisorCheckpoint(
            agent_id=b.id, user_id="u-b", thread_id="tb", checkpoint_data={"b": 1}, size_bytes=7
        )
    )
    db.session.commit()
    return a, ha, b, hb, b_memory.id, b_grant.id, b_patch.id


def test_agent_a_token_against_agent_b_ids_is_404_or_403_and_changes_nothing(client, make_agent, make_memory):
    a, ha, b, hb, memory_id, grant_id, patch_id = _isolation_fixture(make_agent, make_memory)
    matrix = {
        ("GET", "/memory/<int:memory_id>"): [("GET", f"/memory/{memory_id}", None, 404)],
        ("PATCH", "/memory/<int:memory_id>"): [
            ("PATCH", f"/memory/{memory_id}", {"content": "The user hates cycling."}, 404)
        ],
        ("DELETE", "/memory/<int:memory_id>"): [("DELETE", f"/memory/{memory_id}", None, 404)],
        ("GET", "/memory/<int:memory_id>/history"): [("GET", f"/memory/{memory_id}/history", None, 404)],
        ("POST", "/memory/<int:memory_id>/restore"): [("POST", f"/memory/{memory_id}/restore", None, 404)],
        ("POST", "/mechanic/grants/<int:grant_id>/revoke"): [
            ("POST", f"/mechanic/grants/{grant_id}/revoke", None, 404)
        ],
        ("GET", "/patches/<int:patch_id>"): [("GET", f"/patches/{patch_id}", None, 404)],
        ("POST", "/patches/<int:patch_id>/confirm"): [
            ("POST", f"/patches/{patch_id}/confirm", {"user_turn": "m2"}, 404)
        ],
        ("POST", "/patches/<int:patch_id>/reject"): [("POST", f"/patches/{patch_id}/reject", None, 404)],
        ("GET", "/checkpoints/<thread_id>"): [("GET", "/checkpoints/tb?user_id=u-b", None, 404)],
        ("POST", "/memory/query"): [
            ("POST", "/memory/query", {"query": "cycling", "filters": {"agent_id": b.id}}, 403),
            ("POST", "/memory/query", {"query": "cycling", "filters": {"agent_id": b.name}}, 403),
            ("POST", "/memory/query", {"query": "cycling", "agent": b.name}, 403),
        ],
    }
    # Endpoints that take no foreign id: A sees only its own (empty) world.
    own_world = {
        ("GET", "/agent"), ("GET", "/agent/refinement-prompt"), ("PUT", "/agent/refinement-prompt"),
        ("PUT", "/agent/mechanic-preconsent"), ("GET", "/mechanic/grants"), ("GET", "/patches"),
        ("POST", "/memory"), ("GET", "/export"), ("PUT", "/checkpoints/<thread_id>"),
        ("POST", "/memory/procedure"), ("POST", "/memory/extract"),
        # The context block reads the caller's own rows only
        # (tests/console/api/test_context_block.py::test_another_agents_token_never_sees_the_block).
        ("GET", "/context"),
        # LangGraph: threads and store items are looked up within the caller's own rows only
        # (tests/integrations/test_langgraph_checkpointer.py::test_another_agents_token_sees_none_of_a_threads_checkpoints).
        ("POST", "/langgraph/checkpoints"), ("POST", "/langgraph/writes"), ("GET", "/langgraph/checkpoint"),
        ("POST", "/langgraph/checkpoints/search"), ("POST", "/langgraph/threads/delete"),
        ("POST", "/langgraph/threads/copy"), ("POST", "/langgraph/threads/prune"), ("POST", "/langgraph/store/batch"),
        # A noted turn is the caller's own event (tests/console/api/test_recall_turns.py::test_another_agents_turns_are_not_counted).
        ("POST", "/turns"),
        # What can be restored is read within the caller's own rows only
        # (tests/console/api/test_api_restorable.py::test_the_restorable_list_holds_deleted_and_expired_memories_with_purge_dates_and_nothing_else).
        ("GET", "/memories/restorable"),
    }  # fmt: skip
    assert set(matrix) | own_world == {(op.method, op.rule) for op in api.operations}, (
        "every endpoint is covered"
    )

    before = table_state()
    for calls in matrix.values():
        for method, path, body, status in calls:
            response = client.open("/api/v1" + path, method=method, json=body, headers=ha)
            assert response.status_code == status, (method, path, response.get_json())
            assert "cycling" not in response.get_data(as_text=True)
    assert table_state() == before

    # A's reads of its own world never show B's rows.
    assert query(client, ha, query="cycling")["results"] == []
    assert client.get("/api/v1/mechanic/grants", headers=ha).get_json() == {"grants": []}
    assert client.get("/api/v1/patches", headers=ha).get_json() == {"patches": []}
    lines = client.get("/api/v1/export?user_id=u-b", headers=ha).get_data(as_text=True).splitlines()
    assert [json.loads(line)["type"] for line in lines] == ["summary"]
    # A's checkpoint for the same (user, thread) names is A's own row; B's is untouched.
    client.put("/api/v1/checkpoints/tb", json={"user_id": "u-b", "checkpoint_data": {"a": 2}}, headers=ha)
    assert client.get("/api/v1/checkpoints/tb?user_id=u-b", headers=hb).get_json()["checkpoint_data"] == {
        "b": 1
    }
    # And B still reaches everything of its own.
    assert client.get(f"/api/v1/memory/{memory_id}", headers=hb).status_code == 200
    assert query(client, hb, query="cycling")["results"][0]["id"] == memory_id


def test_filters_agent_id_naming_the_caller_is_allowed(client, supervisor, make_memory):
    agent, headers = supervisor
    make_memory(agent, "The user runs marathons.", category="activity")
    for value in (agent.id, str(agent.id), agent.name):
        assert len(query(client, headers, query="marathons", filters={"agent_id": value})["results"]) == 1


# ----- memory.query: allowlists and filters -----


def test_disallowed_category_is_403_naming_it_whatever_the_filters(client, make_agent, make_memory):
    planner = make_agent(role="planner")
    headers = bearer(planner)
    make_memory(planner, "The user wants to ship v1 by September.", category="goals")
    for body in (
        {"categories": ["goals", "profile"]},
        {"categories": ["profile"], "filters": {"category": "goals"}},
        {"filters": {"category": "preferences", "user_id": "anyone", "pinned": True}},
        {"categories": ["no_such_category"]},
    ):
        response = client.post("/api/v1/memory/query", json={"query": "ship", **body}, headers=headers)
        assert response.status_code == 403, body
        payload = response.get_json()
        assert payload["error"] == "category_not_allowed"
        refused = (set(body.get("categories", [])) | {body.get("filters", {}).get("category")}) - {
            None,
            "goals",
        }
        assert set(payload["categories"]) == refused
        assert all(name in payload["message"] for name in refused)
    assert len(query(client, headers, query="ship")["results"]) == 1


def test_agent_without_a_known_role_reads_only_context_all_categories(client, make_agent, make_memory):
    for role in (None, "stranger"):
        agent = make_agent(role=role)
        headers = bearer(agent)
        make_memory(agent, "The user is called Sam.", category="profile")
        make_memory(agent, "The user likes Sam's cafe.", category="preferences")
        assert client.get("/api/v1/agent", headers=headers).get_json()["categories"] == ["profile"]
        results = query(client, headers, query="Sam")["results"]
        assert [r["category"] for r in results] == ["profile"]
        denied = client.post("/api/v1/memory/query", json={"categories": ["preferences"]}, headers=headers)
        assert denied.status_code == 403


def test_uncategorised_memories_are_their_owners_whatever_the_allowlist(client, supervisor, make_memory):
    """An agent's uncategorised (core) memories are its own; tests/console/api/test_spec_gaps.py has the rest."""
    agent, headers = supervisor
    core = make_memory(agent, "The user is learning the cello.")
    assert [r["id"] for r in query(client, headers, query="cello")["results"]] == [core.id]
    assert client.get(f"/api/v1/memory/{core.id}", headers=headers).status_code == 200


def test_filters_are_applied_in_sql_before_ranking_and_top_k(client, supervisor, make_memory):
    """If filters ran in Python after the top-k cut, the low-ranked matching rows would never surface."""
    agent, headers = supervisor
    for i in range(30):
        make_memory(
            agent, f"The user enjoys jazz concert number {i}.", category="event", importance=5, user_id="u1"
        )
    wanted = [
        make_memory(agent, f"The user enjoys a quiet jazz record {i}.", category="event", importance=1,
                    user_id="u2", run_id="r7", actor_id="bob", role="user", pinned=True, thread_id="t9")
        for i in range(3)
    ]  # fmt: skip
    filters = {"user_id": "u2", "run_id": "r7", "actor_id": "bob", "role": "user", "pinned": True,
               "thread_id": "t9", "importance_max": 1, "category": "event"}  # fmt: skip
    results = query(client, headers, query="jazz", top_k=3, filters=filters)["results"]
    assert sorted(r["id"] for r in results) == sorted(m.id for m in wanted)
    assert (
        query(client, headers, query="jazz", top_k=50, filters={"importance_min": 5})["results"].__len__()
        == 30
    )
    assert query(client, headers, query="jazz", filters={"user_id": "nobody"})["results"] == []


def test_updated_after_and_before_filter_on_updated_at(client, supervisor, make_memory):
    agent, headers = supervisor
    old = make_memory(agent, "The user visited Lisbon in spring.", category="event")
    db.session.execute(
        sa.update(AgentMemory)
        .where(AgentMemory.id == old.id)
        .values(updated_at=utcnow() - timedelta(days=40))
    )
    db.session.commit()
    new = make_memory(agent, "The user visited Lisbon again in autumn.", category="event")
    since = (utcnow() - timedelta(days=1)).date().isoformat()
    assert [
        r["id"] for r in query(client, headers, query="Lisbon", filters={"updated_after": since})["results"]
    ] == [new.id]
    before = (utcnow() - timedelta(days=1)).isoformat() + "Z"
    assert [
        r["id"] for r in query(client, headers, query="Lisbon", filters={"updated_before": before})["results"]
    ] == [old.id]


def test_soft_deleted_memories_never_reach_query_results_or_the_delta_text(client, supervisor):
    agent, headers = supervisor
    first = save(client, headers, content="The user keeps bees on the roof.", thread_id="t1").get_json()
    assert client.delete(f"/api/v1/memory/{first['memory']['id']}", headers=headers).status_code == 200
    for mode in ("bullets", "full"):
        answer = query(client, headers, query="bees roof", thread_id="t1", since_rev=0, **{"return": mode})
        assert answer["results"] == []
        assert "bees" not in json.dumps(answer)
        assert answer["delta"]["bullets"][-1].startswith("- −deleted: [preferences] #")
    assert client.get(f"/api/v1/memory/{first['memory']['id']}", headers=headers).status_code == 404


# ----- memory.query: ranking, budget, threshold -----


def test_ranking_combines_lexical_relevance_recency_and_importance(client, supervisor, make_memory):
    agent, headers = supervisor
    both = make_memory(agent, "The user drinks oolong tea with honey.", category="preferences")
    one = make_memory(agent, "The user drinks coffee.", category="preferences")
    unrelated = make_memory(agent, "The user owns a red bicycle.", category="preferences", importance=5)
    results = query(client, headers, query="oolong honey drinks", **{"return": "full"})["results"]
    assert [r["id"] for r in results] == [both.id, one.id]
    assert results[0]["relevance"] == 1.0 and results[1]["relevance"] < 1.0
    assert unrelated.id not in [r["id"] for r in results]
    # Same text match: the more important and the more recent rank higher.
    low = make_memory(agent, "The user plays chess on Sundays.", category="activity", importance=1)
    high = make_memory(agent, "The user plays chess online.", category="activity", importance=5)
    # as long as `low`, so only its age tells them apart
    stale = make_memory(agent, "The user plays chess on Fridays.", category="activity", importance=1)
    db.session.execute(
        sa.update(AgentMemory)
        .where(AgentMemory.id == stale.id)
        .values(updated_at=utcnow() - timedelta(days=365))
    )
    db.session.commit()
    order = [r["id"] for r in query(client, headers, query="chess")["results"]]
    assert order.index(high.id) < order.index(low.id) < order.index(stale.id)


def test_relative_threshold_drops_results_below_the_relative_relevance(client, supervisor, make_memory):
    agent, headers = supervisor
    strong = make_memory(
        agent, "Kayak kayak trip: the user paddles a kayak on the kayak lake.", category="activity"
    )
    make_memory(agent, "The user once saw a kayak.", category="activity")
    assert len(query(client, headers, query="kayak")["results"]) == 2
    assert [r["id"] for r in query(client, headers, query="kayak", relative_threshold=0.99)["results"]] == [
        strong.id
    ]


def test_query_without_searchable_words_matches_nothing(client, supervisor, make_memory):
    agent, headers = supervisor
    make_memory(agent, "The user likes punctuation.", category="preferences")
    assert query(client, headers, query="?!* -- ;")["results"] == []
    assert len(query(client, headers, query="")["results"]) == 1  # no query: by recency and importance


def test_an_empty_query_ranks_newness_on_its_own_month_scale(client, supervisor, make_memory):
    """Without words the ranking is 0.6 recency + 0.4 importance with recency over 30 days (RECENT_DAYS),
    not the year memory.query's words are ranked with: a new memory comes before an important one half a
    year old (over a year the old one would win, 0.80 against 0.70)."""
    agent, headers = supervisor
    old = make_memory(agent, "The user signed the lease.", category="preferences", importance=5)
    db.session.execute(
        sa.update(AgentMemory)
        .where(AgentMemory.id == old.id)
        .values(updated_at=utcnow() - timedelta(days=180))
    )
    new = make_memory(agent, "The user bought a lamp.", category="preferences")
    db.session.commit()
    assert [r["id"] for r in query(client, headers, query="")["results"]] == [new.id, old.id]


@pytest.mark.parametrize("mode", ["bullets", "full"])
def test_response_never_exceeds_budget_tokens(client, supervisor, mode):
    agent, headers = supervisor
    for i in range(12):
        save(
            client,
            headers,
            content=f"The user has a note about gardens, number {i}, " + "with detail " * (i % 5) + ".",
            thread_id="tg",
            category="activity",
        )
    for budget in (1, 5, 20, 40, 80, 200, 1000):
        answer = query(
            client,
            headers,
            query="gardens",
            top_k=50,
            budget_tokens=budget,
            thread_id="tg",
            since_rev=0,
            **{"return": mode},
        )
        spent = estimate_tokens(answer["delta"]["header"]) if answer["delta"] else 0
        for item in answer["results"]:
            spent += (
                estimate_tokens(item["text"])
                if mode == "bullets"
                else estimate_tokens(json.dumps(item, separators=(",", ":")))
            )
        assert spent <= budget
        assert answer["tokens_used"] <= budget
        assert len(answer["results"]) + answer["omitted"] == 12


# ----- the delta header -----


def test_delta_header_lists_at_most_three_changes_since_the_rev_passed(client, supervisor):
    agent, headers = supervisor
    ids = []
    for i in range(4):
        ids.append(
            save(
                client, headers, content=f"The user owns plant number {i}.", thread_id="t1", importance=2
            ).get_json()["memory"]["id"]
        )
    updated = client.patch(
        f"/api/v1/memory/{ids[0]}", json={"content": "The user owns a fern."}, headers=headers
    ).get_json()
    assert updated["rev"] == 5
    answer = query(client, headers, query="plant", thread_id="t1", since_rev=2)
    delta = answer["delta"]
    assert (answer["rev"], delta["rev"], delta["since_rev"], delta["changes"]) == (5, 5, 2, 3)
    assert delta["header"].splitlines()[0] == "Memory updates since rev 2:"
    assert delta["bullets"] == [
        "- +created: [preferences] The user owns plant number 2. (imp=2)",
        "- +created: [preferences] The user owns plant number 3. (imp=2)",
        "- ↑updated: [preferences] The user owns a fern.",
    ]
    assert query(client, headers, query="plant", thread_id="t1", since_rev=5)["delta"] is None
    assert query(client, headers, query="plant", thread_id="t1")["rev"] == 5
    assert query(client, headers, query="plant", thread_id="other", since_rev=0)["delta"] is None


def test_delta_header_respects_the_allowlist_and_other_threads(client, make_agent):
    stylist = make_agent(role="stylist")
    headers = bearer(stylist)
    create_memory(stylist.id, "Secret profile fact.", actor="admin:test", category="profile", thread_id="t1")
    save(client, headers, content="The user prefers short answers.", category="tone", thread_id="t1")
    save(client, headers, content="The user prefers long answers.", category="tone", thread_id="t2")
    delta = query(client, headers, thread_id="t1", since_rev=0)["delta"]
    assert delta["changes"] == 1 and "Secret" not in delta["header"]
    assert delta["bullets"] == ["- +created: [tone] The user prefers short answers."]


def test_merges_and_deletes_by_other_paths_show_in_the_delta(client, supervisor, make_memory):
    agent, headers = supervisor
    from models.changes.mutations import consolidate_memories

    a = make_memory(agent, "Likes tea.", memory_type="core", category="preferences", thread_id="t1")
    b = make_memory(agent, "Likes tea!", memory_type="core", category="preferences", thread_id="t1")
    merged = consolidate_memories(agent.id, [a.id, b.id], "Likes tea.", actor="admin:test")
    bullets = query(client, headers, thread_id="t1", since_rev=2)["delta"]["bullets"]
    assert bullets == [  # the merged memory keeps the thread its sources share, so it is in the delta too
        "- ↔merged: Combined 2 notes: [preferences] Likes tea.",
        f"- ↔merged: [preferences] #{a.id} merged into #{merged.id}",
        f"- ↔merged: [preferences] #{b.id} merged into #{merged.id}",
    ]


def test_thread_revision_increments_atomically_under_concurrent_writes(app, make_agent):
    agent_id = make_agent(role="supervisor").id
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            with app.app_context():
                for i in range(5):
                    create_memory(
                        agent_id, f"Note {n}-{i}.", actor="agent", category="tasks", thread_id="busy"
                    )
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    revs = db.session.scalars(
        sa.select(ChangeLogEntry.rev).where(ChangeLogEntry.thread_id == "busy").order_by(ChangeLogEntry.rev)
    ).all()
    assert revs == list(range(1, 31))


# ----- bookkeeping: last access and operational events -----


def test_query_touches_last_accessed_at_in_a_batch_without_audit(client, supervisor, make_memory):
    agent, headers = supervisor
    hit = make_memory(agent, "The user collects stamps.", category="activity")
    miss = make_memory(agent, "The user collects nothing else.", category="goals")
    audits = db.session.scalar(sa.select(sa.func.count()).select_from(AuditLog))
    query(client, headers, query="stamps")
    db.session.expire_all()
    assert db.session.get(AgentMemory, hit.id).last_accessed_at is None  # buffered, not written per read
    assert flush_access() == 1
    db.session.expire_all()
    assert db.session.get(AgentMemory, hit.id).last_accessed_at is not None
    assert db.session.get(AgentMemory, miss.id).last_accessed_at is None
    assert db.session.scalar(sa.select(sa.func.count()).select_from(AuditLog)) == audits


def test_a_memory_read_again_within_a_minute_of_its_stored_access_time_is_not_written_again(
    supervisor, make_memory
):
    agent, _ = supervisor
    memory = make_memory(agent, "The user collects stamps.", category="activity")
    other = make_memory(agent, "The user collects shells.", category="activity")

    def stored(row) -> object:
        db.session.expire_all()
        return db.session.get(AgentMemory, row.id).last_accessed_at

    first = utcnow()
    touch([memory.id], first)
    flush_access()
    assert stored(memory) == first
    touch([memory.id, other.id], first + RESOLUTION / 2)
    flush_access()
    assert stored(memory) == first  # read again within the resolution: left as it was
    assert stored(other) == first + RESOLUTION / 2  # never read before: written
    later = first + RESOLUTION * 2
    touch([memory.id], later)
    flush_access()
    assert stored(memory) == later


def test_operational_events_are_recorded_for_query_create_update_merge_and_delete(
    client, supervisor, make_memory
):
    agent, headers = supervisor
    from models.changes.mutations import consolidate_memories

    created = save(client, headers, content="The user likes figs.", user_id="u1", thread_id="t1").get_json()[
        "memory"
    ]
    client.patch(f"/api/v1/memory/{created['id']}", json={"importance": 4}, headers=headers)
    query(client, headers, query="figs", filters={"user_id": "u1"})
    client.post("/api/v1/memory/query", json={"categories": ["tone"]}, headers=headers)  # 403: an error event
    client.delete(f"/api/v1/memory/{created['id']}", headers=headers)
    a = make_memory(agent, "Same.", category="tasks")
    b = make_memory(agent, "Same!", category="tasks")
    consolidate_memories(agent.id, [a.id, b.id], "Same.", actor="system:consolidation")
    flush_all()
    rows = db.session.execute(
        sa.select(OpEvent.node, OpEvent.op, OpEvent.status, OpEvent.user_id).order_by(OpEvent.id)
    ).all()
    ops = [(r.node, r.op, r.status) for r in rows]
    assert ops[:3] == [("hotpath", "create", "ok"), ("hotpath", "update", "ok"), ("hotpath", "delete", "ok")]
    assert ("worker", "merge", "ok") in ops
    assert ("hotpath", "search", "ok") in ops and ("hotpath", "search", "error") in ops
    assert rows[0].user_id == "u1"


# ----- writes -----


@pytest.mark.parametrize(
    ("body", "rule"),
    [
        ({"content": "x" * 281}, "semantic.max_length"),
        ({"content": "I told you my name is Ana."}, "semantic.third_person"),
        ({"content": "She prefers tea in the morning."}, "semantic.self_contained"),
        ({"content": "They moved to Lyon in May.", "memory_type": "insight"}, "insight.self_contained"),
        (
            {"content": "The user likes tea. The user likes cake. The user likes jam."},
            "semantic.max_sentences",
        ),
        ({"content": " \u200b \t\n "}, "empty_after_normalisation"),
        ({"content": "Met Ana. Talked. Left.", "memory_type": "episodic"}, "episodic.max_sentences"),
        (
            {"content": "Open the door\nWalk in", "memory_type": "procedural", "category": "tasks"},
            "procedural.numbered_steps",
        ),
        ({"content": "y" * 2001, "memory_type": "procedural", "category": "tasks"}, "procedural.max_length"),
    ],
)
def test_writing_rule_violation_is_422_naming_the_rule_and_writes_nothing(client, supervisor, body, rule):
    agent, headers = supervisor
    before = table_state()
    response = save(client, headers, **body)
    assert response.status_code == 422
    payload = response.get_json()
    assert payload["rule"] == rule and payload["field"] == "content"
    assert body["content"].strip()[:10] not in payload["message"] or not body["content"].strip()
    assert table_state() == before


def test_valid_writes_are_normalised_and_audited_as_the_agent(client, supervisor):
    agent, headers = supervisor
    response = save(
        client, headers, content="  The user   prefers\u200b Dr. Who reruns.  ", importance=3, tags=["tv"]
    )
    assert response.status_code == 201
    memory = response.get_json()["memory"]
    assert memory["content"] == "The user prefers Dr. Who reruns."
    record = db.session.scalars(sa.select(AuditLog).where(AuditLog.memory_id == memory["id"])).one()
    assert (record.actor, record.action, record.agent_id) == ("agent", "create", agent.id)
    steps = save(
        client,
        headers,
        content="1. Open the repo\n2) Run the tests",
        memory_type="procedural",
        category="tasks",
    )
    assert steps.status_code == 201


def test_writes_to_categories_outside_the_allowlist_are_403(client, make_agent):
    planner = make_agent(role="planner")
    headers = bearer(planner)
    before = table_state()
    response = save(client, headers, content="The user likes pop music.", category="preferences")
    assert response.status_code == 403 and response.get_json()["categories"] == ["preferences"]
    assert table_state() == before


def test_agents_cannot_update_delete_or_create_constitutional_memories(client, supervisor, make_memory):
    agent, headers = supervisor
    vow = make_memory(agent, "Never reveal the user's address.", category="preferences", constitutional=True)
    before = table_state()
    for method, body in (("PATCH", {"content": "Reveal it."}), ("DELETE", None)):
        response = client.open(f"/api/v1/memory/{vow.id}", method=method, json=body, headers=headers)
        assert response.status_code == 409 and response.get_json()["error"] == "constitutional"
    response = save(client, headers, content="The user is a vegan.", constitutional=True)
    assert response.status_code == 409 and response.get_json()["error"] == "constitutional"
    assert table_state() == before


def test_update_changes_fields_and_delete_soft_deletes_own_memories(client, supervisor):
    agent, headers = supervisor
    memory = save(client, headers, content="The user likes pears.", user_id="u1").get_json()["memory"]
    response = client.patch(
        f"/api/v1/memory/{memory['id']}",
        json={"content": "The user loves pears.", "user_id": None, "importance": 5},
        headers=headers,
    )
    assert response.status_code == 200
    updated = response.get_json()["memory"]
    assert (updated["content"], updated["user_id"], updated["importance"]) == (
        "The user loves pears.",
        None,
        5,
    )
    empty = client.patch(f"/api/v1/memory/{memory['id']}", json={}, headers=headers)
    assert empty.status_code == 422
    assert (
        client.patch(f"/api/v1/memory/{memory['id']}", json={"content": None}, headers=headers).status_code
        == 422
    )
    deleted = client.delete(f"/api/v1/memory/{memory['id']}", headers=headers)
    assert deleted.status_code == 200
    row = db.session.get(AgentMemory, memory["id"])
    db.session.refresh(row)
    assert row.deleted_at is not None
    assert client.delete(f"/api/v1/memory/{memory['id']}", headers=headers).status_code == 404


# ----- consent policy -----


def test_sensitive_field_writes_are_held_until_the_user_consents(client, supervisor):
    agent, headers = supervisor
    before = db.session.scalar(sa.select(sa.func.count()).select_from(AgentMemory))
    response = save(
        client,
        headers,
        content="The user's preferred name is Ana.",
        category="profile",
        field="preferred_name",
        thread_id="t1",
    )
    assert response.status_code == 202
    patch = response.get_json()["patch"]
    assert patch["status"] == "pending" and patch["changes"]["content"] == "The user's preferred name is Ana."
    assert db.session.scalar(sa.select(sa.func.count()).select_from(AgentMemory)) == before
    assert query(client, headers, query="Ana")["results"] == []

    confirmed = client.post(
        f"/api/v1/patches/{patch['id']}/confirm",
        json={"source": "chat_ack", "user_turn": "m2"},
        headers=headers,
    )
    assert confirmed.status_code == 200
    decided = confirmed.get_json()
    assert decided["patch"]["status"] == "confirmed" and decided["patch"]["changes"] is None
    assert decided["memory"]["tags"] == ["field:preferred_name"] and decided["rev"] == 1
    assert [r["id"] for r in query(client, headers, query="Ana")["results"]] == [decided["memory"]["id"]]
    actions = db.session.scalars(
        sa.select(AuditLog.action).where(AuditLog.agent_id == agent.id).order_by(AuditLog.id)
    ).all()
    assert actions == ["consent_proposed", "create", "consent_confirmed"]
    again = {"source": "chat_ack", "user_turn": "m3"}
    assert (
        client.post(f"/api/v1/patches/{patch['id']}/confirm", json=again, headers=headers).status_code == 409
    )

    # Updating a memory that holds a sensitive field is held too. A benign field applies with two
    # signals: this write (a mention) and the user's acknowledgement in chat (tests/models/changes/test_consent_policy.py).
    memory_id = decided["memory"]["id"]
    held = client.patch(
        f"/api/v1/memory/{memory_id}", json={"content": "The user's preferred name is Bo."}, headers=headers
    )
    assert held.status_code == 202
    assert client.get(f"/api/v1/memory/{memory_id}", headers=headers).get_json()["content"].endswith("Ana.")
    rejected = client.post(f"/api/v1/patches/{held.get_json()['patch']['id']}/reject", headers=headers)
    assert rejected.get_json()["patch"]["status"] == "rejected"
    benign = save(
        client,
        headers,
        content="The user prefers a warm tone.",
        category="preferences",
        field="tone",
        user_ack=True,
    )
    assert benign.status_code == 201 and benign.get_json()["memory"]["tags"] == ["field:tone"]


def test_held_patches_expire_after_seven_days_and_lose_their_text(client, supervisor):
    agent, headers = supervisor
    patch = save(
        client, headers, content="The user lives in Porto.", category="profile", field="city"
    ).get_json()["patch"]
    assert expire_patches(agent.id, now=utcnow() + timedelta(days=6)) == 0
    assert expire_patches(agent.id, now=utcnow() + timedelta(days=7, seconds=1)) == 1
    listed = client.get("/api/v1/patches?status=expired", headers=headers).get_json()["patches"]
    assert [(p["id"], p["status"], p["changes"]) for p in listed] == [(patch["id"], "expired", None)]
    again = {"source": "chat_ack", "user_turn": "m3"}
    assert (
        client.post(f"/api/v1/patches/{patch['id']}/confirm", json=again, headers=headers).status_code == 409
    )
    assert "Porto" not in json.dumps([r.data for r in db.session.scalars(sa.select(AuditLog))])


# ----- history and export -----


def test_history_maps_audit_events_and_redacts_purged_text(client, supervisor, make_memory):
    agent, headers = supervisor
    memory = save(
        client, headers, content="The user had a cold.", memory_type="episodic", category="event"
    ).get_json()["memory"]
    update_memory(agent.id, memory["id"], actor="agent", content="The user had a bad cold.")
    expire_memory(agent.id, memory["id"], grace=timedelta(seconds=0))
    history = client.get(f"/api/v1/memory/{memory['id']}/history", headers=headers).get_json()
    assert [e["event"] for e in history["events"]] == ["TTL", "UPDATE", "ADD"]
    assert history["events"][1]["old"]["content"] == "The user had a cold."
    assert history["events"][1]["new"]["content"] == "The user had a bad cold."
    assert history["events"][1]["meta"] == {"fields": ["content"]}
    purge_memory(agent.id, memory["id"])
    history = client.get(f"/api/v1/memory/{memory['id']}/history?limit=2", headers=headers).get_json()
    assert history["more"] is True and [e["event"] for e in history["events"]] == ["TTL", "TTL"]
    assert history["events"][0]["new"] is None and history["events"][0]["old"]["redacted"] is True
    assert "cold" not in json.dumps(
        client.get(f"/api/v1/memory/{memory['id']}/history", headers=headers).get_json()
    )


def test_export_streams_the_users_memories_with_history_and_deleted_flag(client, supervisor, make_memory):
    agent, headers = supervisor
    kept = make_memory(agent, "The user likes kites.", category="activity", user_id="u1")
    gone = save(
        client, headers, content="The user likes sleds.", category="activity", user_id="u1"
    ).get_json()["memory"]
    client.delete(f"/api/v1/memory/{gone['id']}", headers=headers)
    make_memory(agent, "The user likes boats.", category="activity", user_id="u2")
    core = make_memory(agent, "A core fact.", user_id="u1")  # no category: the agent's own
    make_memory(agent, "The user's tone is dry.", category="tone", user_id="u1")  # outside the allowlist
    response = client.get("/api/v1/export?user_id=u1", headers=headers)
    assert response.status_code == 200 and response.mimetype == "application/x-ndjson"
    lines = [json.loads(line) for line in response.get_data(as_text=True).splitlines()]
    assert [(line["type"], (line.get("memory") or {}).get("id"), line.get("deleted")) for line in lines] == [
        ("memory", kept.id, False),
        ("memory", gone["id"], True),
        ("memory", core.id, False),
        ("summary", None, None),
    ]
    assert [e["event"] for e in lines[1]["history"]] == ["ADD", "DELETE"]
    assert lines[-1] == {"type": "summary", "user_id": "u1", "memories": 3}
    assert client.get("/api/v1/export", headers=headers).status_code == 422


# ----- the agent's own settings -----


def test_refinement_prompt_is_self_authored_and_audited_without_its_words(client, supervisor):
    agent, headers = supervisor
    assert client.get("/api/v1/agent/refinement-prompt", headers=headers).get_json()["is_default"] is True
    text = "Merge only exact duplicates; keep every date."
    response = client.put(
        "/api/v1/agent/refinement-prompt", json={"refinement_prompt": text}, headers=headers
    )
    assert response.get_json() == {"refinement_prompt": text, "is_default": False, "max_chars": 4000}
    assert client.get("/api/v1/agent", headers=headers).get_json()["has_refinement_prompt"] is True
    record = db.session.scalars(sa.select(AuditLog).where(AuditLog.action == "agent_settings")).one()
    assert record.actor == "agent" and text not in json.dumps(record.data)
    too_long = client.put(
        "/api/v1/agent/refinement-prompt", json={"refinement_prompt": "x" * 4001}, headers=headers
    )
    assert too_long.status_code == 422
    reset = client.put("/api/v1/agent/refinement-prompt", json={"refinement_prompt": None}, headers=headers)
    assert reset.get_json()["is_default"] is True


def test_mechanic_preconsent_grants_list_and_revoke(client, supervisor, make_agent):
    agent, headers = supervisor
    response = client.put("/api/v1/agent/mechanic-preconsent", json={"preconsent": True}, headers=headers)
    assert response.get_json() == {"mechanic_preconsent": True}
    assert client.get("/api/v1/agent", headers=headers).get_json()["mechanic_preconsent"] is True
    assert (
        client.put(
            "/api/v1/agent/mechanic-preconsent", json={"preconsent": "yes"}, headers=headers
        ).status_code
        == 422
    )
    admin = create_admin("mech@example.com", "correct horse battery")
    grant = request_grant(agent.id, admin.id, "Checking a suspected duplicate cluster.", "all", [], 15)
    decide_grant(grant.id, True, decided_by="test")
    grants = client.get("/api/v1/mechanic/grants", headers=headers).get_json()["grants"]
    assert [(g["id"], g["status"], g["purpose"]) for g in grants] == [
        (grant.id, "active", "Checking a suspected duplicate cluster.")
    ]
    assert grants[0]["seconds_left"] > 0 and grants[0]["expires_at"].endswith("Z")
    revoked = client.post(f"/api/v1/mechanic/grants/{grant.id}/revoke", headers=headers)
    assert revoked.status_code == 200 and revoked.get_json()["status"] == "revoked"
    assert client.post(f"/api/v1/mechanic/grants/{grant.id}/revoke", headers=headers).status_code == 422
    assert client.post("/api/v1/mechanic/grants/999999/revoke", headers=headers).status_code == 404


# ----- checkpoints -----


def test_checkpoints_upsert_one_row_per_user_and_thread(client, supervisor):
    agent, headers = supervisor
    first = client.put(
        "/api/v1/checkpoints/t1", json={"user_id": "u1", "checkpoint_data": {"step": 1}}, headers=headers
    )
    assert first.status_code == 201
    second = client.put(
        "/api/v1/checkpoints/t1", json={"user_id": "u1", "checkpoint_data": {"step": 2}}, headers=headers
    )
    assert second.status_code == 200 and second.get_json()["created_at"] == first.get_json()["created_at"]
    other = client.put(
        "/api/v1/checkpoints/t1", json={"user_id": "u2", "checkpoint_data": {"step": 9}}, headers=headers
    )
    assert other.status_code == 201
    loaded = client.get("/api/v1/checkpoints/t1?user_id=u1", headers=headers).get_json()
    assert loaded["checkpoint_data"] == {"step": 2} and loaded["thread_id"] == "t1"
    assert db.session.scalar(sa.select(sa.func.count()).select_from(SupervisorCheckpoint)) == 2
    assert client.get("/api/v1/checkpoints/t2?user_id=u1", headers=headers).status_code == 404


def test_checkpoint_over_one_mebibyte_is_413_and_writes_nothing(client, supervisor):
    agent, headers = supervisor
    ok = {"blob": "a" * (1_048_576 - 11)}  # {"blob":"..."} is exactly 1 MiB
    assert (
        client.put("/api/v1/checkpoints/big", json={"checkpoint_data": ok}, headers=headers).status_code
        == 201
    )
    over = {"blob": "a" * (1_048_576 - 10)}
    response = client.put("/api/v1/checkpoints/big2", json={"checkpoint_data": over}, headers=headers)
    assert response.status_code == 413 and response.get_json()["error"] == "checkpoint_too_large"
    huge = client.put(
        "/api/v1/checkpoints/big3",
        data=b'{"checkpoint_data":{"x":"' + b"a" * 3_000_000 + b'"}}',
        content_type="application/json",
        headers=headers,
    )
    assert huge.status_code == 413 and huge.is_json
    assert db.session.scalar(sa.select(sa.func.count()).select_from(SupervisorCheckpoint)) == 1


def test_constitutional_flag_set_in_a_session_is_visible_but_locked(client, supervisor, make_memory):
    agent, headers = supervisor
    memory = make_memory(agent, "The user is allergic to nuts.", category="profile")
    set_constitutional(agent.id, memory.id, True, actor="admin:test")
    assert client.get(f"/api/v1/memory/{memory.id}", headers=headers).get_json()["constitutional"] is True
    assert client.delete(f"/api/v1/memory/{memory.id}", headers=headers).status_code == 409


def test_relation_edges_boost_ranking_when_the_relations_layer_is_installed(client, supervisor, make_memory):
    relations = pytest.importorskip(
        "models.retrieval.relations",
        reason="the relations layer (docs/spec/003-memory-system.md §2) is not installed",
    )
    agent, headers = supervisor
    plain = make_memory(agent, "The user grows basil on the balcony.", category="activity")
    linked = make_memory(agent, "The user grows basil in the kitchen.", category="activity")
    other = make_memory(agent, "The user cooks pesto.", category="activity")
    db.session.execute(
        sa.update(AgentMemory)
        .where(AgentMemory.id == linked.id)
        .values(updated_at=utcnow() - timedelta(days=3))
    )
    db.session.commit()
    assert [r["id"] for r in query(client, headers, query="basil")["results"]] == [plain.id, linked.id]
    db.session.add(
        relations.MemoryRelation(agent_id=agent.id, from_id=linked.id, to_id=other.id, strength=0.9)
    )
    db.session.commit()
    assert [r["id"] for r in query(client, headers, query="basil")["results"]] == [linked.id, plain.id]
