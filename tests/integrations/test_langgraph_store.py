"""ConsoleStore against a running console: items are memories written through the audited mutation
path, with the locks, the allowlist and the history that implies."""

from __future__ import annotations

import pytest
from langgraph.store.base import InvalidNamespaceError
from sqlalchemy import func, select

from memconsole_client.errors import Conflict, ConstitutionalLocked, Forbidden
from memconsole_client.langgraph import ConsoleStore
from models import AgentMemory, AuditLog, StoreItem, db
from models.changes import mutations
from tests.integrations import aio


def _store(live_console, role="supervisor", **options) -> tuple[int, ConsoleStore]:
    agent_id, token = live_console.agent(role=role)
    return agent_id, ConsoleStore(base_url=live_console.base_url, token=token, **options)


def _memory(live_console, memory_id: int) -> AgentMemory:
    with live_console.app.app_context():
        memory = db.session.get(AgentMemory, memory_id)
        db.session.expunge(memory)
        return memory


def test_put_get_search_delete_and_list_namespaces_round_trip(live_console):
    agent_id, store = _store(live_console, category="preferences")
    with store:
        store.put(("users", "u1", "food"), "tea", {"content": "The user drinks green tea."})
        store.put(("users", "u1", "food"), "diet", {"kind": "diet", "vegetarian": True, "since": 2019})
        store.put(("users", "u2"), "music", {"content": "The user plays the cello."})

        tea = store.get(("users", "u1", "food"), "tea")
        assert tea.value == {"content": "The user drinks green tea."} and tea.namespace == (
            "users",
            "u1",
            "food",
        )
        assert store.get(("users", "u1", "food"), "diet").value == {
            "kind": "diet",
            "vegetarian": True,
            "since": 2019,
        }
        assert store.get(("users", "u1", "food"), "nothing") is None

        assert {i.key for i in store.search(("users", "u1"))} == {"tea", "diet"}
        assert [i.key for i in store.search(("users",), query="cello")] == ["music"]
        assert [i.key for i in store.search(("users",), filter={"vegetarian": True})] == ["diet"]
        assert [i.key for i in store.search(("users",), filter={"since": {"$gte": 2000}})] == ["diet"]
        hit = store.search(("users",), query="green tea")[0]
        assert hit.key == "tea" and hit.score == 1.0

        assert store.list_namespaces() == [("users", "u1", "food"), ("users", "u2")]
        assert store.list_namespaces(prefix=("users", "u1")) == [("users", "u1", "food")]
        assert store.list_namespaces(suffix=("u2",)) == [("users", "u2")]
        assert store.list_namespaces(max_depth=2) == [("users", "u1"), ("users", "u2")]

        with live_console.app.app_context():
            records = db.session.scalar(
                select(func.count()).select_from(AuditLog).where(AuditLog.agent_id == agent_id)
            )
        store.put(("users", "u2"), "music", {"content": "The user plays the cello."})  # the same value again
        with live_console.app.app_context():
            assert records == db.session.scalar(
                select(func.count()).select_from(AuditLog).where(AuditLog.agent_id == agent_id)
            )
        store.put(("users", "u1", "food"), "tea", {"content": "The user drinks jasmine tea."})
        assert store.get(("users", "u1", "food"), "tea").value == {"content": "The user drinks jasmine tea."}
        store.delete(("users", "u1", "food"), "tea")
        assert store.get(("users", "u1", "food"), "tea") is None
        assert {i.key for i in store.search(("users", "u1"))} == {"diet"}

    with live_console.app.app_context():
        memories = db.session.scalars(select(AgentMemory).where(AgentMemory.agent_id == agent_id)).all()
        assert {m.category for m in memories} == {"preferences"} and {m.memory_type for m in memories} == {
            "core"
        }
        tea_memory = next(m for m in memories if "tea" in m.content)
        assert tea_memory.deleted_at is not None
        actions = db.session.scalars(
            select(AuditLog.action).where(AuditLog.memory_id == tea_memory.id).order_by(AuditLog.id)
        ).all()
        assert actions == ["create", "update", "delete"]
        assert all(
            a == "agent"
            for a in db.session.scalars(select(AuditLog.actor).where(AuditLog.agent_id == agent_id))
        )


def test_every_item_keeps_its_memorys_history(live_console):
    _, store = _store(live_console)
    with store:
        store.put(("notes",), "n1", {"content": "The user likes hiking."})
        store.put(("notes",), "n1", {"content": "The user likes hiking in the Alps."})
        history = store.history(("notes",), "n1")
    assert [e.event for e in history.events] == ["UPDATE", "ADD"]
    assert history.events[0].old.content == "The user likes hiking."


