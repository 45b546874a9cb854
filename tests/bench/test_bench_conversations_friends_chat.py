"""Tests of the friends_chat conversational set generator (bench/conversations/friends_chat.py)."""

import json
import re
import time
from collections import Counter
from datetime import date, datetime

import pytest

from bench.conversations import friends_chat as fc
from bench.conversations import friends_chat_vocab as fv

KINDS = {"single-hop", "paraphrase", "multi-hop", "temporal", "identifier"}
CODE = re.compile(r"\b[A-Z]{2,3}[ -]?\d{3,5}\b")
PROPER = re.compile(r"\b[A-Z][\w'-]*(?: (?:[A-Z&][\w'-]*))*")
STOP = set(
    "a an the of to in on at for with and or is was did does do what which who where when how why that this "
    "it its from by about after before as be up new s".split()
)


@pytest.fixture(scope="module")
def built():
    return fc.generate_with_answers(0)


@pytest.fixture(scope="module")
def data(built):
    return built[0]


def _questions(data, kind=None):
    for agent in data["agents"]:
        memories = {m["id"]: m for m in agent["memories"]}
        for q in agent["questions"]:
            if kind is None or q["kind"] == kind:
                yield agent, memories, q


def _words(text):
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP and len(w) > 2}


def _said(m):
    return m["content"].split(": ", 1)[1]


def test_format(data):
    assert set(data) == {"name", "agents"} and data["name"] == fc.NAME == "friends_chat"
    memory_ids, question_ids = [], []
    for agent in data["agents"]:
        assert set(agent) == {"key", "memories", "questions"} and isinstance(agent["key"], str)
        ids = {m["id"] for m in agent["memories"]}
        for m in agent["memories"]:
            assert set(m) == {"id", "content", "created_at", "user"}
            assert all(isinstance(m[k], str) for k in m)
            assert re.fullmatch(r"[a-z]+", m["user"])
            assert m["content"].startswith(m["user"].capitalize() + ": ")
            datetime.fromisoformat(m["created_at"])
            memory_ids.append(m["id"])
        for q in agent["questions"]:
            assert set(q) == {"id", "text", "kind", "evidence"}
            assert q["kind"] in KINDS and q["text"].endswith("?") and isinstance(q["text"], str)
            assert q["evidence"] and set(q["evidence"]) <= ids
            assert len(set(q["evidence"])) == len(q["evidence"])
            question_ids.append(q["id"])
    assert len(memory_ids) == len(set(memory_ids))
    assert len(question_ids) == len(set(question_ids))


def test_determinism():
    assert fc.generate(0) == fc.generate(0)
    assert fc.generate(3) == fc.generate(3)
    assert fc.generate(1) != fc.generate(0)


def test_fast_enough():
    start = time.perf_counter()
    fc.generate(11)
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize("seed", [0, 1, 2, 7])
def test_sizes(seed):
    data = fc.generate(seed)
    assert len(data["agents"]) == 10
    all_words = []
    for agent in data["agents"]:
        assert 450 <= len(agent["memories"]) <= 650, agent["key"]
        assert 130 <= len(agent["questions"]) <= 170, agent["key"]
        words = [len(m["content"].split()) for m in agent["memories"]]
        assert min(words) >= 8 and max(words) <= 60
        all_words += words
    assert 20 <= sum(all_words) / len(all_words) <= 30


def test_two_friends_over_a_year_of_sessions(data):
    for agent in data["agents"]:
        assert len({m["user"] for m in agent["memories"]}) == 2
        times = [datetime.fromisoformat(m["created_at"]) for m in agent["memories"]]
        assert times == sorted(times) and len(set(times)) == len(times)
        days = sorted({t.date() for t in times})
        assert 20 <= len(days) <= 30
        assert 300 <= (days[-1] - days[0]).days <= 420
        assert days[0].year == 2023 and days[-1].year in (2023, 2024)


def test_every_kind_in_every_agent(data):
    for agent in data["agents"]:
        kinds = Counter(q["kind"] for q in agent["questions"])
        assert set(kinds) == KINDS, agent["key"]
        assert min(kinds.values()) >= 20, (agent["key"], kinds)


def test_evidence_counts(data):
    for _, _, q in _questions(data):
        if q["kind"] == "multi-hop":
            assert len(q["evidence"]) >= 2, q["text"]
        elif q["kind"] != "temporal":
            assert len(q["evidence"]) == 1, q["text"]


def test_chitchat_share(data):
    for agent in data["agents"]:
        chit = [m for m in agent["memories"] if fv.is_chitchat(m["content"])]
        assert 0.3 <= len(chit) / len(agent["memories"]) <= 0.5, agent["key"]
        cited = {e for q in agent["questions"] for e in q["evidence"]}
        assert not cited & {m["id"] for m in chit}
    assert 0.35 <= fc.stats(data)["chitchat_share"] <= 0.48


