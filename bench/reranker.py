"""Whether a reranker over memory.query's candidates could raise its recall@10 on the development sets.

    .venv/bin/python -m bench.reranker [--set life_log,team_chat,...] [--json F]

The conversational goal asks for recall a reranker might bring (docs/benchmarks.md, "Conversational
sets"), and no reranker ships in a wheel with its weights. Before training one, this measures what any
reranker over memory.query's candidates could reach, and what one learned from those candidates' figures
does reach. For each question of each development set (bench/conversations/, dated), four rankings:
memory.query's first 10 as it answers (`answer`: hybrid, with its second hops), and the first DEPTH of its
hybrid, dense and lexical rankings (`hybrid`, `dense`, `lexical`). Then:

- **where each miss is:** each evidence memory memory.query's first 10 lack, found in some ranking's first
  DEPTH (a reranker over them could bring it in) or in none (no reranker over them could);
- **the ceiling:** recall@10 where every evidence memory among the candidates comes first;
- **a learned reranker:** each candidate of a question (every memory of the four rankings) described by
  its place and score in each ranking, its cosine to the question's vector, its age, and what ties it to
  memory.query's leading hit — whether it is of that hit's user, its cosine to that hit, and how many of
  the names that hit carries it holds (`features`); a logistic regression and gradient-boosted trees
  (scikit-learn) trained on every development set but one and asked on the one left out, its candidates
  ordered by the model's probability; recall@10 of that order against memory.query's.

Recall@10 here is per question, as bench/conversational.py reports it (`conversational.score`).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEPTH = 50  # how deep each of the three rankings is read for candidates
RANKINGS = ("answer", "hybrid", "dense", "lexical")
TOP = 10


def where_missed(row: dict) -> Counter:
    """Each evidence memory of `row` outside its answer's first TOP: `deeper` when some ranking holds it,
    `nowhere` when none does."""
    top = set(row["answer"][:TOP])
    deeper = set().union(*(row[name] for name in RANKINGS))
    return Counter(
        "deeper" if memory in deeper else "nowhere" for memory in row["evidence"] if memory not in top
    )


def candidates(row: dict) -> list[str]:
    """Every memory the four rankings hold, each once, in the order the rankings first name them."""
    return list(dict.fromkeys(memory for name in RANKINGS for memory in row[name]))


def recall(order: Sequence[str], evidence: Sequence[str]) -> float:
    wanted = set(evidence)
    return len(wanted & set(order[:TOP])) / len(wanted)


def ceiling(row: dict) -> float:
    """Recall@TOP of the best order of `row`'s candidates: every evidence memory among them first."""
    found = candidates(row)
    wanted = set(row["evidence"])
    return recall([m for m in found if m in wanted] + [m for m in found if m not in wanted], row["evidence"])


def features(row: dict) -> list[list[float]]:
    """One line per candidate (`candidates`): for each ranking, whether it holds the memory, 1 / place,
    log(place) (places from 1; a memory it lacks at DEPTH + 10) and its score there (0 where it lacks it);
    its cosine to the question; whether it is of the answer's leading hit's user; log(1 + its age in
    days); its cosine to that leading hit, and how many of the names the hit carries it holds too (the
    names the second hop asks for: models/retrieval/bridging.py)."""
    places = {name: {memory: at for at, memory in enumerate(row[name], 1)} for name in RANKINGS}
    theirs = set(row["leader_users"])
    lines = []
    for memory in candidates(row):
        line: list[float] = []
        for name in RANKINGS:
            at = places[name].get(memory)
            line += [1.0, 1.0 / at, math.log(at)] if at else [0.0, 0.0, math.log(DEPTH + 10)]
            line.append(row["scores"][name].get(memory, 0.0))
        line += [
            row["cosine"].get(memory, 0.0),
            float(memory in theirs),
            math.log1p(row["age"].get(memory, 0.0)),
            row["to_leader"].get(memory, 0.0),
            float(row["names"].get(memory, 0)),
        ]
        lines.append(line)
    return lines


def left_out(sets: dict[str, list[dict]], make: Callable[[], Any]) -> dict[str, float]:
    """Recall@TOP of each set's questions reordered by a model `make()` builds, trained on the other sets'
    candidates (an evidence memory the positive class)."""
    import numpy as np

    out = {}
    for held in sets:
        lines = [(features(row), row) for name, rows in sets.items() if name != held for row in rows]
        x = np.array([line for found, _ in lines for line in found])
        y = np.array([m in set(row["evidence"]) for _, row in lines for m in candidates(row)], dtype=np.int8)
        model = make().fit(x, y)
        total = 0.0
        for row in sets[held]:
            found = candidates(row)
            chance = model.predict_proba(np.array(features(row)))[:, 1]
            order = [found[i] for i in np.argsort(-chance, kind="stable")]
            total += recall(order, row["evidence"])
        out[held] = total / len(sets[held])
    return out


def _models() -> dict[str, Callable[[], Any]]:
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return {
        "logistic regression": lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
        "gradient-boosted trees": lambda: HistGradientBoostingClassifier(
            max_iter=200, learning_rate=0.05, max_depth=4, random_state=0
        ),
    }


