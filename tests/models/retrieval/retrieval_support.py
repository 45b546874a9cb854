"""What memory.query's retrieval tests share: a scripted embedding endpoint whose vectors are a bag of
*concepts* (words that mean the same thing — "study", "course", "certificate" — share a dimension, so a
paraphrase with no word in common with a memory is still near it, as a real embedding model's would be,
deterministically), and the helpers that write, embed and ask. Its fixtures are in conftest.py."""

from __future__ import annotations

import hashlib

import numpy as np
import sqlalchemy as sa

from jobs import relations
from models import db
from models.changes.mutations import create_memory
from tests.api_support import bearer
from tests.scripted_llm import Reply

DIMS = 64
MODEL = "scripted-embed"
LABEL = f"{MODEL} (endpoint)"
CONCEPTS = {
    "learn": "study studies course courses certificate counselling degree class classes learn training",
    "want": "like likes wants plans plan hopes would",
    "food": "eat eats dinner lunch pasta vegetarian meal",
    "travel": "trip travel flight flights lisbon holiday vacation",
}
WORD_CONCEPT = {w: c for c, words in CONCEPTS.items() for w in words.split()}


def concept_vector(text: str) -> list[float]:
    """Concept words on their concept's dimension (weight 3), other words hashed onto the rest."""
    vector = np.zeros(DIMS)
    names = sorted(CONCEPTS)
    for word in "".join(ch if ch.isalnum() else " " for ch in text.lower()).split():
        concept = WORD_CONCEPT.get(word)
        if concept is not None:
            vector[names.index(concept)] += 3.0
        else:
            digest = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "little")
            vector[len(names) + digest % (DIMS - len(names))] += 1.0
    return (vector / (np.linalg.norm(vector) or 1.0)).tolist()


def embeddings_reply(request: dict) -> Reply:
    inputs = request.get("input")
    inputs = [inputs] if isinstance(inputs, str) else inputs
    data = [{"object": "embedding", "index": i, "embedding": concept_vector(t)} for i, t in enumerate(inputs)]
    return Reply(
        body={
            "object": "list",
            "data": data,
            "model": MODEL,
            "usage": {"prompt_tokens": 1, "total_tokens": 1},
        }
    )


def ask(client, agent, question: str, **body) -> list[int]:
    response = client.post(
        "/api/v1/memory/query", json={"query": question, "top_k": 5, **body}, headers=bearer(agent)
    )
    assert response.status_code == 200, response.get_json()
    return [r["id"] for r in response.get_json()["results"]]


def remember(agent, content: str, **fields):
    fields.setdefault("category", "profile")
    return create_memory(agent.id, content, actor="agent", memory_type="episodic", **fields)


def word_figures_gathered() -> None:
    """PostgreSQL reads a word's share from pg_stats, which only ANALYZE fills; SQLite counts as it asks."""
    if db.engine.dialect.name == "postgresql":
        db.session.commit()
        with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(sa.text("ANALYZE agent_memories"))


def backfill_all() -> int:
    return relations.backfill(relations.stale_memories())


QUESTION = "What would she like to study next?"


def paraphrase_set(agent):
    target = remember(agent, "Maya plans to take a counselling certificate")
    decoy = remember(agent, "Maya asked for a desk next to the window, for the light")
    others = [remember(agent, f"Maya's flight to Lisbon leaves at {h} o'clock") for h in (6, 7, 8)]
    return target, decoy, others
