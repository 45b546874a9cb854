"""A question's rest: what it asks once its leading hit is found.

"What phone does the customer who rents from Obinna Jensen use?" is led by "Rohan rents from Obinna
Jensen, who must approve any new cabling or drilling."; its first ten hold more of Rohan's notes, but not
his phone. What it asks of Rohan is what is left once the words the leader holds are taken out: "What phone
does the customer use?" (`rest_spans`). Where the embedder has a cheap way to that rest's vector — the local
model's int8 path: its last layer run again over the rest's tokens alone, from the question's own pass
(jobs/onnx_export.py, `SplitRunner`), about a quarter of a question's time — memory.query lets the leader's
user's memory nearest to it in after its first REST_KEEP results (`with_nearest`), REST_HOP of them. No statement
more unless that memory is outside the question's own ranking; no rest for an endpoint's embedder, where it
would be a second request; none where the leader has no user, and none where top_k leaves no place after
REST_KEEP — the agent API's default five results are never touched.

Chosen on the development sets (`python -m bench.conversational --sweep-rest`, docs/benchmarks.md,
"Conversational sets"): recall@10 averaged over them 0.9552 against 0.9510 without a rest, most of it
`support_desk`'s multi-hop questions (0.764 to 0.862), recall@5 unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from models.retrieval import bridging

# A question's text and the character spans of some of its words -> their vector in the question's space,
# or None where there is no cheap way to it (jobs/embeddings.py, `rest_vector`).
Embed = Callable[[str, Sequence[tuple[int, int]]], Any]
# The memories memory.query reads for a rest outside the question's ranking: their ids -> those of them
# the request may see (its filters), in any order.
Read = Callable[[list[int]], list[Any]]

# Where a question's rest lets in the leader's user's memory nearest to it, and how many: after six,
# beyond the agent API's default five results, which stay as they were (`python -m bench.conversational
# --sweep-rest`: recall@10 0.9552, the same after eight; after three 0.9549, and recall@5 0.9154 against
# 0.9176); one, not two or three (0.9555 and 0.9547: more multi-hop answers, fewer temporal ones).
REST_KEEP = 6
REST_HOP = 1


def _stem(word: str) -> str:
    """A word's form for telling whether the leading hit holds it: lower case, without one ending of
    -ing, -es, -ed or -s, nor a doubled last letter ("running" and "runs": "run")."""
    word = word.lower()
    for ending in ("ing", "es", "ed", "s"):
        if len(word) > len(ending) + 2 and word.endswith(ending):
            word = word[: -len(ending)]
            break
    return word[:-1] if len(word) > 3 and word[-1] == word[-2] else word


_WORD = re.compile(r"[A-Za-z0-9'’]+|\?")


def rest_spans(question: str, leader: str) -> list[tuple[int, int]]:
    """The character spans of the words of `question` that `leader` does not hold (`_stem`), and of its
    question marks: what it asks once the one it describes is found. "Who does the person running Orchid
    report to?", led by "Viktor runs Orchid, the billing service.", leaves "Who does person report to?" —
    short words the leader holds go too. No spans where every word is held or none is: then the question
    has no rest."""
    held = {_stem(word) for word in re.findall(r"[A-Za-z0-9]+", leader)}
    words = list(_WORD.finditer(question))
    kept = [word.span() for word in words if word.group() == "?" or _stem(word.group()) not in held]
    if len(kept) == len(words) or all(question[at:to] == "?" for at, to in kept):
        return []
    return kept


def with_nearest(
    agent_id: int,
    hits: list[Any],
    first: list[Any],
    text: str,
    embed: Embed,
    label: str,
    top_k: int,
    read: Read,
    leader: Any = None,
) -> list[Any]:
    """`hits` with their leader's user's memory nearest to the question's rest (`rest_spans`, embedded by
    `embed` in the space of the vectors of model `label`) let in after the first REST_KEEP, REST_HOP of
    them (bridging.merged): as `first`, the question's own ranking, holds it, else as `read` reads it
    (none where the request may not see it). The leader is `leader` (bridging.leading's first), else the
    first hit.
    Unchanged where the leader has no user, the question no rest, `embed` no vector for it, or top_k no
    place after REST_KEEP (then nothing is embedded)."""
    leader = leader if leader is not None else hits[0] if hits else None
    if leader is None or leader.user_id is None or top_k <= REST_KEEP or not REST_HOP:
        return hits
    spans = rest_spans(text, leader.content or "")
    vector = embed(text, spans) if spans else None
    if vector is None:
        return hits
    from models.retrieval import vectors

    ids, _ = vectors.nearest(agent_id, label, vector, REST_KEEP + REST_HOP, user_id=leader.user_id)
    kept = {hit.id for hit in hits[:REST_KEEP]}
    news = [i for i in ids if i not in kept][:REST_HOP]
    own = {hit.id: hit for hit in first}
    outside = [i for i in news if i not in own]
    if outside:
        own |= {hit.id: hit for hit in read(outside)}
    return bridging.merged(hits, [own[i] for i in news if i in own], top_k, keep=REST_KEEP, hop=REST_HOP)
