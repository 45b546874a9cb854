"""Builds tests/data/duplicates.jsonl: labelled pairs of true duplicates and near-misses.

True duplicates are what an agent's memory really accumulates when one fact is saved twice:
the same words with different case, punctuation, spacing, typographic quotes, contractions,
"&"/"and", or articles. Near-misses are the dangerous ones: the same topic with a different
number, date, person, negation or object. Deterministic: run it to regenerate the file.
"""

import json
import random
from pathlib import Path

FACTS = [
    ("{P} prefers tea in the morning before the standup", {"P": ["Maya", "Omar"]}),
    ("{P} takes {N} sugars in her coffee", {"P": ["Maya", "Lena"], "N": ["two", "three"]}),
    ("The deployment window is {D} at {T}", {"D": ["Friday", "Thursday"], "T": ["3pm", "4pm"]}),
    ("{P} is allergic to peanuts and carries an EpiPen", {"P": ["Jonas", "Priya"]}),
    (
        "The user's daughter {P} was born on {M} {N}, 2019",
        {"P": ["Ada", "Isla"], "M": ["March", "May"], "N": ["3", "14"]},
    ),
    ("{P} wants weekly reports sent every {D}", {"P": ["Maya", "Raj"], "D": ["Monday", "Tuesday"]}),
    ("The quarterly budget for the platform team is {N} thousand euros", {"N": ["120", "150"]}),
    ("{P} doesn't like being interrupted during focus time", {"P": ["Sam", "Noor"]}),
    ("The office Wi-Fi password rotates every {N} days", {"N": ["30", "90"]}),
    (
        "{P} and I agreed to review the roadmap on {M} {N}",
        {"P": ["Maya", "Kai"], "M": ["June", "July"], "N": ["2", "9"]},
    ),
    ("Our release train ships version {V} to production", {"V": ["4.2", "4.3"]}),
    ("{P} is the on-call engineer for the payments service", {"P": ["Lena", "Tom"]}),
    ("The user runs {N} kilometres every Saturday morning", {"N": ["5", "10"]}),
    ("{P} asked me never to share her phone number", {"P": ["Maya", "Zoe"]}),
    ("Standup moved to {T} because of the time zone change", {"T": ["9:30", "10:00"]}),
    ("The team decided to drop support for Python {V}", {"V": ["3.8", "3.9"]}),
    ("{P}'s favourite book is The Left Hand of Darkness", {"P": ["Maya", "Ines"]}),
    ("Invoices must be approved within {N} business days", {"N": ["3", "5"]}),
    ("{P} moved from Lisbon to Berlin in {Y}", {"P": ["Ana", "Rui"], "Y": ["2021", "2022"]}),
    ("The user's cat is called {P} and is {N} years old", {"P": ["Miso", "Tofu"], "N": ["4", "7"]}),
    ("{P} & I share the incident review on the first Monday of the month", {"P": ["Maya", "Eli"]}),
    ("Backups are kept for {N} weeks in cold storage", {"N": ["6", "8"]}),
    ("{P} can't attend meetings after {T}", {"P": ["Maya", "Dev"], "T": ["5pm", "6pm"]}),
    ("The user said the onboarding guide was too long", {}),
    ("{P} is learning Japanese for a trip in {M}", {"P": ["Maya", "Leo"], "M": ["April", "October"]}),
    ("The API rate limit is {N} requests per minute per key", {"N": ["600", "1000"]}),
    ("{P} won't review pull requests on Fridays", {"P": ["Maya", "Ola"]}),
    ("The user's preferred pronouns are she and her", {}),
    ("{P} keeps a paper notebook for meeting notes", {"P": ["Maya", "Ben"]}),
    ("The staging database is refreshed from production every {D}", {"D": ["Sunday", "Wednesday"]}),
]

OBJECT_SWAPS = [
    ("tea", "coffee"),
    ("peanuts", "shellfish"),
    ("roadmap", "budget"),
    ("payments", "search"),
    ("Lisbon", "Porto"),
    ("Japanese", "Korean"),
    ("notebook", "tablet"),
    ("production", "backup"),
    ("Darkness", "Light"),
    ("weekly", "monthly"),
    ("onboarding", "billing"),
    ("cold", "warm"),
]


def render(template, slots, choice):
    return template.format(**{k: v[choice.get(k, 0)] for k, v in slots.items()})


def true_variants(text, rng):
    variants = [
        text.lower(),
        text + ".",
        "  " + text.replace(" ", "  ", 2) + " ",
        text.upper() if len(text) < 40 else text.capitalize(),
        text.replace("'", "\u2019"),
        text[4:][0].upper() + text[5:] if text.startswith("The ") else "",
    ]
    if "n't" in text:
        variants.append(
            text.replace("doesn't", "does not").replace("can't", "cannot").replace("won't", "will not")
        )
    if " and " in text:
        variants.append(text.replace(" and ", " & ", 1))
    if " & " in text:
        variants.append(text.replace(" & ", " and "))
    variants = [v for v in dict.fromkeys(variants) if v and v != text]
    rng.shuffle(variants)
    return variants[:4]


def near_misses(template, slots, base_text):
    misses = []
    for key, values in slots.items():
        if len(values) > 1:
            misses.append((f"different {key}", render(template, slots, {key: 1})))
    if "n't" in base_text:
        misses.append(
            ("negation", base_text.replace("doesn't ", "").replace("can't", "can").replace("won't", "will"))
        )
    elif " is " in base_text:
        misses.append(("negation", base_text.replace(" is ", " is not ", 1)))
    else:
        misses.append(("negation", base_text.replace(" ", " never ", 1)))
    for old, new in OBJECT_SWAPS:
        if old in base_text:
            misses.append(("different object", base_text.replace(old, new, 1)))
            break
    return misses


def main():
    rng = random.Random(2026)
    rows = []
    for template, slots in FACTS:
        base = render(template, slots, {})
        for variant in true_variants(base, rng):
            rows.append({"a": base, "b": variant, "same": True, "kind": "duplicate"})
        for kind, miss in near_misses(template, slots, base):
            if miss != base:
                rows.append({"a": base, "b": miss, "same": False, "kind": kind})
    out = Path(__file__).with_name("duplicates.jsonl")
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"{out}: {sum(r['same'] for r in rows)} duplicates, {sum(not r['same'] for r in rows)} near-misses")


if __name__ == "__main__":
    main()
