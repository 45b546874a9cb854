"""Ledger paging: a core ledger larger than `REFINEMENT_LEDGER_MAX_TOKENS` is shown in pages.

The whole active core ledger is inlined in the refinement prompt (docs/explanation/refinement.md)
while it fits. Past the limit the session works in pages, each within the limit, and the model
moves on with the `next_page` tool. Pages put likely duplicates together and first, because
de-duplication is the session's purpose:

1. groups: memories whose texts are equal after the same-fact rule's normalisation (a hash of the
   normalised words), joined with their nearest neighbours by embedding cosine (≥ `GROUP_MIN`,
   at most `GROUP_NEIGHBOURS` each, strongest links first, at most 10 memories a group: what one
   consolidate call takes);
2. groups of two or more first, strongest first (a normalised-text match counts as 1.0), each
   group's rows adjacent; then every other memory, oldest first;
3. packed greedily into pages of at most the limit's tokens; a group never straddles two pages
   unless it alone is larger than a page.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from models import AgentMemory
from models.db import estimate_tokens
from models.refinement.tools import MAX_IDS_PER_CALL

from .samefact import content_words

MIN_MAX_TOKENS = 8_000  # room for the rules, a 4,000-character own prompt and the longest memory's line
GROUP_MIN = 0.8
GROUP_NEIGHBOURS = 5
MAX_GROUP = MAX_IDS_PER_CALL
SCORE_CHUNK = 1024


@dataclass(frozen=True)
class LedgerEntry:
    """A ledger row as the planner needs it: plain values, not an ORM row a commit would expire."""

    id: int
    content: str


@dataclass(frozen=True)
class Page:
    ids: tuple[int, ...]
    tokens: int
    groups: int  # groups of likely duplicates on this page


def line_tokens(line: str) -> int:
    """What one ledger line costs in the prompt (its newline included)."""
    return estimate_tokens(line + "\n")


def text_key(content: str) -> str:
    """A hash of the words the same-fact rule compares: equal keys are near-exact duplicates."""
    return hashlib.sha256(" ".join(content_words(content)).encode("utf-8")).hexdigest()[:16]


class _Groups:
    """Union-find over positions, remembering each group's strongest link and its size."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))
        self.best = [0.0] * n
        self.size = [1] * n

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def join(self, a: int, b: int, score: float, max_size: int | None = None) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            if max_size is not None and self.size[ra] + self.size[rb] > max_size:
                return
            ra, rb = min(ra, rb), max(ra, rb)
            self.parent[rb] = ra
            self.size[ra] += self.size[rb]
            self.best[ra] = max(self.best[ra], self.best[rb])
        self.best[ra] = max(self.best[ra], score)


def plan_pages(
    memories: Sequence[LedgerEntry | AgentMemory],
    lines: Sequence[str],
    max_tokens: int,
    vectors: dict[int, np.ndarray] | None = None,
) -> list[Page]:
    """Split the ledger (memories oldest first, with their rendered lines) into pages of at most
    `max_tokens`. `vectors` maps memory ids to unit vectors (absent ids join by text only)."""
    n = len(memories)
    costs = [line_tokens(line) for line in lines]
    groups = _Groups(n)
    first_by_key: dict[str, int] = {}
    for i, memory in enumerate(memories):
        key = text_key(memory.content)
        if key in first_by_key:
            groups.join(first_by_key[key], i, 1.0)
        else:
            first_by_key[key] = i
    if vectors:
        positions = [i for i, m in enumerate(memories) if m.id in vectors]
        if len(positions) > 1:
            matrix = np.stack([vectors[memories[i].id] for i in positions]).astype(np.float32)
            _join_neighbours(groups, positions, matrix)

    members: dict[int, list[int]] = {}
    for i in range(n):
        members.setdefault(groups.find(i), []).append(i)
    multi = sorted((g for g in members.values() if len(g) > 1), key=lambda g: (-groups.best[g[0]], g[0]))
    single = sorted(i for g in members.values() if len(g) == 1 for i in g)
    ordered: list[list[int]] = multi + [[i] for i in single]

    pages: list[Page] = []
    current: list[int] = []
    current_tokens = current_groups = 0

    def close() -> None:
        nonlocal current, current_tokens, current_groups
        if current:
            pages.append(Page(tuple(memories[i].id for i in current), current_tokens, current_groups))
        current, current_tokens, current_groups = [], 0, 0

    for group in ordered:
        cost = sum(costs[i] for i in group)
        if current and current_tokens + cost > max_tokens:
            close()
        if cost <= max_tokens:
            current += group
            current_tokens += cost
            current_groups += len(group) > 1
            continue
        for i in group:  # a group larger than a page: split it, in order
            if current and current_tokens + costs[i] > max_tokens:
                close()
            current.append(i)
            current_tokens += costs[i]
        current_groups += 1
    close()
    return pages


def _join_neighbours(groups: _Groups, positions: list[int], matrix: np.ndarray) -> None:
    """Join memories with their nearest neighbours above GROUP_MIN, strongest links first, into groups
    of at most MAX_GROUP (what one consolidate call takes): without the cap, a chain of similar
    memories would join a whole ledger of one style into one group. One matrix product per chunk of
    rows, so memory stays bounded (rows x memories) at any ledger size."""
    links: list[tuple[float, int, int]] = []
    for start in range(0, len(positions), SCORE_CHUNK):
        rows = np.arange(start, min(start + SCORE_CHUNK, len(positions)))
        scores = matrix[rows] @ matrix.T
        scores[np.arange(len(rows)), rows] = -np.inf
        top = np.argpartition(-scores, min(GROUP_NEIGHBOURS, scores.shape[1] - 1), axis=1)[
            :, :GROUP_NEIGHBOURS
        ]
        for r, row in enumerate(rows):
            for column in top[r]:
                score = float(scores[r, column])
                if score >= GROUP_MIN:
                    links.append((score, positions[int(row)], positions[int(column)]))
    for score, a, b in sorted(links, key=lambda link: (-link[0], link[1], link[2])):
        groups.join(a, b, score, MAX_GROUP)
