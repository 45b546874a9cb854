"""Models and the domain rules that guard them.

Import order matters only for SQLAlchemy's mapper registry: every table is defined here so
`db.metadata` is complete for Alembic and for `db.create_all()` in a scratch database.
"""

from .agent import Agent
from .audit import AuditContent, AuditLog
from .changelog import ChangeLogEntry, ThreadRevision
from .checkpoint import SupervisorCheckpoint
from .db import atomic, db, estimate_tokens, utcnow
from .errors import (
    ConstitutionalLocked,
    DomainError,
    FeatureDisabled,
    ImmutableMemory,
    NotFound,
    RollbackConflict,
    ValidationFailed,
)
from .events import OpEvent
from .langgraph_checkpoints import LangGraphBlob, LangGraphCheckpoint, LangGraphWrite
from .langgraph_store import StoreItem
from .mechanic import MechanicGrant, MechanicView
from .memory import IMMUTABLE_TAGS, MEMORY_TYPES, AgentMemory, content_hash
from .patches import ProposedPatch
from .query import search as search_memories  # also declares memory.query's indexes on agent_memories
from .relations import MemoryEmbedding, MemoryRelation, PairFingerprint
from .session import RefinementSession
from .sign_ins import SignInEvent
from .user import User, create_admin

__all__ = [
    "Agent",
    "AgentMemory",
    "AuditContent",
    "AuditLog",
    "ChangeLogEntry",
    "ConstitutionalLocked",
    "DomainError",
    "IMMUTABLE_TAGS",
    "ImmutableMemory",
    "LangGraphBlob",
    "LangGraphCheckpoint",
    "LangGraphWrite",
    "MEMORY_TYPES",
    "MechanicGrant",
    "MechanicView",
    "MemoryEmbedding",
    "MemoryRelation",
    "PairFingerprint",
    "FeatureDisabled",
    "NotFound",
    "OpEvent",
    "ProposedPatch",
    "RefinementSession",
    "RollbackConflict",
    "StoreItem",
    "SignInEvent",
    "SupervisorCheckpoint",
    "ThreadRevision",
    "User",
    "ValidationFailed",
    "atomic",
    "content_hash",
    "create_admin",
    "db",
    "estimate_tokens",
    "search_memories",
    "utcnow",
]
