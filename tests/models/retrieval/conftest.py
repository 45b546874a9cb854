"""Fixtures of memory.query's retrieval tests: the scripted embedding endpoint as the configured embedder,
or none; the common-words rule (models/retrieval/term_stats.py) on a small table."""

from __future__ import annotations

import pytest

from jobs import embeddings
from models.retrieval import term_stats
from tests.models.retrieval.retrieval_support import MODEL, embeddings_reply


@pytest.fixture
def embedder(app, llm, monkeypatch):
    """EMBEDDINGS_MODEL on the scripted endpoint: the configured, real (non-fallback) embedder."""
    llm.fallback = embeddings_reply
    monkeypatch.setitem(app.config, "EMBEDDINGS", "endpoint")
    monkeypatch.setitem(app.config, "EMBEDDINGS_MODEL", MODEL)
    monkeypatch.setitem(app.config, "EMBEDDINGS_BASE_URL", llm.url)
    embeddings._build.cache_clear()
    embeddings._query_vector.cache_clear()
    yield llm
    embeddings._build.cache_clear()
    embeddings._query_vector.cache_clear()


@pytest.fixture
def no_embedder(app, monkeypatch):
    monkeypatch.setitem(app.config, "EMBEDDINGS", "hashed")
    monkeypatch.setitem(app.config, "EMBEDDINGS_MODEL", None)
    embeddings._build.cache_clear()
    yield
    embeddings._build.cache_clear()


@pytest.fixture
def half_is_common(monkeypatch):
    """The common-words rule from ten memories, with a word half of them hold counted common; the word
    figures are forgotten before and after, even when the test fails."""
    monkeypatch.setattr(term_stats, "MIN_ROWS", 10)
    monkeypatch.setattr(term_stats, "COMMON_SHARE", 0.5)
    term_stats.forget()
    yield
    term_stats.forget()
