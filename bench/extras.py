"""Extra benchmarks on PostgreSQL: relation edges per batch, checkpoint save/load, refinement prompt prefix.

    .venv/bin/python -m bench.extras [--quick] [--runs 5] [--json FILE]

Builds its data in a dedicated database (`memconsole_bench_extras`, dropped and re-created), so it
never touches another. Seeding uses set-based SQL (the benchmark database only); everything measured
goes through the product's own code paths:

1. `jobs.relations.link_related` on a batch of semantic memories of agents of growing size, with the
   hashed bag-of-words embedder (`EMBEDDINGS=hashed`); embedding is timed on its own, and linking is
   reported per edge created.
2. `models.integrations.checkpoint.save_checkpoint` / `load_checkpoint` directly, and PUT/GET
   /api/v1/checkpoints/<thread_id> through the Flask test client with a bearer token, at 10 KB,
   100 KB and 1 MB of JSON.
3. Real refinement sessions (`jobs.refinement.run_refinement`) against the scripted OpenAI-compatible
   server of the test suite over loopback HTTP, recording every request: prompt tokens per session
   (estimated as characters / 4: tiktoken is not installed) and the share of each turn's prompt that
   is a byte-identical prefix of the previous turn's.

Prints a Markdown table of medians and p95 over the runs; `--json FILE` writes the rows as a list of
{"name", "size", "median_ms", "p95_ms", "goal", "unit"}. Loopback only, bounded sizes, stops by itself (and stops the embedded Redis it started).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import sqlalchemy as sa

from bench.core import fresh_database, summary

DB_NAME = "memconsole_bench_extras"
REDIS_DIR = "/tmp/memconsole-bench-extras-redis"
LINK_BATCH = 1_000  # memories linked in one call (link_pending hands over up to 5,000)


@dataclass
class Row:
    name: str
    size: str
    median_ms: float
    p95_ms: float
    goal: str = ""
    unit: str = "ms"


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    value = fn()
    return (time.perf_counter() - start) * 1000, value


def bench_agent(conn, name: str, **fields) -> int:
    columns = {"core_token_budget": 5000, "min_retention": 0.5, "model_id": None, "base_url": None, **fields}
    return conn.execute(
        sa.text(
            "INSERT INTO agents (name, core_token_budget, min_retention, model_id, base_url, mechanic_preconsent, "
            "active, created_at) VALUES (:n, :core_token_budget, :min_retention, :model_id, :base_url, false, true, "
            "now()) RETURNING id"
        ),
        {"n": name, **columns},
    ).scalar_one()


# One memory per row of generate_series; `content` is an SQL expression of g (1..n) and the agent id.
SEED_MEMORIES = """
INSERT INTO agent_memories (agent_id, memory_type, content, content_hash, token_estimate, tags, pinned,
                            constitutional, created_at, updated_at)
SELECT :agent, :memory_type, c.content, encode(sha256(convert_to(lower(btrim(c.content)), 'UTF8')), 'hex'),
       ceil(length(c.content) / 4.0), '[]', false, false, now() - ((:n - g) * interval '1 minute'), now()
