"""A memory's signatures in the context block (models/retrieval/context.py `_signature`: kept with the row on
PostgreSQL by migration 0026, computed in process on SQLite) change exactly when what the block shows of it
changes — whatever writes the row: each change below is raw SQL, the path that skips every rule of the
application."""

from __future__ import annotations

from datetime import datetime, time, timedelta

import pytest
import sqlalchemy as sa

from models import db
from models.db import utcnow
from models.retrieval import context

WINDOW = timedelta(days=7)

NOON = datetime.combine(utcnow().date(), time(12))  # the memory's origin: its time alone can change

# (what changes, the UPDATE's SET clause, whether the text form shows it)
SHOWN = [
    ("content", "content = 'Prefers tea now.'", True),
    ("tokens", "token_estimate = token_estimate + 1", True),
    ("tags", "tags = '[\"diet\"]'", True),
    ("category", "category = 'profile'", True),
    ("lock", "constitutional = true", True),
    ("origin date", "created_at = :two_days_before", True),
    ("origin time only", "created_at = :same_day_later", False),
]
NOT_SHOWN = [
    ("access time", "last_accessed_at = :now"),
    ("importance", "importance = 5"),
    ("updated_at", "updated_at = :now"),
]
VALUES = {
    "now": utcnow(),
    "noon": NOON,
    "two_days_before": NOON - timedelta(days=2),
    "same_day_later": NOON + timedelta(hours=3, microseconds=1),
}


def _signatures(agent_id: int) -> tuple[int, int]:
    """(JSON, text) signature of the agent's one memory."""
    signed = []
    for text in (False, True):
        (entry,) = context.entries(
            agent_id, [None, "profile"], now=utcnow(), journal_window=WINDOW, text=text
        )
        signed.append(entry.sig)
    return signed[0], signed[1]


def _update(memory_id: int, assignment: str) -> None:
    db.session.execute(sa.text(f"UPDATE agent_memories SET {assignment} WHERE id = :id"),
                       {"id": memory_id, **VALUES})  # fmt: skip
    db.session.commit()


@pytest.fixture
def memory(make_agent, make_memory):
    agent = make_agent()
    created = make_memory(agent, "Prefers coffee.")
    _update(created.id, "created_at = :noon")
    return agent.id, created.id


@pytest.mark.parametrize(("change", "assignment", "in_text"), SHOWN, ids=[c for c, _, _ in SHOWN])
def test_a_change_of_what_the_block_shows_changes_the_memorys_signature(memory, change, assignment, in_text):
    agent_id, memory_id = memory
    json_before, text_before = _signatures(agent_id)
    _update(memory_id, assignment)
    json_after, text_after = _signatures(agent_id)
    assert json_after != json_before
    assert (text_after != text_before) is in_text


@pytest.mark.parametrize(("change", "assignment"), NOT_SHOWN, ids=[c for c, _ in NOT_SHOWN])
def test_a_change_the_block_does_not_show_leaves_the_signatures(memory, change, assignment):
    agent_id, memory_id = memory
    before = _signatures(agent_id)
    _update(memory_id, assignment)
    assert _signatures(agent_id) == before


def test_two_memories_alike_but_for_their_id_sign_apart(make_agent, make_memory):
    """The id is signed: the block's digest is a sum, and two equal signatures would cancel nothing but
    would let one memory stand for another."""
    agent = make_agent()
    first = make_memory(agent, "Prefers coffee.")
    second = make_memory(agent, "Prefers coffee, black.")
    for memory_id in (first.id, second.id):
        _update(memory_id, "created_at = :noon")
    _update(second.id, "content = 'Prefers coffee.'")
    entries = context.entries(agent.id, [None], now=utcnow(), journal_window=WINDOW, text=False)
    assert len({e.sig for e in entries}) == 2
