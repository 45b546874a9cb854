"""memory.query's second hop (models/retrieval/bridging.py): a question about someone reached through
someone else finds the memory that names only the one reached, and nothing else moves."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import sqlalchemy as sa

from jobs import embeddings
from models import AgentMemory, db
from models.retrieval import bridging, query, rest, term_stats
from tests.api_support import bearer
from tests.models.retrieval.retrieval_support import (
    ask,
    backfill_all,
    concept_vector,
    remember,
    word_figures_gathered,
)
from tests.sql_statements import statements_sent

FILLER = [
    "Zofia mentioned her cousin, Quinn, who lives in Kyoto.",
    "Zofia mentioned her niece, Juniper, who lives in Marseille.",
    "Zofia tried rowing for the first time at Weir Boat Club and loved it.",
    "Zofia ran the Basel marathon in 3:47:15.",
    "Zofia moved into a flat at 73 Quarry Road, Bologna.",
    "Zofia finds Monday mornings the hardest part of the week.",
    "Zofia treated herself to a sewing machine that cost 315 pounds.",
    "Zofia caught a nasty flu from a packed conference.",
    "Zofia is saving up money for something but would not say what.",
    "Quinn adopted a grey cat called Miso.",
    "Juniper started a new job at a bakery in the old town.",
]
LINK = "Zofia mentioned her grandmother, Tamsin, who lives in Lyon."
ANSWER = "Tamsin graduated with a degree in marine biology."
QUESTION = "What did Zofia's grandmother study?"


def _ids(agent, **kwargs) -> list[int]:
    hits = query.search(agent.id, text=QUESTION, categories=["event"], top_k=5, **kwargs)
    db.session.rollback()
    return [h.id for h in hits]


def _chain(make_agent, make_memory, filler: list[str], link: str, answer: str):
    """An agent holding `filler`, then the memory linking the question to the one reached, and that one."""
    agent = make_agent(role="supervisor")
    for text in filler:
        make_memory(agent, text, memory_type="semantic", category="event")
    made = [make_memory(agent, text, memory_type="semantic", category="event") for text in (link, answer)]
    db.session.commit()
    return agent, *made


@pytest.fixture
def family(make_agent, make_memory):
    return _chain(make_agent, make_memory, FILLER, LINK, ANSWER)


def test_the_second_hop_finds_the_memory_that_names_only_the_person_reached(family):
    agent, link, answer = family
    without = _ids(agent, bridge=False)
    assert link.id in without[: bridging.KEEP] and answer.id not in without
    bridged = _ids(agent)
    assert answer.id in bridged and bridged[: bridging.KEEP] == without[: bridging.KEEP]


def test_a_memory_the_hop_let_in_carries_no_relevance_or_match_for_it_was_not_ranked_by_the_question(family):
    agent, link, answer = family
    hits = {
        h.id: h for h in query.search(agent.id, text=QUESTION, categories=["event"], top_k=5, with_match=True)
    }
    db.session.rollback()
    assert hits[answer.id].relevance is None and hits[answer.id].match is None
    assert hits[link.id].relevance == 1.0 and 0 < hits[link.id].match <= 1


def test_the_agent_api_answers_with_the_second_hop_and_a_threshold_asks_the_question_alone(client, family):
    agent, _, answer = family
    ask = {"query": QUESTION, "top_k": 5}
    found = client.post("/api/v1/memory/query", json=ask, headers=bearer(agent)).get_json()["results"]
    assert answer.id in [r["id"] for r in found]
    strict = client.post(
        "/api/v1/memory/query", json=ask | {"threshold": 0.01}, headers=bearer(agent)
    ).get_json()
    assert answer.id not in [r["id"] for r in strict["results"]]


def test_names_are_the_leaders_capitalised_words_the_question_lacks_not_calendar_words_or_openers():
    leaders = [
        SimpleNamespace(content="On Monday, Zofia mentioned her grandmother, Tamsin, who lives in Lyon."),
        SimpleNamespace(content="Yesterday Tamsin met Quinn in March."),
    ]
    assert bridging.bridge_names("What did Zofia's grandmother study?", leaders) == [
        "Tamsin",
        "Lyon",
        "Quinn",
    ]
    assert bridging.bridge_names("Zofia Tamsin Lyon Quinn", leaders) == []


def test_a_note_that_opens_with_its_subject_bridges_that_name():
    # The name the hop needs opens the note: leaving sentence openers out cost the held-out sets their
    # multi-hop questions (docs/benchmarks.md, "a sentence's first word not taken as a name").
    leader = SimpleNamespace(content="Ottilie is Nico's godmother and visits every few weeks. Wren too.")
    assert bridging.bridge_names("What does Nico's godmother collect?", [leader]) == ["Ottilie", "Wren"]


def test_a_hyphenated_name_and_a_short_code_are_names_too_and_one_the_question_holds_is_not_new():
    leader = SimpleNamespace(
        content="Exports timing out in room B12: Felix shipped the fix in report-builder."
    )
    assert bridging.bridge_names("Who manages the owner of the service behind it?", [leader]) == [
        "Exports",
        "B12",
        "Felix",
        "report-builder",
    ]
    assert bridging.bridge_names("Who fixed the exports in B12 in report-builder?", [leader]) == ["Felix"]


def test_a_ticket_code_is_not_bridged_so_it_does_not_take_a_names_place():
    # The code names the leader itself; with it, the four names would stop before the service.
    leader = SimpleNamespace(
        content="Re ZD-4777, timestamps at Pinecrest Schools: Olga shipped the fix in report-builder."
    )
    question = "Who owns the service that caused the timestamps problem?"
    assert bridging.bridge_names(question, [leader]) == ["Pinecrest", "Schools", "Olga", "report-builder"]
    assert "KL2035" not in bridging.bridge_names(question, [SimpleNamespace(content="Flight KL2035, Ada.")])


# ----- which leader the hops follow -----

AUNTS = [
    "Noor's aunt is called Celeste, and she retired from the bank last spring.",
    "Hanna mentioned her aunt, Juniper, who lives in Kyoto.",
    "Juniper spent thirty years driving buses before she stopped working.",
    "Hanna ran the Basel marathon in 3:47:15.",
    "Hanna moved into a flat at 73 Quarry Road, Bologna.",
    "Hanna treated herself to a sewing machine that cost 315 pounds.",
    "Hanna caught a nasty flu at a packed conference.",
    "Celeste plays the cello in an amateur orchestra.",
    "Noor tried rowing for the first time at Weir Boat Club.",
    "Noor finds Monday mornings the hardest part of the week.",
]
AUNT = "What did Hanna's aunt retire from?"


def test_a_questions_names_are_its_capitalised_words_save_its_opening_word_calendar_words_and_codes():
    assert bridging.question_names(AUNT) == ["Hanna"]
    assert bridging.question_names("Did Hanna meet Quinn in Lyon on Monday?") == ["Hanna", "Quinn", "Lyon"]
    assert bridging.question_names("Who fixed ZD-4909 in report-builder?") == ["report-builder"]
    assert bridging.question_names("Who manages the owner of the service behind it?") == []


def test_the_hops_follow_the_first_leader_holding_every_name_the_question_holds():
    noor, hanna, other = (SimpleNamespace(content=text) for text in AUNTS[:3])
    assert bridging.leading([noor, hanna, other], AUNT) == [hanna, noor, other]
    # None of the leaders holds the names, or the question names no one: the first leads as it is.
    assert bridging.leading([noor, other], AUNT) == [noor, other]
    assert bridging.leading([noor, hanna], "What did the aunt retire from?") == [noor, hanna]
    # A name must be held whole: "Hannah" is not "Hanna".
    hannah = SimpleNamespace(content="Hannah mentioned her aunt, Ada.")
    assert bridging.leading([noor, hannah], AUNT) == [noor, hannah]
    # Only the first NAMED_LEADERS are looked through.
    deep = [noor, *[other] * bridging.NAMED_LEADERS, hanna]
    assert bridging.leading(deep, AUNT) == deep


def test_the_hop_follows_the_aunt_of_the_one_the_question_names_not_the_leaders(
    make_agent, make_memory, monkeypatch
):
    agent = make_agent(role="supervisor")
    noor, link, answer, *_ = [
        make_memory(agent, text, memory_type="semantic", category="event") for text in AUNTS
    ]
    db.session.commit()

    def asked(**kwargs) -> list[int]:
        hits = query.search(agent.id, text=AUNT, categories=["event"], top_k=5, **kwargs)
        db.session.rollback()
        return [h.id for h in hits]

    without = asked(bridge=False)
    assert without[0] == noor.id and link.id in without[: bridging.NAMED_LEADERS]
    assert answer.id not in without
    found = asked()
    assert answer.id in found and found[: bridging.KEEP] == without[: bridging.KEEP]  # the order stands
    monkeypatch.setattr(bridging, "NAMED_LEADERS", 0)  # the hops follow the first leader, Noor's aunt
    assert answer.id not in asked()


# Services that own something (the question's words), and notes about nothing asked, so that those words
# are not common ones.
TEAM = [f"The {name} service owns the {thing}." for name, thing in [
    ("search", "reindexing job"), ("billing", "invoice run"), ("mail", "bounce queue"),
    ("export", "nightly CSV files"), ("login", "session cookies"),
]] + [f"Note {i}: the coffee machine on floor {i} was descaled." for i in range(40)]  # fmt: skip
MANAGER = "Tomasz is Ingrid's manager."
SERVICE = "rate-limiter, API quotas per customer, is looked after by Tomasz."


def test_the_hop_asks_for_the_names_alone_so_the_questions_words_do_not_crowd_them_out(
    make_agent, make_memory
):
    agent, manager, service = _chain(make_agent, make_memory, TEAM, MANAGER, SERVICE)
    hits = query.search(
        agent.id, text="Which service does Ingrid's manager own?", categories=["event"], top_k=5
    )
    db.session.rollback()
    assert hits[0].id == manager.id and service.id in [h.id for h in hits]


# A chat stored turn by turn: Melanie, named before each of her turns and in two of Caroline's, is held by
# 10 of its 16 memories; Dario by 2.
CHAT = [
    "Caroline: I painted a sunset over the lake last week, Melanie loved it.",
    "Caroline: Went hiking at Snowdon on Sunday with Melanie and Dario.",
    *(f"Caroline: {line}" for line in (
        "The adoption agency called back this morning.", "My mentor sent me a reading list.",
        "I finally fixed the leaking tap.", "The choir concert is on Friday.",
        "I started a pottery class.", "My sister visits in the spring.",
    )),
    *(f"Melanie: {line}" for line in (
        "The kids loved the beach trip.", "Our dog chewed my running shoes.",
        "Work has been hectic this month.", "I baked bread for the first time.",
        "We are camping in August.", "My husband bought a canoe.",
        "The garden needs weeding again.", "Dario is teaching me to climb on Tuesdays.",
    )),
]  # fmt: skip


def test_a_name_too_common_to_tell_memories_apart_is_not_bridged_and_a_rarer_one_still_is(
    make_agent, make_memory, half_is_common
):
    """A chat's speaker, named before every turn she said, leads to no memory in particular: the hop does
    not ask for her (bridging.telling; term_stats.common_words, here from ten memories and half of them)."""
    agent = make_agent(role="supervisor")
    for turn in CHAT:
        make_memory(agent, turn, memory_type="episodic", category="event")
    word_figures_gathered()

    def asked(question: str, bridge: bool) -> tuple[list[int], list[str]]:
        query.search(agent.id, text=question, categories=["event"], top_k=5, bridge=bridge)  # figures cached
        with statements_sent() as sent:
            hits = query.search(agent.id, text=question, categories=["event"], top_k=5, bridge=bridge)
        db.session.rollback()
        return [h.id for h in hits], [str(parameters).lower() for _, parameters in sent]

    # The leader names Caroline, whom the question names, and Melanie: nothing to bridge.
    hits, sent = asked("What did Caroline paint last week?", bridge=True)
    first, alone = asked("What did Caroline paint last week?", bridge=False)
    assert hits == first and len(sent) == len(alone)
    assert not any("melanie" in parameters for parameters in sent)
    # The leader names Snowdon and Dario too, held by fewer: the hop asks for them, and finds Dario's turn.
    hits, sent = asked("Where did Caroline go hiking on Sunday?", bridge=True)
    first, alone = asked("Where did Caroline go hiking on Sunday?", bridge=False)
    assert len(sent) > len(alone) and any("dario" in parameters for parameters in sent)
    climbing = db.session.scalars(sa.select(AgentMemory.id).where(AgentMemory.content.like("%climb%"))).one()
    assert climbing in hits and climbing not in first


# Another agent, whose memories name Dario often: a count of the asking agent's own memories does not see them.
DARIO_ELSEWHERE = [f"Dario fixed bike number {i} at the shop." for i in range(6)]


@pytest.fixture
def two_chats(make_agent, make_memory):
    """An agent holding CHAT, and another holding DARIO_ELSEWHERE."""
    agent, other = make_agent(role="supervisor"), make_agent(role="supervisor")
    for turn in CHAT:
        make_memory(agent, turn, memory_type="episodic", category="event")
    for text in DARIO_ELSEWHERE:
        make_memory(other, text, memory_type="episodic", category="event")
    db.session.commit()
    return agent, other


@pytest.mark.parametrize("crowded", [3, None])
def test_a_name_held_by_many_of_its_agents_own_memories_is_not_bridged_and_another_agents_do_not_count(
    two_chats, monkeypatch, crowded
):
    """The one who shares a chat with the agent's speaker, named before half its turns, leads to no memory
    in particular, though the whole index holds her too seldom for the common-words rule (bridging.telling;
    term_stats.crowded_words, here at 3 of the agent's memories): the hop asks for the rarer names only.
    Dario, held by 2 of this agent's memories and 6 of another's, is still asked for."""
    monkeypatch.setattr(term_stats, "CROWDED", crowded)
    agent = two_chats[0]
    question = "Where did Caroline go hiking on Sunday?"
    query.search(agent.id, text=question, categories=["event"], top_k=5)  # word figures counted and cached
    with statements_sent() as sent:
        hits = query.search(agent.id, text=question, categories=["event"], top_k=5)
    db.session.rollback()
    parameters = [str(values).lower() for _, values in sent]
    assert any("dario" in values for values in parameters)
    assert any("melanie" in values for values in parameters) == (crowded is None)
    climbing = db.session.scalars(sa.select(AgentMemory.id).where(AgentMemory.content.like("%climb%"))).one()
    assert climbing in [h.id for h in hits]


def test_an_agents_crowded_names_are_counted_in_its_own_memories_up_to_the_bound_once(two_chats, monkeypatch):
    monkeypatch.setattr(term_stats, "CROWDED", 3)
    agent, other = two_chats
    dialect, mine, theirs = db.engine.dialect.name, agent.id, other.id
    words = ["melanie", "dario", "snowdon", "nobody"]
    with statements_sent() as sent:
        assert term_stats.crowded_words(dialect, mine, words) == {"melanie"}
        assert term_stats.crowded_words(dialect, theirs, words) == {"dario"}
    assert len(sent) == 2  # every word of an agent in one statement
    with statements_sent() as sent:
        assert term_stats.crowded_words(dialect, mine, ["dario", "melanie"]) == {"melanie"}
    assert sent == []  # cached
    monkeypatch.setattr(term_stats, "CROWDED", None)
    assert term_stats.crowded_words(dialect, mine, words) == set()


def test_the_merge_keeps_the_leaders_lets_in_the_hops_hits_and_holds_each_memory_once():
    first = [SimpleNamespace(id=i) for i in (1, 2, 3, 4, 5, 6)]
    second = [SimpleNamespace(id=i) for i in (2, 9, 1, 8, 7, 10)]
    merged = [h.id for h in bridging.merged(first, second, top_k=6)]
    leaders = [h.id for h in first[: bridging.KEEP]]
    assert merged[: bridging.KEEP] == leaders
    news = [h.id for h in second if h.id not in leaders][: bridging.HOP]
    assert merged[bridging.KEEP : bridging.KEEP + len(news)] == news and 9 in news
    assert len(merged) == len(set(merged)) == 6


# ----- the leading hit's user -----

PHONE = "uses an iphone 15 on the talk and text plan."  # the question's description of the customer
ROUTER = "has the juno gateway ultra router, set up in the hallway by the engineer last spring."
OTHER_ROUTERS = [  # other customers' routers, nearer the question's words than the answer
    f"has the {name} router." for name in
    ("vanta hub", "osprey hub", "helix mesh", "tern dual", "pylon hub", "orca hub", "kestrel mesh", "delta hub",
     "falcon dual", "lumen hub", "nimbus mesh", "ember hub")
]  # fmt: skip
CUSTOMER = "Which router does the customer using an iPhone 15 have?"


@pytest.fixture
def customers(app, make_agent, embedder):
    """An agent serving several users, whose memories do not name them: the user is the memory's user_id."""
    agent = make_agent(role="supervisor")
    phone = remember(agent, PHONE, category="event", user_id="freya")
    router = remember(agent, ROUTER, category="event", user_id="freya")
    for i, text in enumerate(OTHER_ROUTERS):
        remember(agent, text, category="event", user_id=f"customer-{i}")
    db.session.commit()
    backfill_all()
    return agent, phone, router


def _asked(agent, top_k: int = 10, **kwargs) -> list[int]:
    hits = query.search(
        agent.id, text=CUSTOMER, categories=["event"], top_k=top_k, dense=embeddings.query_vector(CUSTOMER),
        **kwargs,
    )  # fmt: skip
    db.session.rollback()
    return [h.id for h in hits]


def test_the_leading_hits_users_other_memory_comes_in_after_the_first_results(customers, monkeypatch):
    agent, phone, router = customers
    without = _asked(agent, bridge=False)
    assert without[0] == phone.id and router.id not in without  # other customers' routers crowd it out
    found = _asked(agent)
    monkeypatch.setattr(bridging, "SUBJECT_HOP", 0)  # the names hop alone
    names_only = _asked(agent)
    at = found.index(router.id)
    assert at >= bridging.SUBJECT_KEEP and found[:at] == names_only[:at]


def test_asked_of_one_user_the_first_ranking_stands(customers):
    agent, phone, router = customers
    assert _asked(agent, filters={"user_id": "freya"}) == _asked(
        agent, filters={"user_id": "freya"}, bridge=False
    )


def _hit(i: int, user: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(id=i, user_id=user)


def test_the_leading_hits_user_comes_in_after_keep_and_only_where_there_is_someone_else_to_prefer_it_to():
    mixed = [_hit(1, "a"), _hit(2, "b"), _hit(3, "b"), _hit(4, "b"), _hit(5, "b"), _hit(6, "a"), _hit(7, "a")]
    assert [h.id for h in bridging.same_subject(mixed, mixed, top_k=5, keep=4)] == [1, 2, 3, 4, 6]
    assert [h.id for h in bridging.same_subject(mixed, mixed, top_k=5, keep=2)] == [1, 2, 6, 7, 3]
    one_user = [_hit(i, "a") for i in range(1, 8)]
    assert bridging.same_subject(one_user[:5], one_user, top_k=5, keep=2) == one_user[:5]
    no_user = [_hit(i) for i in range(1, 8)]
    assert bridging.same_subject(no_user, no_user, top_k=5, keep=2) == no_user[:5]


def test_the_names_hops_hits_end_after_keep_and_the_hits_it_lets_in():
    first = [_hit(i) for i in range(1, 11)]
    assert bridging.hop_end(first, []) == bridging.KEEP
    assert bridging.hop_end(first, first[: bridging.KEEP]) == bridging.KEEP  # all among the leaders
    news = [_hit(i) for i in range(20, 30)]
    assert bridging.hop_end(first, news) == bridging.KEEP + bridging.HOP
    assert bridging.hop_end(first, [first[0], news[0]]) == bridging.KEEP + 1


# ----- the question's rest -----

TRAVELLER = "What does the person with a flight to Lisbon eat?"  # led by Maya's flight; its rest asks of food


def test_a_questions_rest_is_its_words_the_leading_hit_does_not_hold():
    def left(question: str, leader: str) -> str:
        return " ".join(question[at:to] for at, to in rest.rest_spans(question, leader))

    assert left(
        "Who does the person running Orchid report to?", "Viktor runs Orchid, the billing service."
    ) == ("Who does person report to ?")
    # Its endings do not hide a word the leader holds ("books" / "booked").
    assert left("Who booked the Lisbon flights?", "Maya books a flight to Lisbon") == "Who the ?"
    # No rest where the leader holds none of the words, or all of them but the question mark.
    assert rest.rest_spans("Where does Tom walk?", "Maya cooks pasta") == []
    assert rest.rest_spans("Maya books flights?", "Maya books a flight") == []


@pytest.fixture
def travellers(app, make_agent, embedder):
    """Maya's flight, which leads the question, and her dinner, which its rest asks for; other users' meals
    and walks, which the question's own words rank above her dinner."""
    agent = make_agent(role="supervisor")
    flight = remember(agent, "Maya books a flight to Lisbon", user_id="maya")
    dinner = remember(agent, "Maya cooks pasta for dinner", user_id="maya")
    remember(agent, "Tom, a person of habit, walks to Lisbon's market with the dog", user_id="tom")
    remember(agent, "Tom eats at noon", user_id="tom")
    remember(agent, "Maya keeps her dinner recipes in a blue folder", category="event", user_id="maya")
    db.session.commit()
    backfill_all()
    return agent, flight, dinner


def concept_rest(calls: list[str]):
    """A rest embedder as jobs.embeddings.rest_vector is one: the scripted endpoint's vector of the rest's
    words, each rest it was asked for recorded in `calls`."""

    def embed(text: str, spans) -> np.ndarray:
        calls.append(" ".join(text[at:to] for at, to in spans))
        return np.array(concept_vector(calls[-1]))

    return embed


def _travelled(agent, top_k: int = 2, **kwargs):
    hits = query.search(agent.id, text=TRAVELLER, categories=["profile"], top_k=top_k,
                        dense=embeddings.query_vector(TRAVELLER), **kwargs)  # fmt: skip
    db.session.rollback()
    return hits


def test_the_leaders_users_memory_nearest_the_rest_comes_in_after_rest_keep(travellers, monkeypatch):
    agent, flight, dinner = travellers
    monkeypatch.setattr(rest, "REST_KEEP", 1)
    without = [hit.id for hit in _travelled(agent)]
    assert without[0] == flight.id and dinner.id not in without
    calls: list[str] = []
    assert [hit.id for hit in _travelled(agent, rest_vector=concept_rest(calls))] == [flight.id, dinner.id]
    assert calls == ["What does the person with eat ?"]
    # Not where top_k leaves no place after REST_KEEP (the agent API's default five after six): not even
    # embedded; nor with REST_HOP 0.
    assert [hit.id for hit in _travelled(agent, top_k=1, rest_vector=concept_rest(calls))] == [flight.id]
    monkeypatch.setattr(rest, "REST_HOP", 0)
    assert [hit.id for hit in _travelled(agent, rest_vector=concept_rest(calls))] == without
    assert len(calls) == 1


def test_a_rests_memory_outside_the_first_ranking_is_read_through_the_same_filters_without_its_figures(
    travellers, monkeypatch
):
    """The rest's nearest memory, where the question's own ranking does not hold it, is read by its vector
    alone through the same WHERE clauses — never one of a category not asked for (the recipes' folder, an
    `event`) — and carries no relevance or match, as the names hop's hits do; one the ranking holds keeps
    its own."""
    agent, flight, dinner = travellers
    monkeypatch.setattr(rest, "REST_KEEP", 1)
    calls: list[str] = []
    held = _travelled(agent, rest_vector=concept_rest(calls))[1]
    assert held.id == dinner.id and held.relevance is not None
    monkeypatch.setattr(
        bridging, "SUBJECT_DEPTH", 1
    )  # the first ranking as deep as top_k: dinner is not in it
    read = _travelled(agent, rest_vector=concept_rest(calls))
    assert [hit.id for hit in read] == [flight.id, dinner.id] and read[1].relevance is read[1].match is None
    soup = remember(agent, "Maya eats soup at dinner", category="event", user_id="maya")  # not asked for
    db.session.commit()
    backfill_all()
    assert soup.id not in [hit.id for hit in _travelled(agent, top_k=3, rest_vector=concept_rest(calls))]


def test_the_agent_api_lets_the_rest_in_under_query_rest_where_the_embedder_has_one(
    app, client, travellers, monkeypatch
):
    """memory.query through the agent API asks for the question's rest (jobs/embeddings.py) only under
    QUERY_REST (off by default), and answers without it where the embedder has no cheap way to one: the
    local model's int8 path has; the scripted endpoint, like any endpoint, has not."""
    from console.api import routes_query

    agent, flight, dinner = travellers
    monkeypatch.setattr(rest, "REST_KEEP", 1)
    assert embeddings.rest_vector(TRAVELLER, [(0, 4)]) is None  # an endpoint: no cheap rest
    calls: list[str] = []
    monkeypatch.setattr(routes_query, "rest_vector", concept_rest(calls))
    assert app.config["QUERY_REST"] is False
    without = ask(client, agent, TRAVELLER, top_k=2, categories=["profile"])
    assert without[1] != dinner.id and calls == []
    monkeypatch.setitem(app.config, "QUERY_REST", True)
    assert ask(client, agent, TRAVELLER, top_k=2, categories=["profile"]) == [flight.id, dinner.id]
    assert calls == ["What does the person with eat ?"]
    monkeypatch.setattr(routes_query, "rest_vector", embeddings.rest_vector)  # the endpoint's: none
    assert ask(client, agent, TRAVELLER, top_k=2, categories=["profile"]) == without
