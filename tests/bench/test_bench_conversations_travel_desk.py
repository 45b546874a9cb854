"""Tests of the travel_desk conversational set generator (bench/conversations/travel_desk.py)."""

import json
import re
from collections import Counter
from datetime import datetime

import pytest

from bench.conversations import travel_desk as td

CODE = re.compile(r"\b[A-Z0-9]+(?:-[A-Z0-9]+)*\b")
NAME = re.compile(r"\b[A-Z][a-z]+\b")
MONTHS = ("January February March April May June July August September October November December").split()


@pytest.fixture(scope="module")
def data():
    return td.generate(0)


@pytest.fixture(scope="module")
def with_changes():
    return td.generate_with_changes(0)


def _questions(data, kind=None):
    for agent in data["agents"]:
        memories = {m["id"]: m for m in agent["memories"]}
        for q in agent["questions"]:
            if kind is None or q["kind"] == kind:
                yield agent, memories, q


def _codes(text):
    return [c for c in CODE.findall(text) if len(c) >= 6 and any(ch.isdigit() for ch in c)]


def test_format(data):
    assert set(data) == {"name", "agents"} and data["name"] == td.NAME == "travel_desk"
    memory_ids, question_ids = [], []
    for agent in data["agents"]:
        assert set(agent) == {"key", "memories", "questions"} and isinstance(agent["key"], str)
        ids = {m["id"] for m in agent["memories"]}
        for m in agent["memories"]:
            assert set(m) == {"id", "content", "created_at", "user"}
            assert m["content"].strip() and len(m["content"]) < 250
            assert re.fullmatch(r"[a-z][a-z.-]{1,30}", m["user"])
            datetime.fromisoformat(m["created_at"])
            memory_ids.append(m["id"])
        for q in agent["questions"]:
            assert set(q) == {"id", "text", "kind", "evidence", "asked_at"}
            assert q["kind"] in td.SHARES and q["text"].endswith("?")
            assert q["evidence"] and set(q["evidence"]) <= ids
            datetime.fromisoformat(q["asked_at"])
            question_ids.append(q["id"])
    assert len(memory_ids) == len(set(memory_ids))
    assert len(question_ids) == len(set(question_ids))


def test_memories_span_about_six_months(data):
    times = [datetime.fromisoformat(m["created_at"]) for a in data["agents"] for m in a["memories"]]
    assert 150 <= (max(times) - min(times)).days <= 215


def test_user_is_the_client_account(data):
    for agent in data["agents"]:
        users = Counter(m["user"] for m in agent["memories"])
        assert 10 <= len(users) <= 20
        for user, count in users.items():
            assert re.fullmatch(r"[a-z]+\.[a-z]+", user)
            first = user.split(".")[0].capitalize()
            own = sum(first in m["content"] for m in agent["memories"] if m["user"] == user)
            assert own >= 0.4 * count, user


def test_determinism():
    assert td.generate(0) == td.generate(0)
    assert td.generate_with_changes(3) == td.generate_with_changes(3)
    assert td.generate(1) != td.generate(0)


@pytest.mark.parametrize("seed", [0, 1, 2, 7])
def test_size_bounds(seed):
    data = td.generate(seed)
    assert 10 <= len(data["agents"]) <= 12
    for agent in data["agents"]:
        assert 200 <= len(agent["memories"]) <= 260
        assert 140 <= len(agent["questions"]) <= 160


def test_shares_declared():
    assert set(td.SHARES) == {"single-hop", "paraphrase", "multi-hop", "temporal", "identifier"}
    assert sum(td.SHARES.values()) == pytest.approx(1)
    assert all(0.15 <= share <= 0.25 for share in td.SHARES.values())


@pytest.mark.parametrize("seed", [0, 5])
def test_kind_shares(seed):
    data = td.generate(seed)
    kinds = Counter(q["kind"] for _, _, q in _questions(data))
    total = sum(kinds.values())
    for kind, share in td.SHARES.items():
        assert abs(kinds[kind] / total - share) <= 0.03, kind
    for agent in data["agents"]:
        per = Counter(q["kind"] for q in agent["questions"])
        for kind, share in td.SHARES.items():
            assert abs(per[kind] / len(agent["questions"]) - share) <= 0.03, (agent["key"], kind)


def test_content_words():
    assert td.content_words("Priya's seats on the flights?") == {"priya", "seat", "flight"}
    assert td.content_words("What is it?") == set()


