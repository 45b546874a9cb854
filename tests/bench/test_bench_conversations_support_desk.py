"""bench/conversations/support_desk.py: the support desk memory set's shape, determinism and question kinds."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import datetime, timedelta
from functools import cache

import pytest

from bench.conversations import support_desk as sd

SEEDS = (0, 1, 2)
KINDS = {"single-hop", "paraphrase", "multi-hop", "temporal", "identifier"}
CODE = re.compile(r"(?<![\w-])(?=[A-Z0-9-]*[A-Z])(?=[A-Z0-9-]*\d)[A-Z0-9][A-Z0-9-]{3,}[A-Z0-9](?![\w-])")
STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")
MONTHS = "January February March April May June July August September October November December".split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
DATED = re.compile(rf"\b({'|'.join(WEEKDAYS)}) (\d{{1,2}}) ({'|'.join(MONTHS)})\b")
STOP = set(
    "a an the is are was were be been do does did of to in on at for by with from and or but it its this that "
    "what which who whom whose when where why how much many our we us they their them he she his her has have "
    "had now these days currently at present any about after before into out up over still just there than "
    "will would can could should may might s".split()
)


@cache
def data(seed: int) -> dict:
    return sd.generate(seed)


@cache
def with_changes(seed: int) -> tuple[dict, list[dict]]:
    return sd.generate_with_changes(seed)


def ts(value: str) -> datetime:
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S")


def memories(d: dict) -> dict[str, dict]:
    return {m["id"]: m for a in d["agents"] for m in a["memories"]}


def questions(d: dict, kind: str | None = None) -> list[dict]:
    return [q for a in d["agents"] for q in a["questions"] if kind is None or q["kind"] == kind]


def stems(text: str) -> set[str]:
    out = set()
    for word in re.findall(r"[a-z0-9]+", text.lower().replace("'s", "")):
        if word in STOP or len(word) < 2:
            continue
        for suffix in ("ing", "ed", "es", "s", "ly"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                break
        out.add(word)
    return out


def overlap(q: dict, mems: dict[str, dict]) -> float:
    qs = stems(q["text"])
    ev = set().union(*(stems(mems[e]["content"]) for e in q["evidence"]))
    return len(qs & ev) / max(len(qs), 1)


def test_same_seed_same_set_other_seed_other_set_and_json_round_trip():
    assert sd.generate(0) == sd.generate(0)
    assert sd.generate(1) != sd.generate(0)
    assert sd.generate_with_changes(3) == sd.generate_with_changes(3)
    assert json.loads(json.dumps(data(0))) == data(0)
    assert sd.NAME == data(0)["name"] == "support_desk"
    assert set(sd.SHARES) == KINDS and abs(sum(sd.SHARES.values()) - 1) < 1e-9


@pytest.mark.parametrize("seed", SEEDS)
def test_sizes(seed):
    d = data(seed)
    assert 8 <= len(d["agents"]) <= 12
    for a in d["agents"]:
        assert 150 <= len(a["memories"]) <= 400, a["key"]
        assert 100 <= len(a["questions"]) <= 200, a["key"]
    assert 2000 <= sum(len(a["memories"]) for a in d["agents"]) <= 3000
    assert 1200 <= len(questions(d)) <= 1800


@pytest.mark.parametrize("seed", SEEDS)
def test_ids_unique_and_memories_well_formed(seed):
    d = data(seed)
    ids = [m["id"] for a in d["agents"] for m in a["memories"]] + [q["id"] for q in questions(d)]
    assert len(ids) == len(set(ids))
    for a in d["agents"]:
        assert set(a) == {"key", "memories", "questions"}
        for m in a["memories"]:
            assert set(m) == {"id", "content", "created_at", "user"}
            assert m["id"].startswith(a["key"] + "-m")
            assert re.fullmatch(r"[a-z]+", m["user"]) and STAMP.match(m["created_at"])
            assert 40 <= len(m["content"]) <= 200, m["content"]
        contents = [m["content"] for m in a["memories"]]
        assert len(contents) == len(set(contents))
        assert 3 <= len({m["user"] for m in a["memories"]}) <= 6
        for q in a["questions"]:
            assert set(q) == {"id", "text", "kind", "evidence", "asked_at"}
            assert q["id"].startswith(a["key"] + "-q") and q["kind"] in KINDS
            assert q["text"].endswith("?") and STAMP.match(q["asked_at"])
        assert len({q["text"] for q in a["questions"]}) == len(a["questions"])


@pytest.mark.parametrize("seed", SEEDS)
def test_evidence_exists_is_distinct_and_stored_before_the_question(seed):
    d = data(seed)
    for a in d["agents"]:
        mems = {m["id"]: m for m in a["memories"]}
        for q in a["questions"]:
            assert q["evidence"] and len(q["evidence"]) == len(set(q["evidence"]))
            for e in q["evidence"]:
                assert e in mems, (q["id"], e)
                assert ts(mems[e]["created_at"]) < ts(q["asked_at"]), q["id"]


@pytest.mark.parametrize("seed", SEEDS)
def test_kind_shares(seed):
    qs = questions(data(seed))
    counts = Counter(q["kind"] for q in qs)
    assert set(counts) == KINDS
    for kind, share in sd.SHARES.items():
        assert abs(counts[kind] / len(qs) - share) <= 0.03, (kind, counts[kind] / len(qs))


@pytest.mark.parametrize("seed", SEEDS)
def test_identifier_codes_are_unique_and_cited(seed):
    d = data(seed)
    mems = memories(d)
    where: dict[str, set[str]] = {}
    for m in mems.values():
        for code in CODE.findall(m["content"]):
            where.setdefault(code, set()).add(m["id"])
    assert len(where) > 300
    assert all(len(ids) == 1 for ids in where.values()), [c for c, ids in where.items() if len(ids) > 1]
    for q in questions(d, "identifier"):
        codes = CODE.findall(q["text"])
        assert len(codes) == 1, q["text"]
        assert q["evidence"] == sorted(where[codes[0]]), q["id"]
        assert CODE.findall(mems[q["evidence"][0]]["content"]) == codes


@pytest.mark.parametrize("seed", SEEDS)
def test_changed_facts_cite_the_later_memory_only(seed):
    d, changes = with_changes(seed)
    assert d == data(seed)
    assert len(changes) >= 50
    mems, qs = memories(d), {q["id"]: q for q in questions(d)}
    for c in changes:
        q, earlier, later = qs[c["question"]], mems[c["earlier"]], mems[c["later"]]
        assert c["later"] in q["evidence"] and c["earlier"] not in q["evidence"], c
        assert earlier["user"] == later["user"] and earlier["content"] != later["content"]
        assert ts(earlier["created_at"]) < ts(later["created_at"]) < ts(q["asked_at"])
    assert {qs[c["question"]]["kind"] for c in changes} >= {
        "single-hop",
        "paraphrase",
        "multi-hop",
        "temporal",
    }


@pytest.mark.parametrize("seed", SEEDS)
def test_paraphrases_share_few_content_words_with_their_evidence(seed):
    d = data(seed)
    mems = memories(d)
    single = [overlap(q, mems) for q in questions(d, "single-hop")]
    para = [overlap(q, mems) for q in questions(d, "paraphrase")]
    mean_single, mean_para = sum(single) / len(single), sum(para) / len(para)
    assert mean_single > 0.5
    assert mean_para < 0.6 * mean_single, (mean_para, mean_single)


def entities(text: str) -> set[str]:
    """The question's main content words: names, model names and codes (words after the first with a capital)."""
    words = re.findall(r"[A-Za-z0-9][A-Za-z0-9-]*", text)[1:]
    return {w for w in words if len(w) > 1 and any(ch.isupper() for ch in w)}


