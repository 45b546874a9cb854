"""Merge bands and pre-filters for same-fact candidates (docs/spec/003-memory-system.md §4, §10, §13), with no LLM: cheap
tests that decide which pairs are worth a check at all, and the rules that resolve a pair without one.

Bands, by the cosine of the two memories' vectors (docs/explanation/background-work.md, "Update resolution"):

- below `fallback_low`: two facts; never compared;
- `[fallback_low, check_low)`: the daily check band — a pair is checked (by the agent's model, or
  offline by the rules) only if it also passes the pre-filters: recency ≤ 90 days, and content-word
  overlap ≥ 0.5 or a numeric step;
- `[check_low, 1]`: the write-time band — the vectors already say the texts are close, so no lexical
  pre-filter; the same-fact rule decides there without a model call, and what it cannot decide is checked.

Memories that set a user-context field (`field:<name>` tags) use stricter bands, and pair only with
memories of the same field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from .samefact import content_words, fact_markers, same_fact

RECENCY = timedelta(days=90)
LEXICAL_OVERLAP = 0.5
_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
FIELD_TAG_PREFIX = "field:"


@dataclass(frozen=True)
class MergeBands:
    fallback_low: float
    check_low: float


SEMANTIC_BANDS = MergeBands(fallback_low=0.55, check_low=0.85)
CONTEXT_BANDS = MergeBands(
    fallback_low=0.70, check_low=0.92
)  # docs/spec/003-memory-system.md §10: stricter for context updates
COSINE_LOW = SEMANTIC_BANDS.fallback_low  # below this, two texts share too little to be one fact


@dataclass(frozen=True)
class Candidate:
    id: int
    text: str
    updated_at: datetime


def field_tags(tags: Iterable[str] | None) -> frozenset[str]:
    return frozenset(t for t in tags or [] if isinstance(t, str) and t.startswith(FIELD_TAG_PREFIX))


def bands_for(a_tags: Iterable[str] | None, b_tags: Iterable[str] | None) -> MergeBands | None:
    """The bands a pair is judged by; None when the pair may never merge (different user-context fields)."""
    a, b = field_tags(a_tags), field_tags(b_tags)
    if a != b:
        return None
    return CONTEXT_BANDS if a else SEMANTIC_BANDS


def lexical_overlap(a: str, b: str) -> float:
    """Jaccard similarity of the content-word sets."""
    wa, wb = set(content_words(a)), set(content_words(b))
    return len(wa & wb) / len(wa | wb) if wa and wb else 0.0


def numeric_step(a: str, b: str) -> bool:
    """The same words with different numbers ("weighs 70 kg" → "weighs 72 kg")."""
    return _NUMBER.sub("#", a.lower()) == _NUMBER.sub("#", b.lower()) and a.lower() != b.lower()


def numeric_update(older: str, newer: str) -> bool:
    """A numeric step that updates one fact: the same words, names, dates and negations, with exactly
    one number changed. Two or more changed numbers are two facts ("Project 1 ships on day 10" is not
    an update of "Project 2 ships on day 20")."""
    a, b = _NUMBER.findall(older), _NUMBER.findall(newer)
    if not a or len(a) != len(b) or sum(x != y for x, y in zip(a, b, strict=True)) != 1:
        return False
    if _NUMBER.sub("#", " ".join(content_words(older))) != _NUMBER.sub("#", " ".join(content_words(newer))):
        return False
    words = set(a) | set(b)
    return {m for m in fact_markers(older) if m not in words} == {
        m for m in fact_markers(newer) if m not in words
    }


def resolve(older: str, newer: str) -> str | None:
    """What the rules say about two memories: "same" (one fact twice), "update" (the newer changes
    one number of the older's fact), or None (the rules cannot tell)."""
    if same_fact(older, newer):
        return "same"
    if numeric_update(older, newer):
        return "update"
    return None


def passes(
    a: Candidate, b: Candidate, cosine: float, now: datetime, bands: MergeBands = SEMANTIC_BANDS
) -> bool:
    """Worth resolving: within the bands, recent enough, and — below the write-time band — sharing
    words or a numeric step."""
    if cosine < bands.fallback_low:
        return False
    if min(a.updated_at, b.updated_at) < now - RECENCY:
        return False
    if cosine >= bands.check_low:
        return True
    return lexical_overlap(a.text, b.text) >= LEXICAL_OVERLAP or numeric_step(a.text, b.text)
