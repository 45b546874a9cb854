"""bench/conversations/household.py: a household assistant's conversational memory set — deterministic, of
the sizes and question shares it promises, every question answered by memories stored before it is asked."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from bench.conversations import household, household_vocab

CODE = re.compile(r"\b(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9][A-Z0-9-]{3,}[A-Z0-9]\b")
STOP = set(
    "a an the and or of to in on at for by with from as is are was be has have does do did who what which where when how s".split()
)
NAMES = {
    w.lower()
    for n in household_vocab.ADULTS + household_vocab.KIDS + household_vocab.OTHERS
    for w in n.split()
}
NAMES |= {s.lower() for s in household_vocab.SURNAMES}


@pytest.fixture(scope="module")
def built():
    return household.generate_with_changes(0)


@pytest.fixture(scope="module")
def data(built):
    return built[0]


def words(text: str) -> set[str]:
    """Lower-case words minus stop words and person names, each without an -s, -ed or -ing and cut to its first
    five letters."""
    out = set()
    for w in re.findall(r"[a-z]+", text.lower()):
        if len(w) > 1 and w not in STOP | NAMES:
            out.add(re.sub(r"(?<=...)(ing|ed|s)$", "", w)[:5])
    return out


def test_the_same_seed_gives_the_same_set_and_another_seed_another(data):
    assert household.generate(0) == data
    assert household.generate(1) != data
    assert json.loads(json.dumps(data)) == data
    assert data["name"] == household.NAME == "household"


def test_sizes():
    for seed in range(3):
        data = household.generate(seed)
        agents = data["agents"]
        assert 8 <= len(agents) <= 12
        for agent in agents:
            assert 150 <= len(agent["memories"]) <= 400
            assert 100 <= len(agent["questions"]) <= 200
        assert 2000 <= sum(len(a["memories"]) for a in agents) <= 3000
        assert 1200 <= sum(len(a["questions"]) for a in agents) <= 1800


def test_ids_are_unique_and_memories_short_dated_distinct_and_with_a_user(data):
    ids = [m["id"] for a in data["agents"] for m in a["memories"]]
    ids += [q["id"] for a in data["agents"] for q in a["questions"]]
    assert len(ids) == len(set(ids))
    assert len({a["key"] for a in data["agents"]}) == len(data["agents"])
    for agent in data["agents"]:
        contents = [m["content"] for m in agent["memories"]]
        assert len(contents) == len(set(contents))
        for m in agent["memories"]:
            assert m["id"].startswith(agent["key"] + "-m")
            assert 40 <= len(m["content"]) <= 200, m
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", m["created_at"])
            assert re.fullmatch(r"[a-z]+", m["user"])
        users = {m["user"] for m in agent["memories"]}
        assert 3 <= len(users) <= 6


def test_every_question_cites_memories_stored_before_it_is_asked(data):
    for agent in data["agents"]:
        memories = {m["id"]: m for m in agent["memories"]}
        for q in agent["questions"]:
            assert q["kind"] in household.SHARES
            assert q["evidence"] and len(set(q["evidence"])) == len(q["evidence"])
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", q["asked_at"])
            for e in q["evidence"]:
                assert q["asked_at"] > memories[e]["created_at"], (q, memories[e])


def test_kinds_keep_their_shares(data):
    assert abs(sum(household.SHARES.values()) - 1) < 1e-9
    questions = [q for a in data["agents"] for q in a["questions"]]
    counts = Counter(q["kind"] for q in questions)
    for kind, share in household.SHARES.items():
        assert abs(counts[kind] / len(questions) - share) < 0.03, (kind, counts[kind])


def test_an_identifier_names_one_memory_only(data):
    seen: Counter = Counter()
    for agent in data["agents"]:
        for m in agent["memories"]:
            seen.update(CODE.findall(m["content"]))
    assert seen and max(seen.values()) == 1
    for agent in data["agents"]:
        memories = {m["id"]: m for m in agent["memories"]}
        for q in (q for q in agent["questions"] if q["kind"] == "identifier"):
            assert len(q["evidence"]) == 1
            codes = CODE.findall(memories[q["evidence"][0]]["content"])
            assert len(codes) == 1
            assert all(c in codes for c in CODE.findall(q["text"]))


def test_a_changed_facts_question_cites_only_the_later_memory(built):
    data, changes = built
    assert len(changes) >= 50
    questions = {q["id"]: q for a in data["agents"] for q in a["questions"]}
    created = {m["id"]: m["created_at"] for a in data["agents"] for m in a["memories"]}
    for change in changes:
        q = questions[change["question"]]
        assert q["evidence"] == [change["later"]]
        assert change["earlier"] not in q["evidence"]
        assert created[change["earlier"]] < created[change["later"]]


def test_multi_hop_questions_cite_at_least_two_memories_and_the_others_one(data):
    for agent in data["agents"]:
        for q in agent["questions"]:
            if q["kind"] == "multi-hop":
                assert len(q["evidence"]) >= 2
            elif q["kind"] in ("single-hop", "paraphrase", "identifier"):
                assert len(q["evidence"]) == 1


def test_a_paraphrase_shares_no_content_word_with_its_memory_but_a_single_hop_does(data):
    for agent in data["agents"]:
        memories = {m["id"]: m for m in agent["memories"]}
        for q in agent["questions"]:
            shared = words(q["text"]) & words(memories[q["evidence"][0]]["content"])
            if q["kind"] == "paraphrase":
                assert not shared, (q["text"], memories[q["evidence"][0]]["content"], shared)
            elif q["kind"] == "single-hop":
                assert shared, (q["text"], memories[q["evidence"][0]]["content"])


def test_temporal_questions_ask_when_or_about_the_week_before_a_trip(data):
    spans = 0
    for agent in data["agents"]:
        for q in agent["questions"]:
            if q["kind"] == "temporal":
                assert q["text"].startswith(
                    ("When", "On what date", "What is the new date", "What happened", "What was")
                )
                spans += "the week before the trip" in q["text"]
    assert spans >= 20


def test_small_talk_is_about_fifteen_percent(data):
    templates = [re.escape(t).replace(r"\{p\}", "[A-Z][a-z]+") for t in household_vocab.SMALL_TALK]
    pattern = re.compile("|".join(templates))
    memories = [m for a in data["agents"] for m in a["memories"]]
    small = sum(bool(pattern.fullmatch(m["content"])) for m in memories)
    assert 0.12 <= small / len(memories) <= 0.18


def test_main_writes_the_set_and_prints_its_stats(tmp_path, capsys):
    out = tmp_path / "household.json"
    household.main(["--seed", "0", "--out", str(out), "--stats"])
    stats = json.loads(capsys.readouterr().out)
    assert json.loads(out.read_text()) == household.generate(0)
    assert stats == household.stats(household.generate(0))
    assert set(stats) == {
        "name",
        "agents",
        "memories",
        "questions",
        "by_kind",
        "evidence_per_question",
        "users",
    }
