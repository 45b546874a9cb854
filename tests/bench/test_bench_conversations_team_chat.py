"""bench/conversations/team_chat.py: a seed always gives the same set of the benchmark's sizes, every question
cites memories that exist and were stored before it is asked, the kinds keep their shares, an identifier
names one memory only, and a reversed decision is answered by the reversal alone."""

import json
import re
from collections import Counter
from datetime import datetime

import pytest

from bench.conversations import team_chat, team_chat_vocab

KINDS = set(team_chat.SHARES)


@pytest.fixture(scope="module", params=[0, 7])
def data(request):
    return team_chat.generate(request.param)


def test_the_same_seed_gives_the_same_set_and_another_seed_another():
    assert team_chat.generate(3) == team_chat.generate(3)
    assert team_chat.generate(3) != team_chat.generate(4)
    json.dumps(team_chat.generate(3))  # plain data


def test_the_set_has_the_sizes_of_a_long_conversational_benchmark(data):
    assert data["name"] == team_chat.NAME == "team_chat"
    assert 8 <= len(data["agents"]) <= 12
    for agent in data["agents"]:
        assert 150 <= len(agent["memories"]) <= 400
        assert 100 <= len(agent["questions"]) <= 200
    stats = team_chat.stats(data)
    assert 2000 <= stats["memories"] <= 3000 and 1200 <= stats["questions"] <= 1800


def test_ids_are_unique_and_memories_are_short_dated_observations_about_a_colleague(data):
    memory_ids = [m["id"] for a in data["agents"] for m in a["memories"]]
    question_ids = [q["id"] for a in data["agents"] for q in a["questions"]]
    assert len(set(memory_ids)) == len(memory_ids) and len(set(question_ids)) == len(question_ids)
    names = {name.lower() for name, _, _ in team_chat_vocab.PEOPLE}
    for agent in data["agents"]:
        assert len({m["user"] for m in agent["memories"]}) >= 10  # a team, not one person
        for m in agent["memories"]:
            assert m["id"].startswith(agent["key"] + "-m") and m["user"] in names
            assert 4 <= len(m["content"].split()) <= 40
            assert not re.search(r"[{}]", m["content"]), m["content"]
            assert datetime.fromisoformat(m["created_at"]).tzinfo is None


def test_every_evidence_memory_exists_in_its_agent_and_precedes_the_question(data):
    for agent in data["agents"]:
        stored = {m["id"]: datetime.fromisoformat(m["created_at"]) for m in agent["memories"]}
        for q in agent["questions"]:
            assert q["kind"] in KINDS and q["evidence"] and not re.search(r"[{}]", q["text"])
            assert len(set(q["evidence"])) == len(q["evidence"])
            for mid in q["evidence"]:
                assert stored[mid] < datetime.fromisoformat(q["asked_at"])
            if q["kind"] == "multi-hop":
                assert 2 <= len(q["evidence"]) <= 3
            else:
                assert len(q["evidence"]) == 1


def test_each_kind_keeps_its_share_of_the_questions(data):
    kinds = Counter(q["kind"] for a in data["agents"] for q in a["questions"])
    total = sum(kinds.values())
    assert set(kinds) == KINDS
    for kind, share in team_chat.SHARES.items():
        assert abs(kinds[kind] / total - share) <= 0.05, kind


def test_each_identifier_occurs_in_exactly_one_memory_its_evidence(data):
    for agent in data["agents"]:
        contents = {m["id"]: m["content"] for m in agent["memories"]}
        identifiers = [q for q in agent["questions"] if q["kind"] == "identifier"]
        assert identifiers
        for q in identifiers:
            ident = q["identifier"]
            assert ident in q["text"]
            pattern = re.compile(r"(?<![\w#:])" + re.escape(ident) + r"(?![\w:])")
            holders = [mid for mid, text in contents.items() if pattern.search(text)]
            assert holders == q["evidence"], (ident, holders)


def shape_pattern(shape: str) -> re.Pattern:
    """A decision's memory template as a pattern matching any colleague's name in its slot."""
    return re.compile("^" + re.escape(shape).replace(re.escape("{n}"), r"\w+") + "$")


def test_a_reversed_decision_is_answered_by_the_reversal_and_the_first_decision_is_stored_earlier(data):
    reversed_ = 0
    for agent in data["agents"]:
        memories = {m["id"]: m for m in agent["memories"]}
        for q in agent["questions"]:
            for first, later, questions in team_chat_vocab.DECISIONS:
                if q["text"] in questions:
                    (cited,) = q["evidence"]
                    assert shape_pattern(later).match(memories[cited]["content"])
                    earlier = [m for m in memories.values() if shape_pattern(first).match(m["content"])]
                    assert len(earlier) == 1 and earlier[0]["created_at"] < memories[cited]["created_at"]
                    reversed_ += 1
    assert reversed_ >= 20


def test_a_paraphrase_shares_few_words_with_the_memory_it_cites(data):
    word = re.compile(r"[a-z0-9]+")
    common = set(
        "a an the of to in on at for is was who what which when did does do it its their with".split()
    )
    overlaps = []
    for agent in data["agents"]:
        contents = {m["id"]: m["content"] for m in agent["memories"]}
        for q in (q for q in agent["questions"] if q["kind"] == "paraphrase"):
            asked = set(word.findall(q["text"].lower())) - common
            cited = set(word.findall(contents[q["evidence"][0]].lower()))
            overlaps.append(len(asked & cited) / len(asked))
    assert sum(overlaps) / len(overlaps) < 0.25


def test_vocabulary_is_varied_enough_to_be_hard():
    assert len({name for name, _, _ in team_chat_vocab.PEOPLE}) >= 60
    assert all(len(shapes) >= 2 for shapes, _, _ in team_chat_vocab.FACTS)
    shapes = [
        team_chat_vocab.INCIDENT_SHAPES, team_chat_vocab.REPORTS_SHAPES, team_chat_vocab.OWNS_SHAPES,
        team_chat_vocab.HANDOFF_SHAPES, team_chat_vocab.LEAD_SHAPES, team_chat_vocab.PLAN_SHAPES,
        team_chat_vocab.SLIP_SHAPES, team_chat_vocab.SHIP_SHAPES, team_chat_vocab.ROTA_SHAPES,
        team_chat_vocab.ACCOUNT_SHAPES, team_chat_vocab.JOIN_SHAPES, team_chat_vocab.FLAG_SHAPES,
        team_chat_vocab.HOST_SHAPES,
    ]  # fmt: skip
    assert all(len(kind) >= 3 for kind in shapes)
    assert len(team_chat_vocab.FILLERS) >= 30


def test_the_command_line_writes_the_set_and_prints_counts_by_kind(tmp_path, capsys):
    out = tmp_path / "set.json"
    team_chat.main(["--seed", "0", "--out", str(out), "--stats"])
    assert json.loads(out.read_text()) == team_chat.generate(0)
    printed = json.loads(capsys.readouterr().out)
    assert set(printed["by_kind"]) == KINDS and printed["agents"] == len(team_chat.generate(0)["agents"])
