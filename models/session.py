"""Refinement sessions: one supervised pass of an agent over its own core memory."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, DateTime, ForeignKey, Index, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from .db import db, utcnow

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


class RefinementSession(db.Model):
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

    @property
    def finished(self) -> bool:
        return self.status in FINISHED_STATUSES
