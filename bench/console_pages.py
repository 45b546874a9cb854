"""How fast is every console page with 10,000 agents and 1,000,000 memories in PostgreSQL?

    python bench/console_pages.py                 # build the data set (a few minutes), then time the pages
    python bench/console_pages.py --reuse         # time again on the data set built last time
    python bench/console_pages.py --agents 1000 --memories 100000 --runs 10   # a smaller rehearsal

It builds a dedicated database (`memconsole_bench` on 127.0.0.1:5432 by default) with the Alembic
revisions (as production does), then seeds it in bulk SQL on the server: agents; memories spread over
the agents, interleaved as they would arrive in life (about 100 each, plus one "whale" agent holding
1% of them), 70% core, some constitutional, 5% soft-deleted; one audit record per memory with a full
snapshot and its text in `audit_contents` (plus a delete record for each deleted one); three refinement
sessions per agent with audited operations; Mechanic's grants with views; and 25 failed jobs in Redis.
Seeding bypasses the mutation path on purpose: it writes what the mutation path would have written,
a million times faster.

Then it signs in with the Flask test client and times each page (full render, every query, the
template) `--runs` times after a warm-up, and prints median and p95 per page against the 100 ms target.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402
import sqlalchemy as sa  # noqa: E402

TARGET_MS = 100.0
ROLES = ("supervisor", "planner", "stylist", "researcher", "executor")


def _dsn(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://")


def create_database(admin_url: str, name: str) -> str:
    engine = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    engine.dispose()
    return admin_url.rsplit("/", 1)[0] + "/" + name


def migrate(app) -> None:
    from flask_migrate import upgrade

    with app.app_context():
        upgrade()


SNAPSHOT = """json_build_object(
    'id', m.id, 'agent_id', m.agent_id, 'memory_type', m.memory_type, 'content_hash', m.content_hash,
    'token_estimate', m.token_estimate, 'tags', m.tags, 'category', m.category, 'importance', m.importance,
    'pinned', m.pinned, 'constitutional', m.constitutional,
    'created_at', to_char(m.created_at, 'YYYY-MM-DD"T"HH24:MI:SS.US'),
    'updated_at', to_char(m.updated_at, 'YYYY-MM-DD"T"HH24:MI:SS.US'),
    'last_accessed_at', NULL, 'deleted_at', {deleted}, 'purge_at', NULL,
    'user_id', NULL, 'thread_id', NULL, 'run_id', NULL, 'actor_id', NULL, 'role', NULL,
    'content_ref', c.id)"""


def seed(dsn: str, agents: int, memories: int) -> None:
    """Bulk SQL on the server: what the mutation path would have written, for a million memories."""
    whale = max(memories // 100, 1)
    deleted_snapshot = SNAPSHOT.format(deleted="""to_char(m.deleted_at, 'YYYY-MM-DD"T"HH24:MI:SS.US')""")
    steps = [
        (
            "agents",
            f"""INSERT INTO agents (id, name, role, model_id, core_token_budget, min_retention, mechanic_preconsent,
                                  active, created_at, last_refinement_at)
                SELECT i, 'agent-' || lpad(i::text, 5, '0'), (ARRAY{list(ROLES)})[1 + i % 5], NULL,
                       1500 + (i % 9) * 500, 0.8, i % 10 = 0, true, now() - interval '400 days',
                       CASE WHEN i % 3 = 0 THEN NULL ELSE now() - ((i % 20) || ' days')::interval END
                FROM generate_series(1, {agents}) i""",
        ),
        (
            "agents sequence",
            "SELECT setval(pg_get_serial_sequence('agents', 'id'), (SELECT max(id) FROM agents))",
        ),
        (
            "memories",
            f"""INSERT INTO agent_memories (id, agent_id, memory_type, content, content_hash, token_estimate, tags,
                                          category, importance, pinned, constitutional, created_at, updated_at,
                                          deleted_at)
                SELECT j, agent_id, memory_type, content, encode(sha256(convert_to(lower(btrim(content)), 'UTF8')), 'hex'),
                       ceil(length(content) / 4.0)::int, tags, NULL, NULL, false, j % 50 = 0, created_at, created_at,
                       CASE WHEN j % 20 = 7 THEN created_at + interval '1 day' END
                FROM (
                  SELECT j,
                         CASE WHEN j <= {whale} THEN 1 ELSE 1 + (j::bigint * 7919) % {agents} END AS agent_id,
                         CASE WHEN j % 100 < 70 THEN 'core' WHEN j % 100 < 85 THEN 'journal'
                              WHEN j % 100 < 90 THEN 'semantic' WHEN j % 100 < 95 THEN 'episodic'
                              WHEN j % 100 < 98 THEN 'insight' ELSE 'procedural' END AS memory_type,
                         'Memory ' || j || ': ' || repeat(md5(j::text) || ' ', 1 + j % 5) AS content,
                         CASE WHEN j % 4 = 0 THEN '["preference"]'::json ELSE '[]'::json END AS tags,
                         now() - interval '400 days' + (j::float / {memories}) * interval '399 days' AS created_at
                  FROM generate_series(1, {memories}) j
                ) s""",
        ),
        (
            "memories sequence",
            "SELECT setval(pg_get_serial_sequence('agent_memories', 'id'), (SELECT max(id) FROM agent_memories))",
        ),
        (
            "audit contents",
            """INSERT INTO audit_contents (id, memory_id, sha256, content, token_estimate)
               SELECT id, id, encode(sha256(convert_to(content, 'UTF8')), 'hex'), content, token_estimate
               FROM agent_memories""",
        ),
        (
            "audit contents sequence",
            "SELECT setval(pg_get_serial_sequence('audit_contents', 'id'), (SELECT max(id) FROM audit_contents))",
        ),
        (
            "audit: creates",
            f"""INSERT INTO audit_logs (agent_id, memory_id, session_id, op_id, actor, action, before, after, data, created_at)
                SELECT m.agent_id, m.id, NULL, gen_random_uuid()::text, 'system:import', 'import', 'null'::json,
                       {SNAPSHOT.format(deleted="NULL")}, '{{}}'::json, m.created_at
                FROM agent_memories m JOIN audit_contents c ON c.id = m.id
                ORDER BY m.created_at, m.id""",
        ),
        (
            "audit: deletes",
            f"""INSERT INTO audit_logs (agent_id, memory_id, session_id, op_id, actor, action, before, after, data, created_at)
                SELECT m.agent_id, m.id, NULL, gen_random_uuid()::text, 'agent', 'delete',
                       {SNAPSHOT.format(deleted="NULL")},
                       {deleted_snapshot},
                       '{{}}'::json, m.deleted_at
                FROM agent_memories m JOIN audit_contents c ON c.id = m.id
                WHERE m.deleted_at IS NOT NULL ORDER BY m.deleted_at, m.id""",
        ),
        (
            "sessions",
            f"""INSERT INTO refinement_sessions (agent_id, trigger, status, phase, started_at, finished_at, tokens_before,
                    tokens_after, count_before, count_after, ops_count, stats, model, llm_turns, prompt_tokens,
                    completion_tokens, cached_tokens)
                SELECT a, 'schedule', (ARRAY['completed','completed','consent_declined','terminated','skipped'])[1 + (a + k) % 5],
                       NULL, now() - ((k * 7 + a % 5) || ' days')::interval,
                       now() - ((k * 7 + a % 5) || ' days')::interval + interval '40 seconds',
                       4000 + a % 1000, 3900 + a % 1000, 70, 68, 2, '{{"consolidate": 2}}'::json, 'offline', 3, 12000, 400, 9000
                FROM generate_series(1, {agents}) a, generate_series(1, 3) k""",
        ),
        (
            "audit: session operations",
            f"""INSERT INTO audit_logs (agent_id, memory_id, session_id, op_id, actor, action, before, after, data, created_at)
                SELECT m.agent_id, m.id, s.id, gen_random_uuid()::text, 'agent', 'update',
                       {SNAPSHOT.format(deleted="NULL")}, {SNAPSHOT.format(deleted="NULL")},
                       '{{"fields": ["importance"]}}'::json, s.started_at + interval '10 seconds'
                FROM refinement_sessions s
                JOIN LATERAL (SELECT * FROM agent_memories x WHERE x.agent_id = s.agent_id AND x.deleted_at IS NULL
                              ORDER BY x.id LIMIT 2) m ON true
                JOIN audit_contents c ON c.id = m.id""",
        ),
        ("analyze", "ANALYZE"),
    ]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pgcrypto")  # gen_random_uuid on PostgreSQL < 13
        for label, sql in steps:
            started = time.perf_counter()
            conn.execute(sql)
            print(f"  seeded {label:<26} {time.perf_counter() - started:7.1f} s", flush=True)
        conn.execute("VACUUM (ANALYZE) agent_memories")
        conn.execute("VACUUM (ANALYZE) audit_logs")


def seed_console_state(app, admin_email: str, password: str) -> dict:
    """An admin, a live Mechanic's grant on the whale agent, and failed jobs in Redis."""
    from rq import SimpleWorker

    from models import User, create_admin, db
    from models.admins.mechanic import decide_grant, request_grant

    with app.app_context():
        admin = db.session.scalar(sa.select(User).where(User.email == admin_email)) or create_admin(
            admin_email, password
        )
        grant = request_grant(
            1, admin.id, "Benchmark: the mechanic's view on the largest agent", "all", [], 60
        )
        decide_grant(grant.id, True, decided_by="pre-consent")
        rq = app.extensions["rq"]
        rq.connection.flushdb()
        from jobs.refinement import run_refinement

        for n in range(25):  # sessions for agents that do not exist: each job fails with LookupError
            rq.enqueue(run_refinement, 10**9 + n, queue=("default", "llm", "maintenance")[n % 3])
        SimpleWorker(rq.queues, connection=rq.connection).work(burst=True)
        session_id = db.session.scalar(sa.text("SELECT max(id) FROM refinement_sessions WHERE agent_id = 1"))
        agents = db.session.scalar(sa.text("SELECT count(*) FROM agents"))
        return {"grant_id": grant.id, "session_id": session_id, "agents": agents}


