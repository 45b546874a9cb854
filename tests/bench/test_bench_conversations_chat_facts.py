"""The chat_facts evaluation set: its format, its counts and the promises its questions make."""

import json
import re
from datetime import datetime

import pytest

from bench.conversations import chat_facts

MONTHS = "january february march april may june july august september october november december".split()
# Kept apart from the generator's own list, so that a word dropped there is still caught here.
STOP = set(
    """a an the of to in on at for with by from and or but is are was were be been being has have had do
    does did what which who whom whose when where why how that this these those it its he she his her him
    hers herself himself they their them i you we us our your my me up out about into over off as so not
    no any some than then there here if while can could would should will may might must s t""".split()
)


def stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
        word = word[:-1]
    return word.rstrip("e") or word


def content(text: str, name: str) -> set[str]:
    return {stem(w) for w in re.findall(r"[a-z]+", text.lower()) if w not in STOP and w != name}


def names(text: str, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", text) is not None


@pytest.fixture(scope="module")
def built():
    return chat_facts.build(0)


@pytest.fixture(scope="module")
def data(built):
    return built[0]


@pytest.fixture(scope="module")
def notes(built):
    return built[2]


def friends(agent: dict) -> set[str]:
    return {m["user"] for m in agent["memories"]}


def by_id(agent: dict) -> dict[str, dict]:
    return {m["id"]: m for m in agent["memories"]}


def test_same_seed_same_set_and_another_seed_another_set(data):
    assert chat_facts.generate(0) == data
    other = chat_facts.generate(1)
    assert other["seed"] == 1
    assert [m["content"] for m in other["agents"][0]["memories"]] != [
        m["content"] for m in data["agents"][0]["memories"]
    ]


def test_format(data):
    assert set(data) == {"name", "seed", "kinds", "agents"}
    assert (data["name"], data["seed"]) == ("chat_facts", 0)
    assert data["kinds"] == ("single-hop", "multi-hop", "temporal", "open-domain", "paraphrase")
    for index, agent in enumerate(data["agents"]):
        assert set(agent) == {"key", "memories", "questions"}
        assert agent["key"] == f"chat_facts-{index}"
        for memory in agent["memories"]:
            assert set(memory) == {"id", "content", "created_at", "user"}
            assert re.fullmatch(rf"{agent['key']}:m\d{{4}}", memory["id"])
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:00", memory["created_at"])
            assert 2022 <= datetime.fromisoformat(memory["created_at"]).year <= 2024
            assert memory["user"] == memory["user"].lower() and memory["user"].isalpha()
        assert len({m["id"] for m in agent["memories"]}) == len(agent["memories"])
        for question in agent["questions"]:
            assert set(question) == {"text", "evidence", "kind"}
            assert question["kind"] in data["kinds"] and question["text"].endswith("?")
            assert question["evidence"] and all(isinstance(e, str) for e in question["evidence"])


def test_every_evidence_id_exists_in_its_agent(data):
    for agent in data["agents"]:
        ids = by_id(agent)
        for question in agent["questions"]:
            assert all(e in ids for e in question["evidence"]), question
            assert len(set(question["evidence"])) == len(question["evidence"])


def test_every_kind_in_every_agent(data):
    for agent in data["agents"]:
        assert {q["kind"] for q in agent["questions"]} == set(data["kinds"])


def test_counts(data):
    assert len(data["agents"]) == 10
    assert 2300 <= sum(len(a["memories"]) for a in data["agents"]) <= 2700
    for agent in data["agents"]:
        assert 220 <= len(agent["memories"]) <= 300
        assert 120 <= len(agent["questions"]) <= 160
        moments = sorted({datetime.fromisoformat(m["created_at"]) for m in agent["memories"]})
        assert 18 <= len(moments) <= 30
        assert 6 * 30 <= (moments[-1] - moments[0]).days <= 18 * 31
        per_session: dict[str, dict[str, int]] = {}
        for memory in agent["memories"]:
            session = per_session.setdefault(memory["created_at"], {})
            session[memory["user"]] = session.get(memory["user"], 0) + 1
        assert all(2 <= n <= 8 for session in per_session.values() for n in session.values())
        assert any(len(session) == 1 for session in per_session.values()), "no session about one friend"


def test_fact_lengths(data):
    words = [len(m["content"].split()) for a in data["agents"] for m in a["memories"]]
    assert min(words) >= 8 and max(words) <= 25
    assert 14 <= sum(words) / len(words) <= 16


def test_each_fact_is_about_one_of_the_two_friends_and_names_them(data, notes):
    assert len(notes["about_others"]) < 0.1 * sum(len(a["memories"]) for a in data["agents"])
    for agent in data["agents"]:
        pair = friends(agent)
        assert len(pair) == 2
        for memory in agent["memories"]:
            name = memory["user"].capitalize()
            if memory["id"] in notes["about_others"]:
                # A fact told about someone the friend talked about names that person, not the friend.
                assert names(memory["content"], notes["about_others"][memory["id"]])
                assert not names(memory["content"], name)
            else:
                assert names(memory["content"], name), memory


def test_names_do_not_repeat(data, notes):
    pairs = [sorted(friends(a)) for a in data["agents"]]
    assert len({n for pair in pairs for n in pair}) == 2 * len(pairs)
    for agent, pair in zip(data["agents"], pairs, strict=True):
        others = {
            notes["about_others"][m["id"]].lower()
            for m in agent["memories"]
            if m["id"] in notes["about_others"]
        }
        assert not others & set(pair)
        third = {}
        for memory in agent["memories"]:
            if memory["id"] in notes["about_others"]:
                third.setdefault(notes["about_others"][memory["id"]], set()).add(memory["user"])
        assert all(len(users) == 1 for users in third.values()), "one name, two people"


def test_dates_ascending(data):
    for agent in data["agents"]:
        moments = [m["created_at"] for m in agent["memories"]]
        assert moments == sorted(moments)
        assert [m["id"] for m in agent["memories"]] == sorted(m["id"] for m in agent["memories"])


def test_temporal_questions_give_no_date(data):
    temporal = [q for a in data["agents"] for q in a["questions"] if q["kind"] == "temporal"]
    assert len(temporal) >= 200
    for question in temporal:
        words = set(re.findall(r"[a-z]+", question["text"].lower()))
        assert not words & set(MONTHS), question["text"]
        assert not re.search(r"\d", question["text"]), question["text"]
        assert question["text"].startswith(("When ", "How long after "))


def test_paraphrase_questions_share_no_content_word_with_their_fact(data):
    for agent in data["agents"]:
        ids = by_id(agent)
        for question in (q for q in agent["questions"] if q["kind"] == "paraphrase"):
            for fact in (ids[e] for e in question["evidence"]):
                shared = content(question["text"], fact["user"]) & content(fact["content"], fact["user"])
                assert not shared, (question["text"], fact["content"], shared)


def test_one_fact_kinds_cite_one_fact_or_its_restatement(data, notes):
    again = notes["near_duplicates"]
    for agent in data["agents"]:
        for question in (q for q in agent["questions"] if q["kind"] in ("single-hop", "paraphrase")):
            first, *rest = question["evidence"]
            assert rest == [] or (len(rest) == 1 and again.get(rest[0]) == first), question


def test_multi_hop_cites_two_to_five_facts(data):
    for agent in data["agents"]:
        for question in (q for q in agent["questions"] if q["kind"] == "multi-hop"):
            assert 2 <= len(question["evidence"]) <= 5, question


def test_third_person_multi_hop_reaches_through_a_fact_without_the_friend(data, notes):
    for agent in data["agents"]:
        ids = by_id(agent)
        through = [q for q in agent["questions"] if q["text"] in notes["via"]]
        assert through, agent["key"]
        for question in through:
            assert question["kind"] == "multi-hop"
            person = notes["via"][question["text"]]
            facts = [ids[e] for e in question["evidence"]]
            friend = facts[0]["user"].capitalize()
            assert names(question["text"], friend) and not names(question["text"], person)
            assert any(names(f["content"], friend) and names(f["content"], person) for f in facts)
            assert any(names(f["content"], person) and not names(f["content"], friend) for f in facts)


def test_near_duplicates_restate_an_earlier_fact(data, notes):
    again = notes["near_duplicates"]
    memories = {m["id"]: m for a in data["agents"] for m in a["memories"]}
    assert 0.07 <= len(again) / len(memories) <= 0.14
    for restated, original in again.items():
        later, earlier = memories[restated], memories[original]
        assert later["user"] == earlier["user"] and later["created_at"] > earlier["created_at"]
        assert later["content"] != earlier["content"]
    assert chat_facts.stats(data)["near_duplicate_share"] == round(len(again) / len(memories), 3)


def test_answers(data):
    same, answers = chat_facts.generate_with_answers(0)
    assert same == data
    texts = [q["text"] for a in data["agents"] for q in a["questions"]]
    assert len(set(texts)) == len(texts) and set(answers) == set(texts)
    assert all(answers[t].strip() for t in texts)
    for question in (q for a in data["agents"] for q in a["questions"] if q["kind"] == "temporal"):
        pattern = (
            r"Around \d{1,2} [A-Z][a-z]+ 202[2-4]" if question["text"].startswith("When") else r"About \d+ "
        )
        assert re.match(pattern, answers[question["text"]]), answers[question["text"]]


def test_main_stats_and_out(tmp_path, capsys):
    assert chat_facts.main(["--seed", "0", "--stats"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["agents"] == 10 and set(printed["by_kind"]) == set(chat_facts.KINDS)
    assert printed["questions"] == sum(printed["by_kind"].values()) and 2300 <= printed["memories"] <= 2700
    assert 14 <= printed["words_per_memory"]["mean"] <= 16
    out = tmp_path / "set.json"
    assert chat_facts.main(["--seed", "2", "--out", str(out)]) == 0
    assert json.loads(out.read_text()) == json.loads(json.dumps(chat_facts.generate(2)))