def _template(text):
    parts = re.split(r"\{\w+\}", text)
    return re.compile(".+?".join(re.escape(part) for part in parts))


def test_some_turns_carry_two_facts(data):
    texts = [t for row in fv.EVERYDAY for t in (row[0],)] + [t for row in fv.VARIANTS for t in row]
    templates = [_template(t) for t in texts + [row[0] for row in fv.CODED]]
    for agent in data["agents"]:
        two = 0
        for m in agent["memories"]:
            sentences = re.split(r"(?<=[.!?]) ", _said(m))
            told = {i for i, t in enumerate(templates) for s in sentences if t.fullmatch(s)}
            two += len(told) >= 2
        assert two >= 20, agent["key"]
        long = [m for m in agent["memories"] if len(m["content"].split()) >= 35]
        assert len(long) >= 0.1 * len(agent["memories"])


def test_identifier_names_a_term_found_in_one_turn(data):
    count = 0
    for agent, _, q in _questions(data, "identifier"):
        friends = {m["user"].capitalize() for m in agent["memories"]}
        terms = CODE.findall(q["text"]) + [
            t for t in PROPER.findall(q["text"]) if t.split()[0] not in friends
        ]
        unique = [
            t for t in terms if [m["id"] for m in agent["memories"] if t in m["content"]] == q["evidence"]
        ]
        assert unique, q["text"]
        count += 1
    assert count >= 200


def test_paraphrase_shares_few_words(data):
    overlap = []
    for _, memories, q in _questions(data, "paraphrase"):
        friends = {m.lower() for m in {mm["user"] for mm in memories.values()}}
        shared = (_words(q["text"]) & _words(_said(memories[q["evidence"][0]]))) - friends
        overlap.append(len(shared))
        assert len(shared) <= 4, (q["text"], shared)
    assert sum(overlap) / len(overlap) <= 1.5


def test_temporal_answers_match_the_turn_dates(built):
    data, answers = built
    checked = 0
    for _, memories, q in _questions(data, "temporal"):
        answer = answers[q["id"]]
        turns = [memories[e] for e in q["evidence"]]
        if len(turns) == 2:  # which came first
            assert answer in q["evidence"]
            a, b = (datetime.fromisoformat(t["created_at"]) for t in turns)
            if abs((a - b).days) > 8:
                assert answer == (turns[0] if a < b else turns[1])["id"], q["text"]
            continue
        said, day = _said(turns[0]), datetime.fromisoformat(turns[0]["created_at"]).date()
        if re.fullmatch(r"\d{4}-\d\d-\d\d", answer):
            told = {fv.resolve(ph, day) for ph in fv.RELATIVE if ph and ph in said} | {day}
            assert date.fromisoformat(answer) in told, (q["text"], said, answer)
            assert (day - date.fromisoformat(answer)).days <= 7
        else:
            assert answer == fv.month_of(day), q["text"]
        checked += 1
    assert checked >= 150


def test_relative_times_resolve():
    saturday = date(2023, 6, 10)
    assert fv.resolve("yesterday", saturday) == date(2023, 6, 9)
    assert fv.resolve("two days ago", saturday) == date(2023, 6, 8)
    assert fv.resolve("last weekend", saturday) == date(2023, 6, 3)
    assert fv.resolve("last weekend", date(2023, 6, 14)) == saturday
    assert fv.resolve("", saturday) == fv.resolve("earlier today", saturday) == saturday


def test_changed_plans_cite_the_change(data):
    count = 0
    for _, memories, q in _questions(data, "multi-hop"):
        if q["text"].endswith("taking place now?"):
            first, change = (memories[e] for e in q["evidence"])
            assert first["user"] == change["user"]
            assert change["created_at"] > first["created_at"]
            city = re.search(r"in (\w+) in", first["content"]).group(1)
            assert city in change["content"]
            count += 1
    assert count >= 10


def test_questions_name_the_friend(data):
    for agent, _, q in _questions(data):
        friends = {m["user"].capitalize() for m in agent["memories"]}
        if not re.search(r"^Which happened first|booking \w+ for|food does", q["text"]):
            assert any(f in q["text"] for f in friends), q["text"]


def test_stats_and_main(data, capsys, tmp_path):
    st = fc.stats(data)
    assert st["name"] == "friends_chat" and st["agents"] == 10
    assert st["memories"] == sum(len(a["memories"]) for a in data["agents"])
    assert st["questions"] == sum(st["per_kind"].values())
    assert set(st["per_kind"]) == KINDS
    assert fc.main(["--seed", "0", "--stats"]) == 0
    assert json.loads(capsys.readouterr().out) == st
    out = tmp_path / "set.json"
    assert fc.main(["--seed", "2", "--out", str(out)]) == 0
    assert json.loads(out.read_text()) == fc.generate(2)
