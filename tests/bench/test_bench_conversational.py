"""bench/conversational.py's scoring and its BM25 baseline, on the generators' own sets: the figures the
retrieval section reports are computed as documented."""

from __future__ import annotations

import numpy as np
import pytest

from bench import conversational, conversational_choices
from tests.models.retrieval.conftest import embedder  # noqa: F401  (a fixture: the scripted embedder)
from tests.models.retrieval.retrieval_support import LABEL, backfill_all, concept_vector, remember


def test_recall_counts_the_share_of_evidence_in_the_top_k_and_mrr_the_first_evidence_rank():
    found = ["m1", "m2", "m3", "m4", "m5", "m6"]
    assert conversational.score(found, ["m2"]) == {"recall@5": 1.0, "recall@10": 1.0, "mrr@10": 0.5}
    assert conversational.score(found, ["m6", "m9"]) == {"recall@5": 0.0, "recall@10": 0.5, "mrr@10": 1 / 6}
    assert conversational.score([], ["m1"]) == {"recall@5": 0.0, "recall@10": 0.0, "mrr@10": 0.0}


# chat_facts, facts drawn from chats between friends, asks no identifier questions (its kinds say so).
@pytest.mark.parametrize("name", [name for name in conversational.SETS if name != "chat_facts"])
def test_bm25_finds_the_memory_an_identifier_question_names(name):
    data = conversational.load(name, 0)
    agent = data["agents"][0]
    bm25 = conversational.BM25()
    bm25.add(agent["key"], agent["memories"])
    asked = [q for q in agent["questions"] if q["kind"] == "identifier"]
    found = [
        conversational.score(bm25.search(agent["key"], q["text"]), q["evidence"])["recall@10"] for q in asked
    ]
    assert asked and sum(found) / len(found) > 0.9


def test_five_development_sets_and_the_held_out_sets_are_the_other_generators():
    assert conversational.DEVELOPMENT == (
        "life_log",
        "team_chat",
        "support_desk",
        "friends_chat",
        "chat_facts",
    )
    assert conversational.HELD_OUT == (
        "assistant_notes",
        "household",
        "vet_clinic",
        "tutoring_center",
        "travel_desk",
    )
    for name in conversational.SETS:
        assert conversational.load(name, 0)["name"] == name


def test_a_sweeps_settings_are_chosen_by_recall_averaged_over_the_sets_swept():
    swept = {
        "a": [{"fusion": "mix", "lexical_share": 0.4, "all": 0.9, "paraphrase": 0.8}],
        "b": [{"fusion": "mix", "lexical_share": 0.4, "all": 0.7, "paraphrase": 0.6}],
    }
    assert conversational_choices.mean_rows(swept) == [
        {"fusion": "mix", "lexical_share": 0.4, "all": 0.8, "paraphrase": 0.7}
    ]

    # A kind one set does not ask is averaged over none of them.
    swept["c"] = [{"fusion": "mix", "lexical_share": 0.4, "all": 0.5, "open-domain": 0.1}]
    swept["a"][0]["identifier"] = 1.0
    assert conversational_choices.mean_rows(swept) == [{"fusion": "mix", "lexical_share": 0.4, "all": 0.7}]


def test_the_recency_sweep_sets_weight_and_scale_and_puts_the_chosen_ones_back():
    from models.retrieval import ranking

    chosen = (ranking.W_RELEVANCE, ranking.W_RECENCY, ranking.W_IMPORTANCE, ranking.RECENCY_DAYS)
    for setting, first_too in conversational_choices.settings("recency"):
        row = setting()
        weight, days = row["recency (weight, days)"]
        assert not first_too
        assert (weight, days) == (ranking.W_RECENCY, ranking.RECENCY_DAYS)
        # relevance takes what recency gives up: a score still sums to at most 1
        assert pytest.approx(1.0) == ranking.W_RELEVANCE + ranking.W_RECENCY + ranking.W_IMPORTANCE
        conversational_choices._reset()
        assert chosen == (ranking.W_RELEVANCE, ranking.W_RECENCY, ranking.W_IMPORTANCE, ranking.RECENCY_DAYS)