def rankings(set_name: str, seed: int) -> list[dict]:
    """Each question of the set, dated, with its four rankings (set memory ids) and each ranking's score
    of its memories, its evidence, its kind, each candidate's cosine to the question's vector and age in
    days, and the leading hit's user's candidates. Every agent's memories are written before any question
    is asked, as bench/conversational.py does: the words' figures are the whole index's."""
    from bench import conversational
    from models.retrieval import bridging, query, vectors

    data = conversational.load(set_name, seed)
    workdir = tempfile.mkdtemp(prefix="memconsole-reranker-")
    try:
        console = conversational.Console(workdir, dated=True)
        for agent in data["agents"]:
            console.add(agent["key"], agent["memories"])
        rows = []
        for agent in data["agents"]:
            agent_id, now = console.agents[agent["key"]], console.asked_at(agent["key"])
            for question in agent["questions"]:
                vector = console.embedder.embed([question["text"]], query=True)[0]
                row: dict[str, Any] = {
                    "kind": question["kind"],
                    "evidence": question["evidence"],
                    "scores": {},
                }
                hits_of: dict[str, Any] = {}
                for name, mode, k in (("answer", "hybrid", TOP), ("hybrid", "hybrid", DEPTH),
                                      ("dense", "dense", DEPTH), ("lexical", "lexical", DEPTH)):  # fmt: skip
                    hits = query.search(agent_id, text=question["text"], categories=[conversational.CATEGORY],
                                        top_k=k, dense=(console.embedder.label, vector), mode=mode, now=now)  # fmt: skip
                    console.db.session.rollback()
                    row[name] = [console.set_id[hit.id] for hit in hits]
                    row["scores"][name] = {console.set_id[hit.id]: hit.score for hit in hits}
                    hits_of |= {console.set_id[hit.id]: hit for hit in hits}
                matrix = vectors.cache().cached(agent_id, console.embedder.label)
                assert matrix is not None  # the dense ranking loaded it
                at = matrix.position
                row["cosine"] = {
                    m: float(matrix.matrix[at[h.id]] @ vector) for m, h in hits_of.items() if h.id in at
                }
                row["age"] = {
                    m: max((now - h.created_at).total_seconds() / 86400, 0.0) for m, h in hits_of.items()
                }
                first = hits_of[row["answer"][0]] if row["answer"] else None
                row["leader_users"] = [
                    m for m, h in hits_of.items() if first and first.user_id and h.user_id == first.user_id
                ]
                # What ties a multi-hop question's answer to it is its leading hit, not its words: each
                # candidate's cosine to that hit and how many of the names it carries (bridging.bridge_names).
                names = bridging.bridge_names(question["text"], [first]) if first else []
                row["names"] = {
                    m: sum(name in (h.content or "") for name in names) for m, h in hits_of.items()
                }
                if first is not None and first.id in at:
                    led = matrix.matrix[at[first.id]]
                    row["to_leader"] = {
                        m: float(matrix.matrix[at[h.id]] @ led) for m, h in hits_of.items() if h.id in at
                    }
                else:
                    row["to_leader"] = {}
                rows.append(row)
        console.context.pop()
        return rows
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def report(sets: dict[str, list[dict]]) -> dict:
    """Per set: questions, memory.query's recall@10, the ceiling, the learned rerankers' recall@10 (each
    set left out of training), and where its misses are, overall and by kind."""
    learned = {name: left_out(sets, make) for name, make in _models().items()}
    out: dict[str, Any] = {}
    for name, rows in sets.items():
        missed: Counter = Counter()
        by_kind: dict[str, Counter] = {}
        for row in rows:
            found = where_missed(row)
            missed += found
            by_kind.setdefault(row["kind"], Counter()).update(found)
        out[name] = {
            "questions": len(rows),
            "memory.query": sum(recall(row["answer"], row["evidence"]) for row in rows) / len(rows),
            "ceiling": sum(ceiling(row) for row in rows) / len(rows),
            **{model: figures[name] for model, figures in learned.items()},
            "missed": dict(missed),
            "missed by kind": {kind: dict(found) for kind, found in sorted(by_kind.items())},
        }
    columns = ["memory.query", "ceiling", *learned]
    out["mean"] = {column: sum(out[name][column] for name in sets) / len(sets) for column in columns}
    return out


def table(result: dict) -> str:
    columns = [c for c in result["mean"]]
    lines = [
        "| set | questions | " + " | ".join(columns) + " | missed: in some first 50 | in none |",
        "| --- | ---: | " + " | ".join("---:" for _ in columns) + " | ---: | ---: |",
    ]
    for name, figures in result.items():
        if name == "mean":
            continue
        cells = " | ".join(f"{figures[c]:.4f}" for c in columns)
        missed = figures["missed"]
        lines.append(
            f"| {name} | {figures['questions']} | {cells} | {missed.get('deeper', 0)} | {missed.get('nowhere', 0)} |"
        )
    lines.append("| mean | | " + " | ".join(f"{result['mean'][c]:.4f}" for c in columns) + " | | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from bench.conversational import DEVELOPMENT

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default=",".join(DEVELOPMENT))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    names = [name for name in args.set.split(",") if name]
    if len(names) < 2:
        parser.error("a reranker is trained on the other sets: name two or more")
    result = report({name: rankings(name, args.seed) for name in names})
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(f"\n    .venv/bin/python -m bench.reranker --set {','.join(names)}\n")
    print(table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
