"""Ways to embed one question with the local all-MiniLM-L6-v2, side by side in one process.

    .venv/bin/python -m bench.embedders [--questions 200] [--rounds 3]

For each way (jobs/local_embedder.py builds them all): the tokenisation alone and the whole embedding
of one text, p50 and p95 in milliseconds, timed interleaved (every text through every way in turn,
the order rotating), `--rounds` times over the texts; the resident memory each adds when it is built;
its agreement with the model's own encode() (the least cosine over the texts); and recall@10 on the
labelled questions of bench/retrieval_quality.py (its 500 memories embedded as a worker embeds them: by
the float32 export's batches, where LocalMiniLM keeps that export), with how many questions keep exactly
encode()'s ten neighbours in the same order. Then a worker's batch: those 500 memories through encode()
and through the export's batches, timed, and how near the two ways' vectors are.

The texts: the labelled set's questions, then its facts, up to `--questions`. Needs the
`local-embeddings` extra and onnxruntime (pyproject.toml). Offline: HF_HUB_OFFLINE=1.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def build_ways(embedder) -> tuple[dict[str, Callable], dict[str, tuple[str, Callable]], dict[str, float]]:
    """Tokenisers by name, ways (name -> (tokeniser's name, text -> vector)) and the MB each way adds."""
    from jobs import local_embedder, onnx_export

    model = embedder._model
    features = embedder._features
    tokenisers = {
        "preprocess()": lambda text: {n: features([text])[n].numpy() for n in local_embedder.INPUTS},
        "fast tokenizer": onnx_export.own_tokenizer(model),
    }
    direct = tokenisers["fast tokenizer"]

    def encode(text: str) -> np.ndarray:
        return local_embedder.normalised(model.encode([text], show_progress_bar=False))

    builders: dict[str, tuple[str, Callable[[], Callable]]] = {
        "encode() (mem0's way)": ("preprocess()", lambda: encode),
        "forward pass": ("preprocess()", lambda: embedder.forward),
        "trace float32, preprocess()": ("preprocess()", lambda: embedder.traced("float32", tokenisers["preprocess()"])),
        "trace float32": ("fast tokenizer", lambda: embedder.traced("float32", direct)),
    }  # fmt: skip
    if local_embedder._native_bf16():
        builders["trace bfloat16"] = ("fast tokenizer", lambda: embedder.traced("bfloat16", direct))
    for threads in (1, 2):
        builders[f"onnx float32, {threads} threads"] = (
            "fast tokenizer",
            lambda threads=threads: embedder.onnx(direct, quantised=False, threads=threads),
        )
        builders[f"onnx int8, {threads} threads"] = (
            "fast tokenizer",
            lambda threads=threads: _unchecked_int8(embedder, direct, threads),
        )
    ways, added = {}, {}
    for name, (tokeniser, build) in builders.items():
        gc.collect()
        before = rss_mb()
        try:
            ways[name] = (tokeniser, build())
        except Exception as error:  # a way this machine cannot run: reported, not timed
            print(f"  {name}: not available ({error})", flush=True)
            continue
        gc.collect()
        added[name] = rss_mb() - before
    return tokenisers, ways, added


def _unchecked_int8(embedder, tokens, threads: int) -> Callable:
    """The int8 session without the agreement check, so its figures show even where it fails it."""
    from jobs import local_embedder, onnx_export

    path = onnx_export.onnx_model(embedder._model, embedder._model_dir, quantised=True)
    session = onnx_export.onnx_session(path, threads)
    return lambda text: local_embedder.normalised(session.run(None, tokens(text))[0])


def timed(ways: dict, tokenisers: dict, texts: list[str], rounds: int) -> dict[str, list[float]]:
    """Milliseconds per text for every way and tokeniser, interleaved, the order rotating per text."""
    jobs = [(name, fn) for name, (_, fn) in ways.items()] + [(f"tok:{n}", f) for n, f in tokenisers.items()]
    times: dict[str, list[float]] = {name: [] for name, _ in jobs}
    for _ in range(rounds):
        for i, text in enumerate(texts):
            for name, fn in jobs[i % len(jobs) :] + jobs[: i % len(jobs)]:
                started = time.perf_counter()
                fn(text)
                times[name].append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from bench.retrieval_quality import distractors, load_set
    from jobs.local_embedder import LocalMiniLM

    labelled = load_set()
    facts = [item["fact"] for item in labelled]
    cases = [(q, i) for i, item in enumerate(labelled) for q in item["questions"]]
    texts = ([q for q, _ in cases] + facts)[: args.questions]

    base = rss_mb()
    embedder = LocalMiniLM()
    model_mb = rss_mb() - base
    tokenisers, ways, added = build_ways(embedder)
    for _, fn in ways.values():  # warm-up
        fn(texts[0])
    times = timed(ways, tokenisers, texts, args.rounds)

    memories = embedder.embed(facts + distractors())  # the worker's batch path (the float32 export's batches)
    reference = {q: ways["encode() (mem0's way)"][1](q)[0] for q, _ in cases}
    reference_top = {q: list(np.argsort(-(memories @ v))[:10]) for q, v in reference.items()}
    encoded = np.vstack([ways["encode() (mem0's way)"][1](t) for t in texts])

    print(f"\n## One question's embedding, local all-MiniLM-L6-v2 ({len(texts)} texts x {args.rounds})\n")
    print(f"    .venv/bin/python -m bench.embedders --questions {args.questions} --rounds {args.rounds}\n")
    print(f"The model itself: {model_mb:.0f} MB resident. Tokenisation alone, p50 / p95 ms:", end=" ")
    print(", ".join(f"{n} {_p(times['tok:' + n])}" for n in tokenisers) + ".\n")
    print(
        "| way | tokeniser | embed p50 / p95 ms | + RSS MB | least cosine to encode() | recall@10 | same top 10 |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, (tokeniser, fn) in ways.items():
        vectors = np.vstack([fn(t) for t in texts])
        least = float(np.min(np.sum(vectors * encoded, axis=1)))
        hits = same = 0
        for question, target in cases:
            top = list(np.argsort(-(memories @ fn(question)[0]))[:10])
            hits += target in top
            same += top == reference_top[question]
        recall = 100 * hits / len(cases)
        print(f"| {name} | {tokeniser} | {_p(times[name])} | {added[name]:.0f} | {least:.6f} | {recall:.1f} | "
              f"{same}/{len(cases)} |")  # fmt: skip
    batch_rows(embedder, facts + distractors(), [q for q, _ in cases])
    print(f"\nChosen for one question by LocalMiniLM on this machine: {_chosen()}.")


def _p(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} / {percentile(values, 0.95):.2f}"


def batch_rows(embedder, texts: list[str], questions: list[str]) -> None:
    """A worker's batch: encode() (the way before) against the float32 export's batches (the way now,
    `ExportRunner.batch`), over the same texts, batches of 64 sorted by length in both; then how near the
    two ways' vectors are, and whether `questions` (embedded by encode()) find the same ten among each."""
    from jobs import onnx_export

    fast = onnx_export.fast_tokenizer(embedder._model)
    export = onnx_export.onnx_model(embedder._model, embedder._model_dir)
    runner = onnx_export.session_runner(export, onnx_export.own_tokenizer(embedder._model), 2, fast)
    vectors: dict[str, np.ndarray] = {}

    def onnx_batches() -> None:
        vectors["export"] = runner.batch(texts)

    def encode() -> None:
        vectors["encode"] = onnx_export.normalised(
            embedder._model.encode(texts, batch_size=64, show_progress_bar=False)
        )

    runs: dict[str, list[float]] = {"encode()": [], "onnx float32, 2 threads": []}
    for _ in range(3):
        for name, fn in (("encode()", encode), ("onnx float32, 2 threads", onnx_batches)):
            started = time.perf_counter()
            fn()
            runs[name].append(time.perf_counter() - started)
    print(f"\nA worker's batch of {len(texts)} memories (best of 3): " + ", ".join(
        f"{name} {min(values):.2f} s" for name, values in runs.items()) + ".")  # fmt: skip
    least = float(np.min(np.sum(vectors["export"] * vectors["encode"], axis=1)))
    asked = onnx_export.normalised(embedder._model.encode(questions, show_progress_bar=False))
    same = sum(
        list(np.argsort(-(vectors["export"] @ v))[:10]) == list(np.argsort(-(vectors["encode"] @ v))[:10])
        for v in asked
    )
    print(f"The export's batch vectors against encode()'s: least cosine {least:.7f}; the same ten nearest, in "
          f"the same order, for {same} of {len(questions)} questions.")  # fmt: skip


def _chosen() -> str:
    from jobs.local_embedder import LocalMiniLM

    embedder = LocalMiniLM()
    embedder.embed(["Which qualification is Maya hoping to earn next?"])
    return embedder.path


if __name__ == "__main__":
    main()