# The sweeps of one constant, asked dated: (module, constant, the row's key for it, the values swept, the
# value chosen).
ONE_CONSTANT_SWEEPS = {
    "scale": ("ranking", "LEXICAL_SCALE", "lexical relevance", "LEXICAL_SCALES", "linear"),
    "missing": ("fusion", "MISSING_COSINE", "missing cosine", "MISSING_COSINES", "floor"),
    "share": ("fusion", "MIX_LEXICAL", "lexical_share", "DATED_SHARES", 0.6),
    "nearest": ("fusion", "DENSE_K", "nearest", "NEAREST", 25),
    "crowded": ("term_stats", "CROWDED", "crowded", "CROWDED_COUNTS", 6),
}


@pytest.mark.parametrize("kind", ONE_CONSTANT_SWEEPS)
def test_a_dated_sweep_of_one_constant_sets_each_value_and_puts_the_chosen_one_back(kind):
    import importlib

    from models.retrieval import query

    name, constant, key, values, chosen = ONE_CONSTANT_SWEEPS[kind]
    module = importlib.import_module(f"models.retrieval.{name}")
    swept = list(getattr(module, values, None) or getattr(conversational_choices, values))
    assert getattr(module, constant) == chosen and chosen in swept
    seen = []
    for setting, first_too in conversational_choices.settings(kind):
        seen.append(setting()[key])
        assert seen[-1] == getattr(module, constant) and not first_too
        if kind == "nearest":
            assert seen[-1] == query.DENSE_K  # what memory.query asks for
        conversational_choices._reset()
        assert getattr(module, constant) == chosen
    assert seen == swept
    assert kind in conversational_choices.DATED


def test_the_openers_sweep_reads_names_as_chosen_then_without_the_words_sentences_open_with():
    from types import SimpleNamespace

    from models.retrieval import bridging

    turn = SimpleNamespace(content="Sofia: Went to Tenby with Femi. Honestly, Femi loved it! Wait, Mum too.")
    # Tamsin opens a sentence and is written inside one too; Zofia only opens one.
    note = SimpleNamespace(content="Tamsin lives in Lyon. Zofia visits Tamsin often.")
    seen = []
    for setting, first_too in conversational_choices.settings("openers"):
        row = setting()
        seen.append(
            (row["names"], bridging.bridge_names("Where?", [turn]), bridging.bridge_names("Who?", [note]))
        )
        conversational_choices._reset()
        assert not first_too
    assert seen == [
        ("as chosen", ["Sofia", "Went", "Tenby", "Femi"], ["Tamsin", "Lyon", "Zofia"]),
        ("sentence openers not names", ["Tenby", "Femi", "Mum"], ["Tamsin", "Lyon"]),
    ]
    assert bridging.bridge_names("Where?", [turn]) == seen[0][1]  # put back
    assert "openers" in conversational_choices.DATED


def test_feedback_moves_the_question_toward_its_leaders_mean_and_keeps_it_at_unit_length():
    question, leaders = np.array([2.0, 0.0, 0.0]), np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 3.0]])
    assert conversational_choices.moved(question, leaders, 0.0).tolist() == [1.0, 0.0, 0.0]
    assert conversational_choices.moved(question, leaders[:0], 0.5).tolist() == [1.0, 0.0, 0.0]
    # A leader with no length (a zero row) adds nothing rather than turning the question into NaN.
    assert conversational_choices.moved(question, np.zeros((1, 3)), 0.5).tolist() == [1.0, 0.0, 0.0]
    expected = np.array([1.0, 0.5, 0.5]) / np.linalg.norm([1.0, 0.5, 0.5])
    assert conversational_choices.moved(question, leaders, 1.0) == pytest.approx(expected)