@pytest.mark.parametrize("seed", SEEDS)
def test_multi_hop_needs_the_hop(seed):
    d = data(seed)
    mems = memories(d)
    for q in questions(d, "multi-hop"):
        ev = [mems[e] for e in q["evidence"]]
        assert len(ev) == 2, q["id"]
        main = entities(q["text"])
        assert main, q["text"]
        shared = [main & set(re.findall(r"[A-Za-z0-9][A-Za-z0-9-]*", m["content"])) for m in ev]
        assert any(shared) and not all(shared), (q["text"], [m["content"] for m in ev])
        # the customer is never named: the question reaches them only through the linking memory
        assert ev[0]["user"] == ev[1]["user"] and not re.search(rf"\b{ev[0]['user']}\b", q["text"].lower())


@pytest.mark.parametrize("seed", SEEDS)
def test_temporal_questions_evidence_is_dated(seed):
    d = data(seed)
    mems = memories(d)
    cue = re.compile(r"\b(when|date|day|since|week|days)\b", re.I)
    for q in questions(d, "temporal"):
        assert cue.search(q["text"]), q["text"]
        ev = sorted((mems[e] for e in q["evidence"]), key=lambda m: m["created_at"])
        asked = ts(q["asked_at"])
        for m in ev:
            stored = ts(m["created_at"])
            assert stored < asked
            for weekday, day, month in DATED.findall(m["content"]):
                year = stored.year + (MONTHS.index(month) + 1 < stored.month)
                when = datetime(year, MONTHS.index(month) + 1, int(day))
                assert WEEKDAYS[when.weekday()] == weekday and when >= stored.replace(
                    hour=0, minute=0, second=0
                )
        if re.search(
            r"\bnow\b", q["text"]
        ):  # an upcoming visit: asked before the day its latest memory names
            _, day, month = DATED.findall(ev[-1]["content"])[-1]
            year = asked.year + (MONTHS.index(month) + 1 < asked.month)
            assert asked < datetime(year, MONTHS.index(month) + 1, int(day))
        if "before" in q["text"] and "move" in q["text"]:  # the reports sit in the week before the move
            move = ts(ev[-1]["created_at"])
            assert len(ev) >= 2 and "move" in ev[-1]["content"]
            assert all(move - timedelta(days=7) <= ts(m["created_at"]) < move for m in ev[:-1])


def test_stats_and_command_line(tmp_path, capsys):
    st = sd.stats(data(0))
    assert set(st) == {"name", "agents", "memories", "questions", "by_kind", "evidence_per_question", "users"}
    assert st["questions"] == sum(st["by_kind"].values()) and 1 < st["evidence_per_question"] < 2
    sd.main(["--seed", "0", "--stats"])
    assert json.loads(capsys.readouterr().out) == st
    out = tmp_path / "set.json"
    sd.main(["--seed", "1", "--out", str(out)])
    assert json.loads(out.read_text(encoding="utf-8")) == data(1)
    assert "--stats" in sd.__doc__ and "--out" in sd.__doc__
