"""The SQLAlchemy handle, time helpers and the transaction boundary every mutation uses."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from flask_sqlalchemy import SQLAlchemy
from sqlalchemy import MetaData

# Stable constraint names so Alembic revisions are identical on SQLite and PostgreSQL.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

db = SQLAlchemy(metadata=MetaData(naming_convention=NAMING))


def utcnow() -> datetime:
    """Naive UTC with microseconds: stored the same way on SQLite and PostgreSQL, so snapshots round-trip exactly."""
    return datetime.now(UTC).replace(tzinfo=None)


def estimate_tokens(text: str | None) -> int:
    """The one token estimate of the product: ceil(len / 4), OpenAI's rough heuristic."""
    return math.ceil(len(text or "") / 4)


@contextmanager
def atomic() -> Iterator[None]:
    """One database transaction around the block.

    Commits when the outermost block succeeds and rolls everything back on any error, so a memory
    change and its audit record land together or not at all. Nested blocks join the outer one.
    """
    session = db.session
    depth = session.info.get("atomic_depth", 0)
    session.info["atomic_depth"] = depth + 1
    try:
        yield
        if depth == 0:
            session.commit()
    except BaseException:
        if depth == 0:
            session.rollback()
        raise
    finally:
        session.info["atomic_depth"] = depth
