"""Ledger paging (docs/explanation/refinement.md, "Large ledgers"): a core ledger over
REFINEMENT_LEDGER_MAX_TOKENS is shown in pages, likely duplicates first; the model turns pages with
`next_page`; every prompt stays within the limit; the hard cap and the circuit breaker count for the whole
session."""

from __future__ import annotations

import json
import random
import re
from datetime import timedelta
from types import SimpleNamespace

import pytest
import sqlalchemy as sa

from jobs.ledger import MIN_MAX_TOKENS, line_tokens, plan_pages
from jobs.prompts import ledger_line
from jobs.refinement import run_refinement
from models import AgentMemory, RefinementSession, db, utcnow
from models.changes.mutations import create_memory
from models.db import estimate_tokens
from models.refinement.toolbox import HARD_CAP, TERMINATED_MESSAGE
from tests import scripted_llm as s

LIMIT = MIN_MAX_TOKENS  # the smallest limit the product allows: a small ledger already needs two pages
PAGE_HEADER = re.compile(r"## Your core memory ledger: page (\d+) of (\d+)")


@pytest.fixture
def agent(make_agent, llm, monkeypatch, redis_conn, app):
    monkeypatch.setitem(app.config, "OPENAI_API_KEY", "test-key")
    monkeypatch.setitem(app.config, "EMBEDDINGS", "hashed")
    app.config["REFINEMENT_LEDGER_MAX_TOKENS"] = LIMIT
    return make_agent(model_id="scripted-model", base_url=llm.url, core_token_budget=100)


WORDS = (
    "harbour orchard violin glacier lantern meadow compass quarry ferry attic basil cedar delta ember falcon "
    "garnet hazel indigo juniper kettle lagoon mosaic nectar oyster pepper quartz raven saffron tundra umber "
    "velvet willow yarrow zephyr anchor bramble canyon dune estuary fjord grove heath inlet jetty knoll ledge"
).split()


def seed(agent, n: int) -> list[AgentMemory]:
    """n distinct memories of ~145 tokens a line (60 of them make ~8,700 ledger tokens: two pages)."""
    start = utcnow() - timedelta(days=400)
    rng = random.Random(7)
    return [
        create_memory(
            agent.id,
            f"Entry {i}: " + " ".join(rng.choice(WORDS) for _ in range(76)) + f", noted on day {i}.",
            actor="admin:seed",
            created_at=start + timedelta(days=i),
        )
        for i in range(n)
    ]


def page_of(request: dict) -> tuple[int, int] | None:
    found = PAGE_HEADER.search(request["messages"][0]["content"])
    return (int(found.group(1)), int(found.group(2))) if found else None


def pager(request: dict) -> s.Reply:
    """A model that reads every page once: next_page until the last, then complete_refinement."""
    page, pages = page_of(request)
    step = s.complete("Read every page") if page == pages else s.tools(("next_page", {}))
    return step(request)


def ledger_ids(request: dict) -> list[int]:
    return [int(m) for m in re.findall(r"^- #(\d+) ", request["messages"][0]["content"], flags=re.MULTILINE)]


def opening_tokens(request: dict) -> int:
    """A page's opening prompt by the product's estimate: the system message, the kickoff, the tools."""
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    return sum(estimate_tokens(m["content"]) for m in request["messages"]) + estimate_tokens(
        json.dumps(request["tools"])
    )


def test_a_ledger_over_the_limit_is_paged_duplicates_first_and_every_prompt_stays_within_it(agent, llm):
    memories = seed(agent, 60)
    # A near-exact duplicate of the oldest memory, written last: unpaged, they would sit 60 lines apart.
    twin = create_memory(agent.id, memories[0].content.upper().replace(".", "!"), actor="admin:seed")
    total = sum(line_tokens(ledger_line(m)) for m in [*memories, twin])
    assert total > LIMIT
    llm.script = [s.consent()]
    llm.fallback = pager

    result = run_refinement(agent.id, "test", force=True)

    assert result["status"] == "completed" and result["ops"] == 0
    requests = llm.tool_requests
    pages = [page_of(r) for r in requests]
    assert pages == [(1, 2), (2, 2)]
    assert all(opening_tokens(r) <= LIMIT for r in requests)  # every page's prompt stays within the limit
    shown = [ledger_ids(r) for r in requests]
    assert sorted(shown[0] + shown[1]) == sorted(m.id for m in [*memories, twin])  # each memory on one page
    assert shown[0][:2] == [memories[0].id, twin.id]  # the duplicate group first, its lines adjacent
    assert "next_page" in {t["function"]["name"] for t in requests[0]["tools"]}
    # A new page is a new conversation: page 1's lines and tool results are gone from page 2's prompt.
    page_two = json.dumps(requests[1]["messages"])
    assert memories[0].content not in page_two and '"role": "tool"' not in page_two
    assert "Operations applied so far in this session: 0 of 10" in requests[1]["messages"][1]["content"]
    # The token status covers the whole core on every page.
    assert f"in {len(memories) + 1} memories" in requests[1]["messages"][0]["content"]
    assert result["stats"]["ledger_pages"] == 2 and result["stats"]["ledger_pages_turned"] == 1