def time_pages(app, email: str, password: str, state: dict, runs: int) -> list[dict]:
    import re

    client = app.test_client()
    page = client.get("/login").text
    token = re.search(r'name="csrf-token" content="([^"]+)"', page).group(1)
    response = client.post("/login", data={"email": email, "password": password, "csrf_token": token})
    assert response.status_code == 302, "sign-in failed"
    last_page = max(1, -(-state["agents"] // 50))
    mid = max(1, state["agents"] // 2)
    pages = [
        ("dashboard, page 1", "/", {}),
        (f"dashboard, page {last_page} (last)", f"/?page={last_page}", {}),
        ("dashboard, search 'agent-0999'", "/?q=agent-0999", {}),
        ("dashboard, search '77' (htmx)", "/?q=77", {"HX-Request": "true"}),
        (f"agent page (agent {mid})", f"/agents/{mid}", {}),
        ("agent page (whale, agent 1)", "/agents/1", {}),
        (f"memories (agent {mid})", f"/agents/{mid}/memories", {}),
        ("memories (whale, page 50)", "/agents/1/memories?page=50", {}),
        (f"audit timeline (agent {mid})", f"/agents/{mid}/audit", {}),
        ("audit timeline (whale, under a grant)", "/agents/1/audit", {}),
        ("session page", f"/sessions/{state['session_id']}", {}),
        ("rollback confirm (session)", f"/rollback/session/{state['session_id']}", {"HX-Request": "true"}),
        ("refinement progress widget", f"/sessions/{state['session_id']}/progress", {"HX-Request": "true"}),
        ("mechanic's exception (whale)", "/agents/1/mechanic", {}),
        ("mechanic's view (whale, scope all)", f"/mechanic/grants/{state['grant_id']}", {}),
        ("jobs page", "/jobs", {}),
        ("dashboard, sorted by usage", "/?sort=usage&dir=desc", {}),
        ("dashboard, over budget by overage", "/?sort=overage&dir=desc&over=1", {}),
        ("dashboard, never refined", "/?never=1", {}),
        ("memories (whale, by tokens)", "/agents/1/memories?sort=tokens&dir=desc", {}),
        ("memories (whale, search a tag)", "/agents/1/memories?q=project", {}),
        ("audit timeline (whale, one action)", "/agents/1/audit?action=update", {}),
        ("activity feed", "/activity", {}),
        ("activity feed, admin actions", "/activity?actor=admin", {}),
    ]
    results = []
    for label, url, headers in pages:
        results.append(_time(client, label, url, headers, runs))
    results.extend(cold_first_views(app, client, last_page, runs))
    return results


def _report(label: str, url: str, samples: list[float]) -> dict:
    samples = sorted(samples)
    p95 = samples[min(len(samples) - 1, max(0, round(0.95 * len(samples)) - 1))]
    median = statistics.median(samples)
    print(f"  {label:<42} median {median:6.1f} ms   p95 {p95:6.1f} ms", flush=True)
    return {"page": label, "url": url, "median_ms": median, "p95_ms": p95, "runs": len(samples)}


def _time(client, label: str, url: str, headers: dict, runs: int) -> dict:
    for _ in range(2):  # warm-up
        assert client.get(url, headers=headers).status_code == 200, url
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        response = client.get(url, headers=headers)
        samples.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, url
    return _report(label, url, samples)


def cold_first_views(app, client, last_page: int, runs: int) -> list[dict]:
    """First views, with the sparkline cache emptied: dashboard pages and agent pages nobody has opened.

    A dashboard page renders at once with the sparklines it has cached; the others arrive after the
    page, ten agents a request (timed separately, each), and are cached from then on.
    """
    import re

    from console.agents.history_cache import PREFIX

    with app.app_context():
        connection = app.extensions["rq"].connection
        for key in connection.scan_iter(f"{PREFIX}:*", count=1000):
            connection.delete(key)
    dashboards, sparklines, agents = [], [], []
    for number in range(10, min(last_page, 10 + runs)):
        started = time.perf_counter()
        response = client.get(f"/?page={number}")
        dashboards.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200
        for loader in re.findall(r'hx-get="(/agents/sparklines[^"]+)"', response.text):
            started = time.perf_counter()
            assert client.get(loader.replace("&amp;", "&"), headers={"HX-Request": "true"}).status_code == 200
            sparklines.append((time.perf_counter() - started) * 1000)
    for agent_id in range(3001, 3001 + runs):
        started = time.perf_counter()
        assert client.get(f"/agents/{agent_id}").status_code == 200
        agents.append((time.perf_counter() - started) * 1000)
    return [
        _report("dashboard, first view (cold cache)", "/?page=N", dashboards),
        _report("  then its sparklines, 10 agents a request", "/agents/sparklines?ids=...", sparklines),
        _report("agent page, first view (cold cache)", "/agents/N", agents),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=10_000)
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--reuse", action="store_true", help="time the data set built last time")
    parser.add_argument(
        "--admin-url",
        default=os.environ.get(
            "BENCH_POSTGRES_ADMIN_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
        ),
    )
    parser.add_argument("--database", default="memconsole_bench")
    parser.add_argument("--redis", default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13"))
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    from console import create_app

    url = args.admin_url.rsplit("/", 1)[0] + "/" + args.database
    if not args.reuse:
        print(f"building {args.database}: {args.agents:,} agents, {args.memories:,} memories", flush=True)
        started = time.perf_counter()
        url = create_database(args.admin_url, args.database)
        app = create_app({"DATABASE_URL": url, "REDIS_URL": args.redis, "SECRET_KEY": uuid.uuid4().hex})
        migrate(app)
        seed(_dsn(url), args.agents, args.memories)
        print(f"  built in {time.perf_counter() - started:.0f} s", flush=True)
    app = create_app({"DATABASE_URL": url, "REDIS_URL": args.redis, "SECRET_KEY": uuid.uuid4().hex})
    email, password = "bench@example.com", "benchmark-password"
    state = seed_console_state(app, email, password)
    with app.app_context():
        from models import db

        counts = {
            t: db.session.scalar(sa.text(f"SELECT count(*) FROM {t}"))
            for t in ("agents", "agent_memories", "audit_logs", "refinement_sessions")
        }
    print("data set: " + ", ".join(f"{n:,} {t}" for t, n in counts.items()), flush=True)
    print(
        f"timing {args.runs} runs per page (Flask test client, signed in; target {TARGET_MS:.0f} ms):",
        flush=True,
    )
    results = time_pages(app, email, password, state, args.runs)
    worst = max(r["p95_ms"] for r in results)
    verdict = "all pages within" if worst <= TARGET_MS else "SOME PAGES OVER"
    print(f"{verdict} {TARGET_MS:.0f} ms at p95 (worst p95 {worst:.1f} ms)")
    if args.json:
        Path(args.json).write_text(json.dumps({"counts": counts, "results": results}, indent=2))
    return 0 if worst <= TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
