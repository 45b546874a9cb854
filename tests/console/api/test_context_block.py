"""GET /api/v1/context: the agent's prompt block (its core memories, this week's journals, the delta
header, its usage), its ETag and 304, paging, the text layout, and `last_refinement_at` on GET /agent."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import sqlalchemy as sa
from freezegun import freeze_time

from console.api import context_cache
from models import AgentMemory, AuditLog, db, utcnow
from models.agents.agent import Agent
from models.changes.agent_settings import update_agent_settings
from models.changes.mutations import (
    consolidate_memories,
    create_memory,
    restore_memory,
    set_constitutional,
    soft_delete_memories,
    update_memory,
)
from models.changes.patches import propose
from models.changes.timemachine import rollback_operation
from models.retrieval import context
from models.retrieval import context_layout as layout
from tests.api_support import bearer

ADMIN = "admin:test"


@pytest.fixture
def agent(make_agent):
    return make_agent(role="supervisor")


@pytest.fixture
def headers(agent):
    return bearer(agent)


def get(client, headers, **params):
    response = client.get("/api/v1/context", query_string=params, headers=headers)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response


def block_ids(client, headers, **params) -> list[int]:
    body = get(client, headers, **params).get_json()
    return [m["id"] for m in body["core"] + body["journal"]]


def etag(client, headers, **params) -> str:
    return get(client, headers, **params).headers["ETag"]


def expected_ids(agent_id: int) -> list[int]:
    """The database's own answer: active core memories, then active journals of the last 7 days."""
    m = AgentMemory
    active = sa.select(m.id).where(m.agent_id == agent_id, m.deleted_at.is_(None))
    core = active.where(m.memory_type == "core").order_by(m.created_at, m.id)
    since = utcnow() - timedelta(days=7)
    journal = active.where(m.memory_type == "journal", m.created_at >= since).order_by(m.created_at, m.id)
    return list(db.session.scalars(core)) + list(db.session.scalars(journal))


def test_the_block_holds_exactly_the_active_core_memories_and_the_weeks_journals_oldest_first(
    client, agent, headers, make_memory
):
    now = utcnow()
    old = make_memory(agent, "The user is called Ada.", created_at=now - timedelta(days=400))
    newer = make_memory(agent, "The user prefers short answers.", tags=["style"])
    tied_a = make_memory(agent, "Tie one.", created_at=now - timedelta(days=3))
    tied_b = make_memory(agent, "Tie two.", created_at=tied_a.created_at)
    gone = make_memory(agent, "Deleted core memory.")
    soft_delete_memories(agent.id, [gone.id], actor=ADMIN)
    recent = make_memory(agent, "Journal: we refined today.", memory_type="journal")
    make_memory(agent, "Journal of last month.", memory_type="journal", created_at=now - timedelta(days=30))
    make_memory(agent, "A semantic fact, not in the prompt.", memory_type="semantic", category="goals")
    make_memory(agent, "An episode.", memory_type="episodic", category="event")
    # A held (unconfirmed) consent patch is not a memory until the user consents.
    propose(agent.id, "create", "city", {"content": "The user lives in Oslo.", "category": "profile"})
    db.session.commit()

    body = get(client, headers).get_json()
    ids = [m["id"] for m in body["core"] + body["journal"]]
    assert ids == [old.id, tied_a.id, tied_b.id, newer.id, recent.id]
    assert ids == expected_ids(agent.id)
    first = body["core"][0]
    assert first["content"] == "The user is called Ada."
    assert first["origin_date"].startswith((now - timedelta(days=400)).date().isoformat())
    assert first["tokens"] == 6 and first["constitutional"] is False
    assert body["core"][3]["tags"] == ["style"]
    assert body["journal"][0]["memory_type"] == "journal"
    assert body["journal_days"] == 7


def test_usage_reports_core_tokens_budget_over_budget_and_last_refinement(
    client, agent, headers, make_memory
):
    make_memory(agent, "x" * 400)  # 100 tokens
    finished = utcnow().replace(microsecond=0) - timedelta(days=2)
    db.session.get(Agent, agent.id).last_refinement_at = finished
    update_agent_settings(agent.id, actor=ADMIN, core_token_budget=100)
    db.session.commit()
    usage = get(client, headers).get_json()["usage"]
    assert usage == {
        "core_tokens": 100,
        "core_count": 1,
        "budget_tokens": 100,
        "over_budget": False,
        "last_refinement_at": finished.isoformat() + "Z",
    }
    make_memory(agent, "One more.")
    db.session.commit()
    assert get(client, headers).get_json()["usage"]["over_budget"] is True


