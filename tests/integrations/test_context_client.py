"""The context block through the client against a running console: Client.context() and
AsyncClient.context() keep the ETag and answer an unchanged block from what they hold (a 304), a
change brings the new block, pages come by cursor, and get_agent() carries last_refinement_at."""

from __future__ import annotations

from datetime import timedelta

from memconsole_client import AsyncClient, Client, models
from models import db, utcnow
from models.agents.agent import Agent
from models.changes import mutations
from tests.integrations import aio


def _remember(live_console, agent_id: int, content: str, **fields) -> int:
    with live_console.app.app_context():
        return mutations.create_memory(agent_id, content, actor="admin:test", **fields).id


def test_client_context_keeps_the_etag_and_answers_an_unchanged_block_from_its_copy(live_console):
    agent_id, token = live_console.agent(role="supervisor")
    first = _remember(live_console, agent_id, "The user is called Ada.")
    with Client(live_console.base_url, token) as client:
        block = client.context()
        assert isinstance(block, models.ContextBlock) and client.context_changed is True
        assert [m.id for m in block.core] == [first] and block.etag
        again = client.context()
        assert again is block and client.context_changed is False  # a 304, answered from the copy
        text = client.context(format="text")
        assert text.startswith("## Core memories\n") and "The user is called Ada." in text
        assert client.context(format="text") is text and client.context_changed is False

        second = _remember(live_console, agent_id, "The user prefers short answers.")
        changed = client.context()
        assert client.context_changed is True and changed.etag != block.etag
        assert [m.id for m in changed.core] == [first, second]
        assert changed.usage.core_count == 2 and changed.usage.over_budget is False


def test_client_context_pages_by_cursor(live_console):
    agent_id, token = live_console.agent(role="supervisor")
    ids = [_remember(live_console, agent_id, f"Core memory number {i}.") for i in range(5)]
    with Client(live_console.base_url, token) as client:
        seen, cursor = [], None
        while True:
            page = client.context(max_tokens=6, cursor=cursor)
            seen += [m.id for m in page.core]
            cursor = page.page.next_cursor
            if cursor is None:
                break
    assert seen == ids


def test_async_client_context_keeps_the_etag_too(live_console):
    agent_id, token = live_console.agent(role="supervisor")
    memory_id = _remember(live_console, agent_id, "The user lives by the sea.")

    async def scenario():
        async with AsyncClient(live_console.base_url, token) as client:
            block = await client.context(format="text")
            changed_first = client.context_changed
            again = await client.context(format="text")
            return block, changed_first, again, client.context_changed

    block, changed_first, again, changed_again = aio.run(scenario())
    assert f"#{memory_id}" in block and changed_first is True
    assert again == block and changed_again is False


def test_get_agent_carries_last_refinement_at(live_console):
    agent_id, token = live_console.agent(role="supervisor")
    finished = utcnow().replace(microsecond=0) - timedelta(hours=3)
    with live_console.app.app_context():
        db.session.get(Agent, agent_id).last_refinement_at = finished
        db.session.commit()
    with Client(live_console.base_url, token) as client:
        info = client.get_agent()
        block = client.context()
    assert info.last_refinement_at.replace(tzinfo=None) == finished
    assert block.usage.last_refinement_at.replace(tzinfo=None) == finished
