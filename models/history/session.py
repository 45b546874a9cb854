"""Refinement sessions: one supervised pass of an agent over its own core memory."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from sqlalchemy import JSON, DateTime, ForeignKey, Index, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from models.db import Model, db, utcnow

SESSION_STATUSES = (
    "queued",
    "running",
    "completed",
    "incomplete",
    "terminated",
    "consent_declined",
    "skipped",
    "failed",
    "interrupted",
)
FINISHED_STATUSES = frozenset(SESSION_STATUSES) - {"queued", "running"}


class RefinementSession(Model):
    __tablename__ = "refinement_sessions"
    __table_args__ = (
        Index("ix_refinement_sessions_agent_started", "agent_id", "started_at"),
        Index("ix_refinement_sessions_status", "status"),
        # Single flight, second wall: the database holds at most one running session per agent.
        Index(
            "uq_refinement_sessions_one_running",
            "agent_id",
            unique=True,
            sqlite_where=text("status = 'running'"),
            postgresql_where=text("status = 'running'"),
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    agent_id: Mapped[int] = mapped_column(ForeignKey("agents.id"), nullable=False)
    trigger: Mapped[str] = mapped_column(String(32), nullable=False)
    status: Mapped[str] = mapped_column(String(24), nullable=False, default="queued")
    phase: Mapped[str | None] = mapped_column(String(48))
    started_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime)
    tokens_before: Mapped[int | None] = mapped_column(Integer)
    tokens_after: Mapped[int | None] = mapped_column(Integer)
    count_before: Mapped[int | None] = mapped_column(Integer)
    count_after: Mapped[int | None] = mapped_column(Integer)
    ops_count: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    stats: Mapped[dict] = mapped_column(JSON, nullable=False, default=dict)
    summary: Mapped[str | None] = mapped_column(Text)
    model: Mapped[str | None] = mapped_column(String(200))
    llm_turns: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    prompt_tokens: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    cached_tokens: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    job_id: Mapped[str | None] = mapped_column(String(64))
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime)
    error: Mapped[str | None] = mapped_column(Text)
    # A breaker trip that could not undo everything (migration 0023): the operations it left in place
    # because a later change depends on them, {"op_ids": [...], "memory_ids": [...]}; ids only.
    left_in_place: Mapped[dict | None] = mapped_column(JSON)
    # What the session's own operations removed from the agent's active core memory, net (migration
    # 0023): the breaker's measure, which the agent's other writers meanwhile do not move.
    removed_tokens: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    removed_count: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")

    @property
    def finished(self) -> bool:
        return self.status in FINISHED_STATUSES

    @property
    def partly_rolled_back(self) -> bool:
        """Terminated by the breaker, with operations left in place (`left_in_place` names them)."""
        return self.status == "terminated" and bool((self.left_in_place or {}).get("op_ids"))

    @property
    def breaker_outcome(self) -> str:
        """A terminated session's status as an admin reads it: `terminated` (rolled back),
        `partly_rolled_back` (the breaker left operations a later change depends on) or `not_rolled_back`
        (the database refused the rollback itself); any other session's own status."""
        if not self.partly_rolled_back:
            return self.status
        return "not_rolled_back" if "error" in (self.left_in_place or {}) else "partly_rolled_back"


# ----- one lifecycle for every session: refinement, consolidation and the demo alike -----

# The one stats vocabulary a session's `stats` may hold: key -> what it counts.
STATS: dict[str, str] = {
    "dedup_removed": "exact duplicates the content-blind dedup soft-deleted before the session",
    "dedup_tokens": "core tokens those duplicates held",
    "consent_reason_chars": "length of the reason the model gave with its consent answer (never its words)",
    "consolidations": "consolidate operations applied",
    "consolidated": "memories merged away by them",
    "updated": "update operations applied",
    "deleted": "memories deleted",
    "protected": "memories made constitutional",
    "breaker_trips": "times the circuit breaker rolled the session back",
    "pairs_considered": "candidate pairs a consolidation run looked at",
    "pairs_checked": "pairs it got a verdict on",
    "refused": "tool calls or merges refused by a rule (they changed nothing)",
    "ledger_pages": "pages the ledger was split into (only when it exceeds REFINEMENT_LEDGER_MAX_TOKENS)",
    "ledger_pages_turned": "next_page calls the model made (page N shown = this + 1)",
}


def start_session(
    agent_id: int,
    trigger: str,
    *,
    model: str | None,
    session_id: int | None = None,
    job_id: str | None = None,
    phase: str = "starting",
) -> RefinementSession:
    """Open a session as running (taking over its queued row when there is one), in the caller's
    unit of work. The partial unique index refuses a second running session for the agent."""
    session = db.session.get(RefinementSession, session_id) if session_id else None
    if session is None:
        session = RefinementSession(agent_id=agent_id, trigger=trigger)
        db.session.add(session)
    session.status = "running"
    session.phase = phase
    session.started_at = session.heartbeat_at = utcnow()
    session.model = model
    session.job_id = job_id or session.job_id
    db.session.flush()
    return session


def set_baseline(session: RefinementSession, tokens: int, count: int) -> None:
    """The active core totals the breaker and the outcome are measured against."""
    session.tokens_before, session.count_before = tokens, count


def account_turn(session: RefinementSession, turn) -> None:
    """One model call: its token usage (anything with prompt/completion/cached_tokens)."""
    session.llm_turns += 1
    session.prompt_tokens += turn.prompt_tokens
    session.completion_tokens += turn.completion_tokens
    session.cached_tokens += getattr(turn, "cached_tokens", 0) or 0
    session.heartbeat_at = utcnow()


class HasStats(Protocol):
    """Anything holding a session's STATS: the ORM row, or a tool call's Core read of it
    (`models/refinement/toolbox.py`, `SessionState`)."""

    stats: dict


def count(session: HasStats, key: str, n: int = 1) -> None:
    """Add to one of the session's STATS; an unknown key is a programming error, not a new word."""
    if key not in STATS:
        raise KeyError(f"{key!r} is not in the session stats vocabulary")
    stats = dict(session.stats or {})
    stats[key] = stats.get(key, 0) + n
    session.stats = stats


def finish_session(
    session: RefinementSession,
    status: str,
    *,
    totals: tuple[int, int],
    error: str | None = None,
    summary: str | None = None,
) -> None:
    """Close a session with its outcome and the agent's active core totals after it."""
    if status not in FINISHED_STATUSES:
        raise ValueError(f"{status!r} is not a finished status")
    session.status = session.phase = status
    session.finished_at = utcnow()
    session.tokens_after, session.count_after = totals
    if error:
        session.error = error
    if summary is not None:
        session.summary = summary
