"""`sessions list` and `audit list`: the console's sessions table and audit timeline, on the command
line. Metadata only, like the console: ids, counts, token figures, actors, actions, times. `audit
partitions`: the history tables' monthly partitions on PostgreSQL (the maintenance job, run here)."""

from __future__ import annotations

import click
from flask.cli import with_appcontext
from sqlalchemy import select
from sqlalchemy.orm import defer

from jobs.partitions import create_history_partitions
from models import RefinementSession, db
from models.history.session import SESSION_STATUSES
from models.parsing import MAX_ID
from models.readmodels.common import agent_names
from models.readmodels.timeline import TimelineFilters, activity, timeline

from .common import DomainErrorsAsMessages, emit, parse_when, resolve_agent


@click.group("sessions", cls=DomainErrorsAsMessages)
def sessions_cli() -> None:
    """Refinement sessions."""


@sessions_cli.command("list")
@click.argument("agent", required=False)
@click.option(
    "--status", type=click.Choice(SESSION_STATUSES), default=None, help="Only sessions in this status."
)
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True)
@with_appcontext
def list_sessions(agent: str | None, status: str | None, limit: int) -> None:
    """The newest refinement sessions (of AGENT, or of every agent): status, trigger, operations, tokens."""
    stmt = select(RefinementSession).options(defer(RefinementSession.summary, raiseload=True))
    if agent:
        stmt = stmt.where(RefinementSession.agent_id == resolve_agent(agent).id)
    if status:
        stmt = stmt.where(RefinementSession.status == status)
    rows = db.session.scalars(stmt.order_by(RefinementSession.id.desc()).limit(limit)).all()
    names = agent_names(s.agent_id for s in rows)
    emit(
        {
            "sessions": [
                {
                    "id": s.id,
                    "agent": names[s.agent_id].name if s.agent_id in names else s.agent_id,
                    "status": s.status,
                    "trigger": s.trigger,
                    "started_at": s.started_at,
                    "ops": s.ops_count,
                    "tokens_before": s.tokens_before,
                    "tokens_after": s.tokens_after,
                    "model": s.model,
                }
                for s in rows
            ]
        }
    )


@click.group("audit", cls=DomainErrorsAsMessages)
def audit_cli() -> None:
    """The audit log."""


@audit_cli.command("list")
@click.argument("agent", required=False)
@click.option(
    "--session",
    "session_id",
    type=click.IntRange(1, MAX_ID),
    default=None,
    help="Only this session's operations.",
)
@click.option("--actor", default=None, help="admin, agent, system, or an exact actor such as admin:3.")
@click.option("--action", default=None, help="An action name, e.g. consolidate, rollback, protect.")
@click.option("--since", default=None, help="ISO 8601; without an offset it is UTC.")
@click.option("--until", default=None, help="ISO 8601; without an offset it is UTC.")
@click.option("--limit", type=click.IntRange(1, 500), default=50, show_default=True)
@with_appcontext
def list_audit(
    agent: str | None,
    session_id: int | None,
    actor: str | None,
    action: str | None,
    since: str | None,
    until: str | None,
    limit: int,
) -> None:
    """Operations newest first (of AGENT, or of every agent), one line each: the op_id `rollback op`
    takes, when, who, what, how many memories and the change in active core tokens."""
    filters = TimelineFilters(
        actor=actor,
        action=action,
        session_id=session_id,
        since=parse_when(since) if since else None,
        until=parse_when(until) if until else None,
    )
    if agent:
        page = timeline(agent_id=resolve_agent(agent).id, filters=filters, per_page=limit)
    else:
        page = activity(filters, per_page=limit)
    names = agent_names(op.first.agent_id for op in page.ops if op.first.agent_id is not None)
    emit(
        {
            "operations": [
                {
                    "op_id": op.op_id,
                    "at": op.created_at,
                    "agent": names[op.first.agent_id].name if op.first.agent_id in names else None,
                    "actor": op.actor,
                    "actions": ", ".join(f"{a}×{n}" if n > 1 else a for a, n in op.actions),
                    "memories": len(op.memory_ids),
                    "core_token_delta": op.token_delta if op.touches_memories else None,
                    "session": op.session_id,
                }
                for op in page.ops
            ]
        }
    )


@audit_cli.command("partitions")
@click.option(
    "--ahead",
    type=click.IntRange(1, 24),
    default=None,
    help="Months after the current one to create (default: HISTORY_PARTITIONS_AHEAD).",
)
@with_appcontext
def partitions_command(ahead: int | None) -> None:
    """Create the monthly partitions of audit_logs, events and change_log for the current month and the
    months ahead (PostgreSQL; nothing to do on SQLite), as the daily job does, and report what was created,
    what is blocked by rows in a default partition, and every warning."""
    emit(create_history_partitions(ahead))
