"""chat_facts: what an agent remembers of long chats between two friends.

An agent here is a pair of friends who chat every few weeks over six to eighteen months. What it keeps is
not the turns but the short third-person facts an extraction step drew from each chat session: one
sentence each, about one of the two friends, dated with its session. The facts follow threads that come
back across sessions (a hobby that grows, a trip planned then postponed, a job search that ends in an
offer, a sprained ankle that heals), people the friends talk about (a sister, a colleague) with facts that
name only that person, and one-off purchases, feelings, opinions and events. Like a real extraction step it
repeats itself: about one fact in ten restates an earlier one in other words in a later session.

Questions come in five kinds: single-hop (one fact, asked in partly different words), multi-hop (facts
gathered across sessions, or joined through a third person), temporal ("when did", "how long after"; the
date is never in the question), open-domain (an inference from a friend's interests or circumstances) and
paraphrase (one fact, asked with no content word in common with it beyond the friend's name). Each cites
every fact that answers it, restatements included; answers are kept apart, in generate_with_answers.

The set was written independently, from a brief that named its shape only, without sight of the retrieval
code or of the other sets. It is deterministic by seed. Run `python -m bench.conversations.chat_facts
--seed 0 --stats` for its statistics.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from bench.conversations import chat_facts_templates as tpl
from bench.conversations import chat_facts_vocab as voc
from bench.conversations.chat_facts_vocab import Block, parse

NAME = "chat_facts"
KINDS = ("single-hop", "multi-hop", "temporal", "open-domain", "paraphrase")
AGENTS = 10
KIND_OF = dict(zip("smvtdop", [KINDS[i] for i in (0, 1, 1, 2, 2, 3, 4)], strict=True))
# Questions per agent by kind, drawn within these bounds: 120 to 156 in all.
QUOTAS = dict(zip(KINDS, [(32, 40), (24, 30), (24, 30), (16, 22), (24, 34)], strict=True))
RESTATED_SHARE = 0.1
# Words a paraphrase question may share with its fact: function words carry no content.
STOP = frozenset(
    """a an the of to in on at for with by from and or but is are was were be been being has have had do
    does did what which who whom whose when where why how that this these those it its he she his her him
    hers herself himself they their them i you we us our your my me up out about into over off as so not
    no any some than then there here if while can could would should will may might must s t""".split()
)
MONTHS = frozenset(
    "january february march april may june july august september october november december".split()
)
SLOT = re.compile(r"\{(\w+)\}")


HOBBIES = parse(voc.HOBBIES)
PEOPLE = parse(tpl.PEOPLE)
PETS = parse(tpl.PETS)
LIFE = parse(tpl.LIFE)
EVENTS = parse(voc.EVENTS, "event")
FILLERS = parse(tpl.FILLERS, "filler")


def stem(word: str) -> str:
    """A crude stem, enough to see that "adopted" and "adopt" or "running" and "run" share a word."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
        word = word[:-1]
    return word.rstrip("e") or word


def content_words(text: str, name: str = "") -> set[str]:
    skip = STOP | {name.lower()}
    return {stem(w) for w in re.findall(r"[a-z]+", text.lower()) if w not in skip}