def test_the_feedback_sweep_asks_the_nearest_again_from_the_moved_question_then_puts_them_back(
    embedder,  # noqa: F811  (the fixture imported above)
    make_agent,
):
    from models.retrieval import vectors

    agent = make_agent()
    texts = ["Maya books a flight to Lisbon", "Maya cooks pasta for dinner", "Tom walks the dog"]
    ids = [remember(agent, text).id for text in texts]
    backfill_all()
    vector_of = dict(zip(ids, (concept_vector(text) for text in texts), strict=True))
    probe = np.array(concept_vector("Maya flight dinner"), dtype=np.float32)
    chosen = vectors.nearest
    unfed = chosen(agent.id, LABEL, probe, 3)
    swept = []
    for setting, first_too in conversational_choices.settings("feedback"):
        leaders, weight = setting()["feedback (leaders, weight)"]
        swept.append((leaders, weight))
        found, scores = vectors.nearest(agent.id, LABEL, probe, 3)
        if not leaders:
            assert vectors.nearest is chosen and (found, scores) == unfed
        else:
            first = chosen(agent.id, LABEL, probe, leaders)[0]
            again = conversational_choices.moved(probe, np.array([vector_of[i] for i in first]), weight)
            expected_ids, expected_scores = chosen(agent.id, LABEL, again, 3)
            assert found == expected_ids and scores == pytest.approx(expected_scores, abs=1e-5)
            assert scores != pytest.approx(unfed[1], abs=1e-3)  # the question did move
        conversational_choices._reset()
        assert vectors.nearest is chosen and not first_too
    assert swept == conversational_choices.FEEDBACK and swept[0] == (0, 0.0)
    assert "feedback" in conversational_choices.DATED


def test_a_run_records_the_versions_its_figures_depend_on_and_the_processors_int8_instructions():
    from importlib import metadata

    from bench import machine

    versions = machine.packages("pytest", "no-such-distribution-here")
    assert versions == {"pytest": metadata.version("pytest"), "no-such-distribution-here": "absent"}
    assert set(machine.int8_flags()) <= set(machine.INT8_FLAGS)
    assert {"onnxruntime", "onnx", "mem0ai"} <= set(conversational.PACKAGES)


def test_each_sweep_has_its_flag_and_a_dated_sweep_refuses_dated_as_a_runs_setting(capsys):
    kinds = {kind for kind, _what in conversational.SWEEP_FLAGS.values()}
    assert set(conversational_choices.DATED) <= kinds
    assert {"fusion", "bridges", "subjects", "ablate"} <= kinds
    with pytest.raises(SystemExit) as refused:
        conversational.main(["--sweep-nearest", "--dated"])
    assert (
        refused.value.code == 2
        and "nearest, openers, crowded, feedback, rest, leader sweeps are dated" in capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("flag", "setting", "value"),
    [("--question-float32", "QUESTION_AGREEMENT", 1.0), ("--no-question-delta", "QUESTION_DELTA", None)],
)
def test_the_question_flags_set_the_embedder_before_it_is_built(monkeypatch, tmp_path, flag, setting, value):
    """`--question-float32` asks the int8 export for an exact agreement, which it never reaches: the question
    then takes a stored text's path (tests/jobs/test_local_embedder.py, where the int8 export strays).
    `--no-question-delta` embeds the question without the shipped delta (jobs/question_delta.py): the run
    beside which the delta's held-out figures are reported."""
    from jobs.local_embedder import LocalMiniLM

    monkeypatch.setattr(LocalMiniLM, setting, getattr(LocalMiniLM, setting))
    assert getattr(LocalMiniLM, setting) != value
    out = tmp_path / "run.json"
    argv = ["--set", "life_log", "--agents", "1", "--systems", "BM25", flag, "--json", str(out)]
    assert conversational.main(argv) == 0
    assert getattr(LocalMiniLM, setting) == value and out.exists()


def test_the_ablations_without_the_hops_and_by_the_vectors_alone_tell_the_sweep_how_to_ask():
    """`--ablate` measures the one statement's ranking alone and the vectors alone (mem0's way) beside the
    choices undone: the sweep reads `hops` and `mode` off the setting's row and asks accordingly."""
    assert {"no second hops", "the vectors alone"} <= set(conversational_choices.ABLATIONS)
    assert conversational_choices._undone("no second hops")() == {"undone": "no second hops", "hops": False}
    alone = conversational_choices._undone("the vectors alone")()
    assert alone == {"undone": "the vectors alone", "mode": "dense"}


