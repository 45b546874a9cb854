"""memory.query's identifiers (models/retrieval/identifiers.py): a question naming a code — a ticket, an
order, a serial — is answered first by the memory holding that code, whatever the nearest vectors say, and
the second hop then bridges from it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from jobs import embeddings
from models import db
from models.retrieval import identifiers, query
from tests.models.retrieval.retrieval_support import backfill_all, remember

QUESTION = "Who is the account manager for the customer behind OPS-9033?"
TICKET = "Re OPS-9033, timestamps in the wrong timezone at Redkite Media: Mateo shipped the fix."
ACCOUNT = "Redkite Media is Vera's account."
# Memories about account managers, which the question's other words and the nearest vectors prefer, and a
# ticket sharing the code's first part only.
OTHERS = [
    "Niamh is the account manager for Ostrava Steel.",
    "Niamh is the account manager for Northwind.",
    "Sipho is the account manager for Solano Foods.",
    "Maren is the account manager for Ember Fitness.",
    "Lena is the account manager for the customer Pinecrest Schools.",
    "Re OPS-9034, a blank dashboard at Ember Fitness: Callum shipped the fix.",
]


@pytest.fixture
def tickets(app, make_agent, embedder):
    agent = make_agent(role="supervisor")
    made = {text: remember(agent, text, category="event") for text in [*OTHERS, TICKET, ACCOUNT]}
    db.session.commit()
    backfill_all()
    return agent, made


def _ids(agent, **kwargs) -> list[int]:
    hits = query.search(agent.id, text=QUESTION, categories=["event"], top_k=5, **kwargs)
    db.session.rollback()
    return [h.id for h in hits]


def test_the_memory_holding_the_code_comes_first_and_the_hop_bridges_from_it(tickets):
    agent, made = tickets
    dense = embeddings.query_vector(QUESTION)
    without = _ids(agent, dense=dense, bridge=False)
    assert without[0] != made[TICKET].id  # the account managers lead the first ranking
    found = _ids(agent, dense=dense)
    assert found[0] == made[TICKET].id
    assert made[ACCOUNT].id in found  # the hop, through "Redkite" and "Media", from the ticket
    assert made[OTHERS[-1]].id != found[1]  # OPS-9034 shares a part of the code, not the code


def test_codes_are_tokens_of_letters_and_digits_and_a_memory_holds_one_only_whole():
    assert identifiers.codes("What was sent under ORD79392, and is TK-699574 the same as tk-699574?") == [
        "ORD79392",
        "TK-699574",
        "tk-699574",
    ]
    assert identifiers.codes("Who joined on the 21st at 10am in 2024?") == []
    found = [
        SimpleNamespace(id=1, content="Re OPS-90331: a longer code."),
        SimpleNamespace(id=2, content="Re ops-9033, in lower case."),
        SimpleNamespace(id=3, content="OPS and 9033 apart."),
    ]
    assert [h.id for h in identifiers.holding(found, ["OPS-9033"])] == [2]