def names(text: str, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", text) is not None


@dataclass
class Friend:
    name: str
    gender: str
    city: str
    job: tuple[str, ...]
    job2: tuple[str, ...]


@dataclass(eq=False)
class Beat:
    """One fact about a friend; `about` is the third person it names instead of the friend, `again` the
    later fact that restates it."""

    friend: int
    text: str
    again_text: str
    about: str = ""
    again: Beat | None = None
    session: int = -1
    id: str = ""


@dataclass
class Cand:
    """A candidate question: its code in the vocabulary, the facts it asks about, and for a question
    reached through a third person, that person."""

    code: str
    friend: int
    refs: list[Beat]
    text: str
    answer: str
    via: str = ""


def pronouns(gender: str, prefix: str = "") -> dict[str, str]:
    he, him, his, self = (
        ("she", "her", "her", "herself") if gender == "f" else ("he", "him", "his", "himself")
    )
    if prefix:
        return {prefix + "he": he, prefix + "him": him, prefix + "his": his}
    return {"he": he, "him": him, "his": his, "himself": self, "He": he.title(), "His": his.title()}


def render(template: str, slots: dict[str, str], sentence: bool = True) -> str:
    text = SLOT.sub(lambda m: slots[m.group(1)], template)
    return text[:1].upper() + text[1:] if sentence else text


class Draw:
    """Everything one agent draws without repeating: people's names, pets, towns, holiday places."""

    def __init__(self, rng: random.Random, people: list[tuple[str, str]]) -> None:
        self.rng = rng
        self.people = people
        self.used: set[str] = set()

    def person(self, gender: str) -> str:
        name = next(n for n, g in self.people if g == gender and n not in self.used)
        self.used.add(name)
        return name

    def pick(self, pool: list, avoid: str = "") -> str | tuple:
        value = self.rng.choice([v for v in pool if v not in self.used and v != avoid])
        self.used.add(value)
        return value


def fill(block: Block, friend: Friend, draw: Draw) -> dict[str, str]:
    parts = [block.label] + [t for beat in block.beats for t in beat] + [q[2] + q[3] for q in block.questions]
    wanted = set(SLOT.findall(" ".join(parts)))
    slots = {"N": friend.name, "city": friend.city, **pronouns(friend.gender)}
    slots.update(
        zip(("job", "work", "field", "job2", "work2", "field2"), friend.job + friend.job2, strict=True)
    )
    if "R" in wanted:
        gender = block.attrs[0] if block.attrs and block.attrs[0] in "fm" else draw.rng.choice("fm")
        slots["R"] = draw.person(gender)
        slots.update(pronouns(gender, "r"))
    if wanted & {"place", "sight"}:
        slots["place"], slots["sight"] = draw.pick(voc.DESTINATIONS)
    for slot in sorted(wanted - slots.keys()):
        slots[slot] = str(draw.pick(voc.POOLS[slot.rstrip("0123456789")], friend.city))
    return slots


@dataclass
class Thread:
    beats: list[Beat]
    cands: list[Cand]
    label: str
    slots: dict[str, str]


def thread(block: Block, index: int, friend: Friend, draw: Draw, keep: int = 99) -> Thread:
    """Render a block for one friend; `keep` cuts a lighter hobby down to its first facts."""
    slots = fill(block, friend, draw)
    person = slots.get("R", "")
    beats = []
    for fact, again in block.beats[:keep]:
        beat = Beat(index, render(fact, slots), render(again, slots) if again else "")
        if not names(beat.text, friend.name):
            # A fact about someone the friend talked about; it must name that person instead.
            assert person and names(beat.text, person), beat.text
            beat.about = person
        beats.append(beat)
    cands = []
    for code, refs, q, a in block.questions:
        if max(refs) < len(beats):
            via = person if code == "v" else ""
            cands.append(Cand(code, index, [beats[i] for i in refs], render(q, slots), render(a, slots), via))
    return Thread(beats, cands, render(block.label, slots, sentence=False), slots)


def fresh(rng: random.Random, blocks: list[Block], count: int, other: set[str]) -> list[Block]:
    """Draw `count` blocks, those the other friend has not got first, so the two read as different people."""
    return sorted(rng.sample(blocks, len(blocks)), key=lambda b: b.key in other)[:count]


def choose_blocks(rng: random.Random, other: set[str]) -> tuple[list[Block], list[Block], list[Block]]:
    """A friend's threads: three main hobbies in different areas, two lighter ones sharing a fourth area,
    and a draw of people, pets, trips, plans, health and events."""
    areas = sorted({b.attrs[0] for b in HOBBIES})
    rng.shuffle(areas)
    majors = [fresh(rng, [b for b in HOBBIES if b.attrs[0] == a], 1, other)[0] for a in areas[:3]]
    minors = fresh(rng, [b for b in HOBBIES if b.attrs[0] == areas[3]], 2, other)
    life = {cat: [b for b in LIFE if b.cat == cat] for cat in ("job", "worktrips", "trip", "plan", "health")}
    pets = fresh(rng, PETS, 0 if rng.random() < 0.15 else 1 if rng.random() < 0.65 else 2, other)
    main = life["job"] + life["worktrips"] + fresh(rng, PEOPLE, rng.randint(5, 6), other) + pets
    main += fresh(rng, life["trip"], 2, other) + fresh(rng, life["plan"], rng.randint(2, 3), other)
    main += fresh(rng, life["health"], rng.randint(2, 3), other)
    main += fresh(rng, EVENTS, rng.randint(5, 7), other)
    return majors, minors, main


def build_friend(rng: random.Random, index: int, friend: Friend, draw: Draw, size: int, other: set[str]):
    """Threads and candidate questions for one friend, `size` facts in all with the restatements."""
    majors, minors, main = choose_blocks(rng, other)
    threads = [thread(b, index, friend, draw) for b in majors + main]
    light = [thread(b, index, friend, draw, keep=2) for b in minors]
    threads += light
    restated = round(size * RESTATED_SHARE)
    used = {b.key for b in majors + minors + main}
    fillers = [b for b in FILLERS if not set(b.attrs) & used]
    room = size - restated - sum(len(t.beats) for t in threads)
    assert 0 < room <= len(fillers), room
    fillers = fresh(rng, fillers, room, other)
    other.update(used, (b.key for b in fillers))
    threads += [thread(b, index, friend, draw) for b in fillers]
    cands = [c for t in threads for c in t.cands]
    # Questions that gather across threads: the lighter hobbies' shared area, the pets, the holidays.
    area = minors[0].attrs[0]
    question, _ = voc.AREA_QUESTIONS[area]
    slots = {"N": friend.name, **pronouns(friend.gender)}
    both = f"{light[0].label} and {light[1].label}"
    cands.append(Cand("m", index, light[0].beats + light[1].beats, render(question, slots), render(both, {})))
    pets = [t for b, t in zip(majors + main, threads[: len(majors + main)], strict=True) if b.cat == "pet"]
    if len(pets) == 2:
        text = render("What pets does {N} have?", slots)
        pet_refs = [pets[0].beats[0], pets[1].beats[0]]
        cands.append(Cand("m", index, pet_refs, text, render(f"{pets[0].label} and {pets[1].label}", {})))
    trips = [t for b, t in zip(majors + main, threads[: len(majors + main)], strict=True) if b.cat == "trip"]
    places = " and ".join(t.slots["place"] for t in trips)
    refs = [beat for t in trips for beat in t.beats]
    cands.append(Cand("m", index, refs, render("Where has {N} been on holiday?", slots), render(places, {})))
    # Extraction repeats itself: some facts come back, reworded, in a later session.
    eligible = [b for t in threads for b in t.beats if b.again_text and not b.about]
    for beat in rng.sample(eligible, min(restated, len(eligible))):
        beat.again = Beat(index, beat.again_text, "")
    sequences = [[x for b in t.beats for x in (b, b.again) if x] for t in threads]
    return sequences, cands


def schedule(sequences: list[list[Beat]], present: list[int], rng: random.Random) -> None:
    """Place each thread's facts in increasing sessions, two to eight facts a session for the friend."""
    room = dict.fromkeys(present, 2)
    weight = [rng.uniform(0.3, 1.7) for _ in present]
    extra = sum(map(len, sequences)) - 2 * len(present)
    assert 0 <= extra <= 6 * len(present), extra
    while extra:
        session = rng.choices(present, weight)[0]
        if room[session] < 8:
            room[session] += 1
            extra -= 1
    # Longest threads first, so that single facts fill whatever room is left at the end.
    for sequence in sorted(sequences, key=len, reverse=True):
        free = [s for s in present if room[s]]
        for beat, session in zip(sequence, sorted(rng.sample(free, len(sequence))), strict=True):
            beat.session = session
            room[session] -= 1


def when(moment: datetime) -> str:
    return f"Around {moment.day} {moment:%B %Y}"


def gap(first: datetime, then: datetime) -> str:
    days = (then.date() - first.date()).days
    if days < 14:
        return f"About {days} days"
    if days < 60:
        return f"About {round(days / 7)} weeks"
    return f"About {round(days / 30.44)} months"


def dated(text: str) -> bool:
    """Whether a question gives its answer away: a month, a year, any number written in digits."""
    return bool(set(re.findall(r"[a-z]+", text.lower())) & MONTHS) or bool(re.search(r"\d", text))


def build_agent(rng: random.Random, key: str, pair: list[tuple[str, str]], people: list[tuple[str, str]]):
    draw = Draw(rng, people)
    draw.used.update(name for name, _ in pair)
    jobs = rng.sample(voc.JOBS, 4)
    friends = [
        Friend(n, g, str(draw.pick(voc.CITIES)), jobs[2 * i], jobs[2 * i + 1])
        for i, (n, g) in enumerate(pair)
    ]
    count = rng.randint(19, 30)
    span = rng.randint(183, 540)
    latest = (date(2024, 12, 28) - date(2022, 1, 3)).days - span
    first = datetime(2022, 1, 3) + timedelta(days=rng.randint(0, latest))
    offsets = [0, *sorted(rng.sample(range(1, span), count - 2)), span]
    times = [first + timedelta(days=o, hours=rng.randint(7, 22), minutes=rng.randint(0, 59)) for o in offsets]
    # Some sessions yield facts about one friend only.
    absent = {s: rng.randint(0, 1) for s in rng.sample(range(1, count), rng.randint(1, min(5, count - 17)))}
    beats: list[Beat] = []
    cands: list[Cand] = []
    taken: set[str] = set()
    for index, friend in enumerate(friends):
        present = [s for s in range(count) if absent.get(s) != index]
        size = min(rng.randint(112, 135), 7 * len(present))
        sequences, found = build_friend(rng, index, friend, draw, size, taken)
        schedule(sequences, present, rng)
        beats += [b for sequence in sequences for b in sequence]
        cands += found
    lead = [rng.randint(0, 1) for _ in range(count)]
    tie = {b: rng.random() for b in beats}
    beats.sort(key=lambda b: (b.session, b.friend != lead[b.session], tie[b]))
    memories = []
    for number, b in enumerate(beats, 1):
        b.id, user = f"{key}:m{number:04d}", pair[b.friend][0].lower()
        memories.append(
            {"id": b.id, "content": b.text, "created_at": times[b.session].isoformat(), "user": user}
        )
    pools: dict[str, list[tuple[Cand, list[str], str]]] = {kind: [] for kind in KINDS}
    seen: set[str] = set()
    for cand in cands:
        kind, name = KIND_OF[cand.code], friends[cand.friend].name
        evidence = cand.refs + [b.again for b in cand.refs if b.again]
        if cand.code in "td" and len(evidence) > len(cand.refs):
            continue  # a restated event is told in two sessions, so it has no single date
        if cand.text in seen or not names(cand.text, name) or (kind == "temporal" and dated(cand.text)):
            continue
        if kind == "multi-hop" and len(evidence) > 5:
            continue  # restatements can push a gathering question past the five facts it may cite
        if kind == "paraphrase" and any(
            content_words(cand.text, name) & content_words(b.text, name) for b in evidence
        ):
            continue
        answer = cand.answer
        if cand.code == "t":
            answer = when(times[cand.refs[0].session])
        elif cand.code == "d":
            answer = gap(times[cand.refs[0].session], times[cand.refs[-1].session])
        seen.add(cand.text)
        pools[kind].append((cand, sorted({b.id for b in evidence}), answer))
    questions, answers, via = [], {}, {}
    for kind in KINDS:
        items = pools[kind]
        rng.shuffle(items)
        # Keep the questions reached through a third person: they are the rarer multi-hop shape.
        items.sort(key=lambda item: not item[0].via)
        chosen = items[: rng.randint(*QUOTAS[kind])]
        for cand, ids, answer in sorted(chosen, key=lambda item: item[1]):
            questions.append({"text": cand.text, "evidence": ids, "kind": kind})
            answers[cand.text] = answer
            if cand.via:
                via[cand.text] = cand.via
    notes = {
        "near_duplicates": {b.again.id: b.id for b in beats if b.again},
        "about_others": {b.id: b.about for b in beats if b.about},
        "via": via,
    }
    return {"key": key, "memories": memories, "questions": questions}, answers, notes


def build(seed: int = 0) -> tuple[dict, dict[str, str], dict[str, dict[str, str]]]:
    """The set, its answers, and what the generator knows that the set does not say: which facts restate
    which, which facts name a third person instead of the friend, and through whom a question reaches."""
    rng = random.Random(f"{NAME}:{seed}")
    everyone = [(n, "f") for n in voc.NAMES_F] + [(n, "m") for n in voc.NAMES_M]
    pairs = rng.sample(everyone, 2 * AGENTS)  # friends' names never repeat within a set
    agents, answers = [], {}
    notes: dict[str, dict[str, str]] = {"near_duplicates": {}, "about_others": {}, "via": {}}
    for index in range(AGENTS):
        agent_rng = random.Random(f"{NAME}:{seed}:{index}")
        people = [p for p in everyone if p not in pairs]
        agent_rng.shuffle(people)
        agent, found, known = build_agent(
            agent_rng, f"{NAME}-{index}", pairs[2 * index : 2 * index + 2], people
        )
        agents.append(agent)
        answers.update(found)
        for part, values in known.items():
            notes[part].update(values)
    data = {"name": NAME, "seed": seed, "kinds": KINDS, "agents": agents}
    return data, answers, notes


def generate(seed: int = 0) -> dict:
    return build(seed)[0]


def generate_with_answers(seed: int = 0) -> tuple[dict, dict[str, str]]:
    data, answers, _ = build(seed)
    return data, answers


def stats(data: dict) -> dict:
    agents = data["agents"]
    memories = [m for a in agents for m in a["memories"]]
    questions = [q for a in agents for q in a["questions"]]
    words = [len(m["content"].split()) for m in memories]
    # Which facts restate earlier ones is known to the generator only; rebuild it from the seed.
    again = build(data["seed"])[2]["near_duplicates"] if data.get("name") == NAME else {}

    def spread(values: list[int]) -> dict[str, float]:
        return {"mean": round(sum(values) / len(values), 2), "min": min(values), "max": max(values)}

    return {
        "agents": len(agents),
        "memories": len(memories),
        "questions": len(questions),
        "by_kind": {kind: sum(q["kind"] == kind for q in questions) for kind in data["kinds"]},
        "words_per_memory": spread(words),
        "evidence_per_question": round(sum(len(q["evidence"]) for q in questions) / len(questions), 2),
        "near_duplicate_share": round(sum(m["id"] in again for m in memories) / len(memories), 3),
        "sessions_per_agent": spread([len({m["created_at"] for m in a["memories"]}) for a in agents]),
        "memories_per_agent": spread([len(a["memories"]) for a in agents]),
        "questions_per_agent": spread([len(a["questions"]) for a in agents]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.conversations.chat_facts", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="write the set to this JSON file")
    parser.add_argument("--stats", action="store_true", help="print the set's statistics")
    args = parser.parse_args(argv)
    data = generate(args.seed)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=1)
    if args.stats:
        print(json.dumps(stats(data), indent=2))
    if not args.out and not args.stats:
        json.dump(data, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
