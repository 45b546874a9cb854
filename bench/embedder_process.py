"""What the local embedder costs a process, with its exports' checks recorded on disk and without.

    .venv/bin/python -m bench.embedder_process --work questions [--rounds 3] [--texts 200] [--json FILE]
    .venv/bin/python -m bench.embedder_process --work batches [--rounds 3] [--texts 2000] [--json FILE]

Each run is a new process, as a gunicorn worker or an RQ worker is: it builds the app with
EMBEDDINGS=local, then

- `--work questions`, a web process's: asks `--texts` questions through `jobs.embeddings.query_vector`, one
  at a time (each a new text, so the cache of recent questions never answers);
- `--work batches`, a worker's: embeds `--texts` memories through the embedder as the embedding job does,
  `--batch` texts a call (default `jobs.relations.BATCH`, the job's).

It reports the resident memory the embedder added once the first question or batch was done (VmRSS), the
peak (VmHWM, over the app's own), the time to that first result, the p50 / p95 of the other questions
(or the whole run's texts a second, for batches), and whether PyTorch was imported. Two kinds of run,
alternated `--rounds` times in one cache directory that holds the exports:

- "recorded": the checks of both exports lie beside them (jobs/export_record.py);
- "checked against the model": the record of the export this work uses is removed before the run, so the
  process loads the model to check the export, as every process did before the records, and writes the
  record anew.

The texts: the labelled set's questions of bench/retrieval_quality.py, then its facts (questions); its
facts, then its distractor sentences (batches). Needs the `local-embeddings` extra.
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
# The work, and whether its export is the int8 one: a "checked against the model" run removes its record.
WORKS = {"questions": True, "batches": False}

# One process's run: the app, then the texts; one JSON line out.
RUN = """
import json, sys, time
def status(key):
    with open("/proc/self/status", encoding="ascii") as f:
        return int(next(l for l in f if l.startswith(key)).split()[1]) / 1024
from console import create_app
app = create_app({"SECRET_KEY": "bench", "DATABASE_URL": "sqlite://", "REDIS_URL": "embedded",
                  "EMBEDDINGS": "local"})
work, texts, size = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
with app.app_context():
    from jobs.embeddings import get_embedder, query_vector, semantic_embedder
    if work == "questions":
        units = [[text] for text in texts]
        run = lambda unit: query_vector(unit[0])
    else:
        units = [texts[i : i + size] for i in range(0, len(texts), size)]
        run = lambda unit: get_embedder().embed(unit)
    base = status("VmRSS:")
    started = time.perf_counter()
    run(units[0])
    first = (time.perf_counter() - started) * 1000
    rss = status("VmRSS:") - base
    times = []
    for unit in units[1:]:
        started = time.perf_counter()
        run(unit)
        times.append((time.perf_counter() - started) * 1000)
    embedder = semantic_embedder()
    print(json.dumps({"rss_mb": rss, "peak_mb": status("VmHWM:") - base, "first_ms": first, "ms": times,
                      "texts_after_first": sum(len(unit) for unit in units[1:]),
                      "torch": "torch" in sys.modules,
                      "path": embedder.question_path if work == "questions" else embedder.path}))
"""


def run_once(work: str, texts: list[str], cache: str, batch: int) -> dict:
    env = dict(os.environ, XDG_CACHE_HOME=cache, HF_HUB_OFFLINE="1", LLM_OFFLINE="1")
    out = subprocess.run(
        [sys.executable, "-c", RUN, work, json.dumps(texts), str(batch)], cwd=ROOT, env=env, capture_output=True,
        text=True, check=True, timeout=900,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def texts_for(work: str, count: int) -> list[str]:
    from bench.retrieval_quality import distractors, load_set

    labelled = load_set()
    facts = [item["fact"] for item in labelled]
    if work == "questions":
        return ([q for item in labelled for q in item["questions"]] + facts)[:count]
    return (facts + distractors(max(count - len(facts), 0)))[:count]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", choices=tuple(WORKS), default="questions")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--texts", type=int, help="questions (default 200) or memories (default 2,000)")
    parser.add_argument("--batch", type=int, help="batches: texts a call (default jobs.relations.BATCH)")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)

    from bench.peers import pct
    from jobs.relations import BATCH

    batch = args.batch or BATCH

    count = args.texts or (200 if args.work == "questions" else 2000)
    texts = texts_for(args.work, count)
    runs: dict[str, list[dict]] = {kind: [] for kind in KINDS}
    with tempfile.TemporaryDirectory(prefix="memconsole-embedder-") as cache:
        run_once(args.work, texts[:2], cache, batch)  # makes the export and its record: paid once per machine
        records = Path(cache, "memconsole", "onnx")
        for round_ in range(args.rounds):
            for kind in KINDS if round_ % 2 == 0 else KINDS[::-1]:
                if kind != "recorded":
                    for record in records.glob("*.record.json"):
                        if ("-int8." in record.name) == WORKS[args.work]:
                            record.unlink()
                runs[kind].append(run_once(args.work, texts, cache, batch))

    rows = []
    for kind in KINDS:
        row = {
            "kind": kind, "runs": len(runs[kind]), "path": runs[kind][0]["path"],
            "torch": any(run["torch"] for run in runs[kind]),
            "rss_mb": [round(run["rss_mb"]) for run in runs[kind]],
            "peak_mb": [round(run["peak_mb"]) for run in runs[kind]],
            "first_ms": [round(run["first_ms"]) for run in runs[kind]],
        }  # fmt: skip
        if args.work == "questions":
            times = [ms for run in runs[kind] for ms in run["ms"]]
            row |= {"p50_ms": round(statistics.median(times), 2), "p95_ms": pct(times, 0.95)}
        else:
            row["texts_per_s"] = [
                round(run["texts_after_first"] / sum(run["ms"]) * 1000) if run["ms"] else None
                for run in runs[kind]
            ]
        rows.append(row)
    unit = "question" if args.work == "questions" else "batch"
    print(
        f"\n## The local embedder in a process: {args.work} ({args.rounds} rounds, {len(texts)} texts a run)\n"
    )
    print(f"    .venv/bin/python -m bench.embedder_process --work {args.work} --rounds {args.rounds} "
          f"--texts {len(texts)}{f' --batch {batch}' if args.work == 'batches' else ''}\n")  # fmt: skip
    later = "next p50 / p95 ms" if args.work == "questions" else "the other batches, texts a second"
    print(f"| path | PyTorch loaded | + RSS MB | + peak MB | first {unit} ms | {later} |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        rest = (
            f"{row['p50_ms']} / {row['p95_ms']}"
            if args.work == "questions"
            else ", ".join(map(str, row["texts_per_s"]))
        )
        print(f"| {row['kind']}: {row['path']} | {'yes' if row['torch'] else 'no'} | "
              f"{', '.join(map(str, row['rss_mb']))} | {', '.join(map(str, row['peak_mb']))} | "
              f"{', '.join(map(str, row['first_ms']))} | {rest} |")  # fmt: skip
    if args.json:
        figures = {
            "work": args.work,
            "rounds": args.rounds,
            "texts": len(texts),
            "batch": batch,
            "rows": rows,
        }
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
