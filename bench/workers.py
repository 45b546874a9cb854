"""Refinement throughput as RQ workers are added: sessions per minute, time in queue, single flight held.

    .venv/bin/python -m bench.workers [--sessions 2000] [--workers 1,2,4,8]
                                      [--model-sessions 400] [--latency 0.2] [--json F] [--section F]

Two kinds of session, each drained by 1, 2, 4 and 8 `rq worker --burst` processes (real processes, the
product's own CLI) from a queue filled before the workers start:

- **offline**: the built-in offline refiner (LLM_OFFLINE=1): no model, so the work is all CPU and database.
- **model**: agents with a model on a stand-in OpenAI-compatible server on loopback that answers every
  call after a fixed latency (`--latency`, default 0.2 s): consent, then `complete_refinement` — the shape
  of a session against a real model, whose time is mostly waiting.

Every agent has a few same-fact variants, so offline sessions really merge; each round starts from a
freshly seeded database. One agent in ten gets a second job enqueued directly beside its session (two
jobs for one agent, as two schedulers racing would make): the single-flight lock must refuse one, and a
watcher polls the database every 0.1 s for an agent with two `running` sessions (there must be none).

Time in queue is measured per job from the moment the workers were started (everything was queued before)
to the moment a worker took it, so it reads as "how long a burst takes to reach a job". Loopback only,
bounded counts, stops by itself. Writes JSON and a Markdown section for bench/results/report.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import sqlalchemy as sa

from bench.core import fresh_database, percentile

ROOT = Path(__file__).resolve().parent.parent
DB_NAME = "memconsole_bench_workers"
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/6")
FACTS = [
    ("The user prefers tea to coffee in the morning.", "the user prefers tea to coffee in the morning"),
    ("Their sister lives in Porto.", "Their sister lives in Porto!"),
    ("The user is learning the cello.", "The user is learning the cello"),
]


class StandInModel(BaseHTTPRequestHandler):
    """Answers every chat completion after `latency` seconds: consent without tools, else complete_refinement."""

    latency = 0.2

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        time.sleep(self.latency)
        if request.get("tools"):
            arguments = json.dumps({"summary": "Reviewed the ledger; nothing else to merge."})
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_0", "type": "function", "function": {"name": "complete_refinement", "arguments": arguments}}
            ]}  # fmt: skip
        else:
            message = {
                "role": "assistant",
                "content": json.dumps({"consent": True, "reason": "Within my rules."}),
            }
        body = json.dumps({
            "id": "chatcmpl-bench", "object": "chat.completion", "created": int(time.time()), "model": "stand-in",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }).encode()  # fmt: skip
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _app(url: str):
    from console import create_app

    return create_app({"DATABASE_URL": url, "REDIS_URL": REDIS_URL, "SECRET_KEY": "bench"})


def _seed(app, agents: int, model: str | None) -> list[int]:
    from flask_migrate import upgrade

    from models import db

    with app.app_context():
        upgrade()
        with db.engine.begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO agents (name, model_id, core_token_budget, min_retention, mechanic_preconsent, active,"
                " created_at) SELECT 'w-' || g, :model, 40, 0.5, false, true, now() FROM generate_series(1, :n) g"
            ), {"n": agents, "model": model})  # fmt: skip
            rows = [(i * 2 + j, text) for i, pair in enumerate(FACTS) for j, text in enumerate(pair)]
            for minutes, text in rows:
                conn.execute(sa.text(
                    "INSERT INTO agent_memories (agent_id, memory_type, content, content_hash, token_estimate, tags,"
                    " pinned, constitutional, created_at, updated_at)"
                    " SELECT id, 'core', :text, encode(sha256(convert_to(lower(btrim(:text)), 'UTF8')), 'hex'),"
                    " ceil(length(:text) / 4.0), '[]', false, false, now() - :m * interval '1 minute', now()"
                    " FROM agents"
                ), {"text": text, "m": 100 - minutes})  # fmt: skip
            conn.execute(sa.text(
                "INSERT INTO audit_contents (memory_id, sha256, content, token_estimate)"
                " SELECT id, encode(sha256(convert_to(content, 'UTF8')), 'hex'), content, token_estimate"
                " FROM agent_memories"
            ))  # fmt: skip
            ids = [r[0] for r in conn.execute(sa.text("SELECT id FROM agents ORDER BY id"))]
        db.engine.dispose()
    return ids


def _enqueue(app, agent_ids: list[int]) -> int:
    """A session per agent (as the scans queue them), plus a second bare job for one agent in ten, queued
    right behind its session so that, with two workers or more, the two are taken at the same moment."""
    from infra.queues import get_rq
    from jobs.refinement import run_refinement
    from jobs.triggers import enqueue_refinement
    from models import db

    with app.app_context():
        get_rq().connection.flushdb()
        extra = agent_ids[::10]
        for agent_id in agent_ids:
            enqueue_refinement(agent_id, "bench", "system:bench", force=True)
            if agent_id in extra:
                get_rq().enqueue(run_refinement, agent_id, "bench", None, True, queue="llm")
        db.engine.dispose()
    return len(agent_ids) + len(extra)


class Watcher(threading.Thread):
    """Polls for an agent with two running sessions (there must never be one)."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.engine = sa.create_engine(url)
        self.stop = threading.Event()
        self.violations = 0
        self.polls = 0

    def run(self) -> None:
        query = sa.text(
            "SELECT count(*) FROM (SELECT agent_id FROM refinement_sessions WHERE status = 'running'"
            " GROUP BY agent_id HAVING count(*) > 1) t"
        )
        with self.engine.connect() as conn:
            while not self.stop.wait(0.1):
                self.violations += conn.execute(query).scalar_one()
                self.polls += 1
                conn.commit()
        self.engine.dispose()


