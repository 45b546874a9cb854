"""Fixtures of memory.query's retrieval tests: the scripted embedding endpoint as the configured embedder,
or none."""

from __future__ import annotations

import pytest

from jobs import embeddings
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
