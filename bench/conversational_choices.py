"""memory.query's retrieval choices measured on the development conversational sets, recall only: the
fusion's lexical share, the second hop's settings, the leading hit's user's memories, recency's weight and
scale, how lexical relevance reads the BM25 score, the cosine a lexical candidate outside the nearest
counts, the mix's lexical share asked dated, how many nearest by vector join the candidates, whether a
sentence's first word is taken as a name, how many of its agent's memories a name the second hop asks for
may be held by, whether the question's vector is moved toward its nearest memories before they are
looked for again, whether what the question asks once its leading hit is found is embedded a second time
and looked for among that hit's user's memories, which of the leading hits the second hops follow, and
each choice undone in turn.

    .venv/bin/python -m bench.conversational --sweep [--json F]
    .venv/bin/python -m bench.conversational --sweep-bridges [--json F]
    .venv/bin/python -m bench.conversational --sweep-subjects [--json F]
    .venv/bin/python -m bench.conversational --sweep-recency [--json F]
    .venv/bin/python -m bench.conversational --sweep-scale [--json F]
    .venv/bin/python -m bench.conversational --sweep-missing [--json F]
    .venv/bin/python -m bench.conversational --sweep-share [--json F]
    .venv/bin/python -m bench.conversational --sweep-nearest [--json F]
    .venv/bin/python -m bench.conversational --sweep-openers [--json F]
    .venv/bin/python -m bench.conversational --sweep-crowded [--json F]
    .venv/bin/python -m bench.conversational --sweep-feedback [--json F]
    .venv/bin/python -m bench.conversational --sweep-rest [--json F]
    .venv/bin/python -m bench.conversational --sweep-leader [--json F]
    .venv/bin/python -m bench.conversational --ablate [--json F]

(`--set` defaults to the development sets.) Each question is embedded once and asked under every setting;
recall@10 to four places is what a choice is made by, averaged over the sets swept (`mean_rows`);
`all@5`, recall@5 over every question, is reported beside it (the agent API answers five by default). The settings are module constants and functions of
models/retrieval/ set for the measurement and put back after it. The recency, scale, missing-cosine,
share, nearest, openers, crowded, feedback, rest and leader sweeps alone are dated (bench/dating.py: each memory written at its own date, each agent asked the day after its last):
undated, every memory is equally recent, and recency cannot tell two memories apart; the scale sweep
weighs relevance against recency.
"""

from __future__ import annotations

import importlib
import json
import re
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np

from bench.conversational import CATEGORY, Console, load, score
from bench.peers import pct

SHARES = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
# The mix's lexical share again, dated, around the one chosen undated (fusion.MIX_LEXICAL).
DATED_SHARES = (0.4, 0.5, 0.55, 0.6, 0.65, 0.7)
# How many memories nearest by vector join the candidates (fusion.DENSE_K), asked dated.
NEAREST = (25, 50, 75, 100, 150)
BRIDGES = [(leaders, keep, hop) for leaders in (1, 2, 3) for keep in (3, 4, 5) for hop in (2, 3, 4, 5)]
# (keep, hop): hop 0 lets none in, as without them.
SUBJECTS = [(4, 0), (4, 3), (4, 4), (4, 5), (3, 4), (5, 4)]
# (recency's weight, its scale in days): relevance takes what recency gives up, importance keeps its 0.15,
# so a score still sums to at most 1 beside the relations boost.
RECENCY = [(0.0, 30.0)] + [(w, days) for w in (0.02, 0.05, 0.1, 0.15, 0.25) for days in (30.0, 90.0, 365.0)]
# How many of its agent's memories a name may be held by and still be asked for by the second hop
# (term_stats.CROWDED; None: any number).
CROWDED_COUNTS = (None, 200, 100, 50, 25, 12, 6, 4, 3)
# Feedback from the nearest memories (Rocchio's, on the question's vector, as pseudo-relevance feedback
# does): (how many of the question's nearest memories, the weight of their mean vector added to the
# question's) before the nearest are looked for again. (0, 0.0): none, as memory.query asks.
FEEDBACK = [(0, 0.0), (1, 0.3), (3, 0.3), (3, 0.6), (3, 1.0), (5, 0.3), (5, 0.6), (10, 0.5)]
# The question taken apart: its words the leading hit holds taken out (rest.rest_spans), the rest
# embedded and looked for among the leading hit's user's memories — (after how many of memory.query's
# results they come in, how many, the layer after which its vector is taken from the question's states:
# jobs/onnx_export.py, `SplitRunner`; FULL: the rest's words embedded again, alone, as a question;
# QUESTION: no rest embedded, the question's own vector looked for among the leading hit's user's memories).
# (6, 1, 4): as memory.query asks; (0, 0, 4): none; (6, 2, 4) and (6, 3, 4): more of the user's memories
# nearest to the rest let in; (6, 1, 5): cut after the last layer, so that no layer runs again: the rest's
# vector the mean of the question's own final states over its tokens.
FULL = -1
QUESTION = -2
REST = [(0, 0, 4), (6, 1, 4), (3, 1, 4), (8, 1, 4), (6, 2, 4), (6, 3, 4), (6, 1, 3), (6, 1, 5), (6, 1, FULL),
        (6, 1, QUESTION), (6, 2, QUESTION)]  # fmt: skip
