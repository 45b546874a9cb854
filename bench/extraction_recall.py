"""The extraction path's effect on recall, on the conversational sets: extraction on against off.

    pip install -e '.[local-embeddings,bench-peers]'
    .venv/bin/python -m bench.extraction_recall [--set life_log,assistant_notes] [--agents N] [--json F]

Each session of a set (bench/conversations/) becomes one turn: its observations in order, as the user told
them. **Off**: the agent saves each turn whole, one memory a turn. **On**: the agent hands each turn to the
extraction job (`jobs.extraction.extract_facts`, MULTI_FACT_EXTRACTION=1), whose model is the scripted
OpenAI-compatible server on loopback answering with the turn's own observations, at most 5 (the most a
model may propose) — the best a model could do — so what is measured is the path itself: its caps (3
writes a turn, 30 an agent a day, the clock set to each session's time), its writing rules and its merge
bands. A turn of 400 characters or fewer is not extracted, as in production.

memory.query (hybrid, the local MiniLM, the second hop) then answers every question of the set. An
evidence observation counts as found when a top-10 hit holds it: off, the turn it was told in; on, the
fact written from it. Reported per set and mode: recall@10, the share of observations stored, and the
tokens the top 10 carry (a whole turn carries several observations). Stops by itself; loopback only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections import defaultdict
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.conversational import CATEGORY, SETS, Console, load  # noqa: E402

MAX_PROPOSED = 5  # jobs.extraction.Facts: a model's answer holds at most this many facts


def sessions(memories: list[dict]) -> list[tuple[datetime, str, list[dict]]]:
    """(time, user, observations) per session: the observations told at one time, in order."""
    grouped: dict[str, list[dict]] = defaultdict(list)
    for m in memories:
        grouped[m["created_at"]].append(m)
    return [(datetime.fromisoformat(at), ms[0]["user"], ms) for at, ms in sorted(grouped.items())]


def turn_text(observations: list[dict]) -> str:
    return " ".join(m["content"] for m in observations)


def run(set_name: str, seed: int, max_agents: int | None) -> dict:
    from freezegun import freeze_time

    from jobs import relations
    from jobs.extraction import extract_facts
    from models import Agent, AgentMemory
    from tests import scripted_llm

    data = load(set_name, seed)
    agents = data["agents"][:max_agents] if max_agents else data["agents"]
    workdir = tempfile.mkdtemp(prefix="memconsole-extraction-")
    llm = scripted_llm.ScriptedLLM().start()
    try:
        os.environ["LLM_OFFLINE"] = "0"
        os.environ.setdefault("OPENAI_API_KEY", "bench-key")
        console = Console(workdir)
        console.app.config["MULTI_FACT_EXTRACTION"] = True
        db = console.db
        told: dict[str, list[str]] = {}  # turn text -> its observations' texts, for the scripted model

        def answer(request: dict) -> scripted_llm.Reply:
            prompt = request["messages"][-1]["content"]
            facts = next((texts for turn, texts in told.items() if turn in prompt), [])
            reply = {"facts": [{"text": t, "category": CATEGORY} for t in facts[:MAX_PROPOSED]]}
            return scripted_llm.text(json.dumps(reply))(request)

        llm.fallback = answer
        holds: dict[str, dict[int, set[str]]] = {"off": {}, "on": {}}  # memory id -> observation ids it holds
        stored = {"off": 0, "on": 0}
        fates: dict[str, int] = defaultdict(int)  # what became of each observation on the extraction path
        total = 0
        for agent in agents:
            turns = sessions(agent["memories"])
            total += len(agent["memories"])
            # Off: each turn saved whole (Console.add writes through the mutation path, dated).
            whole = [{"id": f"{agent['key']}-t{i}", "content": turn_text(obs), "created_at": at.isoformat(),
                      "user": user} for i, (at, user, obs) in enumerate(turns)]  # fmt: skip
            console.add(f"{agent['key']}-off", whole)
            by_turn = {f"{agent['key']}-t{i}": {m["id"] for m in obs} for i, (_, _, obs) in enumerate(turns)}
            for memory_id, turn_id in list(console.set_id.items()):
                if turn_id in by_turn:
                    holds["off"][memory_id] = by_turn[turn_id]
            stored["off"] += len(agent["memories"])
            # On: each turn through the extraction job, the clock at the session's time.
            row = Agent(name=f"conv-{agent['key']}-on", role="supervisor", core_token_budget=10**9,
                        model_id="scripted-model", base_url=llm.url)  # fmt: skip
            db.session.add(row)
            db.session.commit()
            console.agents[f"{agent['key']}-on"] = row.id
            by_text: dict[str, set[str]] = defaultdict(set)
            for at, user, obs in turns:
                text = turn_text(obs)
                told[text] = [m["content"] for m in obs]
                for m in obs:
                    by_text[m["content"].strip()].add(m["id"])
                with freeze_time(at):
                    outcome = extract_facts(row.id, text, user_id=user)
                if outcome.get("status") != "ok":
                    fates[outcome.get("reason", outcome.get("status", "?"))] += len(obs)
                else:
                    fates["proposed beyond the 5 a model may"] += max(0, len(obs) - MAX_PROPOSED)
                    for fate in ("created", "updated", "held"):
                        fates[fate] += len(outcome[fate])
                    fates["skipped (cap or same fact)"] += outcome["skipped"]
                    fates["refused (writing rule)"] += outcome["refused"]
                db.session.commit()
            relations.backfill(relations.stale_memories([row.id]))
            kept = db.session.execute(
                db.select(AgentMemory.id, AgentMemory.content).where(
                    AgentMemory.agent_id == row.id, AgentMemory.deleted_at.is_(None)
                )
            ).all()
            for memory_id, content in kept:
                found = by_text.get(content.strip(), set())
                holds["on"][memory_id] = found
                stored["on"] += len(found)
        results: dict[str, dict] = {}
        for mode in ("off", "on"):
            recall, tokens, n = 0.0, 0, 0
            for agent in agents:
                for question in agent["questions"]:
                    hits = _search(console, f"{agent['key']}-{mode}", question["text"])
                    held = set().union(*(holds[mode].get(h.id, set()) for h in hits)) if hits else set()
                    recall += len(held & set(question["evidence"])) / len(question["evidence"])
                    tokens += sum(h.token_estimate for h in hits)
                    n += 1
            results[mode] = {"recall@10": round(recall / n, 3), "stored_share": round(stored[mode] / total, 3),
                             "tokens_top10": round(tokens / n, 1)}  # fmt: skip
        return {"set": set_name, "seed": seed, "agents": len(agents), "observations": total,
                "questions": sum(len(a["questions"]) for a in agents), "modes": results,
                "extraction": dict(sorted(fates.items()))}  # fmt: skip
    finally:
        llm.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def _search(console: Console, key: str, question: str) -> list:
    from models.retrieval import query

    vector = console.embedder.embed([question], query=True)[0]
    # As of one instant (bench.conversational.AS_OF, the console being undated), as the conversational
    # benchmark asks: the ranking weighs recency against `now`, and the wall clock would move recall from day
    # to day.
    hits = query.search(console.agents[key], text=question, categories=[CATEGORY], top_k=10,
                        dense=(console.embedder.label, vector), now=console.asked_at(key))  # fmt: skip
    console.db.session.rollback()
    return hits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default=",".join(SETS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--agents", type=int, help="only the first N agents of a set (a quick run)")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    os.environ["HF_HUB_OFFLINE"] = "1"
    results = [run(name.strip(), args.seed, args.agents) for name in args.set.split(",")]
    for result in results:
        print(json.dumps(result), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
