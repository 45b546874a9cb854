"""What SQL the app sends, for tests about query shapes and plans (SQLite's EXPLAIN QUERY PLAN)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa

from models import db


@contextmanager
def statements_sent(containing: str = "") -> Iterator[list[tuple[str, object]]]:
    """The (statement, parameters) the app's engine sends inside the block, those containing `containing`."""
    sent: list[tuple[str, object]] = []

    def grab(conn, cursor, statement, parameters, context, executemany):
        if containing in statement:
            sent.append((statement, parameters))

    sa.event.listen(db.engine, "before_cursor_execute", grab)
    try:
        yield sent
    finally:
        sa.event.remove(db.engine, "before_cursor_execute", grab)


def sqlite_plan(statement: str, parameters: object) -> list[str]:
    """The steps of SQLite's plan for a statement sent (EXPLAIN QUERY PLAN's detail column)."""
    rows = db.session.connection().exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters)
    return [row[-1] for row in rows]


def never_analyzed() -> bool:
    """SQLite keeps no statistics yet (no ANALYZE has run): its planner guesses, as on a fresh database."""
    found = db.session.execute(sa.text("SELECT name FROM sqlite_master WHERE name = 'sqlite_stat1'")).all()
    return not found
