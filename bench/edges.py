"""The per-write linking job on PostgreSQL: what one API write's `link_related` costs, per edge.

    .venv/bin/python -m bench.edges [--sizes 3000,20000] [--writes 20]

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

Builds its data in a dedicated database (`memconsole_bench_edges`, dropped and re-created), with the
hashed embedder (`EMBEDDINGS=hashed`, 1,024 dimensions). Prints a Markdown table. Loopback only,
bounded sizes, stops by itself (and stops the embedded Redis it started).
"""

from __future__ import annotations

import argparse
import os
import time

import sqlalchemy as sa

from bench.core import fresh_database, summary
from bench.extras import CLUSTERED, bench_agent, seed_memories

DB_NAME = "memconsole_bench_edges"
REDIS_DIR = "/tmp/memconsole-bench-edges-redis"
BEFORE_RUNS = 3  # the batch path reloads everything: a few runs show its cost


def write_and_link(agent_id: int, n: int, clusters: int) -> tuple[float, int]:
    """Write one memory of an existing cluster, then run the job the API enqueues: (ms, edges)."""
    from jobs.relations import link_related
    from models.changes.mutations import create_memory

    c = n % clusters
    text = f"Note {c}: person{c} prefers drink{c} at place{c} during season{c} variant new{n}"
    memory = create_memory(agent_id, text, actor="agent", memory_type="semantic")
    started = time.perf_counter()
    edges = link_related(agent_id, [memory.id])
    return (time.perf_counter() - started) * 1000, edges


def bench_size(size: int, writes: int) -> list[tuple[str, str, float, float, str]]:
    from jobs import relations
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
    first_ms, first_edges = write_and_link(agent_id, 0, clusters)
    per_memory, per_edge = [], []
    for n in range(1, writes + 1):
        elapsed, edges = write_and_link(agent_id, n, clusters)
        assert edges > 0, "a memory of an existing cluster has neighbours"
        per_memory.append(elapsed)
        per_edge.append(elapsed / edges)
    before_edge = []
    batch_only = relations.PER_WRITE
    relations.PER_WRITE = 0  # every call takes the batch path
    try:
        for n in range(writes + 1, writes + 1 + BEFORE_RUNS):
            elapsed, edges = write_and_link(agent_id, n, clusters)
            before_edge.append(elapsed / edges)
    finally:
        relations.PER_WRITE = batch_only
    label = f"{size:,} semantic memories"
    return [
        ("per-write job, per edge", label, *summary(per_edge), "≤ 2 ms"),
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
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    url = fresh_database(DB_NAME)
    os.environ["EMBEDDINGS"] = "hashed"  # the fallback embedder, whatever this machine has installed
    from console import create_app
    from infra import embedded_redis
    from models.retrieval import vectors

    app = create_app(
        {"DATABASE_URL": url, "SECRET_KEY": "bench", "REDIS_URL": "embedded", "EMBEDDED_REDIS_DIR": REDIS_DIR}
    )
    rows = []
    refresh = vectors.REFRESH_SECONDS
    if args.refresh == "every-job":
        vectors.REFRESH_SECONDS = 0.0  # the worst case: writes a second or more apart
    try:
        with app.app_context():
            from flask_migrate import upgrade

            upgrade()
            for size in sizes:
                rows += bench_size(size, args.writes)
    finally:
        vectors.REFRESH_SECONDS = refresh
        embedded_redis.stop(REDIS_DIR)  # the benchmark started it; leave nothing running
    print("| measurement | size | median ms | p95 ms | goal |")
    print("| --- | --- | ---: | ---: | --- |")
    for name, size, median, p95, goal in rows:
        print(f"| {name} | {size} | {median:.2f} | {p95:.2f} | {goal} |")


if __name__ == "__main__":
    main()