FROM generate_series(1, :n) AS g
CROSS JOIN LATERAL (SELECT {content} AS content) c
"""
FILE_CONTENTS = """
INSERT INTO audit_contents (memory_id, sha256, content, token_estimate)
SELECT id, encode(sha256(convert_to(content, 'UTF8')), 'hex'), content, token_estimate
FROM agent_memories WHERE agent_id = :agent
"""
# Clusters of ten memories that differ by one word (cosine ~0.9 with the hashed embedder); memories
# of different clusters share only filler words (cosine ~0.2), so each has 9 neighbours above 0.6.
CLUSTERED = (
    "'Note ' || (g % :clusters) || ': person' || (g % :clusters) || ' prefers drink' || (g % :clusters) "
    "|| ' at place' || (g % :clusters) || ' during season' || (g % :clusters) || ' variant ' || g"
)
LEDGER = (
    "'Memory ' || g || ' about topic ' || (g % 97) || ': the user mentioned project' || g "
    "|| ' and a detail of ordinary length to make the ledger line realistic'"
)


def seed_memories(conn, agent_id: int, n: int, memory_type: str, content: str, **params) -> None:
    conn.execute(
        sa.text(SEED_MEMORIES.format(content=content)),
        {"agent": agent_id, "n": n, "memory_type": memory_type, **params},
    )
    conn.execute(sa.text(FILE_CONTENTS), {"agent": agent_id})


# ----- 1. relation edges -----


def bench_relations(sizes: list[int], runs: int) -> list[Row]:
    """link_related on the newest LINK_BATCH semantic memories of agents with `size` of them."""
    from jobs.relations import embed_memories, link_related
    from models import db

    rows = []
    for size in sizes:
        with db.engine.begin() as conn:
            agent_id = bench_agent(conn, f"relations-{size}")
            seed_memories(conn, agent_id, size, "semantic", CLUSTERED, clusters=max(1, size // 10))
            conn.execute(sa.text("ANALYZE agent_memories"))
        embed_ms = []
        for _ in range(max(1, min(runs, 3))):  # the embedder is pure Python: a few runs suffice
            with db.engine.begin() as conn:  # mark every vector stale so the next pass re-embeds all
                conn.execute(
                    sa.text("UPDATE memory_embeddings SET content_hash = 'stale' WHERE agent_id = :a"),
                    {"a": agent_id},
                )
            db.session.remove()
            elapsed, count = timed(lambda a=agent_id: embed_memories(a))
            assert count == size, (count, size)
            embed_ms.append(elapsed / size)
        batch = db.session.scalars(
            sa.text("SELECT id FROM agent_memories WHERE agent_id = :a ORDER BY id DESC LIMIT :b"),
            {"a": agent_id, "b": LINK_BATCH},
        ).all()
        per_edge, totals, edges = [], [], 0
        for _ in range(runs):
            with db.engine.begin() as conn:  # link_related is idempotent: start each run without edges
                conn.execute(sa.text("DELETE FROM memory_relations WHERE agent_id = :a"), {"a": agent_id})
            db.session.remove()
            elapsed, edges = timed(lambda a=agent_id, b=batch: link_related(a, b))
            assert edges > 0, "the seeded memories must be similar enough to link"
            totals.append(elapsed)
            per_edge.append(elapsed / edges)
        label = f"{size:,} semantic memories, batch {len(batch):,}"
        rows += [
            Row(
                "edge creation: link_related, per edge",
                f"{label} ({edges:,} edges)",
                *summary(per_edge),
                "≤ 0.2 ms per edge",
                "ms/edge",
            ),
            Row("edge creation: link_related, whole batch", f"{label} ({edges:,} edges)", *summary(totals)),
            Row(
                "embedding (hashed-bow), per memory",
                f"{size:,} semantic memories",
                *summary(embed_ms),
                "",
                "ms/memory",
            ),
        ]
    return rows


# ----- 2. checkpoints -----


def checkpoint_payload(target_bytes: int) -> dict:
    """A supervisor-like state of about `target_bytes` of compact JSON: a message list plus small state."""
    from models.integrations.checkpoint import checkpoint_size

    message = {
        "role": "assistant",
        "content": "The user asked about the rollout plan; " * 10,
        "tool_calls": [],
        "meta": {"tokens": 120, "latency_ms": 812.5, "ok": True},
    }
    unit = checkpoint_size(dict(message, id="m000000")) + 1
    count = max(1, (target_bytes - 100) // unit)
    data = {
        "thread": {"step": count, "status": "run-0000", "next": ["supervisor", "researcher"]},
        "messages": [dict(message, id=f"m{i:06d}") for i in range(count)],
    }
    return data


def bench_checkpoints(app, sizes: list[int], runs: int) -> list[Row]:
    from models import Agent, db
    from models.integrations.checkpoint import checkpoint_size, load_checkpoint, save_checkpoint

    agent = Agent(name="checkpoints")
    token = agent.issue_token()
    db.session.add(agent)
    db.session.commit()
    agent_id = agent.id
    headers = {"Authorization": f"Bearer {token}"}
    client = app.test_client()
    rows = []
    for size in sizes:
        data = checkpoint_payload(size)
        actual = checkpoint_size(data)
        label = f"{actual / 1000:,.0f} KB of JSON"
        goal = "≤ 5 ms" if size == 100_000 else ""
        thread = f"thread-{size}"
        body = json.dumps({"user_id": "u1", "checkpoint_data": data}).encode()
        save_ms, load_ms, put_ms, get_ms = [], [], [], []
        for run in range(runs + 1):  # the first run creates the row; only replacements are kept
            data["thread"]["status"] = f"run-{run:04d}"  # a changed document each save, same size
            db.session.remove()  # a fresh session, as a request gets
            elapsed, _ = timed(lambda t=thread, d=data: save_checkpoint(agent_id, "u1", t, d))
            if run:
                save_ms.append(elapsed)
            db.session.remove()
            elapsed, row = timed(lambda t=thread: load_checkpoint(agent_id, "u1", t))
            assert row.size_bytes == actual
            load_ms.append(elapsed)
        for run in range(runs + 1):
            elapsed, response = timed(
                lambda t=thread, b=body: client.put(
                    f"/api/v1/checkpoints/api-{t}", data=b, headers=headers, content_type="application/json"
                )
            )
            assert response.status_code in (200, 201), response.get_data(as_text=True)[:300]
            if run:
                put_ms.append(elapsed)
            elapsed, response = timed(
                lambda t=thread: client.get(
                    f"/api/v1/checkpoints/api-{t}", query_string={"user_id": "u1"}, headers=headers
                )
            )
            assert response.status_code == 200, response.get_data(as_text=True)[:300]
            get_ms.append(elapsed)
        rows += [
            Row("checkpoint save (save_checkpoint, upsert)", label, *summary(save_ms), goal),
            Row("checkpoint load (load_checkpoint)", label, *summary(load_ms), goal),
            Row("checkpoint PUT /api/v1/checkpoints (test client, bearer)", label, *summary(put_ms), goal),
            Row("checkpoint GET /api/v1/checkpoints (test client, bearer)", label, *summary(get_ms), goal),
        ]
    return rows


# ----- 3. refinement prompt prefix -----


def rendered_prompt(request: dict) -> bytes:
    """The prompt as a provider renders it for caching: tools first, then the messages, as sent."""
    return json.dumps(
        {"tools": request.get("tools") or [], "messages": request["messages"]},
        ensure_ascii=False,
        separators=(",", ":"),
    ).encode()


def common_prefix(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    lo, hi = 0, n  # binary search on slice equality: C-speed compares, no Python loop per byte
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def session_script(ids: list[int]):
    """Consent, a search, two updates, a merge, a turn without tools (nudged), a protect, complete."""
    from tests import scripted_llm as s

    return [
        s.consent(),
        s.tools(("search_memories", {"query": "topic 1"})),
        s.tools(
            ("update_memory", {"id": ids[0], "content": f"Tightened memory {ids[0]}"}),
            ("update_memory", {"id": ids[1], "content": f"Tightened memory {ids[1]}"}),
        ),
        s.tools(
            (
                "consolidate_memories",
                {"ids": [ids[2], ids[3]], "new_content": f"Merged {ids[2]} and {ids[3]}"},
            )
        ),
        s.text("Let me look over the remaining memories once more."),
        s.tools(("protect_memory", {"id": ids[4]})),
        s.complete("Tightened two memories, merged one pair, protected one"),
    ]


def bench_prefix(sizes: list[int], runs: int) -> tuple[list[Row], list[dict]]:
    from jobs.refinement import run_refinement
    from models import db
    from tests.scripted_llm import ScriptedLLM

    os.environ.setdefault("OPENAI_API_KEY", "bench-key")
    rows, details = [], []
    llm = ScriptedLLM().start()
    try:
        for size in sizes:
            tokens, shares, raw_shares, session_shares, reuse, wall = [], [], [], [], [], []
            for run in range(runs):
                with db.engine.begin() as conn:
                    agent_id = bench_agent(
                        conn,
                        f"prefix-{size}-{run}",
                        model_id="scripted-model",
                        base_url=llm.url,
                        core_token_budget=100,
                    )
                    seed_memories(conn, agent_id, size, "core", LEDGER)
                db.session.remove()
                ids = db.session.scalars(
                    sa.text("SELECT id FROM agent_memories WHERE agent_id = :a ORDER BY id LIMIT 5"),
                    {"a": agent_id},
                ).all()
                llm.requests.clear()
                llm.raw_requests.clear()
                llm.script = session_script(ids)
                elapsed, result = timed(lambda a=agent_id: run_refinement(a, "bench", force=True))
                assert result["status"] == "completed" and result["ops"] == 4, result
                wall.append(elapsed)
                prompts = [rendered_prompt(r) for r in llm.requests]
                tokens.append(sum(len(p.decode()) for p in prompts) / 4)
                loop = [
                    (p, raw)
                    for p, raw, r in zip(prompts, llm.raw_requests, llm.requests, strict=True)
                    if r.get("tools")
                ]
                per_turn = [
                    common_prefix(prev[0], cur[0]) / len(cur[0])
                    for prev, cur in zip(loop, loop[1:], strict=False)
                ]
                raw_turn = [
                    common_prefix(prev[1], cur[1]) / len(cur[1])
                    for prev, cur in zip(loop, loop[1:], strict=False)
                ]
                # How much of the previous prompt the next one repeats byte for byte (only the closing
                # `]}` of the rendering can differ when the conversation is purely appended to).
                reuse += [
                    common_prefix(prev[0], cur[0]) / (len(prev[0]) - 2)
                    for prev, cur in zip(loop, loop[1:], strict=False)
                ]
                shares += per_turn
                raw_shares += raw_turn
                # Token-weighted over the whole session: every byte of every request, consent included.
                reused = sum(common_prefix(a, b) for a, b in zip(prompts, prompts[1:], strict=False))
                session_shares.append(reused / sum(len(p) for p in prompts))
                details.append(
                    {
                        "size": size,
                        "requests": len(prompts),
                        "chars": [len(p) for p in prompts],
                        "per_turn_share": [round(x, 4) for x in per_turn],
                        "raw_body_share": [round(x, 4) for x in raw_turn],
                    }
                )
            label = f"{size:,} core memories"
            rows += [
                Row(
                    "refinement prompt tokens per session (chars/4, consent + 6 turns)",
                    label,
                    *summary(tokens),
                    "",
                    "tokens",
                ),
                Row(
                    "stable prefix share per turn, tools + messages (median turn; p95 col = worst turn)",
                    label,
                    statistics.median(shares) * 100,
                    min(shares) * 100,
                    "≥ 90%",
                    "%",
                ),
                Row(
                    "previous turn's prompt repeated byte for byte (median turn; p95 col = worst turn)",
                    label,
                    statistics.median(reuse) * 100,
                    min(reuse) * 100,
                    "",
                    "%",
                ),
                Row(
                    "stable prefix share per turn, raw HTTP body (median turn; p95 col = worst turn)",
                    label,
                    statistics.median(raw_shares) * 100,
                    min(raw_shares) * 100,
                    "",
                    "%",
                ),
                Row(
                    "stable prefix share, whole session token-weighted (incl. consent; p95 col = worst run)",
                    label,
                    statistics.median(session_shares) * 100,
                    min(session_shares) * 100,
                    "",
                    "%",
                ),
                Row("refinement session wall time (scripted model, loopback)", label, *summary(wall)),
            ]
    finally:
        llm.stop()
    return rows, details


def run_parts(app, parts: set[str], quick: bool, runs: int) -> tuple[list[Row], list[dict]]:
    from flask_migrate import upgrade

    upgrade()
    rows: list[Row] = []
    details: list[dict] = []
    if "relations" in parts:
        rows += bench_relations([1_000, 5_000] if quick else [1_000, 5_000, 20_000], runs)
    if "checkpoints" in parts:
        rows += bench_checkpoints(app, [10_000, 100_000, 1_000_000], max(runs, 10))
    if "prefix" in parts:
        prefix_rows, details = bench_prefix([20, 200] if quick else [20, 200, 1_000], runs)
        rows += prefix_rows
    db_dispose()
    return rows, details


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    parser.add_argument(
        "--only",
        choices=["relations", "checkpoints", "prefix"],
        action="append",
        help="run only these parts (repeatable)",
    )
    args = parser.parse_args()
    parts = set(args.only or ["relations", "checkpoints", "prefix"])

    url = fresh_database(DB_NAME)
    os.environ["EMBEDDINGS"] = "hashed"  # the fallback embedder, whatever this machine has installed
    from console import create_app
    from infra import embedded_redis

    app = create_app(
        {
            "DATABASE_URL": url,
            "SECRET_KEY": "bench",
            "REDIS_URL": "embedded",
            "EMBEDDED_REDIS_DIR": REDIS_DIR,
            "LLM_OFFLINE": False,
            "LLM_MAX_RETRIES": 0,
        }
    )
    rows: list[Row] = []
    details: list[dict] = []
    try:
        with app.app_context():
            rows, details = run_parts(app, parts, args.quick, args.runs)
    finally:
        embedded_redis.stop(REDIS_DIR)  # the benchmark started it; leave nothing running
    print("| measurement | size | median | p95 | unit | goal |")
    print("| --- | --- | ---: | ---: | --- | --- |")
    for row in rows:
        p95 = f"{row.p95_ms:.3f}" if row.unit != "%" else f"min {row.p95_ms:.1f}"
        print(f"| {row.name} | {row.size} | {row.median_ms:.3f} | {p95} | {row.unit} | {row.goal} |")
    if args.json:
        with open(args.json, "w") as out:
            json.dump([asdict(r) for r in rows], out, indent=2)
    if details and os.environ.get("BENCH_VERBOSE"):
        print(json.dumps(details, indent=1))


def db_dispose() -> None:
    from models import db

    db.session.remove()
    db.engine.dispose()


if __name__ == "__main__":
    main()