def test_another_agents_token_never_sees_the_block(client, agent, headers, make_agent, make_memory):
    mine = make_memory(agent, "Mine alone.")
    other = make_agent(role="supervisor")
    make_memory(other, "The other agent's.")
    db.session.commit()
    assert mine.id not in block_ids(client, bearer(other))
    assert block_ids(client, headers) == [mine.id]
    assert client.get("/api/v1/context").status_code == 401


def test_the_etag_changes_after_every_kind_of_change_to_the_block_and_not_otherwise(
    client, agent, headers, make_memory
):
    first = make_memory(agent, "First core memory.")
    second = make_memory(agent, "Second core memory.")
    db.session.commit()
    seen = [etag(client, headers)]

    def changed(step: str) -> None:
        db.session.commit()
        now = etag(client, headers)
        assert now != seen[-1], f"the ETag did not change after {step}"
        seen.append(now)

    def unchanged(step: str) -> None:
        db.session.commit()
        assert etag(client, headers) == seen[-1], f"the ETag changed after {step}"

    unchanged("nothing")
    make_memory(agent, "A semantic fact.", memory_type="semantic", category="goals")
    unchanged("a semantic memory's creation")
    propose(agent.id, "create", "city", {"content": "The user lives in Oslo.", "category": "profile"})
    unchanged("a held consent patch")
    third = make_memory(agent, "Third core memory.")
    changed("create")
    update_memory(agent.id, third.id, actor=ADMIN, content="Third core memory, revised.")
    changed("update")
    update_memory(agent.id, third.id, actor=ADMIN, importance=5)
    unchanged("a change of a field the block does not show (importance)")
    soft_delete_memories(agent.id, [third.id], actor=ADMIN)
    changed("delete")
    assert seen[-1] == seen[0], "the block is as it was before the create: so is its ETag"
    restore_memory(agent.id, third.id, actor=ADMIN)
    changed("restore")
    merged = consolidate_memories(agent.id, [first.id, second.id], "First and second, merged.", actor=ADMIN)
    changed("consolidate")
    set_constitutional(agent.id, merged.id, True, actor=ADMIN)
    changed("protect")
    op_id = db.session.scalar(
        sa.select(AuditLog.op_id)
        .where(AuditLog.memory_id == merged.id, AuditLog.action == "protect")
        .order_by(AuditLog.id.desc())
    )
    rollback_operation(op_id, actor=ADMIN)
    db.session.commit()
    rolled_back = etag(client, headers)
    assert rolled_back != seen[-1], "the ETag did not change after a Time Machine rollback"
    assert rolled_back == seen[-2], "the block is as it was before the protect: so is its ETag"
    seen.append(rolled_back)
    update_agent_settings(agent.id, actor=ADMIN, core_token_budget=777)
    changed("a budget change")


def test_a_journal_leaving_the_window_changes_the_block_and_its_etag(client, agent, headers, make_memory):
    journal = make_memory(agent, "Journal: a session ran.", memory_type="journal")
    core = make_memory(agent, "A core memory.")
    db.session.commit()
    created = journal.created_at
    with freeze_time(created + timedelta(days=6, hours=23)):
        inside = get(client, headers)
    with freeze_time(created + timedelta(days=6, hours=23, minutes=30)):
        assert get(client, headers).headers["ETag"] == inside.headers["ETag"]
    with freeze_time(created + timedelta(days=7, minutes=1)):
        outside = get(client, headers)
    assert [m["id"] for m in inside.get_json()["journal"]] == [journal.id]
    assert outside.get_json()["journal"] == [] and [m["id"] for m in outside.get_json()["core"]] == [core.id]
    assert outside.headers["ETag"] != inside.headers["ETag"]


def test_the_journal_window_is_a_setting(app, client, agent, headers, make_memory):
    journal = make_memory(
        agent, "Journal of four days ago.", memory_type="journal", created_at=utcnow() - timedelta(days=4)
    )
    db.session.commit()
    assert block_ids(client, headers) == [journal.id]
    app.config["CONTEXT_JOURNAL_DAYS"] = 3
    assert block_ids(client, headers) == []
    assert get(client, headers).get_json()["journal_days"] == 3


