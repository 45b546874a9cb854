"""Content-blind exact-duplicate removal: an agent's active core memories whose content hash matches an
earlier one are soft-deleted, audited as `dedup`, set-based for a whole batch of agents.

The content column is never loaded: only hashes are compared. Run by the maintenance job
(`jobs/maintenance.py`) and before a refinement session (`jobs/refinement.py`); constitutional and
immutable-tagged memories are never removed.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import and_, func, select, tuple_, update

from models.changes.records import record_changes
from models.changes.rows import lock_agents
from models.db import atomic, db, utcnow
from models.history.audit import CHUNK, latest_content_refs, new_op_id, snapshot_values
from models.memories.fields import SCOPING_FIELDS
from models.memories.memory import IMMUTABLE_TAGS, SNAPSHOT_FIELDS, AgentMemory


def dedup_for_agent(
    agent_id: int, *, actor: str = "system:dedup", session_id: int | None = None
) -> list[int]:
    """Content-blind exact-duplicate removal for one agent's active core memories (see
    `dedup_for_agents`). Returns the ids soft-deleted."""
    return dedup_for_agents([agent_id], actor=actor, session_id=session_id).get(agent_id, [])


def dedup_for_agents(
    agent_ids: Sequence[int], *, actor: str = "system:dedup", session_id: int | None = None
) -> dict[int, list[int]]:
    """Content-blind exact-duplicate removal for these agents' active core memories, in one transaction.

    One set-based query picks every non-constitutional row whose content_hash matches an earlier
    active core row of the same agent and scope (user, thread, run, actor, role; earliest origin date
    wins, id breaks ties); those are
    soft-deleted and audited, one op_id per agent (each agent's dedup is rolled back on its own). The
    content column is never loaded, so no text is compared or even read in Python. Set-based
    throughout (one locking SELECT, one query for the content references, one UPDATE and multi-row
    audit INSERTs per 5,000 rows), so its cost is a few round trips for the whole batch, not a few per
    row or per agent. Running it again finds nothing more to do. Returns {agent id: ids removed}.
    """
    agent_ids = list(dict.fromkeys(agent_ids))
    if not agent_ids:
        return {}
    table = AgentMemory.__table__
    active_core = and_(
        table.c.agent_id.in_(agent_ids), table.c.memory_type == "core", table.c.deleted_at.is_(None)
    )
    # The (agent, hash) groups holding more than one active core row: an aggregate over the partial
    # index of active core hashes, so rows without a twin cost nothing more.
    groups = (
        select(table.c.agent_id, table.c.content_hash)
        .where(active_core)
        .group_by(table.c.agent_id, table.c.content_hash)
        .having(func.count() > 1)
    )
    in_groups = and_(active_core, tuple_(table.c.agent_id, table.c.content_hash).in_(groups))
    with atomic():
        # The agents' rows first, in id order, as every writer of memories takes them (rows.py), so dedup
        # queues behind a writer instead of deadlocking with it in the counter trigger.
        lock_agents(select(groups.subquery().c.agent_id))
        # Lock every row of those groups, keepers included, before deciding anything: a keeper cannot
        # be deleted under us while its twin is soft-deleted as a duplicate.
        if not db.session.execute(select(table.c.id).where(in_groups).with_for_update()).first():
            return {}
        # Twins only within one scope (a window partition treats empty fields as equal): the keeper stands
        # for its twin, so it must be found by every user, thread, run, actor and role filter the twin was.
        scope = tuple(table.c[name] for name in SCOPING_FIELDS)
        rank = func.row_number().over(
            partition_by=(table.c.agent_id, table.c.content_hash, *scope),
            order_by=(table.c.created_at, table.c.id),
        )
        ranked = select(*(table.c[field] for field in SNAPSHOT_FIELDS), rank.label("rank")).where(in_groups)
        # Every row after the earliest of its group (earliest origin date wins, id breaks ties), never
        # a constitutional one; every snapshot column is read, never `content`.
        rows = [
            r
            for r in db.session.execute(ranked).mappings().all()
            if r["rank"] > 1 and not r["constitutional"]
        ]
        rows.sort(key=lambda r: r["id"])
        # Memories tagged audio, somatic or voice are immutable for every agent path, dedup included.
        duplicates = [r for r in rows if not {str(t).lower() for t in (r["tags"] or [])} & IMMUTABLE_TAGS]
        removed: dict[int, list[int]] = {}
        for row in duplicates:
            removed.setdefault(row["agent_id"], []).append(row["id"])
        if not duplicates:
            return {}
        ids = [r["id"] for r in duplicates]
        ops, now = {agent: new_op_id() for agent in removed}, utcnow()
        refs = latest_content_refs(ids)
        for start in range(0, len(ids), CHUNK):
            db.session.execute(
                update(table)
                .where(table.c.id.in_(ids[start : start + CHUNK]))
                .values(deleted_at=now, updated_at=now)
            )
        audits = []
        for row in duplicates:
            before = snapshot_values(row, refs[row["id"]])
            audits.append(
                {
                    "op_id": ops[row["agent_id"]], "actor": actor, "action": "dedup", "agent_id": row["agent_id"],
                    "memory_id": row["id"], "session_id": session_id, "before": before,
                    "after": {**before, "deleted_at": now.isoformat(), "updated_at": now.isoformat()},
                    "data": {"content_hash": row["content_hash"]},
                }
            )  # fmt: skip
        record_changes(audits)
        db.session.expire_all()  # ORM copies of these rows are stale now
    return removed
