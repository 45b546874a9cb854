"""memory.query beside mem0 + FAISS and BM25 on conversational memory sets, question by question, in one process.

    pip install -e '.[local-embeddings,bench-peers]'
    .venv/bin/python -m bench.conversational --set life_log,team_chat [--seed 0] [--systems ...] [--dated] [--json F] [--section F]

The sets come from ten independent generators (bench/conversations/), each written by someone who saw
neither the others nor the retrieval code: `life_log`, friends' dated life events over months of chat
sessions; `team_chat`, what an agent in a small company's team chat remembers of colleagues, projects,
incidents and rotas; `support_desk`, what a provider's support desk remembers of its customers (plans,
devices, moves, technician visits that move, tickets); `assistant_notes`, what a personal assistant notes
about several users; `household`, what a household's assistant remembers of a family (schools,
appointments that move, pets, repairs, relatives, trips, order numbers); `vet_clinic`, what a veterinary
practice's front desk remembers of its clients and their animals, written after every choice below was
made; `tutoring_center`, what a tutoring centre's assistant remembers of its students, their families and
tutors, written after vet_clinic was reported; `travel_desk`, what a travel agency's assistant remembers
of its clients, their companions, trips that move and booking codes, written while the choice of codes
not bridged was being made, from a brief that left its users to its writer; `friends_chat`, chats
between two friends stored turn by turn as said, written after LoCoMo showed that turns behave unlike
notes; `chat_facts`, the short third-person facts drawn from such chats, written after LoCoMo's
observations showed memory.query's lead over mem0 shrinking on them. Every retrieval choice (the
embedder's path, fusion, weights, the second hops, identifiers, spans, the best hit's user) is made on
the development sets, `life_log`, `team_chat`, `support_desk`, `friends_chat` and `chat_facts`
(team_chat and support_desk were held out until the choices they were first reported under were made,
and are development since: docs/benchmarks.md); the other five are held out, reported as they came out.
`--locomo PATH` runs LoCoMo too, the public benchmark no one here wrote, from a copy of its data
(bench/locomo.py): only ever reported, never swept; with `--locomo-observations`, its observations (the
facts its authors drew from the turns) are the memories instead of its turns.

Each agent of a set is one memory store. Every system gets the same memories, and each question is asked
of its own agent's store by every system in turn, the order rotating question by question, so the
machine's drift falls on all alike:

- **memory.query**: memories written through the mutation path (audited) on SQLite, vectors stored by the
  embedding job (`relations.backfill`); a question embedded by the configured local embedder (no cache:
  each question is new), then `models.retrieval.query.search`, memory.query's ranking — hybrid, and
  lexical alone (no embedding) as a second row; where `--systems` names it, hybrid with the question's
  rest too (QUERY_REST: `memory.query with its rest`);
- **mem0 + FAISS** (`mem0ai`, `add(..., infer=False)`: no LLM; FAISS, its fastest local store; the same
  MiniLM through sentence-transformers' `encode()`), one mem0 user per agent;
- **BM25**: rank_bm25's BM25Okapi over lower-cased words, one index per agent (not timed: a baseline of
  quality only).

Reported per system and question kind: recall@5 and @10 (the share of a question's evidence memories in
the top k, averaged), MRR@10 (the first evidence memory's rank); per timed system p50 / p95 per question
(embedding included); for memory.query the embedding's share of a question, and the resident memory the
embedder added; for memory.query, hybrid and lexical, the SQL statements a question sent on average (a
figure the machine's speed does not move, so runs of different hours compare). Everything is written
under a temporary directory; loopback only; it stops by itself.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import re
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import locomo  # noqa: E402
from bench.dating import dated_now, write_clock  # noqa: E402
from bench.machine import cpu_model, int8_flags, packages  # noqa: E402
from bench.peers import mem0_config, pct, rss_mb  # noqa: E402

# Choices are made on the development sets; the others are only reported.
DEVELOPMENT = ("life_log", "team_chat", "support_desk", "friends_chat", "chat_facts")
HELD_OUT = ("assistant_notes", "household", "vet_clinic", "tutoring_center", "travel_desk")
SETS = DEVELOPMENT + HELD_OUT
SYSTEMS = ("memory.query", "memory.query lexical", "mem0 + FAISS", "BM25")
# memory.query with the question's rest (QUERY_REST, models/retrieval/rest.py), asked only where --systems
# names it.
WITH_REST = "memory.query with its rest"
TIMED = ("memory.query", "memory.query lexical", WITH_REST, "mem0 + FAISS")
# The distributions a run's figures depend on, recorded with them.
PACKAGES = (
    "onnxruntime",
    "onnx",
    "torch",
    "sentence-transformers",
    "tokenizers",
    "numpy",
    "mem0ai",
    "faiss-cpu",
)
# Each sweep's flag: (its kind in bench/conversational_choices.py, what it measures).
SWEEP_FLAGS = {
    "--sweep": ("fusion", "memory.query's fusion settings"),
    "--sweep-bridges": ("bridges", "the second hop's settings"),
    "--sweep-subjects": ("subjects", "the leading hit's user's memories' settings"),
    "--sweep-recency": ("recency", "recency's weight and scale, dated"),
    "--sweep-scale": ("scale", "lexical relevance's scale, dated"),
    "--sweep-missing": ("missing", "the cosine a lexical candidate outside the nearest counts, dated"),
    "--sweep-share": ("share", "the fusion's lexical share, dated"),
    "--sweep-nearest": ("nearest", "how many memories nearest by vector join the candidates, dated"),
    "--sweep-openers": ("openers", "whether a sentence's first word is taken as a name, dated"),
    "--sweep-crowded": (
        "crowded",
        "how many of its agent's memories a name the hop asks for may be held by, dated",
    ),
    "--sweep-feedback": (
        "feedback",
        "the question's vector moved toward its nearest memories before they are looked for again, dated",
    ),
    "--sweep-rest": (
        "rest",
        "the question without its leading hit's words, embedded each way and looked for among that hit's user's, dated",
    ),
    "--sweep-leader": (
        "leader",
        "among how many leading hits the second hops look for the first holding the question's names, dated",
    ),
    "--ablate": ("ablate", "each retrieval choice undone in turn"),
}
KINDS = ("single-hop", "paraphrase", "multi-hop", "temporal", "identifier")
CATEGORY = "event"  # one retrieved (`context: rag`) category for every memory
# memory.query's ranking weighs recency by `updated_at` against `now`, and every memory is written when the
# benchmark runs (its `created_at` the set's date, its `updated_at` the moment of writing): on the wall
# clock, memories differed in recency by the seconds between their writing and a question, enough to
# reorder near ties from run to run. Every question is asked as of this instant (naive UTC, as
# models.db.utcnow), before any write: each memory's age counts as zero, recency is the same for all, and a
# re-run ranks alike. The sets therefore measure no recency, unless `--dated` (bench/dating.py) writes each
# memory at its own date and asks each agent's questions the day after its last.
AS_OF = datetime(2026, 11, 29)


def load(name: str, seed: int) -> dict:
    return importlib.import_module(f"bench.conversations.{name}").generate(seed)


class Console:
    """memory.query in this process: one agent per store, on SQLite, with the local embedder."""

    embedder_rss_mb = 0.0  # what loading the embedder and a first question added to the process
    embedder_model_loaded: bool | None = None  # whether that loaded the local model (PyTorch), or only the
    # recorded int8 path (jobs/export_record.py); None: another embedder

    def __init__(self, workdir: str, dated: bool = False) -> None:
        os.environ["EMBEDDINGS"] = "local"
        os.environ.setdefault("LLM_OFFLINE", "1")
        from flask_migrate import upgrade
        from sqlalchemy import event

        from console import create_app
        from models import db

        self.app = create_app({"DATABASE_URL": f"sqlite:///{workdir}/console.sqlite", "SECRET_KEY": "bench",
                               "REDIS_URL": "embedded", "EMBEDDED_REDIS_DIR": f"{workdir}/redis"})  # fmt: skip
        self.context = self.app.app_context()
        self.context.push()
        upgrade(revision="heads")
        self.db = db
        before = rss_mb()
        from jobs.embeddings import get_embedder

        self.embedder = get_embedder()  # one per process: a second set reuses the first's
        self.embedder.embed(["warm up"], query=True)
        if not Console.embedder_rss_mb:
            Console.embedder_rss_mb = round(rss_mb() - before, 1)
            if hasattr(self.embedder, "loaded"):  # the local model's
                Console.embedder_model_loaded = self.embedder.loaded is not None
        self.agents: dict[str, int] = {}
        self.set_id: dict[int, str] = {}  # memory id -> the set's memory id
        self.embed_ms: list[float] = []
        # The SQL statements each question of a mode sent: a figure the machine's speed does not move.
        self.statements: dict[str, list[int]] = defaultdict(list)
        self._sent = 0
        event.listen(db.engine, "before_cursor_execute", self._count)
        self.dated = dated
        self.now: dict[str, datetime] = {}  # `dated`: when each agent's questions are asked (`dated_now`)

    def _count(self, *_: object) -> None:
        self._sent += 1

    def add(self, key: str, memories: list[dict]) -> None:
        from jobs import relations
        from models import Agent
        from models.changes.mutations import create_memory

        agent = Agent(name=f"conv-{key}", role="supervisor", core_token_budget=10**9)
        self.db.session.add(agent)
        self.db.session.commit()
        self.agents[key] = agent.id
        if self.dated:
            self.now[key] = dated_now(memories)
        with write_clock(self.dated) as clock:
            for m in memories:
                created = datetime.fromisoformat(m["created_at"])
                clock(created)
                row = create_memory(agent.id, m["content"], actor="agent", memory_type="semantic",
                                    category=CATEGORY, user_id=m["user"], created_at=created)  # fmt: skip
                self.set_id[row.id] = m["id"]
        self.db.session.commit()
        relations.backfill(relations.stale_memories([agent.id]))

    def asked_at(self, key: str) -> datetime:
        """The instant an agent's questions are asked as of: the day after its last memory when `dated`,
        else AS_OF."""
        return self.now.get(key, AS_OF)

    def search(self, key: str, question: str, mode: str = "hybrid", rest: bool = False) -> list[str]:
        """`key`'s agent's memories memory.query ranks first for `question`, by `mode`; `rest`: with the
        question's rest, as the agent API embeds it under QUERY_REST (models/retrieval/rest.py)."""
        from jobs.embeddings import rest_vector
        from models.retrieval import query

        dense = None
        if mode != "lexical":
            started = time.perf_counter()
            vector = self.embedder.embed([question], query=True)[0]  # no cache: each question pays it
            if not rest:  # memory.query's row reports the embedding's share of its own time
                self.embed_ms.append((time.perf_counter() - started) * 1000)
            dense = (self.embedder.label, vector)
        sent = self._sent
        hits = query.search(self.agents[key], text=question, categories=[CATEGORY], top_k=10, dense=dense,
                            mode=mode, now=self.asked_at(key), rest_vector=rest_vector if dense and rest else None)  # fmt: skip
        self.statements[WITH_REST if rest else mode].append(self._sent - sent)
        self.db.session.rollback()
        return [self.set_id[h.id] for h in hits]