# Among how many of the first ranking's leaders the second hops look for the first holding every name the
# question holds (bridging.NAMED_LEADERS; 0: they follow the first, whatever it names), and whether the
# question's rest is asked too (QUERY_REST, whose leader it is as well).
LEADERS = [(0, False), (2, False), (3, False), (5, False), (0, True), (3, True)]


# The sweeps asked dated: those that weigh relevance against recency, and those chosen since the held-out
# runs became dated.
DATED = (
    "recency",
    "scale",
    "missing",
    "share",
    "nearest",
    "openers",
    "crowded",
    "feedback",
    "rest",
    "leader",
)
# A chat turn's speaker before it ("Sofia: Went to Tenby ..."): the word after it opens a sentence.
_SPEAKER = re.compile(r"\s*[A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*)?:\s")


def _scale(name: str) -> Callable[[], dict]:
    def setting() -> dict:
        from models.retrieval import ranking

        ranking.LEXICAL_SCALE = name
        return {"lexical relevance": name}

    return setting


def _missing(name: str) -> Callable[[], dict]:
    def setting() -> dict:
        from models.retrieval import fusion

        fusion.MISSING_COSINE = name
        return {"missing cosine": name}

    return setting


def _nearest(k: int) -> Callable[[], dict]:
    def setting() -> dict:
        from models.retrieval import fusion, query

        fusion.DENSE_K = query.DENSE_K = k  # query reads its own import of it
        return {"nearest": k}

    return setting


def _fusion(name: str, share: float | None) -> Callable[[], dict]:
    def setting() -> dict:
        from models.retrieval import fusion

        if share is not None:
            fusion.MIX_LEXICAL = share
        return {"fusion": name, "lexical_share": share}

    return setting


def _bridge(bridge: tuple[int, int, int] | None) -> Callable[[], dict]:
    def setting() -> dict:
        from models.retrieval import bridging

        if bridge is not None:
            bridging.BRIDGE_LEADERS, bridging.KEEP, bridging.HOP = bridge
        return {"bridge (leaders, keep, hop)": bridge}

    return setting


def _subject(subject: tuple[int, int]) -> Callable[[], dict]:
    def setting() -> dict:
        from models.retrieval import bridging

        bridging.SUBJECT_KEEP, bridging.SUBJECT_HOP = subject
        return {"subject (keep, hop)": subject}

    return setting


def _recency(recency: tuple[float, float]) -> Callable[[], dict]:
    def setting() -> dict:
        from models.retrieval import ranking

        ranking.W_RECENCY, ranking.RECENCY_DAYS = recency
        ranking.W_RELEVANCE = round(1.0 - ranking.W_IMPORTANCE - ranking.W_RECENCY, 4)
        return {"recency (weight, days)": recency}

    return setting


