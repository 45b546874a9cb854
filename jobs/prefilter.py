"""Pre-filters for same-fact candidates (spec 003 §4), with no LLM: cheap tests that decide which
pairs are worth a same-fact check at all."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from .offline import content_words

COSINE_LOW = 0.55  # below this, two texts share too little to be one fact
RECENCY = timedelta(days=90)
LEXICAL_OVERLAP = 0.5
_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")


@dataclass(frozen=True)
class Candidate:
    id: int
    text: str
    updated_at: datetime


def lexical_overlap(a: str, b: str) -> float:
    """Jaccard similarity of the content-word sets."""
    wa, wb = set(content_words(a)), set(content_words(b))
    return len(wa & wb) / len(wa | wb) if wa and wb else 0.0


def numeric_step(a: str, b: str) -> bool:
    """The same words with different numbers: an update of one fact ("weighs 70 kg" → "weighs 72 kg")."""
    return _NUMBER.sub("#", a.lower()) == _NUMBER.sub("#", b.lower()) and a.lower() != b.lower()


def passes(a: Candidate, b: Candidate, cosine: float, now: datetime) -> bool:
    """Worth checking: similar enough, recent enough, and sharing words (or a numeric step)."""
    if cosine < COSINE_LOW:
        return False
    if min(a.updated_at, b.updated_at) < now - RECENCY:
        return False
    return lexical_overlap(a.text, b.text) >= LEXICAL_OVERLAP or numeric_step(a.text, b.text)
