"""memory.query latency for natural-language questions, in-process: lexical, and hybrid with stored vectors.

    .venv/bin/python -m bench.nl_latency --database sqlite --memories 10000
    .venv/bin/python -m bench.nl_latency --database postgresql --memories 100000
    .venv/bin/python -m bench.nl_latency --database postgresql --memories 1000000 --no-vectors --keep

One agent holding N memories (bench/api_load.py's Zipf corpus: sentences of 7-13 words over a 6,000-word
vocabulary, 7 categories, 50 users), seeded straight into a throwaway database (SQLite file, or the
PostgreSQL database `memconsole_bench_nl_<N>`; the memories table, its full-text index and
memory_embeddings only, no audit records: this measures the read path). Then QUESTIONS questions of 8-20
words — whole sentences such as "What did the user decide about the budget report before the
meeting with the client?" — run through `models.retrieval.query.search` (what memory.query calls) with the
agent's whole allowlist, top 5, one at a time, timed with perf_counter: one untimed pass over every
question (statement caches, the vector matrix, the pages they read), then ROUNDS timed passes (3), the
percentiles taken over all of them, each pass's own p95 kept beside them (how much one pass varies). The
cases below take turns question by question (`interleaved`), so a noisy minute falls on all of them:

- lexical: no embedder (the ranking memory.query uses without one);
- hybrid: the same questions with a query vector, against a stored 384-dimension vector per memory.
  The vectors are random unit vectors (embedding 100k texts with MiniLM on this machine takes longer
  than the whole benchmark suite), which costs the same to search as real ones: the matrix product, the
  sign-bit shortlist past vectors.EXACT_ROWS and the fused SQL do not depend on the values (what the
  shortlist misses does: `python -m bench.vector_recall` measures it on real MiniLM vectors). The time
  to embed the question itself is measured separately (`--embed-model local`: all-MiniLM-L6-v2 on the
  CPU, when installed);
- each with and without a `user_id` filter (1 of 50 users), the scope nearly every agent call carries.

Prints p50 / p95 / p99 per case and writes them with --json. Loopback only; stops by itself.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.api_load import CATEGORIES, Corpus  # noqa: E402
from bench.machine import loop_seconds  # noqa: E402

PG_ADMIN_URL = os.environ.get(
    "BENCH_POSTGRES_ADMIN_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
DIMS = 384
MODEL = "bench-random-384"
OPENERS = [
    "What did the user say about", "Can you remind me what the user decided about", "Do we know anything about",
    "What does the user think of", "Has the user mentioned", "What was the plan for", "Why was the user worried about",
    "When did the user last talk about",
]  # fmt: skip
MIDDLES = ["and", "before the", "after the", "during the", "with the", "instead of the", "because of the"]
CLOSERS = ["last week?", "at the meeting?", "with the client?", "this month?", "again?", "recently?", "?"]


def questions(corpus: Corpus, count: int, seed: int = 21) -> list[str]:
    """Natural-language questions of 8-20 words over the corpus's words."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        first, second = corpus.pick(rng.randint(1, 3), rng), corpus.pick(rng.randint(1, 3), rng)
        text = f"{rng.choice(OPENERS)} {' '.join(first)} {rng.choice(MIDDLES)} {' '.join(second)} {rng.choice(CLOSERS)}"
        text = text.replace(" ?", "?")
        if 8 <= len(text.split()) <= 20:
            out.append(text)
    return out


def interleaved(count: int, cases: list[str], rounds: int) -> list[tuple[int, str, int]]:
    """The timed runs in order, (round, case, question index): the cases take turns, one question each,
    so that whatever else the machine does meanwhile falls on every case alike (run one case after
    another, a busy minute lands on one of them and shows as a difference between cases). Each case is at
    its own place in the question list, count / len(cases) apart, so no case runs right after another on
    the same question (whose pages and statements the first would have left warm)."""
    shift = max(1, count // len(cases))
    return [
        (round_, case, (step + n * shift) % count)
        for round_ in range(rounds)
        for step in range(count)
        for n, case in enumerate(cases)
    ]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))], 2)