class Mem0:
    """mem0 with FAISS and the same MiniLM, no LLM; one mem0 user per store."""

    def __init__(self, workdir: str) -> None:
        os.environ["MEM0_TELEMETRY"] = "False"
        from mem0 import Memory

        self.memory = Memory.from_config(mem0_config(workdir, "faiss", "conversational"))
        self.set_id: dict[str, str] = {}

    def add(self, key: str, memories: list[dict]) -> None:
        for m in memories:
            result = self.memory.add(m["content"], user_id=key, infer=False)
            for item in result.get("results", []):
                self.set_id[item["id"]] = m["id"]

    def search(self, key: str, question: str) -> list[str]:
        found = self.memory.search(question, filters={"user_id": key}, top_k=10)
        return [self.set_id[r["id"]] for r in found.get("results", []) if r["id"] in self.set_id]


WORD = re.compile(r"[a-z0-9]+")


class BM25:
    def __init__(self) -> None:
        self.indexes: dict[str, tuple] = {}

    def add(self, key: str, memories: list[dict]) -> None:
        from rank_bm25 import BM25Okapi

        self.indexes[key] = (BM25Okapi([WORD.findall(m["content"].lower()) for m in memories]),
                             [m["id"] for m in memories])  # fmt: skip

    def search(self, key: str, question: str) -> list[str]:
        index, ids = self.indexes[key]
        scores = index.get_scores(WORD.findall(question.lower()))
        best = sorted(range(len(ids)), key=lambda i: -scores[i])[:10]
        return [ids[i] for i in best if scores[i] > 0]