def _drain(url: str, workers: int, env: dict[str, str]) -> tuple[float, float]:
    log_path = os.environ.get("BENCH_WORKER_LOG")  # the workers' stderr, for a run that goes wrong
    with open(log_path or os.devnull, "ab") as log:
        started = time.time()
        processes = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "flask",
                    "--app",
                    "wsgi",
                    "rq",
                    "worker",
                    "llm",
                    "--burst",
                    "--name",
                    f"bench-{os.getpid()}-{workers}-{n}",
                ],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )  # fmt: skip
            for n in range(workers)
        ]
        for process in processes:
            process.wait(timeout=3600)
    return started, time.time()


def _job_waits(app, started: float) -> tuple[list[float], dict[str, int]]:
    """Each finished job's time in queue, and how many jobs the single-flight lock turned away."""
    from rq.registry import FinishedJobRegistry

    from infra.queues import get_rq

    waits, turned_away = [], 0
    with app.app_context():
        rq = get_rq()
        registry = FinishedJobRegistry("llm", connection=rq.connection)
        from rq.job import Job

        for job in Job.fetch_many(registry.get_job_ids(), connection=rq.connection):
            if job is not None and job.started_at is not None:
                begun = job.started_at.replace(tzinfo=UTC).timestamp()
                waits.append(max(0.0, begun - started))
            result = job.return_value() if job is not None else None
            turned_away += isinstance(result, dict) and result.get("status") == "busy"
    return waits, {"jobs turned away (busy)": turned_away}


def _outcomes(url: str) -> dict[str, int]:
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT status, count(*) FROM refinement_sessions GROUP BY status")).all()
        ops = conn.execute(
            sa.text("SELECT coalesce(sum(ops_count), 0) FROM refinement_sessions")
        ).scalar_one()
    engine.dispose()
    return {**{status: count for status, count in rows}, "ops": int(ops)}


