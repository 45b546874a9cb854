"""memory.query's request filters (docs/spec/003-memory-system.md §6.1) as WHERE clauses on
agent_memories, each with a bound parameter `f_<name>`: nothing is filtered in Python afterwards.

The same clauses serve memory.query's own statement (models/retrieval/query.py) and any other statement
over the filtered memories (`filter_clauses`: the agent API's related-bullets lookup)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date, datetime
from typing import Any

from sqlalchemy import ColumnElement, DateTime, bindparam

from models.memories.memory import AgentMemory
from models.parsing import parse_utc
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
