"""What more than one read model needs: a page of rows with its total, the filter of an agent's
memories by state and type, an admin's live Mechanic's grants, and rows looked up by id for labels."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, func, inspect, select
from sqlalchemy.orm import InstrumentedAttribute
from sqlalchemy.sql import operators
from sqlalchemy.sql.base import ExecutableOption
from sqlalchemy.sql.elements import UnaryExpression

from models.admins.mechanic import MechanicGrant
from models.admins.user import User
from models.agents.agent import Agent
from models.db import db, utcnow
from models.memories.memory import AgentMemory

Row = TypeVar("Row")

# what an ORDER BY takes here: a column, or an expression over columns with its direction
OrderKey = ColumnElement[Any] | InstrumentedAttribute[Any]


def page_of(
    entity: type[Row],
    criteria: Sequence[ColumnElement[bool]],
    order: Sequence[OrderKey],
    page: int,
    per_page: int,
    options: Sequence[ExecutableOption] = (),
) -> tuple[list[Row], int]:
    """Page `page` (from 1) of the `entity` rows matching every criterion, and how many match in all.

    `order` must be a total order (end with the id): the page is then the same whichever end it is
    counted from. Two things keep a page's cost near the page's size rather than the table's:

    - the sort and the OFFSET walk carry ids only (a subquery), and whole rows are read for the page
      alone: sorting 10,000 wide rows to keep 50 cost several times sorting 10,000 keys;
    - a page in the second half is counted from the far end, in the reversed order (the last page of
      10,000 agents skips 0 rows, not 9,950), so the dearest page is the middle one.

    When everything matching fits in two pages, one plain statement is cheaper and is used instead.
    """
    total = db.session.scalar(select(func.count()).select_from(entity).where(*criteria)) or 0
    offset = (page - 1) * per_page
    if offset >= total:
        return [], total
    limit = min(per_page, total - offset)
    if total <= 2 * per_page:  # a page or two: sorting whole rows once beats a second pass by id
        rows = db.session.scalars(
            select(entity).options(*options).where(*criteria).order_by(*order).limit(limit).offset(offset)
        ).all()
        return list(rows), total
    (key_column,) = inspect(entity).primary_key
    keys = select(key_column).where(*criteria)
    if offset > total - offset - limit:  # fewer rows to skip from the far end
        keys = keys.order_by(*(_reversed(key) for key in order)).offset(total - offset - limit)
    else:
        keys = keys.order_by(*order).offset(offset)
    chosen = keys.limit(limit).subquery()
    rows = db.session.scalars(
        select(entity)
        .options(*options)
        .join(chosen, key_column == chosen.c[key_column.name])
        .order_by(*order)
    ).all()
    return list(rows), total


def _reversed(key: OrderKey) -> ColumnElement[Any]:
    """The same ordering key in the other direction (ASC <-> DESC). NULLs come out reversed too: both
    databases put them at one end in ascending order and at the other in descending order."""
    if isinstance(key, UnaryExpression) and key.modifier is operators.desc_op:
        return key.element.asc()
    if isinstance(key, UnaryExpression) and key.modifier is operators.asc_op:
        return key.element.desc()
    if isinstance(key, UnaryExpression) and key.modifier is not None:
        raise ValueError(f"cannot reverse the ordering {key}")  # NULLS FIRST/LAST: not used here
    return key.desc()


def memory_filter(agent_id: int, state: str, memory_type: str | None) -> list[ColumnElement[bool]]:
    """An agent's memories in a state ("active", "deleted", anything else: all), of one type if given."""
    criteria: list[ColumnElement[bool]] = [AgentMemory.agent_id == agent_id]
    if state == "active":
        criteria.append(AgentMemory.deleted_at.is_(None))
    elif state == "deleted":
        criteria.append(AgentMemory.deleted_at.is_not(None))
    if memory_type:
        criteria.append(AgentMemory.memory_type == memory_type)
    return criteria


def live_grants_of(user_id: int) -> list[ColumnElement[bool]]:
    """Mechanic's grants that `user_id` requested and that are live now (active, not expired)."""
    return [
        MechanicGrant.requested_by == user_id,
        MechanicGrant.status == "active",
        MechanicGrant.expires_at > utcnow(),
    ]


def agent_names(agent_ids: Iterable[int]) -> dict[int, Agent]:
    """The agents with these ids (id → row), for naming them on a page."""
    ids = sorted(set(agent_ids))
    if not ids:
        return {}
    return {a.id: a for a in db.session.scalars(select(Agent).where(Agent.id.in_(ids))).all()}


def users_by_id(user_ids: Iterable[int]) -> dict[int, User]:
    """The admins with these ids (id → row), for naming them on a page."""
    ids = sorted(set(user_ids))
    if not ids:
        return {}
    return {u.id: u for u in db.session.scalars(select(User).where(User.id.in_(ids))).all()}
