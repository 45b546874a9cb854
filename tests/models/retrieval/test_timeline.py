"""memory.query's span of days (models/retrieval/timeline.py): a question about what someone did in the
week before or after an event finds the memories of that week by the day they tell of — the user's own
first, then those of the week the question's own ranking found, whoever they are of."""

from __future__ import annotations

from datetime import date, datetime
from types import SimpleNamespace

import pytest
import sqlalchemy as sa

from models import db
from models.memories.memory import AgentMemory
from models.retrieval import query, timeline
from tests.sql_statements import statements_sent

QUESTION = "What did Hanna do in the week before the trip to Osaka?"
ANCHOR = ("Hanna flew to Osaka on flight KL2035 yesterday for a friend's wedding.", "2023-09-04")
IN_SPAN = ("Hanna sprained her wrist on 2 September 2023 after falling off a bike.", "2023-09-07")
# Another user's memory of the same week, and the user's own of another month: neither is let in.
OTHER_USER = ("Emeka ran the Basel 10K on 1 September 2023 in 54:21.", "2023-09-04")
OUT_OF_SPAN = ("Hanna adopted a ginger cat called Biscuit on 10 August 2023.", "2023-08-12")
FILLER = [
    ("Hanna went hiking near Bergen and loved it.", "2023-06-01"),
    ("Hanna said the coast was the best part of the year.", "2023-06-20"),
    ("Hanna is planning a holiday in Lisbon.", "2023-07-02"),
    ("Hanna took some days off to paint the kitchen.", "2023-07-15"),
    ("Hanna wants to do a cooking course in Rome.", "2023-10-01"),
]


def _ids(agent, **kwargs) -> list[int]:
    hits = query.search(agent.id, text=QUESTION, categories=["event"], **({"top_k": 4} | kwargs))
    db.session.rollback()
    return [h.id for h in hits]


@pytest.fixture
def diary(make_agent, make_memory):
    agent = make_agent(role="supervisor")

    def add(memory: tuple[str, str], user: str = "hanna"):
        text, day = memory
        return make_memory(agent, text, memory_type="semantic", category="event", user_id=user,
                           created_at=datetime.fromisoformat(day + "T12:00:00"))  # fmt: skip

    for memory in FILLER:
        add(memory)
    made = {
        "anchor": add(ANCHOR),
        "in_span": add(IN_SPAN),
        "other_user": add(OTHER_USER, user="emeka"),
        "out_of_span": add(OUT_OF_SPAN),
    }
    db.session.commit()
    return agent, made


def test_the_span_lets_in_the_users_memory_of_that_week_right_after_the_events(diary):
    agent, made = diary
    without = _ids(agent, bridge=False)
    assert made["anchor"].id in without[: timeline.ANCHORS] and made["in_span"].id not in without
    spanned = _ids(agent, top_k=10)
    assert made["anchor"].id in spanned[: timeline.ANCHORS + 1]
    # Right after the anchors (the event's best hit and the first ranking's leaders), the user's own memory
    # of the week, ahead of another user's of the same week and of the user's own of another month.
    at = spanned.index(made["in_span"].id)
    assert at <= timeline.ANCHORS + 1
    assert made["other_user"].id not in spanned[:at] and made["out_of_span"].id not in spanned[:at]


def test_a_spans_anchors_are_read_by_one_statement(diary, monkeypatch):
    agent, _ = diary
    counted = []
    anchored = timeline.anchored
    monkeypatch.setattr(timeline, "anchored", lambda *a: counted.append(anchored(*a)) or counted[-1])
    with statements_sent(" AS part") as sent:
        _ids(agent, top_k=10)
    assert len(counted[0][0]) >= 2 and len(sent) == 1  # several anchors, one statement


