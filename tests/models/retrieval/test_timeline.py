"""memory.query's span of days (models/retrieval/timeline.py): a question about what someone did in the
week before or after an event finds the memories of that week by the day they tell of, the user's own only."""

from __future__ import annotations

from datetime import date, datetime
from types import SimpleNamespace

import pytest

from models import db
from models.retrieval import query, timeline

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
    hits = query.search(agent.id, text=QUESTION, categories=["event"], top_k=4, **kwargs)
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


def test_the_span_lets_in_the_users_memory_of_that_week_after_the_event(diary):
    agent, made = diary
    without = _ids(agent, bridge=False)
    assert made["anchor"].id in without[: timeline.ANCHORS] and made["in_span"].id not in without
    spanned = _ids(agent)
    assert spanned[: timeline.ANCHORS] == without[: timeline.ANCHORS]
    assert made["in_span"].id in spanned
    assert made["other_user"].id not in spanned and made["out_of_span"].id not in spanned


def test_a_threshold_asks_the_question_alone(diary):
    agent, made = diary
    assert made["in_span"].id not in _ids(agent, threshold=0.01)


def test_the_span_is_read_from_the_question():
    assert timeline.window(QUESTION) == timeline.Window(7, before=True)
    assert timeline.window("What did Zofia do in the week after the day Zofia got a concussion?") == (
        timeline.Window(7, before=False)
    )
    assert timeline.window("What did Luca do the day after meeting Ines?") == timeline.Window(1, before=False)
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
