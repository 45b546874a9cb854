"""Core benchmarks on PostgreSQL: refinement tool calls, rollbacks, the over-budget scan, dedup, prompt prefix.

    .venv/bin/python -m bench.core [--quick] [--runs 5]

Builds its data in a dedicated database (`memconsole_bench_core`, dropped and re-created), so it never
touches the app's own. Seeding uses set-based SQL (the benchmark database only); everything measured
goes through the product's own code paths. Prints a Markdown table of medians and p95 over the runs.
Loopback only, bounded sizes, stops by itself.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

import sqlalchemy as sa

ADMIN_URL = os.environ.get("BENCH_POSTGRES_ADMIN_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
DB_NAME = "memconsole_bench_core"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summary(values: list[float]) -> tuple[float, float]:
    return statistics.median(values), percentile(values, 0.95)


def fresh_database() -> str:
    admin = sa.create_engine(ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)'))
        conn.execute(sa.text(f'CREATE DATABASE "{DB_NAME}"'))
    admin.dispose()
    return ADMIN_URL.rsplit("/", 1)[0] + "/" + DB_NAME


SEED_MEMORIES = """
INSERT INTO agent_memories (agent_id, memory_type, content, content_hash, token_estimate, tags, pinned,
                            constitutional, created_at, updated_at)
SELECT a.id, 'core', c.content, encode(sha256(convert_to(lower(btrim(c.content)), 'UTF8')), 'hex'),
       ceil(length(c.content) / 4.0), '[]', false, false, now() - (g * interval '1 minute'), now()
FROM agents a
CROSS JOIN generate_series(1, :per_agent) AS g
CROSS JOIN LATERAL (SELECT 'Memory ' || g || ' of agent ' || a.id || ' about topic ' || (g % :topics)
                           || ' with some ordinary detail to give it a realistic length' AS content) c
