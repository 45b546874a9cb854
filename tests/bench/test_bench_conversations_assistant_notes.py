"""bench/conversations/assistant_notes.py: the set is deterministic for a seed and keeps the format's promises
(bench/conversations' shared format): evidence exists and precedes the question, every kind has its share,
each identifier names exactly one memory, ids are unique."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter

import pytest

from bench.conversations import assistant_notes

SEEDS = (0, 1, 7)


@pytest.fixture(scope="module", params=SEEDS)
def data(request) -> dict:
    return assistant_notes.generate(request.param)


def _questions(data: dict) -> list[dict]:
    return [q for agent in data["agents"] for q in agent["questions"]]


def test_the_same_seed_gives_the_same_set_and_another_seed_another():
    first = json.dumps(assistant_notes.generate(3), sort_keys=True)
    assert json.dumps(assistant_notes.generate(3), sort_keys=True) == first
    assert json.dumps(assistant_notes.generate(4), sort_keys=True) != first


def test_the_set_has_the_format_sizes(data):
    assert data["name"] == assistant_notes.NAME == "assistant_notes"
    assert 8 <= len(data["agents"]) <= 12
    for agent in data["agents"]:
        assert 150 <= len(agent["memories"]) <= 400, agent["key"]
        assert 100 <= len(agent["questions"]) <= 200, agent["key"]
    assert 2000 <= sum(len(a["memories"]) for a in data["agents"]) <= 3000
    assert 1200 <= len(_questions(data)) <= 1800


def test_ids_are_unique_across_the_set(data):
    ids = [m["id"] for a in data["agents"] for m in a["memories"]] + [q["id"] for q in _questions(data)]
    assert len(ids) == len(set(ids))
    assert len({a["key"] for a in data["agents"]}) == len(data["agents"])


def test_memories_are_short_dated_observations_with_a_user(data):
    for agent in data["agents"]:
        for m in agent["memories"]:
            assert m["id"].startswith(agent["key"] + "-m")
            assert len(m["content"].split()) <= 40 and "{" not in m["content"], m["content"]
            assert dt.datetime.fromisoformat(m["created_at"]).tzinfo is None
            assert m["user"] and m["user"] == m["user"].lower()
        assert len({m["user"] for m in agent["memories"]}) >= 2


def test_every_evidence_memory_exists_in_its_agent_and_precedes_the_question(data):
    for agent in data["agents"]:
        created = {m["id"]: m["created_at"] for m in agent["memories"]}
        for q in agent["questions"]:
            assert q["kind"] in assistant_notes.KINDS
            assert len(q["evidence"]) == len(set(q["evidence"]))
            assert (2 <= len(q["evidence"]) <= 3) if q["kind"] == "multi-hop" else len(q["evidence"]) == 1, q
            for mid in q["evidence"]:
                assert dt.datetime.fromisoformat(created[mid]) < dt.datetime.fromisoformat(q["asked_at"])


def test_each_kind_has_its_share_of_the_questions(data):
    counts = Counter(q["kind"] for q in _questions(data))
    total = sum(counts.values())
    for kind in assistant_notes.KINDS:
        assert counts[kind] / total >= (0.05 if kind == "identifier" else 0.15), (kind, counts)


def test_each_identifier_occurs_in_exactly_one_memory_of_its_agent_the_evidence(data):
    for agent in data["agents"]:
        for q in agent["questions"]:
            if q["kind"] != "identifier":
                continue
            ident = q["identifier"]
            assert ident in q["text"]
            pattern = re.compile(r"(?<![\w-])" + re.escape(ident) + r"(?![\w-])", re.IGNORECASE)
            holders = [m["id"] for m in agent["memories"] if pattern.search(m["content"])]
            assert holders == q["evidence"], (ident, holders)


def test_the_cli_writes_the_set_and_prints_counts_by_kind(tmp_path, capsys):
    out = tmp_path / "set.json"
    assistant_notes.main(["--seed", "0", "--out", str(out), "--stats"])
    assert json.loads(out.read_text()) == assistant_notes.generate(0)
    printed = json.loads(capsys.readouterr().out)
    assert sum(printed["by_kind"].values()) == printed["questions"]
