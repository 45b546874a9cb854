"""The benchmark suite: one command runs every measurement and writes bench/results/report.md.

    .venv/bin/python -m bench                       # everything at the issue's sizes (about 40 minutes, and 7 for part pgvector)
    .venv/bin/python -m bench --quick               # small sizes, a few minutes: a rehearsal
    .venv/bin/python -m bench --parts core,api      # only some parts; the others keep their last results
    .venv/bin/python -m bench --render              # rewrite bench/results/report.md from bench/results/ only

Each part is its own script (runnable alone, see bench/README.md) and writes its figures as JSON under
bench/results/; this runner calls them one after another (never in parallel: the box has two cores),
then renders bench/results/report.md from every result file, the goals below, and bench/ANALYSIS.md (the
profiles, causes and before/after figures, written by hand). Everything runs against 127.0.0.1 only,
in databases the scripts create and drop, and stops by itself.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
DOC = RESULTS / "report.md"  # the full tables; docs/benchmarks.md gives each goal, figure and command
PYTHON = sys.executable
API_SIZES = (10_000, 100_000, 1_000_000)


def _run(name: str, command: list[str], timeout: int) -> None:
    print(f"\n=== {name}: {' '.join(command)}", flush=True)
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=False, timeout=timeout)  # a missed goal exits 1: still report
    print(f"=== {name}: {time.perf_counter() - started:.0f} s", flush=True)


def run_parts(parts: list[str], quick: bool) -> None:
    RESULTS.mkdir(exist_ok=True)
    q = ["--quick"] if quick else []
    if "core" in parts:
        _run("core", [PYTHON, "-m", "bench.core", *q, "--json", str(RESULTS / "core.json")], 3600)
    if "extras" in parts:
        _run("extras", [PYTHON, "-m", "bench.extras", *q, "--json", str(RESULTS / "extras.json")], 1800)
    if "api" in parts:
        for size in API_SIZES[:1] if quick else API_SIZES:
            _run(
                f"api {size:,}",
                [PYTHON, "bench/api_load.py", "--memories", str(size), "--clients", "1,4",
                 "--requests", "1000" if quick else "3000", "--json", str(RESULTS / f"api_{size}.json")],
                3600,
            )  # fmt: skip
    if "ledger" in parts:
        _run("ledger", [PYTHON, "-m", "bench.ledger", *q, "--json", str(RESULTS / "ledger.json"),
                        "--section", str(RESULTS / "ledger.section.md")], 1800)  # fmt: skip
    if "checkpointers" in parts:
        _run("checkpointers", [PYTHON, "-m", "bench.checkpointers", *q, "--json", str(RESULTS / "checkpointers.json"),
                               "--section", str(RESULTS / "checkpointers.section.md")], 1800)  # fmt: skip
    if "context" in parts:  # GET /api/v1/context at 100 / 1,000 / 5,000 core memories, beside memory.query
        _run("context", [PYTHON, "-m", "bench.context", *q, "--json", str(RESULTS / "context.json"),
                         "--section", str(RESULTS / "context.section.md")], 1800)  # fmt: skip
    if "quality" in parts:  # with the local-embeddings extra installed; lexical and BM25 only without it
        _run("quality", [PYTHON, "-m", "bench.retrieval_quality", "--json", str(RESULTS / "quality.json"),
                         "--section", str(RESULTS / "quality.section.md")], 1800)  # fmt: skip
    if "nl" in parts:  # natural-language questions in-process, then read-only throughput over HTTP
        nl_section = ["--section", str(RESULTS / "nl.section.md")]
        for database, size in (("sqlite", 10_000), ("postgresql", 100_000), ("postgresql", 1_000_000)):
            if quick and size > 10_000:
                continue
            # lexical at 1M: the goal; there, how far the bounded pool changes the answers
            extra = ["--no-vectors", "--agreement"] if size > 100_000 else []
            _run(f"nl {database} {size:,}", [PYTHON, "-m", "bench.nl_latency", "--database", database,
                 "--memories", str(size), *extra, "--json", str(RESULTS / f"nl_{database}_{size}.json"),
                 *nl_section], 3600)  # fmt: skip
        _run("reads 100,000", [PYTHON, "bench/api_load.py", "--memories", "10000" if quick else "100000",
             "--read-only", "--questions", "--clients", "1,8" if quick else "1,8,8,8",
             "--requests", "1000" if quick else "3000",
             "--json", str(RESULTS / "reads_100000.json")], 3600)  # fmt: skip
        _run("nl section", [PYTHON, "-c", "from bench.nl_latency import section, RESULTS; "
             "(RESULTS / 'nl.section.md').write_text(section(RESULTS))"], 60)  # fmt: skip
    if "vectors" in parts:  # needs the local-embeddings extra; embeds 100,000 sentences once (~6 min)
        _run("vectors", [PYTHON, "-m", "bench.vector_recall", *(["--memories", "20000"] if quick else []),
                         "--json", str(RESULTS / "vector_recall.json"),
                         "--section", str(RESULTS / "vector_recall.section.md")], 3600)  # fmt: skip
    if (
        "pgvector" in parts
    ):  # a PostgreSQL with pgvector from the pgserver wheel (dev extra); vectors as above
        _run("pgvector", [PYTHON, "-m", "bench.pgvector", *(["--memories", "20000"] if quick else []),
                          "--json", str(RESULTS / "pgvector.json"),
                          "--section", str(RESULTS / "pgvector.section.md")], 3600)  # fmt: skip
    if "peers" in parts:  # needs the bench-peers extra
        _run("peers", [PYTHON, "-m", "bench.peers", "--json", str(RESULTS / "peers.json"),
                       "--section", str(RESULTS / "peers.section.md")], 3600)  # fmt: skip
    if "workers" in parts:  # real RQ worker processes: about 40 minutes at the counts
        _run("workers", [PYTHON, "-m", "bench.workers", *q, "--json", str(RESULTS / "workers.json"),
                         "--section", str(RESULTS / "workers.section.md")], 5400)  # fmt: skip
    if "scale" in parts:  # the history at two sizes; the larger takes about 160 GB of disk uncompressed
        # (25 GB on the compressing cluster of scripts/scale_cluster.sh: set BENCH_POSTGRES_ADMIN_URL)
        sizes = [("1M", "10000", "1000000", "10000000"), ("100M", "100000", "10000000", "100000000")]
        if quick:
            sizes = [("quick", "1000", "100000", "1000000")]
        for label, agents, memories, audit in sizes:
            _run(f"scale {label}", [PYTHON, "-m", "bench.scale", "--label", label, "--agents", agents,
                 "--memories", memories, "--audit", audit, "--jobs", "2"], 14400)  # fmt: skip
        _run(
            "scale section", [PYTHON, "-m", "bench.scale", "--section", str(RESULTS / "scale.section.md")], 60
        )
    if "console" in parts:
        size = ["--agents", "1000", "--memories", "100000"] if quick else []
        _run("console", [PYTHON, "bench/console_pages.py", *size, "--runs", "10" if quick else "20",
                         "--json", str(RESULTS / "console.json")], 3600)  # fmt: skip


# ----- rendering -----


def _load(name: str):
    path = RESULTS / name
    return json.loads(path.read_text()) if path.exists() else None


def _fmt(value: float, unit: str = "ms") -> str:
    if unit == "%":
        return f"{value:.1f} %"
    if unit == "tokens":
        return f"{value:,.0f} tokens"
    return (f"{value:,.0f}" if value >= 100 else f"{value:.2f}") + f" {unit}"


def _api_rows() -> list[dict]:
    rows = []
    for size in API_SIZES:
        data = _load(f"api_{size}.json")
        for round_ in (data or {}).get("rounds", data if isinstance(data, list) else []):
            summary = round_.get("summary", {})
            for kind in ("bullets (all)", "bullets", "all"):
                if kind in summary:
                    s = summary[kind]
                    rows.append({"size": size, "clients": round_.get("clients"), "kind": kind, **s})
    return rows


def render() -> str:
    core, extras, console = _load("core.json") or [], _load("extras.json") or [], _load("console.json")
    api = _api_rows()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout
    out = [
        "# Benchmarks",
        "",
        "<!-- generated by `python -m bench --render` from bench/results/*.json and bench/ANALYSIS.md -->",
        "",
        f"Measured on this project's machine ({os.cpu_count()} cores, Python {platform.python_version()}, "
        "PostgreSQL 15 and Redis 7 on loopback), rendered "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC at commit `{commit.strip()}`. Every figure comes from "
        "`.venv/bin/python -m bench` (all parts, one after another), whose parts can be run alone: "
        "`python -m bench.core`, `python -m bench.extras`, `python bench/api_load.py --memories N`, "
        "`python bench/console_pages.py`. Medians and p95 over the stated runs; no timing is asserted "
        "in unit tests.",
        "",
    ]
    out += _summary(core, extras, api, console)
    if core:
        out += ["## Core (`python -m bench.core`)", "", *_table(core), ""]
    if extras:
        out += [
            "## Relations, checkpoints, prompt prefix (`python -m bench.extras`)",
            "",
            *_table(extras),
            "",
        ]
    if api:
        out += [
            "## memory.query over HTTP (`python bench/api_load.py --memories N --clients 1,4`)",
            "",
            "gunicorn (2 workers × 8 threads) on loopback, one agent holding N memories, a mixed plan "
            "(reads and audited writes), the client and the server on the same two cores.",
            "",
            "| memories | clients | requests | p50 ms | p95 ms | p99 ms | req/s |",
            "| ---: | ---: | --- | ---: | ---: | ---: | ---: |",
        ]
        for r in api:
            out.append(
                f"| {r['size']:,} | {r['clients']} | {r['kind']} | {r['p50']} | {r['p95']} | {r['p99']} "
                f"| {r.get('rps', '')} |"
            )
        out.append("")
    if console:
        counts = console.get("counts", {})
        out += [
            "## Console pages (`python bench/console_pages.py`)",
            "",
            "Data set: "
            + ", ".join(f"{n:,} {t}" for t, n in counts.items())
            + ". Flask test client, signed in.",
            "",
            "| page | median ms | p95 ms | runs |",
            "| --- | ---: | ---: | ---: |",
        ]
        out += [
            f"| {r['page']} | {r['median_ms']:.1f} | {r['p95_ms']:.1f} | {r['runs']} |"
            for r in console["results"]
        ]
        out.append("")
    # Sections other benchmark scripts write themselves (each names the command that produced it).
    for section in sorted(RESULTS.glob("*.section.md")):
        out += [section.read_text().rstrip(), ""]
    analysis = ROOT / "bench" / "ANALYSIS.md"
    if analysis.exists():
        out += [analysis.read_text().rstrip(), ""]
    return "\n".join(out)


def _table(rows: list[dict]) -> list[str]:
    lines = [
        "| measurement | size | median | p95 | runs | goal |",
        "| --- | --- | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        unit = r.get("unit", "ms")
        lines.append(
            f"| {r['name']} | {r['size']} | {_fmt(r['median_ms'], unit)} | {_fmt(r['p95_ms'], unit)} "
            f"| {r.get('runs', '')} | {r.get('goal', '')} |"
        )
    return lines


def _pick(rows: list[dict], name: str, size: str | None = None) -> dict | None:
    for r in rows:
        if r["name"].startswith(name) and (size is None or size in r["size"]):
            return r
    return None


def _summary(core, extras, api, console) -> list[str]:
    """The issue's rows, each against its goal."""
    lines = [
        "## Against the goals",
        "",
        "| what | size | figure | goal | met |",
        "| --- | --- | --- | --- | --- |",
    ]

    def add(what: str, size: str, figure: str, goal: str, met: bool | None) -> None:
        lines.append(
            f"| {what} | {size} | {figure} | {goal} | {'yes' if met else 'no' if met is False else '—'} |"
        )

    for size in API_SIZES:
        one = [r for r in api if r["size"] == size and r["clients"] == 1 and r["kind"] == "bullets (all)"]
        if one:
            r = one[0]
            add(
                "memory.query p95 (1 client)",
                f"{size:,} memories",
                f"p50 {r['p50']} / p95 {r['p95']} / p99 {r['p99']} ms",
                "p95 ≤ 15 ms at 100k",
                r["p95"] <= 15 if size == 100_000 else None,
            )
    for r in core:
        if r["name"] == "refinement tool call (DB + audit + breaker)":
            add(
                "refinement tool call",
                r["size"],
                f"median {_fmt(r['median_ms'])}, p95 {_fmt(r['p95_ms'])}",
                "≤ 5 ms per op, flat",
                r["median_ms"] <= 5,
            )
    scan = _pick(core, "over-budget scan", "10,000 agents")
    if scan:
        add(
            "over-budget scan",
            scan["size"],
            f"median {_fmt(scan['median_ms'])}, p95 {_fmt(scan['p95_ms'])}",
            "≤ 100 ms",
            scan["p95_ms"] <= 100,
        )
    dedup = [r for r in core if r["name"].startswith("nightly content-blind dedup, first")]
    if dedup:
        r = dedup[-1]
        add("content-blind dedup", r["size"], _fmt(r["median_ms"]), "≤ 10 s at 1M", r["median_ms"] <= 10_000)
    for name, goal, limit in (("session rollback", "≤ 50 ms", 50), ("point-in-time restore", "≤ 2 s", 2000)):
        r = _pick(core, name)
        if r:
            add(
                name,
                r["size"],
                f"median {_fmt(r['median_ms'])}, p95 {_fmt(r['p95_ms'])}",
                goal,
                r["p95_ms"] <= limit,
            )
    for r in extras:
        goal = r.get("goal") or ""
        limit = {"≤ 0.2 ms": 0.2, "≤ 5 ms": 5.0}.get(goal.split(" per")[0].split(",")[0].strip())
        if r.get("unit") == "%" and goal:
            add(r["name"], r["size"], _fmt(r["median_ms"], "%"), goal, r["median_ms"] >= 90)
        elif limit is not None:
            add(
                r["name"],
                r["size"],
                f"median {_fmt(r['median_ms'])}, p95 {_fmt(r['p95_ms'])}",
                goal,
                r["p95_ms"] <= limit,
            )
    for r in _load("ledger.json") or []:
        paged = r["paged"]
        add("refinement prompt, largest turn (ledger paging)", f"{r['size']:,} core memories",
            f"{paged['max_turn']:,} tokens; {paged['pages']} page(s); session {paged['session']:,} "
            f"(unpaged turn {r['unpaged']['max_turn']:,})", f"≤ {r['limit']:,} (REFINEMENT_LEDGER_MAX_TOKENS)",
            paged["max_turn"] <= r["limit"])  # fmt: skip
    for run in sorted(
        (json.loads(f.read_text()) for f in RESULTS.glob("nl_*.json")), key=lambda r: r["memories"]
    ):
        lexical, hybrid = run["cases"].get("lexical"), run["cases"].get("hybrid")
        limit = 25 if run["memories"] >= 1_000_000 else 10
        size = f"{run['memories']:,} memories, {run['database']}"
        if lexical:
            add("natural-language question, lexical (in-process)", size, f"p50 {lexical['p50']} / p95 "
                f"{lexical['p95']} ms", f"p95 ≤ {limit} ms", lexical["p95"] <= limit)  # fmt: skip
        if lexical and hybrid:
            extra = round(hybrid["p95"] - lexical["p95"], 2)
            add(
                "hybrid over lexical, p95 (query embedding apart)",
                size,
                f"+{extra} ms",
                "≤ +3 ms",
                extra <= 3,
            )
    reads = _load("reads_100000.json")
    # The 8-client round runs thrice (the machine's speed drifts): their median, and each.
    eights = [r for r in (reads or {}).get("rounds", []) if r["clients"] == 8]
    rates = [r["summary"]["all"]["rps"] for r in eights]
    if rates:
        rps = statistics.median(rates)
        # the machine's speed next to the figure it decides (bench/machine.py): lower is faster
        loops = [r["machine_loop_s"] for r in eights if r.get("machine_loop_s")]
        told = [f"median of {' / '.join(map(str, rates))}"] if len(rates) > 1 else []
        if loops:
            low, high = min(loops), max(loops)
            told.append(f"probe loop {low} s" if low == high else f"probe loop {low}-{high} s")
        add("read-only throughput, 8 clients over gunicorn", "100,000 memories",
            f"{rps} req/s" + (f" ({'; '.join(told)})" if told else ""), "≥ 300 req/s", rps >= 300)  # fmt: skip
    quality = _load("quality.json")
    if quality:
        rows = {(r["database"], r["method"]): r for r in quality["rows"]}
        bm25 = rows.get(("any", "BM25 (rank-bm25)"))
        for database in ("sqlite", "postgresql"):
            lexical, hybrid = rows.get((database, "lexical")), rows.get((database, "hybrid (default)"))
            if bm25 and hybrid:
                gain = round(hybrid["recall@10"] - bm25["recall@10"], 1)
                add(f"hybrid recall@10 over BM25 ({quality['embedder']})", database, f"+{gain} points",
                    "≥ +15 points", gain >= 15)  # fmt: skip
            if bm25 and lexical:
                add("lexical recall@10 against BM25", database, f"{lexical['recall@10']} vs {bm25['recall@10']}",
                    "never below BM25", lexical["recall@10"] >= bm25["recall@10"])  # fmt: skip
    peers = _load("peers.json")
    rows = {r["system"]: r for r in peers or [] if "error" not in r}  # bench.peers: one row a system
    ours, mem0 = rows.get("memory console"), [r for name, r in rows.items() if name.startswith("mem0")]
    if ours and mem0:
        fastest = min(mem0, key=lambda r: r["query_p95"])
        # Recall on the paraphrased questions and, where the run had them, on the identifier questions.
        recalls = [k for k in ("recall@10", "identifier_recall@10") if k in ours and k in fastest]

        def recall(r: dict) -> str:
            return ", ".join(
                f"{'identifiers ' if k.startswith('identifier') else ''}{r[k]} %" for k in recalls
            )

        add(f"peers: query p50 / p95 and recall@10, against the faster mem0 ({fastest['system']})",
            f"{ours['memories']:,} memories", f"{ours['query_p50']} / {ours['query_p95']} ms, {recall(ours)} "
            f"(mem0: {fastest['query_p50']} / {fastest['query_p95']} ms, {recall(fastest)})",
            "ahead on latency and recall", ours["query_p95"] <= fastest["query_p95"]
            and ours["query_p50"] <= fastest["query_p50"] and all(ours[k] >= fastest[k] for k in recalls))  # fmt: skip
    context = _load("context.json")
    if context:
        by = {(r["core_memories"], r["call"]): r for r in context["rows"]}
        calls = ("json rendered", "json kept", "context 304", "memory.query")
        rendered, kept, cached, query = (by.get((1000, c)) for c in calls)
        if rendered and kept and cached and query:
            add(
                "context block (JSON, read and rendered) against one memory.query, p50",
                "1,000 core memories",
                f"{rendered['p50_ms']} vs {query['p50_ms']} ms",
                "no slower",
                rendered["p50_ms"] <= query["p50_ms"],
            )
            add(
                "context block (JSON, kept rendering) against one memory.query, p50",
                "1,000 core memories",
                f"{kept['p50_ms']} vs {query['p50_ms']} ms",
                "no slower",
                kept["p50_ms"] <= query["p50_ms"],
            )
            add("context block 304 against the block read and rendered, p50", "1,000 core memories",
                f"{cached['p50_ms']} vs {rendered['p50_ms']} ms", "under a third",
                cached["p50_ms"] < rendered["p50_ms"] / 3)  # fmt: skip
    if console:
        worst = max(console["results"], key=lambda r: r["p95_ms"])
        counts = console.get("counts", {})
        add(
            "console pages (worst p95)",
            f"{counts.get('agents', 0):,} agents / {counts.get('agent_memories', 0):,} memories",
            f"{worst['page']}: p95 {worst['p95_ms']:.1f} ms",
            "≤ 100 ms",
            worst["p95_ms"] <= 100,
        )
    return [*lines, ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a rehearsal, not the figures")
    parser.add_argument(
        "--parts",
        default="core,extras,ledger,checkpointers,context,api,quality,vectors,pgvector,nl,console",
        help="comma-separated subset (also, not run by default: peers, with the bench-peers extra; workers; scale)",
    )
    parser.add_argument(
        "--render", action="store_true", help="only rewrite bench/results/report.md from bench/results"
    )
    args = parser.parse_args()
    if not args.render:
        run_parts([p.strip() for p in args.parts.split(",") if p.strip()], args.quick)
    DOC.write_text(render() + "\n", encoding="utf-8")
    print(f"\nwrote {DOC.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
