"""The per-write linking job on PostgreSQL: what one API write's `link_related` costs, per edge.

    .venv/bin/python -m bench.edges [--sizes 3000,20000] [--writes 20] [--before REV]

The agent API enqueues `jobs.relations.link_related(agent, [memory])` after each write of a semantic
memory (console/api/routes_memory.py), and the worker runs it in its own process (console/cli/rq.py,
IN_PROCESS), where the agent's vector matrix stays cached between jobs (models/retrieval/vectors.py).
For each size, an agent is seeded with that many clustered semantic memories (bench/extras.py: ten a
cluster, each with nine neighbours above RELATIONS_LINK_MIN) and embedded; then `--writes` memories are
written one by one through the write path, each followed by the job, timed alone. The matrix is
refreshed before every job (`--refresh every-job`, the default: REFRESH_SECONDS 0, the worst case, every
write a second or more apart) or at most once a second (`--refresh default`, back-to-back writes); the
first job, which loads the matrix, is reported apart. For comparison, a few jobs run the batch
path, which reloads every vector of the agent: what each write cost before.

With `--before REV`, checks REV out in a temporary git worktree and runs this file against its code and
against this tree's in two processes, each with its own database and agent, one write each in turn (the
order swapped every write), so both are measured under the same machine load: per-edge median and p95.

Builds its data in a dedicated database (`memconsole_bench_edges`, dropped and re-created), with the
hashed embedder (`EMBEDDINGS=hashed`, 1,024 dimensions). Prints a Markdown table. Loopback only,
bounded sizes, stops by itself (and stops the embedded Redis it started).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa

from bench.core import fresh_database, summary
from bench.extras import CLUSTERED, bench_agent, seed_memories

DB_NAME = "memconsole_bench_edges"
REDIS_DIR = "/tmp/memconsole-bench-edges-redis"
BEFORE_RUNS = 3  # the batch path reloads everything: a few runs show its cost
ROOT = Path(__file__).resolve().parent.parent
PER_EDGE = "per-write job, per edge"


def write_and_link(agent_id: int, n: int, clusters: int) -> tuple[float, int, float]:
    """Write one memory of an existing cluster, then run the job the API enqueues: (ms, edges, and the ms
    of CPU this process spent on it: on a busy machine, what the job cost here apart from waiting for a
    core)."""
    from jobs.relations import link_related
    from models.changes.mutations import create_memory

    c = n % clusters
    text = f"Note {c}: person{c} prefers drink{c} at place{c} during season{c} variant new{n}"
    memory = create_memory(agent_id, text, actor="agent", memory_type="semantic")
    started, cpu = time.perf_counter(), time.thread_time()
    edges = link_related(agent_id, [memory.id])
    return (time.perf_counter() - started) * 1000, edges, (time.thread_time() - cpu) * 1000


def seed(size: int) -> tuple[int, int]:
    """An agent of `size` clustered semantic memories, embedded an hour ago: (agent, clusters)."""
    from jobs.relations import embed_memories
    from models import db
    from models.retrieval import vectors

    clusters = max(1, size // 10)
    with db.engine.begin() as conn:
        agent_id = bench_agent(conn, f"edges-{size}")
        seed_memories(conn, agent_id, size, "semantic", CLUSTERED, clusters=clusters)
    embed_memories(agent_id)
    with (
        db.engine.begin() as conn
    ):  # written and embedded an hour ago, as an agent's memories are, not just now
        for table in ("agent_memories", "memory_embeddings"):
            column = "updated_at" if table == "agent_memories" else "created_at"
            conn.execute(
                sa.text(f"UPDATE {table} SET {column} = {column} - interval '1 hour' WHERE agent_id = :a"),
                {"a": agent_id},
            )
        conn.execute(sa.text("ANALYZE agent_memories"))  # as autovacuum would have by now
        conn.execute(sa.text("ANALYZE memory_embeddings"))
    vectors.cache().clear()
    return agent_id, clusters


def bench_size(size: int, writes: int) -> list[tuple[str, str, float, float, str]]:
    from jobs import relations

    agent_id, clusters = seed(size)
    first_ms, first_edges, _ = write_and_link(agent_id, 0, clusters)
    per_memory, per_edge = [], []
    for n in range(1, writes + 1):
        elapsed, edges, _ = write_and_link(agent_id, n, clusters)
        assert edges > 0, "a memory of an existing cluster has neighbours"
        per_memory.append(elapsed)
        per_edge.append(elapsed / edges)
    before_edge = []
    batch_only = relations.PER_WRITE
    relations.PER_WRITE = 0  # every call takes the batch path
    try:
        for n in range(writes + 1, writes + 1 + BEFORE_RUNS):
            elapsed, edges, _ = write_and_link(agent_id, n, clusters)
            before_edge.append(elapsed / edges)
    finally:
        relations.PER_WRITE = batch_only
    label = f"{size:,} semantic memories"
    return [
        (PER_EDGE, label, *summary(per_edge), "≤ 2 ms"),
        ("per-write job, per memory", label, *summary(per_memory), ""),
        (
            "first job of the process (loads the matrix), per edge",
            label,
            first_ms / max(first_edges, 1),
            0.0,
            "",
        ),
        ("batch path for one memory (reloads every vector), per edge", label, *summary(before_edge), ""),
    ]


@contextmanager
def bench_app(db_name: str, redis_dir: str, refresh: str) -> Iterator[None]:
    """An app context on a fresh, migrated database `db_name`, the matrix refreshed as `refresh` asks."""
    url = fresh_database(db_name)
    os.environ["EMBEDDINGS"] = "hashed"  # the fallback embedder, whatever this machine has installed
    from console import create_app
    from infra import embedded_redis
    from models.retrieval import vectors

    app = create_app(
        {"DATABASE_URL": url, "SECRET_KEY": "bench", "REDIS_URL": "embedded", "EMBEDDED_REDIS_DIR": redis_dir}
    )
    every = vectors.REFRESH_SECONDS
    if refresh == "every-job":
        vectors.REFRESH_SECONDS = 0.0  # the worst case: writes a second or more apart
    try:
        with app.app_context():
            from flask_migrate import upgrade

            upgrade()
            yield
    finally:
        vectors.REFRESH_SECONDS = every
        embedded_redis.stop(redis_dir)  # the benchmark started it; leave nothing running


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="3000,20000", help="memories of the agent, comma-separated")
    parser.add_argument("--writes", type=int, default=20, help="writes timed at each size")
    parser.add_argument(
        "--refresh",
        choices=["every-job", "default"],
        default="every-job",
        help="refresh the matrix before every job (the worst case) or at most once a second (REFRESH_SECONDS)",
    )
    parser.add_argument("--before", help="a git revision to compare against, measured alternately")
    parser.add_argument("--serve", help=argparse.SUPPRESS)  # one side of --before (`serve`)
    args = parser.parse_args()
    if args.before or args.serve:
        (compare if args.before else serve)(args)
        return
    sizes = [int(s) for s in args.sizes.split(",")]

    rows = []
    with bench_app(DB_NAME, REDIS_DIR, args.refresh):
        for size in sizes:
            rows += bench_size(size, args.writes)
    print("| measurement | size | median ms | p95 ms | goal |")
    print("| --- | --- | ---: | ---: | --- |")
    for name, label, median, p95, goal in rows:
        print(f"| {name} | {label} | {median:.2f} | {p95:.2f} | {goal} |")


def serve(args: argparse.Namespace) -> None:
    """`--serve LABEL`: seed one agent of `--sizes` memories in its own database, then for each number
    read from stdin write a memory and run the job; print "ms edges cpu-ms" (`compare` drives it)."""
    with bench_app(f"{DB_NAME}_{args.serve}", f"{REDIS_DIR}-{args.serve}", args.refresh):
        agent_id, clusters = seed(int(args.sizes))
        print("ready", flush=True)
        for line in sys.stdin:
            ms, edges, cpu = write_and_link(agent_id, int(line), clusters)
            print(f"{ms} {edges} {cpu}", flush=True)


def compare(args: argparse.Namespace) -> None:
    """`--before`: this file against REV's code (checked out in a temporary worktree) and this tree's, in two
    processes, one write each in turn, the order swapped every write; per-edge median and p95 of each."""
    rev = subprocess.run(["git", "rev-parse", "--short", args.before], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.strip()  # fmt: skip
    tree = Path(tempfile.mkdtemp(prefix="memconsole-before-"))
    subprocess.run(["git", "worktree", "add", "--detach", str(tree), rev], cwd=ROOT, check=True,
                   capture_output=True)  # fmt: skip
    print(f"{PER_EDGE}, before ({rev}) and after (this tree), writes alternating; ms (and ms of CPU)")
    print("| size | before median | after median | before p95 | after p95 |")
    print("| --- | ---: | ---: | ---: | ---: |")
    try:
        for size in [int(s) for s in args.sizes.split(",")]:
            servers = {}
            for label, cwd in (("before", tree), ("after", ROOT)):
                command = [sys.executable, str(Path(__file__).resolve()), "--serve", label,
                           "--sizes", str(size), "--refresh", args.refresh]  # fmt: skip
                # This file, the measured tree's code: its directory leads the import path.
                servers[label] = subprocess.Popen(
                    command, cwd=cwd, env={**os.environ, "PYTHONPATH": str(cwd)}, text=True,
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                )  # fmt: skip
            per_edge: dict[str, list[float]] = {label: [] for label in servers}
            cpu_per_edge: dict[str, list[float]] = {label: [] for label in servers}
            for label, server in servers.items():
                assert server.stdout is not None and server.stdout.readline().strip() == "ready", label
            for n in range(args.writes + 1):
                for label in list(servers)[:: 1 if n % 2 else -1]:
                    server = servers[label]
                    assert server.stdin is not None and server.stdout is not None
                    server.stdin.write(f"{n}\n")
                    server.stdin.flush()
                    ms, edges, cpu = server.stdout.readline().split()
                    if n:  # the first job loads the matrix
                        per_edge[label].append(float(ms) / int(edges))
                        cpu_per_edge[label].append(float(cpu) / int(edges))
            for server in servers.values():
                server.communicate(timeout=60)
            (before, after), (cpu_before, cpu_after) = (
                [summary(found[label]) for label in servers] for found in (per_edge, cpu_per_edge)
            )
            cells = [
                f"{wall[i]:.2f} ({cpu[i]:.2f})"
                for i in (0, 1)
                for wall, cpu in ((before, cpu_before), (after, cpu_after))
            ]
            print(f"| {size:,} semantic memories | {' | '.join(cells)} |", flush=True)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)


if __name__ == "__main__":
    main()