def _opens(content: str, at: int) -> bool:
    """Whether the word at `at` opens a sentence of `content`: its first word, one after a full stop, a
    question or exclamation mark or a line break, or the first after a chat turn's speaker."""
    speaker = _SPEAKER.match(content)
    if speaker and at == speaker.end():
        return True
    before = content[:at].rstrip(" \t\"'“‘(")
    return not before or before[-1] in ".!?\n…"


def _without_openers(content: str) -> str:
    """`content` with each name (bridging's `_NAME`) that opens a sentence, and is written capitalised
    inside none, lower-cased: what the hop then does not read as a name."""
    from models.retrieval import bridging

    found = [(m, _opens(content, m.start())) for m in bridging._NAME.finditer(content)]
    inside = {m.group() for m, opens in found if not opens}
    for m, opens in reversed(found):
        if opens and m.group() not in inside:
            content = content[: m.start()] + m.group().lower() + content[m.end() :]
    return content


def _openers(skip: bool) -> Callable[[], dict]:
    """Names as memory.query reads them, or, `skip`, without the capitalised words a sentence opens with
    (chat turns open with "Went", "Honestly", "Thanks"; a note with its subject, "Tamsin is ...")."""

    def setting() -> dict:
        from models.retrieval import bridging

        if skip:
            names = bridging.bridge_names
            bridging.bridge_names = lambda question, leaders: names(
                question, [SimpleNamespace(content=_without_openers(hit.content or "")) for hit in leaders]
            )
        return {"names": "sentence openers not names" if skip else "as chosen"}

    return setting


def _crowded(most: int | None) -> Callable[[], dict]:
    def setting() -> dict:
        from models.retrieval import term_stats

        term_stats.CROWDED = most
        term_stats.forget()  # the cached counts stop at the setting's cap
        return {"crowded": most}

    return setting


def _leader(leader: tuple[int, bool]) -> Callable[[], dict]:
    def setting() -> dict:
        from models.retrieval import bridging

        bridging.NAMED_LEADERS = leader[0]
        return {"named leaders": leader[0], "with its rest": leader[1]}

    return setting


def moved(vector: np.ndarray, leaders: np.ndarray, weight: float) -> np.ndarray:
    """`vector` moved toward the mean of `leaders` (one row each; none: not moved), by `weight`, every
    vector taken at unit length, and the result too."""
    from jobs.onnx_export import normalised

    unit = normalised(vector[None])[0]
    if not len(leaders):
        return unit
    return normalised((unit + weight * normalised(leaders).mean(axis=0))[None])[0]


def _feedback(feedback: tuple[int, float]) -> Callable[[], dict]:
    def setting() -> dict:
        from models.retrieval import vectors

        leaders, weight = feedback
        nearest = vectors.nearest
        if leaders:
            _PUT_BACK.append(lambda: setattr(vectors, "nearest", nearest))

            def fed_back(
                agent_id: int, model: str, vector: np.ndarray, k: int, user_id: str | None = None
            ) -> tuple[list[int], list[float]]:
                ids, _ = nearest(agent_id, model, vector, leaders, user_id)
                found = vectors.cache().matrix(agent_id, model)
                rows = found.matrix[[found.position[i] for i in ids if i in found.position]]
                again = moved(np.asarray(vector), rows, weight)
                return nearest(agent_id, model, again, k, user_id)

            # memory.query's first ranking reads vectors.nearest at each question; the second hops are lexical.
            vectors.nearest = fed_back
        return {"feedback (leaders, weight)": feedback}

    return setting


_TAKEN_APART: list[float] = []  # the milliseconds of each rest the setting being measured embedded
_QUESTIONS: list[float] = []  # and of its question's embedding, asked again just before it
# How a setting embeds a question and its rest (the sweep passes the latter to memory.query).
_ASKS: list[tuple[Callable[[str], Any], Callable[..., Any]]] = []


