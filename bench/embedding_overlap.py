"""The question's embedding computed first (inline) or on a question thread while the ranking looks the
words up (background), beside mem0 + FAISS, question by question in turn, dated, on one set: p50 / p95 ms
and whether both ways rank alike. `python -m bench.embedding_overlap life_log` (EMBEDDINGS=local)."""

import sys
import tempfile
import time

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))
from bench import conversational as c
from bench.peers import pct
from models.retrieval import query

set_name = sys.argv[1]
data = c.load(set_name, 0)
wd = tempfile.mkdtemp(prefix="memconsole-ab-")
con = c.Console(wd, dated=True)
mem0 = c.Mem0(wd)
for a in data["agents"]:
    con.add(a["key"], a["memories"])
    mem0.add(a["key"], a["memories"])


def inline(key, q):
    v = con.embedder.embed([q], query=True)[0]
    hits = query.search(
        con.agents[key],
        text=q,
        categories=[c.CATEGORY],
        top_k=10,
        dense=(con.embedder.label, v),
        now=con.asked_at(key),
    )
    con.db.session.rollback()
    return [h.id for h in hits]


def background(key, q):
    return con.search(key, q)


ask = {"inline": inline, "background": background, "mem0": lambda k, q: mem0.search(k, q)}
names = list(ask)
qs = [(a["key"], q["text"]) for a in data["agents"] for q in a["questions"]]
for k, q in qs[:5]:
    for n in names:
        ask[n](k, q + " ?")
times = {n: [] for n in names}
same = 0
for i, (k, q) in enumerate(qs):
    order = names[i % 3 :] + names[: i % 3]
    got = {}
    for n in order:
        t = time.perf_counter()
        got[n] = ask[n](k, q)
        times[n].append((time.perf_counter() - t) * 1e3)
    same += [con.set_id[x] for x in got["inline"]] == got["background"]
for n in names:
    print(
        set_name,
        n,
        "p50",
        round(pct(times[n], 0.5), 2),
        "p95",
        round(pct(times[n], 0.95), 2),
        "p95/mem0",
        round(pct(times[n], 0.95) / pct(times["mem0"], 0.95), 3),
    )
print("same rankings", same, "of", len(qs))