def seed_rows(engine, agent_id: int, count: int, corpus: Corpus, vectors: bool, seed: int = 8) -> None:
    """Insert `count` memories (and a random unit vector each) straight into the tables."""
    import numpy as np
    import sqlalchemy as sa

    rng = random.Random(seed)
    vrng = np.random.default_rng(seed)
    now = datetime.now(UTC).replace(tzinfo=None)
    batch = 5000
    for start in range(0, count, batch):
        rows, embeds = [], []
        for _ in range(min(batch, count - start)):
            content = corpus.sentence(rng)
            updated = now - timedelta(seconds=rng.randint(0, 365 * 86400))
            rows.append({
                "agent_id": agent_id, "memory_type": "semantic", "content": content,
                "content_hash": hashlib.sha256(content.lower().encode()).hexdigest(),
                "token_estimate": -(-len(content) // 4), "tags": "[]", "category": rng.choice(CATEGORIES),
                "importance": rng.randint(1, 5), "pinned": False, "constitutional": False,
                "created_at": updated - timedelta(days=rng.randint(0, 30)), "updated_at": updated,
                "user_id": f"user-{rng.randint(1, 50)}",
            })  # fmt: skip
        with engine.begin() as conn:
            if engine.dialect.name == "postgresql":
                cols = list(rows[0])
                cursor = conn.connection.dbapi_connection.cursor()
                with cursor, cursor.copy(f"COPY agent_memories ({', '.join(cols)}) FROM STDIN") as copy:
                    for r in rows:
                        copy.write_row([r[c] for c in cols])
            else:
                conn.execute(
                    sa.text(
                        "INSERT INTO agent_memories (agent_id, memory_type, content, content_hash, token_estimate, "
                        "tags, category, importance, pinned, constitutional, created_at, updated_at, user_id) VALUES "
                        "(:agent_id, :memory_type, :content, :content_hash, :token_estimate, :tags, :category, "
                        ":importance, :pinned, :constitutional, :created_at, :updated_at, :user_id)"
                    ),
                    rows,
                )
            if vectors:
                ids = conn.execute(
                    sa.text(
                        "SELECT id, content_hash FROM agent_memories WHERE agent_id = :a ORDER BY id DESC LIMIT :n"
                    ),
                    {"a": agent_id, "n": len(rows)},
                ).all()
                matrix = vrng.standard_normal((len(ids), DIMS)).astype(np.float32)
                matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
                embeds = [
                    {"memory_id": i, "agent_id": agent_id, "model": MODEL, "dims": DIMS, "content_hash": h,
                     "vector": matrix[n].tobytes(), "created_at": now}
                    for n, (i, h) in enumerate(ids)
                ]  # fmt: skip
                conn.execute(
                    sa.text(
                        "INSERT INTO memory_embeddings (memory_id, agent_id, model, dims, content_hash, vector, "
                        "created_at) VALUES (:memory_id, :agent_id, :model, :dims, :content_hash, :vector, :created_at)"
                    ),
                    embeds,
                )
        print(f"  seeded {start + len(rows):,} / {count:,}", flush=True)


def agreement(agent_id: int, asked: list[str], categories: list[str], one_user: bool = False) -> dict:
    """How far the bounded candidate pool changes the answers (lexical, top 5): each question's results
    against those of the same ranking with every match a candidate (matching.EXACT_LIMIT out of reach);
    `one_user`: with the timed runs' user filters. `overlap`: the share of the exhaustive top 5 also
    returned; `same_first`: questions whose first result is the same; `identical`: questions whose top 5
    is the same, in the same order."""
    from models import db
    from models.retrieval import matching, query

    def top(i: int, question: str) -> list[int]:
        filters = {"user_id": user_of(i)} if one_user else None
        hits = query.search(agent_id, text=question, categories=categories, filters=filters, top_k=5)
        db.session.rollback()
        return [h.id for h in hits]

    bounded = [top(i, q) for i, q in enumerate(asked)]
    saved = matching.EXACT_LIMIT
    matching.EXACT_LIMIT = 10**9
    query.statement.cache_clear()
    try:
        every = [top(i, q) for i, q in enumerate(asked)]
    finally:
        matching.EXACT_LIMIT = saved
        query.statement.cache_clear()
    pairs = list(zip(bounded, every, strict=True))
    return {
        "overlap": round(statistics.fmean(len(set(a) & set(b)) / max(len(b), 1) for a, b in pairs), 3),
        "same_first": round(statistics.fmean(a[:1] == b[:1] for a, b in pairs), 3),
        "identical": round(statistics.fmean(a == b for a, b in pairs), 3),
    }


def user_of(i: int) -> str:
    """The user the i-th question is asked for in the "one user" cases (1 of 50)."""
    return f"user-{1 + i % 50}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument(
        "--rounds", type=int, default=3, help="timed passes over the questions, after one warm-up"
    )
    parser.add_argument("--no-vectors", action="store_true", help="lexical only (no stored vectors)")
    parser.add_argument("--keep", action="store_true", help="PostgreSQL: keep the database for another run")
    parser.add_argument("--reuse", action="store_true", help="PostgreSQL: reuse a kept database")
    parser.add_argument("--embed-model", choices=("none", "local"), default="none",
                        help="also time embedding each question with the local MiniLM")  # fmt: skip
    parser.add_argument("--agreement", action="store_true",
                        help="PostgreSQL: compare each top 5 with ranking every match")  # fmt: skip
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--section", help="write report.md's section (from every result file) here")
    args = parser.parse_args(argv)
    os.environ.setdefault("LLM_OFFLINE", "1")

    import numpy as np
    import sqlalchemy as sa
    from flask_migrate import upgrade

    from console import create_app
    from models import Agent, db
    from models.db import end_read
    from models.retrieval import query

    corpus = Corpus(7)
    pg_db = f"memconsole_bench_nl_{args.memories}"
    # The SQLite file and the embedded Redis's socket, removed at the end.
    workdir = tempfile.mkdtemp(prefix="memconsole-nl-")
    if args.database == "sqlite":
        url = f"sqlite:///{workdir}/nl.sqlite"
    else:
        url = PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + pg_db
        if not args.reuse:
            admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
            with admin.connect() as conn:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{pg_db}" WITH (FORCE)'))
                conn.execute(sa.text(f'CREATE DATABASE "{pg_db}"'))
            admin.dispose()
    app = create_app({"DATABASE_URL": url, "SECRET_KEY": "bench", "REDIS_URL": "embedded",
                      "EMBEDDED_REDIS_DIR": f"{workdir}/redis"})  # fmt: skip
    results: dict = {
        "load_average": round(os.getloadavg()[0], 1),
        "machine_loop_s": loop_seconds(),  # the machine's speed (bench/machine.py), before the timed passes
        "database": args.database,
        "memories": args.memories,
        "questions": args.questions,
        "rounds": args.rounds,
        "cases": {},
    }
    try:
        with app.app_context():
            upgrade(revision="heads")  # a kept database gets the migrations added since
            if args.reuse:
                agent_id = db.session.scalar(sa.select(Agent.id).where(Agent.name == "nl-bench"))
            else:
                agent = Agent(name="nl-bench", role="supervisor")
                db.session.add(agent)
                db.session.commit()
                agent_id = agent.id
                started = time.perf_counter()
                seed_rows(db.engine, agent_id, args.memories, corpus, vectors=not args.no_vectors)
                results["seed_seconds"] = round(time.perf_counter() - started, 1)
                with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                    conn.execute(sa.text("VACUUM ANALYZE" if args.database == "postgresql" else "ANALYZE"))
                    if args.database == "postgresql":
                        # Write the bulk load out now: otherwise the checkpointer flushes it during the
                        # timed questions, and they measure the disk (p95 up to 2-3x on this machine).
                        conn.execute(sa.text("CHECKPOINT"))
            categories = CATEGORIES  # everything the agent holds: a supervisor's allowlist covers them
            asked = questions(corpus, args.questions)
            results["words"] = {
                "min": min(len(q.split()) for q in asked),
                "max": max(len(q.split()) for q in asked),
            }
            rng = np.random.default_rng(3)
            qvecs = rng.standard_normal((len(asked), DIMS)).astype(np.float32)
            qvecs /= np.linalg.norm(qvecs, axis=1, keepdims=True)
            names = ["lexical", "lexical, one user"]
            if not args.no_vectors:
                names += ["hybrid", "hybrid, one user"]

            def one(i: int, question: str, name: str) -> float:
                filters = {"user_id": user_of(i)} if name.endswith("one user") else None
                dense = (MODEL, qvecs[i]) if name.startswith("hybrid") else None
                started = time.perf_counter()
                query.search(
                    agent_id, text=question, categories=categories, filters=filters, top_k=5, dense=dense
                )
                elapsed = (time.perf_counter() - started) * 1000
                end_read()  # end the read transaction, as memory.query does
                return elapsed

            # Warm-up, every question once in every case: statement caches, the vector matrix, the pages
            # they read.
            for name in names:
                for i, question in enumerate(asked):
                    one(i, question, name)
            timed = interleaved(len(asked), names, args.rounds)
            results["schedule"] = "interleaved"
            rounds: dict[str, list[list[float]]] = {name: [[] for _ in range(args.rounds)] for name in names}
            for round_, name, i in timed:
                rounds[name][round_].append(one(i, asked[i], name))
            for name in names:
                timings = [t for r in rounds[name] for t in r]
                row = {"p50": pct(timings, 0.5), "p95": pct(timings, 0.95), "p99": pct(timings, 0.99),
                       "mean": round(statistics.fmean(timings), 2),
                       "round_p95": [pct(r, 0.95) for r in rounds[name]]}  # fmt: skip
                results["cases"][name] = row
                print(f"{args.database} {args.memories:,} {name:<18} p50 {row['p50']} p95 {row['p95']} "
                      f"p99 {row['p99']} ms", flush=True)  # fmt: skip
            if args.agreement and args.database == "postgresql":
                results["agreement"] = agreement(agent_id, asked, categories)
                results["agreement_one_user"] = agreement(agent_id, asked, categories, one_user=True)
                print(f"top 5 against ranking every match: {results['agreement']}; one user: "
                      f"{results['agreement_one_user']}", flush=True)  # fmt: skip
            if not args.no_vectors:
                from models.retrieval import vectors

                results["vector_cache_mb"] = round(vectors.cache().nbytes / 1e6, 1)
                # A full load of the agent's matrix, as its first dense query and its hourly rebuild (by a
                # thread of its own: vectors.VectorCache.rebuild) read it; the pages warm, median of three.
                loads = []
                for _ in range(3):
                    started = time.perf_counter()
                    vectors.AgentMatrix(agent_id, MODEL).refresh(time.monotonic())
                    loads.append((time.perf_counter() - started) * 1000)
                    end_read()
                results["matrix_load_ms"] = round(statistics.median(loads), 1)
                print(f"loading the agent's vector matrix: {results['matrix_load_ms']} ms", flush=True)
            if args.embed_model == "local":
                os.environ["EMBEDDINGS"] = "local"
                from jobs.embeddings import get_embedder

                embedder = get_embedder("local")
                for q in asked[-5:]:  # warm-up, one question at a time as below (the first builds its path)
                    embedder.embed([q], query=True)
                timings = []
                for q in asked[:100]:
                    started = time.perf_counter()
                    embedder.embed([q], query=True)
                    timings.append((time.perf_counter() - started) * 1000)
                results["embed_question_ms"] = {"model": embedder.label, "p50": pct(timings, 0.5),
                                                "p95": pct(timings, 0.95)}  # fmt: skip
                print(
                    f"embedding one question ({embedder.label}): p50 {pct(timings, 0.5)} p95 {pct(timings, 0.95)} ms"
                )
            db.session.remove()
            db.engine.dispose()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        if args.database == "postgresql" and not args.keep:
            admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
            with admin.connect() as conn:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{pg_db}" WITH (FORCE)'))
            admin.dispose()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    if args.section:
        Path(args.section).write_text(
            section(Path(args.json).parent if args.json else RESULTS), encoding="utf-8"
        )
    return 0


