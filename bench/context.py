"""GET /api/v1/context over HTTP at 100, 1,000 and 5,000 core memories, beside memory.query in the same run.

    .venv/bin/python -m bench.context [--sizes 100,1000,5000] [--requests 200] [--quick] [--embeddings local]

1. Creates a scratch PostgreSQL database (never the app's), upgraded with the Alembic revisions; per size
   one agent whose memories are COPYed in (benchmark database only: no audit records): that many core
   memories, 20 journals of the past week, and 5,000 semantic memories, so memory.query searches a
   realistic table, not the block's rows alone. The database's triggers keep the agent's core totals.
2. Serves it with two `gunicorn -w 2 -k gthread --threads 4` on 127.0.0.1 — one keeping no rendered
   block (CONTEXT_CACHE_MB=0), one with the default cache — and, per size, sends `--requests` of each
   call, interleaved so the machine's noise falls on all alike: the full block as JSON and as text,
   read and rendered every time (the first server); the JSON block after one core memory changed (an
   UPDATE of its text, untimed, before each such request, sent with the previous ETag as an agent
   revalidating would: the second server reads that memory's text and joins the kept fragments of the
   others); the JSON block answered from the kept rendering (the second); the 304 path (If-None-Match with the current ETag); one memory.query (top 5, a
   three-word question of the corpus).
3. Reports p50 and p95 per call and size (ms, client side: request sent to body read), writes --json and
   a Markdown --section (rendered into bench/results/report.md by `python -m bench`), stops gunicorn and drops
   the database.

The goals (docs/benchmarks.md, "The context block"): the full block at 1,000 core memories no slower than one
memory.query; the 304 path under a third of it.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import platform
import random
import signal
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

from bench.api_load import CATEGORIES, Corpus

# The semantic memories memory.query searches are of retrieved (`context: rag`) categories: a `context: all`
# category (the shipped `profile`) joins the block whole, and the goal is set on the core memories' block.
RETRIEVED = [c for c in CATEGORIES if c != "profile"]

ROOT = Path(__file__).resolve().parent.parent
ADMIN_URL = os.environ.get("BENCH_POSTGRES_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
DB = "memconsole_bench_context"
SEMANTIC = 5000
JOURNALS = 20
CALLS = ("json rendered", "text rendered", "json after a change", "json kept", "context 304", "memory.query")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def db_url() -> str:
    return ADMIN_URL.rsplit("/", 1)[0] + "/" + DB


def recreate(drop_only: bool = False) -> None:
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB}" WITH (FORCE)')
        if not drop_only:
            conn.execute(f'CREATE DATABASE "{DB}"')


def agents(sizes: list[int], redis_url: str) -> dict[int, str]:
    """One agent per size, each with its token."""
    from flask_migrate import upgrade

    from console import create_app
    from models import Agent, db

    app = create_app({"DATABASE_URL": db_url(), "SECRET_KEY": "bench", "REDIS_URL": redis_url})
    tokens = {}
    with app.app_context():
        upgrade(revision="heads")
        for size in sizes:
            agent = Agent(name=f"bench-context-{size}", role="supervisor", core_token_budget=1_000_000)
            tokens[size] = agent.issue_token()
            db.session.add(agent)
        db.session.commit()
        db.engine.dispose()
    return tokens


def seed(agent_name: str, core: int, corpus: Corpus, rng: random.Random) -> None:
    now = datetime.now(UTC).replace(tzinfo=None)
    with psycopg.connect(db_url()) as conn, conn.cursor() as cur:
        agent_id = conn.execute("SELECT id FROM agents WHERE name = %s", (agent_name,)).fetchone()[0]
        columns = ("agent_id, memory_type, content, content_hash, token_estimate, tags, category, importance, "
                   "pinned, constitutional, created_at, updated_at")  # fmt: skip
        with cur.copy(f"COPY agent_memories ({columns}) FROM STDIN") as copy:
            kinds = [("core", core, 400), ("journal", JOURNALS, 6), ("semantic", SEMANTIC, 400)]
            for kind, count, days in kinds:
                for _ in range(count):
                    content = corpus.sentence(rng) + " " + corpus.sentence(rng)
                    created = now - timedelta(seconds=rng.randint(0, days * 86400))
                    category = None if kind != "semantic" else rng.choice(RETRIEVED)
                    copy.write_row((
                        agent_id, kind, content, hashlib.sha256(content.lower().encode()).hexdigest(),
                        -(-len(content) // 4), "[]", category, rng.randint(1, 5), False,
                        kind == "core" and rng.random() < 0.02, created, created,
                    ))  # fmt: skip
        conn.commit()
        conn.execute("ANALYZE agent_memories")


def start_gunicorn(redis_url: str, cache_mb: str, embeddings: str = "hashed") -> tuple[subprocess.Popen, int]:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    env = dict(os.environ, DATABASE_URL=db_url(), SECRET_KEY="bench", REDIS_URL=redis_url,
               API_RATE_LIMIT="1000000/minute", EMBEDDINGS=embeddings, CONTEXT_CACHE_MB=cache_mb)  # fmt: skip
    gunicorn = Path(sys.executable).with_name("gunicorn")
    cmd = [str(gunicorn), "-w", "2", "-k", "gthread", "--threads", "4", "--preload",
           "-b", f"fd://{listener.fileno()}", "--log-level", "warning", "--timeout", "300", "--keep-alive", "300", "wsgi:app"]  # fmt: skip
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


def timed(conn: http.client.HTTPConnection, method: str, path: str, headers: dict, body=None):
    started = time.perf_counter()
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    data = response.read()
    return (time.perf_counter() - started) * 1000, response.status, response.getheader("ETag"), data


def measure(ports: dict[str, int], token: str, requests: int, corpus: Corpus, rng: random.Random) -> dict:
    """`ports`: "fresh", a server keeping no rendering (CONTEXT_CACHE_MB=0: every block read and rendered),
    and "kept", one with the default cache (an unchanged block answered from the process's copy)."""
    fresh = http.client.HTTPConnection("127.0.0.1", ports["fresh"], timeout=60)
    kept = http.client.HTTPConnection("127.0.0.1", ports["kept"], timeout=60)
    auth = {"Authorization": f"Bearer {token}"}
    times: dict[str, list[float]] = {call: [] for call in CALLS}
    _, status, etag, body = timed(kept, "GET", "/api/v1/context", auth)
    assert status == 200 and etag, status
    sizes = {"json_bytes": len(body)}
    questions = [corpus.query(rng) for _ in range(requests)]
    from models.agents.agent import hash_token

    with psycopg.connect(db_url()) as conn:  # the core memories one of which changes before each such call
        core_ids = [row[0] for row in conn.execute(
            "SELECT m.id FROM agent_memories m JOIN agents a ON a.id = m.agent_id "
            "WHERE a.api_token_hash = %s AND m.memory_type = 'core' AND NOT m.constitutional", (hash_token(token),))]  # fmt: skip
    writer = psycopg.connect(db_url(), autocommit=True)
    last_etag = {"json after a change": etag}
    calls = {
        "json rendered": (fresh, "GET", "/api/v1/context", auth, None, 200),
        "json after a change": (kept, "GET", "/api/v1/context", auth, None, 200),
        "text rendered": (fresh, "GET", "/api/v1/context?format=text", auth, None, 200),
        "json kept": (kept, "GET", "/api/v1/context", auth, None, 200),
        "context 304": (kept, "GET", "/api/v1/context", {**auth, "If-None-Match": etag}, None, 304),
    }
    for i in range(requests + 5):  # the first five warm every path up and are not counted
        for call, (conn, method, path, headers, payload, expected) in calls.items():
            if call == "json after a change":  # untimed: one core memory's text changes, as an agent's edit
                writer.execute("UPDATE agent_memories SET content = %s WHERE id = %s",
                               (corpus.sentence(rng) + " " + corpus.sentence(rng), rng.choice(core_ids)))  # fmt: skip
                headers = {**auth, "If-None-Match": last_etag[call]}  # the agent revalidates its copy
            if call == "context 304":  # the block as it stands since the last change
                headers = {**auth, "If-None-Match": last_etag["json after a change"]}
            ms, status, new_etag, body = timed(conn, method, path, headers, payload)
            assert status == expected, (call, status)
            if call in last_etag:
                last_etag[call] = new_etag
            if call == "text rendered":
                sizes["text_bytes"] = len(body)
            if i >= 5:
                times[call].append(ms)
        payload = json.dumps({"query": questions[i % requests], "top_k": 5})
        ms, status, _, _ = timed(fresh, "POST", "/api/v1/memory/query",
                                 {**auth, "Content-Type": "application/json"}, payload)  # fmt: skip
        assert status == 200, status
        if i >= 5:
            times["memory.query"].append(ms)
    fresh.close()
    kept.close()
    writer.close()
    return {"times": times, **sizes}


def run(args) -> dict:
    sizes = [int(s) for s in args.sizes.split(",")]
    rng = random.Random(args.seed)
    corpus = Corpus(args.seed)
    recreate()
    rows = []
    procs: list[subprocess.Popen] = []
    try:
        tokens = agents(sizes, args.redis_url)
        for size in sizes:
            seed(f"bench-context-{size}", size, corpus, rng)
        ports = {}
        for name, cache_mb in (("fresh", "0"), ("kept", "64")):
            proc, ports[name] = start_gunicorn(args.redis_url, cache_mb, args.embeddings)
            procs.append(proc)
        for size in sizes:
            result = measure(ports, tokens[size], args.requests, corpus, rng)
            for call, values in result["times"].items():
                rows.append({"core_memories": size, "call": call, "p50_ms": round(percentile(values, 0.5), 2),
                             "p95_ms": round(percentile(values, 0.95), 2), "n": len(values)})  # fmt: skip
            rows.append({"core_memories": size, "call": "bytes", "json": result["json_bytes"],
                         "text": result["text_bytes"]})  # fmt: skip
            print(f"{size:,} core memories: done", flush=True)
    finally:
        for proc in procs:
            stop(proc)
        recreate(drop_only=True)
    return {
        "generated": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "requests": args.requests,
        "embeddings": args.embeddings,
        "note": args.note,
        "rows": rows,
    }


def section(result: dict) -> str:
    lines = [
        "## The context block (GET /api/v1/context)",
        "",
        f"`python -m bench.context --requests {result['requests']} --embeddings {result.get('embeddings', 'hashed')}` "
        f"({result['generated']}, {result['machine']}): "
        "per size one agent with that many core memories, 20 journals of the week and 5,000 semantic memories, "
        "on PostgreSQL behind gunicorn (2 workers x 4 threads); each call sent that many times, interleaved, "
        "timed at the client (ms). *Rendered*: a server keeping no rendering (CONTEXT_CACHE_MB=0), so every "
        "answer reads and writes the whole block; *after a change*: the default server, after one core memory's "
        "text changed (an untimed UPDATE before each request, sent with the previous ETag): it reads that "
        "memory's text and joins the others' kept fragments; *kept*: the default server, answering an unchanged block "
        "from its copy once the ETag, from the digest kept under the agent's block version, says it is "
        "unchanged (no memory read); the 304 path sends the current ETag as If-None-Match; "
        "memory.query is top 5 for a three-word question, in the same run.",
        "",
    ]
    if result.get("note"):
        lines += [f"*{result['note']}*", ""]
    lines += [
        "| core memories | block (JSON / text bytes) | JSON rendered p50 / p95 | text rendered "
        "| JSON after a change | JSON kept | 304 | memory.query |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    by = {(r["core_memories"], r["call"]): r for r in result["rows"]}
    for size in dict.fromkeys(r["core_memories"] for r in result["rows"]):
        cells = [f"{by[(size, c)]['p50_ms']:.2f} / {by[(size, c)]['p95_ms']:.2f}" for c in CALLS]
        size_cell = f"{by[(size, 'bytes')]['json']:,} / {by[(size, 'bytes')]['text']:,}"
        lines.append(f"| {size:,} | {size_cell} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000,5000")
    parser.add_argument("--requests", type=int, default=200, help="of each call, per size")
    parser.add_argument("--quick", action="store_true", help="30 requests of each: a rehearsal")
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument(
        "--embeddings",
        default="hashed",
        choices=("hashed", "local"),
        help="the servers' embedder: memory.query embeds its question with it (local: the MiniLM of the "
        "local-embeddings extra; the memories are not embedded, so its dense step searches nothing)",
    )
    parser.add_argument("--redis-url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    parser.add_argument(
        "--note",
        default="Taken on the shared two-core development machine: compare the calls within this table, not "
        "with other sections.",
    )
    parser.add_argument("--json", default=str(ROOT / "bench" / "results" / "context.json"))
    parser.add_argument("--section", default=str(ROOT / "bench" / "results" / "context.section.md"))
    args = parser.parse_args(argv)
    if args.quick:
        args.requests = 30
    result = run(args)
    Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    Path(args.section).write_text(section(result))
    print(section(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
