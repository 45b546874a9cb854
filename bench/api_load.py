"""Load test of the agent API: one agent with 100k memories (--memories) in PostgreSQL, served by gunicorn.

    python bench/api_load.py                      # defaults below; about two minutes
    python bench/api_load.py --clients 8 --requests 5000
    python bench/api_load.py --reuse              # keep the seeded database from a previous run
    python bench/api_load.py --memories 1000000 --db-name memconsole_api_load_1m --clients 1,4 --json out.json

What it does, in order, and nothing else:

1. (Re)creates a dedicated PostgreSQL database (default `memconsole_api_load`, never the app's own),
   upgrades it with the Alembic revisions, creates one `supervisor` agent and its API token, and
   seeds N memories (and optionally relation edges) with COPY. Seeding writes the tables directly and
   skips the audit log: acceptable in this throwaway database only, so the benchmark measures the API,
   not the seeder. 1M memories take a few minutes.
   Every memory written *during* the run goes through the API and its one mutation path, audited.
2. Starts `gunicorn -w 2 -k gthread --threads 8 -b 127.0.0.1:PORT wsgi:app` on loopback.
3. Warms up, then drives a fixed, seeded mix of requests from concurrent clients (stdlib
   http.client, one keep-alive connection per client): memory.query in `bullets` and `full` mode,
   with filters and the delta header, plus creates, updates and deletes. Bounded by a request count
   and a wall-clock limit; it stops by itself.
   With several client counts (--clients 1,4,8) the plan runs once per count on the same server.
4. Prints p50/p95/p99 latency and throughput per kind (with --json, per round too, for a runner) and,
   on Linux, the CPU a request took in the server, in the clients and in the rest of the machine
   (`CpuMeter`); checks that every response was the expected 2xx, and that no write was lost (every
   acknowledged create/update/delete is in the database with its audit record). Exit status 1 if any
   check fails.
5. Stops gunicorn (the process it started) and drops the database unless --keep.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from bench.machine import loop_seconds  # noqa: E402

CATEGORIES = ["profile", "goals", "preferences", "event", "activity", "relationships", "tasks"]
SUBJECTS = ["The user", "The user's team", "The user's manager", "The user's partner", "The client"]
VERBS = ["prefers", "mentioned", "plans", "decided on", "asked about", "wants", "finished", "scheduled",
         "reviewed", "dislikes", "recommended", "is worried about", "is excited about", "postponed"]  # fmt: skip
TOPICS = """deployment database migration coffee tea vacation budget report meeting design python flask release
testing kubernetes postgres invoice travel berlin lisbon marathon running cooking pasta garden music guitar piano
project roadmap deadline launch customer support security audit memory agent planning retrospective sprint
backlog feature bug incident outage monitoring dashboard analytics pricing contract hiring interview onboarding
training workshop conference presentation slides newsletter blog podcast video photo camera bicycle hiking
mountain beach ocean river forest winter summer spring autumn birthday anniversary wedding family daughter son
parents friend neighbor apartment house rent mortgage insurance doctor dentist allergy lactose vegan gluten
breakfast lunch dinner recipe wine beer chocolate book novel poetry history science physics chemistry biology
statistics economics politics language spanish german french japanese portuguese yoga swimming tennis football
chess painting pottery knitting gardening camping fishing sailing climbing skiing surfing dog cat horse bird
laptop phone tablet keyboard monitor printer router server cloud backup password invoice receipt taxes salary
bonus promotion review feedback mentor course exam thesis research paper grant funding investor startup
""".split()
SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ra",
    "ten",
    "sol",
    "vin",
    "dor",
    "pel",
    "qua",
    "zu",
    "bex",
    "nor",
    "tis",
    "gal",
]


def vocabulary(rng: random.Random, size: int) -> list[str]:
    words = list(dict.fromkeys(TOPICS))
    while len(words) < size:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in words:
            words.append(word)
    rng.shuffle(words)
    return words


class Corpus:
    """Deterministic memory texts and queries; word frequencies follow Zipf's law (s = 1)."""

    def __init__(self, seed: int, vocab_size: int = 6000) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary(self.rng, vocab_size)
        self.weights = [1.0 / (rank + 1) for rank in range(len(self.words))]
        self.cumulative = []
        total = 0.0
        for w in self.weights:
            total += w
            self.cumulative.append(total)

    def pick(self, k: int, rng: random.Random) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cumulative, k=k)

    def sentence(self, rng: random.Random) -> str:
        words = self.pick(rng.randint(5, 11), rng)
        return f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {' '.join(words)}."

    def query(self, rng: random.Random) -> str:
        return " ".join(self.pick(rng.randint(1, 3), rng))