def _rest(at: tuple[int, int, int]) -> Callable[[], dict]:
    def setting() -> dict:
        from jobs import embeddings
        from jobs.onnx_export import split_runner
        from models.retrieval import rest as taken_apart

        keep, count, layer = at
        taken_apart.REST_KEEP, taken_apart.REST_HOP = keep, count  # `_reset` reloads it: as chosen again
        embedder = embeddings.get_embedder()
        question, rest = (lambda text: embedder.embed([text], query=True)), embeddings.rest_vector
        if layer == FULL:
            rest = lambda text, spans: embedder.embed([" ".join(text[a:b] for a, b in spans)], query=True)[0]  # noqa: E731
        elif layer == QUESTION:
            question, rest = _question_as_rest(embedder)
        elif layer != embedder.REST_LAYER:
            cut = split_runner(embedder._question, embedder.question_export, layer, embedder.QUESTION_THREADS)
            question, rest = cut, cut.rest
        _TAKEN_APART.clear()
        _QUESTIONS.clear()
        _ASKS[:] = [(question, rest)]
        return {"rest (keep, count, layer)": at}

    return setting


def _question_as_rest(embedder: Any) -> tuple[Callable[[str], Any], Callable[..., Any]]:
    """A question's embedding, and as its "rest" the vector it was just embedded to: the one memory.query
    already holds, so that no rest is embedded (the QUESTION setting of REST)."""
    held: list[Any] = []

    def question(text: str) -> Any:
        held[:] = embedder.embed([text], query=True)
        return held[0]

    return question, lambda text, spans: held[0]


def asked_rest(text: str, spans: Any) -> Any:
    """The rest's vector as the setting being measured embeds it, its question embedded just before (so the
    question's states are the cut's, and the pair is timed together: `rest_costs`); memory.query's own
    (jobs/embeddings.py) before a setting is made."""
    if not _ASKS:
        from jobs.embeddings import rest_vector

        return rest_vector(text, spans)
    question, rest = _ASKS[0]
    started = time.perf_counter()
    question(text)
    asked = time.perf_counter()
    vector = rest(text, spans)
    if vector is not None:
        _QUESTIONS.append((asked - started) * 1000)
        _TAKEN_APART.append((time.perf_counter() - asked) * 1000)
    return vector


def rest_of(kind: str, row: dict) -> Callable[..., Any] | None:
    """How a sweep of `kind` embeds a question's rest under the setting whose row is `row`: as the rest
    sweep's setting says (`asked_rest`), or as memory.query does under QUERY_REST where the row asks with
    it; otherwise not at all, as memory.query answers by default."""
    return asked_rest if kind == "rest" or row.get("with its rest") else None


def rest_costs(asked: int) -> dict[str, float]:
    """The share of the `asked` questions the setting just measured took apart (a rest embedded each),
    and the median milliseconds of a rest's embedding and of its question's, each pair asked one after
    the other (`asked_rest`); nothing where none was."""
    if not _TAKEN_APART:
        return {}
    return {"taken apart": round(len(_TAKEN_APART) / asked, 3), "question_embed_p50_ms": pct(_QUESTIONS, 0.5),
            "rest_embed_p50_ms": pct(_TAKEN_APART, 0.5)}  # fmt: skip


def _undone(name: str) -> Callable[[], dict]:
    """One of memory.query's choices undone (docs/explanation/retrieval.md), the others as chosen."""

    def setting() -> dict:
        from models.retrieval import bridging, identifiers, query, timeline

        if name == "no identifiers first":
            identifiers.codes = lambda question: []
        elif name == "the hop asks with the question's words":
            query._hop = lambda agent_id, names, lexical, text="": query.search(
                agent_id, text=" ".join(names) + " " + ASKED[0], **lexical
            )
        elif name == "names: codes too":
            bridging.CODES = re.compile(r"(?!)")
        elif name == "names: capitalised words only":
            bridging._NAME = re.compile(r"\b[A-Z][a-z]{2,}\b")
        elif name == "span: the first ranking's leaders as the events":
            anchored = timeline.anchored
            timeline.anchored = lambda events, hits: anchored([], hits)
        elif name == "span: the events' users' memories only":
            timeline.ranked_in_window = lambda anchors, span, ranked: []
        elif name == "span: dates only with a year":
            timeline._DAY_MONTH = timeline._MONTH_DAY = re.compile(r"(?!)")
        elif name == "no second hops":  # the one statement's ranking alone (`sweep` reads "hops")
            return {"undone": name, "hops": False}
        elif name == "the vectors alone":  # the nearest by cosine, as mem0 ranks (`sweep` reads "mode")
            return {"undone": name, "mode": "dense"}
        return {"undone": name}

    return setting