def test_paraphrase_cap(data):
    count = 0
    for _, memories, q in _questions(data, "paraphrase"):
        assert len(q["evidence"]) == 1
        shared = td.content_words(q["text"]) & td.content_words(memories[q["evidence"][0]]["content"])
        assert len(shared) <= td.PARAPHRASE_MAX_SHARED, (q["text"], shared)
        count += 1
    assert count and td.PARAPHRASE_MAX_SHARED <= 2


def test_single_hop_shares_words(data):
    for _, memories, q in _questions(data, "single-hop"):
        assert len(q["evidence"]) == 1
        shared = td.content_words(q["text"]) & td.content_words(memories[q["evidence"][0]]["content"])
        assert len(shared) >= td.SINGLE_HOP_MIN_SHARED, q["text"]


def test_multi_hop_needs_two_memories(data):
    for _, memories, q in _questions(data, "multi-hop"):
        assert len(q["evidence"]) == 2 and len(set(q["evidence"])) == 2
        words = td.content_words(q["text"])
        first, second = (memories[e] for e in q["evidence"])
        assert words & td.content_words(first["content"]) and words & td.content_words(second["content"])
        asked_names = set(NAME.findall(q["text"]))
        hidden = (set(NAME.findall(first["content"])) & set(NAME.findall(second["content"]))) - asked_names
        assert hidden, (q["text"], first["content"], second["content"])


def test_identifier_quotes_a_unique_code(data):
    contents = [m["content"] for a in data["agents"] for m in a["memories"]]
    count = 0
    for agent, _, q in _questions(data, "identifier"):
        codes = _codes(q["text"])
        assert len(codes) == 1, q["text"]
        holders = [m["id"] for m in agent["memories"] if codes[0] in m["content"]]
        assert holders == q["evidence"]
        assert sum(codes[0] in c for c in contents) == 1
        count += 1
    assert count


def test_plan_changes_keep_both_notes(data, with_changes):
    changed, changes = with_changes
    assert changed == data
    assert len(changes) >= 3 * len(data["agents"])
    assert {"moved", "swapped", "postponed", "cancelled"} <= {w for c in changes for w in c["what"].split()}
    memories = {m["id"]: (a["key"], m) for a in data["agents"] for m in a["memories"]}
    for pair in changes:
        (key_o, original), (key_c, change) = memories[pair["original"]], memories[pair["change"]]
        assert key_o == key_c and original["user"] == change["user"] and original is not change
        assert datetime.fromisoformat(change["created_at"]) > datetime.fromisoformat(original["created_at"])
    cited = {e for _, _, q in _questions(data, "temporal") if len(q["evidence"]) == 2 for e in q["evidence"]}
    assert sum(p["original"] in cited and p["change"] in cited for p in changes) >= len(changes) // 2


def test_temporal_questions_ask_about_time(data):
    for _, memories, q in _questions(data, "temporal"):
        assert set(re.findall(r"[a-z]+", q["text"].lower())) & td.TIME_WORDS, q["text"]
        dated = any(month in memories[e]["content"] for e in q["evidence"] for month in MONTHS)
        assert dated or len(q["evidence"]) == 2, q["text"]


def test_about_a_fifth_answer_no_question(data):
    for agent in data["agents"]:
        cited = {e for q in agent["questions"] for e in q["evidence"]}
        share = sum(m["id"] not in cited for m in agent["memories"]) / len(agent["memories"])
        assert 0.15 <= share <= 0.25, agent["key"]
    assert 0.17 <= td.stats(data)["unanswered_share"] <= 0.23


def test_asked_after_evidence(data):
    for _, memories, q in _questions(data):
        asked = datetime.fromisoformat(q["asked_at"])
        assert all(asked > datetime.fromisoformat(memories[e]["created_at"]) for e in q["evidence"])


def test_stats_and_main(data, capsys):
    st = td.stats(data)
    assert st["name"] == "travel_desk" and st["agents"] == len(data["agents"])
    assert st["memories"] == sum(len(a["memories"]) for a in data["agents"])
    assert st["questions"] == sum(st["per_kind"].values()) == sum(len(a["questions"]) for a in data["agents"])
    assert sum(st["kind_shares"].values()) == pytest.approx(1, abs=1e-3)
    assert set(st["per_agent"]) == {a["key"] for a in data["agents"]}
    assert 0 < st["unanswered_share"] < 1
    assert td.main(["--seed", "0"]) == 0
    assert json.loads(capsys.readouterr().out) == st
    assert td.main(["--seed", "2"]) == 0
    assert json.loads(capsys.readouterr().out) == td.stats(td.generate(2))
