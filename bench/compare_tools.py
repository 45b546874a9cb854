"""Refinement tool calls and agent API creates before and after a change, measured in one run, rounds
interleaved.

    .venv/bin/python -m bench.compare_tools --before 009b767 [--rounds 2] [--runs 5]

Checks out `--before` in a temporary git worktree and runs this tree's `bench/core.py --only-tools`
against that revision's code and against this tree's alternately (before, after, before, after, ...), so
both are measured by the same benchmark under the same machine load. Each round re-creates the benchmark
database and migrates it with that revision's own migrations.
Writes bench/results/tool_calls_compare.json and the Markdown section
bench/results/tool_calls_compare.section.md, which `python -m bench --render` includes.
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
RESULTS = ROOT / "bench" / "results"


def _measure(cwd: Path, runs: int) -> list[dict]:
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "tools.json"  # must not exist yet: --only-tools merges into an existing file
        # This tree's benchmark file, the measured tree's code: its directory leads the import path.
        script = ROOT / "bench" / "core.py"
        env = {**os.environ, "PYTHONPATH": str(cwd)}
        subprocess.run(
            [sys.executable, str(script), "--only-tools", "--runs", str(runs), "--json", str(out)],
            cwd=cwd, env=env, check=True, timeout=1800, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        return json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the git revision to compare against")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    rev = subprocess.run(["git", "rev-parse", "--short", args.before], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.strip()  # fmt: skip
    after_rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True,
                               capture_output=True, text=True).stdout.strip()  # fmt: skip
    tree = Path(tempfile.mkdtemp(prefix="memconsole-before-"))
    subprocess.run(["git", "worktree", "add", "--detach", str(tree), rev], cwd=ROOT, check=True,
                   capture_output=True)  # fmt: skip
    rounds: dict[str, list[list[dict]]] = {"before": [], "after": []}
    try:
        for n in range(args.rounds):
            for label, cwd in (("before", tree), ("after", ROOT)):
                print(f"round {n + 1}: {label}", flush=True)
                rounds[label].append(_measure(cwd, args.runs))
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)
    rows = []
    for first in rounds["before"][0]:
        key = (first["name"], first["size"])

        def pick(label: str, field: str, key=key) -> float:
            values = [r[field] for run in rounds[label] for r in run if (r["name"], r["size"]) == key]
            return statistics.median(values)

        rows.append({
            "name": key[0], "size": key[1],
            "before_median_ms": pick("before", "median_ms"), "after_median_ms": pick("after", "median_ms"),
            "before_p95_ms": pick("before", "p95_ms"), "after_p95_ms": pick("after", "p95_ms"),
        })  # fmt: skip
    RESULTS.mkdir(exist_ok=True)
    payload = {"before": rev, "after": after_rev, "rounds": args.rounds, "runs": args.runs, "rows": rows}
    (RESULTS / "tool_calls_compare.json").write_text(json.dumps(payload, indent=1) + "\n")
    lines = [
        f"## Refinement tool calls and API creates before and after (`python -m bench.compare_tools --before {rev}`)",
        "",
        f"`{rev}` (before) and `{after_rev}` (after) measured alternately in one run, {args.rounds} rounds of "
        f"{args.runs} runs each; each figure is the median over the rounds of `bench.core`'s median (p95).",
        "",
        "| measurement | size | before median | after median | before p95 | after p95 |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['size']} | {r['before_median_ms']:.2f} ms | {r['after_median_ms']:.2f} ms "
            f"| {r['before_p95_ms']:.2f} ms | {r['after_p95_ms']:.2f} ms |"
        )
    (RESULTS / "tool_calls_compare.section.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
