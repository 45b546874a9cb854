"""Identifiers asked for by name: a question holding a code ("Who is the account manager for the customer
behind OPS-9033?", "What was sent out under order ORD79392?") is answered first by the memory holding
that code.

A code is one token of letters and digits (a dash allowed inside), at least one of each, five characters
or more: a ticket, an order, a serial, a flight. Its words weigh little against the question's others in
the hybrid ranking, and the nearest vectors do not read it at all, so a question about the customer
behind a ticket ranks memories about customers first. memory.query therefore asks for the codes alone,
lexically, and puts the memories that hold one of them, whole, ahead of the first ranking
(`holding`). Chosen on the development conversational sets (docs/benchmarks.md, "Conversational sets").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

# Letters and digits, at least one of each, five or more characters, a dash allowed inside.
CODE = re.compile(r"\b(?=[A-Za-z0-9-]*\d)(?=[A-Za-z0-9-]*[A-Za-z])[A-Za-z0-9][A-Za-z0-9-]{3,}[A-Za-z0-9]\b")
LEAD = 3  # at most this many memories holding a code are put first


def codes(question: str | None) -> list[str]:
    """The codes a question holds, each once, in order."""
    return list(dict.fromkeys(CODE.findall(question or "")))


def holding(found: Sequence[Any], wanted: Sequence[str]) -> list[Any]:
    """The hits of `found` (the codes' own lexical ranking) whose content holds one of `wanted` whole, not
    only its parts ("OPS-9033" holds OPS-9033; "OPS-9034" shares a word and is not), at most LEAD."""
    pattern = re.compile("|".join(rf"(?<![\w-]){re.escape(code)}(?![\w-])" for code in wanted), re.I)
    return [hit for hit in found if pattern.search(hit.content or "")][:LEAD]
