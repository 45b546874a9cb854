"""Held consent patches as the console shows them (docs/explanation/governance.md, "Consent"): metadata only —
field, policy, state, age, who proposed it, how it was decided. The proposed text (`changes`) is never loaded:
it raises if a template reaches for it (docs/explanation/architecture.md, "Privacy: who may read memory
text")."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import defer

from models.changes.patch_tables import ProposedPatch
from models.db import db

LIMIT = 50


def held_patches(agent_id: int, limit: int = LIMIT) -> list[ProposedPatch]:
    """The agent's patches, pending ones first, newest first within each (bounded)."""
    return list(
        db.session.scalars(
            select(ProposedPatch)
            .options(defer(ProposedPatch.changes, raiseload=True))
            .where(ProposedPatch.agent_id == agent_id)
            .order_by((ProposedPatch.status != "pending"), ProposedPatch.id.desc())
            .limit(limit)
        )
    )


def pending_count(agent_id: int) -> int:
    return int(
        db.session.scalar(
            select(func.count())
            .select_from(ProposedPatch)
            .where(ProposedPatch.agent_id == agent_id, ProposedPatch.status == "pending")
        )
        or 0
    )