def test_each_anchors_part_of_the_statement_is_its_own_window_and_limit(diary, monkeypatch):
    """The one statement's part i holds what anchor i's window alone reads: its user's memories of its
    dates, earliest first, at most SPAN_ROWS of them, whatever the other parts read."""
    agent, made = diary
    monkeypatch.setattr(query, "SPAN_ROWS", 2)
    query.span_statement.cache_clear()
    windows = [
        ("hanna", datetime(2023, 6, 1), datetime(2023, 9, 30)),  # 8 of hanna's: the first 2
        ("emeka", datetime(2023, 9, 1), datetime(2023, 9, 5)),  # emeka's one
        ("hanna", datetime(2023, 8, 1), datetime(2023, 9, 5)),  # overlaps the first
        (None, datetime(2023, 1, 1), datetime(2024, 1, 1)),  # no user: none here
    ]
    dialect = db.session.get_bind().dialect.name
    seen = {"agent_id": agent.id, "categories": query.categories_param(dialect, ["event"])}

    def read(count: int, params: dict) -> list[list[int]]:
        parts: list[list[int]] = [[] for _ in range(count)]
        for row in db.session.execute(query.span_statement(dialect, (), False, count), seen | params):
            parts[row.part].append(row.id)
        return parts

    try:
        alone = [
            read(1, {"span_user_0": user, "span_from_0": start, "span_to_0": end})[0]
            for user, start, end in windows
        ]
        together = read(len(windows), {
            f"span_{key}_{i}": value
            for i, window in enumerate(windows)
            for key, value in zip(("user", "from", "to"), window, strict=True)
        })  # fmt: skip
    finally:
        query.span_statement.cache_clear()
    assert together == alone
    assert alone[0] == [m.id for m in sorted(
        db.session.scalars(sa.select(AgentMemory).where(AgentMemory.agent_id == agent.id,
                                                      AgentMemory.user_id == "hanna")),
        key=lambda m: (m.created_at, m.id))][:2]  # fmt: skip
    assert alone[1] == [made["other_user"].id] and alone[3] == []


PAGER = "The payments pager, week of {}: {}."
TEAM = [
    ("Keiko is running the hackathon from Sunday 1 June to June 3 in a rented loft.", "keiko", "2025-05-20"),
    ("Welcome Anton, who started on the 6th of June as a data analyst.", "anton", "2025-06-06"),
    ("Welcome Pia, who started on the 20th of June as a designer.", "pia", "2025-06-20"),
    (PAGER.format("5 June", "Yuki"), "yuki", "2025-05-26"),  # the week after the hackathon
    *((PAGER.format(week, who), who.lower(), "2025-05-12") for week, who in [
        ("19 May", "Pedro"), ("26 May", "Lena"), ("16 June", "Sipho"), ("23 June", "Olga"),
        ("30 June", "Marco"), ("7 July", "Tess"), ("July 14", "Bruno"),
    ]),
]  # fmt: skip


@pytest.fixture
def team(make_agent, make_memory):
    agent = make_agent(role="supervisor")
    made = [
        make_memory(
            agent,
            text,
            memory_type="semantic",
            category="event",
            user_id=user,
            created_at=datetime.fromisoformat(day + "T12:00:00"),
        )  # fmt: skip
        for text, user, day in TEAM
    ]
    db.session.commit()
    return agent, made


def _asked(agent, question: str, **kwargs) -> list[int]:
    hits = query.search(agent.id, text=question, categories=["event"], top_k=6, **kwargs)
    db.session.rollback()
    return [h.id for h in hits]


def test_the_event_is_found_by_its_own_words_and_the_span_by_dates_without_a_year(team):
    agent, made = team
    hackathon, yuki = made[0], made[3]
    # The question's own words lead to the pager memories; "the hackathon" alone to the event, an anchor.
    question = "Who was on call for the payments pager the week after the hackathon?"
    assert yuki.id not in _asked(agent, question, bridge=False)
    found = _asked(agent, question)
    assert hackathon.id in found[: timeline.ANCHORS + 1] and yuki.id in found  # Yuki's, not Keiko's


def test_the_rankings_own_memories_of_the_span_come_in_its_order_whoever_they_are_of():
    anchors = [
        SimpleNamespace(
            id=1, content="The hackathon runs from 1 June to 3 June.", created_at=datetime(2025, 5, 20)
        ),
        SimpleNamespace(
            id=2, content="Diego set the all-hands for June 20.", created_at=datetime(2025, 5, 2)
        ),
    ]
    ranked = [
        SimpleNamespace(id=i, content=text, created_at=datetime(2025, 5, 26))
        for i, text in [
            (3, "The payments pager, week of 23 June: Marco."),  # after the all-hands
            (4, "The payments pager, week of 16 June: Sipho."),  # in neither week
            (5, "The payments pager, week of 5 June: Yuki."),  # after the hackathon
            (6, "Anton started on 1 June."),  # the hackathon's own day: not after it
        ]
    ]
    inside = timeline.ranked_in_window(anchors, timeline.Window(7, before=False), ranked)
    assert [h.id for h in inside] == [3, 5]


