"""LoCoMo, the public benchmark of long multi-session conversations, as a set bench/conversational.py reads.

LoCoMo (Maharana et al., ACL 2024; github.com/snap-research/locomo, `data/locomo10.zip`) holds ten
conversations between two people over up to 35 dated sessions, and questions about them that cite the
turns answering them (`"evidence": ["D3:1"]`). No one here wrote it, so it is the one set that cannot
have been shaped, even unknowingly, to the retrieval code. Its data is not in this repository (its licence
is the authors'): the benchmark reads a copy the user gives it.

    python -m bench.conversational --locomo PATH    # the zip, one of its JSON files, a folder of them, or locomo10.json

How it is read, fixed before it was first run:

- one agent per conversation; one memory per turn, dated by its session, of the speaker as its user
  (`user_id`), as an agent saving a chat turn by turn would store it: "Calvin: <the turn's text>", and,
  where the turn shared a photo, the dataset's caption of it ("[shares a photo of a building ...]"), as
  LoCoMo's own retrieval baselines read it;
- the questions of categories 1-4, their kinds read off the questions: 1 multi-hop ("What items did
  Calvin buy in March 2023?", two turns), 2 temporal ("When did ..."), 3 open-domain ("Would Calvin enjoy
  performing at the Hollywood Bowl?") and 4 single-hop. Category 5 is adversarial (its questions ask for
  what the conversation never said), so it has no evidence to find and is left out, as in the published
  evaluations;
- evidence is the turns a question cites that the conversation holds; a question citing none is left out
  (the run's output counts them).

`--locomo-observations` reads the dataset's observations instead of its turns (`load(path,
"observations")`, the set `locomo_observations`): the short third-person facts its authors drew from each
session ("Sam is considering trying painting as a new hobby."), each citing the turns it came from — the
2,541 memories memory.query was first measured on against mem0. Fixed before it was first run:

- one agent per conversation; one memory per observation, its text as given, dated by its session, filed
  under the speaker it is about as its user;
- the same questions of categories 1-4; a question's evidence is every observation that cites one of the
  turns the question cites, so a question is found whole only with each fact drawn from its turns; a
  question whose turns no observation cites is left out and counted, as above.
"""

from __future__ import annotations

import json
import re
import zipfile
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

NAME = "locomo"
OBSERVATIONS = "locomo_observations"  # the set of the observations instead of the turns
NAMES = (NAME, OBSERVATIONS)
KINDS = ("single-hop", "multi-hop", "temporal", "open-domain")
CATEGORY = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_SESSION = re.compile(r"session_(\d+)")
_TURN = re.compile(r"D\d+:\d+")


def conversations(path: str | Path) -> list[dict[str, Any]]:
    """The conversations at `path`: the repository's zip, a folder of its per-conversation JSON files, one
    of them, or locomo10.json (a list of samples, each with `conversation` and `qa`)."""
    path = Path(path)
    if path.is_dir():
        texts = [p.read_text(encoding="utf-8") for p in sorted(path.rglob("*.json"))]
    elif zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            texts = [archive.read(n).decode() for n in sorted(archive.namelist()) if n.endswith(".json")]
    else:
        texts = [path.read_text(encoding="utf-8")]
    found: list[dict[str, Any]] = []
    for text in texts:
        data = json.loads(text)
        for sample in data if isinstance(data, list) else [data]:
            # locomo10.json nests the sessions under `conversation`; the zip's files hold them at the top.
            found.append({**sample.get("conversation", sample), "qa": sample.get("qa", [])})
    if not found:
        raise ValueError(f"no LoCoMo conversation at {path}")
    return found


def when(stamp: str) -> datetime:
    """A session's `date_time` ("11:53 am on 23 March, 2023") as a naive datetime."""
    return datetime.strptime(stamp.strip(), "%I:%M %p on %d %B, %Y")


def sessions(conversation: dict[str, Any]) -> list[tuple[str, str]]:
    """The conversation's sessions in order, each as its key ("session_3") and its date (ISO)."""
    names = sorted((k for k in conversation if _SESSION.fullmatch(k)), key=lambda k: int(k.split("_")[1]))
    return [(name, when(conversation[f"{name}_date_time"]).isoformat()) for name in names]


def turns(key: str, conversation: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """A memory per turn, and the memories standing for each turn (its own)."""
    memories = []
    for name, day in sessions(conversation):
        for turn in conversation[name]:
            content = f"{turn['speaker']}: {turn.get('text', '')}".rstrip()
            if turn.get("blip_caption"):
                content += f" [shares {turn['blip_caption']}]"
            user = turn["speaker"].lower()
            memories.append(
                {"id": f"{key}:{turn['dia_id']}", "content": content, "created_at": day, "user": user}
            )
    return memories, {m["id"].removeprefix(f"{key}:"): [m["id"]] for m in memories}


def observations(key: str, conversation: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """A memory per observation, and the memories standing for each turn: every observation citing it.
    An observation cites its turns as "D1:7", a list of them, or "D4:17, D4:19"."""
    memories, standing = [], defaultdict(list)
    for name, day in sessions(conversation):
        about = conversation.get(f"{name}_observation") or {}
        for speaker, facts in about.items():
            for number, (text, cites) in enumerate(facts):
                one = f"{key}:{name}:{speaker.lower()}:{number}"
                memories.append({"id": one, "content": text, "created_at": day, "user": speaker.lower()})
                for turn in _TURN.findall(" ".join(cites if isinstance(cites, list) else [cites])):
                    standing[turn].append(one)
    return memories, dict(standing)


def agent(key: str, conversation: dict[str, Any], memories: str = "turns") -> tuple[dict[str, Any], int]:
    """One conversation as an agent of bench/conversational.py's sets (a memory per turn, or per
    observation), and how many of its scorable questions cite no turn a memory stands for (left out)."""
    held, standing = (observations if memories == "observations" else turns)(key, conversation)
    questions, uncited = [], 0
    for qa in conversation["qa"]:
        kind = CATEGORY.get(qa.get("category"))
        if kind is None:
            continue
        cited = [t for e in qa.get("evidence", []) for t in _TURN.findall(e)]
        evidence = list(dict.fromkeys(m for t in cited for m in standing.get(t, [])))
        if not evidence:
            uncited += 1
            continue
        questions.append({"text": qa["question"], "evidence": evidence, "kind": kind})
    return {"key": key, "memories": held, "questions": questions}, uncited


def load(path: str | Path, memories: str = "turns") -> dict[str, Any]:
    """The set, in the format of bench/conversations' generators: a memory per turn ("turns") or per
    observation ("observations")."""
    agents, uncited = [], 0
    for number, conversation in enumerate(conversations(path)):
        one, left = agent(f"locomo-{number}", conversation, memories)
        agents.append(one)
        uncited += left
    name = OBSERVATIONS if memories == "observations" else NAME
    return {"name": name, "kinds": KINDS, "agents": agents, "uncited": uncited}
