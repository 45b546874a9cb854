"""Ledger paging: prompt tokens per turn and per session at 1k, 5k and 20k core memories.

    .venv/bin/python -m bench.ledger [--quick] [--json FILE] [--section FILE]

Builds its data in a dedicated PostgreSQL database (`memconsole_bench_ledger`, dropped and re-created)
with set-based SQL (bench.extras' ledger-like memories of ~40 tokens a line, one in 50 followed by a
near-exact twin), then runs real refinement sessions (`jobs.refinement.run_refinement`) against the
scripted OpenAI-compatible server of the test suite over loopback HTTP:

- paged (`REFINEMENT_LEDGER_MAX_TOKENS` at its default): a model that reads every page once —
  consent, `next_page` on every page but the last, then `complete_refinement`;
- unpaged (the limit lifted, as before paging): consent, then `complete_refinement` at once — the
  smallest session the whole-ledger prompt allows.

Every request is counted with the product's own estimate (`models.db.estimate_tokens`, ceil(chars / 4))
over what a provider receives: the tool schemas and the messages, as sent. No timing: it runs once.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import sqlalchemy as sa

from bench.core import fresh_database
from bench.extras import LEDGER, bench_agent, rendered_prompt, seed_memories

DB_NAME = "memconsole_bench_ledger"
REDIS_DIR = "/tmp/memconsole-bench-ledger-redis"
CONTEXT = 128_000  # the model window the default limit is sized for
TWINS = """
INSERT INTO agent_memories (agent_id, memory_type, content, content_hash, token_estimate, tags, pinned,
                            constitutional, created_at, updated_at)
SELECT agent_id, 'core', content || '!', encode(sha256(convert_to(lower(btrim(content || '!')), 'UTF8')), 'hex'),
       ceil(length(content || '!') / 4.0), '[]', false, false, now(), now()
FROM agent_memories WHERE agent_id = :agent AND id % 50 = 0
"""


def pager(request: dict):
    """next_page until the prompt says it shows the last page, then complete_refinement."""
    from tests import scripted_llm as s

    system = request["messages"][0]["content"]
    marker = system.split("## Your core memory ledger: page ", 1)
    last = (
        len(marker) == 1
        or marker[1].split("\n", 1)[0].split(" of ")[0] == marker[1].split("\n", 1)[0].split(" of ")[1]
    )
    return (s.complete("Read every page") if last else s.tools(("next_page", {})))(request)


def measure(llm, app, agent_id: int, limit: int | None) -> dict:
    from jobs.refinement import run_refinement
    from models.db import estimate_tokens
    from tests import scripted_llm as s

    app.config["REFINEMENT_LEDGER_MAX_TOKENS"] = limit if limit is not None else 10**12
    llm.requests.clear()
    llm.raw_requests.clear()
    llm.script = [s.consent()] + ([] if limit is not None else [s.complete("Nothing to do")])
    llm.fallback = pager
    result = run_refinement(agent_id, "bench", force=True)
    assert result["status"] == "completed", result
    turns = [estimate_tokens(rendered_prompt(r).decode()) for r in llm.requests if r.get("tools")]
    consent = sum(estimate_tokens(rendered_prompt(r).decode()) for r in llm.requests if not r.get("tools"))
    return {
        "pages": (result["stats"] or {}).get("ledger_pages", 1),
        "turns": len(turns),
        "max_turn": max(turns),
        "median_turn": statistics.median(turns),
        "session": consent + sum(turns),
    }


def run(sizes: list[int]) -> list[dict]:
    from console import create_app
    from infra import embedded_redis
    from models import db
    from tests.scripted_llm import ScriptedLLM

    url = fresh_database(DB_NAME)
    os.environ["EMBEDDINGS"] = "hashed"
    os.environ.setdefault("OPENAI_API_KEY", "bench-key")
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
    default_limit = app.config["REFINEMENT_LEDGER_MAX_TOKENS"]
    llm = ScriptedLLM().start()
    rows = []
    try:
        with app.app_context():
            from flask_migrate import upgrade

            upgrade(revision="heads")
            for size in sizes:
                with db.engine.begin() as conn:
                    agent_id = bench_agent(
                        conn,
                        f"ledger-{size}",
                        model_id="scripted-model",
                        base_url=llm.url,
                        core_token_budget=100,
                    )
                    seed_memories(conn, agent_id, size - size // 50, "core", LEDGER)
                    conn.execute(sa.text(TWINS), {"agent": agent_id})
                with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                    # Fresh statistics, as after any bulk load (the session's dedup query plans by them).
                    conn.execute(sa.text("ANALYZE agent_memories"))
                db.session.remove()
                started = time.perf_counter()
                paged = measure(llm, app, agent_id, default_limit)
                print(f"{size:,}: paged session in {time.perf_counter() - started:.0f} s", flush=True)
                unpaged = measure(llm, app, agent_id, None)
                rows.append({"size": size, "limit": default_limit, "paged": paged, "unpaged": unpaged})
                print(json.dumps(rows[-1]), flush=True)
            db.session.remove()
            db.engine.dispose()
    finally:
        llm.stop()
        embedded_redis.stop(REDIS_DIR)
    return rows


def section(rows: list[dict]) -> str:
    limit = rows[0]["limit"] if rows else 0
    out = [
        "## Ledger paging: prompt tokens (`python -m bench.ledger`)",
        "",
        f"Real sessions against the scripted model; tokens by the product's estimate (ceil(chars / 4)) over the "
        f"tool schemas and messages of every request. Paged: `REFINEMENT_LEDGER_MAX_TOKENS` = {limit:,} (the "
        "default), a model that reads every page once (consent, `next_page` per page, then complete). Unpaged: "
        f"the whole ledger in one prompt, as before paging; consent and one turn. A {CONTEXT // 1000}k-token "
        "model holds the turn only where the last column says so.",
        "",
        "| core memories | pages | paged: largest turn | paged: whole session (turns) | unpaged: one turn | "
        f"unpaged: smallest session | unpaged turn fits {CONTEXT // 1000}k |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        p, u = r["paged"], r["unpaged"]
        out.append(
            f"| {r['size']:,} | {p['pages']} | {p['max_turn']:,} | {p['session']:,} ({p['turns']}) | "
            f"{u['max_turn']:,} | {u['session']:,} | {'yes' if u['max_turn'] <= CONTEXT else 'no'} |"
        )
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1k and 5k only")
    parser.add_argument("--sizes", help="comma-separated core memory counts (default 1000,5000,20000)")
    parser.add_argument("--merge", action="store_true", help="keep the --json file's rows of other sizes")
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument(
        "--section", metavar="FILE", help="write the Markdown section bench/results/report.md includes"
    )
    args = parser.parse_args()
    sizes = (
        [int(n) for n in args.sizes.split(",")]
        if args.sizes
        else [1_000, 5_000]
        if args.quick
        else [1_000, 5_000, 20_000]
    )
    rows = run(sizes)
    if args.merge and args.json and Path(args.json).exists():
        kept = [r for r in json.loads(Path(args.json).read_text()) if r["size"] not in sizes]
        rows = sorted(kept + rows, key=lambda r: r["size"])
    text = section(rows)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    if args.section:
        Path(args.section).write_text(text)


if __name__ == "__main__":
    main()
