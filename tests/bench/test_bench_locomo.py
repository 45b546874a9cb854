"""bench/locomo.py reads LoCoMo's data as documented — a turn a memory, the speaker its user, the session
its date, categories 1-4 by kind, adversarial and uncited questions left out — in both of the forms the
dataset is published in; its observations, a fact a memory citing its turns, as the other reading; and
LoCoMo is never swept. (A conversation written here in LoCoMo's format: the
dataset itself is not in the repository.)"""

from __future__ import annotations

import json
import zipfile

import pytest

from bench import conversational, locomo

CONVERSATION = {
    "speaker_a": "Calvin",
    "speaker_b": "Dave",
    "session_10_date_time": "4:04 pm on 4 October, 2023",
    "session_10": [{"speaker": "Dave", "dia_id": "D10:1", "text": "The Mustang runs again."}],
    "session_2_date_time": "11:53 am on 26 March, 2023",
    "session_2": [
        {"speaker": "Calvin", "dia_id": "D2:1", "text": "I bought a Ferrari 488 GTB!"},
        {
            "speaker": "Dave",
            "dia_id": "D2:2",
            "text": "Look at this.",
            "img_url": ["https://example.invalid/a.jpg"],
            "blip_caption": "a photo of a red car parked on a street",
        },
    ],
}
# The dataset's observations: per session, per speaker, [text, the turns it draws on] — one turn, a list,
# or several in one string.
OBSERVED = {
    "session_2_observation": {
        "Calvin": [["Calvin bought a Ferrari 488 GTB.", "D2:1"]],
        "Dave": [
            ["Dave shared a photo of a red car.", ["D2:2"]],
            ["Dave likes Calvin's Ferrari.", "D2:1, D2:2"],
        ],
    },
    "session_10_observation": {"Dave": [["Dave got his Mustang running again.", "D10:1"]]},
}
QA = [
    {
        "question": "What did Calvin buy in March 2023?",
        "answer": "a Ferrari",
        "evidence": ["D2:1"],
        "category": 4,
    },
    {
        "question": "When did the Mustang run again?",
        "answer": "October 2023",
        "evidence": ["D10:1"],
        "category": 2,
    },
    {
        "question": "Which cars came up?",
        "answer": "Ferrari, Mustang",
        "evidence": ["D2:1; D10:1"],
        "category": 1,
    },
    {"question": "Would Dave like a car show?", "answer": "Yes", "evidence": ["D2:2"], "category": 3},
    {
        "question": "What did Dave buy in March?",
        "adversarial_answer": "a Ferrari",
        "evidence": ["D2:1"],
        "category": 5,
    },
    {"question": "Where is the garage?", "answer": "Boston", "evidence": ["D40:3"], "category": 4},
]


def expect_the_conversation(data: dict) -> None:
    (agent,) = data["agents"]
    assert [m["id"] for m in agent["memories"]] == ["locomo-0:D2:1", "locomo-0:D2:2", "locomo-0:D10:1"]
    first, photo, last = agent["memories"]
    assert first == {"id": "locomo-0:D2:1", "content": "Calvin: I bought a Ferrari 488 GTB!",
                     "created_at": "2023-03-26T11:53:00", "user": "calvin"}  # fmt: skip
    assert photo["content"] == "Dave: Look at this. [shares a photo of a red car parked on a street]"
    assert last["created_at"] == "2023-10-04T16:04:00" and last["user"] == "dave"
    assert [(q["kind"], q["evidence"]) for q in agent["questions"]] == [
        ("single-hop", ["locomo-0:D2:1"]),
        ("temporal", ["locomo-0:D10:1"]),
        ("multi-hop", ["locomo-0:D2:1", "locomo-0:D10:1"]),
        ("open-domain", ["locomo-0:D2:2"]),
    ]
    # The garage's turn is not in the conversation; the adversarial question is not counted.
    assert data["uncited"] == 1
    assert data["name"] == "locomo" and data["kinds"] == locomo.KINDS


def test_the_repositorys_zip_of_per_conversation_files_is_read_a_turn_a_memory(tmp_path):
    archive = tmp_path / "locomo10.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("data/multimodal_dialog/locomo10_v2/26.json", json.dumps({**CONVERSATION, "qa": QA}))
    expect_the_conversation(locomo.load(archive))


