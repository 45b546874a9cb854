"""Refinement sessions as the console lists them: never their agent-authored summary, which is
deferred and raise-loaded (ARCHITECTURE.md, "Privacy")."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Select, func, select
from sqlalchemy.orm import defer

from models.db import db
from models.history.session import RefinementSession


def session_rows() -> Select[RefinementSession]:
    """SELECT refinement sessions, the summary deferred and raise-loaded."""
    return select(RefinementSession).options(defer(RefinementSession.summary, raiseload=True))


def latest_sessions(agent_ids: Sequence[int]) -> dict[int, RefinementSession]:
    """The newest refinement session of each agent (any status)."""
    if not agent_ids:
        return {}
    newest = (
        select(func.max(RefinementSession.id))
        .where(RefinementSession.agent_id.in_(list(agent_ids)))
        .group_by(RefinementSession.agent_id)
    )
    sessions = db.session.scalars(session_rows().where(RefinementSession.id.in_(newest))).all()
    return {s.agent_id: s for s in sessions}


def recent_sessions(agent_id: int, limit: int = 25) -> list[RefinementSession]:
    """An agent's sessions, newest first. The agent-authored summary is never loaded."""
    return list(
        db.session.scalars(
            session_rows()
            .where(RefinementSession.agent_id == agent_id)
            .order_by(RefinementSession.id.desc())
            .limit(limit)
        ).all()
    )


def session_metadata(session_id: int) -> RefinementSession | None:
    """One session, its summary never loaded; None if there is none with this id."""
    return db.session.scalar(session_rows().where(RefinementSession.id == session_id))
