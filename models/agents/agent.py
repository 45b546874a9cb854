"""Agents: the owners of memories, with their refinement budget and API credentials."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterator
from datetime import datetime, timedelta

from sqlalchemy import BigInteger, Boolean, DateTime, Float, Integer, String, Text, bindparam, select
from sqlalchemy.orm import Mapped, mapped_column

from models.db import Model, db, utcnow

DEFAULT_CORE_TOKEN_BUDGET = 5000
DEFAULT_MIN_RETENTION = 0.8
REFINEMENT_INTERVAL = timedelta(weeks=1)
TOKEN_PREFIX = "mgc_"
AGENT_BATCH = 500


def hash_token(token: str) -> str:
    """API tokens are 256-bit random strings, so a plain SHA-256 is a safe, indexable hash for them."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Agent(Model):
    __tablename__ = "agents"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(120), unique=True, nullable=False)
    role: Mapped[str | None] = mapped_column(String(64))
    model_id: Mapped[str | None] = mapped_column(String(200))
    base_url: Mapped[str | None] = mapped_column(String(500))
    core_token_budget: Mapped[int] = mapped_column(Integer, nullable=False, default=DEFAULT_CORE_TOKEN_BUDGET)
    min_retention: Mapped[float] = mapped_column(Float, nullable=False, default=DEFAULT_MIN_RETENTION)
    refinement_prompt: Mapped[str | None] = mapped_column(Text)
    mechanic_preconsent: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    last_refinement_at: Mapped[datetime | None] = mapped_column(DateTime)
    api_token_hash: Mapped[str | None] = mapped_column(String(64), unique=True)
    active: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    # Tokens and count of the agent's active core memories, maintained by database triggers on
    # agent_memories (migration 0005): read them with `core_totals`, never set them.
    core_tokens: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0, server_default="0")
    core_count: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    # Active memories of every type (what the storage quota counts), maintained the same way (migration
    # 0021): read with `models.agents.quotas.memory_count`, never set.
    memory_count: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    # A new random value whenever a memory changes what the agent's context block shows, set by the same
    # triggers (migration 0024): the web process keeps the block's digest under it. Never set.
    block_version: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)

    def issue_token(self) -> str:
        """Create a fresh API token, store only its hash, and return the token (shown once)."""
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        self.api_token_hash = hash_token(token)
        return token

    @classmethod
    def by_token(cls, token: str) -> Agent | None:
        if not token:
            return None
        return db.session.scalar(_BY_TOKEN, {"token_hash": hash_token(token)})

    @classmethod
    def lookup(cls, name_or_id: str | int) -> Agent | None:
        """AGENT on the command line may be the name or the id."""
        agent = db.session.scalar(select(cls).where(cls.name == str(name_or_id)))
        if agent is None and str(name_or_id).isdigit():
            agent = db.session.get(cls, int(name_or_id))
        return agent

    @property
    def core_token_usage(self) -> int:
        """Tokens of active core memories (soft-deleted rows never count), read fresh from the row the
        triggers maintain: the attribute loaded earlier in this session may be stale."""
        return core_totals(self.id)[0]

    @property
    def needs_refinement(self) -> bool:
        return self.core_token_usage > (self.core_token_budget or DEFAULT_CORE_TOKEN_BUDGET)

    def refined_recently(self, now: datetime | None = None) -> bool:
        now = now or utcnow()
        return self.last_refinement_at is not None and self.last_refinement_at > now - REFINEMENT_INTERVAL

    @classmethod
    def over_budget_ids(cls) -> list[int]:
        """Every active agent whose active core tokens exceed its budget (the maintained totals)."""
        return list(active_agent_ids(cls.core_tokens > cls.core_token_budget))


# Every agent API request runs this lookup: built once, so each request skips building the statement and
# its cache key (SQLAlchemy memoizes both on the object).
_BY_TOKEN = select(Agent).where(Agent.api_token_hash == bindparam("token_hash"), Agent.active.is_(True))


def active_agent_ids(*criteria, batch: int = AGENT_BATCH) -> Iterator[int]:
    """The ids of the active agents meeting `criteria`, in id order: what every job that visits "each
    active agent" walks. Read `batch` at a time, after the last id seen, so no result set stays open
    while the caller works and commits on each agent, and 10,000 agents are never held at once."""
    after = 0
    while True:
        ids = db.session.scalars(
            select(Agent.id)
            .where(Agent.active.is_(True), Agent.id > after, *criteria)
            .order_by(Agent.id)
            .limit(batch)
        ).all()
        yield from ids
        if len(ids) < batch:
            return
        after = ids[-1]


def core_totals(agent_id: int) -> tuple[int, int]:
    """(active core tokens, active core count) of an agent: what budgets and the circuit breaker watch.

    One primary-key read of the totals the database triggers keep (pending changes are flushed first,
    so the triggers have run); O(1) however many memories the agent holds."""
    row = db.session.execute(
        select(Agent.core_tokens, Agent.core_count).where(Agent.id == agent_id)
    ).one_or_none()
    return (int(row[0]), int(row[1])) if row else (0, 0)
