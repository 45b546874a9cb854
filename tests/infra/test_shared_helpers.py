"""The helpers several layers share: one LIKE escape, one walk over the active agents, one time parser."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import func, select

from models import Agent, db
from models.agents.agent import active_agent_ids
from models.db import LIKE_ESCAPE, like_pattern
from models.parsing import BadInput, parse_utc


def test_like_pattern_matches_wildcards_and_backslashes_literally(make_agent):
    names = ["100%", "100 percent", "a_b", "axb", "back\\slash", "backslash"]
    for name in names:
        make_agent(name)

    def matching(needle: str) -> list[str]:
        condition = func.lower(Agent.name).like(like_pattern(needle), escape=LIKE_ESCAPE)
        return sorted(db.session.scalars(select(Agent.name).where(condition)))

    assert matching("0%") == ["100%"]
    assert matching("a_b") == ["a_b"]
    assert matching("k\\s") == ["back\\slash"]
    assert like_pattern("ns", before="", after=".%") == "ns.%"


def test_active_agent_ids_walks_every_active_agent_once_in_batches(make_agent):
    agents = [make_agent() for _ in range(7)]
    agents[3].active = False
    db.session.commit()
    expected = [a.id for a in agents if a.active]
    assert list(active_agent_ids(batch=2)) == expected
    assert list(active_agent_ids(batch=500)) == expected
    assert list(active_agent_ids(Agent.id > agents[4].id, batch=1)) == [agents[5].id, agents[6].id]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-22", datetime(2026, 11, 22)),
        ("2026-11-22T04:00:00Z", datetime(2026, 11, 22, 4)),
        ("2026-11-22T06:00:00+02:00", datetime(2026, 11, 22, 4)),
        ("2026-11-22T04:00:00.250000", datetime(2026, 11, 22, 4, 0, 0, 250000)),
        ("0001-01-01T00:00+14:00", datetime.min),
    ],
)
def test_parse_utc_returns_naive_utc(text, expected):
    assert parse_utc(text) == expected


def test_parse_utc_takes_aware_times_and_refuses_junk():
    aware = datetime(2026, 11, 22, 6, tzinfo=timezone(timedelta(hours=2)))
    assert parse_utc(aware) == datetime(2026, 11, 22, 4)
    assert parse_utc(datetime(2026, 1, 1, tzinfo=UTC)) == datetime(2026, 1, 1)
    assert parse_utc("") is None and parse_utc(None) is None
    with pytest.raises(BadInput):
        parse_utc("yesterday", field="to")
