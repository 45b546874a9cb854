"""memory.query's request filters (docs/spec/003-memory-system.md §6.1) as WHERE clauses on
agent_memories, each with a bound parameter `f_<name>`: nothing is filtered in Python afterwards.

The same clauses serve memory.query's own statement (models/retrieval/query.py) and any other statement
over the filtered memories (`filter_clauses`: the agent API's related-bullets lookup). So does the clause
of the categories a request may see (`in_categories`), bound as one parameter."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import date, datetime
from typing import Any

from sqlalchemy import ColumnElement, DateTime, Text, bindparam, cast, column, func, select
from sqlalchemy.dialects.postgresql import ARRAY

from models.memories.memory import AgentMemory
from models.parsing import parse_utc
from models.retrieval import term_stats
from models.retrieval.ranking import IMPORTANCE

EQUALITY_FILTERS = ("user_id", "run_id", "actor_id", "role", "thread_id")


def _as_datetime(value: date | datetime) -> datetime:
    # models/parsing.py: an aware time is clamped to years 1-9999 in UTC, a date is its 00:00 UTC.
    return parse_utc(value)


_T = AgentMemory.__table__
# Filter name -> (its WHERE clause, with a bound parameter f_<name>; how the value is converted).
FILTERS: dict[str, tuple[ColumnElement[bool], Callable[[Any], Any] | None]] = {
    **{name: (_T.c[name] == bindparam(f"f_{name}"), None) for name in EQUALITY_FILTERS},
    "pinned": (_T.c.pinned == bindparam("f_pinned"), bool),
    "importance_min": (bindparam("f_importance_min") <= IMPORTANCE, None),
    "importance_max": (bindparam("f_importance_max") >= IMPORTANCE, None),
    "updated_after": (_T.c.updated_at >= bindparam("f_updated_after", type_=DateTime), _as_datetime),
    "updated_before": (_T.c.updated_at < bindparam("f_updated_before", type_=DateTime), _as_datetime),
}


def known_filters(filters: Mapping[str, Any] | None) -> dict[str, Any]:
    """The request's filters that are set (not None) and named in FILTERS; others are ignored."""
    return {k: v for k, v in (filters or {}).items() if v is not None and k in FILTERS}


def filter_params(filters: Mapping[str, Any]) -> dict[str, Any]:
    """The bound parameters of these (known) filters' clauses: f_<name> -> the converted value."""
    params = {}
    for name, value in filters.items():
        convert = FILTERS[name][1]
        params[f"f_{name}"] = convert(value) if convert else value
    return params


def filter_clauses(filters: Mapping[str, Any] | None) -> tuple[list[ColumnElement[bool]], dict[str, Any]]:
    """The request's filters as WHERE clauses on agent_memories and the parameters they bind (for
    statements other than memory.query's own)."""
    known = known_filters(filters)
    return [FILTERS[name][0] for name in known], filter_params(known)


def in_categories(dialect: str) -> ColumnElement[bool]:
    """The category is one of the bound `categories` (`categories_param`). PostgreSQL: = ANY of one array
    parameter, not IN of an expanding one, which SQLAlchemy writes into the statement's text afresh on
    every run (a pass over the whole statement: a tenth of the CPU of a memory.query request over
    gunicorn on PostgreSQL, sampled with py-spy); PostgreSQL plans both alike (it reads IN (...) as
    = ANY). SQLite: IN the values of one JSON array parameter (`json_each`), for the same reason."""
    if dialect == "postgresql":
        # Parsed into an array once a run (a subquery PostgreSQL computes first), not once a row read: a
        # prepared statement's generic plan, and even a custom one, casts the text anew for every row.
        listed = select(cast(bindparam("categories", type_=Text), ARRAY(Text))).scalar_subquery()
        return _T.c.category == func.any(cast(listed, ARRAY(Text)))
    values = select(column("value", Text)).select_from(func.json_each(bindparam("categories", type_=Text)))
    return _T.c.category.in_(values)


def categories_param(dialect: str, names: list[str]) -> Any:
    """The bound value of `in_categories`: PostgreSQL, one text[] literal (term_stats.array_literal);
    SQLite, one JSON array."""
    return term_stats.array_literal(names) if dialect == "postgresql" else json.dumps(names)