def test_a_threshold_asks_the_question_alone(diary):
    agent, made = diary
    assert made["in_span"].id not in _ids(agent, threshold=0.01)


def test_the_span_is_read_from_the_question():
    assert timeline.window(QUESTION) == timeline.Window(7, before=True, event="the trip to Osaka")
    assert timeline.window("What did Zofia do in the week after the day Zofia got a concussion?") == (
        timeline.Window(7, before=False, event="the day Zofia got a concussion")
    )
    assert timeline.window("What did Luca do the day after meeting Ines?") == timeline.Window(
        1, before=False, event="meeting Ines"
    )
    assert timeline.window("When did Hanna travel to Melbourne?") is None
    assert timeline.window(None) is None


@pytest.mark.parametrize(
    ("content", "written", "day"),
    [
        ("On 4 July 2023, Zofia treated herself to a rowing machine.", "2023-07-08", date(2023, 7, 4)),
        ("Greta met Jonah on October 26, 2022 at a café.", "2022-10-29", date(2022, 10, 26)),
        ("Hanna flew to Osaka yesterday.", "2023-09-04", date(2023, 9, 3)),
        ("Earlier today, Greta tried chess.", "2022-08-31", date(2022, 8, 31)),
        # 2023-11-23 is a Thursday: "last Monday" is three days before, "last Thursday" a week.
        ("She got a concussion last Monday.", "2023-11-23", date(2023, 11, 20)),
        ("Last Thursday, Anouk got the keys.", "2023-11-23", date(2023, 11, 16)),
        ("Quinn moved house three days ago.", "2023-11-23", date(2023, 11, 20)),
        ("Hanna finds Monday mornings hard.", "2023-11-23", date(2023, 11, 23)),
        ("Born on 31 February 2023, yesterday.", "2023-11-23", date(2023, 11, 22)),
        # Without a year: the year that puts the day nearest the writing.
        ("Quokka shipped on 16 June.", "2025-06-20", date(2025, 6, 16)),
        ("The payments pager, week of July 14: Bruno.", "2025-06-20", date(2025, 7, 14)),
        ("Tess has the platform rota the week starting the 9th of June.", "2025-06-02", date(2025, 6, 9)),
        ("The offsite is on 3 January.", "2025-12-28", date(2026, 1, 3)),
        ("Call Bruno at May 3:30 about it.", "2025-06-20", date(2025, 6, 20)),
    ],
)
def test_a_memorys_day_is_the_one_it_tells_of_read_against_its_writing(content, written, day):
    assert timeline.event_day(content, datetime.fromisoformat(written + "T09:00:00")) == day


def test_the_span_holds_the_days_before_the_event_nearest_first_not_the_event_day():
    anchor = SimpleNamespace(
        id=1, content="Hanna flew to Osaka on 3 September 2023.", created_at=datetime(2023, 9, 4)
    )
    rows = [
        SimpleNamespace(id=i, content=text, created_at=datetime(2023, 9, 7))
        for i, text in [
            (2, "Hanna sprained her wrist on 2 September 2023."),
            (3, "Hanna ran a 10K on 27 August 2023."),
            (4, "Hanna bought a lamp on 3 September 2023."),
            (5, "Hanna painted a fence on 20 August 2023."),
            (6, "Hanna met Ines on 5 September 2023."),
        ]
    ]
    before = timeline.in_window(anchor, timeline.Window(7, before=True), rows)
    assert [r.id for r in before] == [2, 3]
    after = timeline.in_window(anchor, timeline.Window(7, before=False), rows)
    assert [r.id for r in after] == [6]


def test_interleaving_takes_each_spans_next_in_turn_each_memory_once():
    a, b, c, d = (SimpleNamespace(id=i) for i in range(4))
    assert [m.id for m in timeline.interleaved([[a, b], [c, a, d]])] == [0, 2, 1, 3]