WHERE a.id BETWEEN :first AND :last
"""
FILE_CONTENTS = """
INSERT INTO audit_contents (memory_id, sha256, content, token_estimate)
SELECT id, encode(sha256(convert_to(content, 'UTF8')), 'hex'), content, token_estimate
FROM agent_memories WHERE agent_id BETWEEN :first AND :last
"""


def seed_agents(conn, count: int, budget: int = 5000) -> None:
    conn.execute(sa.text(
        "INSERT INTO agents (name, core_token_budget, min_retention, mechanic_preconsent, active, created_at) "
        "SELECT 'bench-' || g, :budget, 0.5, false, true, now() FROM generate_series(1, :n) g"
    ), {"n": count, "budget": budget})


def seed_memories(conn, first: int, last: int, per_agent: int, topics: int = 1_000_000) -> None:
    params = {"first": first, "last": last, "per_agent": per_agent, "topics": topics}
    conn.execute(sa.text(SEED_MEMORIES), params)
    conn.execute(sa.text(FILE_CONTENTS), {"first": first, "last": last})


def bench_agent(conn, name: str, min_retention: float = 0.5) -> int:
    return conn.execute(sa.text(
        "INSERT INTO agents (name, core_token_budget, min_retention, mechanic_preconsent, active, created_at) "
        "VALUES (:n, 5000, :r, false, true, now()) RETURNING id"), {"n": name, "r": min_retention}).scalar_one()


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def bench_tool_calls(app, sizes: list[int], runs: int) -> list[tuple[str, str, float, float]]:
    """One refinement operation through the Knife (validation, mutation, audit, breaker check), no LLM."""
    from models import AgentMemory, RefinementSession, db
    from models.refinement import RefinementToolbox, core_totals

    rows = []
    for size in sizes:
        with db.engine.begin() as conn:
            agent_id = bench_agent(conn, f"tools-{size}")
            seed_memories(conn, agent_id, agent_id, size)
            conn.execute(sa.text("ANALYZE agent_memories"))
        ids = db.session.scalars(sa.select(AgentMemory.id).where(AgentMemory.agent_id == agent_id)
                                 .order_by(AgentMemory.id)).all()
        samples: list[float] = []
        cursor = 0
        for _ in range(runs):
            tokens, count = core_totals(agent_id)
            session = RefinementSession(agent_id=agent_id, trigger="bench", status="running",
                                        tokens_before=tokens, count_before=count)
            db.session.add(session)
            db.session.commit()
            toolbox = RefinementToolbox(session.id)
            calls = []
            for n in range(10):  # one session's worth: the hard cap
                a, b = ids[cursor], ids[cursor + 1]
                cursor += 2
                calls.append([
                    ("update_memory", {"id": a, "content": f"Tightened memory {a}"}),
                    ("consolidate_memories", {"ids": [a, b], "new_content": f"Merged {a} and {b}"}),
                    ("delete_memory", {"id": b}),
                    ("protect_memory", {"id": a}),
                ][n % 4])
            for name, args in calls:
                elapsed = timed(lambda name=name, args=args, box=toolbox: box.call(name, args))
                samples.append(elapsed)
            session.status = "completed"
            db.session.commit()
        median, p95 = summary(samples)
        rows.append(("refinement tool call (DB + audit + breaker)", f"{size:,} core memories", median, p95))
    return rows


def bench_rollbacks(app, runs: int) -> list[tuple[str, str, float, float]]:
    from models import RefinementSession, db, utcnow
    from models.mutations import create_memory, update_memory
    from models.refinement import RefinementToolbox, core_totals
    from models.timemachine import rollback_agent, rollback_session

    with db.engine.begin() as conn:
        agent_id = bench_agent(conn, "rollback", min_retention=0.1)
        seed_memories(conn, agent_id, agent_id, 2000)
    session_ms, pit_ms = [], []
    for run in range(runs):
        ids = db.session.scalars(sa.text(
            "SELECT id FROM agent_memories WHERE agent_id = :a AND deleted_at IS NULL AND memory_type = 'core' "
            "AND constitutional = false ORDER BY id LIMIT 20"), {"a": agent_id}).all()
        tokens, count = core_totals(agent_id)
        session = RefinementSession(agent_id=agent_id, trigger="bench", status="running",
                                    tokens_before=tokens, count_before=count)
        db.session.add(session)
        db.session.commit()
        toolbox = RefinementToolbox(session.id)
        for n in range(10):
            toolbox.call("update_memory", {"id": ids[n], "content": f"Run {run} tightened {n}"})
        session.status = "completed"
        db.session.commit()
        session_ms.append(timed(lambda s=session.id: rollback_session(s, actor="admin:bench")))

        to = utcnow()
        time.sleep(0.002)
        memory = create_memory(agent_id, f"Point-in-time subject {run}", actor="admin:bench")
        for n in range(10_000 - 1):  # 10k audit records after the restore point
            update_memory(agent_id, memory.id, actor="admin:bench", content=f"Revision {n} of run {run}")
        pit_ms.append(timed(lambda t=to: rollback_agent(agent_id, t, actor="admin:bench")))
    return [
        ("session rollback (10 operations)", "2,000 core memories", *summary(session_ms)),
        ("point-in-time restore", "10,000 audit records after the point", *summary(pit_ms)),
    ]


def bench_scan_and_dedup(app, agents: int, per_agent: int, dedup_rows: int, runs: int):
    from jobs.refinement import over_budget_due
    from models import Agent, db
    from models.mutations import dedup_for_agent

    with db.engine.begin() as conn:
        first = conn.execute(sa.text("SELECT coalesce(max(id), 0) + 1 FROM agents")).scalar_one()
        seed_agents(conn, agents, budget=50 * per_agent // 2)
        last = first + agents - 1
        for start in range(first, last + 1, 500):
            seed_memories(conn, start, min(start + 499, last), per_agent)
        conn.execute(sa.text("ANALYZE"))
    total = agents * per_agent
    scan_ms = [timed(lambda: over_budget_due(now=None)) for _ in range(runs)]
    scan_agent_ms = [timed(lambda: Agent.over_budget_ids()) for _ in range(runs)]

    # Dedup: one agent with `dedup_rows` memories, every fifth an exact duplicate (case/space variant).
    with db.engine.begin() as conn:
        agent_id = bench_agent(conn, "dedup")
        seed_memories(conn, agent_id, agent_id, dedup_rows, topics=dedup_rows)
        conn.execute(sa.text(
            "UPDATE agent_memories SET content = upper(content) || ' ', "
            "content_hash = (SELECT m2.content_hash FROM agent_memories m2 WHERE m2.id = agent_memories.id - 1) "
            "WHERE agent_id = :a AND id % 5 = 0"), {"a": agent_id})
        conn.execute(sa.text("ANALYZE agent_memories"))
    dedup_ms = timed(lambda: dedup_for_agent(agent_id))
    again_ms = timed(lambda: dedup_for_agent(agent_id))
    return [
        ("over-budget scan with cool-down (one query)", f"{agents:,} agents / {total:,} memories", *summary(scan_ms)),
        ("over-budget ids (one aggregate query)", f"{agents:,} agents / {total:,} memories", *summary(scan_agent_ms)),
        ("content-blind dedup, first pass (~20% duplicates)", f"{dedup_rows:,} memories, one agent", dedup_ms, dedup_ms),
        ("content-blind dedup, second pass (nothing to do)", f"{dedup_rows:,} memories, one agent", again_ms, again_ms),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    url = fresh_database()
    os.environ.setdefault("LLM_OFFLINE", "1")
    from flask_migrate import upgrade

    from console import create_app

    app = create_app({"DATABASE_URL": url, "SECRET_KEY": "bench", "REDIS_URL": "embedded",
                      "EMBEDDED_REDIS_DIR": "/tmp/memconsole-bench-redis"})
    with app.app_context():
        upgrade()
        sizes = [1_000, 5_000] if args.quick else [1_000, 5_000, 50_000]
        rows = bench_tool_calls(app, sizes, args.runs)
        rows += bench_rollbacks(app, 1 if args.quick else args.runs)
        if args.quick:
            rows += bench_scan_and_dedup(app, agents=1_000, per_agent=50, dedup_rows=20_000, runs=args.runs)
        else:
            rows += bench_scan_and_dedup(app, agents=10_000, per_agent=500, dedup_rows=1_000_000, runs=args.runs)
    print("| measurement | size | median ms | p95 ms |")
    print("| --- | --- | ---: | ---: |")
    for name, size, median, p95 in rows:
        print(f"| {name} | {size} | {median:.2f} | {p95:.2f} |")


if __name__ == "__main__":
    main()
