"""The tutoring-centre conversational memory set: shape, determinism and the properties each question kind
promises."""

from __future__ import annotations

import json
import math
import re
from datetime import datetime

import pytest

from bench.conversations import tutoring_center as tc
from bench.conversations import tutoring_center_vocab as vocab

SEEDS = [0, 1, 2, 3]
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")
FIRST_NAMES = set(vocab.FEMALE_NAMES) | set(vocab.MALE_NAMES)


@pytest.fixture(scope="module", params=SEEDS)
def generated(request):
    return tc.generate_with_changes(request.param)


@pytest.fixture(scope="module")
def data(generated):
    return generated[0]


def _questions(data, kind=None):
    for agent in data["agents"]:
        memories = {m["id"]: m for m in agent["memories"]}
        for q in agent["questions"]:
            if kind is None or q["kind"] == kind:
                yield q, [memories[e] for e in q["evidence"]]


def _names_in(text):
    return {w for w in re.findall(r"[^\W\d_]+", text) if w in FIRST_NAMES}


def test_shares_are_well_formed():
    assert set(tc.SHARES) == {"single-hop", "paraphrase", "multi-hop", "temporal", "identifier"}
    assert math.isclose(sum(tc.SHARES.values()), 1.0)
    assert all(0.10 <= v <= 0.30 for v in tc.SHARES.values())
    assert tc.NAME == "tutoring_center"


def test_same_seed_same_set_and_different_seed_different_set():
    assert tc.generate(7) == tc.generate(7)
    assert tc.generate_with_changes(7) == tc.generate_with_changes(7)
    assert tc.generate(7) != tc.generate(8)
    assert tc.generate() == tc.generate(0)


def test_format(data):
    assert data["name"] == tc.NAME
    assert set(data) == {"name", "agents"}
    memory_ids, question_ids, keys = set(), set(), set()
    for agent in data["agents"]:
        assert set(agent) == {"key", "memories", "questions"}
        assert isinstance(agent["key"], str) and agent["key"] not in keys
        keys.add(agent["key"])
        created = {}
        for m in agent["memories"]:
            assert set(m) == {"id", "content", "created_at", "user"}
            assert all(isinstance(m[k], str) and m[k] for k in m)
            assert ISO.match(m["created_at"])
            assert m["id"] not in memory_ids
            memory_ids.add(m["id"])
            created[m["id"]] = datetime.fromisoformat(m["created_at"])
        for q in agent["questions"]:
            assert set(q) == {"id", "text", "kind", "evidence", "asked_at"}
            assert isinstance(q["text"], str) and q["text"].endswith("?")
            assert q["kind"] in tc.SHARES
            assert q["id"] not in question_ids
            question_ids.add(q["id"])
            assert ISO.match(q["asked_at"])
            assert q["evidence"] and len(set(q["evidence"])) == len(q["evidence"])
            asked = datetime.fromisoformat(q["asked_at"])
            for e in q["evidence"]:
                assert e in created, "evidence must be a memory of the same agent"
                assert asked > created[e]


def test_users_are_families_or_the_centre(data):
    for agent in data["agents"]:
        users = {m["user"] for m in agent["memories"]}
        assert tc.CENTRE_USER in users
        assert all(u == tc.CENTRE_USER or re.fullmatch(r"family-\d{2}", u) for u in users)


def test_size_bounds(data):
    assert 10 <= len(data["agents"]) <= 12
    for agent in data["agents"]:
        assert 200 <= len(agent["memories"]) <= 260
        assert 140 <= len(agent["questions"]) <= 160


def test_kind_shares_within_three_points(data):
    for agent in data["agents"]:
        n = len(agent["questions"])
        for kind, share in tc.SHARES.items():
            got = sum(1 for q in agent["questions"] if q["kind"] == kind) / n
            assert abs(got - share) <= 0.03, (agent["key"], kind, got)


def test_paraphrase_overlap_is_capped(data):
    n = 0
    for q, evidence in _questions(data, "paraphrase"):
        assert len(evidence) == 1
        shared, ratio = tc.paraphrase_overlap(q["text"], evidence[0]["content"])
        assert shared <= tc.PARAPHRASE_MAX_SHARED and ratio <= tc.PARAPHRASE_MAX_RATIO, q["text"]
        n += 1
    assert n > 0


def test_overlap_measure():
    assert (
        tc.paraphrase_overlap("Which subject does Ravi struggle with?", "Ravi is struggling with physics.")[0]
        == 2
    )
    assert tc.paraphrase_overlap("How does Ravi spend free time?", "Ravi plays the oboe.") == (1, 1 / 4)
    assert not tc.within_paraphrase_cap("Ravi plays the oboe?", "Ravi plays the oboe.")


def test_single_hop_has_one_memory_and_shares_words(data):
    for q, evidence in _questions(data, "single-hop"):
        assert len(evidence) == 1
        assert tc.paraphrase_overlap(q["text"], evidence[0]["content"])[0] >= 1


def test_multi_hop_needs_two_memories_and_does_not_name_the_second_person(data):
    n = 0
    for q, evidence in _questions(data, "multi-hop"):
        assert len(evidence) >= 2
        second = _names_in(evidence[-1]["content"])
        assert second, evidence[-1]["content"]
        assert not second & _names_in(q["text"]), q["text"]
        n += 1
    assert n > 0


def test_identifier_questions_quote_a_code_from_their_evidence(data):
    code = re.compile(r"\b(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9]+(?:-[A-Z0-9]+)*\b")
    for q, evidence in _questions(data, "identifier"):
        codes = set(code.findall(q["text"]))
        assert codes, q["text"]
        assert any(c in m["content"] for c in codes for m in evidence)


def test_codes_are_unique_to_one_memory(data):
    for agent in data["agents"]:
        seen = {}
        for m in agent["memories"]:
            for c in tc.codes_in(m["content"]):
                assert c not in seen
                seen[c] = m["id"]


def test_plan_changes_keep_both_notes_and_the_change_is_later(generated):
    data, changes = generated
    agents = {a["key"]: a for a in data["agents"]}
    assert changes
    for c in changes:
        assert set(c) >= {"agent", "original", "change", "what"}
        memories = {m["id"]: m for m in agents[c["agent"]]["memories"]}
        original, change = memories[c["original"]], memories[c["change"]]
        assert change["created_at"] > original["created_at"]
        assert original["content"] != change["content"]
        cited = [q for q in agents[c["agent"]]["questions"] if c["change"] in q["evidence"]]
        assert cited and all(q["kind"] == "temporal" for q in cited)
    assert all(any(c["agent"] == key for c in changes) for key in agents)


def test_temporal_questions_ask_about_time(data):
    for q, _ in _questions(data, "temporal"):
        assert re.search(r"\b(when|date|week|days|now|current|after|before)\b", q["text"], re.I), q["text"]


def test_about_a_fifth_of_memories_answer_no_question(data):
    for agent in data["agents"]:
        cited = {e for q in agent["questions"] for e in q["evidence"]}
        share = sum(1 for m in agent["memories"] if m["id"] not in cited) / len(agent["memories"])
        assert 0.20 <= share <= 0.25, (agent["key"], share)


def test_stats_and_main(capsys):
    data = tc.generate(0)
    s = tc.stats(data)
    assert s["agents"] == len(data["agents"])
    assert s["memories"] == sum(len(a["memories"]) for a in data["agents"])
    assert s["questions"] == sum(s["per_kind"].values())
    assert 0.20 <= s["unanswered_share"] <= 0.25
    assert tc.main(["--seed", "0"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(s))
