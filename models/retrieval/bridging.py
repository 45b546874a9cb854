"""A second hop for questions about someone reached through someone else.

"What did Zofia's grandmother study?" names Zofia; the memory that answers it names only the grandmother
("Tamsin graduated with a degree in marine biology"), and the memory that links the two ("Zofia mentioned
her grandmother, Tamsin, who lives in Lyon") is what the question finds first. memory.query therefore
reads the names its leading hits carry that the question does not (`bridge_names`), asks again with those
names beside the question's own words, lexically (no second embedding), and lets that hop's hits into the
results after the first ranking's leaders (`merged`). A question whose leaders name no one new, or asked
with a threshold (which compares the question's own words), is answered by the first ranking alone.

BRIDGE_LEADERS, KEEP and HOP were chosen on the development conversational set (`python -m
bench.conversational --set life_log --sweep-bridges`; docs/benchmarks.md, "Conversational sets"): recall@10
0.874 without the hop, 0.905-0.922 across the 24 settings tried (1-3 leaders, 2-5 kept, 2-5 let in),
0.922 at these, multi-hop questions 0.681 -> 0.907.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

BRIDGE_LEADERS = 1  # the leading hits whose names bridge
KEEP = 3  # the first ranking's leaders that stay ahead of the second hop's hits
HOP = 5  # the second hop's hits let in
MAX_NAMES = 4

_NAME = re.compile(r"\b[A-Z][a-z]{2,}\b")
# Capitalised for other reasons than naming someone or something: calendar words, sentence openers.
_NOT_NAMES = frozenset(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday today yesterday tomorrow tonight
    the this that these those there then when where what which who why how after before during since
    while once last next every each both some many most after also and but for from into with without
    his her their its our your she they him them you we our one two three first second""".split()
)


def bridge_names(question: str, leaders: Sequence[Any]) -> list[str]:
    """The names (capitalised words, not calendar words or sentence openers) that `leaders`' content
    carries and the question does not, in order of appearance, at most MAX_NAMES."""
    asked = {word.lower() for word in re.findall(r"[A-Za-z]+", question)}
    names: list[str] = []
    for hit in leaders:
        for name in _NAME.findall(hit.content or ""):
            low = name.lower()
            if low in asked or low in _NOT_NAMES or name in names:
                continue
            names.append(name)
    return names[:MAX_NAMES]


def merged(
    first: list[Any], second: list[Any], top_k: int, *, keep: int | None = None, hop: int | None = None
) -> list[Any]:
    """The first ranking's `keep` leaders, then the second hop's first `hop` hits not among them, then the
    rest of the first ranking: top_k in all, each memory once. (KEEP and HOP, the defaults, are read at
    each call: the benchmark's sweep sets them.)"""
    keep = KEEP if keep is None else keep
    hop = HOP if hop is None else hop
    out = list(first[:keep])
    seen = {hit.id for hit in out}
    news = [hit for hit in second if hit.id not in seen][:hop]
    for hit in [*news, *first[keep:]]:
        if len(out) >= top_k:
            break
        if hit.id not in seen:
            seen.add(hit.id)
            out.append(hit)
    return out