ABLATIONS = (
    "as chosen",
    "no identifiers first",
    "the hop asks with the question's words",
    "names: codes too",
    "names: capitalised words only",
    "span: the first ranking's leaders as the events",
    "span: the events' users' memories only",
    "span: dates only with a year",
    "no second hops",
    "the vectors alone",
)
ASKED = [""]  # the question being asked, for the hop that asks with its words
# What a setting replaced outside the modules `_reset` reloads, each put back by `_reset`.
_PUT_BACK: list[Callable[[], object]] = []


def settings(kind: str) -> list[tuple[Callable[[], dict], bool]]:
    """(setting, whether the first ranking alone is measured beside) for a sweep of `kind`."""
    if kind == "fusion":
        return [(_fusion("rrf", None), True)] + [(_fusion("mix", share), True) for share in SHARES]
    if kind == "share":
        return [(_fusion("mix", share), False) for share in DATED_SHARES]
    if kind == "nearest":
        return [(_nearest(k), False) for k in NEAREST]
    if kind == "bridges":
        return [(_bridge(None), False)] + [(_bridge(b), False) for b in BRIDGES]
    if kind == "openers":
        return [(_openers(False), False), (_openers(True), False)]
    if kind == "subjects":
        return [(_subject(subject), False) for subject in SUBJECTS]
    if kind == "crowded":
        return [(_crowded(most), False) for most in CROWDED_COUNTS]
    if kind == "feedback":
        return [(_feedback(feedback), False) for feedback in FEEDBACK]
    if kind == "rest":
        return [(_rest(at), False) for at in REST]
    if kind == "leader":
        return [(_leader(leader), False) for leader in LEADERS]
    if kind == "recency":
        return [(_recency(recency), False) for recency in RECENCY]
    if kind == "scale":
        from models.retrieval import ranking

        return [(_scale(name), False) for name in ranking.LEXICAL_SCALES]
    if kind == "missing":
        from models.retrieval import fusion

        return [(_missing(name), False) for name in fusion.MISSING_COSINES]
    return [(_undone(name), False) for name in ABLATIONS]


def _reset() -> None:
    from models.retrieval import bridging, fusion, identifiers, query, ranking, rest, term_stats, timeline

    for module in (ranking, term_stats, fusion, bridging, identifiers, timeline, rest, query):
        importlib.reload(module)  # every constant and function back as chosen
    while _PUT_BACK:  # the latest first
        _PUT_BACK.pop()()
    _ASKS.clear()  # the rest as memory.query embeds it
    query.statement.cache_clear()


