"""Models and the domain rules that guard them.

Import order matters only for SQLAlchemy's mapper registry: every table is defined here so
`db.metadata` is complete for Alembic and for `db.create_all()` in a scratch database.
"""

from models.admins.mechanic import MechanicGrant, MechanicView
from models.admins.sign_ins import SignInEvent
from models.admins.user import User, create_admin
from models.agents.agent import Agent
from models.changes.patch_tables import ProposedPatch
from models.db import atomic, db, estimate_tokens, utcnow
from models.errors import (
    ConstitutionalLocked,
    DomainError,
    FeatureDisabled,
    ImmutableMemory,
    NotFound,
    RollbackConflict,
    ValidationFailed,
)
from models.history.audit import AuditContent, AuditLog
from models.history.changelog import ChangeLogEntry, ThreadRevision
from models.history.events import OpEvent
from models.history.session import RefinementSession
from models.integrations.checkpoint import SupervisorCheckpoint
from models.integrations.langgraph_checkpoints import LangGraphBlob, LangGraphCheckpoint, LangGraphWrite
from models.integrations.langgraph_store import StoreItem
from models.memories.memory import IMMUTABLE_TAGS, MEMORY_TYPES, AgentMemory, content_hash
from models.retrieval.query import (
    search as search_memories,  # also declares memory.query's indexes on agent_memories (matching.py)
)
from models.retrieval.relations import MemoryEmbedding, MemoryRelation, PairFingerprint

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
