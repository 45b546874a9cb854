"""A second hop for questions about someone reached through someone else.

"What did Zofia's grandmother study?" names Zofia; the memory that answers it names only the grandmother
("Tamsin graduated with a degree in marine biology"), and the memory that links the two ("Zofia mentioned
her grandmother, Tamsin, who lives in Lyon") is what the question finds first. memory.query therefore
reads the names its leading hit carries that the question does not (`bridge_names`) — a person's or a
place's capitalised name, a hyphenated name such as a service's (`audit-trail`) or a short code (a room's
"B12") — asks for the memories holding them, lexically (no second embedding), and lets that hop's best hits into the results
after the first ranking's leaders (`merged`). A question whose leader names nothing new, or asked with a
threshold (which compares the question's own words), is answered by the first ranking alone.

The leader the hops follow is the first of the first NAMED_LEADERS hits that holds every name the
question holds, else the first (`leading`): "What did Hanna's aunt retire from?" can lead with another's
aunt, nearer its words ("Noor's aunt is called Celeste, and she retired from the bank"), ahead of "Hanna
mentioned her aunt, Juniper, ..."; the hop then follows Juniper, not Celeste. Only whose names and user
are followed changes, not the order the hits are answered in.

A name too common to tell memories apart — each of its words held by 5 % of all memories or more, in
tables of 5,000 or more, the rule a question's own words follow (models/retrieval/term_stats.py) — is not
asked for either (`telling`). A chat's speakers, named before every turn they said, often are such
names; they lead to no memory in particular, and the hop let in turns found by the speaker's name alone
(measured before and after on `friends_chat` and LoCoMo's turns, the sets that large: docs/benchmarks.md,
"Conversational sets"). Nor is a name held by CROWDED of the agent's own memories or more
(term_stats.crowded_words): the one who shares each chat with the agent's speaker, named before half its
turns, though the whole index holds her too seldom for the first rule. Asked alone, a name held by that
many — twice the HOP hits let in — leaves the hop's ranking nothing to tell them apart by, and it let in
memories found by that name alone (chosen dated on the development sets, `python -m bench.conversational
--sweep-crowded`: docs/benchmarks.md, "Conversational sets").

A code of five characters or more (identifiers.CODE: a ticket's "ZD-4909", an order's) is not bridged:
it names the one memory that holds it, nearly always the leader itself, so asking for it again would
spend a name's place on a memory already found. ("Who is the manager of the person who fixed
Northwind's bounced password reset emails?" leads with "... Viktor resolved ZD-4909, Northwind's ...":
the hop asks for Viktor, not the ticket.) Measured on the development sets by `python -m
bench.conversational --ablate` ("names: codes too").

What a name is, and the hop asking for the names alone, were chosen on the two development
conversational sets of the time (`python -m bench.conversational --set life_log,team_chat --ablate`);
BRIDGE_LEADERS, KEEP (where the hop's hits come in) and HOP (how many) by `--sweep-bridges` on those two
(KEEP and HOP swept again on the three development sets of notes: see KEEP; docs/benchmarks.md,
"Conversational sets"). Asking beside the question's words was tried again once a development set of
chat turns joined them: it helps on turns, where names are everywhere, and lost on the held-out sets of
notes; so did asking beside them only when no name told the agent's memories apart (each held by more
than 2 of them): so the names are asked alone.
A capitalised word that opens a sentence is a name too. Leaving out those a memory does not also write
capitalised inside a sentence (a chat turn's "Went", "Honestly", "Thanks") gained on the development sets
and lost on the held-out notes, which open with their subject, the very name the hop needs
(`python -m bench.conversational --sweep-openers`).

"Which router does the customer using an iPhone 15 have?" names no one: its leading hit ("uses an iPhone
15 ...", of user `freya`) says who, and the answer is another memory of that user ("has the Juno Gateway
router"), which the question's own ranking holds, but below other users' routers. A hybrid question
asked of several users' memories (no `user_id` filter) therefore lets in the memories of the leading
hit's user among the first SUBJECT_DEPTH of its own ranking (`same_subject`) — after the names hop's
hits, which they do not displace: no statement more, only a deeper read of the first one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from copy import copy
from typing import Any

from models.db import db
from models.retrieval import identifiers, term_stats
from models.retrieval.matching import question_words

BRIDGE_LEADERS = 1  # the leading hits whose names bridge
# How many of the first ranking's leaders the hops may follow instead of the first: the first of them that
# holds every name the question holds (`leading`). Chosen dated on the development sets (`python -m
# bench.conversational --sweep-leader`): recall@10 averaged over them 0.9527 against 0.9510 following the
# first always; 2 leaders 0.9522, 5 the same as 3 (docs/benchmarks.md, "Conversational sets").
NAMED_LEADERS = 3
# The first ranking's leaders that stay ahead of the second hop's hits: 3 leave the hop two places at the
# agent API's default of five results, where 5 would leave it none. 4 leaders and 2 hits measured better
# on the development sets (`python -m bench.conversational --sweep-bridges`: recall@10 0.9384 against
# 0.9366, recall@5 0.8857 against 0.8800) and worse on the held-out ones, so were not kept
# (docs/benchmarks.md, "Conversational sets").
KEEP = 3
HOP = 3  # the second hop's hits let in
MAX_NAMES = 4
# How deep the first ranking is read for the leading hit's user's memories: no deeper than the leaders its
# statement re-ranks (query.RERANK_FACTOR x top_k), so that its first top_k stay as they would be.
SUBJECT_DEPTH = 30
# Where they come in when the names hop let nothing in (else after its hits: `hop_end`), and how many:
# chosen on the three development sets (`python -m bench.conversational --sweep-subjects`): recall@10
# averaged over them 0.9354 against 0.9258 with none, recall@5 unchanged; after 3 or 5 the same, 3 of them
# 0.9334, 5 the same as 4 (docs/explanation/retrieval.md).
SUBJECT_KEEP = 4
SUBJECT_HOP = 4

# A name: a capitalised word ("Tamsin"), a hyphenated lower-case one ("audit-trail", "db-replica-16") or a
# code of capitals and digits ("B12"; those of CODES' form are not bridged).
_NAME = re.compile(r"\b(?:[A-Z][a-z]{2,}|[a-z]+(?:-[a-z0-9]+)+|[A-Z]+-?\d+[A-Z0-9]*)\b")
CODES = identifiers.CODE  # what names one memory only: not bridged
# Capitalised for other reasons than naming someone or something: calendar words, sentence openers.
_NOT_NAMES = frozenset(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday today yesterday tomorrow tonight
    the this that these those there then when where what which who why how after before during since
    while once last next every each both some many most after also and but for from into with without
    his her their its our your she they him them you we our one two three first second""".split()
)


