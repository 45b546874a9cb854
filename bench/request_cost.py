"""What one read request costs, counted rather than timed: for throughput work on a machine whose speed drifts.

    python -m bench.request_cost                         # seeds 100k memories (bench/api_load.py's), then counts
    python -m bench.request_cost --reuse --keep          # the database of an earlier --keep run
    python -m bench.request_cost --no-valgrind           # the CPU split only (seconds: it drifts)
    python -m bench.request_cost --reuse --keep --server-root /tmp/before   # another checkout's code, same questions

Read throughput on two cores is bounded by the CPU a request takes, and this project's machines change
speed by a quarter within minutes (bench/results/retrieval_notes.section.md), more than most changes to the
request path save. So this measures a change in instructions, which do not drift: the same read-only
natural-language questions as `bench/api_load.py --read-only --questions`, sent in-process through
Flask's test client (the whole app: authentication, the rate limiter in Redis, memory.query, the JSON
answer; not gunicorn), each question asked once to warm the caches (compiled statements, word figures)
and then again, measured. Under `valgrind --tool=callgrind` (Debian's valgrind) twice, measuring
`--requests` more questions the second time: the difference in the web process's instructions, divided
by them, is a request's count (two runs of the same code: within 1.5 %). PostgreSQL's side is
not counted (its own processes); the CPU split below times it.

Without valgrind (and first in every run): one pass of the same questions, timed, with the CPU each part
took a request: the web process (user and system time), PostgreSQL's processes, Redis, and the whole
machine (Linux /proc). Seconds, so for orientation, not for a before/after.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from bench import api_load
from bench.api_load import CpuMeter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOTAL = re.compile(r"^summary:\s*(\d+)", re.MULTILINE)


def instructions(callgrind_out: str) -> int:
    """The total instruction count of a callgrind output file (its `summary:` line)."""
    found = TOTAL.search(callgrind_out)
    if found is None:
        raise ValueError("no summary line: not a callgrind output file")
    return int(found.group(1))


def per_request(fewer: int, more: int, requests: int) -> float:
    """Instructions a request: the difference of two runs that measured `requests` questions apart."""
    if requests < 1 or more <= fewer:
        raise ValueError("the second run must measure more requests and count more instructions")
    return (more - fewer) / requests


def _ticks(prefixes: tuple[str, ...]) -> int:
    """CPU ticks (user + system) of every process whose name starts with one of `prefixes`."""
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm") as fh:
                named = fh.read().startswith(prefixes)
        except OSError:
            continue  # gone meanwhile
        fields = CpuMeter._stat(pid) if named else None
        if fields:
            total += int(fields[11]) + int(fields[12])
    return total


def drive(args) -> dict:
    """The child: warm with `--warm` questions, then ask the first `--measure` of them again."""
    os.environ.setdefault("EMBEDDINGS", "hashed")  # the seeded memories carry no vectors
    from console import create_app

    plan = api_load.plan_requests(
        argparse.Namespace(
            seed=args.seed, requests=max(args.warm, args.measure), read_only=True, questions=True
        ),
        api_load.Corpus(args.seed),
    )
    # Buffered bookkeeping (read times, events) is written once, at exit, not every API_FLUSH_SECONDS: under
    # valgrind a second holds forty times fewer requests, and the flusher's wake-ups would be counted too.
    app = create_app({"DATABASE_URL": args.database_url, "SECRET_KEY": "bench", "REDIS_URL": args.redis_url,
                      "API_RATE_LIMIT": "1000000/minute", "API_FLUSH_SECONDS": 3600})  # fmt: skip
    client = app.test_client()
    headers = {"Authorization": f"Bearer {args.token}"}

    def ask(items) -> None:
        for _, body in items:
            response = client.post("/api/v1/memory/query", json=body, headers=headers)
            if response.status_code != 200:
                raise SystemExit(
                    f"memory.query answered {response.status_code}: {response.get_data(as_text=True)[:200]}"
                )

    ask(plan[: args.warm])
    n = max(args.measure, 1)
    hz = os.sysconf("SC_CLK_TCK")
    started, times = time.perf_counter(), os.times()
    postgres, redis, busy = _ticks(("postgres",)), _ticks(("redis",)), CpuMeter._machine_ticks()[0]
    ask(plan[: args.measure])
    after = os.times()
    return {
        "requests": args.measure,
        "wall_ms": round((time.perf_counter() - started) * 1000 / n, 3),
        "web_user_ms": round((after.user - times.user) * 1000 / n, 3),
        "web_system_ms": round((after.system - times.system) * 1000 / n, 3),
        "postgresql_ms": round((_ticks(("postgres",)) - postgres) * 1000 / hz / n, 3),
        "redis_ms": round((_ticks(("redis",)) - redis) * 1000 / hz / n, 3),
        "machine_ms": round((CpuMeter._machine_ticks()[0] - busy) * 1000 / hz / n, 3),
    }


def _child(args, measure: int, token: str, valgrind: str | None, workdir: str) -> tuple[dict, int | None]:
    # Run as a script from this checkout, in --server-root's: that checkout's app answers (its `bench` package
    # gives the questions; bench/api_load.py's plan is the same in every commit that has this script's flags).
    command = [sys.executable, os.path.abspath(__file__), "--drive", "--database-url", api_load.db_url(args),
               "--redis-url", args.redis_url, "--token", token, "--seed", str(args.seed),
               "--warm", str(args.warm), "--measure", str(measure)]  # fmt: skip
    out = os.path.join(workdir, f"callgrind.{measure}")
    # One hash seed for every run: set and dict orders, and so the instructions, the same each time.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([args.server_root, ROOT]), PYTHONHASHSEED="0")
    if valgrind:
        # The system allocator under valgrind, in both runs alike: pymalloc's arenas are what it sees otherwise.
        env["PYTHONMALLOC"] = "malloc"
        command = [valgrind, "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=no", *command]
    done = subprocess.run(command, cwd=args.server_root, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"the measured run failed:\n{done.stderr[-2000:]}")
    split = json.loads(done.stdout.strip().splitlines()[-1])
    if not valgrind:
        return split, None
    with open(out) as fh:
        return split, instructions(fh.read())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pg-admin-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument(
        "--db-name", default="memconsole_api_load_cost", help="must start with memconsole_api_load"
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14")
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--warm", type=int, default=150, help="questions asked first, to warm the caches")
    parser.add_argument(
        "--requests", type=int, default=100, help="questions counted (the two runs' difference)"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--reuse", action="store_true", help="reuse the database of a --keep run")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    parser.add_argument("--no-valgrind", action="store_true", help="the timed CPU split only")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--server-root", default=ROOT,
                        help="the checkout whose app answers (default this one; `git worktree add` another for before/after)")  # fmt: skip
    # The child's own arguments (`drive`).
    parser.add_argument("--drive", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--database-url", help=argparse.SUPPRESS)
    parser.add_argument("--token", help=argparse.SUPPRESS)
    parser.add_argument("--measure", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.drive:
        print(json.dumps(drive(args)))
        return 0
    if not args.db_name.startswith("memconsole_api_load"):
        raise SystemExit("--db-name must start with memconsole_api_load: this script drops it")
    if args.requests < 1 or args.warm < args.requests:
        raise SystemExit(
            "--requests must be at least 1 and at most --warm (the counted questions are warm ones)"
        )
    valgrind = None if args.no_valgrind else shutil.which("valgrind")
    if not args.no_valgrind and valgrind is None:
        raise SystemExit("valgrind is not installed (apt-get install -y valgrind), or pass --no-valgrind")

    load_args = argparse.Namespace(pg_admin_url=args.pg_admin_url, db_name=args.db_name, redis_url=args.redis_url,
                                   memories=args.memories, relations=0.0, seed=args.seed)  # fmt: skip
    if args.reuse:
        _, token, held = api_load.reuse_database(load_args)
        print(f"reusing {args.db_name}: {held:,} memories", flush=True)
    else:
        api_load.create_database(load_args)
        agent_id, token = api_load.migrate_and_create_agent(load_args)
        api_load.seed(load_args, agent_id, api_load.Corpus(args.seed))
    figures: dict = {
        "memories": args.memories,
        "warm": args.warm,
        "requests": args.requests,
        "server_root": args.server_root,
    }
    try:
        with tempfile.TemporaryDirectory(prefix="memconsole-cost-") as workdir:
            figures["cpu"], _ = _child(args, args.warm, token, None, workdir)
            cpu = figures["cpu"]
            print(f"CPU a request, in-process, one client ({args.warm} warm questions): web process "
                  f"{cpu['web_user_ms']} ms user + {cpu['web_system_ms']} system, PostgreSQL {cpu['postgresql_ms']}, "
                  f"Redis {cpu['redis_ms']}, the whole machine {cpu['machine_ms']}", flush=True)  # fmt: skip
            if valgrind:
                fewer = args.warm - args.requests
                _, low = _child(args, fewer, token, valgrind, workdir)
                _, high = _child(args, args.warm, token, valgrind, workdir)
                assert low is not None and high is not None
                figures["instructions_per_request"] = round(per_request(low, high, args.requests))
                figures["instructions"] = {"fewer": low, "more": high}
                print(f"instructions a request in the web process: {figures['instructions_per_request']:,} "
                      f"(callgrind: {low:,} measuring {fewer} questions, {high:,} measuring {args.warm})")  # fmt: skip
    finally:
        if not args.keep:
            api_load.drop_database(load_args)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(figures, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
