"""Calibration of memory.query's absolute `threshold` on the labelled set of bench/retrieval_quality.py.

    .venv/bin/python -m bench.relevance_threshold [--databases sqlite,postgresql] [--json out.json]

The same 500 memories (100 labelled facts, 400 distractors) in one agent; the 107 labelled questions, and
OFF_TOPIC: questions about none of them, most sharing a word or two with the memories ("weekly", "course",
"Friday", a person's name), the way an agent's unrelated question does. Each question goes through
`models.retrieval.query.search` at each threshold, top 10: lexical (the ranking without an embedder), or
with `--mode hybrid` the configured embedder's (EMBEDDINGS=local: the local MiniLM).
Reported per threshold: the labelled questions whose fact is still in the answer (recall@10), and the
off-topic questions answered with nothing. docs/reference/api.md ("`threshold` is absolute") gives the figures
and what the chosen value means.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
from pathlib import Path

from bench.retrieval_quality import PG_ADMIN_URL, TOP, distractors, load_set

PG_DB = "memconsole_bench_threshold"
THRESHOLDS = (0.0, 0.1, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.8)
OFF_TOPIC = [
    "quantum entanglement weekly",
    "What is the boiling point of mercury?",
    "How do I rotate a Kubernetes service account token?",
    "Who won the football match on Friday night?",
    "Explain the weekly tax filing rules for freelancers.",
    "What course of antibiotics treats strep throat?",
    "Which compiler flags speed up a Rust build?",
    "What is the capital of Mongolia?",
    "How many moons does Neptune have?",
    "Translate good morning into Finnish.",
    "What is the airspeed of an unladen swallow?",
    "Summarise the plot of Hamlet.",
    "Which stock exchange lists the company with ticker ASML?",
    "How do volcanoes form under the ocean?",
    "What time does the weekly farmers market in Lyon open?",
    "Recommend a sorting algorithm for nearly sorted data.",
    "Who painted the ceiling of the Sistine Chapel?",
    "What is the torque spec for a bicycle crank bolt?",
    "How long should sourdough proof in a cold fridge?",
    "What does the HTTP status code 418 mean?",
    "Is Pluto still a planet?",
    "What is the half-life of carbon fourteen?",
    "Which year did the Berlin Wall fall?",
    "How do I reset a router to factory settings?",
    "What is the wingspan of an albatross?",
]


def run_database(url: str, texts: list[str], cases: list[tuple[str, int]], mode: str) -> dict:
    from flask_migrate import upgrade

    from console import create_app
    from jobs import embeddings, relations
    from models import Agent, db
    from models.changes.mutations import create_memory
    from models.retrieval import query

    app = create_app({"DATABASE_URL": url, "SECRET_KEY": "bench", "REDIS_URL": "embedded",
                      "EMBEDDED_REDIS_DIR": tempfile.mkdtemp(prefix="memconsole-threshold-redis-")})  # fmt: skip
    out: dict = {}
    with app.app_context():
        upgrade(revision="heads")
        agent = Agent(name="threshold", role="supervisor")
        db.session.add(agent)
        db.session.commit()
        ids = [
            create_memory(agent.id, text, actor="admin:bench", memory_type="semantic", category="profile",
                          importance=3).id
            for text in texts
        ]  # fmt: skip

        if mode == "hybrid":
            if embeddings.semantic_embedder() is None:
                raise SystemExit("--mode hybrid needs a real embedder (EMBEDDINGS=local or an endpoint)")
            relations.backfill(relations.stale_memories([agent.id]))

        def search(question: str, threshold: float | None) -> list:
            dense = embeddings.query_vector(question) if mode == "hybrid" else None
            return query.search(agent.id, text=question, categories=["profile"], top_k=TOP,
                                threshold=threshold, mode=mode, dense=dense, with_match=True)  # fmt: skip

        for threshold in THRESHOLDS:
            found = sum(ids[target] in {h.id for h in search(q, threshold)} for q, target in cases)
            silent = sum(not search(q, threshold) for q in OFF_TOPIC)
            out[str(threshold)] = {
                "recall@10": round(found / len(cases), 3),
                "off_topic_empty": round(silent / len(OFF_TOPIC), 3),
            }
        # What the labelled facts and the off-topic questions' best answers match, for the distribution.
        out["labelled_fact_match"] = sorted(
            round(m, 3)
            for q, target in cases
            for h in search(q, None)
            if h.id == ids[target] and (m := h.match) is not None
        )
        out["off_topic_best_match"] = sorted(
            round(max((h.match or 0.0) for h in hits), 3) if (hits := search(q, None)) else 0.0
            for q in OFF_TOPIC
        )
        db.session.remove()
        db.engine.dispose()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", default="sqlite,postgresql")
    parser.add_argument("--mode", choices=("lexical", "hybrid"), default="lexical",
                        help="hybrid: with the configured embedder (EMBEDDINGS=local: the local MiniLM)")  # fmt: skip
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)
    os.environ.setdefault("LLM_OFFLINE", "1")
    if args.mode == "lexical":
        os.environ["EMBEDDINGS"] = "hashed"  # no embedder: the lexical ranking alone
    labelled = load_set()
    texts = [item["fact"] for item in labelled] + distractors()
    order = list(range(len(texts)))
    random.Random(5).shuffle(order)
    texts = [texts[i] for i in order]
    where = {old: new for new, old in enumerate(order)}
    cases = [(q, where[i]) for i, item in enumerate(labelled) for q in item["questions"]]
    results = {}
    for database in [d.strip() for d in args.databases.split(",") if d.strip()]:
        if database == "sqlite":
            folder = tempfile.mkdtemp(prefix="memconsole-threshold-")
            results[database] = run_database(f"sqlite:///{folder}/threshold.sqlite", texts, cases, args.mode)
        else:
            import sqlalchemy as sa

            admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
            with admin.connect() as conn:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{PG_DB}" WITH (FORCE)'))
                conn.execute(sa.text(f'CREATE DATABASE "{PG_DB}"'))
            try:
                results[database] = run_database(
                    PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + PG_DB, texts, cases, args.mode
                )
            finally:
                with admin.connect() as conn:
                    conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{PG_DB}" WITH (FORCE)'))
                admin.dispose()
    print(
        f"{args.mode}: {len(texts)} memories, {len(cases)} labelled questions, {len(OFF_TOPIC)} off-topic\n"
    )
    print("| database | threshold | labelled recall@10 | off-topic answered with nothing |")
    print("| --- | ---: | ---: | ---: |")
    for database, figures in results.items():
        for threshold in THRESHOLDS:
            row = figures[str(threshold)]
            print(f"| {database} | {threshold} | {row['recall@10']} | {row['off_topic_empty']} |")
    for database, figures in results.items():
        print(f"\n{database} off-topic best match: {figures['off_topic_best_match']}")
        labelled_matches = figures["labelled_fact_match"]
        print(f"{database} labelled facts' match (found in top {TOP}): {len(labelled_matches)} values, "
              f"quartiles {labelled_matches[len(labelled_matches) // 4]} / "
              f"{labelled_matches[len(labelled_matches) // 2]} / {labelled_matches[3 * len(labelled_matches) // 4]}")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