def test_locomo10_json_with_its_sessions_under_conversation_reads_alike(tmp_path):
    path = tmp_path / "locomo10.json"
    path.write_text(
        json.dumps([{"sample_id": "conv-26", "conversation": CONVERSATION, "qa": QA}]), encoding="utf-8"
    )
    expect_the_conversation(locomo.load(path))


def test_the_observations_are_read_a_fact_a_memory_standing_for_every_turn_they_cite(tmp_path):
    path = tmp_path / "26.json"
    path.write_text(json.dumps({**CONVERSATION, **OBSERVED, "qa": QA}), encoding="utf-8")
    data = locomo.load(path, "observations")
    (agent,) = data["agents"]
    ferrari, photo, likes, mustang = agent["memories"]
    assert ferrari == {"id": "locomo-0:session_2:calvin:0", "content": "Calvin bought a Ferrari 488 GTB.",
                       "created_at": "2023-03-26T11:53:00", "user": "calvin"}  # fmt: skip
    assert (photo["user"], likes["id"]) == ("dave", "locomo-0:session_2:dave:1")
    assert mustang["created_at"] == "2023-10-04T16:04:00"
    ferrari, photo, likes, mustang = (m["id"] for m in agent["memories"])
    # A question's evidence: every observation citing one of its turns; D2:1 is cited by two.
    assert [(q["kind"], q["evidence"]) for q in agent["questions"]] == [
        ("single-hop", [ferrari, likes]),
        ("temporal", [mustang]),
        ("multi-hop", [ferrari, likes, mustang]),
        ("open-domain", [photo, likes]),
    ]
    assert data["uncited"] == 1 and data["name"] == "locomo_observations"


def test_a_session_without_observations_adds_none_and_its_questions_are_left_out(tmp_path):
    path = tmp_path / "26.json"
    path.write_text(json.dumps({**CONVERSATION, "session_10_observation": OBSERVED["session_10_observation"],
                                "qa": QA}), encoding="utf-8")  # fmt: skip
    data = locomo.load(path, "observations")
    assert [q["kind"] for q in data["agents"][0]["questions"]] == ["temporal", "multi-hop"]
    assert data["uncited"] == 3  # the Ferrari's, the car show's and the garage's


def test_the_observations_ask_for_a_copy_to_read(tmp_path):
    with pytest.raises(SystemExit) as refused:
        conversational.main(["--locomo-observations", "--set", "life_log"])
    assert refused.value.code == 2


def test_a_path_holding_no_conversation_is_refused(tmp_path):
    with pytest.raises(ValueError, match="no LoCoMo conversation"):
        locomo.load(tmp_path)


@pytest.mark.parametrize("sweep", ["--sweep", "--sweep-bridges", "--sweep-subjects", "--ablate"])
def test_locomo_is_never_swept_only_reported(sweep, tmp_path):
    with pytest.raises(SystemExit) as refused:
        conversational.main(["--locomo", str(tmp_path), sweep])
    assert refused.value.code == 2


def test_the_section_names_locomos_kinds_and_the_questions_left_out():
    row = {"system": "BM25", "all": {"recall@5": 0.5, "recall@10": 0.75, "mrr@10": 0.5, "n": 4}}
    row |= {kind: {"recall@5": 0.5, "recall@10": 0.75, "mrr@10": 0.5, "n": 1} for kind in locomo.KINDS}
    result = {"set": "locomo", "seed": 0, "held_out": True, "kinds": list(locomo.KINDS), "uncited": 1,
              "generated": "2026-11-29", "machine": "x", "load_average": 0.0, "agents": 1, "memories": 3,
              "questions": 4, "rows": [row]}  # fmt: skip
    text = conversational.section([result])
    assert "`python -m bench.conversational --locomo PATH`" in text
    assert "(1 more cite no turn the set holds: left out)" in text
    assert "| system | single-hop | multi-hop | temporal | open-domain |" in text
    observed = conversational.section([result | {"set": "locomo_observations", "dated": True}])
    assert "`python -m bench.conversational --locomo PATH --locomo-observations --dated`" in observed
    assert "(1 more cite no turn an observation draws on: left out)" in observed
