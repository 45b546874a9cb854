"""Models and the domain rules that guard them.

Import order matters only for SQLAlchemy's mapper registry: every table is defined here so
`db.metadata` is complete for Alembic and for `db.create_all()` in a scratch database.
"""

from .agent import Agent
from .audit import AuditContent, AuditLog
from .db import atomic, db, estimate_tokens, utcnow
from .errors import (
    ConstitutionalLocked,
    DomainError,
    ImmutableMemory,
    NotFound,
    RollbackConflict,
    ValidationFailed,
)
from .mechanic import MechanicGrant, MechanicView
from .memory import IMMUTABLE_TAGS, MEMORY_TYPES, AgentMemory, content_hash
from .session import RefinementSession
from .user import User, create_admin

__all__ = [
    "Agent",
    "AgentMemory",
    "AuditContent",
    "AuditLog",
    "ConstitutionalLocked",
    "DomainError",
    "IMMUTABLE_TAGS",
    "ImmutableMemory",
    "MEMORY_TYPES",
    "MechanicGrant",
    "MechanicView",
    "NotFound",
    "RefinementSession",
    "RollbackConflict",
    "User",
    "ValidationFailed",
    "atomic",
    "content_hash",
    "create_admin",
    "db",
    "estimate_tokens",
    "utcnow",
]
