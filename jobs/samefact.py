"""The same-fact rule: when two memory texts state the same fact in the same words.

Equal after normalising case, punctuation, spacing, typographic quotes, "&" and contractions, or equal
apart from articles (a, an, the) — and never two texts whose numbers, dates, names or negations differ.
It is the one definition of a true duplicate: the offline refiner merges by it, and daily consolidation,
multi-fact extraction, the merge pre-filters, ledger grouping and the hashed embedder use its pieces.
It reads no database and imports nothing of this project but the memory type it groups.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from models import AgentMemory

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
