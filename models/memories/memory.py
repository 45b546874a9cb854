"""Agent memories: the rows every rule in this product protects, and their read scopes.

Rows are written only by the mutation path in `models.changes` (`mutations`, `ttl`, `dedup`); this module defines the shape, the derived
fields (hash, token estimate) and the scopes that keep soft-deleted rows out of every read.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    Select,
    String,
    Text,
    select,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from models.db import Model, estimate_tokens, utcnow
from models.memories.fields import (  # noqa: F401 - MEMORY_TYPES and MAX_CONTENT_CHARS are imported from here too
    CONTENT,
    IMPORTANCE_MAX,
    IMPORTANCE_MIN,
    MAX_CONTENT_CHARS,
    MEMORY_TYPE_LENGTH,
    MEMORY_TYPES,
    TEXT_RULES,
)

JOURNAL_WINDOW = timedelta(weeks=1)
# docs/spec/002-refinement-lessons.md: memories carrying these tags are immutable for every agent path.
IMMUTABLE_TAGS = frozenset({"audio", "somatic", "voice"})

# Columns captured in an audit snapshot besides the content (which goes to audit_contents).
SNAPSHOT_FIELDS = (
    "id",
    "agent_id",
    "memory_type",
    "content_hash",
    "token_estimate",
    "tags",
    "category",
    "importance",
    "pinned",
    "constitutional",
    "created_at",
    "updated_at",
    "last_accessed_at",
    "deleted_at",
    "purge_at",
    "user_id",
    "thread_id",
    "run_id",
    "actor_id",
    "role",
)
DATETIME_FIELDS = frozenset({"created_at", "updated_at", "last_accessed_at", "deleted_at", "purge_at"})


def content_hash(content: str) -> str:
    """SHA-256 of the stripped, lower-cased content: the content-blind identity used by dedup."""
    return hashlib.sha256(content.strip().lower().encode("utf-8")).hexdigest()


def content_fields(content: str) -> dict[str, str | int]:
    """The content column and the columns derived from it, which always change together."""
    return {
        "content": content,
        "content_hash": content_hash(content),
        "token_estimate": estimate_tokens(content),
    }


def immutable_tags(tags: list | None) -> set[str]:
    """Which of IMMUTABLE_TAGS (any case) these tags carry: for a row read with Core as for an object."""
    return {t.lower() for t in (tags or []) if isinstance(t, str)} & IMMUTABLE_TAGS


class AgentMemory(Model):
    __tablename__ = "agent_memories"
    __table_args__ = (
        # The database's own copy of the field rules (models/memories/fields.py), for writers outside the app.
        CheckConstraint(f"memory_type IN ({', '.join(repr(t) for t in MEMORY_TYPES)})", name="memory_type"),
        CheckConstraint(f"length(content) BETWEEN 1 AND {CONTENT.max_length}", name="content_length"),
        CheckConstraint(
            f"importance IS NULL OR importance BETWEEN {IMPORTANCE_MIN} AND {IMPORTANCE_MAX}",
            name="importance_range",
        ),
        # Prompt assembly and the token count read (agent, type) over active rows, oldest first.
        Index("ix_agent_memories_agent_type_active", "agent_id", "memory_type", "deleted_at", "created_at"),
        # Content-blind dedup compares active core rows only (migration 0007: soft-deletes skip it).
        Index(
            "ix_agent_memories_active_core_hash",
            "agent_id",
            "content_hash",
            postgresql_where=text("memory_type = 'core' AND deleted_at IS NULL"),
            sqlite_where=text("memory_type = 'core' AND deleted_at IS NULL"),
        ),
        Index("ix_agent_memories_purge_at", "purge_at"),
        # The context block's `context: all` categories, found without reading the agent's other memories
        # (migration 0025).
        Index(
            "ix_agent_memories_agent_category_active",
            "agent_id",
            "category",
            postgresql_where=text("deleted_at IS NULL"),
            sqlite_where=text("deleted_at IS NULL"),
        ),
        # The console's locked (constitutional) count per agent, read without the rows (migration 0014).
        Index(
            "ix_agent_memories_locked_active",
            "agent_id",
            postgresql_where=text("constitutional AND deleted_at IS NULL"),
            sqlite_where=text("constitutional = 1 AND deleted_at IS NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    agent_id: Mapped[int] = mapped_column(ForeignKey("agents.id"), nullable=False)
    memory_type: Mapped[str] = mapped_column(String(MEMORY_TYPE_LENGTH), nullable=False, default="core")
    content: Mapped[str] = mapped_column(Text, nullable=False)
    content_hash: Mapped[str] = mapped_column(String(64), nullable=False)
    token_estimate: Mapped[int] = mapped_column(Integer, nullable=False)
    tags: Mapped[list] = mapped_column(JSON, nullable=False, default=list)
    category: Mapped[str | None] = mapped_column(TEXT_RULES["category"].column())
    importance: Mapped[int | None] = mapped_column(Integer)
    pinned: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    constitutional: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)
    last_accessed_at: Mapped[datetime | None] = mapped_column(DateTime)
    deleted_at: Mapped[datetime | None] = mapped_column(DateTime)
    purge_at: Mapped[datetime | None] = mapped_column(DateTime)
    user_id: Mapped[str | None] = mapped_column(TEXT_RULES["user_id"].column())
    thread_id: Mapped[str | None] = mapped_column(TEXT_RULES["thread_id"].column())
    run_id: Mapped[str | None] = mapped_column(TEXT_RULES["run_id"].column())
    actor_id: Mapped[str | None] = mapped_column(TEXT_RULES["actor_id"].column())
    role: Mapped[str | None] = mapped_column(TEXT_RULES["role"].column())

    def set_content(self, content: str) -> None:
        """Content and its derived fields change together, always."""
        for name, value in content_fields(content).items():
            setattr(self, name, value)

    @property
    def is_active(self) -> bool:
        return self.deleted_at is None

    @property
    def immutable_tags(self) -> set[str]:
        return immutable_tags(self.tags)

    @staticmethod
    def without_immutable_tags(dialect: str):
        """SQL: the row carries none of IMMUTABLE_TAGS (any case) — the set-based twin of `immutable_tags`."""
        tags = ", ".join(f"'{t}'" for t in sorted(IMMUTABLE_TAGS))
        if dialect == "sqlite":
            return text(
                "NOT EXISTS (SELECT 1 FROM json_each(agent_memories.tags) AS t "
                f"WHERE lower(t.value) IN ({tags}))"
            )
        return text(
            "NOT EXISTS (SELECT 1 FROM json_array_elements_text(agent_memories.tags) AS t(value) "
            f"WHERE lower(t.value) IN ({tags}))"
        )

    def __repr__(self) -> str:  # never the content: reprs end up in logs and tracebacks
        return f"<AgentMemory #{self.id} agent={self.agent_id} {self.memory_type}>"

    # ----- scopes: each returns a Select that callers may refine further -----

    @classmethod
    def _scoped(cls, agent_id: int | None, *criteria) -> Select:
        stmt = select(cls).where(*criteria)
        if agent_id is not None:
            stmt = stmt.where(cls.agent_id == agent_id)
        return stmt

    @classmethod
    def active(cls, agent_id: int | None = None) -> Select:
        return cls._scoped(agent_id, cls.deleted_at.is_(None))

    @classmethod
    def deleted(cls, agent_id: int | None = None) -> Select:
        return cls._scoped(agent_id, cls.deleted_at.is_not(None))

    @classmethod
    def constitutional_scope(cls, agent_id: int | None = None) -> Select:
        return cls._scoped(agent_id, cls.deleted_at.is_(None), cls.constitutional.is_(True))

    @classmethod
    def non_constitutional(cls, agent_id: int | None = None) -> Select:
        return cls._scoped(agent_id, cls.deleted_at.is_(None), cls.constitutional.is_(False))

    @classmethod
    def active_core(cls, agent_id: int) -> Select:
        return cls.active(agent_id).where(cls.memory_type == "core").order_by(cls.created_at, cls.id)

    @classmethod
    def for_prompt(cls, agent_id: int, now: datetime | None = None) -> Select:
        """Active core memories plus active journals of the last week, oldest first."""
        since = (now or utcnow()) - JOURNAL_WINDOW
        return (
            cls.active(agent_id)
            .where((cls.memory_type == "core") | ((cls.memory_type == "journal") & (cls.created_at >= since)))
            .order_by(cls.created_at, cls.id)
        )
