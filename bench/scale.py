"""History at scale on PostgreSQL: the same operations at two sizes, so the growth is visible.

    .venv/bin/python -m bench.scale --agents 10000 --memories 1000000 --audit 10000000 --label 1M --jobs 2
    .venv/bin/python -m bench.scale --agents 100000 --memories 10000000 --audit 100000000 --label 100M --jobs 2
    .venv/bin/python -m bench.scale --section bench/results/scale.section.md   # render from the JSON files

The 100M size needs about 156 GB uncompressed; scripts/scale_cluster.sh makes a PostgreSQL cluster on a
zstd-compressed btrfs loop file (port 5434; point BENCH_POSTGRES_ADMIN_URL at it), where it took 25 GB (167 GB of files).
Compare sizes on the same cluster: the JSON records the server's version, shared_buffers and filesystem.

Each run re-creates the database `memconsole_bench_scale` (never another), upgrades it with the Alembic
revisions, and seeds it on the server in set-based SQL (the benchmark database only; what the mutation
path would have written, without going through it):

- AGENTS agents, a quarter of them with a core-token budget their memories exceed;
- MEMORIES memories spread over them (70 % core), one agent in 1,000 a "whale" holding ten times its share;
- seeded on --jobs connections at once (chunks of disjoint ids; each audit round's records have ids
  round x MEMORIES + memory id, so ids follow time whichever connection writes them);
- AUDIT audit records: each memory's import record, then AUDIT / MEMORIES - 1 rounds of audited updates
  (importance changes, full before/after snapshots chained record to record), spread evenly over the
  last 13 months in time order, so ids follow time as they do in life and, where the history tables are
  partitioned by month, every month's partition holds its share.

Then, through the product's own code (nothing bypassed), it times after a warm-up:

- session rollback (10 operations) and point-in-time restore (10,000 records after the point): bench.core's
  measurement, on an agent of its own made during the run;
- the over-budget scan (`over_budget_due`) over all the agents;
- the console's audit timeline of an ordinary agent and of a whale, newest page and the same whale's
  timeline limited to one week, and the console-wide activity feed (Flask test client, signed in);
- memory.query (`query.search`) for 8-20-word questions, lexical, for an agent holding 100,000 memories
  (bench.nl_latency's corpus), among everything above.

`--reuse --query-only FILE` times memory.query alone on the kept database (after upgrading it), for
comparing retrieval changes on the same data; it writes FILE, never the results directory, and keeps
the database.

Figures are median and p95 over --runs runs (rollbacks: fewer, each restore writes 10,000 records first).
Writes bench/results/scale_<label>.json; --section renders every scale_*.json into one table. Loopback
only, bounded sizes, stops by itself; the database is dropped at the end unless --keep.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import sqlalchemy as sa  # noqa: E402

from bench.core import row, timed  # noqa: E402

DB_NAME = "memconsole_bench_scale"
RESULTS = ROOT / "bench" / "results"
PG_ADMIN_URL = os.environ.get(
    "BENCH_POSTGRES_ADMIN_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
SPAN_DAYS = 395  # 13 months of history
CHUNK = 500_000  # memories per seeding statement
QUERY_AGENT_MEMORIES = 100_000
WORDS = (
    "budget report meeting client garden recipe travel visa invoice schedule piano lesson doctor insurance "
    "apartment lease project deadline holiday flight hotel course exam library bicycle repair dentist sister "
    "birthday present concert ticket training plan running shoes coffee allergy vegetarian"
).split()

SNAPSHOT = """json_build_object(
    'id', m.id, 'agent_id', m.agent_id, 'memory_type', m.memory_type, 'content_hash', m.content_hash,
    'token_estimate', m.token_estimate, 'tags', m.tags, 'category', m.category, 'importance', {importance},
    'pinned', m.pinned, 'constitutional', m.constitutional,
    'created_at', to_char(m.created_at, 'YYYY-MM-DD"T"HH24:MI:SS.US'),
    'updated_at', to_char({updated}, 'YYYY-MM-DD"T"HH24:MI:SS.US'),
    'last_accessed_at', NULL, 'deleted_at', NULL, 'purge_at', NULL,
    'user_id', NULL, 'thread_id', NULL, 'run_id', NULL, 'actor_id', NULL, 'role', NULL,
    'content_ref', m.id)"""


def _seed_statements(agents: int, memories: int, rounds: int) -> list[tuple[str, str, dict, bool]]:
    """(label, SQL, parameters, parallel) in order; consecutive parallel steps may run at once. Round r of
    memory j happens at t0 + (r * MEMORIES + j) / (ROUNDS * MEMORIES) of the span and its audit record's
    id is r * MEMORIES + j: ids follow time whichever connection writes the round."""
    words = "ARRAY[" + ",".join(f"'{w}'" for w in WORDS) + "]"
    n = len(WORDS)
    whales = max(1, agents // 1000)
    owner = f"""CASE WHEN j % 100 < 1 THEN 1 + (j / 100) % {whales}
                     ELSE 1 + (j::bigint * 7919) % {agents} END"""
    moment = f"(now() - interval '{SPAN_DAYS} days') + ((:round * {memories}::float8 + {{j}}) / ({rounds} * {memories}::float8)) * interval '{SPAN_DAYS} days'"
    steps: list[tuple[str, str, dict, bool]] = [
        (
            "agents",
            f"""INSERT INTO agents (id, name, role, core_token_budget, min_retention, mechanic_preconsent, active,
                                   created_at)
                SELECT i, 'agent-' || lpad(i::text, 6, '0'), 'supervisor',
                       CASE WHEN i % 4 = 0 THEN 200 ELSE 1000000 END, 0.8, false, true,
                       now() - interval '{SPAN_DAYS + 1} days'
                FROM generate_series(1, {agents}) i""",
            {},
            False,
        ),
        (
            "agents sequence",
            "SELECT setval(pg_get_serial_sequence('agents', 'id'), (SELECT max(id) FROM agents))",
            {},
            False,
        ),
    ]
    for first in range(1, memories + 1, CHUNK):
        last = min(first + CHUNK - 1, memories)
        steps.append(
            (
                f"memories {last:,}",
                f"""INSERT INTO agent_memories (id, agent_id, memory_type, content, content_hash, token_estimate,
                                               tags, importance, pinned, constitutional, created_at, updated_at)
                    SELECT j, {owner}, CASE WHEN j % 10 < 7 THEN 'core' ELSE 'semantic' END, content,
                           encode(sha256(convert_to(lower(btrim(content)), 'UTF8')), 'hex'),
                           ceil(length(content) / 4.0)::int, '[]'::json, 1 + (j + {rounds - 1}) % 5, false,
                           j % 50 = 0, {moment.format(j="j").replace(":round", "0")},
                           {moment.format(j="j").replace(":round", str(rounds - 1))}
                    FROM (SELECT j, 'The user mentioned the ' || ({words})[1 + j % {n}] || ' and the '
                                 || ({words})[1 + (j / {n}) % {n}] || ' on day ' || (j % 365)
                                 || ', note ' || j AS content
                          FROM generate_series(:first, :last) j) s""",
                {"first": first, "last": last},
                True,
            )
        )
    steps += [
        (
            "memories sequence",
            "SELECT setval(pg_get_serial_sequence('agent_memories', 'id'), (SELECT max(id) FROM agent_memories))",
            {},
            False,
        ),
        (
            "audit contents",
            """INSERT INTO audit_contents (id, memory_id, sha256, content, token_estimate)
               SELECT id, id, encode(sha256(convert_to(content, 'UTF8')), 'hex'), content, token_estimate
               FROM agent_memories ORDER BY id""",
            {},
            False,
        ),
        (
            "audit contents sequence",
            "SELECT setval(pg_get_serial_sequence('audit_contents', 'id'), (SELECT max(id) FROM audit_contents))",
            {},
            False,
        ),
    ]
    importance = "1 + (m.id + {r}) % 5"
    for r in range(rounds):
        for first in range(1, memories + 1, CHUNK):
            last = min(first + CHUNK - 1, memories)
            at = moment.format(j="m.id")
            if r == 0:
                action, before = "import", "'null'::json"
                actor = "'system:import'"
            else:
                action = "update"
                actor = "'agent'"
                before = SNAPSHOT.format(
                    importance=importance.format(r=r - 1),
                    updated=moment.format(j="m.id").replace(":round", str(r - 1)),
                )
            after = SNAPSHOT.format(importance=importance.format(r=r), updated=at.replace(":round", str(r)))
            steps.append(
                (
                    f"audit round {r + 1}/{rounds}, {last:,}",
                    f"""INSERT INTO audit_logs (id, agent_id, memory_id, session_id, op_id, actor, action, before,
                                               after, data, created_at)
                        SELECT {r * memories} + m.id, m.agent_id, m.id, NULL, md5(m.id || ':' || :round)::uuid::text, {actor}, '{action}',
                               {before}, {after}, '{{"fields": ["importance"]}}'::json, {at}
                        FROM agent_memories m WHERE m.id BETWEEN :first AND :last ORDER BY m.id""",
                    {"first": first, "last": last, "round": r},
                    True,
                )
            )
    steps.append(
        (
            "audit sequence",
            "SELECT setval(pg_get_serial_sequence('audit_logs', 'id'), (SELECT max(id) FROM audit_logs))",
            {},
            False,
        )
    )
    return steps


def _run_steps(engine, steps: list[tuple[str, str, dict, bool]], jobs: int) -> None:
    """Each step in its own autocommitted statement; a run of parallel steps on `jobs` connections at once
    (the chunks write disjoint ids and, for audit rounds, different months)."""
    from concurrent.futures import ThreadPoolExecutor
    from itertools import groupby

    def run(step: tuple[str, str, dict, bool]) -> None:
        label, sql, params, _ = step
        t = time.perf_counter()
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(sa.text(sql), params)
        print(f"  {label:<36} {time.perf_counter() - t:7.1f} s", flush=True)

    for parallel, batch in groupby(steps, key=lambda step: step[3]):
        with ThreadPoolExecutor(max_workers=jobs if parallel else 1) as pool:
            list(pool.map(run, batch))  # list(): re-raise the first failure


def build(app, agents: int, memories: int, audit: int, jobs: int = 1) -> dict:
    from models import db

    rounds = max(1, audit // memories)
    started = time.perf_counter()
    with app.app_context():
        prepare_partitions(db.engine)
        _run_steps(db.engine, _seed_statements(agents, memories, rounds), jobs)
        with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            t = time.perf_counter()
            conn.execute(sa.text("VACUUM (ANALYZE)"))
            print(f"  {'vacuum analyze':<36} {time.perf_counter() - t:7.1f} s", flush=True)
            sizes = {
                # A partitioned table's parent holds nothing, its partitions do (pg_partition_tree); a plain
                # table has no tree.
                name: conn.execute(
                    sa.text(
                        f"SELECT coalesce((SELECT sum(pg_total_relation_size(relid))::bigint "
                        f"FROM pg_partition_tree('{name}') WHERE relid <> '{name}'::regclass), "
                        f"pg_total_relation_size('{name}'))"
                    )
                ).scalar_one()
                for name in ("agent_memories", "audit_logs", "audit_contents")
            }
            sizes["database"] = conn.execute(
                sa.text("SELECT pg_database_size(current_database())")
            ).scalar_one()
            records = conn.execute(sa.text("SELECT count(*) FROM audit_logs")).scalar_one()
    return {"seed_seconds": round(time.perf_counter() - started), "rounds": rounds, "audit_records": records,
            "bytes": sizes}  # fmt: skip


def server_facts(conn) -> dict:
    """What the figures depend on besides the data: the server's version and memory, and the filesystem its
    data directory is on (read where it lies: the server is on loopback)."""
    import subprocess

    facts = {
        name: conn.execute(sa.text(f"SHOW {name}")).scalar_one()
        for name in ("server_version", "shared_buffers", "data_directory")
    }
    found = subprocess.run(
        ["findmnt", "-n", "-o", "FSTYPE,OPTIONS", "--target", facts["data_directory"]],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    fstype, _, options = found.stdout.strip().partition(" ")
    compression = [o for o in options.split(",") if o.startswith("compress")]
    facts["filesystem"] = " ".join([fstype or "unknown", *compression])
    return facts


def prepare_partitions(engine) -> None:
    """Where the history tables are partitioned by month, create the partitions of the seeded months."""
    with engine.connect() as conn:
        partitioned = conn.execute(
            sa.text("SELECT count(*) FROM pg_partitioned_table WHERE partrelid = 'audit_logs'::regclass")
        ).scalar_one()
    if partitioned:
        from datetime import date, timedelta

        from models.history import partitions

        first = date.today() - timedelta(days=SPAN_DAYS + 31)
        with engine.begin() as conn:
            report = partitions.ensure_partitions(conn, first, ahead=SPAN_DAYS // 30 + 3)
        print(f"  partitions: {len(report.created)} created", flush=True)


def measure_query(runs: int) -> dict:
    """memory.query for the agent of QUERY_AGENT_MEMORIES memories (seeded on the first run), lexical,
    8-20-word questions: a warm-up of 30, then runs x 5 timed (inside an app context)."""
    from bench.api_load import CATEGORIES, Corpus
    from bench.nl_latency import questions, seed_rows
    from models import Agent, db
    from models.retrieval import query

    corpus = Corpus(7)
    agent = db.session.scalar(sa.select(Agent).where(Agent.name == "scale-query"))
    if agent is None:  # a --reuse run asks the agent its first run seeded
        print(f"  memory.query agent: seeding {QUERY_AGENT_MEMORIES:,} memories", flush=True)
        agent = Agent(name="scale-query", role="supervisor")
        db.session.add(agent)
        db.session.commit()
        seed_rows(db.engine, agent.id, QUERY_AGENT_MEMORIES, corpus, vectors=False)
        with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(sa.text("ANALYZE agent_memories"))
    asked = questions(corpus, 30 + runs * 5)
    agent_id = agent.id  # read once: after each rollback the row would be loaded again

    def ask(question: str) -> float:
        t = timed(lambda: query.search(agent_id, text=question, categories=CATEGORIES, filters=None, top_k=5))
        db.session.rollback()
        return t

    for q in asked[:30]:
        ask(q)
    return row("memory.query, 8-20-word question, lexical", f"{QUERY_AGENT_MEMORIES:,} memories in the agent",
               [ask(q) for q in asked[30:]])  # fmt: skip


def measure(app, agents: int, runs: int) -> list[dict]:
    from bench.core import bench_rollbacks
    from models import create_admin, db
    from models.refinement.due import over_budget_due

    rows: list[dict] = []
    with app.app_context():
        print("  rollbacks (each restore writes 10,000 records first)", flush=True)
        # bench.core makes an agent named "rollback"; a --reuse run finds its first run's: renamed aside.
        db.session.execute(sa.text("UPDATE agents SET name = 'rollback-' || id WHERE name = 'rollback'"))
        db.session.commit()
        rows.extend(bench_rollbacks(app, max(3, runs // 4)))
        over_budget_due(now=None)
        rows.append(row("over-budget scan", "every agent", [timed(lambda: over_budget_due(now=None)) for _ in range(runs)]))  # fmt: skip
        db.session.rollback()

        rows.append(measure_query(runs))
        if not db.session.scalar(sa.text("SELECT count(*) FROM users WHERE email = 'scale@example.com'")):
            create_admin("scale@example.com", "benchmark-password")
        whale = 1
        ordinary = db.session.scalar(sa.text("SELECT id FROM agents WHERE id > :w ORDER BY id LIMIT 1"), {"w": max(1, agents // 1000)})  # fmt: skip
        week = db.session.scalar(sa.text("SELECT max(created_at) - interval '7 days' FROM audit_logs WHERE agent_id = 1"))  # fmt: skip
    client = app.test_client()
    page = client.get("/login").text
    token = re.search(r'name="csrf-token" content="([^"]+)"', page).group(1)
    response = client.post("/login", data={"email": "scale@example.com", "password": "benchmark-password", "csrf_token": token})  # fmt: skip
    assert response.status_code == 302, "sign-in failed"
    pages = [
        ("audit timeline, ordinary agent", f"/agents/{ordinary}/audit"),
        ("audit timeline, whale", f"/agents/{whale}/audit"),
        ("audit timeline, whale, one week", f"/agents/{whale}/audit?since={week:%Y-%m-%dT%H:%M:%S}Z"),
        ("activity feed", "/activity"),
    ]
    for label, url in pages:
        for _ in range(2):
            assert client.get(url).status_code == 200, url
        samples = []
        for _ in range(runs):
            started = time.perf_counter()
            assert client.get(url).status_code == 200, url
            samples.append((time.perf_counter() - started) * 1000)
        rows.append(row(label, url, samples))
    return rows


def section(results: Path = RESULTS) -> str:
    runs = [json.loads(p.read_text()) for p in sorted(results.glob("scale_*.json"))]
    runs.sort(key=lambda r: r["audit_records"])
    if not runs:
        return ""
    head = " | ".join(f"{r['label']}: median / p95 ms" for r in runs)
    out = [
        "## History at scale (`python -m bench.scale`)",
        "",
        "The same operations, through the product's code, on databases seeded with "
        + "; ".join(
            f"**{r['label']}**: {r['agents']:,} agents, {r['memories']:,} memories, {r['audit_records']:,} audit "
            f"records ({r['bytes']['audit_logs'] / 2**30:.1f} GiB with indexes, "
            f"{r['bytes']['audit_logs'] / r['audit_records'] / 1000:.2f} kB a record; seeded in "
            f"{r['seed_seconds'] / 60:.0f} min)"
            for r in runs
        )
        + f". Partitioned by month: {', '.join('yes' if r['partitioned'] else 'no' for r in runs)}. Server: "
        + "; ".join(
            f"{r['label']}: PostgreSQL {s['server_version'].split()[0]}, shared_buffers {s['shared_buffers']}, "
            f"data on {s['filesystem']}, seeded on {r['jobs']} connection(s)"
            for r in runs
            if (s := r.get("server"))
        )
        + ". "
        "Taken on "
        + ", ".join(f"{r['taken']} (load average {r['load_average']} at the end)" for r in runs)
        + ".",
        "",
        f"| operation | on what | {head} |",
        "| --- | --- |" + " ---: |" * len(runs),
    ]
    for first in runs[0]["rows"]:
        name = first["name"]
        cells = []
        for r in runs:
            match = next((x for x in r["rows"] if x["name"] == name), None)
            cells.append(f"{match['median_ms']:.1f} / {match['p95_ms']:.1f}" if match else "—")
        sizes = dict.fromkeys(x["size"] for r in runs for x in r["rows"] if x["name"] == name)
        out.append(f"| {name} | {' / '.join(sizes)} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=10_000)
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--audit", type=int, default=10_000_000)
    parser.add_argument("--label", default="1M")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=1, help="connections seeding at once")
    parser.add_argument("--keep", action="store_true", help="keep the database")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="measure the kept database again (its build figures from the JSON)",
    )
    parser.add_argument(
        "--query-only",
        metavar="JSON",
        help="with --reuse: time memory.query alone (the agent of 100,000 memories) and write it here",
    )
    parser.add_argument(
        "--section", help="only render the section from bench/results/scale_*.json into this file"
    )
    args = parser.parse_args(argv)
    if args.section:
        Path(args.section).write_text(section(), encoding="utf-8")
        return 0
    if args.query_only:
        if not args.reuse:
            parser.error("--query-only measures a kept database: add --reuse")
        args.keep = True  # never drop what it only reads
    os.environ.setdefault("LLM_OFFLINE", "1")
    import tempfile

    from flask_migrate import upgrade

    from console import create_app

    admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        if not args.reuse:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)'))
            conn.execute(sa.text(f'CREATE DATABASE "{DB_NAME}"'))
        server = server_facts(conn)
    url = PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + DB_NAME
    app = create_app({"DATABASE_URL": url, "SECRET_KEY": uuid.uuid4().hex, "REDIS_URL": "embedded",
                      "EMBEDDED_REDIS_DIR": tempfile.mkdtemp(prefix="memconsole-scale-redis-"),
                      "RATELIMIT_ENABLED": False})  # fmt: skip
    try:
        with app.app_context():
            upgrade()
            from models import db

            partitioned = bool(
                db.session.scalar(sa.text("SELECT count(*) FROM pg_partitioned_table WHERE partrelid = 'audit_logs'::regclass"))
            )  # fmt: skip
        print(f"{'measuring' if args.reuse else 'building'} {DB_NAME}: {args.agents:,} agents, {args.memories:,} memories, {args.audit:,} audit records", flush=True)  # fmt: skip
        if args.query_only:
            with app.app_context():
                measured = measure_query(args.runs)
            print(
                f"  {measured['name']:<46} median {measured['median_ms']:8.1f}  p95 {measured['p95_ms']:8.1f} ms"
            )
            Path(args.query_only).write_text(json.dumps({"server": server, "runs": args.runs, "row": measured,
                                                         "load_average": round(os.getloadavg()[0], 1)}, indent=1))  # fmt: skip
            return 0
        if args.reuse:  # measure again what an earlier run of this label built and kept
            built = {k: v for k, v in json.loads((RESULTS / f"scale_{args.label}.json").read_text()).items()
                     if k in ("seed_seconds", "rounds", "audit_records", "bytes", "jobs")}  # fmt: skip
        else:
            built = build(app, args.agents, args.memories, args.audit, args.jobs)
        print(f"  built in {built['seed_seconds']} s; audit_logs {built['bytes']['audit_logs'] / 2**30:.1f} GiB", flush=True)  # fmt: skip
        rows = measure(app, args.agents, args.runs)
        with app.app_context():
            from models import db

            db.session.remove()
            db.engine.dispose()
    finally:
        if not args.keep:
            with admin.connect() as conn:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)'))
        admin.dispose()
    result = {"label": args.label, "agents": args.agents, "memories": args.memories, "partitioned": partitioned,
              "taken": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "load_average": round(os.getloadavg()[0], 1), "runs": args.runs, "jobs": args.jobs,
              "server": server, **built, "remeasured": args.reuse, "rows": rows}  # fmt: skip
    for r in rows:
        print(f"  {r['name']:<46} median {r['median_ms']:8.1f}  p95 {r['p95_ms']:8.1f} ms")
    (RESULTS / f"scale_{args.label}.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