def test_if_none_match_with_the_current_etag_is_a_304_without_a_body(client, agent, headers, make_memory):
    make_memory(agent, "Core memory.")
    db.session.commit()
    for fmt in ("json", "text"):
        tag = etag(client, headers, format=fmt)
        response = client.get(
            "/api/v1/context", query_string={"format": fmt}, headers={**headers, "If-None-Match": tag}
        )
        assert response.status_code == 304
        assert response.get_data() == b""
        assert response.headers["ETag"] == tag
    stale = client.get("/api/v1/context", headers={**headers, "If-None-Match": '"not-current"'})
    assert stale.status_code == 200 and stale.get_json()["core"]
    json_tag, text_tag = etag(client, headers), etag(client, headers, format="text")
    assert json_tag != text_tag, "two representations, two ETags"


def test_the_text_form_is_byte_identical_across_calls_and_documented_in_layout(
    client, agent, headers, make_memory
):
    now = utcnow()
    make_memory(agent, "The user is called Ada.\nShe writes Python.", created_at=now - timedelta(days=1))
    make_memory(agent, "Never delete this.", constitutional=True, tags=["identity"], created_at=now)
    make_memory(agent, "Journal: refined.", memory_type="journal")
    db.session.commit()
    first = get(client, headers, format="text")
    assert first.mimetype == "text/plain"
    text = first.get_data(as_text=True)
    assert text == get(client, headers, format="text").get_data(as_text=True)
    lines = text.splitlines()
    assert lines[0] == "## Core memories"
    assert lines[1].endswith("tokens] The user is called Ada.") and lines[1].startswith("[#")
    assert lines[2] == "  She writes Python."
    assert "· constitutional · tags: identity] Never delete this." in lines[3]
    assert lines[4] == "## Journal, last 7 days"
    assert lines[6] == "## Budget"
    assert lines[7].startswith("16 of 5,000 core tokens (2 core memories), within budget; never refined")


def test_a_new_core_memory_leaves_the_text_before_it_unchanged(client, agent, headers, make_memory):
    make_memory(agent, "Oldest memory.", created_at=utcnow() - timedelta(days=2))
    db.session.commit()
    before = get(client, headers, format="text").get_data(as_text=True)
    make_memory(agent, "A new one.")
    db.session.commit()
    after = get(client, headers, format="text").get_data(as_text=True)
    memories = before.split("## Budget")[0]
    assert after.startswith(memories), "the unchanged memories stay a byte-identical prefix"


def test_paging_returns_every_memory_exactly_once_in_order(client, agent, headers, make_memory):
    now = utcnow()
    for i in range(9):
        make_memory(
            agent, f"Core memory number {i} " + "x" * (i * 8), created_at=now - timedelta(hours=20 - i)
        )
    for i in range(3):
        make_memory(agent, f"Journal {i}.", memory_type="journal", created_at=now - timedelta(hours=5 - i))
    db.session.commit()
    whole = block_ids(client, headers)
    whole_text = get(client, headers, format="text").get_data(as_text=True)
    paged: list[int] = []
    texts: list[str] = []
    cursor = None
    for _ in range(20):
        params = {"max_tokens": 20, **({"cursor": cursor} if cursor else {})}
        body = get(client, headers, **params).get_json()
        page = body["core"] + body["journal"]
        assert page, "every page holds at least one memory"
        assert body["page"]["tokens"] <= 20 or len(page) == 1
        assert body["page"]["total_memories"] == len(whole)
        paged += [m["id"] for m in page]
        texts.append(get(client, headers, format="text", **params).get_data(as_text=True))
        cursor = body["page"]["next_cursor"]
        if cursor is None:
            break
    assert paged == whole and len(set(paged)) == len(paged)
    assert "".join(texts) == whole_text, "the pages' texts, concatenated, are the unpaged text"


def test_a_memory_deleted_between_pages_moves_no_other(client, agent, headers, make_memory):
    now = utcnow()
    rows = [make_memory(agent, f"Memory {i}.", created_at=now - timedelta(hours=10 - i)) for i in range(4)]
    db.session.commit()
    first = get(client, headers, max_tokens=4).get_json()
    assert [m["id"] for m in first["core"]] == [rows[0].id]
    soft_delete_memories(agent.id, [rows[0].id], actor=ADMIN)
    db.session.commit()
    rest = get(client, headers, cursor=first["page"]["next_cursor"]).get_json()
    assert [m["id"] for m in rest["core"]] == [r.id for r in rows[1:]]


