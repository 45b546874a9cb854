"""Refinement sessions as the console lists them: never their agent-authored summary, which is
deferred and raise-loaded (docs/explanation/architecture.md, "Privacy: who may read memory text")."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache

from sqlalchemy import Select, and_, func, or_, select
from sqlalchemy.orm import defer

from models.admins.user import User
from models.db import db
from models.history.audit import AuditLog
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


@dataclass(frozen=True)
class SessionRollback:
    """The rollback that currently undoes a session: its operation, who ran it and when."""

    session_id: int
    op_id: str
    actor: str
    at: datetime


def live_rollbacks(sessions: Sequence[RefinementSession]) -> dict[int, SessionRollback]:
    """For each given session that a session rollback undid and nobody has undone since, that rollback.

    A rollback undone by a later rollback of its operation no longer counts, and one whose undoing was
    itself undone counts again: each rollback is live when no live rollback targets it. Reads only the
    metadata columns of each agent's rollback records since its oldest session given (never a snapshot)."""
    if not sessions:
        return {}
    wanted = {s.id for s in sessions}
    since: dict[
        int, datetime
    ] = {}  # each agent's records from its oldest session shown: one index range each
    for s in sessions:
        since[s.agent_id] = min(since.get(s.agent_id, s.started_at), s.started_at)
    rows = db.session.execute(
        select(AuditLog.op_id, AuditLog.actor, AuditLog.created_at, AuditLog.data)
        .where(
            or_(
                *(
                    and_(AuditLog.agent_id == agent, AuditLog.created_at >= start)
                    for agent, start in since.items()
                )
            ),
            AuditLog.action == "rollback",
        )
        .order_by(AuditLog.id)
    ).all()
    of_session: dict[str, SessionRollback] = {}
    targets: dict[str, list[str]] = defaultdict(list)  # an operation → the rollbacks that undid it
    for op_id, actor, created_at, data in rows:
        scope = data.get("rollback_of") if isinstance(data, dict) else None
        if not isinstance(scope, dict):
            continue
        target = scope.get("target_op_id")
        if scope.get("rollback_of") == "operation" and isinstance(target, str):
            if op_id not in targets[target]:
                targets[target].append(op_id)
        elif scope.get("rollback_of") == "session" and scope.get("session_id") in wanted:
            of_session.setdefault(op_id, SessionRollback(scope["session_id"], op_id, actor, created_at))

    @cache
    def live(op_id: str) -> bool:
        return not any(live(by) for by in targets.get(op_id, ()) if by != op_id)

    out: dict[int, SessionRollback] = {}
    for op_id, rollback in of_session.items():  # oldest first: the newest live one wins
        if live(op_id):
            out[rollback.session_id] = rollback
    return out


@dataclass(frozen=True)
class SessionStatus:
    """What a page says about a session: its status code (the console's glossary words it), and when
    a rollback still in force undid it, that rollback and who ran it (an admin's email). The one place
    a session's status is derived: the dashboard, the agent's sessions and the session page read it."""

    code: str
    rollback: SessionRollback | None = None
    by: str | None = None

    @property
    def rolled_back(self) -> bool:
        return self.code == "rolled_back"


def session_status(
    session: RefinementSession, rollback: SessionRollback | None, emails: dict[int, str]
) -> SessionStatus:
    """The session's own status, unless a rollback still in force undid it since. A session the circuit
    breaker terminated was rolled back by the breaker itself: its own status already says so, or how far
    the rollback went (`RefinementSession.breaker_outcome`)."""
    if rollback is None or session.status == "terminated":
        return SessionStatus(session.breaker_outcome)
    kind, _, who = rollback.actor.partition(":")
    if kind == "admin" and who.isdigit() and int(who) in emails:
        by = emails[int(who)]
    else:
        by = f"{kind} · {who}" if who else kind
    return SessionStatus("rolled_back", rollback, by)


def session_statuses(sessions: Sequence[RefinementSession | None]) -> dict[int, SessionStatus]:
    """`session_status` of each session (None entries skipped), in two queries at most."""
    present = [s for s in sessions if s is not None]
    rollbacks = live_rollbacks([s for s in present if s.finished])
    admins = {
        int(who)
        for kind, _, who in (r.actor.partition(":") for r in rollbacks.values())
        if kind == "admin" and who.isdigit()
    }
    emails: dict[int, str] = {}
    if admins:
        for user_id, email in db.session.execute(
            select(User.id, User.email).where(User.id.in_(sorted(admins)))
        ):
            emails[user_id] = email
    return {s.id: session_status(s, rollbacks.get(s.id), emails) for s in present}
