"""The writing guards of docs/spec/003-memory-system.md §9, stated once: the prompts that ask a model for
memories carry them verbatim from the rules the validator checks, and the validator refuses a memory that
opens with a pronoun (it names no one)."""

from __future__ import annotations

import pytest

from jobs import extraction, insights
from models.memories.writing import TYPE_RULES, WritingRuleViolation, check_content, guidance


@pytest.mark.parametrize(
    ("prompt", "memory_type"),
    [(extraction.PROMPT, "semantic"), (insights.PROMPT, "insight")],
    ids=["extraction", "insights"],
)
def test_every_prompt_that_writes_memories_carries_the_validators_rules_verbatim(prompt, memory_type):
    rules = TYPE_RULES[memory_type]
    stated = guidance(memory_type)
    assert stated in prompt.format(turn="", activity="", semantic="", snippet="")
    assert f"{rules.max_chars:,} characters" in stated and f"{rules.max_sentences} sentences" in stated


@pytest.mark.parametrize("opening", ["She", "He", "They", "It", "Her", "Their"])
def test_a_semantic_memory_that_opens_with_a_pronoun_is_refused(opening):
    with pytest.raises(WritingRuleViolation) as refused:
        check_content("semantic", f"{opening} prefers green tea in the morning.")
    assert refused.value.details["rule"] == "semantic.self_contained"


def test_a_memory_that_names_its_subject_may_use_a_pronoun_later():
    assert (
        check_content("semantic", "Maya takes two sugars in her coffee.")
        == "Maya takes two sugars in her coffee."
    )
