"""memory.query's nearest memories by pgvector's HNSW index and by the web process's matrix, side by side,
on real all-MiniLM-L6-v2 vectors.

    .venv/bin/python -m bench.pgvector                          # 100,000 memories (~6 min to embed, once)
    .venv/bin/python -m bench.pgvector --memories 20000 --questions 100

This project's PostgreSQL has no pgvector, so this starts one that has: the `pgserver` wheel's PostgreSQL
16 with pgvector 0.6.2 (the dev extra), in a temporary directory, stopped at the end. The vectors are
bench.vector_recall's (its --cache: embedded once). Two layouts, each in a database of its own migrated by
the Alembic revisions (migration 0020 sets pgvector up):

- "one agent": one agent holding all N memories;
- "one of ten": ten agents holding N/10 each; the first is measured (a tenth of the index is its).

Memories are seeded straight into the tables (bench.nl_latency's seeder), their vectors inserted into
memory_embeddings (the trigger fills the pgvector column: its cost is reported), then the model's HNSW
index is built as the embedding job builds it (`pgvector.ensure_index`, CONCURRENTLY). For each question,
100 neighbours (memory.query's DENSE_K when measured; it asks for 25 since, fewer to find): the index search `pgvector.search` (its `hnsw.ef_search`
statement included), asked every time, and the matrix's `AgentMatrix.nearest` (the matrix loaded first),
each against exact search over the agent's vectors — recall@10 and @100, p50 / p95 ms — and how often the
index found all 100 of the agent's (else memory.query searches the matrix). Also whether the default
VECTOR_SEARCH=auto would ask pgvector for that agent at all (`pgvector.serves`: only for an agent whose
matrix alone would outgrow VECTOR_CACHE_MB). Loopback-free (a Unix socket); stops by itself.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.api_load import Corpus  # noqa: E402
from bench.nl_latency import pct, seed_rows  # noqa: E402
from bench.vector_recall import K, arguments, embedded, recall_at, written  # noqa: E402

MODEL = "bench-minilm-384"
LAYOUTS = {"one agent": 1, "one of ten": 10}


def _database(admin_url: str, name: str) -> str:
    """A new database on the pgvector server, migrated to head; its URL."""
    import sqlalchemy as sa

    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return sa.make_url(admin_url).set(database=name).render_as_string(hide_password=False)


def _store_vectors(engine, agent_id: int, rows: np.ndarray) -> float:
    """The agent's memories' vectors (in id order) into memory_embeddings; seconds taken (trigger included)."""
    import sqlalchemy as sa

    with engine.begin() as conn:
        ids = conn.execute(
            sa.text("SELECT id, content_hash FROM agent_memories WHERE agent_id = :a ORDER BY id"),
            {"a": agent_id},
        ).all()
    started = time.perf_counter()
    for start in range(0, len(ids), 5000):
        with engine.begin() as conn:
            conn.execute(
                sa.text(
                    "INSERT INTO memory_embeddings (memory_id, agent_id, model, dims, content_hash, vector, created_at)"
                    " VALUES (:memory_id, :agent_id, :model, :dims, :content_hash, :vector, now())"
                ),
                [
                    {
                        "memory_id": i,
                        "agent_id": agent_id,
                        "model": MODEL,
                        "dims": rows.shape[1],
                        "content_hash": h,
                        "vector": rows[start + n].tobytes(),
                    }
                    for n, (i, h) in enumerate(ids[start : start + 5000])
                ],  # fmt: skip
            )
    return time.perf_counter() - started


def measure_layout(
    admin_url: str, layout: str, agents: int, matrix: np.ndarray, queries: np.ndarray, workdir: str
) -> dict:
    import sqlalchemy as sa

    from console import create_app
    from models import Agent, db
    from models.db import end_read
    from models.retrieval import pgvector, vectors

    url = _database(admin_url, "bench_pgvector_" + layout.replace(" ", "_"))
    app = create_app({"DATABASE_URL": url, "SECRET_KEY": "bench", "REDIS_URL": "embedded",
                      "EMBEDDED_REDIS_DIR": f"{workdir}/redis"})  # fmt: skip
    each = len(matrix) // agents
    with app.app_context():
        from flask_migrate import upgrade

        with warnings.catch_warnings():
            warnings.simplefilter(
                "ignore", UserWarning
            )  # pgserver ships no btree_gin (migration 0018 says so)
            upgrade()
        ids = []
        mirror_seconds = 0.0
        for n in range(agents):
            agent = Agent(name=f"bench-{n}", role="supervisor")
            db.session.add(agent)
            db.session.commit()
            ids.append(agent.id)
            seed_rows(db.engine, agent.id, each, Corpus(7 + n), vectors=False)
            mirror_seconds += _store_vectors(db.engine, agent.id, matrix[n * each : (n + 1) * each])
        with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(sa.text("VACUUM ANALYZE"))
        started = time.perf_counter()
        built = pgvector.ensure_index(MODEL, matrix.shape[1])
        build_seconds = time.perf_counter() - started
        index_mb = (
            db.session.scalar(
                sa.text("SELECT pg_relation_size(to_regclass(:n))"),
                {"n": pgvector.index_name(MODEL, matrix.shape[1])},
            )
            / 1e6
        )
        end_read()
        agent_id, rows = ids[0], matrix[:each]
        exact = [np.argsort(-(rows @ q), kind="stable")[:K] for q in queries]
        memory_ids = np.array(
            db.session.scalars(
                sa.text("SELECT memory_id FROM memory_embeddings WHERE agent_id = :a ORDER BY memory_id"),
                {"a": agent_id},
            ).all()
        )
        end_read()
        entry = vectors.cache().matrix(agent_id, MODEL)  # loaded as on the agent's first dense query
        end_read()
        serves_auto = pgvector.serves(agent_id, MODEL, matrix.shape[1])  # VECTOR_SEARCH=auto's choice
        end_read()
        out: dict = {"layout": layout, "auto_uses_pgvector": serves_auto, "agents": agents, "memories_of_agent": each, "table_rows": each * agents,
                     "index_built": built, "index_build_s": round(build_seconds, 1), "index_mb": round(index_mb, 1),
                     "matrix_mb": round(entry.nbytes / 1e6, 1),
                     "mirror_ms_per_vector": round(1000 * mirror_seconds / (each * agents), 3)}  # fmt: skip
        for name in ("pgvector", "matrix"):
            times, r10, r100, answered = [], [], [], 0
            for n, q in enumerate(queries):
                started = time.perf_counter()
                if name == "pgvector":  # the index search itself, asked every time (not `nearest`'s policy)
                    found = pgvector.search(agent_id, MODEL, q, K)
                    got = [i for i, _ in found] if len(found) == K else None
                else:
                    got = entry.nearest(q, K)[0].tolist()
                times.append((time.perf_counter() - started) * 1000)
                end_read()
                if got is None:
                    continue
                answered += 1
                truth = memory_ids[exact[n]]
                r10.append(recall_at(got, truth.tolist(), 10))
                r100.append(recall_at(got, truth.tolist(), K))
            out[name] = {
                "answered": round(answered / len(queries), 3),
                "recall@10": round(statistics.fmean(r10), 4) if r10 else None,
                "recall@100": round(statistics.fmean(r100), 4) if r100 else None,
                "p50_ms": pct(times, 0.5),
                "p95_ms": pct(times, 0.95),
            }
        db.session.remove()
        db.engine.dispose()
    return out


def section(result: dict) -> str:
    lines = [
        "## Dense step by pgvector's HNSW index (`python -m bench.pgvector`)",
        "",
        f"Where PostgreSQL has pgvector (migration 0020; models/retrieval/pgvector.py), memory.query takes an "
        f"agent's nearest memories from one HNSW index per model instead of the web process's matrix "
        "(VECTOR_SEARCH: by default only for agents too big for a matrix). "
        f"{result['questions']} questions over {result['vectors']:,} real all-MiniLM-L6-v2 vectors "
        f"(bench.vector_recall's), on {result['server']} (the pgserver wheel: this project's PostgreSQL has no "
        f"pgvector), pgvector's default build parameters; `hnsw.ef_search` "
        f"{result['ef_search']} (memory.query's setting for 100 neighbours, the DENSE_K of the time). Recall against exact search over the "
        "agent's vectors; pgvector's figures over the questions it answered (the others fall back to the "
        f"matrix). Taken at a load average of {result['load_average']}.",
        "",
        "| layout | agent's memories / table | path | found all 100 | recall@10 | recall@100 | p50 / p95 ms | index build s | index MB | matrix MB per process |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in result["layouts"]:
        for name in ("pgvector", "matrix"):
            m = r[name]
            recall10 = "—" if m["recall@10"] is None else f"{m['recall@10']:.3f}"
            recall100 = "—" if m["recall@100"] is None else f"{m['recall@100']:.3f}"
            build = f"{r['index_build_s']}" if name == "pgvector" else ""
            size = f"{r['index_mb']}" if name == "pgvector" else ""
            per_process = f"{r['matrix_mb']}" if name == "matrix" else "0"
            lines.append(
                f"| {r['layout']} | {r['memories_of_agent']:,} / {r['table_rows']:,} | {name} | "
                f"{m['answered']:.0%} | {recall10} | {recall100} | {m['p50_ms']} / {m['p95_ms']} | {build} | "
                f"{size} | {per_process} |"
            )
    auto = "; ".join(
        f"{r['layout']}: {'pgvector' if r['auto_uses_pgvector'] else 'the matrix'}" for r in result["layouts"]
    )
    lines += [
        "",
        f"With the default VECTOR_SEARCH=auto (pgvector only for an agent whose matrix alone would outgrow "
        f"VECTOR_CACHE_MB, {result['vector_cache_mb']:g} MB), memory.query searched: {auto}.",
        "",
        "Filling the pgvector column (the trigger converting each stored float32 vector): "
        + ", ".join(f"{r['mirror_ms_per_vector']} ms a vector ({r['layout']})" for r in result["layouts"])
        + ".",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = arguments(__doc__.splitlines()[0]).parse_args(argv)
    os.environ.setdefault("LLM_OFFLINE", "1")
    import pgserver

    from models.retrieval import pgvector, vectors

    matrix, queries = embedded(args.memories, args.questions, args.cache)
    vectors._one_blas_thread()  # as in a process that answers dense queries
    workdir = tempfile.mkdtemp(prefix="memconsole-pgvector-")
    server = pgserver.get_server(f"{workdir}/pgdata", cleanup_mode="delete")
    try:
        admin_url = server.get_uri().replace("postgresql://", "postgresql+psycopg://")
        import sqlalchemy as sa

        engine = sa.create_engine(admin_url)
        with engine.connect() as conn:
            version = conn.execute(sa.text("SHOW server_version")).scalar_one()
        engine.dispose()
        result = {
            "vectors": args.memories,
            "questions": args.questions,
            "server": f"PostgreSQL {version} with pgvector 0.6.2",
            "ef_search": min(pgvector.EF_MAX, max(40, pgvector.EF_PER_K * K)),
            "vector_cache_mb": 512.0,  # the default, which these apps keep
            "load_average": round(os.getloadavg()[0], 1),
            "layouts": [],
        }
        for layout, agents in LAYOUTS.items():
            row = measure_layout(admin_url, layout, agents, matrix, queries, workdir)
            result["layouts"].append(row)
            print(json.dumps(row), flush=True)
    finally:
        server.cleanup()
    return written(args, result, section)


if __name__ == "__main__":
    raise SystemExit(main())
