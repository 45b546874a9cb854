"""How often a question's embedding could be skipped because its words alone fix memory.query's top k.

    .venv/bin/python -m bench.dense_skip [--set life_log,team_chat] [--top-k 10]

The mix fusion (models/retrieval/fusion.py) scores a candidate MIX_LEXICAL x its absolute lexical match
plus (1 - MIX_LEXICAL) x its cosine relative to the best, at most 1. Without the question's vector, the set
of the top k is fixed only if the k-th memory's lexical part leads the (k+1)-th's by more than the whole
cosine share: MIX_LEXICAL x (match_k - match_k+1) > 1 - MIX_LEXICAL, a memory no word found counting a
match of 0. Recency, importance and the second hops only add to what could reorder them, so this is a
necessary condition, not a sufficient one: where it never holds, the dense step can never be skipped.

For each question of the generated sets (bench/conversations/, dated, the development sets by default):
the lexical ranking's matches at k and k+1 (memory.query, mode "lexical", no second hops), how many
questions meet the condition, and the largest gap seen.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def gaps(set_name: str, seed: int, top_k: int) -> list[float]:
    """match_k - match_k+1 of each question of the set, from memory.query's lexical ranking."""
    from bench import conversational
    from models.retrieval import query

    data = conversational.load(set_name, seed)
    workdir = tempfile.mkdtemp(prefix="memconsole-dense-skip-")
    try:
        console = conversational.Console(workdir, dated=True)
        found = []
        for agent in data["agents"]:
            console.add(agent["key"], agent["memories"])
            for question in agent["questions"]:
                hits = query.search(
                    console.agents[agent["key"]], text=question["text"], categories=[conversational.CATEGORY],
                    top_k=top_k + 1, mode="lexical", with_match=True, bridge=False,
                    now=console.asked_at(agent["key"]),
                )  # fmt: skip
                console.db.session.rollback()
                matches = sorted((hit.match or 0.0 for hit in hits), reverse=True) + [0.0] * (top_k + 1)
                found.append(matches[top_k - 1] - matches[top_k])
        console.context.pop()
        return found
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="life_log,team_chat")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--top-k", type=int, default=10)
    args = parser.parse_args(argv)

    from models.retrieval.fusion import MIX_LEXICAL

    needed = (1 - MIX_LEXICAL) / MIX_LEXICAL
    print(
        f"\n## Could the dense step be skipped? (top {args.top_k}, a lead of more than {needed:.3f} needed)\n"
    )
    print(f"    .venv/bin/python -m bench.dense_skip --set {args.set} --top-k {args.top_k}\n")
    print("| set | questions | top k fixed by the words alone | largest lead | 99th percentile |")
    print("|---|---:|---:|---:|---:|")
    for name in args.set.split(","):
        found = sorted(gaps(name, args.seed, args.top_k))
        fixed = sum(gap > needed for gap in found)
        print(
            f"| {name} | {len(found)} | {fixed} | {found[-1]:.3f} | {found[int(0.99 * (len(found) - 1))]:.3f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
