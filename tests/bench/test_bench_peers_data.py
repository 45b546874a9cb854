"""bench/peers.py's identifier questions: each names a code that exactly one memory holds — its target —
so a system that matches the code finds it, and the other records of its template, alike but for their
code and details, are there to be confused with it."""

from __future__ import annotations

import re

from bench.peers import dataset, identifiers


def test_each_identifier_question_names_a_code_only_its_target_holds():
    records, asked = identifiers()
    assert len(records) == 200 and len(asked) == 50
    for question, target in asked:
        (code,) = re.findall(r"\b[A-Z0-9]{6}\b", question)
        assert [i for i, text in enumerate(records) if code in text] == [target]


def test_the_peers_data_set_keeps_every_question_pointing_at_its_text_after_the_shuffle():
    texts, cases = dataset(extra=10)
    assert len(texts) == 500 + 200 + 10
    kinds = [kind for _, _, kind in cases]
    assert kinds.count("paraphrase") == 107 and kinds.count("identifier") == 50
    for question, index, kind in cases:
        if kind == "identifier":
            (code,) = re.findall(r"\b[A-Z0-9]{6}\b", question)
            assert code in texts[index]