def bridge_names(question: str, leaders: Sequence[Any]) -> list[str]:
    """The names (`_NAME`, not calendar words or sentence openers, nor codes: `CODES`) that `leaders'`
    content carries and the question does not, in order of appearance, at most MAX_NAMES."""
    # Its words, and its hyphenated words whole ("audit-trail" asked is no new name).
    words = re.findall(r"[A-Za-z0-9]+", question) + re.findall(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+", question)
    asked = {word.lower() for word in words}
    names: list[str] = []
    for hit in leaders:
        for name in _NAME.findall(hit.content or ""):
            low = name.lower()
            if low in asked or low in _NOT_NAMES or name in names or CODES.fullmatch(name):
                continue
            names.append(name)
    return names[:MAX_NAMES]


def question_names(question: str) -> list[str]:
    """The names (`_NAME`) the question holds, save its opening word ("What", "Did"), calendar words and
    sentence openers (`_NOT_NAMES`) and codes (`CODES`: those the question names are looked for on their
    own, models/retrieval/identifiers.py)."""
    return [
        name.group()
        for name in _NAME.finditer(question)
        if name.start() > 0 and name.group().lower() not in _NOT_NAMES and not CODES.fullmatch(name.group())
    ]


def leading(hits: list[Any], question: str) -> list[Any]:
    """`hits` with the one the second hops follow first: the first of the first NAMED_LEADERS that holds
    every name the question holds (`question_names`), else the first as it is. "What did Hanna's aunt
    retire from?" can lead with another's aunt ("Noor's aunt is called Celeste ..."), nearer its words,
    ahead of "Hanna mentioned her aunt, Juniper, who lives in Kyoto."; the hops then follow Hanna's aunt,
    not Noor's. The order memory.query answers in is not changed: only whose names and user are followed."""
    names = question_names(question)
    for hit in hits[:NAMED_LEADERS] if names else ():
        if all(re.search(rf"\b{re.escape(name)}\b", hit.content or "") for name in names):
            return [hit, *(other for other in hits if other is not hit)]
    return hits


def telling(agent_id: int, names: list[str]) -> list[str]:
    """`names` without those too common to tell memories apart : each of a
    name's words held by COMMON_SHARE of all memories or more, in tables of MIN_ROWS or more
    (term_stats.common_words, the rule a question's own words follow), or by CROWDED of the agent's own
    memories or more (term_stats.crowded_words)."""
    if not names:
        return names
    words = {name: question_words(name) for name in names}
    dialect = db.session.get_bind().dialect.name
    every = list(dict.fromkeys(word for each in words.values() for word in each))
    common = term_stats.common_words(dialect, every)
    common |= term_stats.crowded_words(dialect, agent_id, [word for word in every if word not in common])
    return [name for name in names if not set(words[name]) <= common]


def let_in(hits: list[Any]) -> list[Any]:
    """Hits a second statement found — by names, codes or an event's words, not by the question — carry no
    relevance or match: those figures would measure those words, not the question (a span's rows carry
    none either). A memory the first ranking holds too keeps its own (`own_figures`)."""
    fresh = [copy(hit) for hit in hits]  # shallow copies: dataclasses.replace rebuilds each through __init__
    for hit in fresh:
        hit.relevance = hit.match = None
    return fresh


def own_figures(hits: list[Any], first: list[Any]) -> list[Any]:
    """`hits`, each memory the first ranking holds as the first ranking has it (its relevance and match
    measured against the question)."""
    own = {hit.id: hit for hit in first}
    return [own.get(hit.id, hit) for hit in hits]


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


def hop_end(first: list[Any], second: list[Any]) -> int:
    """Where the second hop's hits end in `merged(first, second, ...)` (defaults): KEEP, and after them the
    hits it lets in."""
    leaders = {hit.id for hit in first[:KEEP]}
    return KEEP + min(HOP, sum(1 for hit in second if hit.id not in leaders))


def same_subject(hits: list[Any], first: list[Any], top_k: int, keep: int, leader: Any = None) -> list[Any]:
    """`hits` with the memories of their leader's user (`user_id`) among `first` (the question's own
    ranking, SUBJECT_DEPTH deep) let in after the first `keep`, SUBJECT_HOP at most (`merged`); the leader
    is `leader` (`leading`'s first), else the first hit. Unchanged when the leader has no user, or when
    every memory of `first` is that user's: then there is no one else's to rank them above."""
    leader = leader if leader is not None else hits[0] if hits else None
    user = leader.user_id if leader is not None else None
    theirs = [hit for hit in first if hit.user_id == user]
    if user is None or len(theirs) == len(first):
        return hits[:top_k]
    return merged(hits, theirs, top_k, keep=keep, hop=SUBJECT_HOP)
