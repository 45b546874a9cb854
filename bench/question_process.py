"""What embedding questions costs a web process, with the question path recorded on disk and without.

    .venv/bin/python -m bench.question_process [--rounds 3] [--questions 200] [--json FILE]

A web process embeds nothing but memory.query's questions. Each run is a new process, as a gunicorn
worker is: it builds the app with EMBEDDINGS=local and asks `--questions` questions through
`jobs.embeddings.query_vector` (each a new text, so the cache of recent questions never answers). It
reports the resident memory the embedder added once the first question was answered (VmRSS), the peak
(VmHWM, over the app's own), the time to the first question's vector, the p50 / p95 of the others, and
whether PyTorch was imported. Two kinds of run, alternated `--rounds` times in one cache directory that
holds the exports:

- "recorded": a record of the checked int8 path lies beside the export (jobs/question_record.py);
- "checked against the model": no record (removed before the run), so the process loads the model to
  check the int8 export, as every process did before the record, and writes the record.

The questions: the labelled set's questions of bench/retrieval_quality.py, then its facts. Needs the
`local-embeddings` extra.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KINDS = ("recorded", "checked against the model")

# One web process's run: the app, then the questions; one JSON line out.
RUN = """
import json, sys, time
def status(key):
    with open("/proc/self/status", encoding="ascii") as f:
        return int(next(l for l in f if l.startswith(key)).split()[1]) / 1024
from console import create_app
app = create_app({"SECRET_KEY": "bench", "DATABASE_URL": "sqlite://", "REDIS_URL": "embedded",
                  "EMBEDDINGS": "local"})
texts = json.loads(sys.argv[1])
with app.app_context():
    from jobs.embeddings import query_vector, semantic_embedder
    base = status("VmRSS:")
    started = time.perf_counter()
    query_vector(texts[0])
    first = (time.perf_counter() - started) * 1000
    rss = status("VmRSS:") - base
    times = []
    for text in texts[1:]:
        started = time.perf_counter()
        query_vector(text)
        times.append((time.perf_counter() - started) * 1000)
    print(json.dumps({"rss_mb": rss, "peak_mb": status("VmHWM:") - base, "first_ms": first, "ms": times,
                      "torch": "torch" in sys.modules, "path": semantic_embedder().question_path}))
"""


def run_once(texts: list[str], cache: str) -> dict:
    env = dict(os.environ, XDG_CACHE_HOME=cache, HF_HUB_OFFLINE="1", LLM_OFFLINE="1")
    out = subprocess.run(
        [sys.executable, "-c", RUN, json.dumps(texts)], cwd=ROOT, env=env, capture_output=True, text=True,
        check=True, timeout=600,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)

    from bench.peers import pct
    from bench.retrieval_quality import load_set

    labelled = load_set()
    texts = [q for item in labelled for q in item["questions"]] + [item["fact"] for item in labelled]
    texts = texts[: args.questions]
    runs: dict[str, list[dict]] = {kind: [] for kind in KINDS}
    with tempfile.TemporaryDirectory(prefix="memconsole-question-") as cache:
        run_once(texts[:1], cache)  # makes the exports and the first record: paid once per machine
        records = Path(cache, "memconsole", "onnx")
        for round_ in range(args.rounds):
            for kind in KINDS if round_ % 2 == 0 else KINDS[::-1]:
                if kind != "recorded":
                    for record in records.glob("*.question.json"):
                        record.unlink()
                runs[kind].append(run_once(texts, cache))

    rows = []
    for kind in KINDS:
        times = [ms for run in runs[kind] for ms in run["ms"]]
        rows.append({
            "kind": kind, "runs": len(runs[kind]), "path": runs[kind][0]["path"],
            "torch": any(run["torch"] for run in runs[kind]),
            "rss_mb": [round(run["rss_mb"]) for run in runs[kind]],
            "peak_mb": [round(run["peak_mb"]) for run in runs[kind]],
            "first_ms": [round(run["first_ms"]) for run in runs[kind]],
            "p50_ms": round(statistics.median(times), 2), "p95_ms": pct(times, 0.95),
        })  # fmt: skip
    print(f"\n## A web process's questions ({args.rounds} rounds, {len(texts)} questions a run)\n")
    print(
        f"    .venv/bin/python -m bench.question_process --rounds {args.rounds} --questions {args.questions}\n"
    )
    print("| question path | PyTorch loaded | + RSS MB | + peak MB | first question ms | next p50 / p95 ms |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['kind']}: {row['path']} | {'yes' if row['torch'] else 'no'} | "
              f"{', '.join(map(str, row['rss_mb']))} | {', '.join(map(str, row['peak_mb']))} | "
              f"{', '.join(map(str, row['first_ms']))} | {row['p50_ms']} / {row['p95_ms']} |")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps({"rounds": args.rounds, "questions": len(texts), "rows": rows},
                                              indent=2) + "\n")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
