"""bench/conversations/life_log.py: a seed always gives the same set, every question cites memories that exist
and were stored before it is asked, the kinds keep their shares, and an identifier names one memory only."""

import json
import re
from collections import Counter

import pytest

from bench.conversations import life_log, life_log_vocab

KINDS = {"single-hop", "paraphrase", "multi-hop", "temporal", "identifier"}


@pytest.fixture(scope="module", params=[0, 7])
def data(request):
    return life_log.generate(request.param)


def test_the_same_seed_gives_the_same_set_and_another_seed_another():
    assert life_log.generate(3) == life_log.generate(3)
    assert life_log.generate(3) != life_log.generate(4)
    json.dumps(life_log.generate(3))  # plain data


def test_the_set_has_the_sizes_of_a_long_conversational_benchmark(data):
    assert data["name"] == life_log.NAME == "life_log"
    assert 8 <= len(data["agents"]) <= 12
    for agent in data["agents"]:
        assert 150 <= len(agent["memories"]) <= 400
        assert 100 <= len(agent["questions"]) <= 200
    stats = life_log.stats(data)
    assert 2000 <= stats["memories"] <= 3000 and 1200 <= stats["questions"] <= 1800


def test_ids_are_unique_and_memories_are_short_dated_observations(data):
    memory_ids = [m["id"] for a in data["agents"] for m in a["memories"]]
    question_ids = [q["id"] for a in data["agents"] for q in a["questions"]]
    assert len(set(memory_ids)) == len(memory_ids) and len(set(question_ids)) == len(question_ids)
    for agent in data["agents"]:
        assert len({m["user"] for m in agent["memories"]}) in (2, 3)
        for m in agent["memories"]:
            assert m["id"].startswith(agent["key"] + "-m") and m["user"] == m["user"].lower()
            assert 4 <= len(m["content"].split()) <= 40 and "{" not in m["content"]


def test_every_evidence_memory_exists_in_its_agent_and_precedes_the_question(data):
    for agent in data["agents"]:
        stored = {m["id"]: m["created_at"] for m in agent["memories"]}
        for q in agent["questions"]:
            assert q["kind"] in KINDS and q["evidence"] and "{" not in q["text"]
            assert len(set(q["evidence"])) == len(q["evidence"])
            for mid in q["evidence"]:
                assert stored[mid] < q["asked_at"]
            if q["kind"] == "multi-hop":
                assert 2 <= len(q["evidence"]) <= 3


def test_each_kind_keeps_its_share_of_the_questions(data):
    kinds = Counter(q["kind"] for a in data["agents"] for q in a["questions"])
    total = sum(kinds.values())
    assert set(kinds) == KINDS
    for kind in KINDS - {"identifier"}:
        assert kinds[kind] >= 0.15 * total, kind
    assert kinds["identifier"] >= 0.05 * total


def test_each_identifier_occurs_in_exactly_one_memory_its_evidence(data):
    for agent in data["agents"]:
        contents = {m["id"]: m["content"] for m in agent["memories"]}
        for q in (q for q in agent["questions"] if q["kind"] == "identifier"):
            ident = q["identifier"]
            assert ident in q["text"]
            pattern = re.compile(r"(?<![\w#:])" + re.escape(ident) + r"(?![\w:])")
            holders = [mid for mid, text in contents.items() if pattern.search(text)]
            assert holders == q["evidence"], (ident, holders)


def test_a_changed_plan_is_answered_by_the_later_memory_and_both_are_stored(data):
    changed = 0
    for agent in data["agents"]:
        created = {m["id"]: m["created_at"] for m in agent["memories"]}
        for q in agent["questions"]:
            if q["text"].startswith("Where did") and "first plan" in q["text"]:
                first, later = q["evidence"]
                assert created[first] < created[later]
                changed += 1
    assert changed >= 10


def test_vocabulary_is_varied_enough_to_be_hard():
    assert len(set(life_log_vocab.PEOPLE)) >= 60
    assert len(life_log_vocab.HOBBIES) == len(life_log_vocab.VENUE_WORDS)
    memory_templates = sum(len(shapes) for shapes in life_log_vocab.SHAPES.values())
    memory_templates += len(life_log_vocab.FILLERS) + len(life_log_vocab.PET_FOLLOWUPS)
    assert memory_templates >= 40


def test_the_command_line_writes_the_set_and_prints_counts_by_kind(tmp_path, capsys):
    out = tmp_path / "set.json"
    life_log.main(["--seed", "0", "--out", str(out), "--stats"])
    assert json.loads(out.read_text()) == life_log.generate(0)
    printed = json.loads(capsys.readouterr().out)
    assert set(printed["by_kind"]) == KINDS and printed["agents"] == len(life_log.generate(0)["agents"])
