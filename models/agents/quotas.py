"""Storage quotas per agent: the one place that decides whether an agent may store more
(docs/explanation/security.md).

- `MAX_MEMORIES_PER_AGENT` (default 100,000): active memories (soft-deleted ones do not count; they
  are restorable history, not the agent's working memory). `create_memory` checks it first, so every
  write path — the API, imports, jobs — is held to it. Refused: 409 `quota_exceeded`.
- `MAX_CHECKPOINT_BYTES_PER_AGENT` (default 64 MiB): the compact-JSON bytes of all the agent's
  checkpoints together, counting a replaced one's new size instead of its old. Refused: 413
  `quota_exceeded`. `check_checkpoint_bytes` is what any checkpoint store calls before it writes.

Both errors name the setting and its value. The limits come from the app's config; outside an app
(a script) the defaults hold. Two writers racing at the very edge may both pass: a quota bounds
storage, it is not a ledger.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import current_app, has_app_context
from sqlalchemy import ColumnElement, func, select

from models.agents.agent import Agent
from models.db import db
from models.errors import DomainError

DEFAULTS = {"MAX_MEMORIES_PER_AGENT": 100_000, "MAX_CHECKPOINT_BYTES_PER_AGENT": 64 * 1024 * 1024}
# Every table that holds an agent's checkpoint bytes: (model, agent column, size column). A new
# checkpoint store adds itself with `register_checkpoint_table` so usage counts it too.
_CHECKPOINT_TABLES: list[tuple[type, str, str]] = []


class QuotaExceeded(DomainError):
    code = "quota_exceeded"
    http_status = 409


class CheckpointQuotaExceeded(QuotaExceeded):
    http_status = 413


def limit(name: str) -> int:
    if has_app_context():
        return int(current_app.config.get(name, DEFAULTS[name]))
    return DEFAULTS[name]


def register_checkpoint_table(
    model: type, agent_column: str = "agent_id", size_column: str = "size_bytes"
) -> None:
    if (model, agent_column, size_column) not in _CHECKPOINT_TABLES:
        _CHECKPOINT_TABLES.append((model, agent_column, size_column))


def memory_count(agent_id: int) -> int:
    """The agent's active memories, any type: one primary-key read of the count the database triggers keep
    (migration 0021; pending changes are flushed first, so the triggers have run), so a create costs the
    same whatever the agent holds; counting the rows would grow with every memory."""
    return int(db.session.scalar(select(Agent.memory_count).where(Agent.id == agent_id)) or 0)


def checkpoint_bytes(agent_id: int, *, excluding: dict | None = None) -> int:
    """Bytes of the agent's checkpoints in every registered store. `excluding`: {model: where-clause}
    for a row about to be replaced. One statement, a sum per store added up in SQL: a round trip per
    store was half the time of a 100 KB checkpoint save (python -m bench.extras, 2026-11-28)."""
    sums = []
    for model, agent_column, size_column in _CHECKPOINT_TABLES:
        stmt = select(func.coalesce(func.sum(getattr(model, size_column)), 0)).where(
            getattr(model, agent_column) == agent_id
        )
        if excluding and model in excluding:
            stmt = stmt.where(~excluding[model])
        sums.append(stmt.scalar_subquery())
    if not sums:
        return 0
    total: ColumnElement[Any] = sums[0]
    for more in sums[1:]:
        total = total + more
    return int(db.session.scalar(select(total)) or 0)


def check_memory_count(agent_id: int, adding: int = 1) -> None:
    """Refuse (409) a write that would take the agent past MAX_MEMORIES_PER_AGENT active memories."""
    cap = limit("MAX_MEMORIES_PER_AGENT")
    count = memory_count(agent_id)
    if count + adding > cap:
        raise QuotaExceeded(
            f"agent {agent_id} holds {count:,} memories; the limit is {cap:,} (MAX_MEMORIES_PER_AGENT). "
            "Delete or consolidate memories first.",
            limit="MAX_MEMORIES_PER_AGENT",
            limit_value=cap,
            used=count,
        )


def check_checkpoint_bytes(agent_id: int, adding_bytes: int, *, replacing: dict | None = None) -> None:
    """Refuse (413) a checkpoint write that would take the agent's stored checkpoint bytes past
    MAX_CHECKPOINT_BYTES_PER_AGENT. `replacing`: {model: where-clause} for the row the write replaces,
    whose old size then does not count."""
    cap = limit("MAX_CHECKPOINT_BYTES_PER_AGENT")
    used = checkpoint_bytes(agent_id, excluding=replacing)
    if used + adding_bytes > cap:
        raise CheckpointQuotaExceeded(
            f"agent {agent_id} stores {used:,} bytes of checkpoints; {adding_bytes:,} more would pass the "
            f"limit of {cap:,} (MAX_CHECKPOINT_BYTES_PER_AGENT). Delete old threads' checkpoints first.",
            limit="MAX_CHECKPOINT_BYTES_PER_AGENT",
            limit_value=cap,
            used=used,
        )


@dataclass(frozen=True)
class Usage:
    memories: int
    max_memories: int
    checkpoint_bytes: int
    max_checkpoint_bytes: int

    @property
    def memories_share(self) -> float:
        return self.memories / self.max_memories if self.max_memories else 0.0

    @property
    def checkpoint_share(self) -> float:
        return self.checkpoint_bytes / self.max_checkpoint_bytes if self.max_checkpoint_bytes else 0.0


def usage(agent_id: int) -> Usage:
    """What the console shows on the agent page: usage against both quotas."""
    return Usage(
        memories=memory_count(agent_id),
        max_memories=limit("MAX_MEMORIES_PER_AGENT"),
        checkpoint_bytes=checkpoint_bytes(agent_id),
        max_checkpoint_bytes=limit("MAX_CHECKPOINT_BYTES_PER_AGENT"),
    )
