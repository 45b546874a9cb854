"""The vet_clinic conversational memory set (bench/conversations/vet_clinic.py): its shape and its rules."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import datetime
from functools import cache

import pytest

from bench.conversations import vet_clinic as vc

SEEDS = (0, 1, 2)
KINDS = set(vc.SHARES)
ISO = "%Y-%m-%dT%H:%M:%S"

STOP = set(
    """a an the and or but if of to in on at by for with from as is are was were be been being am do does did
    has have had it its this that these those i you he she we they me him her us them my your his our their
    what which who whom whose when where why how not no so than then there here into out up""".split()
)


@cache
def _gen(seed: int) -> tuple[dict, list[dict]]:
    return vc.generate_with_changes(seed)


def _stem(word: str) -> str:
    for suffix in ("ing", "ies", "ed", "es", "ly", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def _content_stems(text: str) -> list[str]:
    return [_stem(w) for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP]


def _codes(text: str) -> list[str]:
    return [
        t for t in re.findall(r"[A-Za-z0-9]{5,}", text) if re.search(r"\d", t) and re.search(r"[A-Za-z]", t)
    ]


def _dt(s: str) -> datetime:
    return datetime.strptime(s, ISO)


def test_shares_are_well_formed():
    assert vc.NAME == "vet_clinic"
    assert abs(sum(vc.SHARES.values()) - 1) < 1e-9
    assert set(vc.SHARES) == {"single-hop", "paraphrase", "multi-hop", "temporal", "identifier"}
    assert all(0.10 <= v <= 0.30 for v in vc.SHARES.values())


def test_deterministic_and_seed_dependent():
    a, ch_a = vc.generate_with_changes(0)
    assert a == _gen(0)[0] and ch_a == _gen(0)[1]
    assert vc.generate(0) == a
    assert _gen(1)[0] != a
    assert json.loads(json.dumps(a)) == a


@pytest.mark.parametrize("seed", SEEDS)
def test_sizes(seed):
    data, _ = _gen(seed)
    assert data["name"] == "vet_clinic"
    agents = data["agents"]
    assert 9 <= len(agents) <= 11
    assert len({a["key"] for a in agents}) == len(agents)
    assert 2350 <= sum(len(a["memories"]) for a in agents) <= 2650
    assert all(170 <= len(a["memories"]) <= 380 for a in agents)
    assert 1400 <= sum(len(a["questions"]) for a in agents) <= 1600


@pytest.mark.parametrize("seed", SEEDS)
def test_memories_and_questions_are_well_formed(seed):
    data, _ = _gen(seed)
    for agent in data["agents"]:
        key = agent["key"]
        mems = agent["memories"]
        assert [m["id"] for m in mems] == [f"{key}-m{i}" for i in range(1, len(mems) + 1)]
        times = [_dt(m["created_at"]) for m in mems]
        assert times == sorted(times)
        users = set()
        for m in mems:
            assert set(m) == {"id", "content", "created_at", "user"}
            assert 6 <= len(m["content"].split()) <= 40, m["content"]
            assert "\n" not in m["content"]
            assert isinstance(m["user"], str) and m["user"]
            users.add(m["user"])
        assert 3 <= len(users) <= 6
        created = {m["id"]: _dt(m["created_at"]) for m in mems}
        qs = agent["questions"]
        assert [q["id"] for q in qs] == [f"{key}-q{i}" for i in range(1, len(qs) + 1)]
        for q in qs:
            assert set(q) == {"id", "text", "kind", "evidence", "asked_at"}
            assert q["kind"] in KINDS
            assert q["evidence"] and all(e in created for e in q["evidence"])
            asked = _dt(q["asked_at"])
            assert all(created[e] < asked for e in q["evidence"])
            n = len(q["evidence"])
            assert len(set(q["evidence"])) == n
            if q["kind"] == "multi-hop":
                assert 2 <= n <= 3
            elif q["kind"] == "temporal":
                assert 1 <= n <= 2
            else:
                assert n == 1
        texts = [q["text"].strip().lower() for q in qs]
        assert len(texts) == len(set(texts))


@pytest.mark.parametrize("seed", SEEDS)
def test_kind_shares(seed):
    data, _ = _gen(seed)
    kinds = Counter(q["kind"] for a in data["agents"] for q in a["questions"])
    total = sum(kinds.values())
    for kind, share in vc.SHARES.items():
        assert abs(kinds[kind] / total - share) <= 0.03, (kind, kinds[kind] / total)


@pytest.mark.parametrize("seed", SEEDS)
def test_identifier_codes_point_to_one_memory(seed):
    data, _ = _gen(seed)
    for agent in data["agents"]:
        for q in agent["questions"]:
            if q["kind"] != "identifier":
                continue
            codes = _codes(q["text"])
            assert codes, q["text"]
            for code in codes:
                holders = [m["id"] for m in agent["memories"] if code in m["content"]]
                assert holders == q["evidence"], (code, holders)


@pytest.mark.parametrize("seed", SEEDS)
def test_paraphrase_overlap(seed):
    data, _ = _gen(seed)
    for agent in data["agents"]:
        content = {m["id"]: m["content"] for m in agent["memories"]}
        for q in agent["questions"]:
            if q["kind"] != "paraphrase":
                continue
            words = _content_stems(q["text"])
            ev = {w for e in q["evidence"] for w in _content_stems(content[e])}
            assert words
            assert sum(w in ev for w in words) / len(words) <= 0.34, q["text"]
            assert (
                vc.paraphrase_overlap(q["text"], [content[e] for e in q["evidence"]]) <= vc.PARAPHRASE_LIMIT
            )


@pytest.mark.parametrize("seed", SEEDS)
def test_temporal_questions_name_or_ask_a_time(seed):
    data, _ = _gen(seed)
    months = "january|february|march|april|may|june|july|august|september|october|november|december"
    pattern = re.compile(rf"\b(when|what date|days ago|{months})\b", re.I)
    for agent in data["agents"]:
        for q in agent["questions"]:
            if q["kind"] == "temporal":
                assert pattern.search(q["text"]), q["text"]


@pytest.mark.parametrize("seed", SEEDS)
def test_changes(seed):
    data, changes = _gen(seed)
    assert changes
    mems = {m["id"]: (m, a["key"]) for a in data["agents"] for m in a["memories"]}
    questions = {q["id"]: q for a in data["agents"] for q in a["questions"]}
    for ch in changes:
        assert set(ch) == {"question", "earlier", "later"}
        q = questions[ch["question"]]
        (earlier, ka), (later, kb) = mems[ch["earlier"]], mems[ch["later"]]
        assert ka == kb == q["id"].split("-")[0]
        assert _dt(earlier["created_at"]) < _dt(later["created_at"])
        assert earlier["user"] == later["user"]
        assert ch["later"] in q["evidence"] and ch["earlier"] not in q["evidence"]


@pytest.mark.parametrize("seed", SEEDS)
def test_noise_share(seed):
    data, _ = _gen(seed)
    mems = [m["id"] for a in data["agents"] for m in a["memories"]]
    used = {e for a in data["agents"] for q in a["questions"] for e in q["evidence"]}
    assert 0.15 <= 1 - len(used) / len(mems) <= 0.40


def test_stats_and_main(tmp_path, capsys):
    data, _ = _gen(0)
    st = vc.stats(data)
    assert {"name", "agents", "memories", "questions", "by_kind", "evidence_per_question", "users"} <= set(st)
    assert st["questions"] == sum(st["by_kind"].values())
    assert vc.main(["--seed", "0", "--stats"]) == 0
    assert json.loads(capsys.readouterr().out)["memories"] == st["memories"]
    out = tmp_path / "set.json"
    assert vc.main(["--seed", "1", "--out", str(out)]) == 0
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["agents"] == _gen(1)[0]["agents"]
    assert written["changes"] == _gen(1)[1]
