"""bench/extraction_recall.py's turns: each session of a conversational set becomes one turn holding every
observation told at that time, in order, and sessions come oldest first."""

from __future__ import annotations

from bench import conversational, extraction_recall


def test_every_observation_is_in_exactly_one_turn_told_at_its_time_and_turns_are_oldest_first():
    agent = conversational.load("life_log", 0)["agents"][0]
    turns = extraction_recall.sessions(agent["memories"])
    told = [m["id"] for _, _, observations in turns for m in observations]
    assert sorted(told) == sorted(m["id"] for m in agent["memories"]) and len(told) == len(set(told))
    assert [at for at, _, _ in turns] == sorted(at for at, _, _ in turns)
    for at, _, observations in turns:
        assert {m["created_at"] for m in observations} == {at.isoformat()}
        text = extraction_recall.turn_text(observations)
        positions = [text.index(m["content"]) for m in observations]
        assert positions == sorted(positions)