def run_round(kind: str, sessions: int, workers: int, latency: float) -> dict:
    url = fresh_database(DB_NAME)
    app = _app(url)
    agent_ids = _seed(app, sessions, "stand-in-model" if kind == "model" else None)
    jobs = _enqueue(app, agent_ids)
    env = {**os.environ, "DATABASE_URL": url, "REDIS_URL": REDIS_URL, "SECRET_KEY": "bench"}
    server = None
    if kind == "offline":
        env["LLM_OFFLINE"] = "1"
    else:
        StandInModel.latency = latency
        server = ThreadingHTTPServer(("127.0.0.1", 0), StandInModel)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        env.update(OPENAI_BASE_URL=f"http://127.0.0.1:{server.server_port}/v1", OPENAI_API_KEY="bench",
                   LLM_OFFLINE="0")  # fmt: skip
    watcher = Watcher(url)
    watcher.start()
    try:
        started, finished = _drain(url, workers, env)
    finally:
        watcher.stop.set()
        watcher.join()
        if server is not None:
            server.shutdown()
    waits, refused = _job_waits(app, started)
    outcomes = {**_outcomes(url), **refused}
    minutes = (finished - started) / 60
    row = {
        "kind": kind, "workers": workers, "sessions": sessions, "jobs": jobs, "seconds": round(finished - started, 1),
        "sessions_per_minute": round(outcomes.get("completed", 0) / minutes, 1),
        "wait_p50_s": round(statistics.median(waits), 2) if waits else None,
        "wait_p95_s": round(percentile(waits, 0.95), 2) if waits else None,
        "outcomes": outcomes, "double_running_seen": watcher.violations, "watcher_polls": watcher.polls,
        "latency_s": latency if kind == "model" else None, "load_average_after": round(os.getloadavg()[0], 1),
    }  # fmt: skip
    print(json.dumps(row), flush=True)
    return row


def section(rows: list[dict]) -> str:
    out = [
        "## Refinement throughput by worker count (`python -m bench.workers`)",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d}. Each round seeds a fresh database, fills the `llm` queue, then "
        "starts N `rq worker --burst` processes; sessions/minute counts completed sessions over the drain time; "
        "time in queue runs from the workers' start to a worker taking the job. One agent in ten also gets a "
        "second job queued right behind its session: when another worker takes it while the session runs, the "
        "single-flight lock turns it away (`busy`, counted below), otherwise it runs a session of its own after the "
        "first; a watcher polling every 0.1 s must never see an agent with two running sessions. Sessions/minute "
        "counts completed sessions, the second ones included.",
        "",
        "| sessions | workers | drain | sessions/min | time in queue p50 / p95 | outcomes | two running seen "
        "| load average at the end (its own workers included) |",
        "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |",
    ]
    for r in rows:
        kind = "offline refiner" if r["kind"] == "offline" else f"stand-in model, {r['latency_s']} s a call"
        outcomes = ", ".join(f"{k} {v:,}" for k, v in sorted(r["outcomes"].items()))
        out.append(
            f"| {r['sessions']:,} ({kind}) | {r['workers']} | {r['seconds']:.0f} s | {r['sessions_per_minute']:,.0f} "
            f"| {r['wait_p50_s']} / {r['wait_p95_s']} s | {outcomes} | {r['double_running_seen']} in {r['watcher_polls']} polls "
            f"| {r.get('load_average_after', '')} |"
        )
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2000, help="offline sessions per round")
    parser.add_argument(
        "--model-sessions", type=int, default=400, help="stand-in model sessions per round (0: none)"
    )
    parser.add_argument(
        "--latency", type=float, default=0.2, help="seconds the stand-in model takes per call"
    )
    parser.add_argument("--workers", default="1,2,4,8")
    parser.add_argument("--quick", action="store_true", help="small counts, for a rehearsal")
    parser.add_argument("--json")
    parser.add_argument("--section")
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.model_sessions, args.workers = 100, 40, "1,2"
    counts = [int(n) for n in args.workers.split(",")]
    rows = [run_round("offline", args.sessions, n, 0.0) for n in counts]
    if args.model_sessions:
        rows += [run_round("model", args.model_sessions, n, args.latency) for n in counts]
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    if args.section:
        Path(args.section).write_text(section(rows))
    print(section(rows))


if __name__ == "__main__":
    main()