# ----- database -----


def admin_url(args) -> str:
    return args.pg_admin_url


def db_url(args) -> str:
    return args.pg_admin_url.rsplit("/", 1)[0] + "/" + args.db_name


def create_database(args) -> None:
    import psycopg

    with psycopg.connect(admin_url(args), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{args.db_name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{args.db_name}"')


def drop_database(args) -> None:
    import psycopg

    with psycopg.connect(admin_url(args), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{args.db_name}" WITH (FORCE)')


def migrate_and_create_agent(args) -> tuple[int, str]:
    from flask_migrate import upgrade

    from console import create_app
    from models import Agent, db

    app = create_app({"DATABASE_URL": db_url(args), "SECRET_KEY": "bench", "REDIS_URL": args.redis_url})
    with app.app_context():
        upgrade()
        agent = Agent(name="bench-supervisor", role="supervisor")
        token = agent.issue_token()
        db.session.add(agent)
        db.session.commit()
        agent_id = agent.id
        db.engine.dispose()
    return agent_id, token


def seed(args, agent_id: int, corpus: Corpus) -> float:
    """COPY N memories (and --relations edges per memory) straight into the tables (benchmark database
    only: no audit records). Returns the seconds it took."""
    import hashlib

    import psycopg

    rng = random.Random(args.seed + 1)
    now = datetime.now(UTC).replace(tzinfo=None)
    started = time.monotonic()
    with psycopg.connect(db_url(args)) as conn, conn.cursor() as cur:
        columns = ("agent_id, memory_type, content, content_hash, token_estimate, tags, category, importance, "
                   "pinned, constitutional, created_at, updated_at, user_id, thread_id")  # fmt: skip
        with cur.copy(f"COPY agent_memories ({columns}) FROM STDIN") as copy:
            for _ in range(args.memories):
                content = corpus.sentence(rng)
                updated = now - timedelta(seconds=rng.randint(0, 365 * 86400))
                copy.write_row((
                    agent_id, "semantic", content,
                    hashlib.sha256(content.lower().encode()).hexdigest(), -(-len(content) // 4), "[]",
                    rng.choice(CATEGORIES), rng.randint(1, 5), rng.random() < 0.05, False,
                    updated - timedelta(days=rng.randint(0, 30)), updated,
                    f"user-{rng.randint(1, 50)}", f"thread-{rng.randint(1, 200)}",
                ))  # fmt: skip
        if args.relations > 0:
            # Relation edges between random pairs of the agent's memories (what the maintenance worker's
            # linking produces), so memory.query's relations boost and related bullets have work to do.
            low, high = conn.execute(
                "SELECT min(id), max(id) FROM agent_memories WHERE agent_id = %s", (agent_id,)
            ).fetchone()
            pairs = set()
            for _ in range(int(args.memories * args.relations)):
                a, b = rng.randint(low, high), rng.randint(low, high)
                if a != b:
                    pairs.add((a, b))
            with cur.copy(
                "COPY memory_relations (agent_id, from_id, to_id, relation_type, strength, created_at) FROM STDIN"
            ) as copy:
                for a, b in pairs:
                    copy.write_row((agent_id, a, b, "related_to", round(rng.uniform(0.5, 1.0), 3), now))
        conn.commit()
    with psycopg.connect(db_url(args), autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE agent_memories")
        conn.execute("VACUUM ANALYZE memory_relations")
    seconds = time.monotonic() - started
    print(f"seeded {args.memories:,} memories in {seconds:.1f}s", flush=True)
    return seconds


# ----- the server -----


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_gunicorn(args, port: int) -> subprocess.Popen:
    env = dict(os.environ, DATABASE_URL=db_url(args), SECRET_KEY="bench", REDIS_URL=args.redis_url)
    # The seeded memories carry no vectors, so the ranking is lexical; with the local-embeddings extra
    # installed, EMBEDDINGS=auto would still embed every question (MiniLM on these two cores) for nothing.
    env.setdefault("EMBEDDINGS", "hashed")
    # One token makes every request: the API's per-token limit (600/minute by default) would turn most of
    # them away. The limiter still counts each one in Redis, as it does in production.
    env.setdefault("API_RATE_LIMIT", "1000000/minute")
    # The seeded agent already holds --memories: at the default quota (MAX_MEMORIES_PER_AGENT, 100,000) every
    # create of a 100k or 1M run would be refused with 409. Room for the run's creates, as a deployment
    # storing that much would configure; the check still runs on every create (models/agents/quotas.py).
    env.setdefault("MAX_MEMORIES_PER_AGENT", str(max(100_000, 2 * args.memories)))
    gunicorn = os.path.join(os.path.dirname(sys.executable), "gunicorn")
    cmd = [gunicorn, "-w", str(args.workers), "-k", "gthread", "--threads", str(args.threads),
           "-b", f"127.0.0.1:{port}", "--log-level", "warning", "wsgi:app"]  # fmt: skip
    if args.access_log:
        cmd[-1:-1] = ["--access-logfile", args.access_log, "--access-logformat", "%(m)s %(U)s %(s)s %(D)s"]
    print("$ gunicorn " + " ".join(cmd[1:]), flush=True)
    proc = subprocess.Popen(cmd, cwd=args.server_root, env=env, start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return proc
        except OSError:
            time.sleep(0.2)
    stop_gunicorn(proc)
    raise SystemExit("gunicorn did not come up within 30 s")


def stop_gunicorn(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)  # the session this script started: gunicorn and its workers
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


# ----- the workload -----

MIX = [("bullets", 0.60), ("bullets_filtered", 0.10), ("bullets_delta", 0.05), ("full", 0.10),
       ("create", 0.08), ("update", 0.05), ("delete", 0.02)]  # fmt: skip


def plan_requests(args, corpus: Corpus) -> list[tuple[str, dict]]:
    rng = random.Random(args.seed + 2)
    mix = [(k, w) for k, w in MIX if k not in ("create", "update", "delete")] if args.read_only else MIX
    kinds, weights = zip(*mix, strict=True)
    asked = None
    if args.questions:  # whole natural-language questions (bench/nl_latency.py) instead of 1-3 keywords
        from bench.nl_latency import questions

        asked = questions(corpus, args.requests, seed=args.seed + 3)
    plan = []
    for n in range(args.requests):
        kind = rng.choices(kinds, weights=weights)[0]
        body: dict = {}
        if kind.startswith("bullets") or kind == "full":
            text = asked[n] if asked else corpus.query(rng)
            body = {"query": text, "top_k": rng.choice([3, 5, 10]), "budget_tokens": 512}
            if kind == "full":
                body["return"] = "full"
            if kind == "bullets_filtered":
                body["filters"] = rng.choice([
                    {"user_id": f"user-{rng.randint(1, 50)}"},
                    {"importance_min": 4},
                    {"updated_after": "2026-01-01", "pinned": False},
                ])  # fmt: skip
                body["categories"] = rng.sample(CATEGORIES, 3)
            if kind == "bullets_delta":
                body.update(thread_id=f"bench-thread-{rng.randint(1, 5)}", since_rev=0)
        elif kind == "create":
            body = {"content": corpus.sentence(rng), "category": rng.choice(CATEGORIES), "importance": rng.randint(1, 5),
                    "thread_id": f"bench-thread-{rng.randint(1, 5)}", "user_id": f"user-{rng.randint(1, 50)}"}  # fmt: skip
        plan.append((kind, body))
    return plan


class Client(threading.Thread):
    """One keep-alive connection; updates and deletes touch only memories this client created."""

    def __init__(self, port, token, work, results, deadline, seed) -> None:
        super().__init__(daemon=True)
        self.port, self.work, self.results, self.deadline = port, work, results, deadline
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        self.rng = random.Random(seed)
        self.mine: list[int] = []
        self.acked: dict[int, dict] = {}  # memory id -> what the server acknowledged last

    def call(self, conn, method, path, body):
        payload = json.dumps(body).encode() if body is not None else None
        started = time.perf_counter()
        conn.request(method, path, body=payload, headers=self.headers)
        response = conn.getresponse()
        data = response.read()
        return response.status, data, (time.perf_counter() - started) * 1000

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        for kind, body in self.work:
            if time.monotonic() > self.deadline:
                break
            if kind in ("update", "delete") and not self.mine:
                kind, body = "bullets", {"query": "tea", "top_k": 3}
            if kind == "update":
                memory_id = self.rng.choice(self.mine)
                body = {"content": f"The user revised note {self.rng.randint(0, 10**9)}.", "importance": 3}
                status, data, ms = self.call(conn, "PATCH", f"/api/v1/memory/{memory_id}", body)
                if status == 200:
                    self.acked[memory_id] = {"content": body["content"], "deleted": False}
            elif kind == "delete":
                memory_id = self.mine.pop(self.rng.randrange(len(self.mine)))
                status, data, ms = self.call(conn, "DELETE", f"/api/v1/memory/{memory_id}", None)
                if status == 200:
                    self.acked[memory_id] = {**self.acked.get(memory_id, {}), "deleted": True}
            elif kind == "create":
                status, data, ms = self.call(conn, "POST", "/api/v1/memory", body)
                if status == 201:
                    memory = json.loads(data)["memory"]
                    self.mine.append(memory["id"])
                    self.acked[memory["id"]] = {"content": memory["content"], "deleted": False}
            else:
                status, data, ms = self.call(conn, "POST", "/api/v1/memory/query", body)
            expected = {"create": 201}.get(kind, 200)
            self.results.append((kind, status == expected, ms, status))
        conn.close()


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(q / 100 * len(ordered) + 0.5)) - 1))
    return ordered[index]


def run_load(args, port: int, token: str, plan) -> tuple[list, float, list[Client]]:
    results: list = []
    chunks = [plan[i :: args.clients] for i in range(args.clients)]
    deadline = time.monotonic() + args.max_seconds
    clients = [
        Client(port, token, chunk, results, deadline, args.seed + 10 + i) for i, chunk in enumerate(chunks)
    ]
    started = time.perf_counter()
    for client in clients:
        client.start()
    for client in clients:
        client.join()
    return results, time.perf_counter() - started, clients


class CpuMeter:
    """Where a round's CPU went (Linux /proc; None elsewhere), in ms a request: the gunicorn processes
    (`server_pid` and its workers), this script's clients, and the rest of the machine's busy time —
    PostgreSQL and Redis on a quiet machine, as every part runs on loopback — with the share of the
    cores left idle. Clients and server share the cores, so together these bound the throughput."""

    def __init__(self, server_pid: int) -> None:
        self.server = [server_pid, *self._children(server_pid)]
        self.tick = os.sysconf("SC_CLK_TCK")

    @staticmethod
    def _stat(pid: int | str) -> list[str] | None:
        """/proc/<pid>/stat's fields after the command name (state, ppid, ...), None once it has ended."""
        try:
            with open(f"/proc/{pid}/stat") as fh:
                return fh.read().rsplit(")", 1)[1].split()
        except OSError:
            return None

    @classmethod
    def _children(cls, pid: int) -> list[int]:
        found = []
        for entry in os.listdir("/proc"):
            fields = cls._stat(entry) if entry.isdigit() else None
            if fields and int(fields[1]) == pid:
                found.append(int(entry))
        return found

    def _server_ticks(self) -> int:
        """utime + stime of the server's processes (an ended one counts for nothing)."""
        return sum(int(f[11]) + int(f[12]) for f in map(self._stat, self.server) if f)

    @staticmethod
    def _machine_ticks() -> tuple[int, int]:
        """(busy, all) of every core since boot: /proc/stat's user .. steal, idle and iowait being idle."""
        with open("/proc/stat") as fh:
            values = [int(v) for v in fh.readline().split()[1:9]]
        return sum(values) - values[3] - values[4], sum(values)

    def start(self) -> None:
        times = os.times()
        self.began = (self._server_ticks(), times.user + times.system, self._machine_ticks())

    def stop(self, requests: int) -> dict | None:
        if not requests:
            return None
        times = os.times()
        server0, client0, (busy0, all0) = self.began
        busy1, all1 = self._machine_ticks()
        server = (self._server_ticks() - server0) / self.tick
        client = times.user + times.system - client0
        rest = (busy1 - busy0) / self.tick - server - client
        return {
            "server_ms": round(1000 * server / requests, 2),
            "client_ms": round(1000 * client / requests, 2),
            "rest_ms": round(1000 * max(rest, 0.0) / requests, 2),
            "idle_pct": round(100 * (1 - (busy1 - busy0) / max(all1 - all0, 1)), 1),
        }

    @classmethod
    def of(cls, server_pid: int | None) -> CpuMeter | None:
        return cls(server_pid) if server_pid and os.path.exists("/proc/stat") else None


def check_writes(args, agent_id: int, clients: list[Client]) -> list[str]:
    """Every acknowledged write is in the database as acknowledged, with its audit records."""
    import psycopg

    acked = {mid: state for c in clients for mid, state in c.acked.items()}
    problems = []
    if not acked:
        return problems
    with psycopg.connect(db_url(args)) as conn:
        rows = {r[0]: r for r in conn.execute(
            "SELECT id, content, deleted_at IS NOT NULL FROM agent_memories WHERE agent_id = %s AND id = ANY(%s)",
            (agent_id, list(acked)),
        )}  # fmt: skip
        audited = {r[0]: r[1] for r in conn.execute(
            "SELECT memory_id, count(*) FROM audit_logs WHERE memory_id = ANY(%s) GROUP BY memory_id", (list(acked),)
        )}  # fmt: skip
    for memory_id, state in acked.items():
        row = rows.get(memory_id)
        if row is None:
            problems.append(f"memory #{memory_id} acknowledged but missing")
        elif row[2] != state["deleted"]:
            problems.append(f"memory #{memory_id}: deleted={row[2]}, acknowledged {state['deleted']}")
        elif row[1] != state["content"]:
            problems.append(f"memory #{memory_id}: content differs from the last acknowledged write")
        if not audited.get(memory_id):
            problems.append(f"memory #{memory_id} has no audit record")
    return problems


def report(results, elapsed: float, args) -> dict:
    by_kind: dict[str, list] = defaultdict(list)
    for kind, _, ms, _ in results:
        by_kind[kind].append(ms)
    by_kind["bullets (all)"] = [ms for kind, _, ms, _ in results if kind.startswith("bullets")]
    by_kind["all"] = [ms for _, _, ms, _ in results]
    summary = {}
    print(f"\n{'kind':<18}{'n':>7}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'mean':>8}{'req/s':>9}")
    for kind in [k for k, _ in MIX] + ["bullets (all)", "all"]:
        values = by_kind.get(kind, [])
        if not values:
            continue
        row = {
            "n": len(values),
            "p50": round(percentile(values, 50), 2),
            "p95": round(percentile(values, 95), 2),
            "p99": round(percentile(values, 99), 2),
            "mean": round(statistics.fmean(values), 2),
            "rps": round(len(values) / elapsed, 1),
        }
        summary[kind] = row
        print(
            f"{kind:<18}{row['n']:>7}{row['p50']:>9}{row['p95']:>9}{row['p99']:>9}{row['mean']:>8}{row['rps']:>9}"
        )
    return summary


def client_counts(text: str) -> list[int]:
    counts = [int(part) for part in text.split(",") if part.strip()]
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError("--clients takes positive integers separated by commas, e.g. 1,4,8")
    return counts


def reuse_database(args) -> tuple[int, str, int]:
    """The agent of a --keep database, a fresh token, and how many memories it holds; new migrations are applied."""
    import psycopg
    from flask_migrate import upgrade

    from console import create_app
    from models import Agent, db

    with psycopg.connect(db_url(args)) as conn:
        agent_id = conn.execute("SELECT id FROM agents WHERE name = 'bench-supervisor'").fetchone()[0]
        held = conn.execute(
            "SELECT count(*) FROM agent_memories WHERE agent_id = %s", (agent_id,)
        ).fetchone()[0]
    app = create_app({"DATABASE_URL": db_url(args), "SECRET_KEY": "bench", "REDIS_URL": args.redis_url})
    with app.app_context():
        upgrade()
        token = db.session.get(Agent, agent_id).issue_token()
        db.session.commit()
        db.engine.dispose()
    return agent_id, token, held


def run_round(
    args, port: int, token: str, agent_id: int, corpus: Corpus, clients: int, server_pid: int | None = None
) -> tuple[dict, list[str]]:
    """One measured round of the plan from `clients` concurrent clients: its summary and its failures;
    with `server_pid` (gunicorn's), where the CPU went (`CpuMeter`)."""
    failures: list[str] = []
    round_args = argparse.Namespace(**{**vars(args), "clients": clients})
    plan = plan_requests(args, corpus)
    # The machine's speed right before the round (bench/machine.py): the figures mean little without it.
    loop = loop_seconds()
    print(f"\nrunning {len(plan):,} requests from {clients} concurrent clients "
          f"(machine: probe loop {loop} s)...", flush=True)  # fmt: skip
    meter = CpuMeter.of(server_pid)
    if meter:
        meter.start()
    results, elapsed, workers = run_load(round_args, port, token, plan)
    cpu = meter.stop(len(results)) if meter else None
    summary = report(results, elapsed, round_args)
    if cpu:
        print(f"CPU a request: server {cpu['server_ms']} ms, clients {cpu['client_ms']} ms, the rest of the "
              f"machine (PostgreSQL, Redis) {cpu['rest_ms']} ms; cores idle {cpu['idle_pct']}%")  # fmt: skip
    errors = [(kind, status) for kind, ok, _, status in results if not ok]
    print(f"\n{len(results):,} requests in {elapsed:.1f}s: {len(results) / elapsed:.0f} req/s overall; "
          f"{len(errors)} unexpected statuses")  # fmt: skip
    if errors:
        failures.append(f"unexpected statuses: {sorted(set(errors))[:10]}")
    if len(results) < len(plan):
        failures.append(f"only {len(results)} of {len(plan)} requests ran within {args.max_seconds}s")
    lost = check_writes(args, agent_id, workers)
    writes = sum(len(c.acked) for c in workers)
    print(f"writes acknowledged: {writes} memories; lost or wrong: {len(lost)}")
    failures += lost[:20]
    bullets_p95 = summary.get("bullets (all)", {}).get("p95", float("inf"))
    verdict = "met" if bullets_p95 <= args.target_p95_ms else "MISSED"
    print(f"bullets p95 {bullets_p95} ms at {clients} client(s): target {args.target_p95_ms} ms {verdict}")
    outcome = {"clients": clients, "summary": summary, "elapsed_s": round(elapsed, 2), "errors": len(errors),
               "lost_writes": len(lost), "bullets_p95_met": bullets_p95 <= args.target_p95_ms, "cpu": cpu,
               "machine_loop_s": loop}  # fmt: skip
    return outcome, failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pg-admin-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--db-name", default="memconsole_api_load",
                        help="must start with memconsole_api_load (e.g. memconsole_api_load_1m to keep one per size)")  # fmt: skip
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14")
    parser.add_argument("--memories", type=int, default=100_000, help="memories seeded (10k, 100k, 1M ...)")
    parser.add_argument("--relations", type=float, default=0.0,
                        help="relation edges seeded per memory (0.3 = 30,000 edges for 100k memories)")  # fmt: skip
    parser.add_argument("--requests", type=int, default=4000, help="requests per round")
    parser.add_argument("--clients", type=client_counts, default=[4],
                        help="concurrent clients; several (1,4,8) run one round each on the same server")  # fmt: skip
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--max-seconds", type=float, default=300, help="wall-clock limit per round")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--target-p95-ms", type=float, default=15.0)
    parser.add_argument("--reuse", action="store_true", help="reuse the seeded database of a --keep run")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    parser.add_argument(
        "--read-only", action="store_true", help="queries only: no creates, updates or deletes"
    )
    parser.add_argument("--questions", action="store_true",
                        help="natural-language questions of 8-20 words instead of 1-3 keywords")  # fmt: skip
    parser.add_argument("--json", help="also write the summary (per client count) to this file")
    parser.add_argument("--access-log", help="gunicorn access log (method, path, status, microseconds)")
    parser.add_argument("--server-root", default=ROOT,
                        help="the checkout gunicorn serves (default this one; another for before/after runs)")  # fmt: skip
    args = parser.parse_args(argv)
    if not args.db_name.startswith("memconsole_api_load"):
        raise SystemExit("--db-name must start with memconsole_api_load: this script drops it")

    corpus = Corpus(args.seed)
    seed_seconds = None
    if args.reuse:
        agent_id, token, held = reuse_database(args)
        print(f"reusing {args.db_name}: {held:,} memories", flush=True)
        if abs(held - args.memories) > max(1000, args.memories // 10):
            raise SystemExit(
                f"{args.db_name} holds {held:,} memories, not about {args.memories:,}: drop --reuse"
            )
    else:
        create_database(args)
        agent_id, token = migrate_and_create_agent(args)
        seed_seconds = seed(args, agent_id, corpus)

    port = free_port()
    proc = start_gunicorn(args, port)
    failures: list[str] = []
    rounds: list[dict] = []
    try:
        warm = Corpus(args.seed + 99)
        warm_plan = [("bullets", {"query": warm.query(warm.rng), "top_k": 5}) for _ in range(args.warmup)]
        run_load(argparse.Namespace(**{**vars(args), "clients": 2}), port, token, warm_plan)
        for clients in args.clients:
            outcome, problems = run_round(args, port, token, agent_id, corpus, clients, proc.pid)
            rounds.append(outcome)
            failures += problems
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"args": {k: v for k, v in vars(args).items() if k != "pg_admin_url"},
                           "memories": args.memories, "seed_seconds": seed_seconds and round(seed_seconds, 1),
                           "rounds": rounds,
                           # the first round's figures at the top level, as before several rounds existed
                           **{k: rounds[0][k] for k in ("summary", "elapsed_s", "errors", "lost_writes")}}, fh,
                          indent=2)  # fmt: skip
    finally:
        stop_gunicorn(proc)
        if not args.keep:
            drop_database(args)
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
