"""The Knife: runs the tools an agent's model calls inside a refinement session, and guards them.

The tools themselves — their arguments, descriptions and which of them mutate — are declared in
`tools.py`; this module dispatches a call to its handler. Every call goes through
`RefinementToolbox.call`, which never raises for anything the model sends: a refusal is a small JSON
object the model can read, and it changes nothing. The toolbox holds no state (the session row does), and
the rules that make a session safe are enforced here, in code, whatever the model asks:

- the hard cap: at most 10 applied mutating operations (consolidate, update, delete, protect);
- the circuit breaker: after every mutating operation, what the session's own operations took from
  the agent's active core tokens and count (kept on the session row, each call's measured under the
  agent's row lock: the agent's own writes meanwhile do not count) is compared with the session's start; below the agent's `min_retention` the session is rolled
  back in the same transaction as the operation that tripped it and marked terminated, whatever the
  rollback meets: an operation a later change depends on is left in place and named on the session
  (`left_in_place`), every other one undone exactly. Every later call answers "session rolled back,
  terminated" and changes nothing;
- the locks of the mutation path (constitutional, immutable tags, own memories only).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Any, NamedTuple

from pydantic import ValidationError
from sqlalchemy import bindparam, func, select, update
from sqlalchemy.exc import DBAPIError

from models.agents.agent import Agent, core_totals
from models.changes import write
from models.changes.rules import AGENT_ACTOR
from models.changes.timemachine import rollback_session
from models.db import LIKE_ESCAPE, atomic, db, like_pattern
from models.errors import DomainError
from models.history.audit import AuditLog, new_op_id, write_audit
from models.history.session import RefinementSession, finish_session
from models.history.session import count as count_stat
from models.memories.memory import AgentMemory
from models.parsing import describe_problems
from models.refinement.tools import (
    MUTATING,
    RETENTION_NEUTRAL,
    TOOL_ARGS,
    CompleteArgs,
    ConsolidateArgs,
    DeleteArgs,
    NextPageArgs,
    ProtectArgs,
    SearchArgs,
    UpdateArgs,
)

HARD_CAP = 10
MAX_SEARCH_RESULTS = 50
TERMINATED_MESSAGE = "session rolled back, terminated"


class NoNextPage(DomainError):
    code = "no_next_page"


def _error(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"ok": False, "error": code, "message": message, **extra}


def _parse_day(value: str | None, field: str, end: bool):
    # The one parser for untrusted times (models/parsing.py): a bare `until` date means the whole day.
    from models.parsing import BadInput, parse_utc

    try:
        return parse_utc(value, field=field, end_of_day=end)
    except BadInput as err:
        raise DomainError(f"{field} must be a date like 2025-03-01") from err


class RefinementToolbox:
    """Executes one session's tool calls. Holds no state of its own: the session row is the truth,
    so a call from a new process after a crash sees the same cap, counts and termination."""

    def __init__(self, session_id: int) -> None:
        self.session_id = session_id

    def _session(self) -> RefinementSession:
        """The session as an ORM object, row-locked and fresh: for closing it (rare); calls use `_state`."""
        session = db.session.get(
            RefinementSession, self.session_id, populate_existing=True, with_for_update=True
        )
        if session is None:
            raise LookupError(f"refinement session {self.session_id} not found")
        return session

    def _state(self, mutating: bool) -> SessionState:
        """What a tool call reads of its session, row-locked, in one Core statement (an ORM load and the
        flush of its changes were a third of a call's cost). A mutating call locks the agent's row with it
        (the row the mutation path takes first anyway: models/changes/rows.py) and reads its core totals
        there, so what changes them until the call commits is the call's own doing."""
        row = db.session.execute(_STATE_WRITE if mutating else _STATE_READ, {"id": self.session_id}).first()
        if row is None:
            raise LookupError(f"refinement session {self.session_id} not found")
        state = SessionState(**row._mapping)
        if not mutating:  # unlocked: others may change them; a call that changes nothing counts nothing
            state.agent_tokens = state.agent_count = None
        return state

    def _save(self, state: SessionState, read: tuple[int, dict]) -> Retention | None:
        """Write the call's changes to the session's counters, if it made any — with what a mutating call
        removed from the agent's active core (its totals at the call's start, locked, minus now) added to
        the session's own `removed_tokens` / `removed_count`. The row is the session's one home: nothing
        keeps a copy in step with it (the session loop reads it again after each turn's calls). Returns the
        retention figures as they stand after the call, read by the same statement (RETURNING), so the
        breaker check after a mutating call costs no round trip of its own."""
        if (state.ops_count, state.stats) == read:
            return None
        values = {"ops_count": state.ops_count, "stats": state.stats}
        at_start = {"agent_tokens": state.agent_tokens, "agent_count": state.agent_count}
        figures = Retention(
            *db.session.execute(_STATE_SAVE, {"session": self.session_id, **values, **at_start}).one()
        )
        return figures

    def call(self, name: str, arguments: str | dict | None) -> dict[str, Any]:
        """Run one tool call. Never raises for model input; returns a JSON-able result."""
        try:
            with atomic(propagates=True):  # _call catches no DomainError: a refusal undoes the whole call
                return self._call(name, arguments)
        except DomainError as err:
            return _error(err.code, err.message, **err.details)

    def _call(self, name: str, arguments: str | dict | None) -> dict[str, Any]:
        session = self._state(mutating=name in MUTATING)
        if session.status == "terminated":
            return _error("terminated", TERMINATED_MESSAGE)
        if session.status != "running":
            return _error(
                "session_closed", f"this session is {session.status}; no further calls are accepted"
            )
        if name not in TOOL_ARGS:
            return _error("unknown_tool", f"unknown tool {name!r}", tools=sorted(TOOL_ARGS))
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as err:
                return _error(
                    "bad_arguments", f"arguments are not valid JSON ({err.msg} at column {err.colno})"
                )
        if not isinstance(arguments, dict):
            return _error("bad_arguments", "arguments must be a JSON object")
        try:
            args = TOOL_ARGS[name].model_validate(arguments)
        except ValidationError as err:
            return _error("bad_arguments", describe_problems(err, "arguments"))
        if name in MUTATING and session.ops_count >= HARD_CAP:
            return _error(
                "hard_cap",
                f"hard cap reached: at most {HARD_CAP} operations per session; call complete_refinement now",
            )
        read = (session.ops_count, dict(session.stats))
        handler = getattr(self, f"_{name}")
        result = handler(session, args)
        if name in MUTATING:
            session.ops_count += 1
        figures = self._save(session, read)
        if name in MUTATING and name not in RETENTION_NEUTRAL and self._breaker_tripped(session, figures):
            return self._terminate()
        return {"ok": True, **result}

    # ----- the tools -----

    def _search_memories(self, session: SessionState, args: SearchArgs) -> dict[str, Any]:
        stmt = AgentMemory.active_core(session.agent_id).where(
            AgentMemory.content.ilike(like_pattern(args.query), escape=LIKE_ESCAPE)
        )
        since, until = _parse_day(args.since, "since", False), _parse_day(args.until, "until", True)
        if since is not None:
            stmt = stmt.where(AgentMemory.created_at >= since)
        if until is not None:
            stmt = stmt.where(AgentMemory.created_at <= until)
        rows = db.session.scalars(stmt.limit(MAX_SEARCH_RESULTS + 1)).all()
        return {
            "count": min(len(rows), MAX_SEARCH_RESULTS),
            "truncated": len(rows) > MAX_SEARCH_RESULTS,
            "results": [ledger_entry(m) for m in rows[:MAX_SEARCH_RESULTS]],
        }

    def _consolidate_memories(self, session: SessionState, args: ConsolidateArgs) -> dict[str, Any]:
        merged = write.merge(
            session.agent_id, args.ids, args.new_content, actor=AGENT_ACTOR, session_id=session.id
        )
        count_stat(session, "consolidations", 1)
        count_stat(session, "consolidated", len(args.ids))
        return {
            "consolidated": args.ids,
            "new_id": merged.id,
            "created_at": merged.created_at.date().isoformat(),
        }

    def _update_memory(self, session: SessionState, args: UpdateArgs) -> dict[str, Any]:
        memory = write.change(
            session.agent_id, args.id, actor=AGENT_ACTOR, session_id=session.id, content=args.content
        ).memory
        if memory is None:  # a user-context field's memory: the consent policy holds the new words
            return {"held": args.id, "message": "a user-context field: the change waits for the user"}
        count_stat(session, "updated", 1)
        return {"updated": memory.id, "tokens": memory.token_estimate}

    def _delete_memory(self, session: SessionState, args: DeleteArgs) -> dict[str, Any]:
        if args.id is not None and args.ids is None:
            ids = [args.id]
        elif args.ids is not None and args.id is None:
            ids = list(args.ids)
        else:
            raise DomainError("pass either id or ids")
        write.remove(session.agent_id, ids, actor=AGENT_ACTOR, session_id=session.id, reason="refinement")
        count_stat(session, "deleted", len(ids))
        return {"deleted": ids}

    def _protect_memory(self, session: SessionState, args: ProtectArgs) -> dict[str, Any]:
        write.protect(session.agent_id, args.id, True, actor=AGENT_ACTOR, session_id=session.id)
        count_stat(session, "protected", 1)
        return {"protected": args.id}

    def _next_page(self, session: SessionState, args: NextPageArgs) -> dict[str, Any]:
        # The page plan is the session loop's; the row records how many pages there are and how many
        # the model has turned, so the loop (and a call after a crash) reads the same position.
        stats = session.stats or {}
        pages, turned = int(stats.get("ledger_pages", 0)), int(stats.get("ledger_pages_turned", 0))
        if pages <= 1:
            raise NoNextPage("your ledger fits in one page: there is no next page")
        if turned + 1 >= pages:
            raise NoNextPage(
                f"this is the last page ({pages} of {pages}); call complete_refinement when you are done"
            )
        count_stat(session, "ledger_pages_turned", 1)
        return {
            "page": turned + 2,
            "pages": pages,
            "message": "the next page replaces this one in your prompt",
        }

    def _complete_refinement(self, state: SessionState, args: CompleteArgs) -> dict[str, Any]:
        if self._breaker_tripped(state):
            return self._terminate()
        session = self._session()
        tokens, count = core_totals(session.agent_id)
        write.save(
            session.agent_id,
            f"Refinement session: {args.summary}",
            actor=AGENT_ACTOR,
            memory_type="journal",
            session_id=session.id,
            action="refinement_journal",
        )
        finish_session(session, "completed", totals=(tokens, count), summary=args.summary)
        write_audit(
            op_id=new_op_id(),
            actor=AGENT_ACTOR,
            action="refinement_complete",
            agent_id=session.agent_id,
            session_id=session.id,
            data={
                "ops": session.ops_count,
                "stats": dict(session.stats or {}),
                "summary_chars": len(args.summary),
            },
        )
        db.session.get_one(Agent, session.agent_id).last_refinement_at = session.finished_at
        return {
            "status": "completed",
            "ops": session.ops_count,
            "tokens_before": session.tokens_before,
            "tokens_after": tokens,
        }

    def close_incomplete(self, reason: str) -> None:
        """End a session the model never completed: keep its operations unless the breaker trips now."""
        with atomic():
            session = self._session()
            if session.status != "running":
                return
            if self._breaker_tripped(session):
                self._terminate()
                return
            finish_session(session, "incomplete", totals=core_totals(session.agent_id), error=reason)

    # ----- the guards -----

    def _breaker_tripped(
        self, session: RefinementSession | SessionState, figures: Retention | None = None
    ) -> bool:
        """Whether what the session's own operations removed brings its retention below the agent's
        threshold (invariant 5). `figures`, when the caller has them from this transaction, are current
        (`_save`); otherwise one read of them (`_retention`)."""
        threshold, removed_tokens, removed_count = figures or self._retention()
        start_tokens, start_count = session.tokens_before or 0, session.count_before or 0
        return (start_tokens > 0 and start_tokens - removed_tokens < threshold * start_tokens) or (
            start_count > 0 and start_count - removed_count < threshold * start_count
        )

    def _retention(self) -> Retention:
        return Retention(*db.session.execute(_RETENTION, {"session": self.session_id}).one())

    def _terminate(self) -> dict[str, Any]:
        """Roll the session back in this same transaction and close it for good, whatever the rollback
        meets: the session ends terminated even when some of its operations cannot be undone."""
        session = self._session()  # after `_save`: the object holds this call's counters too
        threshold, removed_tokens, removed_count = self._retention()
        try:
            with db.session.begin_nested():  # a failed rollback undoes only itself
                result = rollback_session(session.id, actor="system:circuit-breaker", leave_conflicts=True)
            left = result.summary.get("left_in_place") or {}
        # Whatever the rollback meets, the session still ends: nothing was undone, so everything is left.
        except (DomainError, DBAPIError) as err:
            code = err.code if isinstance(err, DomainError) else type(err.orig).__name__  # never a message
            left = {**_session_ops(session.id), "error": code}
        error = (
            f"circuit breaker: the session's operations would keep {(session.tokens_before or 0) - removed_tokens}"
            f"/{session.tokens_before} tokens and {(session.count_before or 0) - removed_count}/{session.count_before}"
            f" memories (threshold {threshold:.0%}); "
        )
        memories = ", ".join(f"#{i}" for i in left.get("memory_ids", []))
        if "error" in left:
            error += f"the rollback failed ({left['error']}): every operation is left in place ({memories})"
        elif left:
            error += (
                f"session rolled back, except {len(left['op_ids'])} operation(s) a later change depends on, "
                f"left in place ({memories})"
            )
        else:
            error += "session rolled back"
        finish_session(session, "terminated", totals=core_totals(session.agent_id), error=error)
        session.left_in_place = left or None
        count_stat(session, "breaker_trips")
        return _error("terminated", TERMINATED_MESSAGE)


def _session_ops(session_id: int) -> dict[str, list]:
    """Every operation of the session that changed a memory, and those memories (ids only)."""
    rows = db.session.execute(
        select(AuditLog.op_id, AuditLog.memory_id)
        .where(AuditLog.session_id == session_id, AuditLog.memory_id.is_not(None))
        .order_by(AuditLog.id)
    ).all()
    return {
        "op_ids": list(dict.fromkeys(r.op_id for r in rows)),
        "memory_ids": sorted({r.memory_id for r in rows}),
    }


@dataclass
class SessionState:
    """The columns of a refinement session a tool call reads, and the two it changes (ops_count, stats);
    then the agent's active core totals as the call starts (a mutating call's, read under the agent's
    row lock; None otherwise)."""

    id: int
    agent_id: int
    status: str
    ops_count: int
    stats: dict
    tokens_before: int | None
    count_before: int | None
    agent_tokens: int | None
    agent_count: int | None

    def __post_init__(self) -> None:
        self.stats = dict(self.stats or {})  # count_stat replaces it; the read copy stays as read


_SESSIONS = RefinementSession.__table__
_AGENTS = Agent.__table__
# Built once, bound at execution. The session row locked: one call of a session at a time (SQLite: the
# write lock atomic() took already serialises them); a mutating call's locks the agent row too, FOR NO
# KEY UPDATE as the mutation path and the counter triggers do, so writers' foreign-key checks pass.
_STATE = select(
    *(_SESSIONS.c[f.name] for f in fields(SessionState) if f.name in _SESSIONS.c),
    _AGENTS.c.core_tokens.label("agent_tokens"),
    _AGENTS.c.core_count.label("agent_count"),
).select_from(_SESSIONS.join(_AGENTS, _AGENTS.c.id == _SESSIONS.c.agent_id))
_STATE_READ = _STATE.where(_SESSIONS.c.id == bindparam("id")).with_for_update(of=_SESSIONS)
_STATE_WRITE = _STATE.where(_SESSIONS.c.id == bindparam("id")).with_for_update(
    of=[_SESSIONS, _AGENTS], key_share=True
)


def _of_agent(column: str) -> Any:
    """A column of the session's agent, as a scalar subquery correlated to the session row."""
    return (
        select(_AGENTS.c[column])
        .where(_AGENTS.c.id == _SESSIONS.c.agent_id)
        .scalar_subquery()
        .correlate(_SESSIONS)
    )


def _removed(total: str, at_start: str) -> Any:
    """The session's own removals plus this call's: the agent's total at the call's start minus now
    (nothing when the call did not read it under the lock: NULL)."""
    return _SESSIONS.c[f"removed_{total}"] + func.coalesce(
        bindparam(at_start) - _of_agent(f"core_{total}"), 0
    )


# The session's counters written with this call's removals, and the retention figures read back in the
# same statement (RETURNING gives the new values). The agent's other writers meanwhile (its API, an
# admin) do not count: the breaker guards against the session, not against them.
_STATE_SAVE = (
    update(_SESSIONS)
    .where(_SESSIONS.c.id == bindparam("session"))
    .values(removed_tokens=_removed("tokens", "agent_tokens"), removed_count=_removed("count", "agent_count"))
    .returning(_of_agent("min_retention"), _SESSIONS.c.removed_tokens, _SESSIONS.c.removed_count)
)
_RETENTION = select(_of_agent("min_retention"), _SESSIONS.c.removed_tokens, _SESSIONS.c.removed_count).where(
    _SESSIONS.c.id == bindparam("session")
)


class Retention(NamedTuple):
    """An agent's breaker threshold and what the session's own operations removed from its active core
    memory (tokens, memories): `refinement_sessions.removed_tokens` / `removed_count`."""

    threshold: float
    removed_tokens: int
    removed_count: int


def ledger_entry(memory: AgentMemory) -> dict[str, Any]:
    """One memory as the agent's own model sees it (tool results only; never shown to humans)."""
    return {
        "id": memory.id,
        "date": memory.created_at.date().isoformat(),
        "tokens": memory.token_estimate,
        "constitutional": memory.constitutional,
        "tags": list(memory.tags or []),
        "content": memory.content,
    }
