"""LangGraph checkpointers side by side: put and get_tuple of a 10 KB and a 100 KB state through
`ConsoleCheckpointSaver` (HTTP over loopback to gunicorn on PostgreSQL), LangGraph's `InMemorySaver`
and `langgraph-checkpoint-postgres`'s `PostgresSaver`, on the same PostgreSQL, in one run.

    .venv/bin/pip install -e './client[langgraph]' -e '.[bench]'
    .venv/bin/python -m bench.checkpointers [--runs 5] [--ops 100] [--quick]

1. Creates two scratch databases (never the app's): one upgraded with the Alembic revisions, with one
   agent and its token, served by `gunicorn -w 2 -k gthread --threads 4` on 127.0.0.1; one for
   PostgresSaver (its own `setup()` creates its tables).
2. Each run, for every saver and size in turn (interleaved, so the machine's noise falls on all of
   them alike): `--ops` checkpoints, each a new version of one channel holding that many bytes of
   text, chained by parent like a graph's steps; each `put` is timed, then `get_tuple` of it.
3. Reports per saver, size and call the median over runs of each run's median and p95, writes
   --json and a Markdown --section (rendered into bench/results/report.md by `python -m bench`), stops
   gunicorn and drops both databases.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import random
import signal
import socket
import statistics
import string
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
ADMIN_URL = os.environ.get("BENCH_POSTGRES_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
CONSOLE_DB = "memconsole_bench_checkpointers"
LANGGRAPH_DB = "memconsole_bench_lg_postgres"
SIZES = (10 * 1024, 100 * 1024)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def db_url(name: str) -> str:
    return ADMIN_URL.rsplit("/", 1)[0] + "/" + name


def recreate(name: str, drop_only: bool = False) -> None:
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if not drop_only:
            conn.execute(f'CREATE DATABASE "{name}"')


def console_agent(redis_url: str) -> str:
    from flask_migrate import upgrade

    from console import create_app
    from models import Agent, db

    app = create_app({"DATABASE_URL": db_url(CONSOLE_DB), "SECRET_KEY": "bench", "REDIS_URL": redis_url})
    with app.app_context():
        upgrade(revision="heads")
        agent = Agent(name="bench-langgraph", role="supervisor")
        token = agent.issue_token()
        db.session.add(agent)
        db.session.commit()
        db.engine.dispose()
    return token


def start_gunicorn(redis_url: str) -> tuple[subprocess.Popen, int]:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    env = dict(
        os.environ,
        DATABASE_URL=db_url(CONSOLE_DB),
        SECRET_KEY="bench",
        REDIS_URL=redis_url,
        API_RATE_LIMIT="1000000/minute",  # one token sends thousands of calls a minute here
        MAX_CHECKPOINT_BYTES_PER_AGENT=str(10**12),
    )
    gunicorn = Path(sys.executable).with_name("gunicorn")
    cmd = [str(gunicorn), "-w", "2", "-k", "gthread", "--threads", "4", "--preload",
           "-b", f"fd://{listener.fileno()}", "--log-level", "warning", "wsgi:app"]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, pass_fds=(listener.fileno(),), start_new_session=True)
    listener.close()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return proc, port
        except OSError:
            time.sleep(0.2)
    stop(proc)
    raise SystemExit("gunicorn did not come up within 30 s")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)  # the session started above: gunicorn and its workers
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def measure(saver, size: int, ops: int, rng: random.Random) -> tuple[list[float], list[float]]:
    """`ops` chained checkpoints of one `size`-byte channel: put and get_tuple times in ms."""
    from langgraph.checkpoint.base.id import uuid6

    thread = {"configurable": {"thread_id": f"bench-{rng.getrandbits(48):x}", "checkpoint_ns": ""}}
    version = None
    puts, gets = [], []
    for step in range(ops):
        version = saver.get_next_version(version, None)
        text = "".join(rng.choices(string.ascii_letters + string.digits + " ", k=size))
        checkpoint = {
            "v": 4,
            "id": str(uuid6(clock_seq=step)),
            "ts": datetime.now(UTC).isoformat(),
            "channel_values": {"state": {"text": text, "step": step}},
            "channel_versions": {"state": version},
            "versions_seen": {"node": {"state": version}},
            "updated_channels": ["state"],
        }
        metadata = {"source": "loop", "step": step, "parents": {}}
        started = time.perf_counter()
        thread = saver.put(thread, checkpoint, metadata, {"state": version})
        puts.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        loaded = saver.get_tuple(thread)
        gets.append((time.perf_counter() - started) * 1000)
        assert loaded.checkpoint["channel_values"]["state"]["text"] == text
    return puts, gets


def run(args) -> dict:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.checkpoint.postgres import PostgresSaver

    from memconsole_client.langgraph import ConsoleCheckpointSaver

    recreate(CONSOLE_DB)
    recreate(LANGGRAPH_DB)
    proc = None
    try:
        token = console_agent(args.redis_url)
        proc, port = start_gunicorn(args.redis_url)
        console = ConsoleCheckpointSaver(base_url=f"http://127.0.0.1:{port}", token=token)
        with PostgresSaver.from_conn_string(db_url(LANGGRAPH_DB)) as postgres:
            postgres.setup()
            savers = {
                "InMemorySaver": InMemorySaver(),
                "PostgresSaver (langgraph-checkpoint-postgres)": postgres,
                "ConsoleCheckpointSaver (HTTP, gunicorn)": console,
            }
            rng = random.Random(args.seed)
            samples: dict[tuple[str, int, str], list[tuple[float, float]]] = {}
            for saver in savers.values():  # warm-up: connections, caches, first imports
                measure(saver, 1024, 5, rng)
            for run_index in range(args.runs):
                for name, saver in savers.items():
                    for size in SIZES:
                        puts, gets = measure(saver, size, args.ops, rng)
                        for op, values in (("put", puts), ("get_tuple", gets)):
                            samples.setdefault((name, size, op), []).append(
                                (statistics.median(values), percentile(values, 0.95))
                            )
                print(f"run {run_index + 1}/{args.runs} done", flush=True)
        console.close()
    finally:
        if proc is not None:
            stop(proc)
        recreate(CONSOLE_DB, drop_only=True)
        recreate(LANGGRAPH_DB, drop_only=True)
    rows = [
        {
            "saver": name,
            "size": f"{size // 1024} KB",
            "op": op,
            "median_ms": round(statistics.median(m for m, _ in runs), 3),
            "p95_ms": round(statistics.median(p for _, p in runs), 3),
        }
        for (name, size, op), runs in samples.items()
    ]
    return {
        "generated": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "runs": args.runs,
        "ops_per_run": args.ops,
        "note": args.note,
        "rows": rows,
    }


def section(result: dict) -> str:
    lines = [
        "## LangGraph checkpointers",
        "",
        f"`python -m bench.checkpointers` ({result['generated']}, {result['machine']}): {result['runs']} runs of "
        f"{result['ops_per_run']} chained checkpoints per saver and size, interleaved; each checkpoint is a new "
        "version of one channel holding that many bytes of text, `put` then `get_tuple` of it. Figures are "
        "the median over runs of each run's median and p95, in ms. ConsoleCheckpointSaver goes over loopback "
        "HTTP to gunicorn (2 workers x 4 threads) on the same PostgreSQL as PostgresSaver; InMemorySaver "
        "keeps everything in the process.",
        "",
    ]
    if result.get("note"):
        lines += [f"*{result['note']}*", ""]
    lines += [
        "| saver | size | put median | put p95 | get_tuple median | get_tuple p95 |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    by_key = {(r["saver"], r["size"], r["op"]): r for r in result["rows"]}
    for saver, size in dict.fromkeys((r["saver"], r["size"]) for r in result["rows"]):
        put, get = by_key[(saver, size, "put")], by_key[(saver, size, "get_tuple")]
        lines.append(
            f"| {saver} | {size} | {put['median_ms']:.2f} | {put['p95_ms']:.2f} | "
            f"{get['median_ms']:.2f} | {get['p95_ms']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ops", type=int, default=100, help="checkpoints per saver, size and run")
    parser.add_argument("--quick", action="store_true", help="2 runs of 20: a rehearsal")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--redis-url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    parser.add_argument(
        "--note",
        default="Taken on the shared two-core development machine while other work was running: "
        "compare the savers within this table, not with other sections.",
    )
    parser.add_argument("--json", default=str(ROOT / "bench" / "results" / "checkpointers.json"))
    parser.add_argument("--section", default=str(ROOT / "bench" / "results" / "checkpointers.section.md"))
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.ops = 2, 20
    result = run(args)
    Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    Path(args.section).write_text(section(result))
    print(section(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
