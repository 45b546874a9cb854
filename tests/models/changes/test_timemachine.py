"""Invariant 3, exact rollback: the Time Machine puts every affected row back exactly.

Rolling back an operation, a refinement session or an agent to a point in time restores every
column of every affected memory (content, flags, timestamps, deleted_at); the rollback is itself
audited under one new op_id and can itself be rolled back. Row state is always read back from
the database with a Core SELECT over every column of `agent_memories`, never from the ORM
identity map, so nothing cached in Python can make a comparison pass.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sqlalchemy.exc import DBAPIError

from models import (
    Agent,
    AgentMemory,
    AuditContent,
    AuditLog,
    ConstitutionalLocked,
    DomainError,
    NotFound,
    RefinementSession,
    RollbackConflict,
    ValidationFailed,
    db,
    estimate_tokens,
    utcnow,
)
from models.agents.agent import core_totals
from models.changes import agent_settings, dedup, ttl
from models.changes import mutations as mut
from models.changes import timemachine as tm

ADMIN = "admin:test"
AGENT = "agent"
MEMORY_COLUMNS = frozenset(c.name for c in AgentMemory.__table__.columns)


# ----- reading state straight from the database -----


def memory_rows(agent_id: int) -> dict[int, dict[str, Any]]:
    """Every column of every memory row of the agent, keyed by id (deleted rows included)."""
    table = AgentMemory.__table__
    rows = db.session.execute(sa.select(table).where(table.c.agent_id == agent_id).order_by(table.c.id))
    return {row["id"]: dict(row) for row in rows.mappings()}


def audit_rows(agent_id: int) -> list[dict[str, Any]]:
    table = AuditLog.__table__
    rows = db.session.execute(sa.select(table).where(table.c.agent_id == agent_id).order_by(table.c.id))
    return [dict(row) for row in rows.mappings()]


def audit_count(agent_id: int | None = None) -> int:
    stmt = sa.select(sa.func.count()).select_from(AuditLog)
    if agent_id is not None:
        stmt = stmt.where(AuditLog.agent_id == agent_id)
    return db.session.scalar(stmt)


def content_rows(memory_id: int) -> list[dict[str, Any]]:
    table = AuditContent.__table__
    rows = db.session.execute(sa.select(table).where(table.c.memory_id == memory_id).order_by(table.c.id))
    return [dict(row) for row in rows.mappings()]


def core_tokens(agent_id: int) -> int:
    """Active core tokens from the aggregate, after checking the trigger-maintained totals agree."""
    db.session.expire_all()
    tokens, count = db.session.execute(
        sa.select(sa.func.coalesce(sa.func.sum(AgentMemory.token_estimate), 0), sa.func.count()).where(
            AgentMemory.agent_id == agent_id,
            AgentMemory.memory_type == "core",
            AgentMemory.deleted_at.is_(None),
        )
    ).one()
    assert core_totals(agent_id) == (tokens, count), "the maintained core totals drifted from the aggregate"
    assert db.session.get(Agent, agent_id).core_token_usage == tokens
    return tokens


def op_records(op_id: str) -> list[AuditLog]:
    return list(db.session.scalars(sa.select(AuditLog).where(AuditLog.op_id == op_id).order_by(AuditLog.id)))


def op_id_of(memory_id: int, action: str) -> str:
    """The op_id of the latest record with this action on this memory."""
    return db.session.scalar(
        sa.select(AuditLog.op_id)
        .where(AuditLog.memory_id == memory_id, AuditLog.action == action)
        .order_by(AuditLog.id.desc())
        .limit(1)
    )


def tick(moment: datetime) -> None:
    """Wait until the clock has moved past `moment` (microsecond resolution), so later writes are later."""
    while utcnow() <= moment:
        pass


def new_session(agent_id: int) -> int:
    session = RefinementSession(agent_id=agent_id, trigger="test", status="running")
    db.session.add(session)
    db.session.commit()
    return session.id


# ----- 1. the property: any history, then a point-in-time rollback, is undone exactly -----

CONTENTS = (
    "Prefers Earl Grey tea",
    "  prefers earl grey TEA ",  # a duplicate by content_hash (stripped, lower-cased)
    "Lives in Lisbon, near the river",
    "Speaks softly when tired",
    "Afraid of thunderstorms since the summer of the flood, and says so rarely",
    "Keeps a journal of every walk",
)
TAGS = st.lists(st.sampled_from(["voice", "family", "work"]), max_size=2, unique=True)
ACTORS = st.sampled_from([ADMIN, ADMIN, ADMIN, AGENT])
OPERATIONS = (
    "update",
    "delete",
    "restore",
    "consolidate",
    "protect",
    "unprotect",
    "create",
    "dedup",
    "expire",
    "rollback",
)
SEED = st.fixed_dictionaries(
    {
        "content": st.sampled_from(CONTENTS),
        "memory_type": st.sampled_from(["core", "core", "journal"]),
        "constitutional": st.sampled_from([False, False, True]),
        "tags": TAGS,
        "days_ago": st.integers(0, 40),
        "pinned": st.sampled_from([False, False, True]),
        "importance": st.none() | st.integers(1, 5),
    }
)


def _apply_random_operation(data: st.DataObject, agent_id: int, session_id: int) -> None:
    """Draw one operation and run it through the mutation path / the Time Machine (it may be refused)."""
    ids = sorted(memory_rows(agent_id))  # deleted rows included, so some operations are refused
    kind = data.draw(st.sampled_from(OPERATIONS), label="operation")
    event(f"operation: {kind}")
    actor = data.draw(ACTORS, label="actor")
    in_session = (
        {"session_id": session_id} if actor == AGENT and data.draw(st.booleans(), label="in session") else {}
    )
    if kind == "update":
        changes = data.draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "content": st.sampled_from(CONTENTS),
                    "tags": TAGS,
                    "importance": st.none() | st.integers(1, 5),
                    "pinned": st.booleans(),
                },
            ),
            label="changes",
        )
        mut.update_memory(agent_id, data.draw(st.sampled_from(ids)), actor=actor, **in_session, **changes)
    elif kind == "delete":
        chosen = data.draw(st.lists(st.sampled_from(ids), min_size=1, max_size=3), label="ids")
        mut.soft_delete_memories(agent_id, chosen, actor=actor, **in_session)
    elif kind == "restore":
        mut.restore_memory(agent_id, data.draw(st.sampled_from(ids)), actor=actor)
    elif kind == "consolidate":
        chosen = data.draw(st.lists(st.sampled_from(ids), min_size=2, max_size=3, unique=True), label="ids")
        content = data.draw(st.sampled_from(CONTENTS), label="merged content")
        mut.consolidate_memories(agent_id, chosen, content, actor=actor, **in_session)
    elif kind == "protect":
        mut.set_constitutional(agent_id, data.draw(st.sampled_from(ids)), True, actor=actor, **in_session)
    elif kind == "unprotect":
        mut.set_constitutional(agent_id, data.draw(st.sampled_from(ids)), False, actor=ADMIN)
    elif kind == "create":
        mut.create_memory(
            agent_id,
            data.draw(st.sampled_from(CONTENTS), label="content"),
            actor=actor,
            memory_type=data.draw(st.sampled_from(["core", "journal"]), label="type"),
            tags=data.draw(TAGS, label="tags"),
            constitutional=data.draw(st.booleans(), label="constitutional"),
            **in_session,
        )
    elif kind == "dedup":
        dedup.dedup_for_agent(agent_id, actor="system:dedup")
    elif kind == "expire":
        ttl.expire_memory(agent_id, data.draw(st.sampled_from(ids)), actor="system:ttl")
    else:  # roll back an earlier operation of this agent (seeding included)
        op_ids = db.session.scalars(
            sa.select(AuditLog.op_id)
            .where(AuditLog.agent_id == agent_id)
            .group_by(AuditLog.op_id)
            .order_by(sa.func.min(AuditLog.id))
        ).all()
        tm.rollback_operation(data.draw(st.sampled_from(op_ids), label="op"), actor=ADMIN)


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_random_operations_then_point_in_time_rollback_restores_exact_state(app, data):
    db.session.rollback()  # a fresh start even after a failing (shrinking) example
    agent = Agent(name=f"pit-{uuid.uuid4().hex}")
    db.session.add(agent)
    db.session.commit()
    agent_id = agent.id
    session_id = new_session(agent_id)

    # Seed, with a little history before the restore point (a soft delete, a TTL expiry).
    base = utcnow()
    seeds = data.draw(st.lists(SEED, min_size=3, max_size=6), label="seeds")
    for seed in seeds:
        mut.create_memory(
            agent_id,
            seed["content"],
            actor=ADMIN,
            memory_type=seed["memory_type"],
            constitutional=seed["constitutional"],
            tags=seed["tags"],
            pinned=seed["pinned"],
            importance=seed["importance"],
            created_at=base - timedelta(days=seed["days_ago"], microseconds=len(seeds)),
        )
    for kind in data.draw(st.lists(st.sampled_from(["delete", "expire"]), max_size=2), label="history"):
        try:
            memory_id = data.draw(st.sampled_from(sorted(memory_rows(agent_id))), label="history id")
            if kind == "delete":
                mut.soft_delete_memories(agent_id, [memory_id], actor=ADMIN)
            else:
                ttl.expire_memory(agent_id, memory_id, actor="system:ttl")
        except DomainError:
            pass

    to = utcnow()
    at_to = memory_rows(agent_id)
    assert set(next(iter(at_to.values()))) == MEMORY_COLUMNS
    tokens_at_to = core_tokens(agent_id)
    tick(to)

    for _ in range(data.draw(st.integers(0, 12), label="steps")):
        state, records = memory_rows(agent_id), audit_count(agent_id)
        try:
            _apply_random_operation(data, agent_id, session_id)
        except DomainError as refused:
            event(f"refused: {refused.code}")
            # A refused operation changes nothing and writes no audit record.
            assert memory_rows(agent_id) == state
            assert audit_count(agent_id) == records
        core_tokens(agent_id)  # the maintained totals follow every operation

    before_rollback = memory_rows(agent_id)
    result = tm.rollback_agent(agent_id, to, actor=ADMIN)
    after_rollback = memory_rows(agent_id)

    for memory_id, snap in at_to.items():
        assert after_rollback[memory_id] == snap, f"memory #{memory_id} differs from its state at `to`"
    for memory_id in set(after_rollback) - set(at_to):
        assert after_rollback[memory_id]["deleted_at"] is not None
        assert after_rollback[memory_id]["constitutional"] is False
    assert core_tokens(agent_id) == tokens_at_to
    assert result.tokens_after == tokens_at_to
    assert result.summary["unrecoverable"] == []

    changed = {i for i in after_rollback if after_rollback[i] != before_rollback[i]}
    event("rollback changed rows" if changed else "rollback changed nothing")
    if result.op_id is None:
        assert not changed
        return
    records = op_records(result.op_id)
    assert {r.memory_id for r in records} == changed
    assert {r.action for r in records} == {"rollback"}
    assert len(records) == len(changed)

    # The rollback can itself be rolled back: the state just before it comes back, exactly.
    redo = tm.rollback_operation(result.op_id, actor=ADMIN)
    assert redo.op_id not in (None, result.op_id)
    assert memory_rows(agent_id) == before_rollback


# ----- 2. targeted behaviour -----


def test_rolling_back_a_consolidation_restores_both_sources_exactly_and_soft_deletes_the_merged_memory(
    make_agent, make_memory
):
    agent = make_agent()
    first = make_memory(agent, "Walks the dog at dawn", tags=["routine"], importance=2)
    second = make_memory(agent, "walks the dog at dawn, every day", tags=["dog"], importance=4, pinned=True)
    bystander = make_memory(agent, "Reads poetry on Sundays")
    before = memory_rows(agent.id)
    tokens_before = core_tokens(agent.id)
    tick(utcnow())

    merged = mut.consolidate_memories(
        agent.id, [first.id, second.id], "Walks the dog at dawn daily", actor=AGENT
    )
    merged_id = merged.id
    op_id = op_id_of(merged_id, "consolidate")
    assert {r.action for r in op_records(op_id)} == {"consolidate", "consolidate_source"}

    result = tm.rollback_operation(op_id, actor=ADMIN)

    after = memory_rows(agent.id)
    assert after[first.id] == before[first.id]
    assert after[second.id] == before[second.id]
    assert after[bystander.id] == before[bystander.id]
    assert after[merged_id]["deleted_at"] is not None
    assert set(after) == set(before) | {merged_id}
    assert core_tokens(agent.id) == tokens_before
    assert result.summary["restored"] == 2 and result.summary["removed"] == 1
    records = op_records(result.op_id)
    assert sorted(r.memory_id for r in records) == sorted([first.id, second.id, merged_id])
    assert all(r.action == "rollback" and r.actor == ADMIN for r in records)


def _session_with_history(make_agent, make_memory):
    """An agent, a session that consolidated, tightened, protected and created, and a bystander op."""
    agent = make_agent()
    a = make_memory(agent, "Grew up by the sea in a small town")
    b = make_memory(agent, "grew up by the sea")
    c = make_memory(agent, "Dislikes loud restaurants and crowded rooms at night")
    outside = make_memory(agent, "Plays chess on Thursdays")
    session_id = new_session(agent.id)
    before = memory_rows(agent.id)
    tick(utcnow())

    merged = mut.consolidate_memories(
        agent.id, [a.id, b.id], "Grew up by the sea", actor=AGENT, session_id=session_id
    )
    mut.update_memory(agent.id, c.id, actor=AGENT, session_id=session_id, content="Dislikes loud rooms")
    mut.set_constitutional(agent.id, c.id, True, actor=AGENT, session_id=session_id)
    created = mut.create_memory(agent.id, "Learned to sail", actor=AGENT, session_id=session_id)
    mut.update_memory(agent.id, outside.id, actor=ADMIN, importance=3)  # not part of the session
    ids = {"a": a.id, "b": b.id, "c": c.id, "outside": outside.id, "merged": merged.id, "created": created.id}
    return agent.id, session_id, ids, before


def test_rolling_back_a_session_restores_everything_in_one_transaction_with_rollback_audit_records(
    make_agent, make_memory
):
    agent_id, session_id, ids, before = _session_with_history(make_agent, make_memory)
    outside_now = memory_rows(agent_id)[ids["outside"]]
    existing_ops = set(db.session.scalars(sa.select(AuditLog.op_id)))

    commits: list[int] = []

    def count_commit(_conn):  # real COMMITs on the wire (a SAVEPOINT's release is not one)
        commits.append(1)

    sa.event.listen(db.engine, "commit", count_commit)
    try:
        result = tm.rollback_session(session_id, actor=ADMIN)
    finally:
        sa.event.remove(db.engine, "commit", count_commit)
    assert len(commits) == 1

    after = memory_rows(agent_id)
    for key in ("a", "b", "c"):
        assert after[ids[key]] == before[ids[key]]
    assert after[ids["c"]]["constitutional"] is False  # the flag the session set is gone too
    for key in ("merged", "created"):
        assert after[ids[key]]["deleted_at"] is not None
        assert after[ids[key]]["constitutional"] is False
    assert after[ids["outside"]] == outside_now  # not part of the session: untouched

    records = op_records(result.op_id)
    assert result.op_id not in existing_ops
    assert len(records) == 5
    assert {r.memory_id for r in records} == {ids[k] for k in ("a", "b", "c", "merged", "created")}
    for record in records:
        assert record.action == "rollback"
        assert record.actor == ADMIN
        assert record.agent_id == agent_id
        assert record.data["rollback_of"] == {"rollback_of": "session", "session_id": session_id}
        assert record.before is not None and record.after is not None


def test_a_session_rollback_that_fails_midway_changes_nothing(make_agent, make_memory, monkeypatch):
    agent_id, session_id, _ids, _before = _session_with_history(make_agent, make_memory)
    state, records = memory_rows(agent_id), audit_count(agent_id)
    real_record_changes = tm.record_changes
    calls: list[int] = []

    def failing_record_changes(rows):
        calls.append(len(rows))
        real_record_changes(rows[:2])  # some records land, the rows are already restored...
        raise RuntimeError("audit store unavailable")  # ...then the audit store fails

    monkeypatch.setattr(tm, "record_changes", failing_record_changes)
    with pytest.raises(RuntimeError):
        tm.rollback_session(session_id, actor=ADMIN)
    assert calls and calls[0] > 2
    assert memory_rows(agent_id) == state
    assert audit_count(agent_id) == records


def test_rollback_records_share_one_new_op_id_and_can_themselves_be_rolled_back(make_agent, make_memory):
    agent_id, session_id, ids, _before = _session_with_history(make_agent, make_memory)
    after_session = memory_rows(agent_id)
    old_ops = set(db.session.scalars(sa.select(AuditLog.op_id)))

    undo = tm.rollback_session(session_id, actor=ADMIN)
    undone = memory_rows(agent_id)
    undo_records = op_records(undo.op_id)
    assert undo.op_id not in old_ops
    assert len({r.op_id for r in undo_records}) == 1 and len(undo_records) == 5

    redo = tm.rollback_operation(undo.op_id, actor=ADMIN)
    assert memory_rows(agent_id) == after_session  # the session's work is back, flags and timestamps too
    assert memory_rows(agent_id)[ids["c"]]["constitutional"] is True
    redo_records = op_records(redo.op_id)
    assert redo.op_id not in old_ops | {undo.op_id}
    assert {r.action for r in redo_records} == {"rollback"}
    assert {r.memory_id for r in redo_records} == {r.memory_id for r in undo_records}
    assert all(r.data["rollback_of"]["target_op_id"] == undo.op_id for r in redo_records)

    # ... and the redo can be undone again.
    tm.rollback_operation(redo.op_id, actor=ADMIN)
    assert memory_rows(agent_id) == undone


def test_rollback_of_an_operation_refuses_when_a_later_operation_touched_the_same_memory(
    make_agent, make_memory
):
    agent = make_agent()
    memory = make_memory(agent, "Takes the train to work")
    mut.update_memory(agent.id, memory.id, actor=ADMIN, content="Takes the bus to work")
    first_op = op_id_of(memory.id, "update")
    mut.update_memory(agent.id, memory.id, actor=ADMIN, tags=["commute"])
    later_op = op_id_of(memory.id, "update")
    assert later_op != first_op
    state, records, contents = memory_rows(agent.id), audit_rows(agent.id), content_rows(memory.id)

    with pytest.raises(RollbackConflict) as refused:
        tm.rollback_operation(first_op, actor=ADMIN)
    assert refused.value.details["memory_ids"] == [memory.id]
    assert "bus" not in str(refused.value) and "train" not in str(refused.value)
    with pytest.raises(RollbackConflict):
        tm.plan_operation_rollback(first_op)
    assert memory_rows(agent.id) == state
    assert audit_rows(agent.id) == records
    assert content_rows(memory.id) == contents

    # A session rollback refuses the same way when a later, outside change touched its memories.
    session_id = new_session(agent.id)
    mut.update_memory(agent.id, memory.id, actor=AGENT, session_id=session_id, importance=2)
    mut.update_memory(agent.id, memory.id, actor=ADMIN, importance=5)
    state, records = memory_rows(agent.id), audit_rows(agent.id)
    with pytest.raises(RollbackConflict):
        tm.rollback_session(session_id, actor=ADMIN)
    assert memory_rows(agent.id) == state
    assert audit_rows(agent.id) == records


def test_point_in_time_rollback_clears_the_flag_then_soft_deletes_a_memory_created_constitutional_later(
    make_agent, make_memory
):
    agent = make_agent()
    kept = make_memory(agent, "Is allergic to penicillin")
    to = utcnow()
    at_to = memory_rows(agent.id)
    tick(to)
    locked = make_memory(agent, "Never share the family address", constitutional=True)
    mut.set_constitutional(agent.id, kept.id, True, actor=ADMIN)

    # The database refuses a raw soft delete of a constitutional row; the rollback must clear the flag first.
    with pytest.raises(DBAPIError):
        db.session.execute(
            sa.text("UPDATE agent_memories SET deleted_at = :now WHERE id = :id"),
            {"now": utcnow(), "id": locked.id},
        )
    db.session.rollback()

    result = tm.rollback_agent(agent.id, to, actor=ADMIN)

    rows = memory_rows(agent.id)
    assert rows[kept.id] == at_to[kept.id]
    assert rows[locked.id]["deleted_at"] is not None
    assert rows[locked.id]["constitutional"] is False
    assert result.summary["removed"] == 1 and result.summary["restored"] == 1
    record = next(r for r in op_records(result.op_id) if r.memory_id == locked.id)
    assert record.action == "rollback" and record.actor == ADMIN
    assert record.before["constitutional"] is True and record.before["deleted_at"] is None
    assert record.after["constitutional"] is False and record.after["deleted_at"] is not None
    assert record.data["rollback_of"]["rollback_of"] == "point_in_time"


def test_rollback_restores_timestamps_exactly_with_no_now_leaking_in(make_agent, make_memory):
    agent = make_agent()
    origin = datetime(2021, 3, 4, 5, 6, 7, 891011)
    memory = make_memory(agent, "Moved to Porto", created_at=origin, memory_type="episodic", tags=["move"])
    mut.update_memory(agent.id, memory.id, actor=ADMIN, importance=4)
    to = utcnow()
    at_to = memory_rows(agent.id)[memory.id]
    assert at_to["created_at"] == origin
    tick(to)

    mut.update_memory(agent.id, memory.id, actor=ADMIN, content="Moved to Braga", tags=[])
    mut.soft_delete_memories(agent.id, [memory.id], actor=ADMIN)
    deleted = memory_rows(agent.id)[memory.id]
    tick(deleted["updated_at"])

    # One operation: the soft delete comes undone, updated_at back to the update's time, not "now".
    undo = tm.rollback_operation(op_id_of(memory.id, "delete"), actor=ADMIN)
    row = memory_rows(agent.id)[memory.id]
    assert row["deleted_at"] is None
    assert row["created_at"] == origin
    assert row["updated_at"] < deleted["updated_at"]
    assert row["content"] == "Moved to Braga"

    # Its redo brings back the original deletion time, not the redo's own time.
    tick(utcnow())
    tm.rollback_operation(undo.op_id, actor=ADMIN)
    assert memory_rows(agent.id)[memory.id] == deleted

    # And to a point in time: every timestamp as it was.
    tick(utcnow())
    tm.rollback_agent(agent.id, to, actor=ADMIN)
    assert memory_rows(agent.id)[memory.id] == at_to


def test_rollback_of_a_purged_memory_reports_it_unrecoverable_and_the_purge_redacts_only_audit_contents(
    make_agent, make_memory
):
    agent = make_agent()
    journal = make_memory(agent, "Dreamt about the old lighthouse", memory_type="episodic")
    core = make_memory(agent, "Works as a translator")
    journal_id = journal.id
    to = utcnow()
    at_to = memory_rows(agent.id)
    tick(to)
    mut.update_memory(agent.id, journal_id, actor=ADMIN, content="Dreamt about the lighthouse keeper")
    mut.update_memory(agent.id, core.id, actor=ADMIN, content="Works as a literary translator")
    ttl.expire_memory(agent.id, journal_id, actor="system:ttl", grace=timedelta(seconds=-1))
    history = audit_rows(agent.id)
    contents = content_rows(journal_id)
    assert len(contents) == 2 and all(c["content"] for c in contents)

    ttl.purge_memory(agent.id, journal_id, actor="system:ttl")

    db.session.expire_all()
    assert db.session.get(AgentMemory, journal_id) is None
    # audit_logs: every earlier record untouched, one purge record appended, no text anywhere in it.
    after_purge = audit_rows(agent.id)
    assert after_purge[: len(history)] == history
    assert [r["action"] for r in after_purge[len(history) :]] == ["purge"]
    assert after_purge[-1]["data"]["content_redacted"] is True
    assert "lighthouse" not in repr(after_purge)
    # audit_contents: the text is gone, the tombstone (hash, size) stays.
    redacted = content_rows(journal_id)
    assert [(c["id"], c["sha256"], c["token_estimate"]) for c in redacted] == [
        (c["id"], c["sha256"], c["token_estimate"]) for c in contents
    ]
    assert all(c["content"] is None and c["redacted_at"] is not None for c in redacted)

    # Rolling back the purge itself: nothing to restore, said so, nothing written.
    records = audit_count(agent.id)
    purge_undo = tm.rollback_operation(op_id_of(journal_id, "purge"), actor=ADMIN)
    assert purge_undo.summary["unrecoverable"] == [journal_id]
    assert purge_undo.op_id is None
    assert audit_count(agent.id) == records

    # Point in time: the purged memory is reported, everything else comes back exactly.
    plan = tm.plan_agent_rollback(agent.id, to)
    assert plan.summary["unrecoverable"] == [journal_id]
    result = tm.rollback_agent(agent.id, to, actor=ADMIN)
    assert result.summary["unrecoverable"] == [journal_id]
    assert result.to_dict()["unrecoverable"] == [journal_id]
    rows = memory_rows(agent.id)
    assert journal_id not in rows
    assert rows[core.id] == at_to[core.id]
    assert {r.memory_id for r in op_records(result.op_id)} == {core.id}
    assert all(c["content"] is None for c in content_rows(journal_id))  # nothing resurrected


def test_plan_functions_return_counts_and_token_deltas_and_change_nothing(make_agent, make_memory):
    agent = make_agent()
    a = make_memory(agent, "Collects vinyl records from the seventies")
    b = make_memory(agent, "collects vinyl records")
    c = make_memory(agent, "Prefers trains to planes")
    j = make_memory(agent, "Saw a heron today", memory_type="journal")
    to = utcnow()
    tick(to)
    session_id = new_session(agent.id)
    merged = mut.consolidate_memories(
        agent.id, [a.id, b.id], "Collects vinyl", actor=AGENT, session_id=session_id
    )
    mut.update_memory(
        agent.id, c.id, actor=AGENT, session_id=session_id, content="Prefers night trains to planes"
    )
    mut.soft_delete_memories(agent.id, [j.id], actor=ADMIN)

    state, records = memory_rows(agent.id), audit_count()
    contents = db.session.scalar(sa.select(sa.func.count()).select_from(AuditContent))
    tokens = core_tokens(agent.id)

    session_plan = tm.plan_session_rollback(session_id)
    expected_delta = (
        estimate_tokens("Collects vinyl records from the seventies")
        + estimate_tokens("collects vinyl records")
        - estimate_tokens("Collects vinyl")
        + estimate_tokens("Prefers trains to planes")
        - estimate_tokens("Prefers night trains to planes")
    )
    assert session_plan.summary == {
        "records": 4,
        "memories": 4,
        "restored": 3,
        "removed": 1,
        "unrecoverable": [],
        "active_delta": 1,
        "core_token_delta": expected_delta,
    }
    op_plan = tm.plan_operation_rollback(op_id_of(j.id, "delete"))
    assert op_plan.summary == {
        "records": 1,
        "memories": 1,
        "restored": 1,
        "removed": 0,
        "unrecoverable": [],
        "active_delta": 1,
        "core_token_delta": 0,  # a journal: not core tokens
    }
    agent_plan = tm.plan_agent_rollback(agent.id, to)
    assert agent_plan.summary["records"] == 5
    assert agent_plan.summary["memories"] == 5
    assert agent_plan.summary["active_delta"] == 2
    assert agent_plan.summary["core_token_delta"] == expected_delta
    assert merged.id in agent_plan.targets and agent_plan.targets[merged.id] is None

    # Planning wrote nothing at all.
    assert memory_rows(agent.id) == state
    assert audit_count() == records
    assert db.session.scalar(sa.select(sa.func.count()).select_from(AuditContent)) == contents
    assert core_tokens(agent.id) == tokens

    # The plan's figures are what applying it does.
    result = tm.rollback_session(session_id, actor=ADMIN)
    assert result.summary == session_plan.summary
    assert result.tokens_before == tokens
    assert result.tokens_after - result.tokens_before == expected_delta
    assert core_tokens(agent.id) == tokens + expected_delta


def test_unknown_operation_session_or_audit_record_raises_not_found_and_changes_nothing(
    make_agent, make_memory
):
    agent = make_agent()
    make_memory(agent, "Enjoys crosswords")
    records = audit_count()
    unknown_op = str(uuid.uuid4())
    with pytest.raises(NotFound):
        tm.rollback_operation(unknown_op, actor=ADMIN)
    with pytest.raises(NotFound):
        tm.plan_operation_rollback(unknown_op)
    with pytest.raises(NotFound):
        tm.rollback_session(987654, actor=ADMIN)
    with pytest.raises(NotFound):
        tm.plan_session_rollback(987654)
    with pytest.raises(NotFound):
        tm.rollback_audit_record(987654, actor=ADMIN)
    assert audit_count() == records


def test_rollback_of_an_operation_by_audit_record_and_with_no_remaining_change(make_agent, make_memory):
    agent = make_agent()
    memory = make_memory(agent, "Bakes bread on Saturdays")
    mut.update_memory(agent.id, memory.id, actor=ADMIN, pinned=True)
    record_id = db.session.scalar(
        sa.select(AuditLog.id).where(AuditLog.memory_id == memory.id, AuditLog.action == "update")
    )
    before_update = audit_rows(agent.id)[0]["after"]
    result = tm.rollback_audit_record(record_id, actor=ADMIN)
    row = memory_rows(agent.id)[memory.id]
    assert row["pinned"] is False
    assert row["updated_at"].isoformat() == before_update["updated_at"]
    # Rolling back to a point with no change since writes nothing and reports no op.
    noop = tm.rollback_agent(agent.id, utcnow(), actor=ADMIN)
    assert noop.op_id is None and noop.summary["memories"] == 0
    assert op_records(result.op_id)


def test_rolling_an_agent_back_to_before_its_first_memory_removes_every_memory_constitutional_included(
    make_agent, make_memory
):
    agent = make_agent()
    to = utcnow()
    tick(to)
    plain = make_memory(agent, "Sings in the shower", tags=["voice"])
    locked = make_memory(agent, "Values honesty above comfort", constitutional=True)
    journal = make_memory(agent, "Rain all day", memory_type="journal")
    tokens_before = core_tokens(agent.id)

    # An aware `to` means the same instant as its naive UTC equivalent.
    aware = (to.replace(tzinfo=UTC)).astimezone(timezone(timedelta(hours=2)))
    result = tm.rollback_agent(agent.id, aware, actor=ADMIN)

    rows = memory_rows(agent.id)
    assert set(rows) == {plain.id, locked.id, journal.id}
    assert all(r["deleted_at"] is not None and r["constitutional"] is False for r in rows.values())
    assert core_tokens(agent.id) == 0
    assert result.summary["removed"] == 3
    assert result.summary["core_token_delta"] == -tokens_before
    assert result.scope["to"] == to.isoformat()
    assert len(op_records(result.op_id)) == 3


def test_rollback_refuses_an_operation_that_changed_no_memory_and_bad_arguments(make_agent):
    agent = make_agent()
    agent_settings.update_agent_settings(agent.id, actor=ADMIN, core_token_budget=1234)
    settings_op = db.session.scalar(sa.select(AuditLog.op_id).where(AuditLog.action == "agent_settings"))
    records = audit_count()
    with pytest.raises(ValidationFailed):
        tm.rollback_operation(settings_op, actor=ADMIN)
    with pytest.raises(ValidationFailed):
        tm.rollback_operation("", actor=ADMIN)
    with pytest.raises(ValidationFailed):
        tm.rollback_agent(agent.id, "2026-01-01", actor=ADMIN)
    with pytest.raises(ValidationFailed):
        tm.rollback_agent(agent.id, utcnow(), actor="somebody")
    assert audit_count() == records


# ----- 3. the audit log stays append-only whatever happened -----


def test_audit_logs_reject_raw_update_and_delete_after_mutations_and_rollbacks(make_agent, make_memory):
    agent_id, session_id, ids, _before = _session_with_history(make_agent, make_memory)
    undo = tm.rollback_session(session_id, actor=ADMIN)
    tm.rollback_operation(undo.op_id, actor=ADMIN)
    journal = make_memory(agent_id, "Heard a nightingale", memory_type="episodic")
    ttl.expire_memory(agent_id, journal.id, grace=timedelta(seconds=-1))
    ttl.purge_memory(agent_id, journal.id)
    history = audit_rows(agent_id)
    contents = content_rows(ids["c"])
    assert {r["action"] for r in history} >= {"create", "consolidate", "rollback", "purge"}

    for statement in (
        "UPDATE audit_logs SET actor = 'x'",
        "UPDATE audit_logs SET before = NULL WHERE action = 'rollback'",
        "DELETE FROM audit_logs",
        f"DELETE FROM audit_logs WHERE id = {history[-1]['id']}",
        "UPDATE audit_contents SET content = 'forged'",  # only redaction may touch audit_contents
        "DELETE FROM audit_contents",
    ):
        with pytest.raises(DBAPIError):
            db.session.execute(sa.text(statement))
        db.session.rollback()
        assert audit_rows(agent_id) == history, statement
        assert content_rows(ids["c"]) == contents, statement


def test_agent_paths_cannot_protect_outside_a_session_and_refusals_leave_no_trace(make_agent, make_memory):
    agent = make_agent()
    memory = make_memory(agent, "Hums while cooking", tags=["voice"])
    state, records = memory_rows(agent.id), audit_count(agent.id)
    with pytest.raises(ConstitutionalLocked):
        mut.set_constitutional(agent.id, memory.id, True, actor=AGENT)
    with pytest.raises(DomainError):
        mut.update_memory(agent.id, memory.id, actor=AGENT, content="Hums")
    assert memory_rows(agent.id) == state
    assert audit_count(agent.id) == records
