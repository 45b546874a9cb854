"""Core benchmarks on PostgreSQL: refinement tool calls, rollbacks, the over-budget scan, dedup, prompt prefix.

    .venv/bin/python -m bench.core [--quick] [--runs 5]

Builds its data in a dedicated database (`memconsole_bench_core`, dropped and re-created), so it never
touches the app's own. Seeding uses set-based SQL (the benchmark database only); everything measured
goes through the product's own code paths. Prints a Markdown table of medians and p95 over the runs.
Loopback only, bounded sizes, stops by itself.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import uuid
from collections.abc import Callable

import sqlalchemy as sa

ADMIN_URL = os.environ.get("BENCH_POSTGRES_ADMIN_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
DB_NAME = "memconsole_bench_core"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summary(values: list[float]) -> tuple[float, float]:
    return statistics.median(values), percentile(values, 0.95)


def fresh_database(name: str = DB_NAME) -> str:
    """Drop and re-create the benchmark database `name` (never the app's); returns its URL."""
    admin = sa.create_engine(ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return ADMIN_URL.rsplit("/", 1)[0] + "/" + name


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
    conn.execute(
        sa.text(
            "INSERT INTO agents (name, core_token_budget, min_retention, mechanic_preconsent, active, created_at) "
            "SELECT 'bench-' || :tag || '-' || g, :budget, 0.5, false, true, now() FROM generate_series(1, :n) g"
        ),
        {"n": count, "budget": budget, "tag": uuid.uuid4().hex[:8]},
    )


def seed_memories(conn, first: int, last: int, per_agent: int, topics: int = 1_000_000) -> None:
    params = {"first": first, "last": last, "per_agent": per_agent, "topics": topics}
    conn.execute(sa.text(SEED_MEMORIES), params)
    conn.execute(sa.text(FILE_CONTENTS), {"first": first, "last": last})


def bench_agent(conn, name: str, min_retention: float = 0.5) -> int:
    return conn.execute(
        sa.text(
            "INSERT INTO agents (name, core_token_budget, min_retention, mechanic_preconsent, active, created_at) "
            "VALUES (:n, 5000, :r, false, true, now()) RETURNING id"
        ),
        {"n": name, "r": min_retention},
    ).scalar_one()


def row(name: str, size: str, values: list[float], goal: str = "", unit: str = "ms") -> dict:
    median, p95 = summary(values)
    return {
        "name": name,
        "size": size,
        "median_ms": median,
        "p95_ms": p95,
        "runs": len(values),
        "goal": goal,
        "unit": unit,
    }


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def bench_tool_calls(app, sizes: list[int], runs: int) -> list[dict]:
    """One refinement operation through the Knife (validation, mutation, audit, breaker check), no LLM."""
    from models import AgentMemory, RefinementSession, db
    from models.agents.agent import core_totals
    from models.refinement.toolbox import RefinementToolbox

    rows = []
    for size in [100, *sizes]:  # 100: a warm-up round (statement caches, plans), not reported
        with db.engine.begin() as conn:
            agent_id = bench_agent(conn, f"tools-{size}")
            seed_memories(conn, agent_id, agent_id, size)
            conn.execute(sa.text("ANALYZE agent_memories"))
        ids = db.session.scalars(
            sa.select(AgentMemory.id).where(AgentMemory.agent_id == agent_id).order_by(AgentMemory.id)
        ).all()
        samples: list[float] = []
        by_tool: dict[str, list[float]] = {}
        cursor = 0
        for _ in range(runs):
            tokens, count = core_totals(agent_id)
            session = RefinementSession(
                agent_id=agent_id, trigger="bench", status="running", tokens_before=tokens, count_before=count
            )
            db.session.add(session)
            db.session.commit()
            toolbox = RefinementToolbox(session.id)
            calls = []
            for n in range(10):  # one session's worth: the hard cap
                a, b = ids[cursor], ids[cursor + 1]
                cursor += 2
                calls.append(
                    [
                        ("update_memory", {"id": a, "content": f"Tightened memory {a}"}),
                        ("consolidate_memories", {"ids": [a, b], "new_content": f"Merged {a} and {b}"}),
                        ("delete_memory", {"id": b}),
                        ("protect_memory", {"id": a}),
                    ][n % 4]
                )
            for name, args in calls:
                elapsed = timed(lambda name=name, args=args, box=toolbox: box.call(name, args))
                samples.append(elapsed)
                by_tool.setdefault(name, []).append(elapsed)
            session.status = "completed"
            db.session.commit()
        if size == 100:
            continue
        rows.append(
            row(
                "refinement tool call (DB + audit + breaker)",
                f"{size:,} core memories",
                samples,
                "≤ 5 ms, flat",
            )
        )
        for name, values in sorted(by_tool.items()):
            rows.append(row(f"refinement tool call: {name}", f"{size:,} core memories", values))
    return rows


def bench_api_creates(app, sizes: list[int], runs: int) -> list[dict]:
    """One memory saved through the agent API in-process (Flask's test client: authentication, validation,
    the write path, the audit record, the commit), into an agent that already holds `size` core memories."""
    from models import Agent, db

    client = app.test_client()
    rows = []
    for size in [100, *sizes]:  # 100: a warm-up round, not reported
        with db.engine.begin() as conn:
            agent_id = bench_agent(conn, f"creates-{size}-{uuid.uuid4().hex[:6]}")
            seed_memories(conn, agent_id, agent_id, size)
        agent = db.session.get(Agent, agent_id)
        headers = {"Authorization": f"Bearer {agent.issue_token()}"}
        db.session.commit()
        samples = []
        for n in range(runs * 10):
            body = {
                "content": f"The user's standing fact number {n}.",
                "memory_type": "core",
                "category": "profile",
            }

            def create(body=body, headers=headers) -> None:
                response = client.post("/api/v1/memory", json=body, headers=headers)
                assert response.status_code == 201, response.get_data(as_text=True)[:200]

            samples.append(timed(create))
        if size != 100:
            rows.append(row("agent API create (in-process)", f"{size:,} core memories", samples))
    return rows


def bench_rollbacks(app, runs: int) -> list[dict]:
    from models import RefinementSession, db, utcnow
    from models.agents.agent import core_totals
    from models.changes.mutations import create_memory, update_memory
    from models.changes.timemachine import rollback_agent, rollback_session
    from models.refinement.toolbox import RefinementToolbox

    with db.engine.begin() as conn:
        agent_id = bench_agent(conn, "rollback", min_retention=0.1)
        seed_memories(conn, agent_id, agent_id, 2000)
    session_ms, pit_ms = [], []
    for run in range(runs):
        ids = db.session.scalars(
            sa.text(
                "SELECT id FROM agent_memories WHERE agent_id = :a AND deleted_at IS NULL AND memory_type = 'core' "
                "AND constitutional = false ORDER BY id LIMIT 20"
            ),
            {"a": agent_id},
        ).all()
        tokens, count = core_totals(agent_id)
        session = RefinementSession(
            agent_id=agent_id, trigger="bench", status="running", tokens_before=tokens, count_before=count
        )
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
        row("session rollback (10 operations)", "2,000 core memories", session_ms, "≤ 50 ms"),
        row("point-in-time restore", "10,000 audit records after the point", pit_ms, "≤ 2 s"),
    ]


def bench_scan(app, agents: int, per_agent: int, runs: int) -> list[dict]:
    """The over-budget scan and the weekly sweep's selection over `agents` x `per_agent` core memories."""
    from models import Agent, db
    from models.refinement.due import agents_due_for_sweep, over_budget_due

    with db.engine.begin() as conn:
        first = conn.execute(sa.text("SELECT coalesce(max(id), 0) + 1 FROM agents")).scalar_one()
        seed_agents(conn, agents, budget=50 * per_agent // 2)  # about half the agents end up over budget
        last = first + agents - 1
        for start in range(first, last + 1, 500):
            seed_memories(conn, start, min(start + 499, last), per_agent)
        conn.execute(sa.text("ANALYZE"))
    size = f"{agents:,} agents / {agents * per_agent:,} memories"
    return [
        row(
            "over-budget scan with cool-down (one query)",
            size,
            [timed(lambda: over_budget_due(now=None)) for _ in range(runs)],
            "≤ 100 ms at 10k agents / 5M",
        ),
        row("over-budget ids", size, [timed(lambda: Agent.over_budget_ids()) for _ in range(runs)]),
        row("weekly sweep selection", size, [timed(lambda: agents_due_for_sweep()) for _ in range(runs)]),
    ]


def bench_dedup(app, agents: int, per_agent: int, every: int, stride: int = 2) -> list[dict]:
    """The nightly dedup over `agents` x `per_agent` core memories, one in `every` an exact duplicate
    (a case/space variant of the memory before it) on one agent in `stride`; then again with nothing
    to do."""
    from jobs.maintenance import dedup_all_agents
    from models import db

    with db.engine.begin() as conn:
        first = conn.execute(sa.text("SELECT coalesce(max(id), 0) + 1 FROM agents")).scalar_one()
        seed_agents(conn, agents)
        last = first + agents - 1
        for start in range(first, last + 1, 500):
            seed_memories(conn, start, min(start + 499, last), per_agent, topics=per_agent)
        conn.execute(
            sa.text(
                "UPDATE agent_memories m SET content = upper(m.content) || ' ', content_hash = p.prev_hash "
                "FROM (SELECT id, lag(content_hash) OVER w AS prev_hash, row_number() OVER w AS n FROM agent_memories "
                "      WHERE agent_id BETWEEN :first AND :last AND (agent_id - :first) % :stride = 0 "
                "      WINDOW w AS (PARTITION BY agent_id ORDER BY id)) p "
                "WHERE m.id = p.id AND p.n % :every = 0"
            ),
            {"first": first, "last": last, "every": every, "stride": stride},
        )
        # Only these agents are active, so the run sees exactly this data set.
        conn.execute(
            sa.text("UPDATE agents SET active = (id BETWEEN :first AND :last)"),
            {"first": first, "last": last},
        )
    # The steady state a nightly job meets: autovacuum has run (the visibility map lets the dedup's
    # aggregate read the partial index alone).
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(sa.text("VACUUM ANALYZE agent_memories"))
    result: dict = {}
    first_ms = timed(lambda: result.update(dedup_all_agents()))
    again_ms = timed(dedup_all_agents)
    with db.engine.begin() as conn:
        conn.execute(sa.text("UPDATE agents SET active = true"))
    size = f"{agents * per_agent:,} memories, {agents:,} agents, {result['removed']:,} duplicates"
    return [
        row("nightly content-blind dedup, first pass", size, [first_ms], "≤ 10 s at 1M"),
        row(
            "nightly content-blind dedup, second pass (nothing to do)",
            f"{agents * per_agent:,} memories",
            [again_ms],
        ),
    ]


def print_table(rows: list[dict]) -> None:
    print("| measurement | size | median | p95 | runs | goal |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    for r in rows:
        print(
            f"| {r['name']} | {r['size']} | {r['median_ms']:.2f} {r['unit']} | {r['p95_ms']:.2f} {r['unit']} "
            f"| {r['runs']} | {r['goal']} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument(
        "--only-tools",
        action="store_true",
        help="only the tool calls and API creates; with --json, replace those rows in the file and keep the rest",
    )
    args = parser.parse_args()

    url = fresh_database()
    os.environ.setdefault("LLM_OFFLINE", "1")
    from flask_migrate import upgrade

    from console import create_app

    app = create_app(
        {
            "DATABASE_URL": url,
            "SECRET_KEY": "bench",
            "REDIS_URL": "embedded",
            "EMBEDDED_REDIS_DIR": "/tmp/memconsole-bench-redis",
            "RATELIMIT_ENABLED": False,  # the API create bench measures the write, not the limiter
        }
    )
    with app.app_context():
        upgrade()
        sizes = [1_000, 5_000] if args.quick else [1_000, 5_000, 50_000]
        rows = bench_tool_calls(app, sizes, args.runs)
        rows += bench_api_creates(app, sizes, args.runs)
        if args.only_tools:
            kept = []
            if args.json and os.path.exists(args.json):
                with open(args.json, encoding="utf-8") as fh:
                    kept = [
                        r
                        for r in json.load(fh)
                        if not r["name"].startswith(("refinement tool call", "agent API create"))
                    ]
            print_table(rows)
            if args.json:
                with open(args.json, "w", encoding="utf-8") as fh:
                    json.dump(rows + kept, fh, indent=1)
            return
        rows += bench_rollbacks(app, 1 if args.quick else args.runs)
        if args.quick:
            rows += bench_dedup(app, agents=100, per_agent=200, every=10)
            rows += bench_dedup(app, agents=1, per_agent=10_000, every=5, stride=1)
            rows += bench_scan(app, agents=1_000, per_agent=50, runs=args.runs)
        else:
            # Dedup first: it reads every active core memory, so it runs before the scan adds 5M more.
            rows += bench_dedup(app, agents=1, per_agent=50_000, every=5, stride=1)  # the "before" data set
            rows += bench_dedup(app, agents=1_000, per_agent=100, every=50)
            rows += bench_dedup(app, agents=1_000, per_agent=1_000, every=50)
            rows += bench_scan(app, agents=1_000, per_agent=500, runs=args.runs)
            rows += bench_scan(app, agents=10_000, per_agent=500, runs=args.runs)
    print_table(rows)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