def sweep(set_name: str, seed: int, max_agents: int | None, kind: str = "fusion") -> list[dict]:
    """Recall@10 by question kind under each setting of a sweep of `kind` ("fusion": reciprocal rank
    fusion, and the mix at each lexical share of SHARES, each with the second hops on — as memory.query
    answers — and, as `first ranking`, off; "bridges": the second hop off and at each setting of BRIDGES;
    "subjects": the leading hit's user's memories at each setting of SUBJECTS; "recency": recency's weight
    and scale at each setting of RECENCY, dated; "scale": lexical relevance read each way of
    ranking.LEXICAL_SCALES, dated, each also asked with no embedder (`lexical alone`, and its recall@5);
    "missing": the cosine a lexical candidate outside the nearest counts, each of fusion.MISSING_COSINES, dated;
    "share": the mix's lexical share at each of DATED_SHARES, dated; "nearest": how many memories nearest by
    vector join the candidates, each of NEAREST, dated; "openers": names read as memory.query reads them
    and without the capitalised words a sentence opens with (`_openers`), dated; "crowded": how many of its
    agent's memories a name the second hop asks for may be held by, each of CROWDED_COUNTS, dated;
    "feedback": the question's vector moved toward its nearest memories (`moved`) before they are looked
    for again, each of FEEDBACK, dated; "rest": the question's words its leading hit does not hold
    (rest.rest_spans) embedded — from the question's states, or alone — and looked for among that
    hit's user's memories, each of REST, dated, with what its embedding cost (`rest_costs`); "leader": the
    leader the second hops follow chosen among each number of leaders of LEADERS, without and with the
    rest, dated; "ablate": each of ABLATIONS) on one set, and `all@5`."""
    from models.retrieval import query

    data = load(set_name, seed)
    agents = data["agents"][:max_agents] if max_agents else data["agents"]
    workdir = tempfile.mkdtemp(prefix="memconsole-conversational-")
    try:
        console = Console(workdir, dated=kind in DATED)
        asked = []
        for agent in agents:
            console.add(agent["key"], agent["memories"])
            for question in agent["questions"]:
                vector = console.embedder.embed([question["text"]], query=True)[0]
                asked.append((agent["key"], question, (console.embedder.label, vector)))
        rows = []
        for setting, first_too in settings(kind):
            _reset()
            row = setting()
            # An ablation may ask without the second hops, or by the vectors alone.
            mode, hops = row.pop("mode", "hybrid"), row.pop("hops", True)
            hops = hops and (kind != "bridges" or row["bridge (leaders, keep, hop)"] is not None)
            query.statement.cache_clear()
            got = defaultdict(list)
            rested = rest_of(kind, row)
            for key, question, dense in asked:
                ASKED[0] = question["text"]
                for bridge in (hops, False) if first_too else (hops,):
                    hits = query.search(console.agents[key], text=question["text"], categories=[CATEGORY],
                                        top_k=10, dense=dense, fusion=row.get("fusion", "mix"), bridge=bridge,
                                        mode=mode, now=console.asked_at(key), rest_vector=rested)  # fmt: skip
                    console.db.session.rollback()
                    result = score([console.set_id[h.id] for h in hits], question["evidence"])
                    if bridge == hops:
                        got["all"].append(result)
                        got[question["kind"]].append(result)
                    else:
                        got["first ranking"].append(result)
            rows.append(row | {
                k: round(sum(r["recall@10"] for r in values) / len(values), 4 if k == "all" else 3)
                for k, values in got.items()
            } | {"all@5": round(sum(r["recall@5"] for r in got["all"]) / len(got["all"]), 4)})  # fmt: skip
            if kind == "rest":
                rows[-1] |= rest_costs(len(asked))
            if kind == "scale":  # the same setting asked with no embedder: the lexical ranking alone
                alone = []
                for key, question, _dense in asked:
                    hits = query.search(console.agents[key], text=question["text"], categories=[CATEGORY],
                                        top_k=10, mode="lexical", now=console.asked_at(key))  # fmt: skip
                    console.db.session.rollback()
                    alone.append(score([console.set_id[h.id] for h in hits], question["evidence"]))
                rows[-1]["lexical alone"] = round(sum(r["recall@10"] for r in alone) / len(alone), 4)
                rows[-1]["lexical alone@5"] = round(sum(r["recall@5"] for r in alone) / len(alone), 4)
            print(json.dumps(rows[-1]), flush=True)
        _reset()
        return rows
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def mean_rows(swept: dict[str, list[dict]]) -> list[dict]:
    """Each setting of a sweep with recall@10 averaged over the sets swept (the development sets): what a
    choice is made by."""
    rows = []
    for settings_ in zip(*swept.values(), strict=True):
        numbers = [k for k, v in settings_[0].items() if isinstance(v, float) and k != "lexical_share"]
        # A question kind is averaged only where every set asks it (chat_facts asks no identifier questions).
        keys = [k for k in numbers if all(k in r for r in settings_)]
        same = {k: v for k, v in settings_[0].items() if k not in numbers}
        rows.append(same | {k: round(sum(r[k] for r in settings_) / len(settings_), 4) for k in keys})
    return rows