def test_the_delta_header_since_a_revision_ends_the_block(client, agent, headers, make_memory):
    make_memory(agent, "Core memory.")
    make_memory(agent, "The user likes tea.", memory_type="semantic", category="preferences", thread_id="t1")
    db.session.commit()
    body = get(client, headers, thread_id="t1", since_rev=0).get_json()
    assert body["rev"] == 1
    assert body["delta"]["bullets"] == ["- +created: [preferences] The user likes tea."]
    text = get(client, headers, format="text", thread_id="t1", since_rev=0).get_data(as_text=True)
    assert "## Memory updates since rev 0\n- +created: [preferences] The user likes tea.\n## Budget\n" in text
    assert text.rstrip().endswith("; thread rev 1")
    current = get(client, headers, thread_id="t1", since_rev=1).get_json()
    assert current["delta"] is None and current["rev"] == 1
    assert get(client, headers, thread_id="t1").get_json()["rev"] == 1


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"max_tokens": "0"}, "max_tokens"),
        ({"max_tokens": "many"}, "max_tokens"),
        ({"cursor": "bm90LWEtY3Vyc29y"}, "cursor"),
        ({"cursor": "!!"}, "cursor"),
        ({"format": "xml"}, "format"),
        ({"since_rev": "3"}, "since_rev"),
        ({"since_rev": "-1", "thread_id": "t1"}, "since_rev"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_bad_parameters_are_a_422_naming_the_parameter(client, headers, params, field):
    response = client.get("/api/v1/context", query_string=params, headers=headers)
    assert response.status_code == 422, response.get_data(as_text=True)
    assert response.get_json()["field"].endswith(field)


def test_get_agent_reports_last_refinement_at(client, agent, headers):
    assert client.get("/api/v1/agent", headers=headers).get_json()["last_refinement_at"] is None
    finished = utcnow().replace(microsecond=0)
    db.session.get(Agent, agent.id).last_refinement_at = finished
    db.session.commit()
    body = client.get("/api/v1/agent", headers=headers).get_json()
    assert body["last_refinement_at"] == finished.isoformat() + "Z"


def test_agent_list_shows_last_refinement_at_in_the_table_and_in_json(app, runner, agent, monkeypatch):
    finished = utcnow().replace(microsecond=0) - timedelta(days=1)
    db.session.get(Agent, agent.id).last_refinement_at = finished
    db.session.commit()
    result = runner.invoke(args=["agent", "list", "--json"])
    assert result.exit_code == 0, result.output
    row = json.loads(result.output)["agents"][0]
    assert row["name"] == agent.name and row["last_refinement_at"] == str(finished)

    import console.cli.common as common

    monkeypatch.setattr(common, "json_output", lambda: False)  # a terminal's table
    result = runner.invoke(args=["agent", "list"])
    assert "last refinement at" in result.output.splitlines()[1]
    assert finished.strftime("%Y-%m-%d %H:%M:%S UTC") in result.output


def test_the_json_answer_is_what_the_openapi_model_describes(client, agent, headers, make_memory):
    from console.api.schemas import ContextOut

    make_memory(agent, "Tagged.", tags=["a", "b"], category="preferences")
    make_memory(agent, "Journal.", memory_type="journal")
    make_memory(agent, "Thread fact.", memory_type="semantic", category="preferences", thread_id="t1")
    db.session.commit()
    body = get(client, headers, thread_id="t1", since_rev=0, max_tokens=1000).get_json()
    parsed = ContextOut.model_validate(body)
    assert parsed.core[0].tags == ["a", "b"] and parsed.core[0].category == "preferences"
    assert parsed.delta is not None and parsed.page.max_tokens == 1000
    assert ContextOut.model_validate(parsed.model_dump(mode="json")).model_dump(mode="json") == body


def test_a_page_answers_304_to_its_own_etag(client, agent, headers, make_memory):
    now = utcnow()
    for i in range(4):
        make_memory(agent, f"Memory {i}.", created_at=now - timedelta(hours=10 - i))
    db.session.commit()
    first = get(client, headers, max_tokens=4)
    cursor = first.get_json()["page"]["next_cursor"]
    second = get(client, headers, max_tokens=4, cursor=cursor)
    for params, response in (({"max_tokens": 4}, first), ({"max_tokens": 4, "cursor": cursor}, second)):
        again = client.get(
            "/api/v1/context",
            query_string=params,
            headers={**headers, "If-None-Match": response.headers["ETag"]},
        )
        assert again.status_code == 304
    assert first.headers["ETag"] != second.headers["ETag"]


def test_a_kept_rendering_is_byte_identical_to_a_fresh_one_and_never_outlives_a_change(
    app, client, agent, headers, make_memory
):
    memory = make_memory(agent, "The user is called Ada.")
    db.session.commit()
    for fmt in ("text", "json"):
        first = get(client, headers, format=fmt).get_data()
        kept = get(client, headers, format=fmt).get_data()  # PostgreSQL: from the process's copy
        app.config["CONTEXT_CACHE_MB"] = 0
        fresh = get(client, headers, format=fmt).get_data()
        app.config["CONTEXT_CACHE_MB"] = 64
        assert first == kept == fresh
    get(client, headers, format="text")
    update_memory(agent.id, memory.id, actor=ADMIN, content="The user is called Ada Lovelace.")
    db.session.commit()
    assert "Ada Lovelace." in get(client, headers, format="text").get_data(as_text=True)


def test_the_whole_block_as_json_equals_the_same_block_read_as_one_page(client, agent, headers, make_memory):
    """Unpaged, PostgreSQL writes the memories' JSON itself; a page is written here: the same block."""
    make_memory(agent, "Tagged.\nTwo lines.", tags=["a", "b"], category="preferences", constitutional=True)
    make_memory(agent, "Plain.", created_at=utcnow().replace(microsecond=0) - timedelta(days=3))
    make_memory(agent, "Journal ünïcode.", memory_type="journal")
    db.session.commit()
    whole = get(client, headers).get_json()
    one_page = get(client, headers, max_tokens=10**6).get_json()
    for key in ("core", "journal", "usage", "agent", "journal_days", "rev", "delta"):
        assert whole[key] == one_page[key], key
    assert whole["page"] | {"max_tokens": 10**6} == one_page["page"]


CHANGES = {
    "content": lambda agent, m: update_memory(agent.id, m.id, actor=ADMIN, content="Revised, with ünïcode."),
    "tags": lambda agent, m: update_memory(agent.id, m.id, actor=ADMIN, tags=["new", "tags"]),
    "lock": lambda agent, m: set_constitutional(agent.id, m.id, True, actor=ADMIN),
    "delete": lambda agent, m: soft_delete_memories(agent.id, [m.id], actor=ADMIN),
    "create": lambda agent, m: create_memory(agent.id, "A new core memory.", actor=ADMIN),
    "journal": lambda agent, m: create_memory(agent.id, "Journal.", actor=ADMIN, memory_type="journal"),
}


@pytest.mark.parametrize("fmt", ["json", "text"])
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_block_rendered_from_kept_fragments_after_a_change_is_the_block_read_whole(
    client, agent, headers, make_memory, fmt, change
):
    """After a change, the process reads and writes only the memories whose signatures it has not kept,
    and joins the others' fragments: byte for byte, and ETag for ETag, what a process keeping nothing
    answers."""
    memories = [make_memory(agent, f"Core memory {i}.\nSecond line.", tags=["t"] * (i % 2)) for i in range(5)]
    make_memory(agent, "An older journal.", memory_type="journal")
    db.session.commit()
    get(client, headers, format=fmt)  # kept: the body and each memory's fragment
    CHANGES[change](agent, memories[2])
    db.session.commit()
    assembled = get(client, headers, format=fmt)
    context_cache.clear()
    whole = get(client, headers, format=fmt)
    assert assembled.get_data() == whole.get_data()
    assert assembled.headers["ETag"] == whole.headers["ETag"]


def test_postgresql_reads_the_text_of_the_changed_memories_only_and_never_one_changed_since_its_outline(
    agent, make_memory
):
    if db.engine.dialect.name != "postgresql":
        pytest.skip("SQLite signs in process: it reads every row's text to sign it")
    kept = make_memory(agent, "Kept as it was.", tags=["a"], category="preferences")
    changed = make_memory(agent, "About to change.")
    db.session.commit()
    where = ([None, "preferences"],)
    window = {"now": utcnow(), "journal_window": timedelta(days=7), "text": False}
    first = context.entries(agent.id, *where, **window)
    known = {e.sig: layout.fragment(e, text=False) for e in first}
    update_memory(agent.id, changed.id, actor=ADMIN, content="Changed.")
    db.session.commit()

    outline = context.outline(agent.id, *where, **window)
    assert outline.ids == [kept.id, changed.id] and outline.counts == (2, 0, 0)
    assert outline.digest.digest == context.page_digest(context.entries(agent.id, *where, **window))
    read = context.fill(outline, known, agent.id, *where, **window)
    assert [(e.id, e.content) for e in read] == [(changed.id, "Changed.")]  # the kept one's text: not read
    frags = layout.fragments(outline.sigs, known, read, text=False)
    assert frags[outline.sigs[0]] == known[first[0].sig]

    outline = context.outline(agent.id, *where, **window)
    update_memory(agent.id, changed.id, actor=ADMIN, content="Changed again, after the outline.")
    db.session.commit()
    assert context.fill(outline, known, agent.id, *where, **window) is None  # read the block whole instead
