"""The audit chain invariant under any interleaving of operations and rollbacks (a hypothesis state machine).

Rules call the mutation path as agents, jobs and admins do (create, update, delete, restore,
protect / unprotect, consolidate) and the Time Machine (roll back a random earlier operation,
rollbacks included). Operations the rules forbid are refused by design (NotFound,
ValidationFailed, ConstitutionalLocked, RollbackConflict...): a refusal must change nothing at all.
After every step, every memory of the agent satisfies the audit chain invariant
(tests/audit_chain.py) on committed state; after every rollback, each memory the operation touched
is exactly the `before` of the operation's first record on it, every column, or soft-deleted and
unlocked if the operation created it.
"""

from __future__ import annotations

import uuid
from typing import Any

import sqlalchemy as sa
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    rule,
    run_state_machine_as_test,
)

from models import Agent, AgentMemory, AuditLog, DomainError, RefinementSession, db
from models.changes import mutations as mut
from models.changes import timemachine as tm
from tests.audit_chain import assert_audit_chains, assert_row_is, row_columns

ADMIN = "admin:1"
AGENT = "agent"
JOB = "system:test"
# Few texts, so updates often write a text the memory already had, and consolidations collide.
CONTENTS = st.sampled_from(
    [
        "Prefers Earl Grey tea",
        "Lives in Lisbon, near the river",
        "Speaks softly when tired",
        "Keeps a journal",
    ]
)
ACTORS = st.sampled_from([ADMIN, AGENT, "agent-in-session", JOB])
SOMETIMES = st.integers(0, 3).map(lambda n: n == 0)  # a lock or an immutable tag on one memory in four


def committed_state(agent_id: int) -> tuple[dict[int, dict[str, Any]], int]:
    """Every column of every row of the agent, and the number of its audit records (committed only)."""
    table = AgentMemory.__table__
    with db.engine.connect() as conn:
        rows = conn.execute(sa.select(table).where(table.c.agent_id == agent_id)).mappings().all()
        count = conn.scalar(
            sa.select(sa.func.count()).select_from(AuditLog).where(AuditLog.agent_id == agent_id)
        )
        return {r["id"]: dict(r) for r in rows}, count


class AuditChainMachine(RuleBasedStateMachine):
    memories = Bundle("memories")

    def __init__(self) -> None:
        super().__init__()
        db.session.rollback()  # a fresh start, even after a failing (shrinking) example
        agent = Agent(name=f"chain-{uuid.uuid4().hex}")
        db.session.add(agent)
        db.session.commit()
        self.agent_id = agent.id
        session = RefinementSession(agent_id=self.agent_id, trigger="test", status="running")
        db.session.add(session)
        db.session.commit()
        self.session_id = session.id

    def _call(self, actor: str, action, *args: Any, **kwargs: Any) -> Any:
        """Run one operation; a refusal must leave every row and the audit log exactly as they were.
        Returns the id of what the operation returned (a memory), or None when it was refused."""
        if actor == "agent-in-session":
            actor, kwargs["session_id"] = AGENT, self.session_id
        state = committed_state(self.agent_id)
        try:
            result = action(*args, actor=actor, **kwargs)
            return getattr(result, "id", result)
        except DomainError as refused:
            event(f"refused: {action.__name__} {refused.code}")
            assert committed_state(self.agent_id) == state, f"a refused {action.__name__} changed something"
            return None
        finally:
            db.session.close()  # nothing of this step stays cached for the next one

    @initialize(target=memories, contents=st.lists(CONTENTS, min_size=2, max_size=4))
    def seed(self, contents: list[str]):
        """Every example starts with a few plain core memories, so every rule has something to work on."""
        return multiple(
            *(self._call(ADMIN, mut.create_memory, self.agent_id, content) for content in contents)
        )

    @rule(target=memories, content=CONTENTS, memory_type=st.sampled_from(["core", "semantic"]),
          constitutional=SOMETIMES, tagged=SOMETIMES)  # fmt: skip
    def create(self, content: str, memory_type: str, constitutional: bool, tagged: bool):
        memory = self._call(
            ADMIN, mut.create_memory, self.agent_id, content, memory_type=memory_type,
            constitutional=constitutional, tags=["voice"] if tagged else None,
        )  # fmt: skip
        return memory

    @rule(
        memory_id=memories,
        actor=ACTORS,
        content=st.none() | CONTENTS,
        importance=st.none() | st.integers(1, 5),
    )
    def update(self, memory_id: int, actor: str, content: str | None, importance: int | None):
        changes = {k: v for k, v in {"content": content, "importance": importance}.items() if v is not None}
        self._call(actor, mut.update_memory, self.agent_id, memory_id, **(changes or {"pinned": True}))

    @rule(memory_ids=st.lists(memories, min_size=1, max_size=3, unique=True), actor=ACTORS)
    def delete(self, memory_ids: list[int], actor: str):
        self._call(actor, mut.soft_delete_memories, self.agent_id, memory_ids)

    @rule(memory_id=memories)
    def restore(self, memory_id: int):
        self._call(ADMIN, mut.restore_memory, self.agent_id, memory_id)

    @rule(memory_id=memories, value=st.booleans(), actor=ACTORS)
    def protect(self, memory_id: int, value: bool, actor: str):
        self._call(actor, mut.set_constitutional, self.agent_id, memory_id, value)

    @rule(target=memories, memory_ids=st.lists(memories, min_size=2, max_size=3, unique=True),
          content=CONTENTS, actor=ACTORS)  # fmt: skip
    def consolidate(self, memory_ids: list[int], content: str, actor: str):
        merged = self._call(actor, mut.consolidate_memories, self.agent_id, memory_ids, content)
        return merged if merged is not None else multiple()

    @rule(data=st.data())
    def roll_back(self, data: st.DataObject):
        ops = db.session.scalars(
            sa.select(AuditLog.op_id)
            .where(AuditLog.agent_id == self.agent_id, AuditLog.memory_id.is_not(None))
            .group_by(AuditLog.op_id)
            .order_by(sa.func.max(AuditLog.id).desc())
        ).all()
        if not ops:
            return
        op_id = ops[data.draw(st.integers(0, len(ops) - 1), label="ops back")]  # shrinks to the latest op
        records = db.session.scalars(
            sa.select(AuditLog).where(AuditLog.op_id == op_id).order_by(AuditLog.id)
        ).all()
        targets: dict[int, dict | None] = {}
        for record in records:
            if record.before is not None or record.after is not None:
                targets.setdefault(record.memory_id, record.before)  # the state before the op's first record
        result = self._call(ADMIN, tm.rollback_operation, op_id)
        if result is None:
            return
        with db.engine.connect() as conn:
            for memory_id, before in targets.items():
                if before is None:  # the operation created it: gone again, and unlocked
                    row = row_columns(conn, memory_id)
                    assert row["deleted_at"] is not None and row["constitutional"] is False
                else:
                    assert_row_is(conn, memory_id, before)

    @invariant()
    def every_chain_is_whole(self):
        assert_audit_chains(self.agent_id)

    def teardown(self) -> None:
        db.session.rollback()


def test_the_audit_chain_holds_and_rollbacks_are_exact_under_any_interleaving(app):
    run_state_machine_as_test(
        AuditChainMachine,
        settings=settings(
            max_examples=30,
            stateful_step_count=15,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