RESULTS = ROOT / "bench" / "results"


def section(results: Path) -> str:
    """bench/results/report.md's section from every nl_*.json (this script) and reads_*.json
    (bench/api_load.py --read-only --questions) in `results`."""
    lines = [
        "## Natural-language questions (`python -m bench.nl_latency`)",
        "",
        "memory.query's ranking in-process (`models.retrieval.query.search`, the agent's whole allowlist, top 5), one "
        "question at a time, 8-20 words each; lexical is the ranking without an embedder, hybrid adds the "
        "dense candidates of a stored 384-dimension vector per memory (random unit vectors: the cost of "
        "searching does not depend on their values) and the fused SQL. The question's own embedding is not "
        "included (`--embed-model local` times it; the peers table has whole queries with MiniLM). `one user`: "
        "with a `user_id` filter (1 of 50 users). After one untimed pass over the questions, the percentiles "
        "are over every timed pass (`--rounds`); the last column gives each pass's own p95. Within a pass the "
        "cases take turns question by question, each a quarter of the question list from the others, so "
        "whatever else the machine does falls on all of them alike (runs before 2026-11-27 timed one case "
        "after another).",
        "",
        "| database | memories | case | p50 ms | p95 ms | p99 ms | questions x passes | p95 of each pass |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    runs = sorted(
        (json.loads(p.read_text()) for p in results.glob("nl_*.json")),
        key=lambda r: (r["memories"], r["database"]),
    )
    notes = []
    for run in runs:
        for case, row in run["cases"].items():
            passes = " / ".join(str(p) for p in row.get("round_p95", []))
            lines.append(f"| {run['database']} | {run['memories']:,} | {case} | {row['p50']} | {row['p95']} "
                         f"| {row['p99']} | {run['questions']} x {run.get('rounds', 1)} | {passes} |")  # fmt: skip
        if run.get("vector_cache_mb") is not None:
            notes.append(
                f"vector matrix in memory at {run['memories']:,} memories: {run['vector_cache_mb']} MB"
            )
        if run.get("load_average") is not None:
            probe = (f", the machine's probe loop {run['machine_loop_s']} s (`python -m bench.machine`)"
                     if run.get("machine_loop_s") else "")  # fmt: skip
            notes.append(f"{run['database']} {run['memories']:,}: started at a load average of {run['load_average']} "
                         f"on {os.cpu_count()} cores{probe}")  # fmt: skip
        for key, case in (("agreement", "lexical"), ("agreement_one_user", "lexical, one user")):
            if run.get(key):
                a = run[key]
                notes.append(f"{run['database']} {run['memories']:,}, {case} top 5 against ranking every match "
                             f"(`--agreement`): {a['overlap']:.1%} of its results returned, the same first result "
                             f"for {a['same_first']:.1%} of the questions, the same top 5 in order for "
                             f"{a['identical']:.1%}")  # fmt: skip
        if run.get("embed_question_ms"):
            e = run["embed_question_ms"]
            notes.append(f"embedding one question with {e['model']}: p50 {e['p50']} / p95 {e['p95']} ms")
    lines += ["", *(f"- {n}" for n in notes), ""] if notes else [""]
    reads = sorted(
        (json.loads(p.read_text()) for p in results.glob("reads_*.json")), key=lambda r: r["memories"]
    )
    if reads:
        lines += [
            "### Read-only throughput over HTTP (`python bench/api_load.py --read-only --questions --clients 1,8,8,8`)",
            "",
            "The 8-client round three times over, one after another (the summary above takes their median: "
            "the machine's speed drifts). "
            "gunicorn (2 workers x 8 threads) on loopback, natural-language questions only (bullets, filtered, "
            "delta header, full), lexical ranking; clients and server share the two cores. The rate limiter "
            "counts every call in Redis as in production, its limit raised for the one token that makes them "
            "all (runs before the evening of 2026-11-26 switched it off, `RATELIMIT_ENABLED=0`). CPU a "
            "request (Linux's /proc, over the round): the gunicorn processes, the clients, and the rest of the "
            "machine's busy time, which on a quiet machine is PostgreSQL and Redis; then the share of the "
            "cores left idle. With the cores busy, the sum of the three bounds the throughput: two cores give "
            "2,000 ms of CPU a second. Last, the machine's speed just before the round: the best of three timings "
            "of a 10-million-iteration Python loop (`python -m bench.machine`; lower is faster, 0.15 s on the "
            "fastest machine seen, 0.30 on the slowest; runs before 2026-11-28 did not time it).",
            "",
            "| memories | clients | p50 ms | p95 ms | p99 ms | req/s | CPU ms: server | clients | rest | idle "
            "| probe loop s |",
            "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for run in reads:
            for round_ in run["rounds"]:
                row, cpu = round_["summary"]["all"], round_.get("cpu")
                used = (f"{cpu['server_ms']} | {cpu['client_ms']} | {cpu['rest_ms']} | {cpu['idle_pct']}%"
                        if cpu else "- | - | - | -")  # fmt: skip
                lines.append(f"| {run['memories']:,} | {round_['clients']} | {row['p50']} | {row['p95']} "
                             f"| {row['p99']} | {row['rps']} | {used} | {round_.get('machine_loop_s', '-')} |")  # fmt: skip
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
