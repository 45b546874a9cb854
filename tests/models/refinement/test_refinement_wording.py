"""Spec 002 A: no summarisation language in anything the refinement model reads — the system prompt, the
consent prompt, the kick-off and paging texts, the tools' schemas, and the journal the offline refiner
leaves (a later session reads it in the ledger)."""

from __future__ import annotations

import json
import re

import pytest
import sqlalchemy as sa

from jobs import prompts
from jobs.refinement import run_refinement
from models import AgentMemory, db
from models.changes import write
from models.refinement.tools import tool_specs

# Spec 002 A's words ("merge", "compress", "denser patterns and laws", "delete obsolete"), in any form.
BANNED = re.compile(r"\bmerg\w*|\bcompress\w*|\bdenser\b|\bobsolete\b", re.IGNORECASE)

TEXTS = {
    "default refinement prompt": prompts.DEFAULT_REFINEMENT_PROMPT,
    "safety rules": prompts.SAFETY_RULES,
    "consent prompt": prompts.CONSENT_PROMPT,
    "kick-off": prompts.KICKOFF,
    "paged ledger": prompts.PAGED_LEDGER,
    "page kick-off": prompts.PAGE_KICKOFF,
    "nudge": prompts.NUDGE,
    "tool schemas": json.dumps(tool_specs(paged=False)),
    "paged tool schemas": json.dumps(tool_specs(paged=True)),
}


@pytest.mark.parametrize("text", TEXTS)
def test_no_text_the_refinement_model_reads_asks_it_to_merge_or_compress(text):
    assert BANNED.findall(TEXTS[text]) == []


def test_the_offline_refiners_journal_uses_none_of_the_banned_words(make_agent, redis_conn):
    agent = make_agent(core_token_budget=50)
    for n in range(10):
        write.save(agent.id, f"Standing fact number {n} about the user", actor="admin:seed")
    write.save(agent.id, "User Maya prefers tea in the morning.", actor="admin:seed")
    write.save(agent.id, "The user Maya prefers tea in the morning", actor="admin:seed")

    assert run_refinement(agent.id, "test", force=True)["ops"] == 1

    journal = db.session.scalar(sa.select(AgentMemory.content).where(AgentMemory.memory_type == "journal"))
    assert "Offline refiner:" in journal and BANNED.findall(journal) == []