def test_a_constitutional_memory_is_refused_and_its_batch_changes_nothing(live_console):
    agent_id, store = _store(live_console)
    with store:
        store.put(("rules",), "diet", {"content": "The user is a vegetarian."})
        memory_id = store.memory_id(("rules",), "diet")
        with live_console.app.app_context():
            mutations.set_constitutional(agent_id, memory_id, True, actor="admin:1")
        with pytest.raises(ConstitutionalLocked) as refused:
            store.put(("rules",), "diet", {"content": "The user eats fish."})
        assert refused.value.code == "constitutional" and f"#{memory_id}" in refused.value.message
        with pytest.raises(ConstitutionalLocked):
            store.delete(("rules",), "diet")
        # A batch that also writes another item is refused whole: nothing of it is applied.
        with pytest.raises(ConstitutionalLocked):
            store.batch(
                [
                    _put(("rules",), "other", {"content": "The user likes tea."}),
                    _put(("rules",), "diet", None),
                ]
            )
        assert store.get(("rules",), "other") is None
        assert store.get(("rules",), "diet").value == {"content": "The user is a vegetarian."}
    assert _memory(live_console, memory_id).deleted_at is None


def _put(namespace, key, value):
    from langgraph.store.base import PutOp

    return PutOp(namespace=namespace, key=key, value=value)


def test_the_allowlist_binds_store_writes_and_reads(live_console):
    _, store = _store(live_console, role="stylist", category="knowledge")
    with store:
        with pytest.raises(Forbidden) as refused:
            store.put(("docs",), "k", {"content": "The user reads poetry."})
        assert refused.value.code == "category_not_allowed"
        assert store.search(("docs",)) == []
    agent_id, allowed = _store(live_console, role="stylist")  # default category: its allowlist's first
    with allowed:
        allowed.put(("style",), "k", {"content": "The user writes tersely."})
        memory_id = allowed.memory_id(("style",), "k")
        assert _memory(live_console, memory_id).category == "preferences"
        # A memory moved out of the allowlist by an admin disappears from the agent's store.
        with live_console.app.app_context():
            mutations.update_memory(agent_id, memory_id, actor="admin:1", category="knowledge")
        assert allowed.get(("style",), "k") is None


def test_an_item_whose_memory_was_deleted_elsewhere_is_gone_and_can_be_written_again(live_console):
    agent_id, store = _store(live_console)
    with store:
        store.put(("a",), "k", {"content": "The user owns a bicycle."})
        first = store.memory_id(("a",), "k")
        with live_console.app.app_context():
            mutations.soft_delete_memories(agent_id, [first], actor="admin:1")
        assert store.get(("a",), "k") is None
        store.put(("a",), "k", {"content": "The user owns a scooter."})
        second = store.memory_id(("a",), "k")
    assert second != first
    with live_console.app.app_context():
        assert db.session.scalar(select(StoreItem.memory_id).where(StoreItem.agent_id == agent_id)) == second


def test_the_async_store_api_round_trips(live_console):
    _, store = _store(live_console)

    async def run():
        async with store:
            await store.aput(("async",), "k", {"content": "The user flies kites."})
            item = await store.aget(("async",), "k")
            found = await store.asearch(("async",), query="kites")
            await store.adelete(("async",), "k")
            return item, found, await store.aget(("async",), "k")

    item, found, after = aio.run(run())
    assert item.value == {"content": "The user flies kites."}
    assert [i.key for i in found] == ["k"] and after is None


def test_bad_namespaces_are_refused_before_anything_is_sent(live_console):
    _, store = _store(live_console)
    with store, pytest.raises(InvalidNamespaceError):
        store.batch([_put(("a.b",), "k", {"content": "x"})])


def test_an_audio_tagged_memory_is_refused_as_immutable(live_console):
    agent_id, store = _store(live_console)
    with store:
        store.put(("voice",), "clip", {"content": "The user hums while cooking."})
        memory_id = store.memory_id(("voice",), "clip")
        with live_console.app.app_context():
            mutations.update_memory(agent_id, memory_id, actor="admin:1", tags=["audio"])
        with pytest.raises(Conflict) as refused:
            store.put(("voice",), "clip", {"content": "The user sings while cooking."})
        assert refused.value.code == "immutable"
    assert _memory(live_console, memory_id).content == "The user hums while cooking."