def test_next_page_is_refused_on_the_last_page_and_not_offered_to_an_unpaged_session(agent, llm, app):
    seed(agent, 60)
    llm.script = [s.consent(), s.tools(("next_page", {})), s.tools(("next_page", {})), s.complete("done")]

    result = run_refinement(agent.id, "test", force=True)

    answers = [json.loads(m["content"]) for m in llm.tool_requests[-1]["messages"] if m["role"] == "tool"]
    assert answers == [
        {
            "ok": False,
            "error": "no_next_page",
            "message": "this is the last page (2 of 2); call complete_refinement when you are done",
        }
    ]
    assert result["status"] == "completed" and result["stats"]["ledger_pages_turned"] == 1

    app.config["REFINEMENT_LEDGER_MAX_TOKENS"] = 1_000_000
    llm.requests.clear()
    llm.script = [s.consent(), s.tools(("next_page", {})), s.complete("done")]
    result = run_refinement(agent.id, "test", force=True)
    assert "next_page" not in {t["function"]["name"] for t in llm.tool_requests[0]["tools"]}
    assert (
        page_of(llm.tool_requests[0]) is None
        and "## Your core memory ledger\n" in (llm.tool_requests[0]["messages"][0]["content"])
    )
    answer = json.loads(llm.tool_requests[-1]["messages"][-1]["content"])
    assert answer["error"] == "no_next_page" and "ledger_pages" not in result["stats"]


def test_the_hard_cap_counts_across_pages(agent, llm, app):
    agent.min_retention = 0.5
    db.session.commit()
    memories = seed(agent, 60)
    llm.script = [
        s.consent(),
        s.tools(*[("delete_memory", {"id": m.id}) for m in memories[:6]], ("next_page", {})),
    ]

    def page_two(request):
        ids = ledger_ids(request)[:6]
        return s.tools(*[("delete_memory", {"id": i}) for i in ids])(request)

    llm.script.append(page_two)
    llm.script.append(s.complete("done"))

    result = run_refinement(agent.id, "test", force=True)

    answers = [json.loads(m["content"]) for m in llm.tool_requests[-1]["messages"] if m["role"] == "tool"]
    assert [a["ok"] for a in answers] == [True] * (HARD_CAP - 6) + [False] * 2
    assert {a["error"] for a in answers if not a["ok"]} == {"hard_cap"}
    assert result["ops"] == HARD_CAP and result["status"] == "completed"


def test_the_breaker_rolls_back_every_page_of_the_session(agent, llm):
    memories = seed(agent, 60)
    before = {m.id: m.content for m in memories}

    def merge_eight(request):
        ids = ledger_ids(request)[:8]
        return s.tools(
            ("consolidate_memories", {"ids": ids, "new_content": "Merged entries."}), ("next_page", {})
        )(request)

    llm.script = [s.consent(), merge_eight, merge_eight, s.complete("done")]

    result = run_refinement(agent.id, "test", force=True)

    assert result["status"] == "terminated"  # 14 of 60 merged away over two pages: below 80%
    assert [page_of(r) for r in llm.tool_requests] == [(1, 2), (2, 2)]  # it tripped on page 2: no more turns
    assert result["terminated_message"] == TERMINATED_MESSAGE
    db.session.expire_all()
    rows = db.session.scalars(
        sa.select(AgentMemory).where(AgentMemory.agent_id == agent.id, AgentMemory.memory_type == "core")
    ).all()
    assert {r.id: r.content for r in rows if r.deleted_at is None} == before  # page 1's merge undone too
    assert db.session.get(RefinementSession, result["session_id"]).stats["breaker_trips"] == 1


def test_plan_pages_keeps_groups_whole_and_strongest_first():
    def memory(i, text):
        return SimpleNamespace(id=i, content=text)

    memories = [
        memory(i, f"Distinct line {i} about subject {i * 11}" + " filler" * 150) for i in range(1, 41)
    ]
    memories.append(memory(41, memories[5].content + "!"))  # same words as #6: a text-key group
    lines = [f"- #{m.id}: {m.content}" for m in memories]
    vectors = {m.id: _unit(m.id) for m in memories}
    vectors[12] = vectors[30] = _unit(999)  # an embedding neighbourhood (cosine 1.0)

    pages = plan_pages(memories, lines, LIMIT, vectors)

    assert all(p.tokens <= LIMIT for p in pages) and len(pages) > 1
    flat = [i for p in pages for i in p.ids]
    assert sorted(flat) == list(range(1, 42))
    assert set(flat[:4]) == {6, 41, 12, 30} and pages[0].groups == 2
    assert flat[4:] == [i for i in range(1, 41) if i not in (6, 12, 30)]  # the rest oldest first


def _unit(seed: int):
    import numpy as np

    vector = np.random.default_rng(seed).standard_normal(64).astype(np.float32)
    return vector / np.linalg.norm(vector)
