"""The built-in `offline` refiner: a deterministic de-duplication policy that drives the same tools.

It merges only memories that state the same fact in the same words: equal after normalising case,
punctuation, spacing, typographic quotes, "&", and contractions, or equal apart from articles
(a, an, the) — and never two texts whose numbers, dates, names or negations differ. Everything else
is left alone; zero operations is its usual answer. The same `same_fact` rule is the offline
policy of the daily consolidation job.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import defaultdict
from typing import Any

from models import Agent, AgentMemory, db
from models.refinement import HARD_CAP, MAX_IDS_PER_CALL

from .llm import OFFLINE_LABEL, ToolCall, Turn

_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w'-]*")
_CONTRACTIONS = (
    (re.compile(r"\bcan'?t\b"), "can not"),
    (re.compile(r"\bcannot\b"), "can not"),
    (re.compile(r"\bwon'?t\b"), "will not"),
    (re.compile(r"\b(\w+)n't\b"), r"\1 not"),
    (re.compile(r"\b(\w+)'re\b"), r"\1 are"),
    (re.compile(r"\b(\w+)'ve\b"), r"\1 have"),
    (re.compile(r"\b(\w+)'ll\b"), r"\1 will"),
    (re.compile(r"\bi'm\b"), "i am"),
)
_ARTICLES = frozenset({"a", "an", "the"})
# Number words, months and weekdays carry facts just like digits do.
_FACT_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty hundred "
    "thousand million first second third fourth fifth once twice half dozen january february march april may "
    "june july august september october november december monday tuesday wednesday thursday friday saturday "
    "sunday today yesterday tomorrow".split()
)
_NEGATIONS = frozenset("not no never none nobody nothing neither nor without".split())


def normalise(text: str) -> str:
    """Lower-case words only: NFKC, typographic quotes folded, contractions expanded, & as "and",
    other punctuation to spaces, spacing collapsed."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("&", " and ")
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    text = text.replace("'", "")
    text = "".join(ch if ch.isalnum() else " " for ch in text)
    return " ".join(text.split())


def fact_markers(text: str) -> tuple[str, ...]:
    """What two texts must share exactly to be the same fact: numbers, dates, names, negations."""
    markers = set(_NUMBER.findall(text))
    markers |= {m.lower() for m in _CAPITALISED.findall(text.strip())}
    markers |= {w for w in normalise(text).split() if w in _FACT_WORDS or w in _NEGATIONS}
    return tuple(sorted(markers))


def content_words(text: str) -> tuple[str, ...]:
    return tuple(w for w in normalise(text).split() if w not in _ARTICLES)


def same_fact(a: str, b: str) -> bool:
    """True only when the texts are the same words (articles aside) with the same fact markers."""
    if normalise(a) == normalise(b):
        return True
    return content_words(a) == content_words(b) and fact_markers(a) == fact_markers(b)


def duplicate_groups(memories: list[AgentMemory]) -> list[list[AgentMemory]]:
    """Groups (earliest first) of memories that state the same fact. Locked memories never take part."""
    candidates = sorted(
        (m for m in memories if not m.constitutional and not m.immutable_tags),
        key=lambda m: (m.created_at, m.id),
    )
    # Equal-after-normalisation is found by dict; near-identical texts must share their fact
    # markers exactly, so they are compared only within a bucket of equal markers.
    by_text: dict[str, list[AgentMemory]] = {}
    buckets: dict[tuple[str, ...], list[list[AgentMemory]]] = defaultdict(list)
    for memory in candidates:
        key = normalise(memory.content)
        if key in by_text:
            by_text[key].append(memory)
            continue
        groups = buckets[fact_markers(memory.content)]
        for group in groups:
            if same_fact(group[0].content, memory.content):
                group.append(memory)
                break
        else:
            group = [memory]
            groups.append(group)
        by_text[key] = group
    found = [g for groups in buckets.values() for g in groups if len(g) > 1]
    return sorted(found, key=lambda g: (g[0].created_at, g[0].id))


class OfflineRefiner:
    """Answers like a model: consents, then consolidates true duplicates, then completes."""

    label = OFFLINE_LABEL

    def __init__(self, agent_id: int) -> None:
        self.agent_id = agent_id
        self._plan: list[list[AgentMemory]] | None = None

    def _planned(self) -> list[list[AgentMemory]]:
        """Duplicate groups to merge, within the hard cap and never past the circuit breaker's threshold."""
        if self._plan is None:
            memories = list(db.session.scalars(AgentMemory.active_core(self.agent_id)).all())
            threshold = db.session.get(Agent, self.agent_id).min_retention
            tokens = sum(m.token_estimate for m in memories)
            count = len(memories)
            floor_tokens, floor_count = threshold * tokens, threshold * count
            plan: list[list[AgentMemory]] = []
            for group in duplicate_groups(memories):
                for chunk in (group[i : i + MAX_IDS_PER_CALL] for i in range(0, len(group), MAX_IDS_PER_CALL)):
                    # Shrink a merge that would cut past the threshold; the rest waits for a later session.
                    while len(chunk) >= 2 and (
                        tokens - sum(m.token_estimate for m in chunk[1:]) < floor_tokens
                        or count - (len(chunk) - 1) < floor_count
                    ):
                        chunk = chunk[:-1]
                    if len(chunk) < 2 or len(plan) >= HARD_CAP:
                        continue
                    removed_tokens = sum(m.token_estimate for m in chunk[1:])
                    plan.append(chunk)
                    tokens -= removed_tokens
                    count -= len(chunk) - 1
            self._plan = plan
        return self._plan

    def turn(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, max_tokens: int | None = None
    ) -> Turn:
        if not tools:  # the consent step
            return Turn(content=json.dumps({"consent": True, "reason": "Offline policy: exact and near-exact duplicates only."}))
        plan = self._planned()
        answered = [m for m in messages if m.get("role") == "tool"]
        if not answered and plan:
            return Turn(
                content=None,
                tool_calls=[
                    ToolCall(
                        id=f"offline-{i}",
                        name="consolidate_memories",
                        arguments=json.dumps({"ids": [m.id for m in group], "new_content": group[0].content}),
                    )
                    for i, group in enumerate(plan)
                ],
            )
        merged = [g for g, m in zip(plan, answered, strict=False) if json.loads(m["content"]).get("ok")]
        if merged:
            sources = sum(len(g) for g in merged)
            saved = sum(m.token_estimate for g in merged for m in g[1:])
            summary = (
                f"Offline refiner: merged {len(merged)} duplicate group(s), {sources} → {len(merged)} memories; "
                f"saved ~{saved} tokens."
            )
        else:
            summary = "Offline refiner: no true duplicates found; zero operations."
        return Turn(
            content=None,
            tool_calls=[ToolCall(id="offline-complete", name="complete_refinement", arguments=json.dumps({"summary": summary}))],
        )
