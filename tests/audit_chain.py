"""The audit chain invariant, read from committed state only (shared by the contention and stateful tests).

On each memory, the audit records that carry a snapshot, in id order, form one chain: the first
record's `before` is None (the memory was created by it), every later record's `before` equals the
previous record's `after` key for key (content_ref included), and the last `after` equals the row
as it is now (every snapshot column, plus the newest filed text, which must be the row's text).
Records that change a row from a state their action forbids (an update or delete of a deleted
memory, a restore of an active one) break the promise too, even when the chain is unbroken.

Everything is read on a connection of its own, never the caller's session: only committed rows
count, and nothing cached in a session's identity map can make a comparison pass.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from models import AgentMemory, AuditContent, AuditLog, db
from models.history.audit import snapshot_values

# Actions the mutation path applies only to an active memory, and the one only to a deleted memory.
NEEDS_ACTIVE = frozenset({"update", "delete", "protect", "unprotect", "consolidate_source", "ttl_expire"})
NEEDS_DELETED = frozenset({"restore"})


def chain_records(conn: sa.Connection, memory_id: int) -> list[dict[str, Any]]:
    """The memory's audit records that carry a snapshot, oldest first."""
    table = AuditLog.__table__
    rows = conn.execute(
        sa.select(table)
        .where(table.c.memory_id == memory_id)
        .where(sa.or_(table.c.before.is_not(None), table.c.after.is_not(None)))
        .order_by(table.c.id)
    ).mappings()
    # JSON null and SQL NULL both mean "no snapshot"; the database may hand back either.
    return [dict(r) for r in rows if r["before"] is not None or r["after"] is not None]


def row_snapshot(conn: sa.Connection, memory_id: int) -> dict[str, Any] | None:
    """The row as a snapshot (None when there is no row), checked against its newest filed text."""
    table = AgentMemory.__table__
    row = conn.execute(sa.select(table).where(table.c.id == memory_id)).mappings().first()
    if row is None:
        return None
    contents = AuditContent.__table__
    newest = conn.execute(
        sa.select(contents.c.id, contents.c.sha256, contents.c.content)
        .where(contents.c.memory_id == memory_id)
        .order_by(contents.c.id.desc())
        .limit(1)
    ).first()
    assert newest is not None, f"memory #{memory_id} has no filed text"
    assert newest.sha256 == hashlib.sha256(row["content"].encode("utf-8")).hexdigest(), (
        f"memory #{memory_id}: the row's text is not its newest filed text (#{newest.id})"
    )
    return snapshot_values(row, newest.id)


def content_text(conn: sa.Connection, content_ref: int) -> str | None:
    contents = AuditContent.__table__
    return conn.execute(sa.select(contents.c.content).where(contents.c.id == content_ref)).scalar_one()


def row_columns(conn: sa.Connection, memory_id: int) -> dict[str, Any] | None:
    """Every column of the row, as stored (content included), or None when there is no row."""
    table = AgentMemory.__table__
    row = conn.execute(sa.select(table).where(table.c.id == memory_id)).mappings().first()
    return dict(row) if row is not None else None


def assert_row_is(conn: sa.Connection, memory_id: int, snap: dict[str, Any]) -> None:
    """Every column of the row is the snapshot's (datetimes compared as the snapshot writes them), and
    its text is the text the snapshot's content_ref names (a rollback may file the same text anew)."""
    row = row_columns(conn, memory_id)
    assert row is not None, f"memory #{memory_id} has no row"
    stored = {k: v.isoformat() if isinstance(v, datetime) else v for k, v in row.items() if k != "content"}
    stored["tags"] = list(stored["tags"] or [])
    expected = {k: v for k, v in snap.items() if k != "content_ref"}
    assert set(expected) | {"content"} == set(row), "a snapshot names every column but the text"
    assert stored == expected, f"memory #{memory_id} is not the snapshot: " + _diff(expected, stored)
    assert row["content"] == content_text(conn, snap["content_ref"]), (
        f"memory #{memory_id}: not the snapshot's text"
    )


def check_audit_chain(conn: sa.Connection, agent_id: int, memory_id: int) -> list[dict[str, Any]]:
    """Assert the invariant for one memory on an open connection; returns the chain's records."""
    records = chain_records(conn, memory_id)
    assert records, f"memory #{memory_id} has no audit record"
    for record in records:
        assert record["agent_id"] == agent_id, (
            f"audit #{record['id']} of memory #{memory_id} names another agent"
        )
    assert records[0]["before"] is None, (
        f"memory #{memory_id}: its first record #{records[0]['id']} ({records[0]['action']}) has a before-state"
    )
    for previous, record in zip(records, records[1:], strict=False):
        assert record["before"] == previous["after"], (
            f"memory #{memory_id}: audit #{record['id']} ({record['action']}) does not start where "
            f"#{previous['id']} ({previous['action']}) ended: " + _diff(previous["after"], record["before"])
        )
    for record in records[1:]:
        before = record["before"] or {}
        if record["action"] in NEEDS_ACTIVE:
            assert before.get("deleted_at") is None, (
                f"memory #{memory_id}: audit #{record['id']} {record['action']} was applied to a deleted memory"
            )
        if record["action"] in NEEDS_DELETED:
            assert before.get("deleted_at") is not None, (
                f"memory #{memory_id}: audit #{record['id']} {record['action']} was applied to an active memory"
            )
    last, now = records[-1]["after"], row_snapshot(conn, memory_id)
    assert now == last, (
        f"memory #{memory_id}: the row is not what its last record #{records[-1]['id']} "
        f"({records[-1]['action']}) says: " + _diff(last, now)
    )
    return records


def assert_audit_chain(agent_id: int, memory_id: int) -> list[dict[str, Any]]:
    """The audit chain invariant for one memory, on committed state; returns the chain's records."""
    with db.engine.connect() as conn:
        return check_audit_chain(conn, agent_id, memory_id)


def assert_audit_chains(agent_id: int) -> dict[int, list[dict[str, Any]]]:
    """The invariant for every memory the agent has, or ever had a record about, in one read."""
    table, audits = AgentMemory.__table__, AuditLog.__table__
    with db.engine.connect() as conn:
        ids = set(conn.scalars(sa.select(table.c.id).where(table.c.agent_id == agent_id)))
        ids |= set(
            conn.scalars(
                sa.select(audits.c.memory_id).where(
                    audits.c.agent_id == agent_id, audits.c.memory_id.is_not(None)
                )
            )
        )
        return {memory_id: check_audit_chain(conn, agent_id, memory_id) for memory_id in sorted(ids)}


def _diff(expected: dict | None, actual: dict | None) -> str:
    if expected is None or actual is None:
        return f"expected {'nothing' if expected is None else 'a state'}, found {'nothing' if actual is None else 'a state'}"
    keys = sorted(set(expected) | set(actual))
    # Column names and values, never text: snapshots hold content only by reference.
    return "; ".join(
        f"{k}: {expected.get(k)!r} != {actual.get(k)!r}" for k in keys if expected.get(k) != actual.get(k)
    )