def score(found: list[str], evidence: list[str]) -> dict[str, float]:
    wanted = set(evidence)
    first = next((rank for rank, memory in enumerate(found[:10], 1) if memory in wanted), None)
    return {
        "recall@5": len(wanted & set(found[:5])) / len(wanted),
        "recall@10": len(wanted & set(found[:10])) / len(wanted),
        "mrr@10": 1 / first if first else 0.0,
    }


def run(
    set_name: str,
    seed: int,
    systems: list[str],
    max_agents: int | None,
    data: dict | None = None,
    dated: bool = False,
) -> dict:
    """One set's run; `data`, a set not made by a generator (LoCoMo's: bench/locomo.py); `dated`: memories
    written at their own dates and asked the day after each agent's last (`write_clock`, `dated_now`)."""
    data = data or load(set_name, seed)
    kinds = data.get("kinds", KINDS)
    agents = data["agents"][:max_agents] if max_agents else data["agents"]
    workdir = tempfile.mkdtemp(prefix="memconsole-conversational-")
    try:
        console = Console(workdir, dated) if any(s.startswith("memory.query") for s in systems) else None
        mem0 = Mem0(workdir) if "mem0 + FAISS" in systems else None
        bm25 = BM25() if "BM25" in systems else None
        for agent in agents:
            for system in (console, mem0, bm25):
                if system is not None:
                    system.add(agent["key"], agent["memories"])
        ask = {
            "memory.query": lambda key, q: console.search(key, q, "hybrid"),
            "memory.query lexical": lambda key, q: console.search(key, q, "lexical"),
            WITH_REST: lambda key, q: console.search(key, q, "hybrid", rest=True),
            "mem0 + FAISS": lambda key, q: mem0.search(key, q),
            "BM25": lambda key, q: bm25.search(key, q),
        }
        for agent in agents[:1]:  # warm-up questions, not counted
            for question in agent["questions"][:5]:
                for system in systems:
                    ask[system](agent["key"], question["text"] + " ?")
        if console is not None:
            console.embed_ms.clear()
            console.statements.clear()
        times: dict[str, list[float]] = defaultdict(list)
        scores: dict[tuple[str, str], list[dict]] = defaultdict(list)
        n = 0
        for agent in agents:
            for question in agent["questions"]:
                order = systems[n % len(systems):] + systems[: n % len(systems)]  # fmt: skip
                n += 1
                for system in order:
                    started = time.perf_counter()
                    found = ask[system](agent["key"], question["text"])
                    times[system].append((time.perf_counter() - started) * 1000)
                    result = score(found, question["evidence"])
                    scores[(system, question["kind"])].append(result)
                    scores[(system, "all")].append(result)
        rows = []
        for system in systems:
            row: dict = {"system": system}
            for kind in ("all", *kinds):
                got = scores[(system, kind)]
                if got:
                    row[kind] = {m: round(sum(g[m] for g in got) / len(got), 3) for m in got[0]} | {
                        "n": len(got)
                    }
            if system in TIMED:
                row["p50_ms"], row["p95_ms"] = pct(times[system], 0.5), pct(times[system], 0.95)
            if system.startswith("memory.query") and console is not None:
                sent = console.statements[
                    {"memory.query lexical": "lexical", WITH_REST: WITH_REST}.get(system, "hybrid")
                ]
                row["statements_per_question"] = round(sum(sent) / len(sent), 2) if sent else None
            if system == "memory.query" and console is not None and console.embed_ms:
                row["embed_p50_ms"] = pct(console.embed_ms, 0.5)
                row["embed_share"] = round(sum(console.embed_ms) / sum(times[system]), 2)
                row["embedder_rss_mb"] = console.embedder_rss_mb
                row["embedder_model_loaded"] = console.embedder_model_loaded
                row["embedder"] = (
                    f"{console.embedder.label}, questions {getattr(console.embedder, 'question_path', '')}".rstrip(
                        ", "
                    )
                )
            rows.append(row)
        return {
            "set": set_name,
            "seed": seed,
            "held_out": set_name in HELD_OUT or set_name in locomo.NAMES,
            "kinds": list(kinds),
            "uncited": data.get("uncited", 0),
            "agents": len(agents),
            "memories": sum(len(a["memories"]) for a in agents),
            "questions": n,
            "generated": datetime.now(UTC).strftime("%Y-%m-%d"),
            "machine": f"{platform.machine()} ({cpu_model()}), {os.cpu_count()} CPUs, Python {platform.python_version()}",
            "int8_flags": int8_flags(),
            "packages": packages(*PACKAGES),
            "load_average": round(os.getloadavg()[0], 1),
            "dated": dated,
            "rows": rows,
        }
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def section(results: list[dict]) -> str:
    lines = ["## Conversational sets: memory.query beside mem0 + FAISS and BM25", ""]
    for result in results:
        public = result["set"] in locomo.NAMES
        role = (
            "public, held out: no one here wrote it; run as it came"
            if public
            else "held out: reported once the choices were made"
            if result["held_out"]
            else "development: every choice made here"
        )
        command = "--locomo PATH" if public else f"--set {result['set']} --seed {result['seed']}"
        command += " --locomo-observations" if result["set"] == locomo.OBSERVATIONS else ""
        command += " --dated" if result.get("dated") else ""
        kinds = result.get("kinds", KINDS)
        lines += [
            f"### `{result['set']}` ({role})",
            "",
            f"`python -m bench.conversational {command}` ({result['generated']}, "
            f"{result['machine']}, load average {result['load_average']}): {result['agents']} agents, "
            f"{result['memories']:,} memories, {result['questions']:,} questions"
            + (
                f" ({result['uncited']} more cite no turn "
                + ("an observation draws on" if result["set"] == locomo.OBSERVATIONS else "the set holds")
                + ": left out)"
                if result.get("uncited")
                else ""
            )
            + ", each asked of every system in turn in one process. Recall@k: the share of a question's evidence "
            "memories in the top k.",
            "",
            "| system | recall@5 | recall@10 | MRR@10 | p50 ms | p95 ms |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for row in result["rows"]:
            a = row["all"]
            lines.append(f"| {row['system']} | {a['recall@5']:.3f} | {a['recall@10']:.3f} | {a['mrr@10']:.3f} | "
                         f"{row.get('p50_ms', '—')} | {row.get('p95_ms', '—')} |")  # fmt: skip
        lines += ["", "Recall@10 by question kind:", "", "| system | " + " | ".join(kinds) + " |",
                  "| --- |" + " ---: |" * len(kinds)]  # fmt: skip
        for row in result["rows"]:
            cells = [f"{row[k]['recall@10']:.3f} ({row[k]['n']})" if k in row else "—" for k in kinds]
            lines.append(f"| {row['system']} | " + " | ".join(cells) + " |")
        for row in result["rows"]:
            if "embed_share" in row:
                lines += ["", f"memory.query's embedder: {row['embedder']}; a question's embedding p50 "
                          f"{row['embed_p50_ms']} ms, {row['embed_share']:.0%} of memory.query's time; the embedder "
                          f"and its first question added {row['embedder_rss_mb']} MB of resident memory"
                          + {True: " (the model loaded)", False: " (the recorded question path: no PyTorch)",
                             None: ""}[row.get("embedder_model_loaded")] + "."]  # fmt: skip
        sent = [f"{row['system']} {row['statements_per_question']}" for row in result["rows"]
                if row.get("statements_per_question") is not None]  # fmt: skip
        if sent:
            lines += ["", f"SQL statements a question sent, on average: {', '.join(sent)}."]
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--set", help=f"one of {', '.join(SETS)}, or several, comma-separated (default: the development sets)"
    )
    parser.add_argument(
        "--locomo",
        metavar="PATH",
        help="also LoCoMo, from a copy of its data (bench/locomo.py); alone unless --set is given",
    )
    parser.add_argument(
        "--locomo-observations",
        action="store_true",
        help="with --locomo: its observations as the memories instead of its turns (bench/locomo.py)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--agents", type=int, help="only the first N agents of a set (a quick run)")
    parser.add_argument("--threads", type=int, default=1, help="PyTorch's threads (0: its default)")
    parser.add_argument(
        "--question-threads", type=int, help="ONNX Runtime's threads for memory.query's question"
    )
    parser.add_argument(
        "--question-float32",
        action="store_true",
        help="memory.query's question through the float32 export, as a text to store, not the int8 one",
    )
    parser.add_argument(
        "--no-question-delta",
        action="store_true",
        help="memory.query's question by the model's own weights, without the question's delta",
    )
    for flag, (kind, what) in SWEEP_FLAGS.items():
        parser.add_argument(flag, dest="kind", action="store_const", const=kind, help=f"{what}, recall only")
    parser.add_argument(
        "--dated",
        action="store_true",
        help="write each memory at its own date and ask the day after each agent's last (recency counts)",
    )
    parser.add_argument("--json")
    parser.add_argument("--section")
    args = parser.parse_args(argv)
    kind = args.kind  # the sweep a flag asks for (bench/conversational_choices.py), if any
    sweeping = kind is not None
    if args.dated and sweeping:
        from bench.conversational_choices import DATED

        parser.error(
            f"--dated is a run's setting; the {', '.join(DATED)} sweeps are dated, the others ask as of AS_OF"
        )
    if args.locomo_observations and not args.locomo:
        parser.error("--locomo-observations reads the copy --locomo PATH names")
    if args.locomo and sweeping:
        parser.error("LoCoMo is only reported: every choice is made on the development sets")
    args.set = args.set if args.set is not None else "" if args.locomo else ",".join(DEVELOPMENT)
    os.environ["HF_HUB_OFFLINE"] = "1"
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)  # one setting for the process: both systems' models run under it
    if args.question_threads:
        from jobs.local_embedder import LocalMiniLM

        LocalMiniLM.QUESTION_THREADS = args.question_threads  # before the embedder is built
    if args.question_float32:
        from jobs.local_embedder import LocalMiniLM

        # No int8 export agrees with the model exactly, so the question takes a stored text's path.
        LocalMiniLM.QUESTION_AGREEMENT = 1.0
    if args.no_question_delta:
        from jobs.local_embedder import LocalMiniLM

        LocalMiniLM.QUESTION_DELTA = None  # before the embedder is built (jobs/question_delta.py)
    if kind is not None:
        from bench.conversational_choices import mean_rows, sweep

        swept = {name: sweep(name, args.seed, args.agents, kind) for name in args.set.split(",")}
        for row in mean_rows(swept):
            print(json.dumps(row), flush=True)
        if args.json:
            Path(args.json).write_text(
                json.dumps(swept | {"mean": mean_rows(swept)}, indent=1), encoding="utf-8"
            )
        return 0
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    results = []
    runs = [(name.strip(), None) for name in args.set.split(",") if name.strip()]
    if args.locomo:
        data = locomo.load(args.locomo, "observations" if args.locomo_observations else "turns")
        runs.append((data["name"], data))
    for name, data in runs:
        result = run(name, args.seed, systems, args.agents, data, args.dated)
        results.append(result)
        print(json.dumps(result), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    if args.section:
        Path(args.section).write_text(section(results), encoding="utf-8")
    print(section(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