def test_the_section_reports_the_statements_a_question_sent_for_memory_querys_rows_that_counted_them():
    def row(system: str, statements: float | None = None) -> dict:
        figures = {"recall@5": 0.5, "recall@10": 0.75, "mrr@10": 0.5, "n": 2}
        counted = {} if statements is None else {"statements_per_question": statements}
        return {"system": system, "all": figures} | counted

    result = {"set": "life_log", "seed": 0, "held_out": False, "generated": "2026-12-02", "machine": "x",
              "load_average": 0.0, "agents": 1, "memories": 3, "questions": 2,
              "rows": [row("memory.query", 2.33), row("memory.query lexical", 1.5), row("BM25")]}  # fmt: skip
    text = conversational.section([result])
    assert "SQL statements a question sent, on average: memory.query 2.33, memory.query lexical 1.5." in text
    result["rows"] = [row("BM25")]
    assert "SQL statements" not in conversational.section([result])


def test_the_rest_sweep_embeds_the_rest_as_its_setting_says_for_memory_query_to_let_in_then_puts_it_back(
    embedder,  # noqa: F811  (the fixture imported above)
    make_agent,
):
    from models.retrieval import query, rest

    agent = make_agent()
    flight = remember(agent, "Maya books a flight to Lisbon", user_id="maya")
    dinner = remember(agent, "Maya cooks pasta for dinner", user_id="maya")
    remember(agent, "Tom, a person of habit, walks to Lisbon's market with the dog", user_id="tom")
    remember(agent, "Tom eats at noon", user_id="tom")
    backfill_all()
    text = "What does the person with a flight to Lisbon eat?"
    asked = dict(text=text, categories=["profile"], top_k=2, dense=(LABEL, np.array(concept_vector(text))),
                 rest_vector=conversational_choices.asked_rest)  # fmt: skip
    # Outside the sweep, the rest as memory.query embeds it: the scripted endpoint has no cheap way to it.
    before = [hit.id for hit in query.search(agent.id, **asked)]
    assert before[0] == flight.id and dinner.id not in before
    conversational_choices._rest((1, 1, conversational_choices.FULL))()
    try:  # put back even when an assertion fails, so no later test asks with the setting's rest
        # The rest, "What does the person with eat?", embedded alone, is nearest the dinner among Maya's.
        assert [hit.id for hit in query.search(agent.id, **asked)] == [flight.id, dinner.id]
        assert conversational_choices.rest_costs(2)["taken apart"] == 0.5  # one question of two
    finally:
        conversational_choices._reset()
    assert rest.REST_KEEP == 6 and [hit.id for hit in query.search(agent.id, **asked)] == before
    assert conversational_choices.REST[0][:2] == (0, 0) and "rest" in conversational_choices.DATED


def test_the_leader_sweep_sets_how_many_leaders_are_looked_through_with_and_without_the_rest_then_puts_them_back():
    from models.retrieval import bridging

    seen = []
    for setting, first_too in conversational_choices.settings("leader"):
        row = setting()
        seen.append((row["named leaders"], row["with its rest"]))
        assert row["named leaders"] == bridging.NAMED_LEADERS and not first_too
        asks_rest = conversational_choices.rest_of("leader", row) is conversational_choices.asked_rest
        assert asks_rest == row["with its rest"]
        conversational_choices._reset()
        assert bridging.NAMED_LEADERS == 3
    assert seen == conversational_choices.LEADERS and {(0, False), (3, False), (0, True), (3, True)} <= set(
        seen
    )
    assert "leader" in conversational_choices.DATED
    assert conversational_choices.rest_of("rest", {}) is conversational_choices.asked_rest
    assert conversational_choices.rest_of("openers", {}) is None


def test_the_rest_sweeps_question_setting_looks_for_the_questions_own_vector_and_embeds_no_rest(
    embedder,  # noqa: F811  (the fixture imported above)
    monkeypatch,
):
    from jobs.embeddings import get_embedder

    text = "What does the person with a flight to Lisbon eat?"
    own = get_embedder().embed([text], query=True)[0]
    conversational_choices._rest((6, 1, conversational_choices.QUESTION))()
    try:  # put back even when an assertion fails
        embedded: list[list[str]] = []
        asked = get_embedder().embed
        monkeypatch.setattr(
            get_embedder(), "embed", lambda texts, **kw: embedded.append(texts) or asked(texts, **kw)
        )
        # The rest's spans ("eat?") are not embedded: the vector is the question's, embedded once.
        assert np.allclose(conversational_choices.asked_rest(text, [(45, 49)]), own)
        assert embedded == [[text]]
        assert conversational_choices.rest_costs(1)["taken apart"] == 1.0
    finally:
        conversational_choices._reset()
