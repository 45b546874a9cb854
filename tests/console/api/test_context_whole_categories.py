"""Context modes (docs/spec/003-memory-system.md §5): a category configured `context: all` is delivered whole
in the agent's context block (GET /api/v1/context) — every active memory of it, whatever its type, in the
block's own `always` section, counted in the ETag — while a `rag` category is retrieved by memory.query, at
most `rag_length` results of it in one answer. An agent reading no such category gets the block it always
had (tests/console/api/test_context_block.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from models.changes.mutations import create_memory, soft_delete_memories
from models.db import utcnow
from tests.api_support import bearer

CONFIG = """
categories:
  system:
    - name: profile
      context: all
  custom:
    - name: house_rules
      context: all
    - name: notes
      context: rag
      rag_length: 2
allowlists:
  tester: [profile, house_rules, notes]
  outsider: [notes]
"""


@pytest.fixture
def configured(app, tmp_path):
    path = tmp_path / "categories.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    app.config["CATEGORY_CONFIG"] = str(path)
    return app


def _write(agent_id: int, text: str, **fields) -> int:
    return create_memory(agent_id, text, actor="agent", **fields).id


def _context(client, headers, **params):
    response = client.get("/api/v1/context", query_string=params, headers=headers)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response


def test_every_active_memory_of_a_context_all_category_is_in_the_block_in_its_own_section(
    configured, client, make_agent
):
    agent = make_agent(role="tester")
    headers = bearer(agent)
    now = utcnow()
    core = _write(agent.id, "I am a careful assistant.", memory_type="core")
    older_rule = _write(
        agent.id, "Never book flights before 9 am.", memory_type="semantic", category="house_rules",
        created_at=now - timedelta(days=90),
    )  # fmt: skip
    episode = _write(agent.id, "Ada moved to Oslo in May.", memory_type="episodic", category="profile")
    newer_rule = _write(
        agent.id, "Always confirm the budget.", memory_type="procedural", category="house_rules"
    )
    gone = _write(agent.id, "A retired rule.", memory_type="semantic", category="house_rules")
    soft_delete_memories(agent.id, [gone], actor="agent")
    _write(agent.id, "A note retrieved on demand.", memory_type="semantic", category="notes")
    journal = _write(agent.id, "Journal: refined.", memory_type="journal")

    body = _context(client, headers).get_json()
    assert [m["id"] for m in body["core"]] == [core]
    assert [m["id"] for m in body["always"]] == [older_rule, episode, newer_rule]  # oldest origin first
    assert [m["memory_type"] for m in body["always"]] == ["semantic", "episodic", "procedural"]
    assert [m["id"] for m in body["journal"]] == [journal]
    assert body["page"]["total_memories"] == 5

    text = _context(client, headers, format="text").get_data(as_text=True)
    assert text.index("## Core memories\n") < text.index("## Always in context\n") < text.index("## Journal")
    always = text.split("## Always in context\n")[1].split("## Journal")[0].splitlines()
    assert [line.split(" ")[0] for line in always] == [f"[#{older_rule}", f"[#{episode}", f"[#{newer_rule}"]
    assert "house_rules" in always[0] and always[0].endswith("Never book flights before 9 am.")
    assert "retrieved on demand" not in text and "retired rule" not in text


def test_a_write_to_a_context_all_category_changes_the_etag_and_a_rag_category_write_does_not(
    configured, client, make_agent
):
    agent = make_agent(role="tester")
    headers = bearer(agent)
    _write(agent.id, "I am a careful assistant.", memory_type="core")
    for fmt in ("json", "text"):
        before = _context(client, headers, format=fmt).headers["ETag"]
        _write(agent.id, f"A note in {fmt}.", memory_type="semantic", category="notes")
        unchanged = _context(client, headers, format=fmt)
        assert unchanged.headers["ETag"] == before
        again = client.get(
            "/api/v1/context", query_string={"format": fmt}, headers={**headers, "If-None-Match": before}
        )
        assert again.status_code == 304
        _write(agent.id, f"A house rule in {fmt}.", memory_type="semantic", category="house_rules")
        assert _context(client, headers, format=fmt).headers["ETag"] != before


def test_an_agent_whose_role_does_not_read_a_context_all_category_never_gets_it(
    configured, client, make_agent
):
    reader, outsider = make_agent(role="tester"), make_agent(role="outsider")
    _write(reader.id, "Never book flights before 9 am.", memory_type="semantic", category="house_rules")
    _write(outsider.id, "A note.", memory_type="semantic", category="notes")
    body = _context(client, bearer(outsider)).get_json()
    assert body["always"] == [] and body["core"] == [] and body["journal"] == []
    text = _context(client, bearer(outsider), format="text").get_data(as_text=True)
    assert "## Always in context" not in text


def test_paging_puts_every_memory_of_the_block_on_exactly_one_page_across_the_always_section(
    configured, client, make_agent
):
    agent = make_agent(role="tester")
    headers = bearer(agent)
    ids = [_write(agent.id, f"Core memory {n}.", memory_type="core") for n in range(2)]
    ids += [
        _write(agent.id, f"House rule {n}.", memory_type="semantic", category="house_rules") for n in range(3)
    ]
    ids += [_write(agent.id, "Journal: refined.", memory_type="journal")]
    for fmt in ("json", "text"):
        seen, cursor, texts = [], None, []
        while True:
            params = {"max_tokens": 4, "format": fmt, **({"cursor": cursor} if cursor else {})}
            response = _context(client, headers, **params)
            if fmt == "json":
                body = response.get_json()
                seen += [m["id"] for m in body["core"] + body["always"] + body["journal"]]
                cursor = body["page"]["next_cursor"]
            else:
                texts.append(response.get_data(as_text=True))
                cursor = _text_cursor(client, headers, params)
            if cursor is None:
                break
        if fmt == "json":
            assert seen == ids
        else:
            whole = _context(client, headers, format="text").get_data(as_text=True)
            assert "".join(texts) == whole


def _text_cursor(client, headers, params) -> str | None:
    """The text form's next cursor is the JSON page's: the same page of the same block."""
    body = _context(client, headers, **{**params, "format": "json"}).get_json()
    return body["page"]["next_cursor"]


def test_memory_query_returns_at_most_rag_length_results_of_a_rag_category(configured, client, make_agent):
    agent = make_agent(role="tester")
    headers = bearer(agent)
    for n in range(4):
        _write(agent.id, f"Kayak trip number {n} to the lake.", memory_type="semantic", category="notes")
    for n in range(3):
        _write(
            agent.id, f"Kayak rule number {n} for the lake.", memory_type="semantic", category="house_rules"
        )
    response = client.post("/api/v1/memory/query", json={"query": "kayak lake", "top_k": 6}, headers=headers)
    assert response.status_code == 200, response.get_data(as_text=True)
    categories = [r["category"] for r in response.get_json()["results"]]
    assert categories.count("notes") == 2  # rag_length 2, though four match
    assert categories.count("house_rules") == 3  # no cap: the rest of top_k
    narrow = client.post("/api/v1/memory/query", json={"query": "kayak lake", "top_k": 2}, headers=headers)
    assert len(narrow.get_json()["results"]) == 2  # a cap at or above top_k changes nothing
